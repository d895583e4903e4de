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
import os
import sys
from typing import IO, Any, Callable, Dict, List, NoReturn, Optional, Sequence

from . import engine, record, report_json, report_text
from .errors import EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE, HgError, cannot, reason

USAGE = """usage: hourglass record|report|export ARGS (each has --help)

  record  run hourglass under the kernel's recorder, into a run directory
  report  merge a run directory and print what explains every gap
  export  merge it into files for viewers: trace.dat, a Perfetto trace, an HTML page
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
    if cmd not in ("report", "export"):
        print(f"hourglass: unknown command '{cmd}'\n{USAGE}", file=sys.stderr, end="")
        return EXIT_USAGE
    try:
        return report_main(rest) if cmd == "report" else export_main(rest)
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
    a = ap.parse_args(argv)
    _check_labels(ap, a.label)
    if a.json and a.json != "-":
        _check_output(a.json)
    rep = _report_of(a.dir, a.kernel, engine.Exports(gaps=a.gaps), a.label)
    if a.json == "-":
        _print(lambda out: out.write(json.dumps(rep, indent=1) + "\n"))
        return 0
    if a.json:
        _write_json(rep, a.json)
    _print(lambda out: report_text.render(rep, out, a.disagreements))
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
               on_report: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
    """A run directory, merged now; or a report JSON already written, read back."""
    if os.path.isfile(what) and what.endswith(".json"):
        if kernel or exports.kernelshark or exports.perfetto or exports.gaps or labels:
            raise HgError(f"{what}: a report JSON holds no timeline: give the run directory to export it",
                          EXIT_USAGE)
        return report_json.load(what)
    return engine.merge(what, kernel, exports, labels=list(labels), on_report=on_report)


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

