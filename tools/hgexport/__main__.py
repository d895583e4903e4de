"""hourglass export DIR --kernelshark OUT.dat"""
import argparse
import sys

from hgmerge import report
from hgmerge.load import RunError

from . import htmlreport, kernelshark, perfetto


def main(argv=None):
    ap = argparse.ArgumentParser(prog="hourglass export",
                                 description="Export a merged run for viewers: a trace.dat that trace-cmd and "
                                             "KernelShark open, with the kernel's events and hourglass's.",
                                 epilog="The run is merged once for all outputs. On a terminal a progress line "
                                        "shows how far the merge and each writer are (HG_PROGRESS=1 forces it, "
                                        "HG_PROGRESS=0 silences it). Exit status: 0 written, 2 bad usage, 3 bad "
                                        "input or a file that cannot be written (named). See docs/export.md.")
    ap.add_argument("dir", help="run directory (hourglass record -o DIR)")
    ap.add_argument("--kernelshark", metavar="OUT.dat",
                    help="write a trace.dat: the ground truth, and a buffer 'hourglass' with intervals, gaps "
                         "(inferred and actual causes), jobs, deadline misses and wake-ups")
    ap.add_argument("--ks-session", metavar="OUT.json",
                    help="with --kernelshark: also a KernelShark session (kernelshark -s OUT.json) that opens the "
                         "trace zoomed on the first wrong inference, markers A and B at the gap's ends (it also "
                         "writes OUT-hourglass.dat beside the trace.dat: KernelShark 2.2.1 cannot restore a "
                         "second buffer)")
    ap.add_argument("--perfetto", metavar="OUT.json",
                    help="write Chrome trace-event JSON for ui.perfetto.dev: a track per CPU (tasks, irqs, "
                         "softirqs) and per hourglass thread (intervals, gaps named by their actual cause)")
    ap.add_argument("--html", metavar="OUT.html",
                    help="write one self-contained page: tables and charts (execution map, switch times, latency "
                         "histogram, CDF and stages, supply-bound functions)")
    ap.add_argument("--with", dest="more", metavar="DIR", action="append", default=[],
                    help="with --html: another run directory to put side by side (repeatable)")
    ap.add_argument("--svg", metavar="DIR", help="with --html: also write each chart as an SVG file in DIR")
    ap.add_argument("--png", metavar="DIR", help="with --html: also write each chart as a PNG file in DIR "
                                                 "(needs rsvg-convert, Debian package librsvg2-bin)")
    ap.add_argument("--kernel", metavar="FILE", help="ground truth other than DIR/kernel.hgt (see report)")
    a = ap.parse_args(argv)
    if not a.kernelshark and not a.perfetto and not a.html:
        ap.error("say what to write: --kernelshark OUT.dat, --perfetto OUT.json and/or --html OUT.html")
    if (a.svg or a.png or a.more) and not a.html:
        ap.error("--with, --svg and --png go with --html OUT.html")
    if a.ks_session and not a.kernelshark:
        ap.error("--ks-session goes with --kernelshark OUT.dat")
    try:
        # one merge for every output: it is most of the time an export takes
        merged = report.merge_run(a.dir, a.kernel)
        if a.kernelshark:
            r = kernelshark.export(a.dir, a.kernelshark, a.kernel, merged, a.ks_session)
            print(f"hourglass export: {r['path']}: {r['kernel_events']} kernel events, {r['hourglass_events']} "
                  f"hourglass events ({r['gaps']} gaps) on {r['cpus']} CPUs", file=sys.stderr)
            if r.get("session"):
                print(f"hourglass export: {r['session']} (with {r['companion']}): kernelshark -s {r['session']} "
                      f"opens at the gap at {r['session_gap_ms']:.3f} ms", file=sys.stderr)
            elif a.ks_session:
                print(f"hourglass export: {a.ks_session} not written: the run has no gap to open on",
                      file=sys.stderr)
        if a.perfetto:
            r = perfetto.export(a.dir, a.perfetto, a.kernel, merged)
            print(f"hourglass export: {r['path']}: {r['events']} trace events ({r['gaps']} gaps)", file=sys.stderr)
        if a.html:
            r = htmlreport.render([a.dir] + a.more, a.html, a.svg, a.png, merged)
            print(f"hourglass export: {r['path']}: {r['runs']} run(s)", file=sys.stderr)
    except (RunError, ValueError, OSError) as e:
        print(f"hourglass export: {e}", file=sys.stderr)
        return 3
    return 0


sys.exit(main())
