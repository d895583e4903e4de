#!/usr/bin/env python3
"""bench/record_wall.py - how long `hourglass record --ftrace` takes, end to end, before and after hgtrace-ftrace.

Run in a guest, with a second tree built from the code to compare against
(the trace-cmd path: main before this branch) in HGT_BENCH_BASELINE:

    git archive <commit> | tar -x -C /tmp/hg-base && make -C /tmp/hg-base -s userspace
    HGT_BENCH_BASELINE=/tmp/hg-base flock /tmp/hg-guest.lock scripts/vm -k 6.1 -o out/bench-record \\
        -- bench/record_wall.py

Each variant is the whole command a user types, timed from start to exit:
`hourglass record --dir D --ftrace -- -n 1 -d 4s` (the module loaded, this
tree's hgtrace.ko for both), and the same with --ftrace-only. "before" is
the baseline tree's hourglass (trace-cmd record in the background, then
hourglass under hgtrace record), "after" this tree's (hgtrace-ftrace record
-- hgtrace record -- hourglass). Variants interleave, in reverse order every
other repeat (HGT_BENCH_REPEATS, default 3); medians and after/before
ratios are printed, with the events each recorder lost as the run directory
says (record.json, the recorders' summaries). Results go to
OUT/results-record-wall.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import re
import shutil
import statistics
import subprocess
import time

TOP = os.environ.get("HGT_TOP", os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
BASE = os.environ.get("HGT_BENCH_BASELINE", "")
OUT = os.environ.get("HGT_OUT", "/tmp/bench")
REC = os.environ.get("HGT_BENCH_REC_DIR", "/tmp/hg-bench-record")
REPEATS = int(os.environ.get("HGT_BENCH_REPEATS", "3"))
WORK = os.environ.get("HGT_BENCH_WORK", "-n 1 -d 4s").split()
KO = os.environ.get("HGT_KO", "")
HGTRACE_LOST = re.compile(r"^hgtrace: \d+ events, (\d+) lost", re.M)


def module_loaded():
    with open("/proc/modules") as f:
        return any(l.split()[0] == "hgtrace" for l in f)


def losses(d):
    """Events lost, by recorder, as the run directory tells."""
    out = {}
    try:
        meta = json.load(open(os.path.join(d, "record.json")))
    except (OSError, ValueError):
        return out
    if meta.get("ftrace_lost") is not None:
        out["hgtrace-ftrace"] = meta["ftrace_lost"]
    log = os.path.join(d, "hgtrace.log")
    if os.path.exists(log):
        m = HGTRACE_LOST.search(open(log, errors="replace").read())
        if m:
            out["hgtrace.ko"] = int(m.group(1))
    if os.path.exists(os.path.join(d, "trace.dat")):
        # trace-cmd's own per-CPU counts, as its report prints them
        p = subprocess.run(["trace-cmd", "report", "--stat", os.path.join(d, "trace.dat")], capture_output=True,
                           text=True)
        out["trace-cmd"] = sum(int(n) for n in re.findall(r"^overrun: (\d+)", p.stdout, re.M)) + \
            sum(int(n) for n in re.findall(r"^dropped events: (\d+)", p.stdout, re.M))
    return out


def record(tree, flag, d):
    shutil.rmtree(d, ignore_errors=True)
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(tree, "build", "hourglass"), "record", "--dir", d, flag, "--", *WORK],
                       capture_output=True, text=True)
    t = time.monotonic() - t0
    if p.returncode:
        raise SystemExit(f"bench: {tree} record {flag} failed ({p.returncode}): {p.stderr[-2000:]}")
    return t, losses(d)


def main():
    if not BASE or not os.path.exists(os.path.join(BASE, "build", "hourglass")):
        raise SystemExit("bench: HGT_BENCH_BASELINE must name a tree with build/hourglass (see the header)")
    if not module_loaded():
        subprocess.run(["insmod", KO], check=True)
    os.makedirs(OUT, exist_ok=True)
    variants = {}
    for flag in ("--ftrace", "--ftrace-only"):
        for when, tree in (("before", BASE), ("after", TOP)):
            variants[f"{flag} {when}"] = (tree, flag)
    res = {k: {"s": [], "lost": []} for k in variants}
    for i in range(REPEATS):
        for name in (list(variants) if i % 2 == 0 else list(reversed(variants))):
            tree, flag = variants[name]
            t, lost = record(tree, flag, os.path.join(REC, name.replace(" ", "_").strip("-")))
            res[name]["s"].append(t)
            res[name]["lost"].append(lost)
        print(f"# repeat {i + 1}/{REPEATS}: " + ", ".join(f"{k} {v['s'][-1]:.1f} s" for k, v in res.items()),
              flush=True)
    med = {k: statistics.median(v["s"]) for k, v in res.items()}
    out = dict(kernel=os.uname().release, cpus=len(os.sched_getaffinity(0)), repeats=REPEATS, workload=WORK,
               baseline=BASE, times=res, median_s=med,
               ratio={f: med[f"{f} after"] / med[f"{f} before"] for f in ("--ftrace", "--ftrace-only")})
    with open(os.path.join(OUT, "results-record-wall.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"kernel {out['kernel']}, {out['cpus']} CPU(s); {REPEATS} interleaved repeats; "
          f"hourglass record --dir D FLAG -- {' '.join(WORK)}")
    print(f"{'variant':24s} {'wall s (median)':>16s}  events lost (each run)")
    for k, v in res.items():
        print(f"{k:24s} {med[k]:16.1f}  {v['lost']}")
    for f, r in out["ratio"].items():
        print(f"hourglass record {f}: after / before = {r:.3f}")


if __name__ == "__main__":
    sys.exit(main())
