#!/usr/bin/env python3
"""bench/ftrace_start.py - how long a module-less recording takes to start, and to finish.

Run in a guest, as `hourglass record --ftrace-only` runs there:

    flock /tmp/hg-guest.lock scripts/vm -k 6.1 -o out/bench-ftrace -- bench/ftrace_start.py

Start-up is the time from starting the recorder to the first instruction of
the recorded command: the command is bench/stamp.c, which prints
CLOCK_MONOTONIC as the first thing it does (the clock is the same in every
process), and the script notes CLOCK_MONOTONIC just before it starts the
recorder. The command then sleeps 4 s, and "total" runs until the recorder
has exited with its file written (a 4 s run, as the issue's 40 s figure).

Variants, interleaved and repeated (HGT_BENCH_REPEATS, default 5):
  trace-cmd, as hourglass record   the --ftrace-only path before hgtrace-ftrace (its
                                   tools/hgtools/record.py until 2026-11): trace-cmd record
                                   in the background, its log polled every 0.1 s for
                                   "Hit Ctrl^C", then the command; SIGINT to trace-cmd
                                   once it is over
  trace-cmd record -- CMD          trace-cmd starting the command itself
  hgtrace-ftrace                   hgtrace-ftrace record -- CMD
All record the same events (the list hourglass record gave trace-cmd, the
module's default set) with the x86-tsc clock. Medians and ratios are printed;
results go to OUT/results-ftrace-start.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import signal
import statistics
import subprocess
import time

TOP = os.environ.get("HGT_TOP", os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
OUT = os.environ.get("HGT_OUT", "/tmp/bench")
REC = os.environ.get("HGT_BENCH_REC_DIR", "/tmp/hg-bench")
REPEATS = int(os.environ.get("HGT_BENCH_REPEATS", "5"))
RUN_S = float(os.environ.get("HGT_BENCH_RUN_S", "4"))
FTRACE = os.path.join(TOP, "build", "hgtrace-ftrace")
STAMP = os.path.join(TOP, "build", "bench", "stamp")
# what hourglass record gave trace-cmd before it ran hgtrace-ftrace
FTRACE_EVENTS = ["sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup",
                 "sched:sched_migrate_task", "sched:sched_process_exit", "irq:irq_handler_entry",
                 "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit", "irq_vectors:*",
                 "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit"]


def build_stamp():
    src = os.path.join(TOP, "bench", "stamp.c")
    if not os.path.exists(STAMP) or os.path.getmtime(STAMP) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(STAMP), exist_ok=True)
        subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", STAMP, src], check=True)


def tc_args(path):
    args = ["trace-cmd", "record", "-C", "x86-tsc", "-o", path]
    for e in FTRACE_EVENTS:
        args += ["-e", e]
    return args


def first_instruction(stdout):
    lines = [l for l in stdout.splitlines() if l.strip().isdigit()]
    if not lines:
        raise SystemExit(f"bench: the command's stamp is missing from: {stdout[-500:]}")
    return int(lines[0])


def run_direct(argv):
    """A recorder that starts the command itself: (start-up s, total s)."""
    t0 = time.monotonic_ns()
    p = subprocess.run(argv, capture_output=True, text=True)
    t1 = time.monotonic_ns()
    if p.returncode:
        raise SystemExit(f"bench: {argv[:3]} failed ({p.returncode}): {p.stderr[-1500:]}")
    return (first_instruction(p.stdout) - t0) / 1e9, (t1 - t0) / 1e9


def run_as_hourglass_record(path):
    """trace-cmd started and watched as tools/hgtools/record.py does today."""
    log = path + ".log"
    t0 = time.monotonic_ns()
    with open(log, "w") as lf:
        tc = subprocess.Popen(tc_args(path), stdout=lf, stderr=subprocess.STDOUT)
    for _ in range(3000):
        time.sleep(0.1)
        if tc.poll() is not None or "Hit Ctrl^C" in open(log).read():
            break
    if tc.poll() is not None:
        raise SystemExit(f"bench: trace-cmd did not start: {open(log).read()[-800:]}")
    p = subprocess.run([STAMP, str(RUN_S)], capture_output=True, text=True)
    tc.send_signal(signal.SIGINT)
    tc.wait(timeout=1800)
    t1 = time.monotonic_ns()
    os.remove(log)
    return (first_instruction(p.stdout) - t0) / 1e9, (t1 - t0) / 1e9


def main():
    build_stamp()
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(REC, exist_ok=True)
    dat, hgt = os.path.join(REC, "start.dat"), os.path.join(REC, "start.hgt")
    variants = {
        "trace-cmd, as hourglass record": lambda: run_as_hourglass_record(dat),
        "trace-cmd record -- CMD": lambda: run_direct(tc_args(dat) + [STAMP, str(RUN_S)]),
        "hgtrace-ftrace": lambda: run_direct([FTRACE, "record", "-q", "-o", hgt, "--", STAMP, str(RUN_S)]),
    }
    res = {k: {"start": [], "total": []} for k in variants}
    for i in range(REPEATS):
        for name in (list(variants) if i % 2 == 0 else list(reversed(variants))):
            s, t = variants[name]()
            res[name]["start"].append(s)
            res[name]["total"].append(t)
            for f in (dat, hgt):
                if os.path.exists(f):
                    os.remove(f)
        print(f"# repeat {i + 1}/{REPEATS}: " + ", ".join(
            f"{k} {v['start'][-1]:.2f}/{v['total'][-1]:.2f} s" for k, v in res.items()), flush=True)
    med = {k: {m: statistics.median(v[m]) for m in ("start", "total")} for k, v in res.items()}
    out = dict(kernel=os.uname().release, cpus=len(os.sched_getaffinity(0)),
               icount=os.environ.get("HGT_VM_ICOUNT") == "1", repeats=REPEATS, run_s=RUN_S, times=res, median=med)
    with open(os.path.join(OUT, "results-ftrace-start.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"kernel {out['kernel']}, {out['cpus']} CPU(s)" + (", instruction-count clock" if out["icount"] else "")
          + f"; {REPEATS} interleaved repeats; the command runs {RUN_S:g} s")
    print(f"{'variant':32s} {'start-up s':>11s} {'total s':>9s}")
    for k, v in med.items():
        print(f"{k:32s} {v['start']:11.2f} {v['total']:9.2f}")
    ft = med["hgtrace-ftrace"]
    for base in ("trace-cmd, as hourglass record", "trace-cmd record -- CMD"):
        print(f"hgtrace-ftrace / {base}: start-up {ft['start'] / med[base]['start']:.3f} (target <= 0.25), "
              f"total {ft['total'] / med[base]['total']:.3f}")


if __name__ == "__main__":
    main()
