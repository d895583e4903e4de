"""results - many runs in one table: `hourglass results DIR... [-o FILE.parquet] [--query SQL]`.

Every run directory under the DIRs (from make lab, make paper, a farm's artifacts, a
user's own `hourglass record --dir`) becomes rows of one table, one row per run and
per class, written as Parquet (pyarrow) and queried with DuckDB embedded. The schema
is docs/results.md's, version RESULTS_VERSION; a column is only ever added.

A run's figures are its report's: DIR/report.json when it is newer than every file
it was made of (hourglass.hgl and .json, record.json, the kernel's recording) and the
merger would still take the run (make lab's analysis writes it), else a merge now (the
same merge as `hourglass report DIR`): a run report refuses is refused here too, saved
report or not. So the per-class figures are the lab's own, from the same confusion
matrix. pyarrow and duckdb are imported only here, so that record and
report never need them.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import engine, jsonfile, report_json, vocab
from .errors import EXIT_BAD_INPUT, EXIT_ENV, EXIT_USAGE, HgError
from .machine import machine_of

RESULTS_VERSION = "1.0"
# the order tables list the classes in (the report's class_order, less unexplainable: never inferred)
CLASSES = vocab.SCORED_CLASSES

# (name, pyarrow type name, meaning): the one definition of the schema; docs/results.md's table is
# columns_md()'s, word for word (tests/unit/test_results.py holds it so)
COLUMNS: Tuple[Tuple[str, str, str], ...] = (
    ("run_dir", "string", "the run directory, as found"),
    ("source", "string", "'lab' (a lab-run.json beside it), 'paper' (a paper-run.json: make paper's runs, a farm "
                         "device's --paper runs) or 'run'"),
    ("scenario", "string", "the lab's scenario, or the paper's EXPERIMENT/RUN (null otherwise)"),
    ("run", "int32", "which run of its scenario in its boot (1, 2, ...; null outside the lab)"),
    ("guest", "string", "the lab's or the paper's guest kind: icount, icount2, icount2-shared, smp2 (null "
                        "otherwise)"),
    ("kernel", "string", "the kernel's release, as uname -r"),
    ("preempt_rt", "bool", "the kernel is PREEMPT_RT"),
    ("cpus", "int32", "CPUs online"),
    ("hypervisor", "string", "CPUID's hypervisor vendor (null: none, a real machine)"),
    ("tsc_mhz", "float64", "the TSC's rate hourglass measured"),
    ("machine", "string", "--machine's label (a farm's device name), else the hypervisor and the TSC's rate"),
    ("ground_truth", "string", "the kernel's recording: 'hgtrace.ko', 'ftrace', 'trace.dat' or 'none'"),
    ("events_lost", "int64", "kernel events the recorder lost (null without a recording)"),
    ("gaps", "int64", "every gap of the run"),
    ("voluntary", "int64", "gaps hourglass asked for (yield, sleep): not scored"),
    ("headline_gaps", "int64", "gaps with a kernel cause (not hidden): the headline's denominator"),
    ("headline_correct", "int64", "of which inferred right"),
    ("accuracy", "float64", "headline_correct / headline_gaps"),
    ("macro_f1", "float64", "the report's macro F1"),
    ("steal_share", "float64", "hidden time over the run's time"),
    ("worst_latency_us", "float64", "the worst wake-up latency (null: no LAT or PERIODIC thread)"),
    ("missed_deadlines", "int64", "deadlines hourglass's periodic threads missed"),
    ("expectations", "int32", "the lab's expectations checked on this run (null outside the lab)"),
    ("expectations_failed", "int32", "of which failed"),
    ("cls", "string", "the class of this row: " + ", ".join(CLASSES)),
    ("actual", "int64", "gaps of this class by the kernel's verdict (null without ground truth)"),
    ("inferred", "int64", "gaps the inference put in this class"),
    ("correct", "int64", "both (null without ground truth)"),
    ("precision", "float64", "correct / inferred (null when nothing was inferred so, or no ground truth)"),
    ("recall", "float64", "correct / actual (null when it never happened, or no ground truth)"),
    ("f1", "float64", "their harmonic mean (null as they are)"),
)


def columns_md() -> str:
    """COLUMNS as docs/results.md's table of them (markdown)."""
    return "".join(["| column | type | meaning |\n| --- | --- | --- |\n"]
                   + [f"| {n} | {ty} | {what} |\n" for n, ty, what in COLUMNS])


def _need(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise HgError(f"needs the Python package {module} (make check and make demo install it into .venv; "
                      f"elsewhere: pip install pyarrow duckdb)", EXIT_ENV) from None


def schema() -> Any:
    pa = _need("pyarrow")
    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64(),
             "bool": pa.bool_()}
    return pa.schema([pa.field(n, types[t]) for n, t, _ in COLUMNS],
                     metadata={"hourglass.results.version": RESULTS_VERSION})


def is_run_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "hourglass.hgl")) and os.path.isfile(os.path.join(d, "hourglass.json"))


def run_dirs(top: str) -> Iterator[str]:
    """Every run directory at or under @top, in name order."""
    for root, dirs, _files in os.walk(top):
        dirs.sort()
        if is_run_dir(root):
            dirs[:] = []            # a run holds no runs
            yield root


# the files a run's report is made of (a ground truth of each kind, where there is one)
INPUTS = ("hourglass.hgl", "hourglass.json", "record.json") + engine.GROUND_TRUTH


def saved_is_current(saved: str, run: str) -> bool:
    """@saved was written after every input of @run there is (INPUTS): strictly after, so that
    a file changed in the same tick of a coarse clock is taken as changed."""
    when = os.stat(saved).st_mtime_ns
    return all(os.stat(p).st_mtime_ns < when for p in (os.path.join(run, n) for n in INPUTS)
               if os.path.exists(p))


def report_of(run: str) -> Dict[str, Any]:
    """The run's report: its report.json when it is current (saved_is_current), the merger
    would take the run now (engine.check: what report refuses is refused here, whatever was
    saved of it) and it was judged by today's truth (report_json.REPORT_MINOR), else a merge now."""
    saved = os.path.join(run, "report.json")
    if os.path.isfile(saved) and saved_is_current(saved, run):
        engine.check(run)
        rep = report_json.load(saved)
        if rep.get("report_minor", 0) >= report_json.REPORT_MINOR:
            return rep
    return engine.merge(run, None, engine.Exports(), show_progress=False)


def lab_expectations(tops: Sequence[str]) -> Dict[Tuple[str, ...], List[bool]]:
    """The lab's verdicts on each run (OUT/lab.json, or OUT/<kernel>/lab.json of make check's lab), keyed
    by the run directory's last three names (kernel/guest/scenario): lab.json may name another root."""
    out: Dict[Tuple[str, ...], List[bool]] = {}
    for top in tops:
        if not os.path.isdir(top):
            continue
        for root, dirs, files in os.walk(top):
            dirs.sort()
            if is_run_dir(root):
                dirs[:] = []
                continue
            if "lab.json" in files:
                lab = jsonfile.load_object(os.path.join(root, "lab.json")) or {}
                for r in lab.get("runs") or []:
                    key = tuple(os.path.normpath(str(r.get("dir", ""))).split(os.sep)[-3:])
                    out[key] = [bool(e.get("ok")) for e in r.get("expectations") or []]
    return out


def _worst_latency(rep: Dict[str, Any]) -> Optional[float]:
    lat = rep.get("latency") or {}
    w = lat.get("worst") or {}
    v = w.get("latency_us")
    return float(v) if isinstance(v, (int, float)) else None


def rows_of(run: str, expectations: Dict[Tuple[str, ...], List[bool]],
            machine: Optional[str] = None) -> List[Dict[str, Any]]:
    """One row per class for the run at @run (@machine: its machine column, else from hourglass.json)."""
    rep = report_of(run)
    hg = jsonfile.load_object(os.path.join(run, "hourglass.json")) or {}
    lab = jsonfile.load_object(os.path.join(run, "lab-run.json"))
    paper = None if lab else jsonfile.load_object(os.path.join(run, "paper-run.json"))
    m = machine_of(hg)
    kr = rep.get("kernel_recording") or None
    inf = rep.get("inference") or {}
    head = inf.get("headline") or {}
    gaps = rep.get("gaps") or {}
    truth = rep.get("ground_truth") != "none" and kr is not None
    verdicts = expectations.get(tuple(os.path.normpath(run).split(os.sep)[-3:])) if lab else None
    md = rep.get("missed_deadlines") or {}
    base: Dict[str, Any] = {
        "run_dir": run, "source": "lab" if lab else "paper" if paper else "run",
        "scenario": (lab or {}).get("scenario") if not paper else f"{paper.get('experiment')}/{paper.get('run')}",
        "run": (lab or {}).get("run"), "guest": (lab or paper or {}).get("guest"),
        "kernel": m["kernel"] or None, "preempt_rt": m["preempt_rt"], "cpus": m["cpus"],
        "hypervisor": m["hypervisor"] or None, "tsc_mhz": m["tsc_mhz"] or None,
        "machine": machine or f"{m['hypervisor'] or 'no hypervisor'}, TSC {m['tsc_mhz']} MHz",
        "ground_truth": (kr or {}).get("recorder") if truth else "none",
        "events_lost": (kr or {}).get("lost_total") if truth else None,
        "gaps": gaps.get("total"), "voluntary": gaps.get("voluntary"),
        "headline_gaps": head.get("gaps") if truth else None,
        "headline_correct": head.get("correct") if truth else None,
        "accuracy": head.get("accuracy") if truth else None,
        "macro_f1": inf.get("macro_f1") if truth else None,
        "steal_share": (rep.get("steal") or {}).get("share") if truth else None,
        "worst_latency_us": _worst_latency(rep),
        "missed_deadlines": md.get("count"),
        "expectations": len(verdicts) if verdicts is not None else None,
        "expectations_failed": sum(1 for ok in verdicts if not ok) if verdicts is not None else None,
    }
    classes = inf.get("classes") or {}
    inferred_all = inf.get("inferred_all") or {}
    rows = []
    for c in CLASSES:
        k = classes.get(c) or {}
        row = dict(base, cls=c)
        if truth:
            row.update(actual=k.get("actual", 0), inferred=k.get("inferred", 0), correct=k.get("correct", 0),
                       precision=k.get("precision"), recall=k.get("recall"), f1=k.get("f1"))
        else:
            row.update(actual=None, inferred=inferred_all.get(c, 0), correct=None, precision=None, recall=None,
                       f1=None)
        rows.append(row)
    return rows


def gather(paths: Sequence[str], on_run: Optional[Any] = None, machine: Optional[str] = None) -> Any:
    """The table of every run under @paths (directories) and every row of @paths that are Parquet files."""
    pa = _need("pyarrow")
    sch = schema()
    tables = []
    dirs = [p for p in paths if not p.endswith(".parquet")]
    for p in paths:
        if not os.path.exists(p):
            raise HgError(f"{p}: no such file or directory", EXIT_USAGE)
        if not p.endswith(".parquet") and not os.path.isdir(p):
            raise HgError(f"{p}: neither a directory of runs nor a .parquet file", EXIT_USAGE)
    expectations = lab_expectations(dirs)
    rows: List[Dict[str, Any]] = []
    for p in paths:
        if p.endswith(".parquet"):
            tables.append(read(p))
            continue
        found = 0
        for run in run_dirs(p):
            if on_run:
                on_run(run)
            rows.extend(rows_of(run, expectations, machine))
            found += 1
        if not found:
            raise HgError(f"{p}: no run directory in it (a run holds hourglass.hgl and hourglass.json)",
                          EXIT_BAD_INPUT)
    if rows:
        tables.append(pa.Table.from_pylist(rows, schema=sch))
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def read(path: str) -> Any:
    """A results Parquet file: refused, named, when it is not one, or of another major version."""
    pa = _need("pyarrow")
    pq = __import__("pyarrow.parquet", fromlist=["parquet"])
    try:
        t = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as e:
        raise HgError(f"{path}: not a Parquet file ({e})", EXIT_BAD_INPUT) from None
    meta = t.schema.metadata or {}
    v = meta.get(b"hourglass.results.version", b"").decode()
    if not v:
        raise HgError(f"{path}: a Parquet file, but not hourglass results (no hourglass.results.version)",
                      EXIT_BAD_INPUT)
    if v.split(".")[0] != RESULTS_VERSION.split(".")[0]:
        raise HgError(f"{path}: results version {v}; this hourglass reads {RESULTS_VERSION.split('.')[0]}.x",
                      EXIT_BAD_INPUT)
    want = schema()
    missing = [f.name for f in want if f.name not in t.schema.names]
    if missing:
        raise HgError(f"{path}: results {v} without the columns {', '.join(missing)}", EXIT_BAD_INPUT)
    return t.select([f.name for f in want]).cast(want)


def write(table: Any, path: str) -> None:
    """@table to @path, whole or not at all (a temporary file renamed)."""
    pq = __import__("pyarrow.parquet", fromlist=["parquet"])
    tmp = path + ".tmp"
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# the questions people ask most, by name (--query NAME); any other --query is SQL
QUERIES = {
    "classes": """
        SELECT kernel, guest, cls, sum(actual) AS actual, sum(inferred) AS inferred, sum(correct) AS correct,
               round(sum(correct) / nullif(sum(inferred), 0), 3) AS precision,
               round(sum(correct) / nullif(sum(actual), 0), 3) AS recall
        FROM results WHERE actual IS NOT NULL
        GROUP BY ALL HAVING sum(actual) > 0 OR sum(inferred) > 0 ORDER BY ALL""",
    "accuracy": """
        SELECT kernel, guest, count(*) AS runs, sum(headline_gaps) AS gaps,
               round(sum(headline_correct) / nullif(sum(headline_gaps), 0), 3) AS accuracy
        FROM (SELECT DISTINCT run_dir, kernel, guest, headline_gaps, headline_correct FROM results
              WHERE headline_gaps IS NOT NULL)
        GROUP BY ALL ORDER BY ALL""",
    "latency": """
        SELECT scenario, kernel, guest, max(worst_latency_us) AS worst_latency_us
        FROM results WHERE worst_latency_us IS NOT NULL GROUP BY ALL ORDER BY worst_latency_us DESC""",
    "failed": """
        SELECT DISTINCT run_dir, kernel, guest, scenario, expectations, expectations_failed
        FROM results WHERE expectations_failed > 0 ORDER BY ALL""",
}


def query(table: Any, sql: str) -> Tuple[List[str], List[Tuple[Any, ...]]]:
    """@sql (or a QUERIES name) over @table, seen as the view `results`: the column names and the rows."""
    duckdb = _need("duckdb")
    con = duckdb.connect()
    try:
        con.register("results", table)
        try:
            cur = con.execute(QUERIES.get(sql, sql))
        except duckdb.Error as e:
            raise HgError(f"--query: {str(e).splitlines()[0]}", EXIT_USAGE) from None
        names = [d[0] for d in cur.description or []]
        return names, [tuple(r) for r in cur.fetchall()]
    finally:
        con.close()


def render(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Aligned text columns, numbers to the right."""
    def cell(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) or abs(v) < 1e15 else str(v)
        return str(v)
    body = [[cell(v) for v in r] for r in rows]
    width = [max([len(n)] + [len(r[i]) for r in body]) for i, n in enumerate(names)]
    num = [all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) and bool(rows)
           for i in range(len(names))]
    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, width, num)).rstrip()
    return "\n".join([line(names)] + [line(r) for r in body]) + "\n"
