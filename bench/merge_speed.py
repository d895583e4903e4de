#!/usr/bin/env python3
"""bench/merge_speed.py - the merger's throughput and memory on generated runs.

    python3 bench/merge_speed.py [--repeats N] [--dir DIR] [EVENTS ...]   (default 1000000 10000000)
    python3 bench/merge_speed.py --instructions [--baseline HGMERGE] [--dir DIR] [EVENTS ...]
    python3 bench/merge_speed.py --generate DIR EVENTS [CPU ...]          (the run alone; CPUs 0 1)

For each size, writes a synthetic run directory (two CPUs, one SCHED_FIFO
hourglass thread each, 20 us intervals; every gap holds five kernel events:
the 1 ms tick with its hrtimer, 4.5 us, where an interval ends on the tick,
else an irq with a softirq, 3 us) and times, in fresh processes and
interleaved, N times each:

  report   build/hgmerge --report: the merge, every gap explained and judged
  report-cpu255  the same on the same run with its second CPU numbered 255: the
           merge's cost must follow the CPUs a run used, not the highest CPU
           number (printed as a ratio to report's time, about 1)
  report-32threads  the same events spread over 32 threads on 32 CPUs
           (printed as a ratio to report's time: what more threads cost)
  report-1024threads  the same over 1024 threads on 1024 CPUs, a large
           machine's: a cost per pair of threads or CPUs shows here (4096
           threads once took 44 s for 2 M events), as a ratio to report's
  all      build/hourglass export DIR --json --text --kernelshark --perfetto
           --html: the report and every export from one merge, end to end
  page     build/hourglass export REPORT.json --html: the HTML page alone,
           from all's report (matplotlib's import and drawing: no merge)

It prints the median kernel events a second of each, their ratio to the
target (issue 14: report plus all exports at 10 million kernel events a
second, end to end), and the peak resident memory, which must not grow with
the run (compare the sizes). For the end-to-end variant it also prints the
CPU time (user and system, every process) and that time spread over the
CPUs this process may use: the least the wall time can be, whatever
overlaps; and the same least for what does not depend on how the exports
are encoded (report's CPU, writing the files' bytes, page's CPU): when it
is above the target's time, no exporter can reach the target here. Files go under --dir (default: /dev/shm when it exists, so that
the machine's disk is not what is measured; say --dir /tmp to include it). One JSON line per size and variant ("merge_speed: {...}").
The generated run is mostly inferred right, like real runs: the report lists
every disagreement, so a run where most gaps were wrong would measure the
listing.

--instructions counts instead of timing (issue 54: the merge at 500 user-space
instructions a kernel event): for each size, callgrind (valgrind --tool=callgrind,
one at a time) of build/hgmerge --report on the run, and of --baseline's
hgmerge (another tree's, built beside: a tree before a change), the
instructions an event of each and their ratio, and each one's peak resident
memory (without callgrind), which must not grow with the run. With
--baseline it also merges the run and its odd shapes (its second CPU numbered
255, 32 threads on 32 CPUs, 1024 threads on 1024 CPUs) with both programs,
every output (the report, the gap stream and its JSON lines, the trace.dat,
the Perfetto trace), and says whether each one is the same bytes, the
report's own time aside. One JSON line per size and program
("merge_speed: {...}"), and one per shape compared ("merge_same: {...}").
A tree before a change, for --baseline:

    git archive REV | tar -x -C /tmp/before && make -C /tmp/before/userspace/merger OUT=/tmp/before/build
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import hashlib
import json
import re
import statistics
import struct
import subprocess
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "tests"))
from helpers.files import pack_record as rec  # noqa: E402  (the test writers)

HZ = 1e9          # one cycle a nanosecond
TICK = 1000000    # a 1 ms tick (HZ=1000), in cycles


def generate(d, events, cpus=(0, 1)):
    """A run directory with about @events kernel events, one thread on each of @cpus."""
    gaps_per_cpu = events // (5 * len(cpus))
    ivs = []
    chunks = {i: [] for i in range(len(cpus))}
    out = open(os.path.join(d, "kernel.hgt"), "wb")
    meta = b"format: hgtrace 1\ntsc_khz: 1000000\n"
    meta += b"\0" * (8 - len(meta) % 8)
    out.write(struct.pack("<8sII", b"HGTRACE\n", 1, len(meta)) + meta)

    last = []       # each chunk's last kernel event (a CPU's records are in time order)

    def flush(cpu):
        if chunks[cpu]:
            last.append(struct.unpack_from("<Q", chunks[cpu][-1])[0])
        data = b"".join(chunks[cpu])
        out.write(struct.pack("<IIII", 0x6B6E6863, cpus[cpu], len(data), len(chunks[cpu])) + data)
        chunks[cpu] = []

    for cpu in range(len(cpus)):
        t = 1000
        tick = TICK
        for i in range(gaps_per_cpu):
            # the interval ends at the tick when it comes, as a real one would
            end = min(t + 20000, tick)
            ivs.append((t, end, 0, cpu, 1, 0, cpus[cpu]))
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
    # the window is what the run spans, from hourglass's zero (t0_tsc 0) to its last event or
    # the kernel's, as a recording that started before the run and stopped after it (it once
    # said 0..2^62: the report's window ran to t=4611686018 s)
    window = (0, max(last + [iv[1] for iv in ivs]))
    out.write(struct.pack("<IIII", 0x656D6974, 0, 16, 1) + struct.pack("<QQ", *window))
    out.write(struct.pack("<IIII", 0x21646E65, 0, 0, 0))
    out.close()
    info = {"tsc": {"hz": HZ}, "t0_tsc": 0, "duration_ns": ivs[-1][1], "command": ["generated"],
            "kernel": {"release": "generated"},
            "threads": [{"thread": k, "tid": 100 + k, "workload": "CPU", "policy": "fifo", "priority": 80,
                         "timer": "NATIVE", "affinity": str(cpus[k])} for k in range(len(cpus))]}
    # in the file as hourglass writes it: each thread takes its records from a shared pool
    # HG_CHUNK (256) at a time, so chunks of a thread, in the order they were taken
    taken = []
    for k in range(len(cpus)):
        mine = [r for r in ivs if r[3] == k]
        taken += [mine[i:i + 256] for i in range(0, len(mine), 256)]
    taken.sort(key=lambda c: (c[0][0], c[0][3]))
    body = b"".join(struct.pack("<QQQHBBI", *r) for c in taken for r in c)
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    with open(os.path.join(d, "hourglass.hgl"), "wb") as f:
        f.write(struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0) + sec(b"info", json.dumps(info).encode())
                + sec(b"recs", body) + sec(b"end!", struct.pack("<QQ", len(ivs), 0)))
    return gaps_per_cpu * len(cpus) * 5


TARGET = 10e6     # kernel events a second, report plus all exports, end to end
CPUS = len(os.sched_getaffinity(0))     # what the CPU time can spread over: its floor is cpu_s / CPUS

# one variant in a process of its own, so that the peak resident memory is its own
CHILD = r"""
import json, os, resource, subprocess, sys, time
cmd = json.loads(sys.argv[1])
t = time.monotonic()
subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
dt = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": dt, "peak_rss_mb": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime}))
"""


# what the all variant writes (page writes page.html beside them)
ALL_FILES = ("report.json", "report.txt", "merged.dat", "trace.perfetto", "report.html")


def report_cmd(d, out):
    return [os.path.join(TOP, "build", "hgmerge"), "--hgl", os.path.join(d, "hourglass.hgl"),
            "--kernel", os.path.join(d, "kernel.hgt"), "--report", os.path.join(out, "r.json")]


def variants(d, d255, many):
    out = os.path.join(d, "out")
    os.makedirs(out, exist_ok=True)
    return {
        "report": report_cmd(d, out),
        "report-cpu255": report_cmd(d255, out),
        **{f"report-{n}threads": report_cmd(dn, out) for n, dn in many.items()},
        "all": [os.path.join(TOP, "build", "hourglass"), "export", d, "--json", os.path.join(out, "report.json"),
                "--text", os.path.join(out, "report.txt"), "--kernelshark", os.path.join(out, "merged.dat"),
                "--perfetto", os.path.join(out, "trace.perfetto"), "--html", os.path.join(out, "report.html")],
        # after all: its report.json is this repeat's
        "page": [os.path.join(TOP, "build", "hourglass"), "export", os.path.join(out, "report.json"),
                 "--html", os.path.join(out, "page.html")],
    }


FLOOR = r"""
import os, sys, time
path, n = sys.argv[1], int(sys.argv[2])
block = b"\0" * (1 << 20)
t = time.monotonic()
with open(path, "wb") as f:
    while n > 0:
        f.write(block[:min(n, len(block))])
        n -= len(block)
os.unlink(path)
print(time.monotonic() - t)
"""


def write_floor(d, nbytes):
    """Seconds this machine takes to write @nbytes into @d, nothing else: the floor of any export."""
    p = subprocess.run([sys.executable, "-c", FLOOR, os.path.join(d, "floor.bin"), str(nbytes)],
                       capture_output=True, text=True, check=True)
    return float(p.stdout)


def measure(cmd):
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cmd)], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


HGMERGE = os.path.join(TOP, "build", "hgmerge")


def instructions(hgmerge, d, out):
    """User-space instructions of @hgmerge --report on the run in @d, counted by callgrind."""
    cg = os.path.join(out, "callgrind.out")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", hgmerge, "--hgl",
                        os.path.join(d, "hourglass.hgl"), "--kernel", os.path.join(d, "kernel.hgt"), "--report",
                        os.path.join(out, "cg.json")], capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode or not m:
        sys.exit(f"merge_speed: callgrind of {hgmerge} failed (exit {p.returncode}): {p.stderr.strip()[-400:]}")
    os.unlink(cg)
    return int(m.group(1))


# every output of a merge, two merges (as the report names the files it wrote, relative names)
OUTPUTS = (["--report", "r.json", "--gaps", "g.hgg", "--gaps-json", "g.jsonl"],
           ["--report", "r2.json", "--kernelshark", "t.dat", "--perfetto", "p.perfetto-trace"])


def outputs(hgmerge, d, out):
    """Every output of @hgmerge on the run in @d, in @out: {name: sha256 of its bytes}, the
    reports' own time aside (the one thing that differs from one merge to the next)."""
    os.makedirs(out, exist_ok=True)
    sums = {}
    for args in OUTPUTS:
        subprocess.run([hgmerge, "--hgl", os.path.join(d, "hourglass.hgl"), "--kernel", os.path.join(d, "kernel.hgt"),
                        *args], cwd=out, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name in args[1::2]:
            path = os.path.join(out, name)
            with open(path, "rb") as f:
                h = hashlib.sha256()
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(re.sub(rb'"seconds": [-0-9.e+]+', b'"seconds": X', block) if name.endswith(".json")
                             else block)
            sums[name] = h.hexdigest()
            os.unlink(path)
    return sums


def count(sizes, base, baseline):
    """--instructions: each size's instructions an event, program by program, and the outputs compared."""
    programs = {"tree": HGMERGE, **({"baseline": baseline} if baseline else {})}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="hgmerge-bench-", dir=base) as d:
            made = int(subprocess.run([sys.executable, __file__, "--generate", d, str(n)], check=True,
                                      capture_output=True, text=True).stdout)
            res = {}
            for name, prog in programs.items():
                ins = instructions(prog, d, d)
                rss = measure([prog] + report_cmd(d, d)[1:])["peak_rss_mb"]
                events = json.load(open(os.path.join(d, "cg.json")))["kernel_recording"]["events"]
                res[name] = r = {"program": name, "path": prog, "events": events, "generated": made,
                                 "instructions": ins, "per_event": ins / events, "peak_rss_mb": rss}
                print(f"{n:>10d} events, {name:8s}: {ins:,} instructions, {ins / events:.1f} an event, "
                      f"peak RSS {rss:.1f} MB", flush=True)
                print("merge_speed: " + json.dumps(r), flush=True)
            if baseline:
                print(f"{n:>10d} events: the tree's {res['tree']['per_event']:.1f} against the baseline's "
                      f"{res['baseline']['per_event']:.1f} instructions an event: "
                      f"{res['tree']['per_event'] / res['baseline']['per_event']:.2f} of them", flush=True)
                shapes = {"plain": d}
                for shape, cpus in (("cpu255", (0, 255)), ("32threads", tuple(range(32))),
                                    ("1024threads", tuple(range(1024)))):
                    shapes[shape] = os.path.join(d, shape)
                    os.makedirs(shapes[shape])
                    subprocess.run([sys.executable, __file__, "--generate", shapes[shape], str(n)]
                                   + [str(c) for c in cpus], check=True, capture_output=True)
                for shape, sd in shapes.items():
                    a, b = (outputs(prog, sd, os.path.join(sd, "out-" + name)) for name, prog in programs.items())
                    diff = [f for f in a if a[f] != b[f]]
                    print(f"{n:>10d} events, {shape:11s}: " + (f"DIFFERENT: {' '.join(diff)}" if diff else
                          f"every output the same bytes ({' '.join(a)})"), flush=True)
                    print("merge_same: " + json.dumps({"events": n, "shape": shape, "outputs": list(a),
                                                       "different": diff}), flush=True)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--generate"]:
        print(generate(args[1], int(args[2]), tuple(int(c) for c in args[3:]) or (0, 1)))
        return
    repeats, base = 3, "/dev/shm" if os.path.isdir("/dev/shm") else None
    counting, baseline = False, None
    while args and args[0].startswith("--"):
        if args[0] == "--repeats":
            repeats, args = int(args[1]), args[2:]
        elif args[0] == "--dir":
            base, args = args[1], args[2:]
        elif args[0] == "--instructions":
            counting, args = True, args[1:]
        elif args[0] == "--baseline" and len(args) > 1:
            baseline, args = os.path.abspath(args[1]), args[2:]
            if not os.access(baseline, os.X_OK):
                sys.exit(f"merge_speed: --baseline {baseline}: not a program this user can run")
        else:
            sys.exit(f"merge_speed: unknown option {args[0]}")
    sizes = [int(a) for a in args] or [1_000_000, 10_000_000]
    if counting:
        count(sizes, base, baseline)
        return
    if baseline:
        sys.exit("merge_speed: --baseline goes with --instructions")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="hgmerge-bench-", dir=base) as d:
            made = int(subprocess.run([sys.executable, __file__, "--generate", d, str(n)], check=True,
                                      capture_output=True, text=True).stdout)
            d255 = os.path.join(d, "cpu255")
            os.makedirs(d255)
            subprocess.run([sys.executable, __file__, "--generate", d255, str(n), "0", "255"], check=True,
                           capture_output=True)
            many = {}
            for nthreads in (32, 1024):
                many[nthreads] = os.path.join(d, f"threads{nthreads}")
                os.makedirs(many[nthreads])
                subprocess.run([sys.executable, __file__, "--generate", many[nthreads], str(n)]
                               + [str(c) for c in range(nthreads)], check=True, capture_output=True)
            v = variants(d, d255, many)
            runs = {k: [] for k in v}
            floors = []
            for _ in range(repeats):            # interleaved: the machine's load moves both alike
                for k, cmd in v.items():
                    runs[k].append(measure(cmd))
                out = os.path.join(d, "out")
                floors.append(write_floor(d, sum(os.path.getsize(os.path.join(out, f)) for f in ALL_FILES)))
            events = json.load(open(os.path.join(d, "out", "report.json")))["kernel_recording"]["events"]
            cpu = {k: statistics.median(x["cpu_s"] for x in rs) for k, rs in runs.items()}
            for k, rs in runs.items():
                if k == "page":
                    continue        # said with all's figures
                secs = statistics.median(r["seconds"] for r in rs)
                r = {"variant": k, "events": events, "generated": made, "repeats": repeats,
                     "seconds": secs, "seconds_all": [round(x["seconds"], 3) for x in rs],
                     "events_per_s": events / secs, "ratio_to_target": events / secs / TARGET,
                     "peak_rss_mb": max(x["peak_rss_mb"] for x in rs), "dir": base or tempfile.gettempdir(),
                     "cpu_s": cpu[k], "cpus": CPUS,
                     "bytes": {f: os.path.getsize(os.path.join(d, "out", f)) for f in ALL_FILES} if k == "all"
                     else None}
                if k == "all":
                    r["write_floor_s"] = statistics.median(floors)
                    r["page_s"] = statistics.median(x["seconds"] for x in runs["page"])
                    r["page_cpu_s"] = cpu["page"]
                    # what every encoding of the exports pays: the merge, the bytes, the page
                    r["unencoded_cpu_s"] = cpu["report"] + r["write_floor_s"] + cpu["page"]
                if k == "report-cpu255" or k.endswith("threads"):
                    r["ratio_to_report"] = secs / statistics.median(x["seconds"] for x in runs["report"])
                print(f"{n:>10d} events, {k:6s}: {secs:.2f} s (median of {repeats}), {r['events_per_s'] / 1e6:.2f} M "
                      f"events/s, ratio to the 10 M/s target {r['ratio_to_target']:.2f}, peak RSS "
                      f"{r['peak_rss_mb']:.0f} MB" + (f"; writing its {sum(r['bytes'].values()) / 1e6:.0f} MB of files "
                      f"alone takes {r['write_floor_s']:.2f} s here" if k == "all" else "")
                      + (f"; {r['ratio_to_report']:.2f} times report's" if "ratio_to_report" in r else "")
                      + (f"; {r['cpu_s']:.2f} s of CPU, at least {r['cpu_s'] / CPUS:.2f} s on this machine's "
                         f"{CPUS} CPUs" if k == "all" else ""), flush=True)
                if k == "all":
                    least = r["unencoded_cpu_s"] / CPUS
                    print(f"{n:>10d} events, all, before any encoding: report's {cpu['report']:.2f} s of CPU, the "
                          f"files' bytes {r['write_floor_s']:.2f} s, the HTML page alone {r['page_cpu_s']:.2f} s "
                          f"(page: {r['page_s']:.2f} s): {r['unencoded_cpu_s']:.2f} s of CPU, at least "
                          f"{least:.2f} s on {CPUS} CPUs against the target's {events / TARGET:.2f} s"
                          + (": out of reach for any exporter here" if least > events / TARGET else ""), flush=True)
                print("merge_speed: " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
