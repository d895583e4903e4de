"""hourglass results: runs gathered into one Parquet table, its figures the reports' own, and
queried with DuckDB; bad input named (docs/results.md)."""
import csv
import io
import json
import os
import shutil
import subprocess

import pyarrow as pa          # scripts/setup.sh installs it and duckdb into .venv
import pyarrow.parquet as pq
import pytest

from conftest import TOP
from test_learn import write_run

HOURGLASS = os.path.join(TOP, "build", "hourglass")


def run(*args, expect=0):
    p = subprocess.run([HOURGLASS, "results", *args], capture_output=True, text=True, env=dict(os.environ, HG_PROGRESS="0"))
    assert p.returncode == expect, (p.stdout, p.stderr)
    return p


def report(d):
    p = subprocess.run([HOURGLASS, "report", d, "--json", "-"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def lab_tree(top):
    """OUT/<kernel>/<guest>/<scenario>[.run2] as make lab leaves them, with the lab's lab.json
    (one expectation failed on the second run), and a run of hourglass alone beside them."""
    runs = []
    for i, name in enumerate(("tick", "tick.run2")):
        d = write_run(os.path.join(top, "lab", "7.3", "smp2", name), i, release="7.3.4-test")
        with open(os.path.join(d, "lab-run.json"), "w") as f:
            json.dump({"scenario": "tick", "run": i + 1, "guest": "smp2", "kernel": "7.3.4-test"}, f)
        runs.append(d)
    lab = {"runs": [{"dir": f"/elsewhere/7.3/smp2/{n}", "expectations": [{"ok": True}, {"ok": n == "tick"}]}
                    for n in ("tick", "tick.run2")]}
    with open(os.path.join(top, "lab", "lab.json"), "w") as f:
        json.dump(lab, f)
    alone = os.path.join(top, "mine", "alone")
    shutil.copytree(runs[0], alone, ignore=shutil.ignore_patterns("kernel.hgt", "lab-run.json"))
    return runs, alone


def test_the_table_holds_each_runs_report_figures(tmp_path):
    runs, alone = lab_tree(str(tmp_path))
    out = str(tmp_path / "all.parquet")
    p = run(str(tmp_path / "lab"), str(tmp_path / "mine"), "-o", out)
    assert "3 runs, 18 rows" in p.stderr, p.stderr
    t = pq.read_table(out)
    assert t.schema.metadata[b"hourglass.results.version"] == b"1.0"
    rows = t.to_pylist()
    by = {(os.path.basename(r["run_dir"]), r["cls"]): r for r in rows}
    for d in runs:
        rep = report(d)
        inf = rep["inference"]
        for cls, k in inf["classes"].items():
            r = by[(os.path.basename(d), cls)]
            assert (r["actual"], r["inferred"], r["correct"]) == (k["actual"], k["inferred"], k["correct"]), (d, cls)
            assert r["precision"] == k["precision"] and r["recall"] == k["recall"]
        r = by[(os.path.basename(d), "timer")]
        assert (r["headline_gaps"], r["headline_correct"]) == (inf["headline"]["gaps"], inf["headline"]["correct"])
        assert r["source"] == "lab" and r["scenario"] == "tick" and r["guest"] == "smp2"
        assert r["kernel"] == "7.3.4-test" and r["cpus"] == 1 and r["ground_truth"] == "hgtrace.ko"
    # the lab's verdicts, matched on kernel/guest/scenario though lab.json names another root
    assert by[("tick", "timer")]["expectations_failed"] == 0
    assert by[("tick.run2", "timer")]["expectations"] == 2 and by[("tick.run2", "timer")]["expectations_failed"] == 1
    # hourglass alone: inferred, never judged
    lone = [r for r in rows if r["run_dir"].endswith("alone")]
    rep = report(alone)
    assert {r["cls"]: r["inferred"] for r in lone if r["inferred"]} == \
        {c: n for c, n in rep["inference"]["inferred_all"].items() if n}
    assert all(r["actual"] is None and r["accuracy"] is None and r["ground_truth"] == "none" for r in lone)
    assert lone[0]["source"] == "run" and lone[0]["expectations"] is None


def test_a_run_of_the_paper_s_is_named_by_its_experiment(tmp_path):
    d = write_run(str(tmp_path / "paper" / "rta" / "hr"), 3)
    with open(os.path.join(d, "paper-run.json"), "w") as f:
        json.dump({"experiment": "rta", "run": "hr", "guest": "machine", "errors": []}, f)
    out = str(tmp_path / "p.parquet")
    run(str(tmp_path / "paper"), "-o", out)
    rows = pq.read_table(out).to_pylist()
    assert {(r["source"], r["scenario"], r["guest"], r["run"]) for r in rows} == {("paper", "rta/hr", "machine", None)}


def test_queries_read_the_table_or_the_runs_alike(tmp_path):
    runs, _ = lab_tree(str(tmp_path))
    out = str(tmp_path / "lab.parquet")
    run(str(tmp_path / "lab"), "-o", out)
    sql = "SELECT cls, sum(actual), sum(correct) FROM results WHERE actual IS NOT NULL GROUP BY cls ORDER BY cls"
    from_dirs = run(str(tmp_path / "lab"), "--query", sql, "--csv").stdout
    from_file = run(out, "--query", sql, "--csv").stdout
    assert from_dirs == from_file
    got = {r[0]: (int(r[1]), int(r[2])) for r in list(csv.reader(io.StringIO(from_file)))[1:]}
    want = {}
    for d in runs:
        for cls, k in report(d)["inference"]["classes"].items():
            a, c = want.get(cls, (0, 0))
            want[cls] = (a + k["actual"], c + k["correct"])
    # every class has its row, zero where the report lists none
    assert {c: v for c, v in got.items() if v != (0, 0)} == {c: v for c, v in want.items() if v != (0, 0)}
    assert set(got) == {"switch_hg", "switch_other", "timer", "interrupt", "hidden", "other"} and got["timer"][0] > 0
    # the named queries: accuracy counts each run once, failed names the run whose expectation failed
    acc = list(csv.reader(io.StringIO(run(out, "--query", "accuracy", "--csv").stdout)))
    total = sum(report(d)["inference"]["headline"]["gaps"] for d in runs)
    assert acc[0][:4] == ["kernel", "guest", "runs", "gaps"] and acc[1][2:4] == ["2", str(total)], acc
    failed = run(out, "--query", "failed").stdout
    assert "tick.run2" in failed and "/tick " not in failed, failed
    # two tables read together: each row twice
    twice = list(csv.reader(io.StringIO(run(out, out, "--query", "SELECT count(*) FROM results", "--csv").stdout)))
    assert twice[1] == ["24"], twice


@pytest.mark.parametrize("what, msg, status", [
    ("not-parquet", "not a Parquet file", 3),
    ("foreign", "not hourglass results", 3),
    ("empty-dir", "no run directory in it", 3),
    ("missing", "no such file or directory", 1),
])
def test_bad_input_is_named(tmp_path, what, msg, status):
    path = str(tmp_path / (what + (".parquet" if what in ("not-parquet", "foreign") else "")))
    if what == "not-parquet":
        open(path, "wb").write(b"PAR1 but cut short")
    elif what == "foreign":
        pq.write_table(pa.table({"x": [1, 2]}), path)
    elif what == "empty-dir":
        os.makedirs(path)
    p = run(path, expect=status)
    assert msg in p.stderr and path in p.stderr, p.stderr


def test_bad_sql_and_bad_output_are_usage_errors(tmp_path):
    runs, _ = lab_tree(str(tmp_path))
    p = run(str(tmp_path / "lab"), "--query", "SELECT nothing FROM results", expect=1)
    assert "--query:" in p.stderr and "nothing" in p.stderr, p.stderr
    p = run(str(tmp_path / "lab"), "-o", str(tmp_path / "x.csv"), expect=1)
    assert "must end in .parquet" in p.stderr
    # a table that cannot be written leaves nothing behind
    p = run(str(tmp_path / "lab"), "-o", str(tmp_path / "no" / "x.parquet"), expect=2)
    assert "is not a directory" in p.stderr and not os.path.exists(tmp_path / "no")


def test_the_lab_page_s_tables_across_runs_are_the_table_s_queries(tmp_path):
    from hgtools.lab import labsummary
    runs, _ = lab_tree(str(tmp_path))
    table, why = labsummary.write_table(str(tmp_path / "lab"))
    assert table == str(tmp_path / "lab" / "results.parquet") and not why
    ts = labsummary.tables(table)
    assert [t[0].split(":")[0] for t in ts] == ["Accuracy per kernel and guest", "Each class per kernel and guest, "
                                                "summed over the runs", "Runs whose expectations failed"]
    # the same rows `hourglass results --query NAME` prints
    acc = list(csv.reader(io.StringIO(run(table, "--query", "accuracy", "--csv").stdout)))
    assert [list(map(str, r)) for r in ts[0][2]] == acc[1:] and ts[0][1] == acc[0]
    md = labsummary.as_markdown(ts)
    total = sum(report(d)["inference"]["headline"]["gaps"] for d in runs)
    assert f"| 7.3.4-test | smp2 | 2 | {total} |" in md
    assert "tick.run2" in labsummary.as_html(ts) and "<h2>Across the runs</h2>" in labsummary.as_html(ts)
    # where the table cannot be written, the page says why rather than show nothing
    assert "Not built: no pyarrow" in labsummary.as_markdown([], "no pyarrow")


def test_the_docs_table_is_the_columns_definition():
    """docs/results.md lists the columns as results.COLUMNS defines them, word for word: the two
    once disagreed on what source holds."""
    from hgtools import results
    md = open(os.path.join(TOP, "docs", "results.md")).read()
    assert results.columns_md() in md, "docs/results.md's table differs from results.columns_md(): paste it again"
    names = [line.split("|")[1].strip() for line in results.columns_md().splitlines()[2:]]
    assert names == [n for n, _, _ in results.COLUMNS] and names == results.schema().names
