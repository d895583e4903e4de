#!/usr/bin/env python3
"""bench/merge_speed.py - the merger's throughput and memory on generated traces.

    python3 bench/merge_speed.py [EVENTS ...]     (default 1000000 10000000)

For each size, writes a synthetic run directory (two CPUs, one hourglass
thread each, every gap holding a tick with its hrtimer, or an irq with a
softirq, five kernel events a gap) and times `hgmerge` on it in a fresh
process: kernel events per second through merge and attribution, and the
peak resident memory. The target (issue 4) is 5 million events a second.
Prints one JSON line per size ("merge_speed: {...}").
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
from hgtrace_file import pack_record as rec  # noqa: E402

HZ = 1e9          # one cycle a nanosecond


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
        for i in range(gaps_per_cpu):
            end = t + 20000
            ivs.append((t, end, 0, cpu, 1, 0, cpu))
            g0 = end
            if i % 2:
                chunks[cpu] += [rec(g0 + 100, 11, 236), rec(g0 + 150, 14, 7, payload=b"\1\0\0\0\0\0\0\0"),
                                rec(g0 + 400, 15, 7), rec(g0 + 500, 12, 236), rec(g0 + 520, 2, 100, payload=b"\0" * 8)]
            else:
                chunks[cpu] += [rec(g0 + 100, 7, 30), rec(g0 + 300, 8, 30), rec(g0 + 320, 9, 3),
                                rec(g0 + 800, 10, 3), rec(g0 + 820, 2, 100, payload=b"\0" * 8)]
            t = g0 + 1000
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
res = report.merge(sys.argv[1])
dt = time.monotonic() - t
print(json.dumps({"seconds": dt, "sweep_seconds": res["merge_seconds"], "events": res["kernel_recording"]["events"],
                  "gaps": res["gaps_total"], "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1_000_000, 10_000_000]
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="hgmerge-bench-") as d:
            made = generate(d, n)
            p = subprocess.run([sys.executable, "-c", CHILD, d, os.path.join(TOP, "tools")],
                               capture_output=True, text=True, check=True)
            r = json.loads(p.stdout)
            r.update(generated=made, events_per_s=r["events"] / r["seconds"],
                     sweep_events_per_s=r["events"] / r["sweep_seconds"],
                     ratio_to_target=r["events"] / r["seconds"] / 5e6,
                     file_mb=os.path.getsize(os.path.join(d, "kernel.hgt")) / 2**20)
            print(f"{n:>10d} events: {r['seconds']:.1f} s, {r['events_per_s'] / 1e6:.3f} M events/s "
                  f"(sweep alone {r['sweep_events_per_s'] / 1e6:.3f} M/s; target 5, ratio "
                  f"{r['ratio_to_target']:.3f}), {r['gaps']} gaps, peak RSS {r['maxrss_mb']:.0f} MB")
            print("merge_speed: " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
