#!/usr/bin/env python3
"""bench/run.py - the recorder's cost, size and throughput, as ratios within one guest run.

Run in a guest: `make bench` (= scripts/vm -k 6.1 -o out/bench -- bench/run.py),
or one part: `scripts/vm -k 6.1 -o out/bench -- bench/run.py size`.
Writes out/bench/results.json and prints a table. Variants are interleaved and
repeated (default 11 times); medians and ratios are reported, never one
absolute time, because timings in an emulated guest swing by 2x.

Under `scripts/vm --icount` (`make bench-icount`: parts pipe and store) the
guest's clock counts instructions, 8 ns each, so the times no longer move
with the host's load: repeats agree within a fraction of a percent. The
guest then has one CPU, the reader shares it with the workload, and every
instruction costs the same (no caches): a count of work, not a timing.

  cost        hackbench's own time with nothing, with hgtrace.ko recording its
              default event set, and with trace-cmd recording the same
              tracepoints (x86-tsc clock); overhead = median / median(none) - 1
  size        bytes per event of the .hgt file and of trace-cmd's trace.dat for
              the same workload (whole files, and trace.dat's event pages alone),
              plain and compressed; event counts from trace-cmd's own --stat;
              then both recording one run at once (the same events in both files)
  split       (run on demand) the probes' cost alone against probes + reader
  pipe        (run on demand) the same variants on perf bench sched pipe, both
              tasks pinned to CPU 1: the same events every round, less noise
  store       (run on demand) the module's two modes on its one ring, stop
              when full against overwrite (the flight recorder), on the pipe
              workload (overwrite used the kernel's ring buffer until 87392ff)
  throughput  how fast the recorder drains a full buffer (events/s), and the
              highest per-CPU rate the live recorder kept with zero loss

Environment: HGT_BENCH_REPEATS (11) repeats of the timed parts;
HGT_BENCH_SIZE_REPEATS (3) runs of each variant in size; HGT_BENCH_REC_DIR
(the output directory) where both recorders write while measured, e.g. the
guest's tmpfs instead of the 9p-shared output directory;
HGT_BENCH_FTRACE_KB (20000) the ftrace recorders' buffer per CPU.
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
sys.path.insert(0, os.path.join(TOP, "tools"))
sys.path.insert(0, os.path.join(TOP, "tests", "guest"))
sys.path.insert(0, os.path.join(TOP, "tests"))
from hgtools.recordings import read_hgt  # noqa: E402  (the library's reader, through hgtrace dump)

OUT = os.environ.get("HGT_OUT", "/tmp/bench")
# where the recorders write while measured (default OUT). In a guest OUT is the
# host's directory shared over 9p, whose writes cost extra copies a local disk
# does not; HGT_BENCH_REC_DIR=/tmp/rec puts both recorders on the guest's tmpfs.
REC = os.environ.get("HGT_BENCH_REC_DIR", OUT)
KO = os.environ["HGT_KO"]
HGTRACE = os.path.join(TOP, "build", "hgtrace")
REPEATS = int(os.environ.get("HGT_BENCH_REPEATS", "11"))
# runs of each variant in the size part (each run records about 250 k events)
SIZE_REPEATS = int(os.environ.get("HGT_BENCH_SIZE_REPEATS", "3"))
ICOUNT = os.environ.get("HGT_VM_ICOUNT") == "1"
# the ftrace recorders' buffer per CPU, KiB (trace-cmd's -b, and hgtrace-ftrace's in ftrace_cost.py)
FTRACE_KB = os.environ.get("HGT_BENCH_FTRACE_KB", "20000")
HACKBENCH = ["hackbench", "-l", "150", "-g", "2"]
# the tracepoints of hgtrace's default event set, as ftrace events
FTRACE_EVENTS = ["sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup",
                 "sched:sched_wakeup_new", "sched:sched_migrate_task", "sched:sched_process_exit",
                 "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry",
                 "irq:softirq_exit", "irq_vectors:*", "nmi:nmi_handler",
                 "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit"]


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"bench: {cmd} failed ({p.returncode}): {p.stderr[-1500:]}")
    return p


def hackbench_time(output):
    m = re.search(r"Time:\s*([0-9.]+)", output)
    if not m:
        raise SystemExit(f"bench: no 'Time:' in hackbench output: {output[-500:]}")
    return float(m.group(1))


def pipe_time(output):
    m = re.search(r"([0-9.]+)\s*usecs/op", output)
    if not m:
        raise SystemExit(f"bench: no 'usecs/op' in perf bench output: {output[-500:]}")
    return float(m.group(1))


# A workload: its command and how to read its own time from its output.
# hackbench spreads over both CPUs and its time swings with how the scheduler
# happens to place its tasks; the pipe ping-pong of two tasks pinned to one CPU
# makes the same switches and wake-ups every round (2 switches, 2 wakings,
# 2 wake-ups), so it measures the cost per event with far less noise.
HACKBENCH_WORK = (HACKBENCH, hackbench_time)
# Pinned to the last CPU: CPU 1 of the usual two-CPU guest, CPU 0 of the
# one-CPU guest that counts instructions (scripts/vm --icount).
PIPE_CPU = str(max(os.sched_getaffinity(0)))
PIPE_WORK = (["taskset", "-c", PIPE_CPU, "perf", "bench", "sched", "pipe", "-l", "30000"], pipe_time)


def run_none(i, work=HACKBENCH_WORK):
    return work[1](sh(work[0]).stdout), None


def counts(path):
    """(records, events lost) of a recording: its stats, which the reader has
    checked against every record and LOST marker (read = the records,
    refused + overwritten = what the LOST markers count)."""
    rec = read_hgt(path, records=False)
    if not rec.stats:
        raise SystemExit(f"bench: {path} has no stats chunks")
    return (sum(st["read"] for st in rec.stats.values()),
            sum(st["refused"] + st["overwritten"] for st in rec.stats.values()))


def run_module(i, extra=(), work=HACKBENCH_WORK):
    path = os.path.join(REC, f"cost-{i}.hgt")
    p = sh([HGTRACE, "record", "-q", *extra, "-o", path, "--", *work[0]])
    n, lost = counts(path)
    size = os.path.getsize(path)
    os.remove(path)
    return work[1](p.stdout), dict(events=n, lost=lost, bytes=size)


def ftrace_stat(path):
    """(events, event-page bytes) of a trace.dat. Events are the lines of
    `trace-cmd report` (a wide timestamp may touch the CPU column), checked
    against --stat's per-CPU 'entries' + 'read events' (trace-cmd record
    leaves them as entries, extract as read events); bytes are --stat's
    'N bytes in size' per CPU."""
    rep = sh(["trace-cmd", "report", path])
    events = sum(1 for l in rep.stdout.splitlines() if re.match(r"^\s*\S.*\[\d+\]\s*\d+:", l))
    st = sh(["trace-cmd", "report", "--stat", path]).stdout
    entries = sum(int(n) for n in re.findall(r"^entries:\s*(\d+)", st, re.M))
    read = sum(int(n) for n in re.findall(r"^read events:\s*(\d+)", st, re.M))
    data = sum(int(n) for n in re.findall(r"(\d+) bytes in size", st))
    # 'read events' are sometimes counted in 'entries' as well (seen with trace-cmd
    # 3.1.6 record: 120 read events, the file holding exactly the entries)
    if not events or (entries and events not in (entries, entries + read)):
        raise SystemExit(f"bench: {path}: {events} events in the report, --stat says {entries} entries "
                         f"and {read} read events")
    return events, data or None


def run_ftrace(i, extra=(), work=HACKBENCH_WORK, events=FTRACE_EVENTS):
    path = os.path.join(REC, f"cost-{i}.dat")
    p = sh(ftrace_args(path, extra, events) + work[0])
    rep = subprocess.run(["trace-cmd", "report", "-q", path], capture_output=True, text=True)
    lost = sum(int(x) for x in re.findall(r"\[(\d+) EVENTS DROPPED\]", rep.stdout))
    n, data = ftrace_stat(path)
    size = os.path.getsize(path)
    os.remove(path)
    return work[1](p.stdout), dict(events=n, lost=lost, bytes=size, data_bytes=data)


def bench_cost_and_size():
    variants = {"none": run_none, "hgtrace": run_module, "ftrace": run_ftrace}
    times = {k: [] for k in variants}
    sizes = {"hgtrace": [], "ftrace": []}
    for i in range(REPEATS):
        order = list(variants) if i % 2 == 0 else list(reversed(variants))   # interleave
        for name in order:
            t, info = variants[name](i)
            times[name].append(t)
            if info:
                sizes[name].append(info)
        print(f"# repeat {i + 1}/{REPEATS}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()),
              flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    over = {k: med[k] / med["none"] - 1 for k in ("hgtrace", "ftrace")}
    return dict(
        repeats=REPEATS, workload=" ".join(HACKBENCH), times=times, median_s=med,
        overhead=over,
        overhead_ratio=over["hgtrace"] / over["ftrace"] if over["ftrace"] > 0 else None,
        events_per_run={k: statistics.median(r["events"] for r in v) for k, v in sizes.items()},
        lost_per_run={k: statistics.median(r["lost"] for r in v) for k, v in sizes.items()},
    )


def run_discarding(i, work=HACKBENCH_WORK, extra=()):
    """The module's probes with nothing stored (module parameter discard)."""
    with open("/sys/module/hgtrace/parameters/discard", "w") as f:
        f.write("1")
    try:
        path = os.path.join(REC, f"discard-{i}.hgt")
        p = sh([HGTRACE, "record", "-q", *extra, "-o", path, "--", *work[0]])
        os.remove(path)
        return work[1](p.stdout), None
    finally:
        with open("/sys/module/hgtrace/parameters/discard", "w") as f:
            f.write("0")


def interleaved(variants, repeats, what):
    """Each variant's times, the variants run in turn, in reverse order every other
    repeat; a variant that lost events stops the benchmark (what: what would be wrong)."""
    times = {k: [] for k in variants}
    for i in range(repeats):
        for name in (list(variants) if i % 2 == 0 else list(reversed(variants))):
            t, info = variants[name](i)
            times[name].append(t)
            if info and info["lost"]:
                raise SystemExit(f"bench: {name} lost {info['lost']} events; {what} would be wrong")
    return times


def bench_split(repeats=7, work=HACKBENCH_WORK):
    """Where the module's cost goes: its probes alone (a 64 MiB buffer that the
    reader leaves alone until the run is over) against probes and live reader,
    the probes storing nothing (the store's part), overwrite mode (the flight
    recorder, hourglass -b) instead of stop mode, and trace-cmd."""
    variants = {"none": lambda i: run_none(i, work=work),
                "probes+reader": lambda i: run_module(i, work=work),
                # the same in overwrite mode (the buffer never fills, so nothing is
                # overwritten): what leaving the flight recorder on costs against stop mode
                "probes+reader, overwrite mode": lambda i: run_module(200 + i, ("-m", "overwrite"), work=work),
                "probes": lambda i: run_module(300 + i, ("-b", "65536", "-i", "10s"), work=work),
                "probes, nothing stored": lambda i: run_discarding(i, work=work),
                "ftrace": lambda i: run_ftrace(i, work=work)}
    times = interleaved(variants, repeats, "the split")
    med = {k: statistics.median(v) for k, v in times.items()}
    return dict(repeats=repeats, workload=" ".join(work[0]), times=times, median_s=med,
                overhead={k: med[k] / med["none"] - 1 for k in variants if k != "none"})


def bench_store(repeats, work=PIPE_WORK):
    """Stop mode against overwrite mode on the module's ring, nothing else
    changed: 64 MiB buffers read after the run (no live reader to add noise),
    never full, so nothing is overwritten; the probes storing nothing and no
    tracing as anchors."""
    variants = {"none": lambda i: run_none(i, work=work),
                "stop mode": lambda i: run_module(400 + i, ("-b", "65536", "-i", "10s"), work=work),
                "overwrite mode": lambda i: run_module(500 + i, ("-m", "overwrite", "-b", "65536", "-i", "10s"),
                                                           work=work),
                "probes, nothing stored": lambda i: run_discarding(i, work=work)}
    times = interleaved(variants, repeats, "the comparison")
    med = {k: statistics.median(v) for k, v in times.items()}
    over = {k: med[k] / med["none"] - 1 for k in variants if k != "none"}
    # per repeat, the two stores ran next to each other: the paired difference is less noisy
    paired = [(b - a) / n for a, b, n in zip(times["stop mode"], times["overwrite mode"], times["none"])]
    return dict(repeats=repeats, workload=" ".join(work[0]), times=times, median_s=med, overhead=over,
                paired_overwrite_minus_stop=statistics.median(paired),
                paired_stop_cheaper=sum(1 for d in paired if d > 0))


def bench_compressed_size(repeats=3):
    """Bytes per event, plain against plain and compressed against compressed
    (hgtrace -z packs the file after the run; trace-cmd compresses its trace.dat
    by default, and --compression any picks its best)."""
    per = {k: [] for k in ("hgtrace", "ftrace", "ftrace_data", "hgtrace_z", "ftrace_compressed")}
    for i in range(repeats):
        _, a = run_module(100 + i)
        _, b = run_ftrace(100 + i)
        _, c = run_module(200 + i, ("-z",))
        _, d = run_ftrace(200 + i, ("--compression", "any"))
        per["hgtrace"].append(a["bytes"] / a["events"])
        per["ftrace"].append(b["bytes"] / b["events"])
        per["ftrace_data"].append(b["data_bytes"] / b["events"])
        per["hgtrace_z"].append(c["bytes"] / c["events"])
        per["ftrace_compressed"].append(d["bytes"] / d["events"])
    out = {k: statistics.median(v) for k, v in per.items()}
    out["ratio"] = out["hgtrace_z"] / out["ftrace_compressed"]
    out["ratio_default"] = out["hgtrace_z"] / out["ftrace"]
    out["repeats"] = repeats
    return out


def ftrace_args(path, extra=(), events=FTRACE_EVENTS):
    args = ["trace-cmd", "record", "-q", *extra, "-C", "x86-tsc", "-b", FTRACE_KB, "-o", path]
    for e in events:
        args += ["-e", e]
    return args


def flyrecord_bytes(path):
    """Bytes of a trace.dat's event data as stored (compressed when the file is),
    without the metadata trace-cmd adds to every file (kallsyms, formats...)."""
    out = sh(["trace-cmd", "dump", "--summary", path]).stdout
    m = re.search(r"(\d+) bytes flyrecord data", out)
    if not m:
        raise SystemExit(f"bench: {path}: no flyrecord size in trace-cmd dump --summary")
    return int(m.group(1))


def bench_same_run_size(repeats=3):
    """Bytes per event of both recorders recording the same run at once
    (hgtrace record -z -- trace-cmd record ... hackbench): the same events,
    so no run-to-run change of hackbench's event mix enters the ratio. Each
    recorder also sees the other's reader at work, as in test_ftrace_agreement.
    Ratios are per run, then the median; against the whole trace.dat (what the
    target names) and against its event data alone (about half of a whole
    trace.dat of this size is kallsyms and event formats, a fixed cost)."""
    runs = {"default": [], "any": []}
    for i in range(repeats):
        for key, extra in (("default", ()), ("any", ("--compression", "any"))):
            hgt, dat = os.path.join(REC, f"same-{i}.hgt"), os.path.join(REC, f"same-{i}.dat")
            sh([HGTRACE, "record", "-q", "-z", "-o", hgt, "--", *ftrace_args(dat, extra), *HACKBENCH])
            n, lost = counts(hgt)
            if lost:
                raise SystemExit(f"bench: hgtrace lost events in same-run repeat {i}; the sizes would be wrong")
            m, _ = ftrace_stat(dat)
            runs[key].append(dict(events=n, ftrace_events=m, hgtrace_z=os.path.getsize(hgt) / n,
                                  ftrace=os.path.getsize(dat) / m, ftrace_data=flyrecord_bytes(dat) / m))
            os.remove(hgt)
            os.remove(dat)
    med = lambda key, f: statistics.median(f(r) for r in runs[key])
    return dict(
        repeats=repeats, runs=runs,
        hgtrace_z=med("default", lambda r: r["hgtrace_z"]),
        ratio_default=med("default", lambda r: r["hgtrace_z"] / r["ftrace"]),
        ratio_default_data=med("default", lambda r: r["hgtrace_z"] / r["ftrace_data"]),
        ratio_any=med("any", lambda r: r["hgtrace_z"] / r["ftrace"]),
        ratio_any_data=med("any", lambda r: r["hgtrace_z"] / r["ftrace_data"]),
    )


def bench_throughput():
    """Drain rate of a full buffer, and the live zero-loss rate under hackbench."""
    drain = []
    for i in range(5):
        path = os.path.join(REC, f"drain-{i}.hgt")
        # record with a large buffer and a drain period longer than the run, so
        # that everything is drained in one go after STOP; time that drain
        p = sh([HGTRACE, "record", "-b", "65536", "-i", "10s", "-o", path, "--", *HACKBENCH])
        m = re.search(r"drained (\d+) records in ([0-9.]+) s", p.stderr)
        if not m:
            raise SystemExit(f"bench: the recorder did not report its final drain: {p.stderr}")
        drain.append(int(m.group(1)) / float(m.group(2)))
        os.remove(path)
    live = []
    for i in range(5):
        path = os.path.join(REC, f"live-{i}.hgt")
        sh([HGTRACE, "record", "-q", "-o", path, "--", *HACKBENCH])
        rec = read_hgt(path, records=False)
        span = (rec.window[1] - rec.window[0]) / (rec.tsc_khz * 1000)
        for cpu in rec.stats:
            n = rec.stats[cpu]["produced"]
            lost = rec.stats[cpu]["refused"] + rec.stats[cpu]["overwritten"]
            live.append(dict(cpu=cpu, rate=n / span, lost=lost))
        os.remove(path)
    kept = [x["rate"] for x in live if x["lost"] == 0]
    return dict(drain_events_per_s=statistics.median(drain),
                live_max_zero_loss_per_cpu=max(kept) if kept else 0,
                live_runs_with_loss=sum(1 for x in live if x["lost"]),
                live=live)


def fs_of(path):
    """The file system type of the mount holding path (from /proc/self/mounts)."""
    path, best, kind = os.path.realpath(path), "", "?"
    with open("/proc/self/mounts") as f:
        for line in f:
            mnt, typ = line.split()[1:3]
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, kind = mnt, typ
    return kind


def main():
    parts = sys.argv[1:] or ["cost", "size", "throughput"]
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(REC, exist_ok=True)
    subprocess.run(["insmod", KO], check=True)
    try:
        res = dict(kernel=os.uname().release, cpus=len(os.sched_getaffinity(0)), icount=ICOUNT,
                   recordings_on=fs_of(REC))
        if "cost" in parts:
            res["cost_size"] = bench_cost_and_size()
        if "size" in parts:
            res["compressed"] = bench_compressed_size(SIZE_REPEATS)
            res["same_run"] = bench_same_run_size(SIZE_REPEATS)
        if "split" in parts:
            res["split"] = bench_split()
        if "pipe" in parts:
            res["pipe"] = bench_split(REPEATS, PIPE_WORK)
        if "store" in parts:
            res["store"] = bench_store(REPEATS)
        if "throughput" in parts:
            res["throughput"] = bench_throughput()
    finally:
        subprocess.run(["rmmod", "hgtrace"])
    with open(os.path.join(OUT, f"results-{'-'.join(parts)}.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"kernel {res['kernel']}, {res['cpus']} CPU(s), " +
          ("instruction-count clock (scripts/vm --icount): times count instructions" if ICOUNT else
           "the host's clock: times swing with the host's load") +
          f"; recorders write to {REC} ({res['recordings_on']})")
    if "cost_size" in res:
        print_cost(res["cost_size"])
    if "compressed" in res:
        print_compressed(res["compressed"])
    if "same_run" in res:
        sr = res["same_run"]
        per = lambda key, f: ", ".join(f"{f(r):.3f}" for r in sr["runs"][key])
        print(f"size, both recording the same run ({sr['repeats']} repeats, medians of per-run ratios): "
              f"hgtrace -z {sr['hgtrace_z']:.2f} bytes/event")
        print(f"  against trace-cmd's default trace.dat: whole file {sr['ratio_default']:.3f} (target <= 0.25; "
              f"per run {per('default', lambda r: r['hgtrace_z'] / r['ftrace'])}), its event data alone "
              f"{sr['ratio_default_data']:.3f} ({per('default', lambda r: r['hgtrace_z'] / r['ftrace_data'])})")
        print(f"  against trace-cmd --compression any: whole file {sr['ratio_any']:.3f}, its event data alone "
              f"{sr['ratio_any_data']:.3f}")
    for part in ("split", "pipe"):
        if part in res:
            print_split(part, res[part])
    if "store" in res:
        st = res["store"]
        print(f"store ({st['repeats']} interleaved repeats of '{st['workload']}'): overhead " +
              ", ".join(f"{k} {v * 100:.1f}%" for k, v in st["overhead"].items()))
        print(f"store: overwrite mode minus stop mode, paired per repeat, median "
              f"{st['paired_overwrite_minus_stop'] * 100:+.1f}% of the untraced time; stop mode was cheaper in "
              f"{st['paired_stop_cheaper']} of {st['repeats']} repeats")
    if "throughput" in res:
        print_throughput(res["throughput"])


def print_split(part, sp):
    ft = sp["overhead"]["ftrace"]
    print(f"{part} ({sp['repeats']} interleaved repeats of '{sp['workload']}'): overhead " +
          ", ".join(f"{k} {v * 100:.1f}%" for k, v in sp["overhead"].items()))
    if ft > 0:
        print(f"{part}: against ftrace's overhead: " +
              ", ".join(f"{k} {v / ft:.2f}" for k, v in sp["overhead"].items() if k != "ftrace") +
              " (target for probes+reader <= 0.5)")


def print_cost(cs):
    print(f"{cs['repeats']} interleaved repeats of '{cs['workload']}'")
    print(f"cost: median hackbench none {cs['median_s']['none']:.3f}s, hgtrace {cs['median_s']['hgtrace']:.3f}s, "
          f"ftrace {cs['median_s']['ftrace']:.3f}s")
    print(f"cost: overhead hgtrace {cs['overhead']['hgtrace'] * 100:.1f}%, ftrace {cs['overhead']['ftrace'] * 100:.1f}%, "
          f"ratio {cs['overhead_ratio']:.2f} (target <= 0.5)" if cs["overhead_ratio"] is not None else
          f"cost: ftrace showed no overhead; ratio undefined")
    print(f"events per run: {cs['events_per_run']}, lost per run: {cs['lost_per_run']}")


def print_compressed(cz):
    print(f"size: bytes/event hgtrace {cz['hgtrace']:.1f}, trace.dat {cz['ftrace']:.1f} (ratio "
          f"{cz['hgtrace'] / cz['ftrace']:.2f}, target <= 0.25); trace.dat event pages only "
          f"{cz['ftrace_data']:.1f} (ratio {cz['hgtrace'] / cz['ftrace_data']:.2f})")
    print(f"size, compressed: hgtrace -z (packed) {cz['hgtrace_z']:.1f}, trace-cmd --compression any "
          f"{cz['ftrace_compressed']:.1f} (ratio {cz['ratio']:.2f}, target <= 0.25); against trace-cmd's "
          f"default trace.dat {cz['ratio_default']:.2f}")


def print_throughput(tp):
    print(f"throughput: the final drain empties a full buffer at {tp['drain_events_per_s'] / 1e6:.2f} M events/s; "
          f"no loss at up to {tp['live_max_zero_loss_per_cpu'] / 1e3:.0f} k events/s per CPU, the highest rate "
          f"the workload produced ({tp['live_runs_with_loss']} CPU-runs lost events)")


if __name__ == "__main__":
    main()
