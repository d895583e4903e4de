"""make mutants' machinery (tests/mutants/mutants.py): every mutant still applies to the tree
(a patch the source moved away from would be a mutant never run), says what it does, and a
mutant counts as caught only by a test that got worse than the control's, never by one that
an allowance turned into a known shortfall."""
import os
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
import mutants  # tests/mutants (pytest.ini)


def test_at_least_eight_mutants_each_applies_to_the_tree_and_says_what_it_does():
    todo = mutants.patches([])
    assert len(todo) >= 8, [n for n, _ in todo]
    for name, path in todo:
        p = subprocess.run(["patch", "-p1", "--dry-run", "--batch", "--forward", "-d", TOP, "-i", path],
                           capture_output=True, text=True)
        assert p.returncode == 0, f"{name} no longer applies to the tree (rewrite it): {p.stdout[-400:]}"
        assert mutants.describe(path), f"{name}: its patch adds no 'MUTANT: what' comment"
        with open(path) as f:
            touched = {line[6:].strip() for line in f if line.startswith("+++ b/")}
        assert touched and all(t.startswith("userspace/") for t in touched), (name, touched)


def test_a_mutant_is_caught_only_by_a_test_worse_than_the_controls():
    ok, todo, bad = ({"ok": True, "todo": ""}, {"ok": False, "todo": "known short: x"},
                     {"ok": False, "todo": ""})
    control = {"lab": {"error": None, "tests": {"a: counts": ok, "b: classes": todo, "c: classes": bad}}}

    def m(tests, host_rc=0, failed=(), error=None):
        return {"lab": {"error": error, "tests": tests}, "host": {"rc": host_rc, "failed": list(failed)}}
    assert mutants.verdict(control, m({"a: counts": ok, "b: classes": todo, "c: classes": bad})) == []
    # passed -> known short: an allowance hid the fault, so it is NOT caught
    assert mutants.verdict(control, m({"a: counts": todo, "b: classes": todo, "c: classes": bad})) == []
    assert mutants.verdict(control, m({"a: counts": bad, "b: classes": todo, "c: classes": bad})) == ["lab: a: counts"]
    assert mutants.verdict(control, m({"a: counts": ok, "b: classes": bad, "c: classes": bad})) == ["lab: b: classes"]
    assert mutants.verdict(control, m({"a: counts": ok, "b: classes": todo})) == ["lab: c: classes not reported"]
    assert mutants.verdict(control, m({"a: counts": ok, "b: classes": todo, "c: classes": bad}, 1,
                                      ["tests/unit/test_merge.py::t"])) == ["host: tests/unit/test_merge.py::t"]
    assert mutants.verdict(control, m({}, error="analyse failed"))[0] == "analyse failed"
    assert mutants.verdict(control, {"build_error": "hgmerge does not build"}) == ["hgmerge does not build"]


def test_a_lab_tests_key_leaves_its_figures_out():
    assert mutants.test_key("tick on 6.1 icount: every class that occurs 10 times or more at precision and recall "
                            ">= 0.95 or within 1 gap of it; interrupt 0 actual, 3 inferred: not held to it") == \
        "tick on 6.1 icount: classes"
    assert mutants.test_key("tick on 6.1 icount: expected counts within 2% and named right, in most of 3 runs "
                            "(run 2 short: x)") == "tick on 6.1 icount: counts"
