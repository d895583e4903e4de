"""export - `hourglass export DIR`: one merge for every file asked for (trace.dat, a KernelShark
session, a Perfetto trace, an HTML page, the report as JSON or text)."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Sequence

from .. import engine, report_text
from ..errors import cannot
from . import common


def export_main(argv: Sequence[str]) -> int:
    """`hourglass export DIR`: one merge for every output asked for."""
    ap = common.Parser(prog="hourglass export",
                       description="Export a merged run for viewers: a trace.dat that trace-cmd and KernelShark open, "
                                   "a Perfetto trace (protobuf) for ui.perfetto.dev, one self-contained HTML page with charts.",
                       epilog="The run is merged once, by build/hgmerge (C), which writes the trace.dat and the "
                              "Perfetto file; the HTML page is drawn here from its report. On a terminal a progress "
                              "line shows how far the merge is (HG_PROGRESS=1 forces it, HG_PROGRESS=0 silences it). "
                              + common.EXIT_EPILOG + " See docs/export.md.")
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
    common.label_option(ap)
    a = ap.parse_args(argv)
    common.check_labels(ap, a.label)
    if not a.kernelshark and not a.perfetto and not a.html and not a.json and not a.text:
        ap.error("say what to write: --kernelshark OUT.dat, --perfetto OUT.perfetto-trace, --html OUT.html, "
                 "--json FILE and/or --text FILE")
    if (a.svg or a.png or a.more) and not a.html:
        ap.error("--with, --svg and --png go with --html OUT.html")
    if a.ks_session and not a.kernelshark:
        ap.error("--ks-session goes with --kernelshark OUT.dat")
    if a.html:
        common.check_output(a.html)
        # the charts need matplotlib: say so before minutes of merging, not after
        from .. import charts
        charts.require()
    for path in (a.json, a.text):
        if path:
            common.check_output(path)
    exports = engine.Exports(kernelshark=a.kernelshark, ks_session=a.ks_session, perfetto=a.perfetto)
    preload = None
    more: List[Dict[str, Any]] = []
    pages: List[Any] = []
    if a.html:
        # matplotlib's import overlaps the merge, which waits on hgmerge
        import threading
        from .. import charts
        preload = threading.Thread(target=charts.preload, daemon=True)
        preload.start()
        more = [common.report_of(d, None, engine.Exports()) for d in a.more]

    def draw(rep: Dict[str, Any]) -> None:
        """The page, in memory: drawn while hgmerge puts the trace files together, written
        only once they are (a merge that fails leaves no page)."""
        from .. import html
        if preload:
            preload.join()
        pages.append(html.page([rep] + more))

    rep = common.report_of(a.dir, a.kernel, exports, a.label, draw if a.html else None)
    if a.json:
        common.write_json(rep, a.json)
    if a.text:
        try:
            with open(a.text, "w") as f:
                report_text.render(rep, f, 20)
        except OSError as e:
            raise cannot("write", a.text, e)
    for what, path in (("trace.dat", a.kernelshark), ("KernelShark session", a.ks_session),
                       ("Perfetto trace", a.perfetto)):
        if path:
            print(f"hourglass export: {path}: {what} written" + common.size_of(path), file=sys.stderr)
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
