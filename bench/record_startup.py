#!/usr/bin/env python3
"""bench/record_startup.py - `hourglass record --ftrace-only` against `trace-cmd record` of the same
events around the same hourglass command: the whole command's wall time, as a ratio.

Run in a guest (2 vCPUs, plain TCG, as the guest tests run it):

    flock /tmp/hg-guest.lock scripts/vm -k 6.1 -o out/bench-startup -- bench/record_startup.py

and beside the code it replaced, a tree of it built under out/ (the guest sees the
tree; the settings go in through env, as scripts/vm passes no others in):

    git archive HEAD | tar -x -C out/startup-base && make -C out/startup-base -s us-hourglass us-ftrace
    flock /tmp/hg-guest.lock scripts/vm -k 6.1 -o out/bench-startup -- \\
        env HGT_BENCH_BASELINE=$PWD/out/startup-base bench/record_startup.py

Variants, interleaved (in reverse order every other repeat) and repeated
(HGT_BENCH_REPEATS, default 11), after one warm-up round that is kept apart
(HGT_BENCH_WARMUP=0: none); each is the command a user types, timed from
its start to its exit, writing into a fresh directory under OUT (the guest's
writable, 9p-shared out directory, where hourglass record writes in the
guest tests):

  hourglass record     build/hourglass record --ftrace-only --dir D -- WORK
  trace-cmd record     trace-cmd record -C x86-tsc -b KB -e E... -o D/trace.dat -- build/hourglass WORK
                       --trace D/hourglass.hgl --json D/hourglass.json -o D/hourglass.txt
                       (the hourglass command hourglass record runs, with the same three files)
  baseline             HGT_BENCH_BASELINE=TREE: TREE's build/hourglass record, as the first
                       (its own hgtrace-ftrace and Python package), TREE built as above

WORK is HGT_BENCH_WORK (default "-n 1 -d 2s -t 0 -p RTHIGH -w CPU --affinity 1", issue 37's
run). The events E are hgtrace-ftrace's default set, read from its table
(userspace/ftrace/evmap.c: every group but syscalls, 31 events on 6.1), less
any this kernel lacks; KB is hgtrace-ftrace's default buffer (2048 KiB a CPU).
Both use the x86-tsc clock, so both set up, record and write the same events.

Printed: each variant's median wall time and where it went, from the run's
own stamps: "before" is from the start to hourglass's first measured
instant (hourglass.json's t0_monotonic_ns; it includes hourglass's own
100 ms calibration, the same in every variant), "run" hourglass's measured
run, "after" from its end to the command's exit. For hourglass record,
"python" is from the start until record.json's start_unix (the interpreter,
its imports and hourglass --dry-run), and the recorder's own "after the
run" times from hgtrace-ftrace.log. Then the ratio of the medians,
hourglass record / trace-cmd record (target: at most 1.0), and the median of
the per-repeat ratios. Results go to OUT/results-record-startup.json. No
timing is asserted anywhere: timings under emulation swing with the host's
load; the ratio, measured within one boot, is the figure.
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
OUT = os.environ.get("HGT_OUT", "/tmp/bench")
BASE = os.environ.get("HGT_BENCH_BASELINE", "")
REPEATS = int(os.environ.get("HGT_BENCH_REPEATS", "11"))
WARMUP = int(os.environ.get("HGT_BENCH_WARMUP", "1"))
WORK = os.environ.get("HGT_BENCH_WORK", "-n 1 -d 2s -t 0 -p RTHIGH -w CPU --affinity 1").split()
BUFFER_KB = "2048"      # hgtrace-ftrace's default -b (FT_BUFFER_KB_DEFAULT)
TRACEFS = "/sys/kernel/tracing"
AFTER_RUN = re.compile(r"^hgtrace-ftrace: after the run: last drain ([0-9.]+) s, conversion ([0-9.]+) s", re.M)


def default_events():
    """hgtrace-ftrace's default events, as system:event, from its table (evmap.c): every
    group but syscalls, the VEC() lines each an _entry and an _exit of irq_vectors."""
    with open(os.path.join(TOP, "userspace", "ftrace", "evmap.c")) as f:
        src = f.read()
    table = src[src.index("static const struct entry table[]"):]
    table = table[:table.index("};")]
    events = []
    for m in re.finditer(r'\{ \{ "(\w+)", "(\w+)", (HGT_EV_\w+) \}|VEC\((\w+),', table):
        if m.group(4):
            events += [f"irq_vectors:{m.group(4)}_entry", f"irq_vectors:{m.group(4)}_exit"]
        elif m.group(3) != "HGT_EV_SYSCALLS":
            events.append(f"{m.group(1)}:{m.group(2)}")
    if len(events) < 20:
        raise SystemExit(f"bench: read only {len(events)} events from evmap.c's table: has its form changed?")
    return events


def present(events):
    """Those this kernel has (hgtrace-ftrace leaves the others out too, saying so)."""
    have = [e for e in events if os.path.exists(os.path.join(TRACEFS, "events", *e.split(":"), "format"))]
    for e in sorted(set(events) - set(have)):
        print(f"bench: this kernel has no {e}: neither recorder records it", file=sys.stderr)
    return have


def stamps(d, t0_ns, t1_ns, mono_minus_unix_ns):
    """Where the wall time went, in seconds, from the run directory's own stamps."""
    with open(os.path.join(d, "hourglass.json")) as f:
        hg = json.load(f)
    start, run = hg["t0_monotonic_ns"], hg["duration_ns"]
    out = dict(wall=(t1_ns - t0_ns) / 1e9, before=(start - t0_ns) / 1e9, run=run / 1e9,
               after=(t1_ns - start - run) / 1e9)
    rec = os.path.join(d, "record.json")
    if os.path.exists(rec):
        with open(rec) as f:
            meta = json.load(f)
        out["python"] = (meta["start_unix"] * 1e9 + mono_minus_unix_ns - t0_ns) / 1e9
        out["lost"] = meta.get("ftrace_lost")
        with open(os.path.join(d, "hgtrace-ftrace.log"), errors="replace") as f:
            m = AFTER_RUN.search(f.read())
        if m:
            out["last_drain"], out["conversion"] = float(m.group(1)), float(m.group(2))
    return out


def timed(argv, d):
    """Run @argv (which writes into @d), timed; what stamps() makes of it."""
    mono_minus_unix = time.monotonic_ns() - time.time_ns()
    t0 = time.monotonic_ns()
    p = subprocess.run(argv, capture_output=True, text=True)
    t1 = time.monotonic_ns()
    if p.returncode:
        raise SystemExit(f"bench: {' '.join(argv[:4])} ... failed ({p.returncode}): {p.stderr[-2000:]}")
    return stamps(d, t0, t1, mono_minus_unix)


def variants(events):
    hourglass = os.path.join(TOP, "build", "hourglass")
    root = os.path.join(OUT, "startup")

    def record(tree, name):
        d = os.path.join(root, name)

        def run():
            shutil.rmtree(d, ignore_errors=True)
            return timed([os.path.join(tree, "build", "hourglass"), "record", "--ftrace-only", "--dir", d,
                          "--", *WORK], d)
        return run

    def trace_cmd():
        d = os.path.join(root, "trace-cmd")
        argv = ["trace-cmd", "record", "-C", "x86-tsc", "-b", BUFFER_KB]
        for e in events:
            argv += ["-e", e]
        argv += ["-o", os.path.join(d, "trace.dat"), "--", hourglass, *WORK, "--trace",
                 os.path.join(d, "hourglass.hgl"), "--json", os.path.join(d, "hourglass.json"),
                 "-o", os.path.join(d, "hourglass.txt")]

        def run():
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            return timed(argv, d)
        return run
    v = {"hourglass record": record(TOP, "record"), "trace-cmd record": trace_cmd()}
    if BASE:
        if not os.path.exists(os.path.join(BASE, "build", "hourglass")):
            raise SystemExit(f"bench: HGT_BENCH_BASELINE={BASE} has no build/hourglass (see the header)")
        v["baseline"] = record(BASE, "baseline")
    return v


def rounds(v, n, label):
    res = {k: [] for k in v}
    for i in range(n):
        for name in (list(v) if i % 2 == 0 else list(reversed(v))):
            res[name].append(v[name]())
        print(f"# {label} {i + 1}/{n}: " + ", ".join(f"{k} {r[-1]['wall']:.2f} s" for k, r in res.items()),
              flush=True)
    return res


def main():
    if os.geteuid():
        raise SystemExit("bench: run as root, in a guest (see the header)")
    events = present(default_events())
    v = variants(events)
    warm = rounds(v, WARMUP, "warm-up") if WARMUP else {}
    res = rounds(v, REPEATS, "repeat")
    keys = ("wall", "before", "run", "after", "python", "last_drain", "conversion")
    med = {k: {m: statistics.median(x[m] for x in r) for m in keys if all(m in x for x in r)}
           for k, r in res.items()}
    walls = {k: [x["wall"] for x in r] for k, r in res.items()}
    ratio = med["hourglass record"]["wall"] / med["trace-cmd record"]["wall"]
    paired = statistics.median(a / b for a, b in zip(walls["hourglass record"], walls["trace-cmd record"]))
    out = dict(kernel=os.uname().release, cpus=len(os.sched_getaffinity(0)),
               icount=os.environ.get("HGT_VM_ICOUNT") == "1", date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               repeats=REPEATS, warmup=WARMUP, workload=WORK, events=events, buffer_kb=int(BUFFER_KB),
               baseline=BASE or None, runs=res, warmup_runs=warm, median=med, ratio=ratio, paired_ratio=paired)
    if BASE:
        out["baseline_ratio"] = med["baseline"]["wall"] / med["trace-cmd record"]["wall"]
        out["baseline_paired_ratio"] = statistics.median(
            a / b for a, b in zip(walls["baseline"], walls["trace-cmd record"]))
    with open(os.path.join(OUT, "results-record-startup.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"kernel {out['kernel']}, {out['cpus']} CPU(s), " +
          ("the instruction-count clock" if out["icount"] else "plain TCG: the host's clock") +
          f"; {REPEATS} interleaved repeats after {WARMUP} warm-up round(s), medians; "
          f"hourglass {' '.join(WORK)}; {len(events)} events, x86-tsc, {BUFFER_KB} KiB a CPU")
    print(f"{'variant':18s} {'wall s':>7s} {'before':>7s} {'run':>6s} {'after':>6s} {'python':>7s}  "
          "(hgtrace-ftrace after the run: drain, conversion)")
    for k, m in med.items():
        extra = f"  ({m['last_drain']:.3f}, {m['conversion']:.3f})" if "conversion" in m else ""
        py = f"{m['python']:7.2f}" if "python" in m else f"{'':7s}"
        print(f"{k:18s} {m['wall']:7.2f} {m['before']:7.2f} {m['run']:6.2f} {m['after']:6.2f} {py}{extra}")
    lost = [x.get("lost") for x in res["hourglass record"] if x.get("lost")]
    if lost:
        print(f"bench: hgtrace-ftrace lost events in {len(lost)} run(s): {lost}")
    print(f"hourglass record / trace-cmd record: {ratio:.3f} (target <= 1.0), per repeat {paired:.3f} at the median")
    if BASE:
        print(f"baseline ({BASE}) / trace-cmd record: {out['baseline_ratio']:.3f}, "
              f"per repeat {out['baseline_paired_ratio']:.3f}")


if __name__ == "__main__":
    main()
