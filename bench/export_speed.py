#!/usr/bin/env python3
"""bench/export_speed.py - the C exporters' own throughput, memory and bytes,
against baselines measured in the same run.

    python3 bench/export_speed.py [--reps N] [--events N] [--baseline-events N] [--dir DIR]

build/export/export_speed (bench/export_speed.c) feeds a generated run
(4 CPUs at 2.6 GHz, an hourglass thread on each, 20 us intervals, a gap
after each with a tick, an irq, a switch or an IPI in turn: about 4.25
kernel events a gap) through the hooks of userspace/export/export.h, as
hgmerge does, with nothing else: "gen" runs the generator alone (its time
is taken out), "ks" the trace.dat writer, "pf" the Perfetto writer, each
in a fresh process ("both": the two together, as hgmerge runs them),
interleaved, --reps times (default 5) on --events (default 10 M) kernel
events. The files go to /dev/shm unless --dir says otherwise: a disk adds
its own write-back, which varies from run to run and is no part of the
writers.

The baselines, measured here:
  - "io": as many bytes as each writer wrote, written in 256 KiB writes in
    the same folder (and for the trace.dat copied once, as its writer
    assembles the file): the file system's floor under that writer;
  - "Python" (Perfetto only): the same trace written by Perfetto's own
    Python builder (perfetto.trace_builder's StreamingTraceProtoBuilder,
    PyPI package perfetto): a --baseline-events run of the C writer is
    decoded (not timed), then its packets are written again through the
    builder (timed, median of 3). It only serializes packets made already,
    so it is a floor under any Python exporter of this trace. No Python
    trace.dat writer remains to compare with.

Prints a table and one JSON line ("export_speed: {...}"): events/s of each
writer (wall and CPU), peak RSS, bytes per event, the ratios to the
baselines and to the target (30 M events/s each: they share the 10 M/s
end-to-end budget with the merge). Times are medians; the machine is
shared, so CPU seconds (user + sys) are shown beside wall seconds.
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
import json, sys, time
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder
path, out, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
trace = Trace()
trace.ParseFromString(open(path, "rb").read())
packets = list(trace.packet)
times = []
for _ in range(reps):
    t = time.monotonic()
    with open(out, "wb") as f:
        b = StreamingTraceProtoBuilder(f)
        for p in packets:
            b.write_packet(p)
    times.append(time.monotonic() - t)
same = open(out, "rb").read() == open(path, "rb").read()
print(json.dumps({"times": times, "packets": len(packets), "same_bytes": same}))
"""


def run_c(mode, events, d):
    p = subprocess.run([BIN, mode, str(events), d], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def io_floor(nbytes, d, copy):
    p = subprocess.run([BIN, "io", str(nbytes), d, str(int(copy))], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def clear(d):
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))


def med(rs, key):
    return statistics.median(r[key] for r in rs)


def cpu(r):
    return r["user_s"] + r["sys_s"]


def python_baseline(a, d):
    """Perfetto's Python builder writing the C writer's packets of a --baseline-events run."""
    r = run_c("pf", a.baseline_events, d)
    p = subprocess.run([sys.executable, "-c", PY_CHILD, os.path.join(d, "speed.perfetto-trace"),
                        os.path.join(d, "py.perfetto-trace"), str(a.baseline_reps)],
                       capture_output=True, text=True)
    clear(d)
    if p.returncode:
        sys.exit(f"export_speed: the Python baseline needs Perfetto's Python package (pip install perfetto "
                 f"protobuf): {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    py = json.loads(p.stdout)
    py["events"] = r["events"]
    py["events_per_s"] = r["events"] / statistics.median(py["times"])
    return py


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
                clear(d)
                if mode in ("ks", "pf"):
                    rs["io_" + mode].append(io_floor(r["out_bytes"], d, mode == "ks"))
        py = python_baseline(a, d)
    gen = med(rs["gen"], "seconds")
    gen_cpu = statistics.median(cpu(r) for r in rs["gen"])
    out = {"events": rs["ks"][0]["events"], "reps": a.reps, "generator_s": gen, "generator_cpu_s": gen_cpu,
           "python_baseline": py}
    print(f"{'':10s} {'wall s':>7s} {'cpu s':>6s} {'M ev/s':>7s} {'(cpu)':>6s} {'RSS MB':>7s} {'B/event':>8s} "
          f"{'io s':>6s} {'x io':>5s} {'x Python':>9s} {'x target':>9s}")
    for mode, name in (("ks", "trace.dat"), ("pf", "perfetto")):
        wall = med(rs[mode], "seconds") - gen
        cpus = statistics.median(cpu(r) for r in rs[mode]) - gen_cpu
        n = rs[mode][0]["events"]
        rate, rate_cpu = n / wall, n / cpus
        io = med(rs["io_" + mode], "seconds")
        rss = max(r["peak_rss_mb"] for r in rs[mode])
        bpe = rs[mode][0]["out_bytes"] / n
        out[mode] = {"wall_s": wall, "cpu_s": cpus, "events_per_s": rate, "events_per_cpu_s": rate_cpu,
                     "finish_s": med(rs[mode], "finish_s"), "peak_rss_mb": rss, "bytes_per_event": bpe,
                     "out_bytes": rs[mode][0]["out_bytes"], "io_floor_s": io, "ratio_to_io_floor": wall / io,
                     "ratio_to_target": rate / TARGET}
        vs_py = ""
        if mode == "pf":
            out[mode]["ratio_to_python"] = rate / py["events_per_s"]
            vs_py = f"{rate / py['events_per_s']:9.1f}"
        print(f"{name:10s} {wall:7.3f} {cpus:6.3f} {rate / 1e6:7.2f} {rate_cpu / 1e6:6.2f} {rss:7.1f} {bpe:8.1f} "
              f"{io:6.3f} {wall / io:5.2f} {vs_py:>9s} {rate / TARGET:9.3f}")
    # both writers in one process, as hgmerge runs them (on its exporters' thread)
    wall = med(rs["both"], "seconds") - gen
    cpus = statistics.median(cpu(r) for r in rs["both"]) - gen_cpu
    n = rs["both"][0]["events"]
    out["both"] = {"wall_s": wall, "cpu_s": cpus, "events_per_s": n / wall, "events_per_cpu_s": n / cpus,
                   "peak_rss_mb": max(r["peak_rss_mb"] for r in rs["both"])}
    print(f"{'both':10s} {wall:7.3f} {cpus:6.3f} {n / wall / 1e6:7.2f} {n / cpus / 1e6:6.2f} "
          f"{out['both']['peak_rss_mb']:7.1f}")
    print(f"(generator alone {gen:.3f} s wall, {gen_cpu:.3f} s CPU, taken out; x io: the writer's time over the "
          f"file system's for its bytes; Python: perfetto.trace_builder on {py['events']} events, "
          f"{py['events_per_s'] / 1e6:.3f} M events/s, same bytes as the C writer: {py['same_bytes']})")
    print("export_speed: " + json.dumps(out))


if __name__ == "__main__":
    main()
