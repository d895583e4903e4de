"""A corrupted report JSON (wrong types, keys missing, shapes that do not go
together, numbers no run has) is refused by report_json.load() in one line
naming the file and the key, exit 3; what the loader takes, the text report,
the HTML page and its charts lay out: never a traceback (issue 18: about 25
tracebacks through the old Python code).

The property test corrupts real reports of the merger (tests/fuzz/corpus/
report) and the fixtures here in 1 to 3 places, with a fixed seed, as the
atheris target tests/fuzz/py/fuzz_report.py does for as long as it is let.
"""
import copy
import json
import os
import random
import warnings

import pytest

from conftest import TOP
from hgtools import cli, report_json
from hgtools.errors import HgError

import report_mutate as M  # tests/fuzz/py (pytest.ini)

SEEDS = M.seeds(TOP)
LAT = os.path.join(TOP, "tests", "fuzz", "corpus", "report", "lat.json")


@pytest.fixture(autouse=True)
def _quiet():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def write(tmp_path, rep, name="r.json"):
    p = tmp_path / name
    p.write_text(rep if isinstance(rep, str) else json.dumps(rep))
    return str(p)


def test_every_seed_is_read_and_drawn(tmp_path):
    """The merger's own reports pass the checks and render, charts drawn: the checks refuse no good report."""
    assert len(SEEDS) >= 8
    for k, rep in enumerate(SEEDS):
        assert M.exercise(write(tmp_path, rep, f"s{k}.json"), 2 if k % 3 == 0 else 1) == "rendered"


@pytest.mark.parametrize("seed", range(4))
def test_corrupted_reports_refused_or_rendered(tmp_path, seed):
    """600 corruptions: each refused naming the file and a key, or laid out; charts made for 1 in 10."""
    rnd = random.Random(seed)
    outcomes = {"refused": 0, "rendered": 0}
    for i in range(150):
        rep = M.mutate(SEEDS[rnd.randrange(len(SEEDS))], rnd.randrange)
        got = M.exercise(write(tmp_path, rep), 1 if i % 10 == 0 else 0)
        outcomes[got.split(":")[0]] += 1
    assert outcomes["refused"] > 20 and outcomes["rendered"] > 20, outcomes


def set_at(rep, path, value):
    v = rep
    for k in path[:-1]:
        v = v[k]
    if value is KeyError:
        del v[path[-1]]
    else:
        v[path[-1]] = value
    return rep


@pytest.mark.parametrize("path,value,says", [
    (("gaps", "total"), "4849", "gaps.total is a string, not a count (a whole number)"),
    (("gaps", "classes", "timer"), -3, "gaps.classes.timer is -3, outside 0..9007199254740992"),
    (("inference", "confusion", "matrix", 2), [1, 2], "inference.confusion.matrix[2] has 2 counts, inferred has"),
    (("inference", "confusion", "actual"), KeyError, "inference.confusion.actual is missing"),
    (("inference", "headline", "accuracy"), 1.5, "inference.headline.accuracy is 1.5, outside 0..1"),
    (("run", "threads", 0, "thread"), "zero", "run.threads[0].thread is a string, not a count"),
    (("run", "threads", 0, "name"), None, "run.threads[0].name is null, not a string"),
    (("run", "command"), "hourglass -n 3", "run.command is a string, not a list"),
    (("causes", 0, "total_ms"), {"ms": 1}, "causes[0].total_ms is an object, not a number"),
    (("latency", "threads", "x"), {}, "latency.threads has the key 'x', not a thread or CPU number"),
    (("latency", "threads", "0", "hist", "counts"), [1, 2], "latency.threads.0.hist has 73 edges for 2 counts"),
    (("latency", "threads", "0", "cdf", 0), [1.0, 0.0], "latency.threads.0.cdf[0][1] is 0.0, outside above 0"),
    (("latency", "worst", "latency_us"), KeyError, "latency.worst.latency_us is missing"),
    (("charts", "map", "to"), 0.0, "charts.map runs from 2.105887 to 0.0: not forwards"),
    (("charts", "map", "threads", 0, "intervals"), [[3.0, 2.0]], "charts.map.threads[0].intervals[0] ends (2.0)"),
    (("charts", "gap_hist", "edges_us", 3), 0.0, "charts.gap_hist.edges_us[3] is 0.0, not above the one before"),
    (("summary", 0), "\ud800", "summary[0] is not UTF-8 text"),
    (("kernel_recording", "events"), 2 ** 70, "kernel_recording.events is 1180591620717411303424, outside"),
    (("steal",), {"hidden_gaps": 3, "hidden_ms": None, "run_ms": 1.0}, "steal.hidden_ms is null, not a number"),
])
def test_a_bad_key_is_named(tmp_path, path, value, says):
    with open(LAT) as f:
        rep = json.load(f)
    rep["steal"] = rep.get("steal") or {"hidden_gaps": 1, "hidden_ms": 0.1, "run_ms": 3000.0, "share": 0.0}
    rep["inference"] = rep.get("inference") or copy.deepcopy(SEEDS[0]["inference"])
    rep["causes"] = rep.get("causes") or [{"cause": "x", "gaps": 1, "total_ms": 1.0}]
    p = write(tmp_path, set_at(rep, path, value))
    with pytest.raises(HgError) as e:
        report_json.load(p)
    assert str(e.value).startswith(p + ": ") and says in str(e.value), str(e.value)
    assert e.value.status == 3 and "\n" not in str(e.value)


@pytest.mark.parametrize("text,says", [
    ('{"report_version": 2, "summary": [], "run": {"tsc_hz": NaN}, "warnings": []}', "NaN is not a JSON number"),
    ('{"report_version": 2, "summary": [Infinity], "run": {}, "warnings": []}', "Infinity is not a JSON number"),
    ("[" * 100000 + "]" * 100000, "nested deeper than this reader follows"),
    ('{"report_version": true, "summary": [], "run": {}, "warnings": []}', "report_version True"),
    ('{"report_version": 2, "summary": [], "run": [], "warnings": []}', "run is a list, not an object"),
])
def test_bad_json_refused(tmp_path, text, says):
    p = write(tmp_path, text)
    with pytest.raises(HgError) as e:
        report_json.load(p)
    assert str(e.value).startswith(p + ": ") and says in str(e.value), str(e.value)


def test_edges_the_renderers_must_take(tmp_path):
    """Reports of the right types whose figures once crashed the renderers (fuzz_report)."""
    with open(LAT) as f:
        base = json.load(f)
    for change in (lambda r: r["latency"]["threads"]["0"].__setitem__("cdf", [[0.0, 0.5], [0.0, 1.0]]),
                   lambda r: r["latency"]["threads"]["0"].__setitem__("cdf", [[-3.0, 0.5], [-1.0, 1.0]]),
                   lambda r: r["run"]["kernel"].__setitem__("release", "")):
        rep = copy.deepcopy(base)
        change(rep)
        assert M.exercise(write(tmp_path, rep), 2) == "rendered"


def test_hourglass_report_says_the_key(tmp_path, capsys):
    """The command, not only the loader: one line, exit 3, no traceback."""
    with open(LAT) as f:
        rep = json.load(f)
    rep["gaps"]["classes"] = {"timer": "many"}
    p = write(tmp_path, rep)
    rc = cli.main(["report", p])
    err = capsys.readouterr().err
    assert rc == 3 and err == f"hourglass report: {p}: gaps.classes.timer is a string, not a count (a whole number)\n"


def test_class_order_and_stages_are_the_reports():
    """report 2.1 lists its class order and stage names; a 2.0 report gets those 2.0's merger wrote."""
    old = {"report_version": 2, "gaps": {"total": 0}, "latency": {"threads": {}}}
    assert report_json.classes(old) == ["switch_hg", "switch_other", "timer", "interrupt", "hidden", "other",
                                        "unexplainable"]
    assert report_json.stages(old) == ["timer", "irq", "sched", "return"] and report_json.minor(old) == 0
    new = {"report_version": 2, "report_minor": 1, "gaps": {"class_order": ["timer", "new_class"]},
           "latency": {"stages": ["timer", "wake"]}}
    assert report_json.classes(new) == ["timer", "new_class"] and report_json.stages(new) == ["timer", "wake"]
    assert report_json.minor(new) == 1


def test_a_stage_the_report_names_is_checked(tmp_path):
    rep = {"report_version": 2, "summary": [], "run": {}, "warnings": [],
           "latency": {"stages": ["timer", "wake"], "threads": {"0": {"wake": {"max_us": "x"}}}}}
    with pytest.raises(HgError, match=r"latency.threads.0.wake.max_us is a string"):
        report_json.check(rep, "r.json")
