"""hgmerge on constructed timelines whose answer is known by hand: one TSC
cycle is one nanosecond (1 GHz), thread 0 is tid 100, thread 1 tid 101.
Each test writes hourglass.hgl and kernel.hgt, runs build/hgmerge, and reads
the report (report_version 2) and the per-gap stream (--gaps-json)."""
import json
import os
import re
import signal
import struct
import subprocess
import time

import pytest

from conftest import TOP, chunk, hgt_file, rec

SWITCH, WAKING, MIGRATE, IRQ_E, IRQ_X, SIRQ_E, SIRQ_X, VEC_E, VEC_X = 1, 2, 5, 7, 8, 9, 10, 11, 12
NMI, HRT_E, COMM, NAME, LOST = 13, 14, 18, 19, 20
META = "format: hgtrace 1\ntsc_khz: 1000000\n"
HGMERGE = os.environ.get("HGMERGE", os.path.join(TOP, "build", "hgmerge"))


def iv(t0, t1, thread, cpu, flags=0):
    return (t0, t1, 0, thread, 1, flags, cpu)


def thread(k, **kw):
    return dict({"thread": k, "tid": 100 + k, "workload": "CPU", "policy": "other", "priority": 0}, **kw)


def hgl(records, threads=2, info_threads=None, t0=0, hypervisor=None, syscall_cycles=None):
    info = {"tsc": {"hz": 1e9, "hypervisor": hypervisor}, "t0_tsc": t0, "duration_ns": 10**9, "complete": True,
            "command": ["hourglass", "test"], "kernel": {"release": "test", "preempt_rt": False},
            "threads": info_threads or [thread(k) for k in range(threads)]}
    if syscall_cycles is not None:
        info["syscall_cycles"] = syscall_cycles
    body = b"".join(struct.pack("<QQQHBBI", *r) for r in records)
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    return (struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0) + sec(b"info", json.dumps(info).encode())
            + sec(b"recs", body) + sec(b"end!", struct.pack("<QQ", len(records), 0)))


def switch(t, prev, nxt, state=0):
    return rec(t, SWITCH, nxt, payload=struct.pack("<IIhhI", prev, state, 120, 120, 0))


def comm(t, pid, name):
    return rec(t, COMM, pid, payload=struct.pack("<II16s", pid, 0, name.encode()))


def irq_name(t, irq, name):
    return rec(t, NAME, irq, payload=name.encode().ljust(32, b"\0"))


class Merged:
    """What hgmerge said: the report, and every gap by its start."""

    def __init__(self, report, gaps):
        self.report = report
        self.gaps = gaps

    def gap(self, g0):
        [g] = [g for g in self.gaps if g["g0"] == g0]
        return g

    def comps(self, g0):
        return {k: v for k, v in self.gap(g0)["components"].items() if v}


def run_merge(d, args=(), expect=0):
    p = subprocess.run([HGMERGE, "--hgl", str(d / "hourglass.hgl"), "--kernel", str(d / "kernel.hgt"),
                        "--report", str(d / "report.json"), "--gaps-json", str(d / "gaps.jsonl"), *args],
                       capture_output=True, text=True)
    assert p.returncode == expect, p.stderr
    if expect:
        return p.stderr
    gaps = [json.loads(l) for l in (d / "gaps.jsonl").read_text().splitlines()]
    return Merged(json.loads((d / "report.json").read_text()), gaps)


def merged(d, records, kernel_chunks, window=(0, 10**12), threads=2, info_threads=None, meta=META,
           hypervisor=None, syscall_cycles=None):
    (d / "hourglass.hgl").write_bytes(hgl(records, threads, info_threads, hypervisor=hypervisor,
                                          syscall_cycles=syscall_cycles))
    (d / "kernel.hgt").write_bytes(hgt_file(kernel_chunks, meta=meta, window=window))
    return run_merge(d)


def test_hard_irq_nested_in_softirq(tmp_path):
    m = merged(tmp_path, [iv(1000, 2000, 0, 0), iv(5000, 6000, 0, 0)],
               [chunk(0, [rec(2100, SIRQ_E, 3), rec(2500, IRQ_E, 30), rec(2900, IRQ_X, 30), rec(4800, SIRQ_X, 3)])])
    assert m.comps(2000) == {"softirq NET_RX": 2300, "irq 30": 400, "self": 300}
    g = m.gap(2000)
    assert (g["actual"], g["kind"], g["inferred"]) == ("interrupt", "softirq", "interrupt")
    assert g["handler_cycles"] == 2700 and g["self_cycles"] == 300 and g["n_events"] == 4


def test_switch_to_another_task(tmp_path):
    m = merged(tmp_path, [iv(10000, 11000, 0, 0), iv(20000, 21000, 0, 0)],
               [chunk(0, [comm(11000, 555, "stress"), rec(11100, VEC_E, 236, flags=0),
                          rec(11500, VEC_X, 236, flags=0), switch(11600, 100, 555), switch(19800, 555, 100)])])
    assert m.comps(11000) == {"task stress:555": 8200, "local_timer": 400, "self": 400}
    g = m.gap(11000)
    assert g["actual"] == "switch_other" and g["preempted"] and g["out_to"] == "stress:555"
    assert g["cause"] == "switched to stress:555"
    assert {"cause": "switched to stress:555", "gaps": 1, "total_ms": 0.009, "median_us": 9.0} in m.report["causes"]
    # the time lost: each component its own time, the thread's own on a row of its own
    lost = {r["what"]: r["ms"] for r in m.report["time_lost"]}
    assert lost["task stress:555"] == 0.0082 and lost["local_timer"] == 0.0004
    assert any(k.startswith("nothing recorded") and v == 0.0004 for k, v in lost.items())


def test_switch_between_hourglass_threads(tmp_path):
    m = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(71000, 80000, 1, 0)],
               [chunk(0, [rec(70100, VEC_E, 236), rec(70300, VEC_X, 236), switch(70500, 100, 101)])])
    g = m.gap(70000)
    assert (g["thread"], g["next_thread"]) == (0, 1)
    assert g["inferred"] == "switch_hg" and g["actual"] == "switch_hg"
    assert g["why_inferred"] == "hg-thread-0 stopped and hg-thread-1 started"
    assert m.comps(70000) == {"local_timer": 200, "self": 300, "task hg-thread-1": 500}


def test_switch_path_is_hourglass_threads_own_time(tmp_path):
    """Gap stream 1.1: a switch's own path is what the kernel charged to hourglass's threads: the
    leaving one's self (100 before the tick, 200 after it), hg-thread-2 (1000) and the coming
    hg-thread-1's kernel entry (7000); not the tick (200) nor ktimers (1500). tick_cycles is the
    local timer's."""
    m = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(80000, 90000, 1, 0)],
               [chunk(0, [comm(60000, 14, "ktimers/0"), rec(70100, VEC_E, 236), rec(70300, VEC_X, 236),
                          switch(70500, 100, 14), switch(72000, 14, 102), switch(73000, 102, 101)])], threads=3)
    g = m.gap(70000)
    assert m.comps(70000) == {"self": 300, "local_timer": 200, "task ktimers/0:14": 1500,
                              "task hg-thread-2": 1000, "task hg-thread-1": 7000}
    assert g["actual"] == "switch_hg"
    assert (g["switch_path_cycles"], g["tick_cycles"], g["tick"]) == (8300, 200, True)
    assert (g["self_cycles"], g["handler_cycles"]) == (300, 200)


def test_switch_path_and_tick_of_gaps_without_a_switch(tmp_path):
    """Without a switch the path is the thread's self alone; a gap with no tick has tick_cycles 0;
    a tick whose whole time an NMI took is still in the gap (tick), with 0 cycles."""
    m = merged(tmp_path, [iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0), iv(5000, 6000, 0, 0)],
               [chunk(0, [rec(2100, IRQ_E, 30), rec(2600, IRQ_X, 30),
                          rec(4100, VEC_E, 236), rec(4300, NMI, 5, payload=struct.pack("<II", 200, 1)),
                          rec(4300, VEC_X, 236)])], threads=1)
    g = m.gap(2000)
    assert (g["switch_path_cycles"], g["tick_cycles"], g["tick"]) == (500, 0, False)
    g = m.gap(4000)
    assert m.gap(4000)["components"] == {"nmi": 200, "self": 800, "local_timer": 0}
    assert (g["switch_path_cycles"], g["tick_cycles"], g["tick"]) == (800, 0, True)


def test_kernel_tick_period_and_longest_handler_per_cpu(tmp_path):
    """report 2.1's kernel_tick. CPU 0: timer gaps start at 1000, 5000, 9000 and 17000 (the tick at
    13000 fell in a gap that was not the timer's): distances 4000, 4000, 8000, median 4000; its
    longest handler 350. CPU 1: one timer gap (100 of tick): no period; an irq gap with 150 of tick
    in it: the longest handler is any gap's."""
    m = merged(tmp_path, [iv(0, 1000, 0, 0), iv(1500, 5000, 0, 0), iv(5500, 9000, 0, 0), iv(9500, 13000, 0, 0),
                          iv(13500, 17000, 0, 0), iv(17500, 20000, 0, 0),
                          iv(0, 2000, 1, 1), iv(2500, 4000, 1, 1), iv(5000, 8000, 1, 1)],
               [chunk(0, [rec(1100, VEC_E, 236), rec(1400, VEC_X, 236), rec(5100, VEC_E, 236), rec(5300, VEC_X, 236),
                          rec(9100, VEC_E, 236), rec(9400, VEC_X, 236), rec(13050, IRQ_E, 30),
                          rec(13400, IRQ_X, 30), rec(13400, VEC_E, 236), rec(13450, VEC_X, 236),
                          rec(17100, VEC_E, 236), rec(17450, VEC_X, 236)]),
                chunk(1, [rec(2100, VEC_E, 236), rec(2200, VEC_X, 236), rec(4100, IRQ_E, 31), rec(4700, IRQ_X, 31),
                          rec(4700, VEC_E, 236), rec(4850, VEC_X, 236)])])
    assert [g["actual"] for g in m.gaps if g["cpu"] == 0] == ["timer", "timer", "timer", "interrupt", "timer"]
    kt = m.report["kernel_tick"]
    assert kt["0"] == {"timer_gaps": 4, "period_cycles": 4000, "period_ms": 0.004,
                       "handler_max_cycles": 350, "handler_max_us": 0.35}
    assert kt["1"] == {"timer_gaps": 1, "period_cycles": None, "period_ms": None,
                       "handler_max_cycles": 150, "handler_max_us": 0.15}
    assert m.report["report_minor"] == 6
    assert m.report["gaps"]["class_order"] == ["switch_hg", "switch_other", "timer", "interrupt", "hidden",
                                               "other", "unexplainable"]


def test_switch_between_hourglass_threads_via_a_kernel_thread(tmp_path):
    """PREEMPT_RT: the tick wakes ktimers, which runs before thread 1: still a
    switch between hourglass threads, with ktimers among its components."""
    m = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(75000, 80000, 1, 0)],
               [chunk(0, [comm(60000, 14, "ktimers/0"), rec(70100, VEC_E, 236), rec(70300, VEC_X, 236),
                          switch(70500, 100, 14), switch(74000, 14, 101)])])
    g = m.gap(70000)
    assert g["actual"] == "switch_hg" and g["inferred"] == "switch_hg"
    assert m.comps(70000)["task ktimers/0:14"] == 3500


def test_switch_named_after_the_task_that_took_it(tmp_path):
    """PREEMPT_RT: ktimers runs 2 us at the tick, then a FIFO task woken by its
    timer runs 15 us: the gap went to the task, not to ktimers, though ktimers
    was switched to first (out_to says so). The load's label counts it as caused."""
    (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(60000, 70000, 0, 0), iv(88000, 90000, 0, 0)], 1))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file(
        [chunk(0, [comm(60000, 14, "ktimers/0"), comm(60000, 555, "periodic"), rec(70100, VEC_E, 236),
                   rec(70300, VEC_X, 236), switch(70500, 100, 14), switch(72500, 14, 555),
                   switch(87500, 555, 100)])], meta=META, window=(0, 10**12)))
    m = run_merge(tmp_path, ["--label", "comm:periodic=load"])
    g = m.gap(70000)
    assert m.comps(70000) == {"task periodic:555 [load]": 15000, "task ktimers/0:14": 2000, "local_timer": 200,
                              "self": 800}
    assert g["actual"] == "switch_other" and g["out_to"] == "ktimers/0:14"
    assert g["cause"] == "switched to periodic:555 [load]"
    assert [c["cause"] for c in m.report["causes"]] == ["switched to periodic:555 [load]"]
    [load] = m.report["loads"]
    assert load["gaps_caused"] == 1


def test_switch_named_after_the_task_that_preempted(tmp_path):
    """A task other than ktimers switched to first names the gap, even when another
    ran longer after it: cyclictest preempts hourglass for 2 us, then PREEMPT_RT's
    thread of a virtio irq runs 15 us (6.12-rt, tests/guest test_known_interrupt_source)."""
    m = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(88000, 90000, 0, 0)],
               [chunk(0, [comm(60000, 409, "cyclictest"), comm(60000, 172, "irq/39-virtio1-"),
                          switch(70500, 100, 409), switch(72500, 409, 172), switch(87500, 172, 100)])])
    g = m.gap(70000)
    assert m.comps(70000)["task irq/39-virtio1-:172"] == 15000 and m.comps(70000)["task cyclictest:409"] == 2000
    assert g["out_to"] == "cyclictest:409" and g["cause"] == "switched to cyclictest:409"


def test_migration_mid_gap(tmp_path):
    m = merged(tmp_path, [iv(30000, 31000, 1, 1), iv(32000, 33000, 0, 1), iv(40000, 41000, 1, 0)],
               [chunk(1, [switch(31100, 101, 100), rec(31200, MIGRATE, 101, payload=struct.pack("<HHI", 1, 0, 0))]),
                chunk(0, [switch(39900, 0, 101)])])
    assert m.report["migrations"] == {"inferred": 1, "confirmed": 1, "kernel_migrations_of_hourglass_threads": 1}
    g = m.gap(31000)            # on CPU 1, thread 1 out, thread 0 in
    assert g["migrated"] and g["actual"] == "switch_hg"


def test_loss_inside_a_gap_is_unexplainable(tmp_path):
    m = merged(tmp_path, [iv(40000, 50000, 0, 0), iv(60000, 61000, 0, 0), iv(70000, 71000, 0, 0)],
               [chunk(0, [rec(45000, VEC_E, 236), rec(45100, VEC_X, 236), rec(55000, LOST, 0, payload=struct.pack("<Q", 7)),
                          rec(61500, VEC_E, 236), rec(61600, VEC_X, 236)])])
    lost, after = m.gap(50000), m.gap(61000)
    assert lost["actual"] == "unexplainable" and "lost" in lost["why"]
    assert after["actual"] == "timer"
    assert m.report["gaps"]["unexplainable"] == 1 and m.report["gaps"]["scored"] == 1


def test_loss_marked_after_the_gap_reaches_back_into_it(tmp_path):
    """The LOST record comes after the gap, but its window opens at the CPU's
    previous event, before the gap's end: the gap is unexplainable."""
    m = merged(tmp_path, [iv(40000, 50000, 0, 0), iv(60000, 61000, 0, 0), iv(90000, 91000, 0, 0)],
               [chunk(0, [rec(45000, VEC_E, 236), rec(45100, VEC_X, 236),
                          rec(65000, LOST, 0, payload=struct.pack("<Q", 7))])])
    assert m.gap(50000)["actual"] == "unexplainable"          # loss window 45100..65000 covers 50000..60000
    assert m.gap(61000)["actual"] == "unexplainable"          # ... and 61000..90000 starts inside it


def test_gaps_at_start_and_end_outside_the_window(tmp_path):
    # the window covers 92% of the run (100..9500): less than 90% is refused
    m = merged(tmp_path, [iv(100, 200, 0, 0), iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0), iv(9000, 9500, 0, 0)],
               [chunk(0, [rec(2100, VEC_E, 236), rec(2200, VEC_X, 236)])], window=(300, 8990))
    assert m.gap(200)["why"] == "outside the recording window"
    assert m.gap(4000)["actual"] == "unexplainable"
    assert m.gap(2000)["actual"] == "timer"


S = 10**9     # a second at the 1 GHz of these files


@pytest.mark.parametrize("window,contradicted", [
    ((S // 20, 8 * S), False),                          # the records' span, more or less
    ((S // 20, 2600 * S // 1000 + S // 20), False),     # a record 50 ms after the stop: a recorder's stop
    ((0, 2**62), True),                                 # the generated run's old window (issue 37, item 3)
    ((2300 * S // 1000, 8 * S), True),                  # a record 0.2 s before the window opens
    ((S // 20, 2400 * S // 1000), True),                # ... 0.2 s after it closes
    ((S // 20, 2600 * S // 1000 + 9 * S), False),       # 9 s past the last record: an idle machine's stop
    ((S // 20, 2600 * S // 1000 + 11 * S), True),       # 11 s past it, and more than the span
])
def test_a_window_its_records_contradict_is_warned_about(tmp_path, window, contradicted):
    """From any writer: a window a record lies 0.1 s or more outside of, or one reaching past
    its records by more than the larger of 10 s and their span, is named in the report's
    warnings with both spans."""
    # hourglass's run inside every window (hgmerge refuses a recording that covers less than 90% of it)
    recs = [iv(2310 * S // 1000, 2330 * S // 1000, 0, 0), iv(2350 * S // 1000, 2370 * S // 1000, 0, 0),
            iv(2380 * S // 1000, 2390 * S // 1000, 0, 0)]
    m = merged(tmp_path, recs, [chunk(0, [rec(2100 * S // 1000, VEC_E, 236), rec(2600 * S // 1000, VEC_X, 236)])],
               window=window)
    said = [w for w in m.report["warnings"] if "is not what its records span" in w]
    assert bool(said) == contradicted, m.report["warnings"]
    if contradicted:
        first = 2.1 - window[0] / 1e9
        assert f"records span (t={first:.6f} s to t={first + 0.5:.6f} s)" in said[0], said


def test_two_cpus_and_hidden(tmp_path):
    m = merged(tmp_path, [iv(0, 1000, 0, 0), iv(1500, 3000, 0, 0), iv(5000, 6000, 0, 0),
                          iv(0, 1200, 1, 1), iv(2000, 3000, 1, 1)],
               [chunk(1, [rec(1300, IRQ_E, 11), rec(1900, IRQ_X, 11)]),
                chunk(0, [rec(3100, VEC_E, 236), rec(4900, VEC_X, 236)])])
    assert m.gap(1000)["actual"] == "hidden"          # CPU 1's irq is not CPU 0's
    assert m.comps(1200) == {"irq 11": 600, "self": 200}
    assert m.comps(3000) == {"local_timer": 1800, "self": 200}
    # hidden gaps are steal, counted apart from the headline
    assert m.report["steal"]["hidden_gaps"] == 1 and m.report["steal"]["hidden_ms"] == 0.0005
    assert m.report["inference"]["headline"]["gaps"] == 2


def tick_run():
    """Gaps every 4 ms are the tick; others between them are interrupts, and
    those shorter than half the cheapest tick are hidden (below the kernel)."""
    ivs, t = [], 0
    for i in range(60):
        ivs.append(iv(t, t + 4_000_000 - 2000, 0, 0))       # tick gap of 2 us every 4 ms
        t += 4_000_000
    split = []
    for k, gap in ((0, 1500), (1, 300)):                    # odd gaps of 1.5 us and 0.3 us
        for r in ivs[k::3]:
            mid = r[0] + 1_300_000 + (r[0] // 4_000_000) * 7919
            split.append(iv(r[0], mid, 0, 0))
            split.append(iv(mid + gap, r[1], 0, 0))
    ivs = [r for r in ivs if r not in ivs[0::3] and r not in ivs[1::3]] + split
    return sorted(ivs)


def test_tick_inferred_from_recurrence(tmp_path):
    m = merged(tmp_path, tick_run(), [], threads=1)
    cal = m.report["inference"]["calibration"]
    assert cal["tick"]["0"]["period_ms"] == pytest.approx(4.0, rel=1e-3)
    assert cal["hidden_limit_us"] == pytest.approx(1.0)
    length = lambda g: g["g1"] - g["g0"]
    by_len = {n: [g["inferred"] for g in m.gaps if length(g) == n] for n in (2000, 1500, 300)}
    assert by_len[2000] and set(by_len[2000]) == {"timer"}
    assert by_len[1500] and set(by_len[1500]) == {"interrupt"}
    assert by_len[300] and set(by_len[300]) == {"hidden"}


def test_the_cheapest_system_call_is_the_hidden_floor(tmp_path):
    """With hourglass's measure of the cheapest system call (syscall_cycles), a gap is hidden
    only below it: an interrupt cheaper than half the tick (a device's handler that wakes no
    one) is an interrupt. A band that recurs at the tick's period but costs less than the
    system call ran no kernel code: not the tick (the two-vCPU emulator's 0.96 us gaps)."""
    ivs, t = [], 0
    for i in range(60):
        cut = [t + 1_000_000, t + 1_000_000 + 100]            # 100 ns every 4 ms, 1 ms after the tick
        if i % 3 == 0:
            mid = t + 2_300_000 + i * 7919
            cut += [mid, mid + 700]                          # a 0.7 us interrupt
        elif i % 3 == 1:
            mid = t + 2_300_000 + i * 7919
            cut += [mid, mid + 150]                          # a 0.15 us stall
        edges = [t] + cut + [t + 4_000_000 - 2000]           # then the 2 us tick
        ivs += [iv(a, b, 0, 0) for a, b in zip(edges[0::2], edges[1::2])]
        t += 4_000_000
    m = merged(tmp_path, sorted(ivs), [], threads=1, syscall_cycles=400)
    cal = m.report["inference"]["calibration"]
    assert cal["tick"]["0"]["period_ms"] == pytest.approx(4.0, rel=1e-3) and cal["tick"]["0"]["floor_us"] > 0.1
    assert cal["hidden_limit_us"] == pytest.approx(0.4)
    assert cal["hidden_limit_basis"] == "the cheapest system call hourglass measured"
    by_len = lambda n: {g["inferred"] for g in m.gaps if g["g1"] - g["g0"] == n}
    assert by_len(2000) == {"timer"} and by_len(700) == {"interrupt"}
    assert by_len(150) == {"hidden"} and by_len(100) == {"hidden"}
    # the same run without the measure (files before it): the 100 ns band is the cheapest that
    # recurs, so it is taken for the tick, and half of it is the floor: what the measure prevents
    m = merged(tmp_path, sorted(ivs), [], threads=1)
    cal = m.report["inference"]["calibration"]
    assert cal["hidden_limit_basis"] == "half the cheapest tick" and cal["hidden_limit_us"] == pytest.approx(0.05)
    assert "timer" not in {g["inferred"] for g in m.gaps if g["g1"] - g["g0"] == 2000}


def test_tick_found_under_a_flood_of_tiny_gaps(tmp_path):
    """An emulator's thousands of sub-microsecond gaps must not hide the tick:
    the search raises its length floor until the tick recurs cleanly."""
    ivs, t = [], 0
    for i in range(40):
        start = t
        for j in range(200):                                 # 200 tiny gaps of 200 ns per tick
            end = start + 19_000 + (j * 7 + i * 13) % 977
            ivs.append(iv(start, end, 0, 0))
            start = end + 200
        ivs.append(iv(start, t + 4_000_000 - 5000, 0, 0))    # then the 5 us tick
        t += 4_000_000
    m = merged(tmp_path, ivs, [], threads=1)
    cal = m.report["inference"]["calibration"]["tick"]["0"]
    assert cal["period_ms"] == pytest.approx(4.0, rel=1e-3) and cal["floor_us"] > 0
    assert all(g["inferred"] == "timer" for g in m.gaps if g["g1"] - g["g0"] == 5000)
    assert all(g["inferred"] == "hidden" for g in m.gaps if g["g1"] - g["g0"] == 200)


def test_wakeup_decomposed_and_miss_explained(tmp_path):
    """A LAT wake-up due at 100000: tick at 100500, waking at 100800, a task
    runs until the switch at 103000, user space at 103400. And a missed
    period 200000..300000 during which irq 40 ran 30000 cycles."""
    wake = (100000, 103400, 3400, 0, 3, 0x10 | 2, 0)          # WAKE, LAT, HR; lateness 3.4 us
    miss = (200000, 0, 300000, 0, 2, 1, 0)                    # JOB missed
    m = merged(tmp_path, [wake, iv(103400, 150000, 0, 0), iv(150500, 199000, 0, 0), miss],
               [chunk(0, [comm(99000, 777, "hog"), switch(99500, 0, 777), rec(100500, VEC_E, 236),
                          rec(100600, HRT_E, 1, payload=b"\0" * 8), rec(100800, WAKING, 100, payload=b"\0" * 8),
                          rec(100900, VEC_X, 236), switch(103000, 777, 100),
                          rec(210000, IRQ_E, 40), rec(240000, IRQ_X, 40)])], threads=1)
    d = m.report["latency"]["worst"]
    assert d["stages_us"] == pytest.approx({"timer": 0.5, "irq": 0.3, "sched": 2.2, "return": 0.4})
    assert d["largest_stage"] == "sched" and d["blame"] == "task hog:777"
    assert d["latency_us"] == pytest.approx(3.4) and d["complete"] and d["name"] == "hg-thread-0"
    t0 = m.report["latency"]["threads"]["0"]
    assert t0["wakeups"] == 1 and t0["decomposed"] == 1 and t0["sched"]["max_us"] == pytest.approx(2.2)
    # report 2.1: the stages' names, in the order they happen, for every reader
    assert m.report["latency"]["stages"] == ["timer", "irq", "sched", "return"]
    md = m.report["missed_deadlines"]
    assert md["count"] == 1
    [x] = md["listed"]
    assert x["instead"][0] == {"what": "irq 40", "ms": pytest.approx(0.03)}
    assert x["period_ms"] == pytest.approx(0.1)


def test_a_job_written_after_later_intervals_still_opens_its_window(tmp_path):
    """hourglass writes a job when it ends: its record follows the intervals
    of its period in the file. The merged stream puts it back at its release."""
    miss = (200000, 0, 300000, 0, 2, 1, 0)
    m = merged(tmp_path, [iv(150000, 199000, 0, 0), iv(201000, 250000, 0, 0), iv(251000, 320000, 0, 0), miss],
               [chunk(0, [rec(210000, IRQ_E, 40), rec(240000, IRQ_X, 40)])], threads=1)
    [x] = m.report["missed_deadlines"]["listed"]
    assert x["instead"] == [{"what": "irq 40", "ms": pytest.approx(0.03)}]


def test_on_cpu_time_from_switches(tmp_path):
    """Running at 100 (the window opens); out at 300, in at 500, out at 900,
    in at 950; window 100..1000: on CPU 200 + 400 + 50 cycles."""
    acct = {"tsc0": 100, "tsc1": 1000, "schedstat_on_cpu_ns": 650, "schedstat_slices": 2,
            "rusage_user_ns": 600, "rusage_system_ns": 0, "thread_cputime_ns": 650}
    m = merged(tmp_path, [iv(100, 300, 0, 0), iv(500, 900, 0, 0), iv(950, 1000, 0, 0)],
               [chunk(0, [switch(50, 0, 100), switch(300, 100, 0), switch(500, 0, 100), switch(900, 100, 0),
                          switch(950, 0, 100), switch(2000, 100, 0)])],
               threads=1, info_threads=[thread(0, accounting=acct, cpu_time_ns=650)])
    [row] = m.report["microstates"]
    assert row["kernel_ns"] == 650 and row["kernel_switches_in"] == 2
    assert row["schedstat_vs_kernel"] == pytest.approx(0.0) and row["rusage_vs_kernel"] == pytest.approx(600 / 650 - 1,
                                                                                                          abs=1e-4)


def test_everything_at_once(tmp_path):
    """One timeline with a bit of everything: comms and irq names, an NMI
    moving time, nested handlers, an exit without its entry, a loss, a
    migration, switches between threads and to others, a yield, a sleep, a
    wake-up window and a missed period, accounting windows; and the same
    recording packed gives the same report."""
    acct = {"tsc0": 0, "tsc1": 60000, "schedstat_on_cpu_ns": 1, "schedstat_slices": 1,
            "rusage_user_ns": 1, "rusage_system_ns": 0, "thread_cputime_ns": 1}
    threads = [thread(0, policy="fifo", priority=50, accounting=acct),
               thread(1, policy="fifo", priority=51, workload="CPU_PERIODIC")]
    recs = [iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0, flags=1), iv(4500, 9000, 1, 0),
            iv(9800, 20000, 0, 0, flags=2), iv(20500, 30000, 1, 1), iv(31000, 40000, 0, 1),
            iv(41000, 50000, 0, 1), iv(52000, 60000, 1, 0),
            (44000, 50000, 6000, 0, 3, 0x10 | 2, 1),       # a wake-up of thread 0 on CPU 1, 6 us late
            (41000, 0, 49000, 1, 2, 1, 0)]                  # a missed period of thread 1
    chunks = [
        chunk(0, [comm(500, 777, "hog"), irq_name(500, 30, "eth0"), rec(2100, SIRQ_E, 3), rec(2300, IRQ_E, 30),
                  rec(2600, NMI, 5, payload=struct.pack("<II", 150, 1)), rec(2700, IRQ_X, 30),
                  rec(2900, SIRQ_X, 3), rec(3500, IRQ_X, 31), switch(4100, 100, 101),
                  rec(9100, VEC_E, 236), rec(9300, VEC_X, 236), switch(9400, 101, 777), switch(9700, 777, 100),
                  switch(20100, 100, 0), rec(45000, NMI, 6, payload=struct.pack("<II", 3000, 1)),
                  rec(51000, VEC_E, 236, flags=1), rec(51200, VEC_X, 236, flags=1), switch(51900, 0, 101)]),
        chunk(1, [rec(30200, LOST, 0, payload=struct.pack("<Q", 3)), switch(30500, 101, 100),
                  rec(30600, MIGRATE, 101, payload=struct.pack("<HHI", 1, 0, 0)),
                  switch(40100, 100, 777), switch(40900, 777, 100),
                  rec(44500, VEC_E, 236), rec(44600, HRT_E, 1, payload=b"\0" * 8),
                  rec(44800, WAKING, 100, payload=b"\0" * 8), rec(45000, VEC_X, 236),
                  rec(45500, IRQ_E, 30), rec(45900, IRQ_X, 30)])]
    m = merged(tmp_path, recs, chunks, window=(0, 10**6), info_threads=threads)
    r = m.report
    assert r["gaps"]["total"] == 6 and r["gaps"]["voluntary"] == 2 and r["gaps"]["unexplainable"] == 1
    # 2000..3000 on CPU 0: softirq NET_RX, irq 30 eth0 with an NMI of 150 ns inside, then self
    assert m.comps(2000) == {"softirq NET_RX": 400, "irq 30 eth0": 250, "nmi": 150, "self": 200}
    # the loss at 30200 on CPU 1 (no event before it there): 30000..31000 unexplainable
    assert m.gap(30000)["actual"] == "unexplainable" and "lost" in m.gap(30000)["why"]
    # 40000..41000 on CPU 1: hog ran 800 of it
    assert m.gap(40000)["actual"] == "switch_other" and m.comps(40000)["task hog:777"] == 800
    assert r["latency"]["threads"]["0"]["wakeups"] == 1 and r["microstates"][0]["thread"] == 0
    assert r["migrations"]["confirmed"] == 1
    # the NMI in the missed period took its 3 us from idle
    [miss] = r["missed_deadlines"]["listed"]
    assert {"what": "nmi", "ms": pytest.approx(0.003)} in miss["instead"]
    # packed (hgtrace pack, record -z), the recording says the same
    subprocess.run([os.path.join(TOP, "build", "hgtrace"), "pack", str(tmp_path / "kernel.hgt")], check=True)
    again = run_merge(tmp_path).report
    for x in (r, again):
        x.pop("merger")
        x["kernel_recording"].pop("meta")
    assert again == r


def test_the_summary_counts_explained_gaps_among_the_involuntary(tmp_path):
    """The summary's "the kernel explains N of the M others" counts involuntary gaps the
    kernel explains (hgg_explained). It subtracted every hidden gap from the involuntary
    ones until 2026-11-28, voluntary ones too: a yield with no kernel event in it made an
    explained gap vanish (cpu-yield on 6.12 said 677 of 3929 for 738). Three gaps on one
    CPU: 2000-3000 with nothing in it (hidden), 4000-5000 after a yield with nothing in it
    (voluntary, hidden), 6000-7000 holding an irq (explained)."""
    recs = [iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0, flags=1), iv(5000, 6000, 0, 0), iv(7000, 8000, 0, 0)]
    chunks = [chunk(0, [rec(6200, IRQ_E, 30), rec(6600, IRQ_X, 30)])]
    r = merged(tmp_path, recs, chunks, window=(0, 10**6)).report
    assert r["gaps"]["total"] == 3 and r["gaps"]["voluntary"] == 1, r["gaps"]
    assert r["summary"][0].startswith("gaps: 3 (1 voluntary); the kernel explains 1 of the 2 others "
                                               "(50.0%)"), r["summary"]


def test_a_virtual_machine_says_so_after_the_score(tmp_path):
    """A run hourglass recorded in a virtual machine (its CPUID hypervisor vendor in the info's
    tsc.hypervisor) gets a third summary line, with the figures that say what the score
    measures: the hidden share (one hidden gap of 1000 ns in a 1 s run: 0.00%) and the tick's
    gaps (one of 400 cycles at 1 GHz, its handler 300) against the switch limit. None on bare
    metal (null), nor from a writer that does not say (absent)."""
    recs = [iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0), iv(4400, 5000, 0, 0)]
    chunks = [chunk(0, [rec(4050, VEC_E, 236, flags=0), rec(4350, VEC_X, 236, flags=0)])]
    r = merged(tmp_path, recs, chunks, window=(0, 10**6), hypervisor="TCGTCGTCGTCG").report
    assert len(r["summary"]) == 3, r["summary"]
    line = r["summary"][2]
    assert line.startswith("virtual machine (CPUID hypervisor 'TCGTCGTCGTCG'): hidden gaps 0.00% of the run; "
                           "the tick's 1 gaps 0.4 us at the median (its handler 0.3 us) against a switch limit of "), line
    assert line.endswith(" us: the score measures the machine as much as the inference"), line
    for hv in (None,):
        r = merged(tmp_path, recs, chunks, window=(0, 10**6), hypervisor=hv).report
        assert len(r["summary"]) == 2 and not any("virtual machine" in x for x in r["summary"]), r["summary"]


def test_per_gap_stream_binary_and_json_agree(tmp_path):
    m = merged(tmp_path, [iv(10000, 11000, 0, 0), iv(20000, 21000, 0, 0), iv(22000, 23000, 1, 0)],
               [chunk(0, [comm(11000, 555, "stress"), switch(11600, 100, 555), switch(19800, 555, 100),
                          switch(21500, 100, 101)])])
    run_merge(tmp_path, ["--gaps", str(tmp_path / "gaps.hgg")])
    data = (tmp_path / "gaps.hgg").read_bytes()
    magic, major, minor, size, hz, base, nthreads, ncpus = struct.unpack_from("<8sHHIdQII", data, 0)
    assert magic == b"HGGAPS\n\0" and (major, minor, size, hz, nthreads) == (1, 4, 176, 1e9, 2)
    n = (len(data) - 40 - 16) // size
    assert n == len(m.gaps) == 2 and data[-16:-8] == b"HGGEND\n\0"
    assert struct.unpack_from("<Q", data, len(data) - 8)[0] == 2
    classes = ["switch_hg", "switch_other", "timer", "interrupt", "hidden", "other", "unexplainable", "voluntary"]
    for k, g in enumerate(m.gaps):
        g0, g1, cpu, th, nxt, vol, inf, rule, cls = struct.unpack_from("<QQIHHBBBB", data, 40 + k * size)
        assert (g0, g1, cpu, th, nxt) == (g["g0"], g["g1"], g["cpu"], g["thread"], g["next_thread"])
        assert (classes[inf], classes[cls]) == (g["inferred"], g["actual"])
        # 1.1's fields, after 1.0's 144 bytes; 1.4's after 1.1's 160
        assert struct.unpack_from("<QQ", data, 40 + k * size + 144) == (g["switch_path_cycles"], g["tick_cycles"])
        turn, turn_cpu = struct.unpack_from("<Qi", data, 40 + k * size + 160)
        assert (turn, None if turn_cpu < 0 else turn_cpu) == (g["turn_cycles"], g["turn_cpu"])


def test_scores_per_class_and_macro_f1(tmp_path):
    """Two switches right, one interrupt read as a switch to another task:
    switch_hg P = R = 1; interrupt R = 0; switch_other P = 0; macro F1 over
    the three classes that occur = (1 + 0 + 0) / 3."""
    m = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(71000, 80000, 1, 0), iv(81000, 90000, 0, 0),
                          iv(190000, 200000, 0, 0)],
               [chunk(0, [switch(70500, 100, 101), switch(80500, 101, 100),
                          rec(91000, IRQ_E, 11), rec(189000, IRQ_X, 11)])])
    inf = m.report["inference"]
    assert inf["classes"]["switch_hg"]["precision"] == 1.0 and inf["classes"]["switch_hg"]["recall"] == 1.0
    assert inf["classes"]["interrupt"]["recall"] == 0.0 and inf["classes"]["switch_other"]["precision"] == 0.0
    assert inf["macro_f1"] == pytest.approx(1 / 3, abs=1e-4)
    assert inf["headline"] == {"gaps": 3, "correct": 2, "accuracy": pytest.approx(2 / 3, abs=1e-4)}
    [d] = m.report["disagreements"]["listed"]
    assert d["inferred"] == "switch_other" and d["actual"] == "interrupt" and d["primary"] == "irq 11"
    assert d["events"][0] == "+1.0us irq 11" and m.report["disagreements"]["count"] == 1


def generated_run(d, events, cpus=(0, 1)):
    """bench/merge_speed.py's generated run of about @events kernel events, written into @d,
    its two threads on @cpus."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("merge_speed", os.path.join(TOP, "bench", "merge_speed.py"))
    ms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ms)
    ms.generate(str(d), events, cpus)


def test_generated_run_all_right(tmp_path):
    """The benchmark's generated run, small: ticks found, irqs, one CPU each."""
    generated_run(tmp_path, 50000)
    r = run_merge(tmp_path).report
    assert r["gaps"]["classes"]["timer"] > 0 and r["inference"]["all"]["accuracy"] == 1.0


def test_generated_run_window_is_what_its_events_span(tmp_path):
    """The generated recording's window runs from hourglass's zero to the run's last event,
    kernel's or hourglass's (issue 37: it said 0..2^62, and the report's window ran to
    t=4611686018 s)."""
    from hgtools.recordings import read_hgl, read_hgt
    generated_run(tmp_path, 20000)
    k, h = read_hgt(str(tmp_path / "kernel.hgt")), read_hgl(str(tmp_path / "hourglass.hgl"))
    last = max(max(e.tsc for e in k.events), max(x.t1 for x in h.records))
    assert k.window == (h.info["t0_tsc"], last)


@pytest.mark.parametrize("cpus", [(0, 255), (200, 3)])
def test_cpu_numbers_change_nothing_but_names(tmp_path, cpus):
    """The same run with its CPUs numbered otherwise (far apart, or the first thread's
    the higher) merges to the same report, the CPUs' own names aside: the loops that
    walk the CPUs in use (drain, the calibration's, what the others ran) walk them in
    ascending order as a loop over every index did."""
    def report(d, c):
        os.makedirs(d)
        generated_run(d, 40000, c)
        r = run_merge(d).report
        ticks = r["inference"]["calibration"]["tick"]
        assert sorted(int(x) for x in ticks) == sorted(c), ticks
        r["inference"]["calibration"]["tick"] = [ticks[str(x)] for x in c]    # by thread
        assert sorted(int(x) for x in r["kernel_tick"]) == sorted(c), r["kernel_tick"]
        r["kernel_tick"] = [r["kernel_tick"][str(x)] for x in c]
        lg = r["gaps"]["longest"]
        lg["why_inferred"] = lg["why_inferred"].replace(f"CPU {lg['cpu']}", f"CPU #{c.index(lg['cpu'])}")
        lg["cpu"] = c.index(lg["cpu"])
        for k in ("merger", "run", "kernel_recording"):
            r.pop(k, None)
        return r

    plain, renumbered = report(tmp_path / "a", (0, 1)), report(tmp_path / "b", cpus)
    assert plain["gaps"]["total"] > 7000 and plain["inference"]["all"]["accuracy"] == 1.0
    assert renumbered == plain


def test_a_thousand_cpus_need_few_open_files(tmp_path):
    """A run on 1024 CPUs (a thread on each) merged with both exports at a limit of
    64 open files: the kernel's CPUs are read through one descriptor, the
    disagreements wait in one temporary file, the trace.dat's pages in one per
    buffer. Every CPU's events reach the trace.dat; the disagreements come in CPU order."""
    import resource
    generated_run(tmp_path, 600000, tuple(range(1024)))
    out = tmp_path / "out"
    out.mkdir()

    def limited():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    p = subprocess.run([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
                        "--report", str(out / "r.json"), "--kernelshark", str(out / "t.dat"),
                        "--perfetto", str(out / "t.perfetto-trace")],
                       capture_output=True, text=True, preexec_fn=limited, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads((out / "r.json").read_text())
    assert len(r["inference"]["calibration"]["tick"]) == 1024 and r["disagreements"]["count"] > 0
    assert len(r["disagreements"]["listed"]) == r["disagreements"]["count"]
    assert [d["cpu"] for d in r["disagreements"]["listed"]] == sorted(d["cpu"] for d in r["disagreements"]["listed"])
    data = (out / "t.dat").read_bytes()
    assert data.startswith(b"\x17\x08\x44tracing6\0")
    i = data.index(b"flyrecord\0") + len(b"flyrecord\0")
    table = struct.unpack_from("<2048Q", data, i)     # the top buffer: (offset, size) per CPU
    assert all(table[2 * c + 1] > 0 for c in range(1024))


def test_steal_seen_across_cpus_far_apart(tmp_path):
    """Steal (the CPUs take turns) found on CPUs 3 and 250 as on 0 and 1: what the other
    CPUs ran of a gap is summed over the CPUs in use."""
    ivs = []
    t = 0
    for k in range(200):
        ivs.append(iv(t, t + 300_000, 0, 250))
        ivs.append(iv(t + 300_500, t + 600_000, 1, 3))
        t += 600_500
    m = merged(tmp_path, ivs, [])
    assert m.report["inference"]["calibration"]["steal"]
    assert all(g["actual"] == "hidden" and g["inferred"] == "hidden" for g in m.gaps)


def test_ready_fd_says_when_the_report_is_whole(tmp_path):
    """--ready-fd: one line once the report is whole, at REPORT.partial until the exports'
    files are put together, then at REPORT; the same report either way, and the same one
    a merge without the option writes (hourglass export draws its page meanwhile)."""
    generated_run(tmp_path, 100000)
    cmd = [HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
           "--kernelshark", str(tmp_path / "t.dat"), "--perfetto", str(tmp_path / "t.perfetto-trace")]
    subprocess.run(cmd + ["--report", str(tmp_path / "plain.json")], check=True, timeout=120)
    rfd, wfd = os.pipe()
    p = subprocess.Popen(cmd + ["--report", str(tmp_path / "r.json"), "--ready-fd", str(wfd)], pass_fds=(wfd,))
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        said = r.read(7)
        try:
            early = (tmp_path / "r.json.partial").read_text()
        except FileNotFoundError:           # already named: the exports were quick
            early = (tmp_path / "r.json").read_text()
        assert said == b"report\n" and r.read() == b""
    assert p.wait(timeout=120) == 0
    final = (tmp_path / "r.json").read_text()
    assert early == final and not (tmp_path / "r.json.partial").exists()
    strip = lambda t: {k: v for k, v in json.loads(t).items() if k != "merger"}     # its seconds differ
    assert strip(final) == strip((tmp_path / "plain.json").read_text())
    assert (tmp_path / "t.dat").stat().st_size > 0 and (tmp_path / "t.perfetto-trace").stat().st_size > 0


def corrupt_a_middle_chunk(path):
    """A record length that cannot be, in the kernel recording's middle chunk: found by the pass."""
    data = bytearray(path.read_bytes())
    chunks = [m.start() for m in re.finditer(struct.pack("<I", 0x6B6E6863), data)]
    at = chunks[len(chunks) // 2]
    data[at + 16:at + 64] = b"\xff" * 48
    path.write_bytes(bytes(data))


def test_a_bad_input_found_mid_pass_leaves_nothing(tmp_path):
    """A corrupt record found half-way through the pass, with every output asked for: exit 3
    naming the file, and no file of the merge left, temporary or not (the Perfetto trace's
    temporary file and the gap streams' .partial files were left before 2026-11-28)."""
    generated_run(tmp_path, 200000)
    corrupt_a_middle_chunk(tmp_path / "kernel.hgt")
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
                        "--report", str(out / "r.json"), "--kernelshark", str(out / "t.dat"), "--perfetto",
                        str(out / "t.perfetto-trace"), "--gaps", str(out / "g.hgg"), "--gaps-json", str(out / "g.jsonl")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 3 and "corrupt record length" in p.stderr, p.stderr
    assert os.listdir(out) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_merge_stopped_by_a_signal_leaves_nothing(tmp_path, sig):
    """Ctrl-C (or a kill) while the exporters write: the merge dies of the signal, as a
    program should, and removes what it had begun. The signal is sent once the Perfetto
    trace's temporary file exists, a second or so before a 2 M-event merge ends here."""
    generated_run(tmp_path, 2000000)
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.Popen([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
                          "--report", str(out / "r.json"), "--kernelshark", str(out / "t.dat"), "--perfetto",
                          str(out / "t.perfetto-trace"), "--gaps-json", str(out / "g.jsonl")])
    t = time.monotonic()
    while not any(f.startswith(".t.perfetto-trace.") for f in os.listdir(out)) and time.monotonic() - t < 60:
        time.sleep(0.002)
    p.send_signal(sig)
    assert p.wait(timeout=60) == -sig, "died of the signal, not finished"
    assert os.listdir(out) == []


def test_a_ready_reader_gone_leaves_nothing(tmp_path):
    """--ready-fd whose reader has gone: hgmerge dies of SIGPIPE when it says the report is
    whole, as a program writing to a closed pipe does, and its exports' files go with it."""
    generated_run(tmp_path, 200000)
    out = tmp_path / "out"
    out.mkdir()
    rfd, wfd = os.pipe()
    os.close(rfd)
    p = subprocess.run([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
                        "--report", str(out / "r.json"), "--kernelshark", str(out / "t.dat"), "--perfetto",
                        str(out / "t.perfetto-trace"), "--ready-fd", str(wfd)], pass_fds=(wfd,), timeout=120)
    os.close(wfd)
    assert p.returncode == -signal.SIGPIPE
    assert os.listdir(out) == []


@pytest.mark.parametrize("arg", ["9999", "x", "-1"])
def test_ready_fd_refuses_what_is_not_an_open_descriptor(tmp_path, arg):
    generated_run(tmp_path, 1000)
    p = subprocess.run([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
                        "--report", str(tmp_path / "r.json"), "--ready-fd", arg], capture_output=True, text=True)
    assert p.returncode == 1 and f"--ready-fd {arg}: not an open file descriptor" in p.stderr, p.stderr
    assert not (tmp_path / "r.json").exists()


def test_too_little_memory_is_exit_2_wherever_it_runs_out(tmp_path):
    """Memory is the machine's, not the input's (docs/exit-status.md: 2, not 3): the
    readers of the .hgl, the .hgt and its chunks said 3 for out of memory until
    2026-11-28. hgmerge runs under address-space limits from 3 MB to 8 MB in 64 KB
    steps, so that it runs out at every allocation in turn: the program loader's
    failure (127, below hgmerge's main), its edge (SIGSEGV in the step right after the last
    127: the libraries mapped, no room left for the first stack page, 3640 KB on
    2026-12-02) and success (0) aside, every run says 2 with
    one line naming memory, and some of them name an input file, so that the readers'
    own allocations are among those reached."""
    import resource
    generated_run(tmp_path, 20000)
    seen, last_127 = [], None
    for kb in range(3000, 8000, 64):
        def limited(kb=kb):
            resource.setrlimit(resource.RLIMIT_AS, (kb << 10, kb << 10))
        for exports in ([], ["--kernelshark", str(tmp_path / "t.dat"), "--perfetto", str(tmp_path / "t.pf")]):
            p = subprocess.run([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel",
                                str(tmp_path / "kernel.hgt"), "--report", str(tmp_path / "r.json")] + exports,
                               capture_output=True, text=True, preexec_fn=limited, timeout=60)
            if p.returncode == 127:
                last_127 = kb
            if p.returncode in (0, 127) or (p.returncode == -signal.SIGSEGV and not p.stderr
                                            and last_127 is not None and kb - last_127 <= 64):
                continue
            assert p.returncode == 2, (kb, p.returncode, p.stderr)
            assert p.stderr.startswith("hgmerge: ") and len(p.stderr.strip().splitlines()) == 1, p.stderr
            assert "memory" in p.stderr or "cannot start" in p.stderr, p.stderr
            seen.append(p.stderr)
    assert any(str(tmp_path / "hourglass.hgl") in s or str(tmp_path / "kernel.hgt") in s for s in seen), seen


@pytest.mark.parametrize("limit_mb,failed,ready", [(8, "t.dat", False), (2, None, False), (8, "t.dat", True)])
def test_an_exporter_failing_midway_ends_the_merge(tmp_path, limit_mb, failed, ready):
    """Each exporter runs on a thread of its own (userspace/merger/xthread.c): when one
    cannot write (a file size limit, as a full disk would), hgmerge names that file and
    exits, the other exporter's thread does not wait forever, and no output is left.
    The run's trace.dat is about 10 MB and its Perfetto trace 6 MB: at 8 MB only the
    trace.dat fails (the Perfetto trace was finished, and its file must go too: it was
    left behind before 2026-11-28), at 2 MB both do, past their headers. The trace.dat
    fails as its pages are put together, after the report is whole: with --ready-fd
    hgmerge has said so, and the report it wrote must go as well. Whichever fails, the
    message names it."""
    import resource
    import signal
    generated_run(tmp_path, 200000)
    out = tmp_path / "out"
    out.mkdir()

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_mb << 20, limit_mb << 20))

    rfd, wfd = os.pipe()
    p = subprocess.run([HGMERGE, "--hgl", str(tmp_path / "hourglass.hgl"), "--kernel", str(tmp_path / "kernel.hgt"),
                        "--report", str(out / "report.json"), "--kernelshark", str(out / "t.dat"),
                        "--perfetto", str(out / "t.perfetto-trace")] + (["--ready-fd", str(wfd)] if ready else []),
                       capture_output=True, text=True, preexec_fn=limited, timeout=120, pass_fds=(wfd,))
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        assert r.read() == (b"report\n" if ready else b"")
    assert p.returncode == 2 and "File too large" in p.stderr, p.stderr
    assert p.stderr.startswith("hgmerge: ") and len(p.stderr.strip().splitlines()) == 1, p.stderr
    if failed:
        assert p.stderr.startswith(f"hgmerge: {out / failed}: cannot write"), p.stderr
    else:       # whichever failed first: the file it was writing is named (the trace.dat's page
        # file's failure named only the folder until 2026-11-28)
        assert p.stderr.startswith((f"hgmerge: {out / 't.dat'}: cannot write",
                                    f"hgmerge: {out / 't.perfetto-trace'}: cannot write")), p.stderr
    assert os.listdir(out) == [], "no report, no export, no temporary file"


@pytest.mark.parametrize("damage,msg", [
    ("truncated_kernel", "kernel.hgt"),
    ("other_clock", "not the same counter"),
    ("old_packed", "format version 2"),
    ("thread_overlap", "an interval that starts (TSC 5) before its previous one ended (TSC 10)"),
])
def test_bad_inputs(tmp_path, damage, msg):
    (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(0, 10, 0, 0), iv(20, 30, 0, 0)]))
    meta = "format: hgtrace 1\ntsc_khz: 2000000\n" if damage == "other_clock" else META
    kern = hgt_file([chunk(0, [rec(15, VEC_E, 236)])], meta=meta)
    (tmp_path / "kernel.hgt").write_bytes(kern[:len(kern) // 2] if damage == "truncated_kernel" else kern)
    if damage == "old_packed":
        subprocess.run([os.path.join(TOP, "build", "hgtrace"), "pack", str(tmp_path / "kernel.hgt")], check=True)
        data = bytearray((tmp_path / "kernel.hgt").read_bytes())
        data[8:12] = struct.pack("<I", 2)
        (tmp_path / "kernel.hgt").write_bytes(bytes(data))
    if damage == "thread_overlap":
        (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(0, 10, 0, 0), iv(5, 30, 0, 1)]))
    err = run_merge(tmp_path, expect=3)
    assert msg in err and err.startswith("hgmerge: ") and len(err.strip().splitlines()) == 1, err


def periodic_ticks(n, period=4_000_000, cost=2000, cpu=0, thread=0, t=0, skip=()):
    """Intervals of one thread broken every @period by a tick gap of @cost."""
    ivs = []
    for k in range(n):
        if k not in skip:
            ivs.append(iv(t + k * period, t + (k + 1) * period - cost, thread, cpu))
    return ivs


def split(ivs, at, length):
    """Cut the interval that spans @at with a gap of @length there."""
    out = []
    for r in ivs:
        if r[0] < at < r[1] - length:
            out += [iv(r[0], at, r[3], r[6]), iv(at + length, r[1], r[3], r[6])]
        else:
            out.append(r)
    return out


def test_a_switch_that_starts_on_the_tick_is_not_the_tick(tmp_path):
    """The tick wakes a task that preempts: the gap starts at the tick's phase but
    lasts far longer than the tick's own cost: another task ran."""
    ivs = periodic_ticks(80)
    # every tenth tick, the gap lasts 300 us: the tick, then another task
    ivs = [iv(r[0], r[1], 0, 0) for r in ivs]
    long_at = {10 * k for k in range(1, 8)}
    ivs = [iv(r[0] + (298_000 if k in long_at else 0), r[1], 0, 0) for k, r in enumerate(ivs)]
    m = merged(tmp_path, ivs, [], threads=1)
    by = {g["g0"]: g for g in m.gaps}
    for k in long_at:
        g = by[k * 4_000_000 - 2000]
        assert g["inferred"] == "switch_other", g
    assert m.report["inference"]["calibration"]["tick"]["0"]["period_ms"] == pytest.approx(4.0, rel=1e-3)
    assert sum(g["inferred"] == "timer" for g in m.gaps) == 79 - len(long_at)


def test_a_periodic_load_finer_than_every_tick_candidate_is_not_the_tick(tmp_path):
    """A task woken every 0.5 ms (a 2 kHz timer load) preempts for 100 us: its
    gaps recur at every candidate period. The tick (4 ms, 2 us) is the cheapest
    thing that recurs; the load's gaps are switches to another task."""
    ivs = periodic_ticks(40)
    for k in range(40 * 8):
        at = k * 500_000 + 200_000           # between the ticks
        ivs = split(ivs, at, 100_000)
    m = merged(tmp_path, ivs, [], threads=1)
    cal = m.report["inference"]["calibration"]["tick"]["0"]
    assert cal["period_ms"] == pytest.approx(4.0, rel=1e-3)
    lens = {}
    for g in m.gaps:
        lens.setdefault(g["g1"] - g["g0"], set()).add(g["inferred"])
    assert lens[100_000] == {"switch_other"} and lens[2000] == {"timer"}


def test_a_tick_whose_neighbours_fell_in_longer_gaps_is_still_the_tick(tmp_path):
    """The ticks one period before and after this one were swallowed by a
    longer gap each: two periods away, the phase still holds."""
    ivs = periodic_ticks(40)
    ivs = [iv(r[0], r[1] - (400_000 if k in (18, 20) else 0), 0, 0) for k, r in enumerate(ivs)]
    m = merged(tmp_path, ivs, [], threads=1)
    g = [g for g in m.gaps if g["g0"] == 20 * 4_000_000 - 2000][0]
    assert g["inferred"] == "timer"


def test_a_tick_whose_every_other_gap_is_hidden_is_still_the_tick(tmp_path):
    """A task woken every 8 ms, 50 us before every second tick, preempts for 150 us and
    swallows that tick (6.12's periodic-pair in the lab, when the run's phase puts its
    8 ms thread just before the tick): the ticks left are 8 ms apart, never one period.
    Past the hidden period, two periods away, they recur: the tick all the same."""
    ms, us = 1_000_000, 1_000
    gaps = []
    for k in range(1, 200):
        gaps.append((8 * k * ms - 50 * us, 8 * k * ms + 100 * us))          # the load, over the tick at 8k ms
        gaps.append((8 * k * ms + 4 * ms + 30 * us, 8 * k * ms + 4 * ms + 60 * us))    # the tick left, 30 us
    ivs, t = [], 0
    for g0, g1 in gaps:
        ivs.append(iv(t, g0, 0, 0))
        t = g1
    m = merged(tmp_path, ivs, [], threads=1)
    cal = m.report["inference"]["calibration"]["tick"]["0"]
    assert cal["period_ms"] == pytest.approx(4.0, rel=1e-3) and cal["periods_apart"] == 3, cal
    by_len = {}
    for g in m.gaps:
        by_len.setdefault(g["g1"] - g["g0"], set()).add(g["inferred"])
    assert by_len[30 * us] == {"timer"} and by_len[150 * us] == {"switch_other"}, by_len


def test_steal_when_the_cpus_take_turns(tmp_path):
    """Two CPUs that never run hourglass at the same time (one host CPU behind
    both vCPUs): a gap on one while the other ran is steal (hidden), tick or no
    tick, and the kernel saw nothing in it."""
    ivs = []
    t = 0
    for k in range(200):
        ivs.append(iv(t, t + 300_000, 0, 0))            # CPU 0 runs 300 us
        ivs.append(iv(t + 300_500, t + 600_000, 1, 1))  # then CPU 1, never both at once
        t += 600_500
    m = merged(tmp_path, ivs, [])
    cal = m.report["inference"]["calibration"]
    assert cal["steal"] and cal["cpus_together"] == 0
    assert all(g["actual"] == "hidden" and g["inferred"] == "hidden" for g in m.gaps)
    assert "steal" in m.gaps[0]["why_inferred"]


def test_steal_not_assumed_when_the_cpus_run_together(tmp_path):
    ivs = []
    t = 0
    for k in range(200):
        ivs.append(iv(t, t + 300_000, 0, 0))
        ivs.append(iv(t + 500, t + 300_300, 1, 1))      # both run at once
        t += 300_500
    m = merged(tmp_path, ivs, [])
    assert not m.report["inference"]["calibration"]["steal"]


def test_rule_4_is_for_the_thread_no_other_realtime_one_outranks_on_its_cpus(tmp_path):
    """SCHED_FIFO threads: 0 (priority 90) alone at its priority on CPU 0; 1 (80)
    shares CPU 0 with 0 and has CPU 1 to itself; 2 and 3 (80 both) share CPU 2.
    Only 0 is never stopped by another: its 20 us gap goes to rule 4 (an interrupt),
    the same gaps of 1 and 2 are judged by their length."""
    info = [thread(0, policy="fifo", priority=90), thread(1, policy="fifo", priority=80),
            thread(2, policy="fifo", priority=80), thread(3, policy="fifo", priority=80)]
    ivs = [iv(0, 1_000_000, 0, 0), iv(1_020_000, 2_000_000, 0, 0), iv(3_000_000, 4_000_000, 1, 0),
           iv(5_000_000, 6_000_000, 1, 1), iv(6_020_000, 7_000_000, 1, 1),
           iv(0, 1_000_000, 2, 2), iv(1_020_000, 2_000_000, 2, 2), iv(3_000_000, 4_000_000, 3, 2)]
    m = merged(tmp_path, sorted(ivs), [], threads=4, info_threads=info)
    why = {(g["thread"], g["g0"]): g["why_inferred"] for g in m.gaps if g["g1"] - g["g0"] == 20_000}
    assert sorted(why) == [(0, 1_000_000), (1, 6_000_000), (2, 1_000_000)]
    assert why[0, 1_000_000].startswith("the highest-priority real-time thread here never blocks")
    assert why[1, 6_000_000].startswith("shorter than") and why[2, 1_000_000].startswith("shorter than")


def test_a_throttled_realtime_thread_is_switched_out(tmp_path):
    """The highest-priority SCHED_FIFO thread never blocks: a short gap is an
    interrupt, but one as long as RT throttling holds real-time tasks back
    (sched_rt_period - sched_rt_runtime = 50 ms here) is another task running."""
    info = [thread(0, policy="fifo", priority=90)]
    recs = [iv(0, 1_000_000, 0, 0), iv(1_020_000, 2_000_000, 0, 0), iv(42_000_000, 43_000_000, 0, 0)]
    (tmp_path / "hourglass.hgl").write_bytes(hgl(recs, 1, info))
    data = bytearray((tmp_path / "hourglass.hgl").read_bytes())
    infoj = json.dumps({"tsc": {"hz": 1e9}, "t0_tsc": 0, "duration_ns": 10**9, "complete": True,
                        "command": ["hourglass", "test"],
                        "kernel": {"release": "test", "preempt_rt": False, "sched_rt_runtime_us": 950000,
                                   "sched_rt_period_us": 1000000}, "threads": info}).encode()
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    body = b"".join(struct.pack("<QQQHBBI", *r) for r in recs)
    (tmp_path / "hourglass.hgl").write_bytes(struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0) + sec(b"info", infoj)
                                             + sec(b"recs", body) + sec(b"end!", struct.pack("<QQ", len(recs), 0)))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([chunk(0, [rec(1_001_000, IRQ_E, 11), rec(1_019_000, IRQ_X, 11),
                                                              comm(2_000_000, 33, "kcompactd0"),
                                                              switch(2_001_000, 100, 33),
                                                              switch(41_999_000, 33, 100)])], meta=META))
    m = run_merge(tmp_path)
    assert m.report["inference"]["calibration"]["rt_throttle_ms"] == pytest.approx(25.0)
    assert m.gap(1_000_000)["inferred"] == "interrupt" and m.gap(1_000_000)["actual"] == "interrupt"
    g = m.gap(2_000_000)
    assert g["inferred"] == "switch_other" and g["actual"] == "switch_other"
    assert "RT throttling" in g["why_inferred"]


@pytest.mark.parametrize("jobs,windows", [(100, 100), (7000, 3000)])
def test_supply_bound_functions(tmp_path, jobs, windows):
    """A thread that runs 1 ms of every 4 ms: in any window of d ms it gets at
    least floor(d/4) + max(0, d mod 4 - 3) ms and at most floor(d/4) +
    min(d mod 4, 1) ms (rt-muse's lower and upper supply-bound functions).
    Over 7000 jobs every second interval starts windows (3000 per length), and
    those of the longest lengths wait for thousands of intervals: the same
    bounds, the thread being periodic."""
    ivs = [iv(4_000_000 * k, 4_000_000 * k + 1_000_000, 0, 0) for k in range(jobs)]
    m = merged(tmp_path, ivs, [], threads=1)
    s = m.report["charts"]["sbf"]["0"]
    assert len(s["window_ms"]) == 28 and s["windows_per_length"] == windows
    for d, lo, hi in zip(s["window_ms"], s["lower_ms"], s["upper_ms"]):
        assert lo == pytest.approx((d // 4) + max(0.0, d % 4 - 3), abs=1e-5), d
        assert hi == pytest.approx((d // 4) + min(d % 4, 1.0), abs=1e-5), d


def test_the_map_holds_the_first_16_threads(tmp_path):
    """Twenty threads, each with two intervals in the map's 40 ms: the first 16 are
    drawn, and the map says how many there were."""
    ivs = [iv(1_000_000 * k + 10_000 * i, 1_000_000 * k + 10_000 * i + 5_000, k, k) for i in range(2)
           for k in range(20)]
    m = merged(tmp_path, sorted(ivs), [], threads=20)
    mp = m.report["charts"]["map"]
    assert mp["threads_total"] == 20 and [t["thread"] for t in mp["threads"]] == list(range(16))
    assert all(len(t["intervals"]) == 2 for t in mp["threads"])
    assert len(m.report["charts"]["sbf"]) == 20


def timeline(gaps, end, thread=0, cpu=0):
    """Intervals around @gaps, (start, length, switch): each gap with switch set
    hands the CPU to the other of two threads."""
    ivs, t, th = [], 0, thread
    for g0, length, switch in sorted(gaps):
        ivs.append(iv(t, g0, th, cpu))
        t, th = g0 + length, (1 - th if switch else th)
    ivs.append(iv(t, end, th, cpu))
    return ivs


def test_a_load_that_recurs_at_a_tick_period_but_costs_more_than_two_switches_is_not_the_tick(tmp_path):
    """The paper's 5.5 pair beside a FIFO task of 2 ms every 10 ms (HZ 100's period):
    the task preempts at every job and recurs perfectly, while a quarter of the 28 us
    ticks are swallowed (the threads sleep) and a fifth fall in the jobs: the ticks
    recur less cleanly. The threads' own switches cost 60 us: a gap of 2 ms, over
    thirty times that, is two switches and a task between them, not the tick."""
    gaps = []
    jobs = [(j * 10_000_000 + 1_300_000, 2_000_000) for j in range(40)]
    for k in range(1, 100):
        t = k * 4_000_000
        if k % 4 and not any(a <= t < a + n for a, n in jobs):
            gaps.append((t, 28_000, False))
    gaps += [(a, n, False) for a, n in jobs]
    gaps += [(j * 10_000_000 + 6_100_000, 60_000, True) for j in range(40)]
    m = merged(tmp_path, timeline(gaps, 400_000_000), [])
    cal = m.report["inference"]["calibration"]
    assert cal["tick"]["0"]["period_ms"] == pytest.approx(4.0, rel=1e-3)
    lens = {}
    for g in m.gaps:
        lens.setdefault(g["g1"] - g["g0"], set()).add(g["inferred"])
    assert lens[2_000_000] == {"switch_other"} and lens[28_000] == {"timer"} and lens[60_000] == {"switch_hg"}


def test_the_tick_with_its_softirqs_is_the_tick_up_to_the_tick_and_a_switch(tmp_path):
    """Ticks of 28 us; the threads switch in 43 us. At the tick's phase a gap of 52 us
    (the tick and its softirqs) is over the switch limit (49 us, between a tick and two
    switches) but under the tick and a switch (56 us, capped at two ticks): the tick.
    One of 120 us there (the tick, a switch out and one back) is another task."""
    gaps = []
    for k in range(1, 100):
        length = 52_000 if k % 5 == 0 else 120_000 if k % 7 == 0 else 28_000
        gaps.append((k * 4_000_000, length, False))
    gaps += [(j * 10_000_000 + 1_300_000, 43_000, True) for j in range(40)]
    m = merged(tmp_path, timeline(gaps, 400_000_000), [])
    cal = m.report["inference"]["calibration"]
    assert cal["switch_limit_us"] == pytest.approx(49.07, abs=0.05)
    assert cal["phase_limit_us"] == pytest.approx(56.0, abs=0.05)
    lens = {}
    for g in m.gaps:
        lens.setdefault(g["g1"] - g["g0"], set()).add(g["inferred"])
    assert lens[52_000] == {"timer"} and lens[120_000] == {"switch_other"} and lens[28_000] == {"timer"}
    assert lens[43_000] == {"switch_hg"}
