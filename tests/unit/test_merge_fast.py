"""The merger's fast paths change nothing: build/hgmerge and build/hgmerge-nofast (make -C
userspace/merger FAST=0: every hand-written fast path replaced by the plain way to the same
answer, userspace/merger/compiler.h) write the same bytes, the report's own time aside, for
every output: the report, the gap stream and its JSON lines, the trace.dat and the Perfetto
trace. On the benchmark's generated run of a million kernel events (bench/merge_speed.py),
which the fast paths were written for, and on shapes it does not have."""
import fcntl
import os
import re
import struct
import subprocess

import pytest

from conftest import TOP, chunk, hgt_file, rec
from test_merge import IRQ_E, IRQ_X, NMI, VEC_E, VEC_X, generated_run, hgl, iv, switch, thread

FAST = os.path.join(TOP, "build", "hgmerge")
PLAIN = os.path.join(TOP, "build", "hgmerge-nofast")


@pytest.fixture(scope="module")
def builds():
    """Both builds, made if missing (make finds nothing to do when they are there); one make at a
    time, when pytest's workers come here together"""
    os.makedirs(os.path.join(TOP, "build"), exist_ok=True)
    with open(os.path.join(TOP, "build", ".merger-builds.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for fast in ("1", "0"):
            subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "merger"), f"FAST={fast}"],
                           check=True)
    return FAST, PLAIN


def outputs(binary, d, out):
    """Every output of @binary on the run in @d, in @out: two merges (the report with the gap
    streams; the report with both exports), each file's bytes by name. The files are named
    relative to @out, so that the reports name them alike."""
    out.mkdir()
    args = [["--report", "r.json", "--gaps", "g.hgg", "--gaps-json", "g.jsonl"],
            ["--report", "r2.json", "--kernelshark", "t.dat", "--perfetto", "p.perfetto-trace"]]
    for a in args:
        p = subprocess.run([binary, "--hgl", str(d / "hourglass.hgl"), "--kernel", str(d / "kernel.hgt"), *a],
                           cwd=out, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
    files = {f.name: f.read_bytes() for f in out.iterdir()}
    for r in ("r.json", "r2.json"):
        # the report's own time, the one thing that differs from one run to the next
        assert files[r].count(b'"seconds": ') == 1
        files[r] = re.sub(rb'"seconds": [-0-9.e+]+', b'"seconds": X', files[r])
    return files


def same(builds, d):
    fast, plain = outputs(builds[0], d, d / "fast"), outputs(builds[1], d, d / "plain")
    assert sorted(fast) == ["g.hgg", "g.jsonl", "p.perfetto-trace", "r.json", "r2.json", "t.dat"]
    assert sorted(plain) == sorted(fast)
    for name in fast:
        assert fast[name] == plain[name], f"{name} differs between the fast and the plain build"
    return fast


def test_the_benchmarks_million_events_the_same(tmp_path, builds):
    """The 1 M-event bench run, as bench/merge_speed.py generates it: every output the same."""
    generated_run(tmp_path, 1000000)
    files = same(builds, tmp_path)
    assert b'"events": 1000000' in files["r.json"] and len(files["t.dat"]) > 10**7


@pytest.mark.parametrize("cpus", [(0, 255), tuple(range(32))])
def test_odd_shapes_the_same(tmp_path, builds, cpus):
    """The bench's odd shapes, smaller: CPU 255, and 32 threads on 32 CPUs."""
    generated_run(tmp_path, 100000, cpus)
    same(builds, tmp_path)


def test_a_bit_of_everything_the_same(tmp_path, builds):
    """What the generated run does not have: switches, yields and sleeps, a migration, NMIs,
    nested handlers, a wake-up window and a missed period, on a real-time thread and a periodic
    one."""
    threads = [thread(0, policy="fifo", priority=50), thread(1, policy="fifo", priority=51, workload="CPU_PERIODIC")]
    recs, k0, k1 = [], [], []
    for n in range(400):
        b = 100000 * n
        recs += [iv(b + 1000, b + 2000, 0, 0), iv(b + 3000, b + 4000, 0, 0, flags=1), iv(b + 4500, b + 9000, 1, 0),
                 iv(b + 9800, b + 20000, 0, 0, flags=2), iv(b + 20500, b + 30000, 1, 1),
                 iv(b + 31000, b + 40000, 0, 1), iv(b + 41000, b + 50000, 0, 1), iv(b + 52000, b + 99000, 1, 0),
                 (b + 44000, b + 50000, 6000, 0, 3, 0x10 | 2, 1),
                 (b + 41000, 0, b + 49000, 1, 2, 1, 0)]
        k0 += [rec(b + 2300, IRQ_E, 30), rec(b + 2600, NMI, 5, payload=struct.pack("<II", 150, 1)),
               rec(b + 2700, IRQ_X, 30), switch(b + 4100, 100, 101), rec(b + 9100, VEC_E, 236),
               rec(b + 9300, VEC_X, 236), switch(b + 9400, 101, 777), switch(b + 9700, 777, 100),
               switch(b + 20100, 100, 0), rec(b + 51000, VEC_E, 236, flags=1), rec(b + 51200, VEC_X, 236, flags=1),
               switch(b + 51900, 0, 101)]
        k1 += [switch(b + 30500, 101, 100), switch(b + 40100, 100, 777), switch(b + 40900, 777, 100),
               rec(b + 44500, VEC_E, 236), rec(b + 45000, VEC_X, 236), rec(b + 45500, IRQ_E, 30),
               rec(b + 45900, IRQ_X, 30)]
    (tmp_path / "hourglass.hgl").write_bytes(hgl(recs, info_threads=threads))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([chunk(0, k0), chunk(1, k1)],
                                                   meta="format: hgtrace 1\ntsc_khz: 1000000\n",
                                                   window=(0, 10**8)))
    files = same(builds, tmp_path)
    assert b'"wakeups": 400' in files["r.json"]
