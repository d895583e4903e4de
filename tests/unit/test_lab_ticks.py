"""The truth lab's tick count (tools/hgtools/lab/expect.py, found = "ticks"): the gaps in
which the tick's own hrtimer expired, as the kernel's recording names it, not
every local timer interrupt: with HRTICK (Linux 7.3) the scheduler's timer and
clock events that expire nothing come beside the tick."""
import os
import struct
import sys

from conftest import chunk, hgt_file, rec
from test_merge import HRT_E, META, NAME, VEC_E, VEC_X
from hgtools.lab import expect

TICK, HRTICK = 0x7bdf2e89, 0x7144dd29


def func_name(t, fid, name):
    return rec(t, NAME, fid, flags=1, payload=name.encode().ljust(32, b"\0"))


def timer(t, fid=None):
    """A local timer interrupt at @t that expires @fid (None: nothing)."""
    return [rec(t, VEC_E, 236)] + ([rec(t + 10, HRT_E, 1, payload=struct.pack("<II", fid, 0))] if fid else []) + \
        [rec(t + 50, VEC_X, 236)]


def gap(g0, g1):
    return {"g0": g0, "g1": g1, "cpu": 0, "cause": "local_timer", "components": {"self": 10, "local_timer": 40}}


def test_ticks_are_the_gaps_the_ticks_hrtimer_expired_in(tmp_path):
    recs = [func_name(1000, TICK, "tick_nohz_handler"), func_name(1000, HRTICK, "hrtick")]
    for k in range(10):
        recs += timer(4000 * k + 1000, TICK) + timer(4000 * k + 2000, HRTICK) + timer(4000 * k + 3000)
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([chunk(0, recs)], meta=META))
    gaps = [gap(4000 * k + off - 5, 4000 * k + off + 60) for k in range(10) for off in (1000, 2000, 3000)]
    sel, n, how = expect.found_gaps("ticks", {"dir": str(tmp_path), "gaps": gaps, "report": {}})
    assert n == 10 and all(g["g0"] % 4000 == 995 for g in sel), sel
    assert how.startswith("gaps in which the tick's hrtimer expired")


def test_without_named_hrtimers_every_local_timer_counts(tmp_path):
    """No recording (or one naming no hrtimer function): every gap with a local timer part."""
    gaps = [gap(4000 * k + 995, 4000 * k + 1060) for k in range(10)]
    sel, n, how = expect.found_gaps("ticks", {"dir": str(tmp_path), "gaps": gaps, "report": {}})
    assert n == 10 and how.startswith("gaps with a local_timer part")
