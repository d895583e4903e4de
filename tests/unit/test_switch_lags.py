"""A switch's lags (ABI 1.2): the merger sums time on CPU where the scheduler
switched each side, and keeps everything else (the gaps) at the tracepoints.

Timelines built by hand at 1 GHz (a cycle is a ns), answers worked out by hand.
"""
import json
import os
import struct
import subprocess

from conftest import TOP, chunk, hgt_file, rec
from helpers.files import hgl_file, iv

SWITCH = 1
UNKNOWN = 0xFFFF
HGMERGE = os.environ.get("HGMERGE", os.path.join(TOP, "build", "hgmerge"))
ACCT = {"tsc0": 100, "tsc1": 1000, "schedstat_on_cpu_ns": 680, "schedstat_slices": 3,
        "rusage_user_ns": 680, "rusage_system_ns": 0, "thread_cputime_ns": 680}


def switch(t, prev, nxt, prev_lag=0, next_lag=0):
    """A switch record; lags are codes, and below 4096 a code is its cycles."""
    return rec(t, SWITCH, nxt, payload=struct.pack("<IIhhHH", prev, 0, 120, 120, prev_lag, next_lag))


def merge(d, switches):
    info = {"tsc": {"hz": 1e9}, "t0_tsc": 0, "duration_ns": 10**9, "command": ["hourglass", "test"],
            "kernel": {"release": "test", "preempt_rt": False},
            "threads": [{"thread": 0, "tid": 100, "workload": "CPU", "policy": "other", "priority": 0,
                         "accounting": ACCT, "cpu_time_ns": 680}]}
    (d / "hourglass.hgl").write_bytes(hgl_file([iv(100, 300, 0, 0), iv(500, 900, 0, 0), iv(950, 1000, 0, 0)],
                                               info))
    (d / "kernel.hgt").write_bytes(hgt_file([chunk(0, switches)], meta="format: hgtrace 1\nabi: 1.2\n"
                                            "tsc_khz: 1000000\n", window=(0, 10**12)))
    p = subprocess.run([HGMERGE, "--hgl", str(d / "hourglass.hgl"), "--kernel", str(d / "kernel.hgt"),
                        "--report", str(d / "report.json"), "--gaps-json", str(d / "gaps.jsonl")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    gaps = [json.loads(line) for line in (d / "gaps.jsonl").read_text().splitlines()]
    return json.loads((d / "report.json").read_text())["microstates"], gaps


def test_on_cpu_time_where_the_scheduler_switched(tmp_path):
    """Running when the window opens at 100; out at 300, 20 cycles after the scheduler
    stopped charging it (280); in at 500, 40 after it started (460); out at 900, lag 0;
    in at 950, lag 10 (940); window to 1000: 180 + 440 + 60 = 680 cycles. At the
    tracepoints alone it is 200 + 400 + 50 = 650."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with_lags = [switch(50, 0, 100, UNKNOWN, 5), switch(300, 100, 0, 20, UNKNOWN),
                 switch(500, 0, 100, UNKNOWN, 40), switch(900, 100, 0, 0, UNKNOWN),
                 switch(950, 0, 100, UNKNOWN, 10), switch(2000, 100, 0, 7, UNKNOWN)]
    [row], gaps = merge(tmp_path / "a", with_lags)
    assert row["kernel_ns"] == 680 and row["kernel_switches_in"] == 2
    assert row["schedstat_vs_kernel"] == 0.0
    # the same switches without lags (a 1.1 recording): the tracepoints, and the same gaps
    [row0], gaps0 = merge(tmp_path / "b", [switch(t, p, n) for t, p, n in
                                           ((50, 0, 100), (300, 100, 0), (500, 0, 100), (900, 100, 0),
                                            (950, 0, 100), (2000, 100, 0))])
    assert row0["kernel_ns"] == 650
    assert gaps == gaps0 and [(g["g0"], g["g1"]) for g in gaps] == [(300, 500), (900, 950)]


def test_unknown_and_large_lags(tmp_path):
    """An unknown lag (0xffff) is the tracepoint: out at 300. A coded lag is a float:
    1 << 12 | 2048 is 2048 << 1 = 4096 cycles, so the switch in at 5000, after the
    window, began at 904, inside it: on CPU 200 + 96."""
    (tmp_path / "a").mkdir()
    sw = [switch(50, 0, 100, UNKNOWN, UNKNOWN), switch(300, 100, 0, UNKNOWN, UNKNOWN),
          switch(5000, 0, 100, UNKNOWN, 1 << 12 | 2048)]
    [row], _ = merge(tmp_path / "a", sw)
    assert row["kernel_ns"] == 296 and row["kernel_switches_in"] == 1
