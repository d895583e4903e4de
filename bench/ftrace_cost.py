#!/usr/bin/env python3
"""bench/ftrace_cost.py - what hgtrace-ftrace costs a workload, against trace-cmd recording the same events.

Run on the instruction-count clock, as the module's cost is measured (make bench-icount):

    flock /tmp/hg-guest.lock scripts/vm --icount -k 6.1 -o out/bench-ftrace -- bench/ftrace_cost.py

The workload is bench/run.py's pipe ping-pong (perf bench sched pipe, both
tasks pinned to one CPU): the same switches and wake-ups every round. Its
own time per round is read from its output; overhead = median(traced) /
median(untraced) - 1, and each recorder's overhead is divided by trace-cmd's
(the target is <= 1). trace-cmd runs exactly as in bench/run.py (x86-tsc,
the module's default tracepoints, -b 20000); hgtrace-ftrace records the same
tracepoints with the same buffer size, with each of its readers:

  hgtrace-ftrace           pages read on its timer once a CPU's buffer is half full (--drain-at
                           50, the default, as trace-cmd's buffer_percent), converted after
                           the command
  hgtrace-ftrace --drain-at 0   pages read at every look of its timer (100 ms), whatever
                           the buffer holds: the default until 2026-11-26
  hgtrace-ftrace -i 10s    its timer longer than the run: pages read after it
  hgtrace-ftrace live      the same pages, converted at every drain
  hgtrace-ftrace iterate   tracefs_iterate_raw_events() at every drain
  hgtrace.ko               the module, for scale
  no reader                the floor of any ftrace recorder: the same events enabled, the
                           same clock and buffer size, in an instance of this script's own,
                           and nothing read or woken during the run (no recorder process)
  no reader + waiter       the same, with a process waiting in poll() on each CPU's
                           trace_pipe_raw for buffer_percent, as trace-cmd's readers wait in
                           splice() and hgtrace-ftrace in ppoll(): while a reader waits, the
                           kernel's commit returns sooner (docs/hgtrace-ftrace.md)

Variants run in turn, in reverse order every other repeat (HGT_BENCH_REPEATS,
default 11); one that lost events stops the benchmark. HGT_BENCH_VARIANTS
(a comma-separated list of the names above) runs some of them; the
untraced run and trace-cmd always run. HGT_BENCH_FTRACE_BIN runs another
hgtrace-ftrace binary (an older build, to compare); bench/run.py's
environment (HGT_BENCH_FTRACE_KB) applies. The cost of a
recorded event is a run's extra time over the untraced median, divided by
the events the recorder kept (ns on the instruction-count clock: 8 ns an
instruction), and compared with the module's. Results go to
OUT/results-ftrace-cost.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import re
import statistics
import subprocess

TOP = os.environ.get("HGT_TOP", os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
sys.path.insert(0, os.path.join(TOP, "bench"))
import run as base  # noqa: E402  (bench/run.py: the workloads, trace-cmd's and the module's runs)

FTRACE = os.environ.get("HGT_BENCH_FTRACE_BIN", os.path.join(TOP, "build", "hgtrace-ftrace"))
SUMMARY = re.compile(r"hgtrace-ftrace: (\d+) records, (\d+) events lost")
READS = re.compile(r"hgtrace-ftrace: (\d+) pages read while recording .*; (\d+) looks")


def run_hgtrace_ftrace(i, reader, work=base.PIPE_WORK, extra=()):
    path = os.path.join(base.REC, f"ftcost-{i}.hgt")
    p = base.sh([FTRACE, "record", "--reader", reader, "-b", base.FTRACE_KB, *extra, "-o", path, "--", *work[0]])
    m = SUMMARY.search(p.stderr)
    if not m:
        raise SystemExit(f"bench: no summary from hgtrace-ftrace: {p.stderr[-1500:]}")
    size = os.path.getsize(path)
    os.remove(path)
    info = dict(events=int(m.group(1)), lost=int(m.group(2)), bytes=size)
    r = READS.search(p.stderr)
    if r:   # the pages reader: what it read while recording (tracing on), and how often it looked
        info.update(pages_during=int(r.group(1)), looks=int(r.group(2)))
    return work[1](p.stdout), info


# the waiter of "no reader + waiter": polls each CPU's trace_pipe_raw, as a reader
# that the kernel wakes at buffer_percent would, and reads nothing; says how many woke
WAITER = """
import os, select, sys
p = select.poll(); fds = {}
for cpu in os.listdir(sys.argv[1]):
    fd = os.open(os.path.join(sys.argv[1], cpu, "trace_pipe_raw"), os.O_RDONLY | os.O_NONBLOCK)
    fds[fd] = cpu; p.register(fd, select.POLLIN)
print("ready", flush=True)
while fds:
    for fd, _ in p.poll(600000):
        print(fds.pop(fd), flush=True); p.unregister(fd)
"""


def run_no_reader(i, work=base.PIPE_WORK, waiter=False):
    """The events on in a fresh instance, by writing its files, and nothing else while
    the workload runs; its events are counted from the CPUs' stats, then the instance
    is removed. With @waiter, a process waits in poll() on each CPU's trace_pipe_raw
    (and reads nothing), as a reader woken at buffer_percent would."""
    inst = f"/sys/kernel/tracing/instances/hg-bench-{os.getpid()}"

    def put(name, value):
        with open(os.path.join(inst, name), "w") as f:
            f.write(value)
    os.mkdir(inst)
    try:
        put("tracing_on", "0")
        put("trace_clock", "x86-tsc")
        put("buffer_size_kb", base.FTRACE_KB)
        for ev in base.FTRACE_EVENTS:
            system, name = ev.split(":")
            put(f"events/{system}/enable" if name == "*" else f"events/{system}/{name}/enable", "1")
        w = None
        if waiter:
            w = subprocess.Popen([sys.executable, "-c", WAITER, os.path.join(inst, "per_cpu")],
                                 stdout=subprocess.PIPE, text=True)
            w.stdout.readline()
        put("tracing_on", "1")
        out = base.sh(work[0]).stdout
        put("tracing_on", "0")
        woke = None
        if w:
            w.kill()
            woke = len(w.communicate()[0].split())
            print(f"bench: no reader + waiter: the waiter saw {woke} CPU(s) pass buffer_percent",
                  file=sys.stderr)
        n = lost = 0
        for cpu in os.listdir(os.path.join(inst, "per_cpu")):
            with open(os.path.join(inst, "per_cpu", cpu, "stats")) as f:
                st = f.read()
            n += int(re.search(r"entries: (\d+)", st).group(1))
            lost += int(re.search(r"overrun: (\d+)", st).group(1))
        put("events/enable", "0")
    finally:
        os.rmdir(inst)
    return work[1](out), dict(events=n, lost=lost, **({"waiter_woke": woke} if waiter else {}))


def main():
    os.makedirs(base.OUT, exist_ok=True)
    os.makedirs(base.REC, exist_ok=True)
    work = base.PIPE_WORK
    variants = {"none": lambda i: base.run_none(i, work=work),
                "trace-cmd": lambda i: base.run_ftrace(i, work=work),
                "hgtrace-ftrace": lambda i: run_hgtrace_ftrace(i, "pages"),
                "hgtrace-ftrace --drain-at 0": lambda i: run_hgtrace_ftrace(400 + i, "pages",
                                                                    extra=("--drain-at", "0")),
                "hgtrace-ftrace -i 10s": lambda i: run_hgtrace_ftrace(300 + i, "pages", extra=("-i", "10s")),
                "hgtrace-ftrace live": lambda i: run_hgtrace_ftrace(100 + i, "live"),
                "hgtrace-ftrace iterate": lambda i: run_hgtrace_ftrace(200 + i, "iterate"),
                "hgtrace.ko": lambda i: base.run_module(i, work=work),
                "no reader": lambda i: run_no_reader(i, work=work),
                "no reader + waiter": lambda i: run_no_reader(i, work=work, waiter=True)}
    chosen = os.environ.get("HGT_BENCH_VARIANTS")
    if chosen:
        names = [n.strip() for n in chosen.split(",") if n.strip()]
        unknown = [n for n in names if n not in variants]
        if unknown:
            raise SystemExit(f"bench: HGT_BENCH_VARIANTS: no variant {', '.join(unknown)} "
                             f"(known: {', '.join(k for k in variants if k not in ('none', 'trace-cmd'))})")
        variants = {k: v for k, v in variants.items() if k in ("none", "trace-cmd") or k in names}
    # each recorder's events per run, for its cost per event
    events = {k: [] for k in variants if k != "none"}
    reads = {}      # the pages reader's (pages read while recording, looks) per run

    def counted(name, fn):
        def run(i):
            t, info = fn(i)
            events[name].append(info["events"])
            if "looks" in info:
                reads.setdefault(name, []).append((info["pages_during"], info["looks"]))
            return t, info
        return run
    variants = {k: (counted(k, v) if k != "none" else v) for k, v in variants.items()}
    subprocess.run(["insmod", base.KO], check=True)
    try:
        times = base.interleaved(variants, base.REPEATS, "the comparison")
    finally:
        subprocess.run(["rmmod", "hgtrace"])
    med = {k: statistics.median(v) for k, v in times.items()}
    over = {k: med[k] / med["none"] - 1 for k in variants if k != "none"}
    # per repeat, the recorders ran next to each other: the paired ratio is less noisy
    paired = {k: statistics.median((t - n) / (f - n) for t, f, n in zip(times[k], times["trace-cmd"], times["none"]))
              for k in variants if k not in ("none", "trace-cmd")}
    # what a recorded event costs the workload: the extra time of a run over its events
    loops = int(work[0][work[0].index("-l") + 1])
    per_event = {k: (med[k] - med["none"]) * 1000 * loops / statistics.median(events[k]) for k in events}
    res = dict(kernel=os.uname().release, cpus=len(os.sched_getaffinity(0)), icount=base.ICOUNT,
               repeats=base.REPEATS, workload=" ".join(work[0]), times=times, median=med, overhead=over,
               ratio_to_trace_cmd={k: over[k] / over["trace-cmd"] for k in over if k != "trace-cmd"},
               paired_ratio_to_trace_cmd=paired, events=events, ns_per_event=per_event,
               pages_during_and_looks=reads,
               per_event_ratio_to_module={k: per_event[k] / per_event["hgtrace.ko"] for k in per_event}
               if "hgtrace.ko" in per_event else {})
    with open(os.path.join(base.OUT, "results-ftrace-cost.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"kernel {res['kernel']}, {res['cpus']} CPU(s), " +
          ("instruction-count clock: times count instructions" if base.ICOUNT else
           "the host's clock: times swing with the host's load") +
          f"; {base.REPEATS} interleaved repeats of '{res['workload']}'")
    for k in variants:
        print(f"{k:24s} median {med[k]:8.3f} usecs/op" + (f", overhead {over[k] * 100:6.1f}%" if k != "none" else ""))
    for k, r in res["ratio_to_trace_cmd"].items():
        print(f"{k:24s} cost / trace-cmd's: {r:.3f} (paired per repeat: {paired[k]:.3f}); target <= 1")
    for k, v in reads.items():
        print(f"{k:24s} per run (usecs/op, pages read while recording, looks): " +
              ", ".join(f"({t:.2f}, {p}, {n})" for t, (p, n) in zip(times[k], v)))
    for k, c in per_event.items():
        ratio = res["per_event_ratio_to_module"].get(k)
        print(f"{k:24s} {c:7.0f} ns a recorded event ({statistics.median(events[k]):.0f} events a run)" +
              (f", {ratio:.2f} x the module's" if ratio is not None else ""))


if __name__ == "__main__":
    main()
