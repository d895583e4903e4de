"""hgmerge's rule 2b on constructed timelines: with the scheduler's feature
HRTICK on (hourglass's kernel.sched_features), the scheduler ends a slice at a
timer of its own, and the tick is not the CPU's only timer. One TSC cycle is
one nanosecond (1 GHz); test_merge.py has the rest of the merger's rules."""
import json
import struct

import pytest

from conftest import chunk, hgt_file
from test_merge import META, iv, run_merge, thread

US, MS = 1_000, 1_000_000
FEATURES_7_3 = ["PLACE_LAG", "RUN_TO_PARITY", "HRTICK", "HRTICK_DL", "NONTASK_CAPACITY", "TTWU_QUEUE"]
FEATURES_6_12 = ["PLACE_LAG", "RUN_TO_PARITY", "NO_HRTICK", "NO_HRTICK_DL", "NONTASK_CAPACITY", "TTWU_QUEUE"]


def hgl(records, kernel, info_threads):
    """hourglass's trace with @kernel as its info's kernel object."""
    info = {"tsc": {"hz": 1e9}, "t0_tsc": 0, "duration_ns": 10**9, "complete": True,
            "command": ["hourglass", "test"], "kernel": dict({"release": "test", "preempt_rt": False}, **kernel),
            "threads": info_threads}
    body = b"".join(struct.pack("<QQQHBBI", *r) for r in records)
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    return (struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0) + sec(b"info", json.dumps(info).encode())
            + sec(b"recs", body) + sec(b"end!", struct.pack("<QQ", len(records), 0)))


def merged(d, gaps, end, kernel, info_threads=None):
    """hgmerge on one thread on CPU 0, its intervals around @gaps ((start, length), in order)."""
    ivs, t = [], 0
    for g0, length in gaps:
        assert g0 > t, (g0, t)
        ivs.append(iv(t, g0, 0, 0))
        t = g0 + length
    ivs.append(iv(t, end, 0, 0))
    (d / "hourglass.hgl").write_bytes(hgl(ivs, kernel, info_threads or [thread(0)]))
    (d / "kernel.hgt").write_bytes(hgt_file([chunk(0, [])], meta=META))
    return run_merge(d)


def slice_run(periods=100):
    """A fair thread alone on its CPU with a 4 ms tick of 30 us; once a period, at a phase
    that wanders, another task runs 300 us, and from its switch back, as hourglass counts its
    own running: a hidden gap of 0.5 us at 100 us, the scheduler's timer's clock event with
    nothing to expire (8 us) at 300 us, the timer itself ending the slice (25 us) at 600 us,
    and a device interrupt as long (25 us) at 1.5 ms, past the 0.7 ms slice. Returns the
    gaps, the run's end and the starts of each kind."""
    gaps, kinds = [], {"tick": [], "other": [], "hidden": [], "empty": [], "hrtick": [], "irq": []}
    for k in range(periods):
        base = k * 4 * MS
        if k:
            gaps.append((base, 30 * US))
            kinds["tick"].append(base)
        sw = base + 800 * US + (k * 2654435761 % 2**32) * 1000 * US // 2**32   # 0.8 to 1.8 ms in
        gaps.append((sw, 300 * US))
        kinds["other"].append(sw)
        t, ran = sw + 300 * US, 0                               # switched back at t
        for at, length, kind in ((100, 500, "hidden"), (300, 8 * US, "empty"), (600, 25 * US, "hrtick"),
                                 (1500, 25 * US, "irq")):
            t += at * US - ran
            ran = at * US
            gaps.append((t, length))
            kinds[kind].append(t)
            t += length
    return gaps, periods * 4 * MS, kinds


def inferred(m, starts):
    return {m.gap(g0)["inferred"] for g0 in starts}


def test_with_hrtick_a_timer_within_a_slice_of_a_switch_is_a_timer(tmp_path):
    gaps, end, kinds = slice_run()
    m = merged(tmp_path, gaps, end, {"sched_features": FEATURES_7_3, "sched_base_slice_ns": 700_000})
    cal = m.report["inference"]["calibration"]
    assert cal["tick"]["0"]["period_ms"] == pytest.approx(4.0, rel=1e-3)
    assert cal["hrtick"] is True and cal["slice_ms"] == pytest.approx(0.7) and cal["notes"] == []
    assert cal["hidden_limit_in_slice_us"] == pytest.approx(cal["hidden_limit_us"] / 4)
    assert inferred(m, kinds["tick"]) == {"timer"}
    assert inferred(m, kinds["hrtick"]) == {"timer"} and inferred(m, kinds["empty"]) == {"timer"}
    assert inferred(m, kinds["hidden"]) == {"hidden"}
    assert inferred(m, kinds["irq"]) == {"interrupt"}, "past the slice the scheduler's timer cannot fire"
    assert inferred(m, kinds["other"]) == {"switch_other"}
    g = m.gap(kinds["hrtick"][5])
    assert "within a slice (0.700 ms of running) of the CPU's last switch" in g["why_inferred"]
    assert m.report["inference"]["rules"]["hrtick"] == 2 * len(kinds["hrtick"])
    assert "HRTICK's clock event" in m.gap(kinds["hidden"][5])["why_inferred"]


def test_without_hrtick_the_tick_is_the_only_timer(tmp_path):
    """The same gaps where the features say NO_HRTICK: the rules of the tick alone (a
    gap off the tick's phase is an interrupt, one below half the tick hidden)."""
    gaps, end, kinds = slice_run()
    m = merged(tmp_path, gaps, end, {"sched_features": FEATURES_6_12, "sched_base_slice_ns": 3_000_000})
    cal = m.report["inference"]["calibration"]
    assert cal["hrtick"] is False and cal["notes"] == [] and "slice_ms" not in cal
    assert inferred(m, kinds["hrtick"]) == {"interrupt"} and inferred(m, kinds["empty"]) == {"hidden"}
    assert m.report["inference"]["rules"]["hrtick"] == 0


@pytest.mark.parametrize("kernel", [{}, {"sched_features": None, "sched_base_slice_ns": None}])
def test_unknown_features_are_said_and_the_tick_taken_as_the_only_timer(tmp_path, kernel):
    """An older hourglass, or one that could not read debugfs: the calibration says so."""
    gaps, end, kinds = slice_run()
    m = merged(tmp_path, gaps, end, kernel)
    cal = m.report["inference"]["calibration"]
    assert cal["hrtick"] is None
    assert any("features are unknown" in n for n in cal["notes"]), cal["notes"]
    assert inferred(m, kinds["hrtick"]) == {"interrupt"} and inferred(m, kinds["empty"]) == {"hidden"}


def test_with_hrtick_and_no_slice_the_rule_holds_at_any_time(tmp_path):
    """HRTICK on but no base slice (a kernel before 6.6): the window is unbounded, and said."""
    gaps, end, kinds = slice_run()
    m = merged(tmp_path, gaps, end, {"sched_features": FEATURES_7_3})
    cal = m.report["inference"]["calibration"]
    assert cal["hrtick"] is True and cal["slice_ms"] is None
    assert any("slice unknown" in n for n in cal["notes"]), cal["notes"]
    assert inferred(m, kinds["hrtick"]) == {"timer"} and inferred(m, kinds["irq"]) == {"timer"}


def test_hrtick_dl_ends_a_deadline_threads_runtime(tmp_path):
    """HRTICK_DL alone: a deadline thread's window is its reservation's runtime (1 ms here,
    where the base slice would be 0.7): the interrupt-long gap 1.5 ms in is past it."""
    gaps, end, kinds = slice_run()
    dl = [thread(0, policy="deadline", reservation={"kind": "hard", "runtime_ns": 1_000_000,
                                                     "period_ns": 4_000_000})]
    feats = ["NO_HRTICK", "HRTICK_DL"]
    m = merged(tmp_path, gaps, end, {"sched_features": feats, "sched_base_slice_ns": 700_000}, dl)
    assert m.report["inference"]["calibration"]["slice_ms"] == pytest.approx(1.0)
    assert inferred(m, kinds["hrtick"]) == {"timer"} and inferred(m, kinds["irq"]) == {"interrupt"}
    # the same thread under SCHED_OTHER: HRTICK_DL is not its timer
    m = merged(tmp_path, gaps, end, {"sched_features": feats, "sched_base_slice_ns": 700_000})
    assert inferred(m, kinds["hrtick"]) == {"interrupt"}


def yield_run(hrtick_features, periods=150):
    """Two fair threads taking turns on one CPU every 0.7 ms slice, the switch (30 us) as long
    as the tick (4 ms, 30 us), as the scheduler's own timer ends each slice (the lab's
    cpu-yield on 7.3): the switches, at every phase, outnumber the ticks six to one."""
    ivs, t, th, nxt_tick, ticks = [], 0, 0, 4 * MS, []
    nxt_sw = 700 * US
    end = periods * 4 * MS
    while t < end - 1 * MS:
        g0 = min(nxt_tick, nxt_sw)
        ivs.append(iv(t, g0, th, 0))
        if g0 == nxt_tick:
            ticks.append(g0)
            t, nxt_tick = g0 + 30 * US, nxt_tick + 4 * MS
        else:
            th, t = 1 - th, g0 + 30 * US + (g0 // 7 % 5) * US
            nxt_sw = t + 700 * US + (g0 * 7919) % (37 * US)
        if nxt_sw < t + 50 * US:
            nxt_sw = t + 50 * US
        if nxt_tick < t + 50 * US:
            nxt_tick += 4 * MS
    ivs.append(iv(t, end, th, 0))
    kernel = {"sched_features": hrtick_features, "sched_base_slice_ns": 700_000}
    return ivs, ticks, kernel


@pytest.mark.parametrize("features,found", [(FEATURES_7_3, True), (FEATURES_6_12, False)])
def test_with_hrtick_the_tick_is_found_among_the_gaps_the_thread_went_on_after(tmp_path, features, found):
    """Switches at the scheduler's own timer drown the tick among every involuntary gap;
    with HRTICK the tick is searched again without them (switches_left_out)."""
    ivs, ticks, kernel = yield_run(features)
    (tmp_path / "hourglass.hgl").write_bytes(hgl(ivs, kernel, [thread(0), thread(1)]))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([chunk(0, [])], meta=META))
    m = run_merge(tmp_path)
    tick = m.report["inference"]["calibration"]["tick"]["0"]
    if found:
        assert tick["period_ms"] == pytest.approx(4.0, rel=1e-3) and tick["switches_left_out"] is True
        assert inferred(m, [g for g in ticks if any(x["g0"] == g for x in m.gaps)]) == {"timer"}
    else:
        assert tick["period_ms"] is None


@pytest.mark.parametrize("kernel,line", [
    ({"sched_features": FEATURES_7_3, "sched_base_slice_ns": 700_000},
     "calibration: HRTICK, the scheduler's own timer, within 0.700 ms of a switch: 200 gaps, hidden below"),
    ({}, "calibration: the scheduler's features are unknown")])
def test_the_labs_digest_says_what_the_calibration_took(tmp_path, kernel, line):
    """A failing lab check prints the calibration (tools/hgtools/lab/expect.py misread_digest): rule 2b's
    window and, when the features were not recorded, the note that says so."""
    import os
    import sys
    from hgtools.lab import expect
    gaps, end, _ = slice_run()
    m = merged(tmp_path, gaps, end, kernel)
    dig = expect.misread_digest(m.report, m.gaps)
    assert any(d.startswith(line) for d in dig), dig
