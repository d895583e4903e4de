#!/usr/bin/env python3
"""bench/peers.py - hgtrace.ko beside trace-cmd and LTTng: cost, bytes, losses.

Run in a guest on the instruction-count clock (`make bench-icount` runs it
after bench/run.py's parts):
    scripts/vm --icount -k 6.1 -o out/bench-icount -- bench/peers.py
Every variant records the same tracepoints, the ones all three recorders
have: sched (switch, waking, wakeup, wakeup_new, migrate_task,
process_exit), irq and softirq entry and exit, hrtimer expiry entry and
exit (LTTng has no NMI probe and Debian's build of it no x86 vector probe:
bench/lttng.py). The workload is bench/run.py's pipe: perf bench sched pipe,
both tasks on one CPU, the same switches and wake-ups every round; each
variant's figure is its time per round. Variants, interleaved and repeated
(HGT_PEERS_REPEATS, default 3: on the instruction-count clock a variant's
repeats agree within 1%):

  none                nothing traced
  hgtrace stop        hgtrace record, stop mode (drops new events when full), its live reader
  hgtrace overwrite   the same in overwrite mode (the flight recorder)
  trace-cmd           trace-cmd record -C x86-tsc
  lttng discard       an LTTng kernel session, discard mode (drops new events when full)
  lttng overwrite     the same in overwrite mode (drops the oldest sub-buffer)
  hgtrace, no reader  stop mode into 64 MiB a CPU that the reader leaves alone until
                      the run is over (-b 65536 -i 10s): the probes and the store alone
  hgtrace, nothing stored  stop mode with the module's discard parameter set: the probes
                      run (stamp, filter, the records put together) and store nothing
  lttng, no reader    discard mode into 4 sub-buffers of 16 MiB a CPU: no sub-buffer
                      fills during the run, so the consumer has nothing to read until
                      `lttng stop`: LTTng's probes and store alone

HGT_PEERS_VARIANTS chooses variants by name, separated by ';' (the names hold
commas): HGT_PEERS_VARIANTS="hgtrace stop;hgtrace, no reader;hgtrace, nothing
stored". "none" is always measured, the baseline of every overhead. Without
an LTTng variant the script does not need LTTng, and ratios to a variant not
measured are left out.

hgtrace's and LTTng's buffers are 2 MiB a CPU (the module's default; LTTng
4 sub-buffers of 512 KiB), trace-cmd's HGT_BENCH_FTRACE_KB (bench/run.py).
For each: the overhead (median / median(none) - 1), its ratio to
trace-cmd's and to LTTng's in the same mode; events a run, as each
recorder's own reader counts them (hgtrace dump, trace-cmd report, babeltrace2);
events lost; bytes written (the .hgt plain and after `hgtrace pack`, the
trace.dat, every file of LTTng's CTF trace) and bytes an event.
The recorders write to the guest's tmpfs (/tmp/hg-peers; HGT_BENCH_REC_DIR
moves them). Writes results-peers.json beside bench/run.py's results. When LTTng cannot
record here the script says why and exits 3 (the other figures are
bench/run.py's).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import shutil
import statistics
import subprocess

# The recorders write to the guest's own tmpfs unless HGT_BENCH_REC_DIR says
# otherwise: through the 9p-shared output directory every byte costs copies a
# local disk does not, and LTTng's splice and hgtrace's write() would pay them
# differently, which is the share's cost, not the recorders'.
os.environ.setdefault("HGT_BENCH_REC_DIR", "/tmp/hg-peers")

import lttng  # noqa: E402  (bench/lttng.py: LTTng sessions)

REPEATS = int(os.environ.get("HGT_PEERS_REPEATS", "3"))
import run as hb  # noqa: E402  (bench/run.py: the workloads and the recorders' runs)
import harness  # noqa: E402  (tests/guest/harness.py, on the path run.py sets: what a healthy kernel never prints)

# the shared event set, as hgtrace's groups and as ftrace's events
HG_GROUPS = ",".join(lttng.GROUPS)
FTRACE_EVENTS = [e for e in hb.FTRACE_EVENTS if e not in ("irq_vectors:*", "nmi:nmi_handler")]
WORK = hb.PIPE_WORK


def run_hgtrace(i, mode, extra=()):
    path = os.path.join(hb.REC, f"peer-{mode}-{i}.hgt")
    p = hb.sh([hb.HGTRACE, "record", "-q", "-e", HG_GROUPS, "-m", mode, *extra, "-o", path, "--", *WORK[0]])
    n, lost = hb.counts(path)
    plain = os.path.getsize(path)
    hb.sh([hb.HGTRACE, "pack", path])          # in place, after the run: not in its time
    packed = os.path.getsize(path)
    os.remove(path)
    return WORK[1](p.stdout), dict(events=n, lost=lost, bytes=plain, packed_bytes=packed)


def run_ftrace(i):
    t, info = hb.run_ftrace(600 + i, work=WORK, events=FTRACE_EVENTS)
    return t, info


def run_lttng(i, overwrite, buffer_kb=2048):
    out = os.path.join(hb.REC, f"peer-lttng-{i}")
    shutil.rmtree(out, ignore_errors=True)
    stdout, lost, lost_packets = lttng.record(out, WORK[0], overwrite=overwrite, buffer_kb=buffer_kb)
    n, discarded = lttng.count_events(out)
    size = lttng.trace_bytes(out)
    shutil.rmtree(out)
    return WORK[1](stdout), dict(events=n, lost=lost + discarded if not overwrite else lost,
                                 lost_packets=lost_packets, bytes=size)


VARIANTS = {
    "none": lambda i: hb.run_none(i, work=WORK),
    "hgtrace stop": lambda i: run_hgtrace(i, "stop"),
    "hgtrace overwrite": lambda i: run_hgtrace(i, "overwrite"),
    "trace-cmd": run_ftrace,
    "lttng discard": lambda i: run_lttng(i, False),
    "lttng overwrite": lambda i: run_lttng(i, True),
    "hgtrace, no reader": lambda i: run_hgtrace(i, "stop", ("-b", "65536", "-i", "10s")),
    "hgtrace, nothing stored": lambda i: hb.run_discarding(700 + i, work=WORK, extra=("-e", HG_GROUPS)),
    "lttng, no reader": lambda i: run_lttng(i, False, buffer_kb=65536),
}
if os.environ.get("HGT_PEERS_VARIANTS"):
    _want = {"none"} | {w.strip() for w in os.environ["HGT_PEERS_VARIANTS"].split(";") if w.strip()}
    _unknown = _want - set(VARIANTS)
    if _unknown:
        sys.exit(f"bench/peers.py: HGT_PEERS_VARIANTS names no variant {sorted(_unknown)}; "
                 f"the variants: {'; '.join(VARIANTS)}")
    VARIANTS = {k: v for k, v in VARIANTS.items() if k in _want}
NEED_LTTNG = any(k.startswith("lttng") for k in VARIANTS)
# each hgtrace mode against LTTng's mode that drops the same way
SAME_MODE = {"hgtrace stop": "lttng discard", "hgtrace overwrite": "lttng overwrite",
             "hgtrace, no reader": "lttng, no reader"}
# the targets are the recorders as used: with their readers
TARGETS = ("hgtrace stop", "hgtrace overwrite")


def measure(repeats):
    times = {k: [] for k in VARIANTS}
    info = {k: [] for k in VARIANTS if k not in ("none", "hgtrace, nothing stored")}
    for i in range(repeats):
        for name in (list(VARIANTS) if i % 2 == 0 else list(reversed(VARIANTS))):
            t, x = VARIANTS[name](i)
            times[name].append(t)
            if x is not None:
                info[name].append(x)
        print(f"# repeat {i + 1}/{repeats}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in times.items()),
              flush=True)
    return times, info


def summarize(times, info):
    med = {k: statistics.median(v) for k, v in times.items()}
    over = {k: med[k] / med["none"] - 1 for k in times if k != "none"}
    rows = {}
    for k in over:
        if not info.get(k):     # timed only
            rows[k] = dict(median=med[k], overhead=over[k])
            if over.get("trace-cmd", 0) > 0:
                rows[k]["of_trace_cmd"] = over[k] / over["trace-cmd"]
            continue
        ev = statistics.median(x["events"] for x in info[k])
        by = statistics.median(x["bytes"] for x in info[k])
        row = dict(median=med[k], overhead=over[k], events=ev, lost=max(x["lost"] for x in info[k]),
                   bytes=by, bytes_per_event=by / ev if ev else None)
        if "packed_bytes" in info[k][0]:
            pk = statistics.median(x["packed_bytes"] for x in info[k])
            row.update(packed_bytes=pk, packed_per_event=pk / ev if ev else None)
        if "lost_packets" in info[k][0]:
            row["lost_packets"] = max(x["lost_packets"] for x in info[k])
        if over.get("trace-cmd", 0) > 0:
            row["of_trace_cmd"] = over[k] / over["trace-cmd"]
        if k in SAME_MODE and over.get(SAME_MODE[k], 0) > 0:
            row["of_lttng"] = over[k] / over[SAME_MODE[k]]
        rows[k] = row
    return med, rows


def print_table(res):
    print(f"{res['kernel']}, {'instruction-count clock' if res['icount'] else 'the host clock (noisy)'}, "
          f"lttng-modules {res['lttng_modules']}: {res['repeats']} interleaved repeats of "
          f"'{res['workload']}', events {res['events']}")
    print(f"  {'variant':24s} {'us/round':>9s} {'overhead':>9s} {'of tc':>6s} {'of lttng':>8s} "
          f"{'events':>8s} {'lost':>5s} {'bytes/ev':>8s} {'packed/ev':>9s}")
    print(f"  {'none':24s} {res['median']['none']:9.2f}")
    for k, r in res["rows"].items():
        f = lambda key, fmt: format(r[key], fmt) if r.get(key) is not None else "-".rjust(int(fmt.rstrip("dfs").split(".")[0]))
        print(f"  {k:24s} {r['median']:9.2f} {r['overhead'] * 100:+8.1f}% {f('of_trace_cmd', '6.2f')} "
              f"{f('of_lttng', '8.2f')} {f('events', '8.0f')} {f('lost', '5d')} {f('bytes_per_event', '8.2f')} "
              f"{f('packed_per_event', '9.2f')}")
    for k, r in res["rows"].items():
        if k in TARGETS and SAME_MODE[k] in res["rows"]:
            lt = res["rows"][SAME_MODE[k]]
            print(f"targets, {k}: {r.get('of_trace_cmd', float('nan')):.2f} of trace-cmd's cost (<= 0.33), "
                  f"{r.get('of_lttng', float('nan')):.2f} of LTTng's (<= 1); packed file "
                  f"{r['packed_per_event'] / lt['bytes_per_event']:.2f} of LTTng's CTF an event (<= 1)")


def main():
    why = lttng.available() if NEED_LTTNG else None
    if why:
        print(f"bench/peers.py: LTTng cannot record on {os.uname().release}: {why}", file=sys.stderr)
        sys.exit(3)
    os.makedirs(hb.OUT, exist_ok=True)
    os.makedirs(hb.REC, exist_ok=True)
    seen = len(harness.dmesg_lines())
    version = lttng.start_sessiond() if NEED_LTTNG else None
    subprocess.run(["insmod", hb.KO], check=True)
    try:
        times, info = measure(REPEATS)
    finally:
        unloaded = subprocess.run(["rmmod", "hgtrace"]).returncode == 0
        if NEED_LTTNG:
            lttng.stop_sessiond()
    # a benchmark that hurt the kernel has no figures worth keeping
    bad = [line for line in harness.dmesg_lines()[seen:] if harness.BAD_DMESG.search(line)]
    if bad or not unloaded:
        print("bench/peers.py: " + ("hgtrace.ko did not unload; " if not unloaded else "") +
              "the kernel complained:\n  " + "\n  ".join(bad[:20]), file=sys.stderr)
        sys.exit(1)
    med, rows = summarize(times, info)
    res = dict(kernel=os.uname().release, icount=hb.ICOUNT, lttng_modules=version, repeats=REPEATS,
               workload=" ".join(WORK[0]), events=HG_GROUPS, times=times, info=info, median=med, rows=rows)
    with open(os.path.join(hb.OUT, "results-peers.json"), "w") as f:
        json.dump(res, f, indent=1)
    print_table(res)


if __name__ == "__main__":
    main()
