"""hourglass on this machine, short runs, asserting on what it measured.

The figures asserted are the workload's own contract (a thread asked to
yield after 0.9 ms of CPU yields after 0.9 ms of CPU), so they hold on a
noisy machine; nothing here is a timing threshold on the machine's speed.
"""
import os
import shutil
import statistics

import pytest

import hgtools.recordings as H
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="real-time policies and mlockall need root")


def test_three_priorities_share_one_cpu(hg):
    """Section 3.1's command, pinned to one CPU: CPU time follows the nice level."""
    r = hg("-n 3 -d 1500ms -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH -a --affinity 0")
    cpu = [t["cpu_time_ns"] for t in r.json["threads"]]
    assert cpu[2] > cpu[1] > cpu[0] > 0, cpu
    # no share of the CPU is asserted: other work on CPU 0 of a busy host
    # takes its part (a loaded host left the three 22 % of it); each thread's
    # CPU time is its intervals', whatever the host gave
    for k, t in enumerate(r.json["threads"]):
        spun = sum(iv[3] for iv in r.intervals if iv[0] == k) * 1e6
        assert abs(spun - t["cpu_time_ns"]) <= 0.01 * t["cpu_time_ns"] + 1e5, (k, spun, t["cpu_time_ns"])
    # one CPU: intervals never overlap, and the gap column is start - previous end
    ivs = sorted(r.intervals, key=lambda x: x[1])
    for a, b in zip(ivs, ivs[1:]):
        assert b[1] >= a[2] - 1e-6, (a, b)
        assert abs(b[4] - (b[1] - a[2])) < 2e-6, (a, b)
    assert {iv[5] for iv in ivs} == {0}
    # text, JSON and binary trace tell the same run
    trace_ivs = [x for x in r.trace.records if x.type == H.INTERVAL]
    assert len(trace_ivs) == len(r.intervals) == sum(t["intervals"] for t in r.json["threads"])
    assert r.trace.info["t0_tsc"] == r.json["t0_tsc"] and r.trace.complete
    # the cheapest system call, the merger's floor for hidden gaps: a trip into the kernel
    # costs more than one turn of the loop, which only reads the TSC
    assert r.json["syscall_cycles"] > r.json["loop_cycles"] > 0
    assert r.trace.info["syscall_cycles"] == r.json["syscall_cycles"]
    tids = {t["tid"] for t in r.json["threads"]}
    assert len(tids) == 3 and os.getpid() not in tids


def test_cpu_yield_slices_of_0_9ms(hg):
    """Section 5.1's CPU_YIELD 0.9ms: the CPU a thread gets between yields is 0.9 ms."""
    r = hg("-n 2 -d 1s -a -w CPU_YIELD 0.9ms --affinity 0")
    hz = r.json["tsc"]["hz"]
    for k in (0, 1):
        ivs = [x for x in r.trace.records if x.thread == k and x.type == H.INTERVAL]
        slices, cpu, start = [], 0, None
        for iv in ivs:
            start = iv.t0 if start is None else start
            cpu += iv.t1 - iv.t0
            if iv.flags & H.IV_YIELD:
                slices.append((cpu * 1e3 / hz, (iv.t1 - start) * 1e3 / hz))
                cpu, start = 0, None
        # as many slices as the CPU the host gave this thread holds (a loaded
        # host gave it 125 where a quiet one gives about 550)
        got_ms = r.json["threads"][k]["cpu_time_ns"] / 1e6
        assert len(slices) > 20 and len(slices) >= got_ms / 0.9 - 2, (len(slices), got_ms)
        assert r.json["threads"][k]["yields"] == len(slices)
        # hourglass turns 0.9 ms into cycles at the rate it reports, rounding down: a slice
        # is at least that many cycles, so at least 0.9 ms less one cycle, read at that rate
        # (never an exact boundary: the same slice read at the kernel's rate is 5e-8 short)
        floor_ms = 0.9 - 1e3 / hz
        cpu_ms = [s[0] for s in slices]
        near = sum(1 for c in cpu_ms if floor_ms <= c <= 0.905) / len(cpu_ms)
        assert near > 0.95, f"thread {k}: {near:.1%} of slices got 0.9 ms of CPU"
        # a yield hands over at once: slices that nothing else interrupted end
        # 0.9 ms after they start; other work on CPU 0 stretches the rest
        walls = [s[1] for s in slices]
        assert min(walls) >= floor_ms
        prompt = sum(1 for w in walls if w < 1.2) / len(walls)
        assert prompt > 0.1, f"thread {k}: {prompt:.1%} of slices ended within 1.2 ms"


def test_periodic_alone_misses_only_when_denied_the_cpu(hg):
    """PERIODIC 3ms 8ms alone at RTHIGH with HR timers: every job that had
    its 3 ms of CPU by the deadline is a hit, every miss is a job that did
    not get it. On a quiet machine that is no miss at all; on this shared
    host the hypervisor sometimes takes the CPU away, which hourglass's own
    intervals show, so the contract is asserted job by job."""
    r = hg("-n 1 -d 2s -t 0 -p RTHIGH -w PERIODIC 3ms 8ms -i HR --affinity 1")
    t = r.json["threads"][0]
    d = t["deadlines"]
    assert 249 <= d["hit"] + d["missed"] <= 250, t
    assert f"thread 0: missed {d['missed']} deadlines, hit {d['hit']}" in r.stdout
    hz = r.json["tsc"]["hz"]
    jobs = [x for x in r.trace.records if x.type == H.JOB and not x.flags & H.JOB_CUT]
    ivs = sorted((x.t0, x.t1) for x in r.trace.records if x.type == H.INTERVAL)
    assert len(jobs) == d["hit"] + d["missed"] and d["cut_by_end"] <= 1
    assert d["hit"] >= 0.5 * len(jobs), t

    def cpu_between(a, b):
        return sum(max(0, min(t1, b) - max(t0, a)) for t0, t1 in ivs if t1 > a and t0 < b)
    for j in jobs:
        assert abs((j.t2 - j.t0) - 8e-3 * hz) < 1e-6 * hz, "the deadline is a period after the release"
        got = cpu_between(j.t0, j.t2)
        if j.flags & H.JOB_MISSED:
            assert got < 3e-3 * hz * 1.001, f"a missed job had {got / hz * 1e3:.3f} ms of CPU in its period"
        else:
            assert j.t0 < j.t1 <= j.t2 and j.t1 - j.t0 >= 3e-3 * hz * 0.999, "a hit took its 3 ms in time"
    # a job released late (it overran, or the host stalled it) starts without sleeping
    wakes = [x for x in r.trace.records if x.type == H.WAKE]
    assert len(jobs) - d["missed"] - 1 <= len(wakes) <= len(jobs) + 1, (len(wakes), len(jobs), d)
    assert all(w.lateness_ns >= 0 for w in wakes)


def test_lat_one_sample_per_period(hg):
    """LAT 5ms: one sample per wake-up, each a period after the previous one."""
    r = hg("-n 1 -d 1s -t 0 -p RTHIGH -w LAT 5ms -i HR")
    lat = r.lines("latlate:")
    wakes = [x for x in r.trace.records if x.type == H.WAKE]
    assert len(lat) == len(wakes) == r.json["threads"][0]["lateness_ns"]["count"]
    assert 150 <= len(wakes) <= 200, len(wakes)
    hz = r.json["tsc"]["hz"]
    # the next wake-up is due a period after this one happened (hourglass's
    # own clock reads around the wake-up can be delayed by the host on this
    # shared machine, so single spacings stray: the median is held to the
    # period, and nine in ten spacings to within 50/100 us of it)
    spacing_ms = [(b.t0 - a.t1) * 1e3 / hz for a, b in zip(wakes, wakes[1:])]
    assert statistics.median(spacing_ms) == pytest.approx(5.0, abs=0.02), statistics.median(spacing_ms)
    near = sum(1 for x in spacing_ms if 4.95 < x < 5.1)
    assert near >= 0.9 * len(spacing_ms), sorted(spacing_ms)[:3] + sorted(spacing_ms)[-3:]
    assert [float(l.split()[1]) for l in lat] == pytest.approx([w.lateness_ns / 1e3 for w in wakes], abs=1e-5)


@pytest.mark.parametrize("timer", ["NATIVE", "TIMERFD", "POSIX"])
def test_other_timers(hg, timer):
    r = hg(f"-n 1 -d 500ms -t 0 -p RTHIGH -w LAT 2ms -i {timer}")
    n = r.json["threads"][0]["lateness_ns"]["count"]
    assert 150 <= n <= 250, n
    assert r.json["threads"][0]["timer"] == timer


def test_two_cpu_threads_on_one_cpu_alternate(hg):
    r = hg("-n 2 -d 2s -a -w CPU --affinity 1")
    cpu = [t["cpu_time_ns"] for t in r.json["threads"]]
    share = cpu[0] / sum(cpu)
    assert 0.4 < share < 0.6, cpu
    seq = [iv[0] for iv in sorted(r.intervals, key=lambda x: x[1])]
    switches = sum(1 for a, b in zip(seq, seq[1:]) if a != b)
    assert switches >= 50, switches
    assert {iv[5] for iv in r.intervals} == {1}


def test_paper_5_5_two_tasks_hr(hg):
    r = hg("-n 2 -d 2s -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR "
           "-t 1 -p RTLOW -w PERIODIC 17ms 33ms -i HR")
    t0, t1 = r.json["threads"]
    assert t0["deadlines"]["hit"] + t0["deadlines"]["missed"] in (249, 250)
    assert t1["deadlines"]["hit"] + t1["deadlines"]["missed"] in (60, 61)
    assert len(r.lines("thread ")) == 2


def test_reservations_run(hg):
    r = hg("-n 2 -d 1s -t 0 -w PERIODIC 3ms 8ms -rh 3.1ms 8ms "
           "-t 1 -w PERIODIC 17ms 33ms -rs 17.1ms 33ms", expect={0, 2})
    if r.rc == 2:
        # the host's admission control refused them for ten seconds (see test_paper_lines_run)
        assert "admission control" in r.stderr, r.stderr
        pytest.skip(f"this host's admission control refused the reservations: {r.stderr.strip()}")
    t0, t1 = r.json["threads"]
    assert t0["policy"] == t1["policy"] == "deadline"
    # a release the host delayed past the next one's time is skipped: 1 s of 8 ms periods
    assert 118 <= t0["deadlines"]["hit"] + t0["deadlines"]["missed"] <= 125, t0["deadlines"]
    assert t1["reservation"]["kind"] == "soft"


def test_cpu_scan_counts_work_and_cpu_periodic_counts_periods(hg):
    r = hg("-n 2 -d 1s -t 0 -w CPU_SCAN 32 --affinity 0 -t 1 -w CPU_PERIODIC 1ms 4ms --affinity 1")
    t0, t1 = r.json["threads"]
    assert t0["work_units"] > 1000
    # 1 ms jobs back to back: about one completed job per ms of CPU the
    # thread got. Judged against its CPU time, not the run's 1 s: on a
    # loaded host (CI with guests running) it got 73% of the CPU and hit 701.
    cpu_ms = t1["cpu_time_ns"] / 1e6
    assert cpu_ms > 100, t1
    assert t1["deadlines"]["hit"] >= 0.7 * cpu_ms, (cpu_ms, t1["deadlines"])


def test_raw_cycles(hg):
    r = hg("-n 1 -d 300ms -c")
    cyc = r.lines("cycles:")
    assert len(cyc) == len(r.intervals) > 0
    hz, t0 = r.json["tsc"]["hz"], r.json["t0_tsc"]
    f = cyc[0].split()
    assert abs((int(f[2]) - t0) * 1e3 / hz - r.intervals[0][1]) < 1e-5


def test_paper_lines_run(hg):
    """Every paper command line runs (shortened with a trailing -d); RTC needs
    /dev/rtc; a reservation needs a host whose admission control takes it.

    This project's host (6.18) at times refused reservations far below its
    free bandwidth for minutes on end (0.1 ms in 8 refused, 7 ms in 8 taken;
    debugfs's dl_bw says 0.1 of 1.9 reserved): hourglass must then say so,
    naming admission control, and exit 2. Whether it runs them when admitted
    is test_reservations_run's."""
    from paper_lines import PAPER
    for name, args in PAPER.items():
        rtc = "-i RTC" in args
        have_rtc = os.path.exists("/dev/rtc0") or os.path.exists("/dev/rtc")
        reserves = "-rh " in args or "-rs " in args
        r = hg(args + " -d 400ms", expect=2 if rtc and not have_rtc else {0, 2} if reserves else 0, trace=False)
        if rtc and not have_rtc:
            assert "/dev/rtc" in r.stderr and "use -i HR" in r.stderr, r.stderr
        elif r.rc == 2:
            assert "admission control" in r.stderr and "sched_rt_runtime_us" in r.stderr, r.stderr
        else:
            assert r.json["complete"], name


def test_full_buffer_is_reported(hg):
    r = hg("-n 2 -d 500ms -e 300 -a -w CPU_YIELD 0.1ms", expect=4)
    assert "trace buffer filled" in r.stderr
    assert r.lines("error: the trace buffer filled")
    assert r.json["complete"] is False and r.json["records"]["dropped"] > 0
    assert r.trace.dropped == r.json["records"]["dropped"] and not r.trace.complete
    assert len(r.trace.records) <= 300


def test_privileges_named(hg):
    """setpriv (util-linux, always on Debian) drops to nobody: every missing
    privilege is named at once; --fallback runs with warnings."""
    assert shutil.which("setpriv"), "setpriv (util-linux) is needed to drop privileges"
    drop = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
    r = hg("-n 2 -d 200ms -t 0 -p RTHIGH -t 1 -rh 1ms 10ms", expect=2, trace=False, prefix=drop)
    assert "mlockall" in r.stderr and "CAP_IPC_LOCK" in r.stderr
    assert "-p RTHIGH (SCHED_FIFO priority 80): Operation not permitted" in r.stderr
    assert "-rh (SCHED_DEADLINE" in r.stderr and "--fallback" in r.stderr
    assert r.stdout == ""
    r = hg("-n 1 -d 200ms -t 0 -p RTHIGH --fallback", trace=False, prefix=drop)
    assert r.lines("warning: mlockall refused")
    assert r.lines("warning: thread 0: -p RTHIGH")
    assert "refused" in r.json["threads"][0]["fallback"]


def test_unwritable_output_fails_before_the_run(hg):
    r = hg("-n 1 -d 10s -o /nonexistent/dir/out.txt", expect=2, trace=False)
    assert "/nonexistent/dir/out.txt" in r.stderr
