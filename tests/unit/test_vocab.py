"""One vocabulary (tools/hgtools/vocab.py): the Python names of the gaps' classes and kinds are
the merger's C table's (userspace/export/export_names.c), in the order of hg_gaps.h's enums, and
the merger itself takes from a profile's model exactly the classes vocab says an inference may
name; no judge of the inference keeps a list or a target of its own."""
import os
import re
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
from hgtools import gapmodel, learn, report_json, results, vocab  # noqa: E402

HGMERGE = os.environ.get("HGMERGE", os.path.join(TOP, "build", "hgmerge"))


def enum_order(header, enum):
    """The names of @enum's members in hg_gaps.h, in order (its _N count left out)."""
    text = open(os.path.join(TOP, "userspace", "merger", header)).read()
    body = re.search(r"enum %s \{(.*?)\};" % enum, text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return [m for m in re.findall(r"\b(HGG_[A-Z_]+)\b", body) if not m.endswith("_N")]


def c_table(table):
    """export_names.c's @table: {enum member: name}."""
    text = open(os.path.join(TOP, "userspace", "export", "export_names.c")).read()
    body = re.search(r"%s\[[A-Z_]+\] = \{(.*?)\};" % table, text, re.S).group(1)
    return dict(re.findall(r"\[(HGG_[A-Z_]+)\]\s*=\s*\"([a-z_]+)\"", body))


@pytest.mark.parametrize("enum,table,names", [("hgg_class", "hgg_class_name", vocab.CLASSES),
                                              ("hgg_kind", "hgg_kind_name", vocab.KINDS)])
def test_the_python_names_are_the_c_tables_in_the_enums_order(enum, table, names):
    order, named = enum_order("hg_gaps.h", enum), c_table(table)
    assert set(named) == set(order), f"export_names.c's {table} names {sorted(named)}, the enum has {order}"
    assert tuple(named[m] for m in order) == names, (
        f"vocab's names differ from {table} (export_names.c) in hg_gaps.h's order: fix one of them")


def test_each_subset_is_made_of_the_classes_in_their_order():
    for sub in (vocab.ACTUAL_CLASSES, vocab.SCORED_CLASSES, vocab.INFERABLE_CLASSES, vocab.TARGET_CLASSES):
        assert list(sub) == [c for c in vocab.CLASSES if c in sub], sub
    assert "voluntary" not in vocab.ACTUAL_CLASSES and set(vocab.TARGET_CLASSES) < set(vocab.INFERABLE_CLASSES)
    assert set(vocab.INFERABLE_CLASSES) < set(vocab.SCORED_CLASSES) < set(vocab.ACTUAL_CLASSES)


def test_the_merger_takes_from_a_model_exactly_the_classes_an_inference_may_name(tmp_path):
    """hgmerge --classes looks names up in the C table and refuses the rest, naming the ones it
    takes: those are vocab.INFERABLE_CLASSES."""
    from test_learn import write_run       # a small run with ground truth, made by hand
    d = write_run(str(tmp_path / "a"), 0)
    (tmp_path / "c").write_text("hourglass-classes 1\n0 12 tick\n")
    p = subprocess.run([HGMERGE, "--hgl", os.path.join(d, "hourglass.hgl"), "--kernel", os.path.join(d, "kernel.hgt"),
                        "--report", str(tmp_path / "r.json"), "--classes", str(tmp_path / "c")],
                       capture_output=True, text=True)
    assert p.returncode == 3 and "is not a class (" in p.stderr, p.stderr
    listed = re.search(r"is not a class \(([^)]*)\)", p.stderr).group(1).split(", ")
    assert tuple(listed) == vocab.INFERABLE_CLASSES, p.stderr


def test_every_judge_takes_its_classes_and_targets_from_vocab():
    from hgtools.lab import expect
    from hgtools.lab import labtable
    from hgtools.lab import profiles
    from hgtools.lab import scenario
    assert learn.CLASSES is gapmodel.CLASSES is vocab.INFERABLE_CLASSES
    assert results.CLASSES is vocab.SCORED_CLASSES and report_json.CLASSES_2_0 is vocab.ACTUAL_CLASSES
    assert scenario.CLASSES is vocab.ACTUAL_CLASSES and labtable.CLASS_COLS is vocab.INFERABLE_CLASSES
    assert expect.TARGET_CLASSES is profiles.CLASSES is vocab.TARGET_CLASSES
    assert (expect.CLASS_TARGET, expect.CLASS_MIN, expect.CLASS_SLACK) == (
        vocab.CLASS_TARGET, vocab.CLASS_MIN, vocab.CLASS_SLACK)


def test_no_class_tuple_or_target_is_written_out_again():
    """The tuple of class names and the bare targets appear only in vocab.py (the report's colours
    and a paper figure's are tables keyed by class, not lists of them)."""
    tuple_rx = re.compile(r'\(\s*"switch_hg",\s*"switch_other",\s*"timer"')
    found = []
    for d in ("tools/hgtools",):
        for root, _, files in os.walk(os.path.join(TOP, d)):
            for f in files:
                path = os.path.join(root, f)
                if not f.endswith(".py") or f == "vocab.py":
                    continue
                text = open(path).read()
                if tuple_rx.search(text):
                    found.append(os.path.relpath(path, TOP))
    assert not found, f"a class tuple written out again (use hgtools.vocab): {found}"
    lab = open(os.path.join(TOP, "tools", "hgtools", "lab", "labtable.py")).read()
    assert "0.95" not in lab, "labtable: the target is vocab.CLASS_TARGET"


def test_each_shared_helper_is_defined_once():
    """The JSON reader, a run's machine and a class's F1 each have one definition that every
    reader uses (issue 55: _load_json was written three times, F1 twice)."""
    where = {}
    for d in ("tools/hgtools",):
        for root, _, files in os.walk(os.path.join(TOP, d)):
            for f in files:
                if f.endswith(".py"):
                    text = open(os.path.join(root, f)).read()
                    for name in re.findall(r"^\s*def (_?load_json|machine_of|f1_of)\(", text, re.M):
                        where.setdefault(name, []).append(os.path.relpath(os.path.join(root, f), TOP))
    assert "_load_json" not in where and "load_json" not in where, f"use hgtools.jsonfile: {where}"
    assert where.get("machine_of") == ["tools/hgtools/machine.py"], where
    assert where.get("f1_of") == ["tools/hgtools/learn.py"], where
