#!/usr/bin/env python3
"""bench/cpu_scale.py - the module's cost per event on 1, 2 and 8 CPUs.

On the host: `bench/cpu_scale.py [CPUS...]` (default 1 2 8) boots one guest
per CPU count (`scripts/vm -c N`, plain single-threaded TCG, under the
caller's guest lock), runs itself inside, and prints one table;
`bench/cpu_scale.py --table [CPUS...]` prints the table of the JSON files
already in out/bench (guests run by hand: scripts/vm -c N -o out/bench --
bench/cpu_scale.py --guest).
In a guest (HGT_KO set): runs the workload on every CPU of the guest, with
nothing traced and with the module recording, interleaved and repeated, and
writes out/bench/cpu-scale-<N>.json.

Workload: one `perf bench sched pipe` pair pinned to each CPU, all at once:
each round is 2 switches, 2 wakings and 2 wake-ups on that CPU alone, so
every CPU produces events at the same time and no task migrates. Variants:
  none      nothing traced
  probes    hgtrace record with a buffer that holds the whole run, read
            after it (-i 10s): the probes and the store, no reader at work
  live      hgtrace record as shipped (2 MiB a CPU, drained every 100 ms)
Figures: overhead = median(variant) / median(none) - 1, and the cost of one
event = (median(variant) - median(recorder alone) - median(none)) / events,
in the guest's ns, where "recorder alone" is `hgtrace record -- true`, the
recorder's fixed start and finish (open, configure, drain every CPU once,
trailer), measured in the same guest.

What it can and cannot show. Single-threaded TCG runs every vCPU on one host
thread in turn, so the wall time of N busy CPUs is the sum of their work:
if each event costs the same instructions whatever the number of CPUs, the
cost per event stays flat from 1 to 8 CPUs, and a lock or a retry loop that
made CPUs wait for each other would make it grow. What TCG does not model is
the cache: a counter shared by all CPUs costs nothing extra here, while on
hardware its line would bounce between them. That the module has no such
counter is a property of the code (docs/hgtrace-abi.md, "/proc/hgtrace"),
which this benchmark cannot prove; it shows that nothing serialises the CPUs.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import statistics
import subprocess
import time

TOP = os.environ.get("HGT_TOP", os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
OUT = os.environ.get("HGT_OUT", os.path.join(TOP, "out", "bench"))
REPEATS = int(os.environ.get("HGT_BENCH_REPEATS", "11"))
ROUNDS = int(os.environ.get("HGT_BENCH_ROUNDS", "4000"))


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"bench: {cmd} failed ({p.returncode}): {p.stderr[-1500:]}")
    return p


def workload_cmd(cpus):
    """Every CPU's pinned pipe pair, started together; the shell waits for all."""
    pairs = " ".join(f"taskset -c {c} perf bench sched pipe -l {ROUNDS} >/dev/null &" for c in cpus)
    return ["sh", "-c", pairs + " wait"]


def timed(cmd):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench: {cmd} failed ({p.returncode}): {p.stderr[-1500:]}")
    return time.monotonic() - t, p


def run_variant(name, cpus, i):
    if name == "none":
        return timed(workload_cmd(cpus))[0], None
    sys.path.insert(0, os.path.join(TOP, "tools"))
    from hgtools.recordings import read_hgt   # the library's reader, through hgtrace dump
    path = f"/tmp/cpu-scale-{i}.hgt"     # the guest's own tmpfs, not the 9p share
    extra = ["-b", "16384", "-i", "10s"] if name == "probes" else []
    # timed around the recorder: its start and stop are the same in every run,
    # and the workload's own time cannot be read from perf bench across pairs
    t, _ = timed([os.path.join(TOP, "build", "hgtrace"), "record", "-q", *extra, "-o", path, "--",
                  *workload_cmd(cpus)])
    rec = read_hgt(path, records=False)     # the library checks the records against the stats
    os.remove(path)
    produced = sum(st["produced"] for st in rec.stats.values())
    lost = sum(st["refused"] + st["overwritten"] + st["reader_fault"] for st in rec.stats.values())
    per_cpu = {c: rec.stats[c]["produced"] for c in sorted(rec.stats)}
    return t, dict(produced=produced, lost=lost, per_cpu=per_cpu)


def guest():
    cpus = sorted(os.sched_getaffinity(0))
    variants = ("none", "probes", "live")
    subprocess.run(["insmod", os.environ["HGT_KO"]], check=True)
    times = {v: [] for v in variants}
    info = {v: [] for v in variants}
    try:
        for i in range(REPEATS):
            for v in (variants if i % 2 == 0 else tuple(reversed(variants))):
                t, x = run_variant(v, cpus, i)
                times[v].append(t)
                if x:
                    info[v].append(x)
                    if x["lost"] and v == "probes":
                        raise SystemExit(f"bench: the probes variant lost {x['lost']} events; its figure would be wrong")
            print(f"# repeat {i + 1}/{REPEATS}: " + ", ".join(f"{v} {times[v][-1]:.3f}s" for v in variants),
                  flush=True)
        # the recorder's own start and finish, with nothing to record: taken off
        # both traced variants, so that only what the events cost remains
        empty = []
        for i in range(5):
            t, _ = timed([os.path.join(TOP, "build", "hgtrace"), "record", "-q", "-o", "/tmp/empty.hgt",
                          "--", "true"])
            empty.append(t)
    finally:
        subprocess.run(["rmmod", "hgtrace"])
    med = {v: statistics.median(times[v]) for v in variants}
    res = dict(cpus=len(cpus), kernel=os.uname().release, rounds=ROUNDS, repeats=REPEATS, times=times,
               median_s=med, recorder_alone_s=statistics.median(empty), info=info)
    for v in ("probes", "live"):
        ev = statistics.median(x["produced"] for x in info[v])
        res[v] = dict(events=ev, lost=statistics.median(x["lost"] for x in info[v]),
                      overhead=med[v] / med["none"] - 1,
                      ns_per_event=(med[v] - res["recorder_alone_s"] - med["none"]) / ev * 1e9,
                      events_per_cpu={c: statistics.median(x["per_cpu"][c] for x in info[v]) for c in info[v][0]["per_cpu"]})
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, f"cpu-scale-{len(cpus)}.json"), "w") as f:
        json.dump(res, f, indent=1)
    print_one(res)


def print_one(r):
    print(f"{r['cpus']} CPU(s), {r['kernel']}: {r['repeats']} interleaved repeats of one pipe pair per CPU, "
          f"{r['rounds']} rounds each; untraced {r['median_s']['none']:.3f} s; the recorder alone "
          f"{r['recorder_alone_s']:.3f} s")
    for v in ("probes", "live"):
        x = r[v]
        print(f"  {v:6s} {r['median_s'][v]:.3f} s, overhead {x['overhead'] * 100:+.1f}%, {x['events']:.0f} events "
              f"({x['lost']:.0f} lost), {x['ns_per_event']:.0f} ns an event "
              f"(per CPU: {' '.join(f'{int(e)}' for e in x['events_per_cpu'].values())})")


def host(counts, boot=True):
    res = {}
    for n in counts:
        if boot:
            p = subprocess.run([os.path.join(TOP, "scripts", "vm"), "-c", str(n), "-o", OUT, "--",
                                "bench/cpu_scale.py", "--guest"], text=True)
            if p.returncode:
                raise SystemExit(f"bench: the {n}-CPU guest failed ({p.returncode})")
        with open(os.path.join(OUT, f"cpu-scale-{n}.json")) as f:
            res[n] = json.load(f)
        print_one(res[n])
    base = res[counts[0]]
    print(f"\ncost per event against {counts[0]} CPU(s) (same kernel, plain TCG; flat = nothing serialises the CPUs):")
    print("  CPUs  untraced s  probes overhead  ns/event  ratio   live overhead  ns/event  ratio")
    for n in counts:
        r = res[n]
        print(f"  {n:4d}  {r['median_s']['none']:10.3f}  {r['probes']['overhead'] * 100:+14.1f}%  "
              f"{r['probes']['ns_per_event']:8.0f}  {r['probes']['ns_per_event'] / base['probes']['ns_per_event']:5.2f}  "
              f"{r['live']['overhead'] * 100:+12.1f}%  {r['live']['ns_per_event']:8.0f}  "
              f"{r['live']['ns_per_event'] / base['live']['ns_per_event']:5.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--guest"]:
        guest()
    elif sys.argv[1:2] == ["--table"]:
        host([int(a) for a in sys.argv[2:]] or [1, 2, 8], boot=False)
    else:
        host([int(a) for a in sys.argv[1:]] or [1, 2, 8])
