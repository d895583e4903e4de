"""cli - `python3 -m hgtools record|report|export ARGS`, what the C
`hourglass record|report|export` runs; also the `hgtools` entry point.

Exit statuses, the same for every program of the project (docs/exit-status.md):
0 done, 1 bad command line, 2 could not run (a program or library missing,
a program that crashed, an output that cannot be written), 3 bad input (a
file that is not what it claims, named with the offset and the problem);
record adds 4 (hourglass's trace buffer filled), 5 (stopped at -b) and 130
(interrupted).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from typing import IO, Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple

from . import engine, gapmodel, learn, record, report_json, report_text, results
from .errors import EXIT_BAD_INPUT, EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE, HgError, cannot, reason
from .machine import machine_of

USAGE = """usage: hourglass record|report|export|learn|results ARGS (each has --help)

  record  run hourglass under the kernel's recorder, into a run directory
  report  merge a run directory and print what explains every gap
  export  merge it into files for viewers: trace.dat, a Perfetto trace, an HTML page
  learn   fit the inference's limits to a machine from runs with ground truth (a profile)
  results many runs in one table (Parquet), queried with SQL (DuckDB)
"""

EXIT_EPILOG = ("Exit status (docs/exit-status.md): 0 done, 1 bad command line, 2 could not run (a program "
               "missing or crashed, an output that cannot be written), 3 bad input (named: truncated or "
               "corrupt file, unfinished run, another clock), 130 interrupted.")


class Parser(argparse.ArgumentParser):
    """argparse, with hourglass's exit status for a bad command line (1, not 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Dispatch to record, report or export; the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        (sys.stdout if args else sys.stderr).write(USAGE)
        return 0 if args else EXIT_USAGE
    cmd, rest = args[0], args[1:]
    if cmd == "record":
        return record.main(rest)
    if cmd not in ("report", "export", "learn", "results"):
        print(f"hourglass: unknown command '{cmd}'\n{USAGE}", file=sys.stderr, end="")
        return EXIT_USAGE
    try:
        return {"report": report_main, "export": export_main, "learn": learn_main,
                "results": results_main}[cmd](rest)
    except HgError as e:
        print(f"hourglass {cmd}: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print(f"hourglass {cmd}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:
        # never '[Errno 13] ...': the file and the reason in words
        print(f"hourglass {cmd}: {e.filename or 'a file'}: {reason(e)}", file=sys.stderr)
        return EXIT_ENV


def report_main(argv: Sequence[str]) -> int:
    """`hourglass report DIR`: merge, then print the text (or the JSON)."""
    ap = Parser(prog="hourglass report",
                description="Merge an hourglass run with the kernel's recording: explain every gap, score "
                            "the user-space inferences, decompose wake-up latency.",
                epilog="The merge is build/hgmerge (C); this command formats its report. On a terminal a "
                       "progress line shows how far it is (HG_PROGRESS=1 forces it, HG_PROGRESS=0 silences "
                       "it). Times are seconds from the start of the kernel's recording, the clock of "
                       "`trace-cmd report` on the exported trace. " + EXIT_EPILOG + " See docs/merge.md.")
    ap.add_argument("dir", help="run directory (hourglass record --dir DIR), or a report JSON to print again")
    ap.add_argument("--kernel", metavar="FILE",
                    help="the ground truth: an hgtrace recording (.hgt) or a trace-cmd trace.dat recorded "
                         "with -C x86-tsc (default DIR/kernel.hgt, else DIR/ftrace.hgt, else DIR/trace.dat)")
    ap.add_argument("--json", metavar="FILE", help="also write the report as JSON ('-': to stdout, no text)")
    ap.add_argument("--gaps", metavar="OUT.hgg", help="also write the per-gap records (docs/merge.md)")
    ap.add_argument("--disagreements", type=int, default=20, metavar="N",
                    help="disagreements and missed deadlines listed in the text (default 20; all are in the JSON)")
    _label_option(ap)
    ap.add_argument("--profile", metavar="PROFILE",
                    help="infer with the limits hourglass learn fitted on this machine (docs/profile.md), "
                         "scored beside the profile's held-out figures")
    ap.add_argument("--force-profile", action="store_true",
                    help="use --profile's limits on a run of another kernel, CPU count, hypervisor or TSC "
                         "than the profile's (a warning, not a refusal)")
    ap.add_argument("--explain", nargs="?", const="all", metavar="WHEN",
                    help="instead of the report, the rule that decided each gap, in its words and with the "
                         "limits it used, and the kernel's verdict beside it with what ran in the gap and the "
                         "kernel's events in it: every gap, or those over a time WHEN (seconds on the "
                         "report's clock; else the nearest on each CPU), or T1:T2")
    a = ap.parse_args(argv)
    if a.disagreements < 0:
        ap.error(f"--disagreements {a.disagreements}: a count, 0 or more")
    if a.explain and a.explain != "all":
        why = _explain_bad(a.explain)
        if why:
            ap.error(f"--explain {a.explain}: {why}")
    if a.explain and a.json == "-":
        ap.error("--explain prints text: not with --json -")
    _check_labels(ap, a.label)
    if a.json and a.json != "-":
        _check_output(a.json)
    prof = _profile_for(a.profile, a.dir, a.force_profile) if a.profile else None
    if a.explain and not os.path.isdir(a.dir):
        raise HgError(f"{a.dir}: --explain needs the run directory (a report JSON holds no gaps)", EXIT_USAGE)
    with tempfile.TemporaryDirectory(prefix="hourglass-explain-") as tmp:
        gj = os.path.join(tmp, "gaps.jsonl") if a.explain else None
        classes = _model_classes(prof, a.dir, a.kernel, a.label, tmp) if prof and prof.get("model") else None
        rep = _report_of(a.dir, a.kernel, engine.Exports(gaps=a.gaps, gaps_json=gj), a.label,
                         limits=learn.limits_arg(prof) if prof else None,
                         classes=classes[0] if classes else None)
        if prof:
            rep["profile"] = _profile_section(prof, a.profile)
        if a.json == "-":
            _print(lambda out: out.write(json.dumps(rep, indent=1) + "\n"))
            return 0
        if a.json:
            _write_json(rep, a.json)
        gaps = []
        if gj:
            with open(gj) as f:
                gaps = [json.loads(line) for line in f]
            if classes:     # the model's questions, where the rule's words would be
                for g in gaps:
                    path = classes[1].get((g["cpu"], g["g0"]))
                    if path is not None and g.get("why_inferred", "").startswith("the profile's model"):
                        g["why_inferred"] = "the profile's model: " + ("; ".join(path) or "its one leaf")
    def text(out: Any) -> None:
        if a.explain:       # the gaps asked about, not the whole report again
            report_text.explain_head(rep, out)
            report_text.explain(rep, gaps, out, a.explain)
        else:
            report_text.render(rep, out, a.disagreements)
    _print(text)
    return 0


def _explain_bad(when: str) -> Optional[str]:
    """What is wrong with --explain's WHEN (a time T in seconds or T1:T2, on the report's
    clock, which starts at 0), None when it is right."""
    parts = when.split(":", 1)
    try:
        ts = [float(x) for x in parts]
    except ValueError:
        return "not 'all', a time in seconds or T1:T2"
    if not all(math.isfinite(x) and x >= 0 for x in ts):
        return "times are seconds from the start of the kernel's recording, 0 or more"
    if len(ts) == 2 and ts[0] > ts[1]:
        return f"T1:T2 must run forward ({parts[0]} is after {parts[1]})"
    return None


def results_main(argv: Sequence[str]) -> int:
    """`hourglass results DIR... [-o FILE.parquet] [--query SQL]`: many runs in one table."""
    ap = Parser(prog="hourglass results",
                description="Gather run directories (make lab's, make paper's, a farm's artifacts, your own "
                            "hourglass record --dir runs) into one table, one row per run and per class, and "
                            "answer questions across them with SQL (DuckDB, embedded). The columns are "
                            "docs/results.md's.",
                epilog="A run's figures are its report's: DIR/report.json when newer than the run, else a "
                       "merge now. Named queries: " + ", ".join(results.QUERIES) + " (docs/results.md shows "
                       "each); any other --query is SQL over the view `results`. " + EXIT_EPILOG)
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
        _check_output(a.output)
    if a.histograms:
        _check_output(a.histograms)
        from . import charts, histograms
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
        _print(show)
    return 0


def learn_main(argv: Sequence[str]) -> int:
    """`hourglass learn RUN... -o PROFILE`: fit the inference's limits, write the profile."""
    ap = Parser(prog="hourglass learn",
                description="Fit the gray-box inference's three limits (switch/interrupt, at the tick's phase, "
                            "the hidden floor) to one machine and kernel, from runs recorded there with ground "
                            "truth (hourglass record, with the module or --ftrace-only), and measure them on "
                            "runs left out of the fit. hourglass report --profile then infers with them, on "
                            "runs of that machine.",
                epilog="Each candidate limit is scored by the merger itself (build/hgmerge --limits): the "
                       "rules stay docs/merge.md's, only their limits are learned; --model tree adds a "
                       "decision tree whose classes the merger judges the same way (hgmerge --classes). "
                       "With two runs or more, each is scored by the limits fitted on the others (held_out "
                       "in the profile). "
                       + EXIT_EPILOG + " See docs/profile.md.")
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run directories of one machine and kernel, with "
                                                           "ground truth (kernel.hgt or ftrace.hgt)")
    ap.add_argument("-o", "--output", required=True, metavar="PROFILE", help="the profile to write (JSON)")
    ap.add_argument("-j", "--jobs", type=int, default=2, metavar="N", help="merges at once (default 2)")
    ap.add_argument("--model", choices=("tree",), help="also fit a decision tree over what hourglass's own data "
                    "says of each gap (its length, where it falls in the tick's period, its neighbours), kept "
                    "only if, held out, it reads more gaps right than the limits (with --never-worse, also no "
                    "class worse; needs scikit-learn; docs/profile.md, THE MODEL)")
    ap.add_argument("--never-worse", action="store_true",
                    help="keep the fitted limits (and the tree) only if, each run read by what was fitted on the "
                         "others, they read no class of any run worse than the built-in rules: else the built-in "
                         "rules' own limits (where the rules are trusted; the default takes the most gaps right)")
    a = ap.parse_args(argv)
    if a.jobs < 1:
        ap.error("--jobs must be 1 or more")
    if a.never_worse and len(a.runs) < 2:
        ap.error("--never-worse judges runs held out: give two runs or more")
    _check_output(a.output)
    prof = learn.learn(a.runs, a.jobs, model=bool(a.model), never_worse=a.never_worse)
    _write_json(prof, a.output)
    fit, held = prof["fitted"], prof.get("held_out")
    lim = prof["limits_us"]
    print(f"hourglass learn: {a.output}: {learn.limits_text(lim)}"
          + f", from {len(a.runs)} run(s) of {prof['machine']['kernel']}")
    print(f"  the limits on the runs they were fitted on: {fit['profile']['correct']} of {fit['profile']['gaps']} "
          f"gaps with a kernel cause right, the built-in rules {fit['builtin']['correct']}")
    if held:
        by = "the model fitted on" if prof.get("model") else "the limits of"
        print(f"  held out (each run by {by} the others): {held['profile']['correct']} of "
              f"{held['profile']['gaps']} right ({100 * (held['profile']['accuracy'] or 0):.1f}%), the built-in "
              f"rules {held['builtin']['correct']} ({100 * (held['builtin']['accuracy'] or 0):.1f}%)")
    else:
        print("  held out: none (one run: give two or more to measure the profile on runs it did not see)")
    if prof.get("limits_learned"):
        print(f"  limits: {'taken' if prof['limits_learned']['taken'] else 'not taken'}: "
              f"{prof['limits_learned']['why']}")
    note = prof.get("model_learned")
    if note:
        h = note.get("held_out")
        print(f"  model: {'taken' if note['taken'] else 'not taken'}: {note['why']}"
              + (f" (held out: the tree {100 * (h['accuracy'] or 0):.1f}%, the limits "
                 f"{100 * (note['limits_held_out']['accuracy'] or 0):.1f}%)" if h else ""))
        if prof.get("model"):
            print("\n".join("    " + line for line in gapmodel.text(prof["model"])))
    return 0


def export_main(argv: Sequence[str]) -> int:
    """`hourglass export DIR`: one merge for every output asked for."""
    ap = Parser(prog="hourglass export",
                description="Export a merged run for viewers: a trace.dat that trace-cmd and KernelShark open, "
                            "a Perfetto trace (protobuf) for ui.perfetto.dev, one self-contained HTML page with charts.",
                epilog="The run is merged once, by build/hgmerge (C), which writes the trace.dat and the "
                       "Perfetto file; the HTML page is drawn here from its report. On a terminal a progress "
                       "line shows how far the merge is (HG_PROGRESS=1 forces it, HG_PROGRESS=0 silences it). "
                       + EXIT_EPILOG + " See docs/export.md.")
    ap.add_argument("dir", help="run directory (hourglass record --dir DIR); with only --html, a report JSON "
                                "(hourglass report --json) also does")
    ap.add_argument("--kernelshark", metavar="OUT.dat",
                    help="write a trace.dat: the ground truth, and a buffer 'hourglass' with intervals, gaps "
                         "(inferred and actual causes), jobs, deadline misses and wake-ups")
    ap.add_argument("--ks-session", metavar="OUT.json",
                    help="with --kernelshark: also a KernelShark session (kernelshark -s OUT.json) that opens the "
                         "trace zoomed on the first wrong inference, markers A and B at the gap's ends")
    ap.add_argument("--perfetto", metavar="OUT.perfetto-trace",
                    help="write a Perfetto trace (Perfetto's protobuf format, .perfetto-trace or .pftrace) for "
                         "ui.perfetto.dev: a track per CPU (tasks, irqs, softirqs) and per hourglass thread "
                         "(intervals, gaps named by their actual cause)")
    ap.add_argument("--html", metavar="OUT.html",
                    help="write one self-contained page: what to look at first, the tables, and the charts "
                         "(execution map, confusion heat map, gap lengths, switch times, latency histogram, "
                         "CDF and stages, supply-bound functions)")
    ap.add_argument("--with", dest="more", metavar="DIR", action="append", default=[],
                    help="with --html: another run directory (or report JSON) to put side by side (repeatable)")
    ap.add_argument("--svg", metavar="DIR", help="with --html: also write each chart as an SVG file in DIR")
    ap.add_argument("--png", metavar="DIR", help="with --html: also write each chart as a PNG file in DIR")
    ap.add_argument("--json", metavar="FILE", help="also write the report as JSON, from the same merge")
    ap.add_argument("--text", metavar="FILE", help="also write the report as text, from the same merge")
    ap.add_argument("--kernel", metavar="FILE", help="ground truth other than DIR/kernel.hgt (see report)")
    _label_option(ap)
    a = ap.parse_args(argv)
    _check_labels(ap, a.label)
    if not a.kernelshark and not a.perfetto and not a.html and not a.json and not a.text:
        ap.error("say what to write: --kernelshark OUT.dat, --perfetto OUT.perfetto-trace, --html OUT.html, "
                 "--json FILE and/or --text FILE")
    if (a.svg or a.png or a.more) and not a.html:
        ap.error("--with, --svg and --png go with --html OUT.html")
    if a.ks_session and not a.kernelshark:
        ap.error("--ks-session goes with --kernelshark OUT.dat")
    if a.html:
        _check_output(a.html)
        # the charts need matplotlib: say so before minutes of merging, not after
        from . import charts
        charts.require()
    for path in (a.json, a.text):
        if path:
            _check_output(path)
    exports = engine.Exports(kernelshark=a.kernelshark, ks_session=a.ks_session, perfetto=a.perfetto)
    preload = None
    more: List[Dict[str, Any]] = []
    pages: List[Any] = []
    if a.html:
        # matplotlib's import overlaps the merge, which waits on hgmerge
        import threading
        from . import charts
        preload = threading.Thread(target=charts.preload, daemon=True)
        preload.start()
        more = [_report_of(d, None, engine.Exports()) for d in a.more]

    def draw(rep: Dict[str, Any]) -> None:
        """The page, in memory: drawn while hgmerge puts the trace files together, written
        only once they are (a merge that fails leaves no page)."""
        from . import html
        if preload:
            preload.join()
        pages.append(html.page([rep] + more))

    rep = _report_of(a.dir, a.kernel, exports, a.label, draw if a.html else None)
    if a.json:
        _write_json(rep, a.json)
    if a.text:
        try:
            with open(a.text, "w") as f:
                report_text.render(rep, f, 20)
        except OSError as e:
            raise cannot("write", a.text, e)
    for what, path in (("trace.dat", a.kernelshark), ("KernelShark session", a.ks_session),
                       ("Perfetto trace", a.perfetto)):
        if path:
            print(f"hourglass export: {path}: {what} written" + _size(path), file=sys.stderr)
    _say_warnings(rep)
    if a.html:
        if not pages:           # a report JSON: no merge to draw beside
            draw(rep)
        page = pages[0]
        try:
            with open(a.html, "w") as f:
                f.write(page.text)
        except OSError as e:
            raise cannot("write", a.html, e)
        for fmt, where in (("svg", a.svg), ("png", a.png)):
            if where:
                written = page.write_charts(where, fmt)
                print(f"hourglass export: {where}: {len(written)} charts as {fmt.upper()}", file=sys.stderr)
        print(f"hourglass export: {a.html}: {1 + len(more)} run(s), {page.charts} charts", file=sys.stderr)
    return 0


def _say_warnings(rep: Dict[str, Any]) -> None:
    """The report's warnings, where export says what it wrote: they are about the files too (the
    trace.dat's own, events it had to place late, came only in report.txt and the page before)."""
    for msg in rep.get("warnings") or []:
        print(f"hourglass export: warning: {msg}", file=sys.stderr)


def _label_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--label", metavar="WHAT=NAME", action="append", default=[],
                    help="name a load in the report: WHAT is a pid, comm:PREFIX (every task whose comm starts "
                         "so) or irq:N (repeatable; the loads hourglass record --load ran are named already, "
                         "from DIR/record.json)")


def _check_labels(ap: argparse.ArgumentParser, labels: Sequence[str]) -> None:
    for lab in labels:
        if not engine.LABEL_RE.match(lab):
            ap.error(f"--label {lab}: not PID=NAME, comm:PREFIX=NAME or irq:N=NAME")


def _report_of(what: str, kernel: Optional[str], exports: engine.Exports,
               labels: Sequence[str] = (),
               on_report: Optional[Callable[[Dict[str, Any]], None]] = None,
               limits: Optional[str] = None, classes: Optional[str] = None) -> Dict[str, Any]:
    """A run directory, merged now; or a report JSON already written, read back."""
    if os.path.isfile(what) and what.endswith(".json"):
        if kernel or exports.kernelshark or exports.perfetto or exports.gaps or labels or limits:
            raise HgError(f"{what}: a report JSON holds no timeline: give the run directory to export it",
                          EXIT_USAGE)
        return report_json.load(what)
    return engine.merge(what, kernel, exports, labels=list(labels), on_report=on_report, limits=limits,
                        classes=classes)


def _model_classes(prof: Dict[str, Any], run_dir: str, kernel: Optional[str], labels: Sequence[str],
                   tmp: str) -> Tuple[str, Dict[Tuple[int, int], List[str]]]:
    """The profile's model on the run: hgmerge --classes' file (in @tmp), and each gap's path
    through the tree by (cpu, g0). The run's gaps come from a first merge of it; the tree reads
    only hourglass's side of each (gapmodel.FEATURES)."""
    gj = os.path.join(tmp, "model-gaps.jsonl")
    rep = engine.merge(run_dir, kernel, engine.Exports(gaps_json=gj), labels=list(labels), show_progress=False,
                       limits=learn.limits_arg(prof))
    with open(gj) as f:
        gaps = [json.loads(line) for line in f]
    decided = gapmodel.classify(prof["model"], gaps, float(rep["run"]["tsc_hz"]))
    path = os.path.join(tmp, "model.classes")
    gapmodel.write_classes(decided, path)
    return path, {(g["cpu"], g["g0"]): p for g, _, p in decided}


def _profile_for(path: str, run_dir: str, force: bool) -> Dict[str, Any]:
    """The profile at @path, for the run at @run_dir: refused (or, forced, warned about) when it was
    learned on another machine or kernel than the run's."""
    prof = learn.load(path)
    if not os.path.isdir(run_dir):
        raise HgError(f"{run_dir}: --profile needs a run directory (its hourglass.json says the machine)",
                      EXIT_USAGE)
    try:
        with open(os.path.join(run_dir, "hourglass.json")) as f:
            machine = machine_of(json.load(f))
    except (OSError, ValueError) as e:
        raise HgError(f"{run_dir}: hourglass.json unreadable ({e}): the run's machine is unknown", EXIT_BAD_INPUT)
    diff = learn.mismatch(prof, machine)
    if diff and not force:
        raise HgError(f"{path} was learned on another machine than this run's ({'; '.join(diff)}): its limits "
                      "would misjudge it (--force-profile uses them anyway)", EXIT_USAGE)
    if diff:
        print(f"hourglass report: warning: {path} was learned on another machine ({'; '.join(diff)}); "
              "its limits used anyway (--force-profile)", file=sys.stderr)
    prof["_mismatch"] = diff
    return prof


def _profile_section(prof: Dict[str, Any], path: str) -> Dict[str, Any]:
    """What the report says of the profile it inferred with."""
    held = prof.get("held_out") or {}
    return {"path": os.path.abspath(path), "machine": prof["machine"], "limits_us": prof["limits_us"],
            "learned_runs": len((prof.get("learned") or {}).get("runs") or []),
            "held_out": held.get("profile"), "held_out_builtin": held.get("builtin"),
            "model": gapmodel.text(prof["model"]) if prof.get("model") else None,
            "mismatch": prof.get("_mismatch") or []}


def _check_output(path: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise HgError(f"cannot write {path}: {d} is not a directory", EXIT_ENV)


def _write_json(rep: Dict[str, Any], path: str) -> None:
    try:
        with open(path, "w") as f:
            json.dump(rep, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise cannot("write", path, e)


def _print(write: Any) -> None:
    """Write to stdout; a reader that went away (`hourglass report DIR | head`) is not an error."""
    out: IO[str] = sys.stdout
    try:
        write(out)
        out.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _size(path: str) -> str:
    try:
        return f" ({os.path.getsize(path) / 1e6:.1f} MB)"
    except OSError:
        return ""

