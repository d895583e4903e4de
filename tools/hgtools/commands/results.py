"""results - `hourglass results DIR...`: many runs in one table (Parquet), queried with SQL."""
from __future__ import annotations

import os
import sys
from typing import Any, List, Sequence

from .. import results
from . import common


def results_main(argv: Sequence[str]) -> int:
    """`hourglass results DIR... [-o FILE.parquet] [--query SQL]`: many runs in one table."""
    ap = common.Parser(prog="hourglass results",
                       description="Gather run directories (make lab's, make paper's, a farm's artifacts, your own "
                                   "hourglass record --dir runs) into one table, one row per run and per class, and "
                                   "answer questions across them with SQL (DuckDB, embedded). The columns are "
                                   "docs/results.md's.",
                       epilog="A run's figures are its report's: DIR/report.json when newer than the run, else a "
                              "merge now. Named queries: " + ", ".join(results.QUERIES) + " (docs/results.md shows "
                              "each); any other --query is SQL over the view `results`. " + common.EXIT_EPILOG)
    ap.add_argument("paths", nargs="+", metavar="DIR|FILE.parquet",
                    help="directories searched for run directories, or tables written by -o before")
    ap.add_argument("-o", "--output", metavar="FILE.parquet", help="write the table as Parquet")
    ap.add_argument("--query", metavar="SQL", action="append",
                    help="a named query or SQL over `results`, printed as a table (may be repeated; "
                         "default: classes)")
    ap.add_argument("--csv", action="store_true", help="print the queries' rows as CSV, not aligned columns")
    ap.add_argument("--machine", metavar="NAME",
                    help="the machine column of the runs gathered from directories (default: the "
                         "hypervisor and the TSC's rate, from each run's hourglass.json)")
    ap.add_argument("--histograms", metavar="OUT.html",
                    help="also draw the runs' wake-up latency and gap histograms on one chart each, one line "
                         "per run with the count on a log axis (cyclictest's, OSADL's plots), with per run a "
                         "KernelShark session at its worst wake-up (beside OUT.html, in sessions/)")
    a = ap.parse_args(argv)
    if a.output:
        if not a.output.endswith(".parquet"):
            ap.error(f"-o {a.output}: the file must end in .parquet")
        common.check_output(a.output)
    if a.histograms:
        common.check_output(a.histograms)
        from .. import charts, histograms
        charts.require()
        _, n, ses = histograms.page(a.paths, a.histograms)
        print(f"hourglass results: {a.histograms}: {n} runs, {ses} KernelShark session(s) at the worst wake-up",
              file=sys.stderr)
        if not a.output and not a.query:
            return 0
    progress = sys.stderr.isatty() and os.environ.get("HG_PROGRESS") != "0"
    def on_run(run: str) -> None:
        if progress:
            print(f"\rhourglass results: {run[-60:]:60}", end="", file=sys.stderr, flush=True)
    table = results.gather(a.paths, on_run, a.machine)
    if progress:
        print("\r" + " " * 80 + "\r", end="", file=sys.stderr)
    if a.output:
        results.write(table, a.output)
        runs = len(set(table.column("run_dir").to_pylist()))
        print(f"hourglass results: {a.output}: {runs} runs, {table.num_rows} rows", file=sys.stderr)
    for q in a.query or ([] if a.output else ["classes"]):
        names, rows = results.query(table, q)
        def show(out: Any, names: List[str] = names, rows: List[Any] = rows) -> None:
            if a.csv:
                import csv
                w = csv.writer(out)
                w.writerow(names)
                w.writerows(rows)
            else:
                out.write(results.render(names, rows))
        common.print_out(show)
    return 0
