"""tests/runs.py reads a make check log's TAP lines into one result per test."""

import runs  # tests/runs.py (pytest.ini)

LOG = """\
ok 3 - make help lists every target
=== guest tests on 6.1
TAP version 13
1..3
ok 1 - test_load_and_tracepoints (2.1s)
not ok 2 - test_ftrace_agreement (30.8s)
ok 3 - test_ctrl_c_anywhere # SKIP not on this kernel
=== guest tests on 6.1 lab
ok 1 - lab: tick on 6.1 icount: expected counts within 2% and named right, in most of 3 runs
not ok 4 - lab: ipi on 6.1 icount2: every class; interrupt 2 actual # TODO known short: icount2
guest: 347 passed, 0 failed in 27 min 1 s
ok 54 - 50 commands in README.md, docs/install.md: 38 passed, 2 failed, 11 not run here (each says why)
make check: host 5.3 min
"""


def test_each_tap_line_is_one_result_in_its_section():
    got = list(runs.parse(LOG.splitlines()))
    assert got == [
        ("host", "make help lists every target", "pass"),
        ("6.1", "test_load_and_tracepoints", "pass"),
        ("6.1", "test_ftrace_agreement", "fail"),
        ("6.1", "test_ctrl_c_anywhere", "skip"),
        ("6.1 lab", "lab: tick on 6.1 icount: expected counts within 2% and named right", "pass"),
        ("6.1 lab", "lab: ipi on 6.1 icount2: every class", "todo"),
        ("demo", "commands in README.md, docs/install.md", "pass"),
    ]


def test_the_table_lists_what_failed_and_counts_runs():
    rows = [dict(run=r, commit="", date=d, section="6.1", test=t, result=res)
            for r, d, t, res in (("a", "1", "x", "pass"), ("a", "1", "y", "fail"), ("b", "2", "x", "pass"),
                                 ("b", "2", "y", "pass"))]
    text = runs.table(rows)
    assert "| 6.1 | y | 2 | 1 | 0 | a |" in text and "| 6.1 | x |" not in text
    assert "no failure in the last 2 runs: 1 of 2" in text
