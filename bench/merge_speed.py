#!/usr/bin/env python3
"""bench/merge_speed.py - the merger's throughput and memory on generated traces.

    python3 bench/merge_speed.py [EVENTS ...]     (default 1000000 10000000)

For each size, writes a synthetic run directory (two CPUs, one SCHED_FIFO
hourglass thread each, 20 us intervals; every gap holds five kernel events:
the 1 ms tick with its hrtimer, 4.5 us, where an interval ends on the tick,
else an irq with a softirq, 3 us) and times `hourglass report`'s merge on it in a fresh
process, with each engine: hgmerge-core (C, the default) and the Python
reference. Prints kernel events per second through merge, attribution and
judgement, and the peak resident memory; the target (issue 4) is 5 million
events a second. Like real runs, the generated one is mostly inferred right
(the tick recurs, everything else is an interrupt): the report lists every
disagreement, so a run where most gaps were wrong would measure the listing.
One JSON line per size and engine ("merge_speed: {...}").

    python3 bench/merge_speed.py [--engine core|python|both] [EVENTS ...]
"""
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "tools"))
sys.path.insert(0, os.path.join(TOP, "tests"))
from helpers.files import pack_record as rec  # noqa: E402  (the test writers)

HZ = 1e9          # one cycle a nanosecond
TICK = 1000000    # a 1 ms tick (HZ=1000), in cycles


def generate(d, events):
    """A run directory with about @events kernel events."""
    gaps_per_cpu = events // 10
    ivs = []
    chunks = {0: [], 1: []}
    out = open(os.path.join(d, "kernel.hgt"), "wb")
    meta = b"format: hgtrace 1\ntsc_khz: 1000000\n"
    meta += b"\0" * (8 - len(meta) % 8)
    out.write(struct.pack("<8sII", b"HGTRACE\n", 1, len(meta)) + meta)

    def flush(cpu):
        data = b"".join(chunks[cpu])
        out.write(struct.pack("<IIII", 0x6B6E6863, cpu, len(data), len(chunks[cpu])) + data)
        chunks[cpu] = []

    for cpu in (0, 1):
        t = 1000
        tick = TICK
        for i in range(gaps_per_cpu):
            # the interval ends at the tick when it comes, as a real one would
            end = min(t + 20000, tick)
            ivs.append((t, end, 0, cpu, 1, 0, cpu))
            g0 = end
            if g0 == tick:          # the tick and its hrtimer: 4.5 us
                tick += TICK
                chunks[cpu] += [rec(g0 + 100, 11, 236), rec(g0 + 150, 14, 7, payload=b"\1\0\0\0\0\0\0\0"),
                                rec(g0 + 4000, 15, 7), rec(g0 + 4200, 12, 236), rec(g0 + 4220, 2, 100, payload=b"\0" * 8)]
                t = g0 + 4500
            else:                   # an irq and its softirq: 3 us
                chunks[cpu] += [rec(g0 + 100, 7, 30), rec(g0 + 300, 8, 30), rec(g0 + 320, 9, 3),
                                rec(g0 + 2800, 10, 3), rec(g0 + 2820, 2, 100, payload=b"\0" * 8)]
                t = g0 + 3000
            if len(chunks[cpu]) >= 5000:
                flush(cpu)
        flush(cpu)
    out.write(struct.pack("<IIII", 0x656D6974, 0, 16, 1) + struct.pack("<QQ", 0, 1 << 62))
    out.write(struct.pack("<IIII", 0x21646E65, 0, 0, 0))
    out.close()
    info = {"tsc": {"hz": HZ}, "t0_tsc": 0, "duration_ns": ivs[-1][1], "command": ["generated"],
            "kernel": {"release": "generated"},
            "threads": [{"thread": k, "tid": 100 + k, "workload": "CPU", "policy": "fifo", "priority": 80,
                         "timer": "NATIVE", "affinity": str(k)} for k in (0, 1)]}
    body = b"".join(struct.pack("<QQQHBBI", *r) for r in ivs)
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    with open(os.path.join(d, "hourglass.hgl"), "wb") as f:
        f.write(struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0) + sec(b"info", json.dumps(info).encode())
                + sec(b"recs", body) + sec(b"end!", struct.pack("<QQ", len(ivs), 0)))
    return gaps_per_cpu * 2 * 5


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from hgmerge import report
t = time.monotonic()
res = report.merge(sys.argv[1], engine=sys.argv[3])
dt = time.monotonic() - t
rss = lambda who: resource.getrusage(who).ru_maxrss / 1024
print(json.dumps({"engine": res["merge_engine"], "seconds": dt, "events": res["kernel_recording"]["events"],
                  "gaps": res["gaps_total"], "accuracy": res["confusion"]["accuracy"],
                  "disagreements": len(res["disagreements"]),
                  "python_rss_mb": rss(resource.RUSAGE_SELF), "core_rss_mb": rss(resource.RUSAGE_CHILDREN)}))
"""


def main():
    args = sys.argv[1:]
    if args[:1] == ["--generate"]:
        print(generate(args[1], int(args[2])))
        return
    engines = ["core", "python"]
    if args[:1] == ["--engine"] and len(args) > 1:
        engines = engines if args[1] == "both" else [args[1]]
        args = args[2:]
    sizes = [int(a) for a in args] or [1_000_000, 10_000_000]
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="hgmerge-bench-") as d:
            # in a process of its own: a child inherits its parent's peak RSS figure
            made = int(subprocess.run([sys.executable, __file__, "--generate", d, str(n)], check=True,
                                      capture_output=True, text=True).stdout)
            for engine in engines:
                p = subprocess.run([sys.executable, "-c", CHILD, d, os.path.join(TOP, "tools"), engine],
                                   capture_output=True, text=True, check=True)
                r = json.loads(p.stdout)
                r.update(generated=made, events_per_s=r["events"] / r["seconds"],
                         ratio_to_target=r["events"] / r["seconds"] / 5e6,
                         peak_rss_mb=max(r["python_rss_mb"], r["core_rss_mb"]),
                         file_mb=os.path.getsize(os.path.join(d, "kernel.hgt")) / 2**20)
                print(f"{n:>10d} events, {r['engine']:6s}: {r['seconds']:.2f} s, {r['events_per_s'] / 1e6:.3f} M "
                      f"events/s (target 5, ratio {r['ratio_to_target']:.3f}), {r['gaps']} gaps, accuracy "
                      f"{r['accuracy'] * 100:.1f}%, peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
                print("merge_speed: " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
