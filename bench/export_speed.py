#!/usr/bin/env python3
"""bench/export_speed.py - the C exporters' own throughput and memory, against
the Python exporters measured in the same run.

    python3 bench/export_speed.py [--reps N] [--events N] [--baseline-events N] [--dir DIR]

build/export/export_speed (bench/export_speed.c) feeds a generated run
(4 CPUs at 2.6 GHz, an hourglass thread on each, 20 us intervals, a gap
after each with a tick, an irq, a switch or an IPI in turn: about 4.25
kernel events a gap) through the hooks of userspace/export/export.h, as
hgmerge will, with nothing else: "gen" runs the generator alone (its time
is taken out), "ks" the trace.dat writer, "pf" the Perfetto writer, each
in a fresh process ("both": the two together, as hgmerge will run them),
interleaved, --reps times (default 5) on --events
(default 10 M) kernel events. "io" writes (and for the trace.dat, copies
once) as many bytes as each writer wrote, in the same folder: the file
system's floor under that writer on this machine. The files go to
/dev/shm unless --dir says otherwise: a disk adds its own write-back, which
varies from run to run and is no part of the writers.

The baseline: the same generated run written as kernel.hgt and
hourglass.hgl (--baseline-events, default 1 M), merged once by the Python
engine (not timed), then tools/hgexport's kernelshark.export and
perfetto.export timed on it (median of 3).

Prints a table and one JSON line ("export_speed: {...}"): events/s of each
writer (wall and CPU), peak RSS, bytes per event, the ratio to the Python
exporter and to the target (30 M events/s each: they share the 10 M/s
end-to-end budget with the merge). Times are medians; the machine is shared,
so CPU seconds (user + sys) are shown beside wall seconds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.path.join(TOP, "build", "export", "export_speed")
TARGET = 30e6

PY_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[2])
from hgmerge import report
from hgexport import kernelshark, perfetto
d, reps = sys.argv[1], int(sys.argv[3])
merged = report.merge_run(d)
times = {"ks": [], "pf": []}
for _ in range(reps):
    t = time.monotonic()
    kernelshark.export(d, os.path.join(d, "py.dat"), merged=merged)
    times["ks"].append(time.monotonic() - t)
    t = time.monotonic()
    perfetto.export(d, os.path.join(d, "py.json"), merged=merged)
    times["pf"].append(time.monotonic() - t)
print(json.dumps({"times": times, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "events": merged[1]["kernel_recording"]["events"]}))
"""


def run_c(mode, events, d):
    p = subprocess.run([BIN, mode, str(events), d], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def io_floor(nbytes, d, copy):
    p = subprocess.run([BIN, "io", str(nbytes), d, str(int(copy))], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def med(rs, key):
    return statistics.median(r[key] for r in rs)


def cpu(r):
    return r["user_s"] + r["sys_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--baseline-events", type=int, default=1_000_000)
    ap.add_argument("--baseline-reps", type=int, default=3)
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="where the files go (default /dev/shm: memory, so that the figures are the writers' "
                         "and not the disk's; give a folder on a disk to see both)")
    a = ap.parse_args()
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "export"), "bench"], check=True)
    with tempfile.TemporaryDirectory(prefix="hg-export-speed-", dir=a.dir) as d:
        rs = {"gen": [], "ks": [], "pf": [], "both": [], "io_ks": [], "io_pf": []}
        for _ in range(a.reps):
            for mode in ("gen", "ks", "pf", "both"):
                r = run_c(mode, a.events, d)
                rs[mode].append(r)
                if mode in ("ks", "pf"):
                    rs["io_" + mode].append(io_floor(r["out_bytes"], d, mode == "ks"))
                for f in os.listdir(d):
                    os.unlink(os.path.join(d, f))
        # the baseline: the same generator's run, through the Python exporters
        base = os.path.join(d, "run")
        os.mkdir(base)
        made = int(subprocess.run([BIN, "--write-run", str(a.baseline_events), base], capture_output=True,
                                  text=True, check=True).stdout)
        p = subprocess.run([sys.executable, "-c", PY_CHILD, base, os.path.join(TOP, "tools"), str(a.baseline_reps)],
                           capture_output=True, text=True, check=True)
        py = json.loads(p.stdout)
    gen = med(rs["gen"], "seconds")
    gen_cpu = statistics.median(cpu(r) for r in rs["gen"])
    out = {"events": rs["ks"][0]["events"], "reps": a.reps, "generator_s": gen,
           "baseline": {"events": py["events"], "generated": made, "peak_rss_mb": py["peak_rss_mb"]}}
    print(f"{'':10s} {'wall s':>8s} {'cpu s':>7s} {'M ev/s':>8s} {'(cpu)':>7s} {'RSS MB':>7s} {'B/event':>8s} "
          f"{'io floor s':>10s} {'x Python':>9s} {'x target':>9s}")
    for mode, name in (("ks", "trace.dat"), ("pf", "perfetto")):
        wall = med(rs[mode], "seconds") - gen
        cpus = statistics.median(cpu(r) for r in rs[mode]) - gen_cpu
        n = rs[mode][0]["events"]
        rate, rate_cpu = n / wall, n / cpus
        py_rate = py["events"] / statistics.median(py["times"][mode])
        io = med(rs["io_" + mode], "seconds")
        rss = max(r["peak_rss_mb"] for r in rs[mode])
        bpe = rs[mode][0]["out_bytes"] / n
        out[mode] = {"wall_s": wall, "cpu_s": cpus, "events_per_s": rate, "events_per_cpu_s": rate_cpu,
                     "peak_rss_mb": rss, "bytes_per_event": bpe, "io_floor_s": io,
                     "python_events_per_s": py_rate, "ratio_to_python": rate / py_rate,
                     "ratio_to_target": rate / TARGET}
        print(f"{name:10s} {wall:8.3f} {cpus:7.3f} {rate / 1e6:8.2f} {rate_cpu / 1e6:7.2f} {rss:7.1f} {bpe:8.1f} "
              f"{io:10.3f} {rate / py_rate:9.1f} {rate / TARGET:9.3f}")
        print(f"{'':10s} Python on {py['events']} events: {py_rate / 1e6:.3f} M events/s")
    # both writers in one process, as hgmerge will run them
    wall = med(rs["both"], "seconds") - gen
    cpus = statistics.median(cpu(r) for r in rs["both"]) - gen_cpu
    n = rs["both"][0]["events"]
    py_both = py["events"] / (statistics.median(py["times"]["ks"]) + statistics.median(py["times"]["pf"]))
    out["both"] = {"wall_s": wall, "cpu_s": cpus, "events_per_s": n / wall, "events_per_cpu_s": n / cpus,
                   "peak_rss_mb": max(r["peak_rss_mb"] for r in rs["both"]), "ratio_to_python": n / wall / py_both}
    print(f"{'both':10s} {wall:8.3f} {cpus:7.3f} {n / wall / 1e6:8.2f} {n / cpus / 1e6:7.2f} "
          f"{out['both']['peak_rss_mb']:7.1f} {'':8s} {'':10s} {n / wall / py_both:9.1f}")
    print(f"(generator alone {gen:.3f} s, taken out; Python's peak RSS {py['peak_rss_mb']:.0f} MB includes its merge)")
    print("export_speed: " + json.dumps(out))


if __name__ == "__main__":
    main()
