"""The merger on constructed timelines whose answer is known: one TSC cycle
is one nanosecond (1 GHz), thread 0 is tid 100, thread 1 tid 101."""
import json
import os
import struct

import pytest

from conftest import TOP, chunk, hgt_file, rec
from hgmerge import infer, judge, load, report, truth

SWITCH, MIGRATE, IRQ_E, IRQ_X, SIRQ_E, SIRQ_X, VEC_E, VEC_X, COMM, LOST = 1, 5, 7, 8, 9, 10, 11, 12, 18, 20
META = "format: hgtrace 1\ntsc_khz: 1000000\n"


def iv(t0, t1, thread, cpu, flags=0):
    return (t0, t1, 0, thread, 1, flags, cpu)


def hgl(records, threads=2, t0=0):
    info = {"tsc": {"hz": 1e9}, "t0_tsc": t0, "duration_ns": 10**9, "command": ["hourglass", "test"],
            "kernel": {"release": "test", "preempt_rt": False},
            "threads": [{"thread": k, "tid": 100 + k, "workload": "CPU", "policy": "other", "priority": 0}
                        for k in range(threads)]}
    body = b"".join(struct.pack("<QQQHBBI", *r) for r in records)
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    return (struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0) + sec(b"info", json.dumps(info).encode())
            + sec(b"recs", body) + sec(b"end!", struct.pack("<QQ", len(records), 0)))


def switch(t, prev, nxt, state=0):
    return rec(t, SWITCH, nxt, payload=struct.pack("<IIhhI", prev, state, 120, 120, 0))


def comm(t, pid, name):
    return rec(t, COMM, pid, payload=struct.pack("<II16s", pid, 0, name.encode()))


def same_report(d, kernel=None):
    """Both engines, the reference (Python) and hgmerge-core (C), give the same report."""
    assert report.engines_differ(str(d), kernel)[0] == []
    return report.merge(str(d), kernel, engine="core")


def merged(tmp_path, records, kernel_chunks, window=(0, 10**12), threads=2):
    (tmp_path / "hourglass.hgl").write_bytes(hgl(records, threads))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file(kernel_chunks, meta=META, window=window))
    same_report(tmp_path)
    run = load.load_run(str(tmp_path))
    kinfo = truth.sweep(run, load.kernel_stream(run))
    cal = infer.infer(run)
    return run, kinfo, cal


def gap_at(run, g0):
    [g] = [g for g in run.gaps if g.g0 == g0]
    return g


def comps(g, kinfo):
    return {truth.component_name(k, kinfo["names"]) if k[0] != "self" else "self": v
            for k, v in g.truth["comp"].items() if v}


def test_hard_irq_nested_in_softirq(tmp_path):
    run, k, _ = merged(tmp_path, [iv(1000, 2000, 0, 0), iv(5000, 6000, 0, 0)],
                       [chunk(0, [rec(2100, SIRQ_E, 3), rec(2500, IRQ_E, 30), rec(2900, IRQ_X, 30),
                                  rec(4800, SIRQ_X, 3)])])
    g = gap_at(run, 2000)
    assert comps(g, k) == {"softirq NET_RX": 2300, "irq 30": 400, "self": 300}
    assert g.truth["class"] == "interrupt" and g.truth["kind"] == "softirq"
    assert g.inferred == "interrupt"


def test_switch_to_another_task(tmp_path):
    run, k, _ = merged(tmp_path, [iv(10000, 11000, 0, 0), iv(20000, 21000, 0, 0)],
                       [chunk(0, [comm(11000, 555, "stress"), rec(11100, VEC_E, 236, flags=0),
                                  rec(11500, VEC_X, 236, flags=0), switch(11600, 100, 555),
                                  switch(19800, 555, 100)])])
    g = gap_at(run, 11000)
    assert comps(g, k) == {"task stress:555": 8200, "local_timer": 400, "self": 400}
    assert g.truth["class"] == "switch_other" and g.truth["out"][1] == "preempted"
    res = judge.judge(run, k, {"tick": {}, "switch_limit_us": 0, "switch_limit_basis": ""})
    assert any(c["cause"] == "switched to stress:555" for c in res["causes"])


def test_switch_between_hourglass_threads(tmp_path):
    run, k, _ = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(71000, 80000, 1, 0)],
                       [chunk(0, [rec(70100, VEC_E, 236), rec(70300, VEC_X, 236), switch(70500, 100, 101)])])
    g = gap_at(run, 70000)
    assert (g.thread, g.next_thread) == (0, 1)
    assert g.inferred == "switch_hg" and g.truth["class"] == "switch_hg"
    assert comps(g, k) == {"local_timer": 200, "self": 300, "task ?:101": 500}


def test_migration_mid_gap(tmp_path):
    run, k, _ = merged(tmp_path, [iv(30000, 31000, 1, 1), iv(32000, 33000, 0, 1), iv(40000, 41000, 1, 0)],
                       [chunk(1, [switch(31100, 101, 100), rec(31200, MIGRATE, 101, payload=struct.pack("<HHI", 1, 0, 0))]),
                        chunk(0, [switch(39900, 0, 101)])])
    res = judge.judge(run, k, {"tick": {}, "switch_limit_us": 0, "switch_limit_basis": ""})
    assert res["migrations"] == {"inferred": 1, "confirmed": 1, "kernel_migrations_of_hourglass_threads": 1}
    g = gap_at(run, 31000)           # on CPU 1, thread 1 out, thread 0 in
    assert g.truth["migrated"] == (1, 0) and g.truth["class"] == "switch_hg"


def test_loss_inside_a_gap_is_unexplainable(tmp_path):
    run, k, _ = merged(tmp_path, [iv(40000, 50000, 0, 0), iv(60000, 61000, 0, 0), iv(70000, 71000, 0, 0)],
                       [chunk(0, [rec(45000, VEC_E, 236), rec(45100, VEC_X, 236),
                                  rec(55000, LOST, 0, payload=struct.pack("<Q", 7)),
                                  rec(61500, VEC_E, 236), rec(61600, VEC_X, 236)])])
    lost, after = gap_at(run, 50000), gap_at(run, 61000)
    assert lost.truth["class"] == "unexplainable" and "lost" in lost.truth["why"]
    assert after.truth["class"] == "timer"
    res = judge.judge(run, k, {"tick": {}, "switch_limit_us": 0, "switch_limit_basis": ""})
    assert res["unexplainable"]["gaps"] == 1 and res["scored"] == 1


def test_gaps_at_start_and_end_outside_the_window(tmp_path):
    run, k, _ = merged(tmp_path, [iv(100, 200, 0, 0), iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0),
                                  iv(9000, 9500, 0, 0)],
                       [chunk(0, [rec(2100, VEC_E, 236), rec(2200, VEC_X, 236)])], window=(500, 8000))
    assert gap_at(run, 200).truth["why"] == "outside the recording window"
    assert gap_at(run, 4000).truth["class"] == "unexplainable"
    assert gap_at(run, 2000).truth["class"] == "timer"


def test_two_cpus_and_hidden(tmp_path):
    run, k, _ = merged(tmp_path, [iv(0, 1000, 0, 0), iv(1500, 3000, 0, 0), iv(5000, 6000, 0, 0),
                                  iv(0, 1200, 1, 1), iv(2000, 3000, 1, 1)],
                       [chunk(1, [rec(1300, IRQ_E, 11), rec(1900, IRQ_X, 11)]),
                        chunk(0, [rec(3100, VEC_E, 236), rec(4900, VEC_X, 236)])])
    assert gap_at(run, 1000).truth["class"] == "hidden"       # CPU 1's irq is not CPU 0's
    assert comps(gap_at(run, 1200), k) == {"irq 11": 600, "self": 200}
    assert comps(gap_at(run, 3000), k) == {"local_timer": 1800, "self": 200}


def test_tick_inferred_from_recurrence(tmp_path):
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
    ivs.sort()
    (tmp_path / "hourglass.hgl").write_bytes(hgl(ivs, threads=1))
    run = load.load_run(str(tmp_path))
    cal = infer.infer(run)
    assert cal["tick"][0]["period_ms"] == pytest.approx(4.0)
    assert cal["hidden_limit_us"] == pytest.approx(1.0)
    ticks = [g for g in run.gaps if g.length == 2000]
    odd = [g for g in run.gaps if g.length == 1500]
    tiny = [g for g in run.gaps if g.length == 300]
    assert ticks and all(g.inferred == "timer" for g in ticks)
    assert odd and all(g.inferred == "interrupt" for g in odd)
    assert tiny and all(g.inferred == "hidden" for g in tiny)
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([], meta=META, window=(0, 10**12)))
    assert same_report(tmp_path)["calibration"] == cal


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
    (tmp_path / "hourglass.hgl").write_bytes(hgl(ivs, threads=1))
    run = load.load_run(str(tmp_path))
    cal = infer.infer(run)
    assert cal["tick"][0]["period_ms"] == pytest.approx(4.0) and cal["tick"][0]["floor_us"] > 0
    assert all(g.inferred == "timer" for g in run.gaps if g.length == 5000)
    assert all(g.inferred == "hidden" for g in run.gaps if g.length == 200)
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([], meta=META, window=(0, 10**12)))
    assert same_report(tmp_path)["calibration"] == cal


def test_report_text_and_json(tmp_path, capsys):
    merged(tmp_path, [iv(60000, 70000, 0, 0), iv(71000, 80000, 1, 0), iv(90000, 95000, 0, 0)],
           [chunk(0, [switch(70500, 100, 101), switch(80500, 101, 100)])])
    assert report.main([str(tmp_path), "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "inferred (columns" in out and "accuracy: 2 of 2" in out
    js = json.loads((tmp_path / "r.json").read_text())
    assert js["report_version"] == 1 and js["confusion"]["correct"] == 2


@pytest.mark.parametrize("damage,msg", [
    ("no_hgl", "no hourglass.hgl"),
    ("incomplete", "interrupted"),
    ("truncated_kernel", "kernel.hgt"),
    ("no_kernel", "no kernel.hgt"),
    ("other_clock", "not the same counter"),
])
def test_bad_inputs(tmp_path, capsys, damage, msg):
    (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(0, 10, 0, 0), iv(20, 30, 0, 0)]))
    kern = hgt_file([chunk(0, [rec(15, VEC_E, 236)])], meta=META)
    if damage == "other_clock":
        kern = hgt_file([chunk(0, [rec(15, VEC_E, 236)])], meta="format: hgtrace 1\ntsc_khz: 2000000\n")
    (tmp_path / "kernel.hgt").write_bytes(kern[:len(kern) // 2] if damage == "truncated_kernel" else kern)
    if damage == "no_hgl":
        (tmp_path / "hourglass.hgl").unlink()
    if damage == "no_kernel":
        (tmp_path / "kernel.hgt").unlink()
    if damage == "incomplete":
        (tmp_path / "INCOMPLETE").write_text("interrupted by Ctrl-C\n")
    for engine in ("python", "core"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HG_MERGE_ENGINE", engine)
            assert report.main([str(tmp_path)]) == 3
            assert msg in capsys.readouterr().err, engine


def test_wakeup_decomposed_and_miss_explained(tmp_path):
    """A LAT wake-up due at 100000: tick at 100500, waking at 100800, a task
    runs until the switch at 103000, user space at 103400. And a missed
    period 200000..300000 during which irq 40 ran 30000 cycles."""
    HRT_E, WAKING = 14, 2
    wake = (100000, 103400, 3400, 0, 3, 0x10 | 2, 0)          # WAKE, LAT, HR; lateness 3.4 us
    miss = (200000, 0, 300000, 0, 2, 1, 0)                    # JOB missed
    recs = [wake, iv(103400, 150000, 0, 0), iv(150500, 199000, 0, 0), miss]
    from hgmerge import latency
    (tmp_path / "hourglass.hgl").write_bytes(hgl(recs, threads=1))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file(
        [chunk(0, [comm(99000, 777, "hog"), switch(99500, 0, 777), rec(100500, VEC_E, 236),
                   rec(100600, HRT_E, 1, payload=b"\0" * 8), rec(100800, WAKING, 100, payload=b"\0" * 8),
                   rec(100900, VEC_X, 236), switch(103000, 777, 100),
                   rec(210000, IRQ_E, 40), rec(240000, IRQ_X, 40)])], meta=META))
    same_report(tmp_path)
    run = load.load_run(str(tmp_path))
    wins = latency.windows(run)
    kinfo = truth.sweep(run, load.kernel_stream(run), wins)
    lat = latency.decompose(run, wins, kinfo["names"])
    d = lat["worst"]
    assert d["stages_us"] == pytest.approx({"timer": 0.5, "irq": 0.3, "sched": 2.2, "return": 0.4})
    assert d["largest_stage"] == "sched" and d["blame"] == "task hog:777"
    assert d["latency_us"] == pytest.approx(3.4) and d["complete"]
    [m] = latency.misses(run, wins, kinfo["names"])
    assert m["instead"][0] == {"what": "irq 40", "ms": pytest.approx(0.03)}
    assert m["period_ms"] == pytest.approx(0.1)


def write_trace_dat(path, events, cpus=2, lost=()):
    """A trace.dat (v6, x86-tsc, TSC2NSEC 1:1 at 1 GHz) with the standard
    events, as trace-cmd would record them: events are (cpu, ts, name, pid, fields)."""
    from hgexport.kernelshark import _events
    from hgexport.tracedat import TraceDat
    w = TraceDat(cpus=cpus, tsc_hz=1e9)
    ev = _events(w)
    for cpu, ts, name, pid, fields in events:
        for c, at, n in lost:
            if c == cpu and at == ts:
                w.lost("", cpu, n)
        w.add("", cpu, ts, ev[name], pid, fields)
    w.write(str(path))


def test_trace_dat_events_become_records(tmp_path):
    """trace-cmd's events, read through libtracecmd by hgtrace-import, drive the same sweep."""
    sw = lambda pc, pp, nc, np_: dict(prev_comm=pc, prev_pid=pp, prev_prio=120, prev_state=0, next_comm=nc,
                                      next_pid=np_, next_prio=120)
    write_trace_dat(tmp_path / "trace.dat", [
        (0, 2100, "softirq_entry", 0, dict(vec=3)), (0, 2500, "irq_entry", 0, dict(irq=30, name="eth0")),
        (0, 2900, "irq_exit", 0, dict(irq=30, ret=1)), (0, 4800, "softirq_exit", 0, dict(vec=3)),
        (0, 11100, (0, "entry"), 0, dict(vector=236)), (0, 11500, (0, "exit"), 0, dict(vector=236)),
        (0, 11600, "switch", 100, sw("hourglass", 100, "stress", 555)),
        (0, 19800, "switch", 555, sw("stress", 555, "hourglass", 100)),
        # the recording's span is that of its events: these bracket the run
        (1, 500, "softirq_entry", 0, dict(vec=1)), (1, 25000, "softirq_exit", 0, dict(vec=1))])
    (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(1000, 2000, 0, 0), iv(5000, 11000, 0, 0),
                                                  iv(20000, 21000, 0, 0)]))
    same_report(tmp_path)
    run = load.load_run(str(tmp_path))
    assert run.kernel_path.endswith("trace.dat")
    k = truth.sweep(run, load.kernel_stream(run))
    assert comps(gap_at(run, 2000), k) == {"softirq NET_RX": 2300, "irq 30 eth0": 400, "self": 300}
    assert comps(gap_at(run, 11000), k) == {"task stress:555": 8200, "local_timer": 400, "self": 400}
    assert gap_at(run, 11000).truth["class"] == "switch_other"


def test_hgtrace_import_maps_every_event(tmp_path):
    """Every event the merger reads comes through hgtrace-import with its
    fields, comms and irq names once, and dropped events as LOST records."""
    from hgmerge.ftrace_source import FtraceStream
    sw = dict(prev_comm="a", prev_pid=7, prev_prio=98, prev_state=2, next_comm="b", next_pid=8, next_prio=120)
    write_trace_dat(tmp_path / "t.dat", [
        (0, 100, "switch", 7, sw), (0, 110, "sched_waking", 0, dict(comm="c", pid=9, prio=100, target_cpu=1)),
        (1, 120, "sched_wakeup", 0, dict(comm="c", pid=9, prio=100, target_cpu=1)),
        (1, 130, "migrate", 0, dict(comm="c", pid=9, prio=100, orig_cpu=0, dest_cpu=1)),
        (1, 140, "exit", 9, dict(comm="c", pid=9, prio=100)),
        (1, 150, "irq_entry", 0, dict(irq=30, name="eth0")), (1, 160, "irq_exit", 0, dict(irq=30, ret=1)),
        (1, 170, "irq_entry", 0, dict(irq=30, name="eth0")),
        (0, 180, (1, "entry"), 0, dict(vector=253)), (0, 190, (1, "exit"), 0, dict(vector=253)),
        (0, 200, "hrt_entry", 0, dict(hrtimer=0xffff888012345678, now=5, function=0xffffffff81000000)),
        (0, 210, "hrt_exit", 0, dict(hrtimer=0xffff888012345678)),
        (0, 220, "nmi", 0, dict(handler=0xffffffff81000000, delta_ns=1500, handled=1)),
        (0, 230, "softirq_entry", 0, dict(vec=9))], lost=[(0, 230, 42)])
    st = FtraceStream(str(tmp_path / "t.dat"))
    assert st.window == (100, 230) and st.meta["source"] == "trace-cmd"
    recs = [(cpu, tsc, typ, flags, arg, bytes(buf[pos + 16:pos + ln])) for cpu, tsc, typ, flags, aux, arg, buf, pos, ln
            in st]
    assert st.complete and st.window == (100, 230)
    got = [(c, t, typ, f, a) for c, t, typ, f, a, _ in recs]
    assert got == [
        (0, 100, truth.COMM, 0, 7), (0, 100, truth.COMM, 0, 8), (0, 100, truth.SWITCH, 0, 8),
        (0, 110, truth.COMM, 0, 9), (0, 110, truth.WAKING, 0, 9),
        (0, 180, truth.VEC_ENTRY, 1, 253), (0, 190, truth.VEC_EXIT, 1, 253),
        (0, 200, truth.HRTIMER_ENTRY, 0, 0), (0, 210, truth.HRTIMER_EXIT, 0, 0), (0, 220, truth.NMI, 0, 0),
        (0, 230, truth.LOST, 0, 0), (0, 230, truth.SOFTIRQ_ENTRY, 0, 9),
        (1, 120, truth.WAKEUP, 0, 9), (1, 130, truth.MIGRATE, 0, 9), (1, 140, truth.EXIT, 0, 9),
        (1, 150, truth.NAME, 0, 30), (1, 150, truth.IRQ_ENTRY, 0, 30), (1, 160, truth.IRQ_EXIT, 1, 30),
        (1, 170, truth.IRQ_ENTRY, 0, 30)]
    pay = {(c, t, typ): p for c, t, typ, f, a, p in recs}
    assert struct.unpack_from("<IIhh", pay[(0, 100, truth.SWITCH)]) == (7, 2, 98, 120)
    comms = [p[8:].rstrip(b"\0") for c, t, typ, f, a, p in recs if typ == truth.COMM]
    assert comms == [b"a", b"b", b"c"]
    assert struct.unpack_from("<Hh", pay[(0, 110, truth.WAKING)]) == (1, 100)
    assert struct.unpack_from("<HH", pay[(1, 130, truth.MIGRATE)]) == (0, 1)
    assert pay[(1, 150, truth.NAME)].rstrip(b"\0") == b"eth0"
    assert struct.unpack_from("<II", pay[(0, 220, truth.NMI)]) == (1500, 1)
    assert struct.unpack_from("<Q", pay[(0, 230, truth.LOST)]) == (42,)
    # no kernel pointer (timer address, callback) reaches our files
    assert pay[(0, 200, truth.HRTIMER_ENTRY)] == b"\0" * 8


def test_bad_trace_dat_is_a_clear_error(tmp_path):
    from hgmerge.ftrace_source import FtraceError, FtraceStream
    write_trace_dat(tmp_path / "t.dat", [(0, 100 + i, "softirq_entry", 0, dict(vec=1)) for i in range(2000)])
    data = (tmp_path / "t.dat").read_bytes()
    for name, body in (("garbage.dat", b"not a trace at all" * 100), ("short.dat", data[:len(data) // 3])):
        (tmp_path / name).write_bytes(body)
        with pytest.raises(FtraceError) as e:
            FtraceStream(str(tmp_path / name))
        assert name in str(e.value) and ("truncated" in str(e.value) or "corrupt" in str(e.value)), str(e.value)


def test_on_cpu_from_switches():
    from hgmerge.microstates import on_cpu
    # running at 100; out at 300, in at 500, out at 900; window 100..1000
    assert on_cpu([(300, 0), (500, 1), (900, 0)], 100, 1000) == 200 + 400
    # in again at 950 and still running at the end; events outside ignored
    assert on_cpu([(50, 0), (300, 0), (950, 1), (2000, 0)], 100, 1000) == 200 + 50


def test_switch_between_hourglass_threads_via_a_kernel_thread(tmp_path):
    """PREEMPT_RT: the tick wakes ktimers, which runs before thread 1: still a
    switch between hourglass threads, with ktimers among its components."""
    run, k, _ = merged(tmp_path, [iv(60000, 70000, 0, 0), iv(75000, 80000, 1, 0)],
                       [chunk(0, [comm(60000, 14, "ktimers/0"), rec(70100, VEC_E, 236), rec(70300, VEC_X, 236),
                                  switch(70500, 100, 14), switch(74000, 14, 101)])])
    g = gap_at(run, 70000)
    assert g.truth["class"] == "switch_hg" and g.inferred == "switch_hg"
    assert comps(g, k)["task ktimers/0:14"] == 3500


def test_engines_agree_on_everything_at_once(tmp_path):
    """One timeline with a bit of everything, for the two engines: comms and irq
    names, an NMI moving time, nested handlers, an exit without its entry, a
    loss, a migration, switches between threads and to others, a yield, a
    sleep, a wake-up window and a missed period, accounting windows."""
    NMI, WAKING, HRT_E = 13, 2, 14
    t = lambda k, **kw: dict({"thread": k, "tid": 100 + k, "workload": "CPU", "policy": "fifo",
                              "priority": 50 + k, "timer": "NATIVE"}, **kw)
    recs = [iv(1000, 2000, 0, 0), iv(3000, 4000, 0, 0, flags=1), iv(4500, 9000, 1, 0),
            iv(9800, 20000, 0, 0, flags=2), iv(20500, 30000, 1, 1), iv(31000, 40000, 0, 1),
            iv(41000, 50000, 0, 1), iv(52000, 60000, 1, 0),
            (44000, 50000, 800, 0, 3, 0x10 | 2, 1),        # a wake-up of thread 0 on CPU 1
            (41000, 0, 49000, 1, 2, 1, 0)]                  # a missed period of thread 1
    info_threads = [t(0, accounting={"tsc0": 0, "tsc1": 60000, "schedstat_on_cpu_ns": 1, "schedstat_slices": 1,
                                     "rusage_user_ns": 1, "rusage_system_ns": 0, "thread_cputime_ns": 1}),
                    t(1, workload="CPU_PERIODIC")]
    body = hgl(recs, 2)
    info = json.loads(body[16 + 16:16 + 16 + struct.unpack_from("<Q", body, 24)[0]])
    info["threads"] = info_threads
    head = struct.pack("<8sHHI", b"HGLASS\n\0", 1, 0, 0)
    ib = json.dumps(info).encode()
    sec = lambda tag, b: struct.pack("<4sIQ", tag, 0, len(b)) + b + b"\0" * (-len(b) % 8)
    rb = b"".join(struct.pack("<QQQHBBI", *r) for r in recs)
    (tmp_path / "hourglass.hgl").write_bytes(head + sec(b"info", ib) + sec(b"recs", rb)
                                             + sec(b"end!", struct.pack("<QQ", len(recs), 0)))
    name = lambda t_, irq, n: rec(t_, 19, irq, payload=n.encode().ljust(32, b"\0"))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([
        chunk(0, [comm(500, 777, "hog"), name(500, 30, "eth0"), rec(2100, SIRQ_E, 3), rec(2300, IRQ_E, 30),
                  rec(2600, NMI, 5, payload=struct.pack("<II", 150, 1)), rec(2700, IRQ_X, 30),
                  rec(2900, SIRQ_X, 3), rec(3500, IRQ_X, 31), switch(4100, 100, 101),
                  rec(9100, VEC_E, 236), rec(9300, VEC_X, 236), switch(9400, 101, 777), switch(9700, 777, 100),
                  switch(20100, 100, 0), rec(45000, NMI, 6, payload=struct.pack("<II", 3000, 1)),
                  rec(51000, VEC_E, 236, flags=1), rec(51200, VEC_X, 236, flags=1),
                  switch(51900, 0, 101)]),
        chunk(1, [rec(30200, LOST, 0, payload=struct.pack("<Q", 3)), switch(30500, 101, 100),
                  rec(30600, MIGRATE, 101, payload=struct.pack("<HHI", 1, 0, 0)),
                  switch(40100, 100, 777), switch(40900, 777, 100),
                  rec(44500, VEC_E, 236), rec(44600, HRT_E, 1, payload=b"\0" * 8),
                  rec(44800, WAKING, 100, payload=b"\0" * 8), rec(45000, VEC_X, 236),
                  rec(45500, IRQ_E, 30), rec(45900, IRQ_X, 30)])], meta=META, window=(0, 10**6)))
    res = same_report(tmp_path)
    assert res["gaps_total"] == 6 and res["voluntary"] == 2 and res["unexplainable"]["gaps"] == 1
    assert res["latency"]["threads"] and res["missed_deadlines"] and res["microstates"]
    assert res["disagreements"] and res["migrations"]["confirmed"] == 1
    # the NMI in the missed period took its 3 us from idle
    assert {"what": "nmi", "ms": pytest.approx(0.003)} in res["missed_deadlines"][0]["instead"]
    # packed (hgtrace pack, record -z), the recording says the same to both engines
    import subprocess
    subprocess.run([os.path.join(TOP, "build", "hgtrace"), "pack", str(tmp_path / "kernel.hgt")], check=True)
    again = same_report(tmp_path)
    for r in (res, again):
        r.pop("merge_seconds")
        r["kernel_recording"].pop("meta")
    assert json.dumps(again, default=str) == json.dumps(res, default=str)


def test_engines_agree_on_a_generated_run(tmp_path):
    """The benchmark's generated run, small: ticks found, irqs, one CPU each."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("merge_speed", os.path.join(TOP, "bench", "merge_speed.py"))
    ms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ms)
    ms.generate(str(tmp_path), 50000)
    res = same_report(tmp_path)
    assert res["classes"]["timer"] > 0 and res["confusion"]["accuracy"] == 1.0


def test_engine_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("HG_MERGE_ENGINE", "bogus")
    with pytest.raises(load.RunError) as e:
        report.engine_of()
    assert "HG_MERGE_ENGINE=bogus" in str(e.value)
    monkeypatch.setenv("HG_MERGE_ENGINE", "python")
    assert report.engine_of() == "python"
    monkeypatch.delenv("HG_MERGE_ENGINE")
    assert report.engine_of() == "core"         # built by make userspace


def test_engines_refuse_an_old_packed_recording(tmp_path):
    """A kernel.hgt packed with the version-2 coding: both engines stop and say why."""
    import subprocess
    (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(1000, 2000, 0, 0), iv(5000, 6000, 0, 0)], 2))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file([chunk(0, [rec(2100, IRQ_E, 30), rec(2900, IRQ_X, 30)])],
                                                   meta=META, window=(0, 10**12)))
    subprocess.run([os.path.join(TOP, "build", "hgtrace"), "pack", str(tmp_path / "kernel.hgt")], check=True)
    data = bytearray((tmp_path / "kernel.hgt").read_bytes())
    data[8:12] = struct.pack("<I", 2)
    (tmp_path / "kernel.hgt").write_bytes(bytes(data))
    for engine in ("python", "core"):
        with pytest.raises(load.RunError, match="format version 2.*pack the plain recording again"):
            report.merge(str(tmp_path), None, engine=engine)
