"""hourglass export --ks-session on a latency test, end to end (hgtools, the
real build/hgmerge, libkshark): `hourglass export demo/lat --kernelshark
x.dat --ks-session x.json` printed "x.json: KernelShark session written" and
wrote none, a latency test having no gaps. Now the session is written, opens
on the worst wake-up, and names its files from its own folder."""
import json
import os
import subprocess
import sys

from conftest import TOP, chunk, hgt_file, rec
from helpers import kscheck
from test_merge import META, hgl, switch

VEC_E, VEC_X = 11, 12
HGTOOLS_ENV = dict(os.environ, PYTHONPATH=os.path.join(TOP, "tools"))


def test_a_latency_runs_session_is_written(tmp_path):
    run = tmp_path / "lat"
    run.mkdir()
    # two LAT samples (WAKE, LAT|HR): due at 100 us, 3.4 us late; due at 200 us, 1 us late
    wakes = [(100000, 103400, 3400, 0, 3, 0x10 | 2, 0), (200000, 201000, 1000, 0, 3, 0x10 | 2, 0)]
    (run / "hourglass.hgl").write_bytes(hgl(wakes, threads=1))
    (run / "kernel.hgt").write_bytes(hgt_file([chunk(0, [
        switch(99500, 0, 777), rec(100500, VEC_E, 236), rec(100900, VEC_X, 236), switch(103000, 777, 100),
        rec(200300, VEC_E, 236), rec(200500, VEC_X, 236)])], meta=META))
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([sys.executable, "-m", "hgtools", "export", str(run), "--kernelshark", str(out / "x.dat"),
                        "--ks-session", str(out / "x.json")], capture_output=True, text=True, env=HGTOOLS_ENV)
    assert p.returncode == 0, p.stderr
    assert f"{out / 'x.json'}: KernelShark session written" in p.stderr
    assert (out / "x.json").exists() and (out / "x-hourglass.dat").exists(), sorted(os.listdir(out))
    doc = json.load(open(out / "x.json"))
    assert [s["data"]["file"] for s in doc["data streams"]] == ["x.dat", "x-hourglass.dat"]
    s = kscheck.load_session(str(out / "x.json"))
    # A: the first event from the intended expiry on (the tick at 100.5 us); B: the wake-up (times
    # through TSC2NSEC's integer arithmetic, as trace-cmd's: within a nanosecond)
    (a, ta, _), (b, tb, sb) = s["marks"]["markA"], s["marks"]["markB"]
    assert (a, b, sb) == ("irq_vectors/local_timer_entry", "hourglass/wakeup", 1), s["marks"]
    assert abs(ta - 100500) <= 1 and abs(tb - 103400) <= 1, s["marks"]
