#!/usr/bin/env python3
"""bench/overwrite_cost.py - the flight recorder's cost: overwrite mode against stop mode.

Run in a guest, on the instruction-count clock for figures the host's load
cannot move:
    scripts/vm --icount -k 6.1 -o out/bench-icount -- bench/overwrite_cost.py
Variants, interleaved and repeated (HGT_BENCH_REPEATS, default 11), on bench/run.py's
pipe workload (perf bench sched pipe, both tasks on one CPU):
  none             nothing traced
  stop             hgtrace record, stop mode, its live reader (2 MiB a CPU, every 100 ms)
  overwrite        the same in overwrite mode: the ring never fills, so this is
                   what overwriting costs when nothing is overwritten
  overwrite, full  overwrite mode as a flight recorder: a 64 KiB ring read only at
                   the end, so that nearly every write frees the oldest record
  ftrace           trace-cmd record on the same tracepoints
Prints each variant's overhead (median / median(none) - 1) and its ratio to
trace-cmd's; writes results-overwrite.json beside bench/run.py's results.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import statistics

import run as hb  # noqa: E402  (bench/run.py: the workloads and the recorders' runs)


def main():
    os.makedirs(hb.OUT, exist_ok=True)
    os.makedirs(hb.REC, exist_ok=True)
    work = hb.PIPE_WORK
    variants = {
        "none": lambda i: hb.run_none(i, work=work),
        "stop": lambda i: hb.run_module(i, work=work),
        "overwrite": lambda i: hb.run_module(100 + i, ("-m", "overwrite"), work=work),
        "overwrite, full": lambda i: hb.run_module(200 + i, ("-m", "overwrite", "-b", "64", "-i", "10s"),
                                                   work=work),
        "ftrace": lambda i: hb.run_ftrace(i, work=work),
    }
    hb.subprocess.run(["insmod", hb.KO], check=True)
    times = {k: [] for k in variants}
    info = {k: [] for k in variants}
    try:
        for i in range(hb.REPEATS):
            for name in (list(variants) if i % 2 == 0 else list(reversed(variants))):
                t, x = variants[name](i)
                times[name].append(t)
                info[name].append(x)
                # only the flight recorder may lose (it overwrites by design)
                if x and x["lost"] and name != "overwrite, full":
                    raise SystemExit(f"bench: {name} lost {x['lost']} events; its figure would be wrong")
            print(f"# repeat {i + 1}/{hb.REPEATS}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in times.items()),
                  flush=True)
    finally:
        hb.subprocess.run(["rmmod", "hgtrace"])
    med = {k: statistics.median(v) for k, v in times.items()}
    over = {k: med[k] / med["none"] - 1 for k in variants if k != "none"}
    res = dict(kernel=os.uname().release, icount=hb.ICOUNT, repeats=hb.REPEATS, workload=" ".join(work[0]),
               times=times, median=med, overhead=over,
               lost_full=statistics.median(x["lost"] for x in info["overwrite, full"]),
               events_full=statistics.median(x["events"] for x in info["overwrite, full"]))
    with open(os.path.join(hb.OUT, "results-overwrite.json"), "w") as f:
        json.dump(res, f, indent=1)
    clock = "instruction-count clock" if hb.ICOUNT else "the host's clock (noisy)"
    print(f"{res['kernel']}, {clock}: {hb.REPEATS} interleaved repeats of '{res['workload']}' (us/round)")
    for k in variants:
        line = f"  {k:16s} {med[k]:8.2f}"
        if k != "none":
            line += f"  {over[k] * 100:+6.1f}%"
            if k != "ftrace" and over["ftrace"] > 0:
                line += f"  {over[k] / over['ftrace']:.2f} of trace-cmd's"
        print(line)
    print(f"  the full flight recorder kept {res['events_full']:.0f} records a run and overwrote "
          f"{res['lost_full']:.0f}")
    if over["stop"] > 0:
        print(f"overwrite against stop: {over['overwrite'] / over['stop']:.2f} (ring not full), "
              f"{over['overwrite, full'] / over['stop']:.2f} (full, every write frees the oldest record)")


if __name__ == "__main__":
    main()
