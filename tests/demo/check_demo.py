#!/usr/bin/env python3
"""check_demo - what `make demo` left in out/demo/ is what the README promises:
the three summary lines, each run's reports, a merged trace.dat that
trace-cmd reports and libkshark loads, the Perfetto JSON and the HTML page.

    python3 tests/demo/check_demo.py out/demo      (make check runs it after make demo)
Prints TAP; exits 1 on any failure.
"""
import json
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, os.path.join(TOP, "tools"))


def checks(d):
    lines = open(os.path.join(d, "summary.txt")).read().splitlines()
    m = re.match(r"gaps explained: (\d+) of (\d+) gaps \([\d.]+%\) have a kernel cause; (\d+) hidden", lines[0])
    yield "summary line 1: gaps explained", bool(m) and 0 < int(m.group(2)) and int(m.group(1)) <= int(m.group(2))
    m = re.match(r"inference accuracy: (\d+) of (\d+) gaps", lines[1])
    yield "summary line 2: inference accuracy", bool(m) and int(m.group(1)) <= int(m.group(2))
    m = re.match(r"worst latency: ([\d.]+) us \(timer .*us\); largest stage (timer|irq|sched|return)", lines[2])
    yield "summary line 3: worst latency with its largest stage", bool(m) and float(m.group(1)) > 0
    for run in ("three", "lat"):
        rep = json.load(open(os.path.join(d, run, "report.json")))
        yield f"{run}: report.json with a confusion matrix", rep["report_version"] == 1 and "matrix" in rep["confusion"]
        yield f"{run}: record finished", not os.path.exists(os.path.join(d, run, "INCOMPLETE"))
        # a real recording through both engines: hgmerge-core must give the reference's report
        from hgmerge import report
        diff, secs = report.engines_differ(os.path.join(d, run))
        print(f"# {run}: {rep['gaps_total']} gaps, {rep['kernel_recording']['events']} kernel events merged in "
              f"{secs['core']:.2f} s by hgmerge-core, {secs['python']:.2f} s by the Python reference")
        yield f"{run}: hgmerge-core and the Python reference give the same report" + \
            (f" (differ in {', '.join(diff)})" if diff else ""), not diff
    dat = os.path.join(d, "three", "merged.dat")
    p = subprocess.run(["trace-cmd", "report", dat], capture_output=True, text=True)
    yield "three/merged.dat: trace-cmd reports both buffers", p.returncode == 0 and " sched_switch: " in p.stdout \
        and "hourglass:" in p.stdout and " gap: " in p.stdout
    from hgexport import kscheck
    ks = kscheck.load(dat)
    yield "three/merged.dat: libkshark loads two streams, every event named", ks["streams"] == 2 and \
        ks["unnamed"] == 0 and ks["entries"] > 0
    ses = kscheck.load_session(os.path.join(d, "three", "kernelshark-session.json"))
    yield "three/kernelshark-session.json: libkshark imports both files, markers on a gap's ends", \
        ses["streams"] == 2 and ses["entries"] == ks["entries"] and \
        ses["marks"]["markA"][0] == "hourglass/interval_end" and ses["marks"]["markB"][0] == "hourglass/interval_start"
    pf = json.load(open(os.path.join(d, "three", "perfetto.json")))
    yield "three/perfetto.json: trace events", len(pf["traceEvents"]) > 0
    page = open(os.path.join(d, "report.html")).read()
    yield "report.html: both runs, charts", page.count("<h2>") == 2 and page.count("<svg") >= 5
    plots = os.path.join(d, "plots")
    for name in ("three-map", "three-matrix", "three-switch", "three-sbf", "lat-latency", "lat-cdf", "lat-stages"):
        with open(os.path.join(plots, name + ".png"), "rb") as f:
            head = f.read(24)
        with open(os.path.join(plots, name + ".svg")) as f:
            body = f.read()
        yield f"plots/{name}: PNG and SVG", head[:8] == b"\x89PNG\r\n\x1a\n" and \
            int.from_bytes(head[16:20], "big") > 100 and body.startswith("<svg")


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "out", "demo")
    results = list(checks(d))
    print(f"1..{len(results)}")
    for i, (name, ok) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    return 0 if all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main())
