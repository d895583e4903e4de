"""The ftrace comparison itself must catch what it is meant to catch."""
from hgtools.recordings import Event
import matching


def sw(cpu, tsc, prev, nxt):
    return Event(cpu, tsc, "switch", nxt, 0, 0, dict(prev_pid=prev, next_pid=nxt))


def fsw(cpu, ts, prev, nxt):
    return dict(cpu=cpu, ts=ts, event="sched_switch", fields=dict(prev_pid=str(prev), next_pid=str(nxt)))


def test_all_matched():
    h = [sw(0, 1000, 1, 2), sw(0, 2000, 2, 1), sw(1, 1500, 0, 3)]
    f = [fsw(0, 995, 1, 2), fsw(0, 1990, 2, 1), fsw(1, 1498, 0, 3)]
    r = matching.match(h, f, [], (0, 10000), tol=20)
    assert r["matched"] == 3 and not r["only_ftrace"] and not r["only_hgtrace"]
    assert r["max_dt"] == 10


def test_missing_and_mismatched_are_reported():
    h = [sw(0, 1000, 1, 2), sw(0, 3000, 5, 6)]
    f = [fsw(0, 1000, 1, 2), fsw(0, 2000, 2, 1), fsw(1, 3000, 5, 6)]   # one missing, one on the wrong CPU
    r = matching.match(h, f, [], (0, 10000), tol=20)
    assert r["matched"] == 1 and len(r["only_ftrace"]) == 2 and len(r["only_hgtrace"]) == 1


def test_too_far_apart_is_not_a_match():
    r = matching.match([sw(0, 1000, 1, 2)], [fsw(0, 1100, 1, 2)], [], (0, 10000), tol=20)
    assert r["matched"] == 0


def test_losses_exclude_only_their_window():
    lost = Event(0, 2500, "lost", 0, 0, 0, dict(count=3, by="refused"))
    h = [sw(0, 1000, 1, 2), lost, sw(0, 4000, 2, 1)]
    f = [fsw(0, 1000, 1, 2), fsw(0, 2000, 9, 9), fsw(0, 2400, 8, 8), fsw(0, 4000, 2, 1)]
    r = matching.match(h, f, [], (0, 10000), tol=20)
    # the stretch runs from the last delivered record (1000) to the marker, widened
    # by the tolerance on both sides and on both recorders: the pair at 1000 goes too
    assert r["excluded"] == 4 and r["matched"] == 1 and not r["only_ftrace"]
    # an ftrace drop excludes the module's events in its stretch the same way
    # (from the ftrace event before the drop to the one after it)
    h2 = [sw(0, 1000, 1, 2), sw(0, 2000, 7, 7), sw(0, 4000, 2, 1)]
    f2 = [fsw(0, 1000, 1, 2), fsw(0, 3000, 3, 3), fsw(0, 4000, 2, 1)]
    r = matching.match(h2, f2, [(0, 10, 1)], (0, 10000), tol=20)
    assert r["excluded"] == 4 and r["matched"] == 1 and not r["only_hgtrace"]


def test_outside_window_ignored():
    r = matching.match([sw(0, 50, 1, 2)], [fsw(0, 20000, 3, 4)], [], (100, 10000), tol=20)
    assert r["ftrace"] == 0 and r["hgtrace"] == 0


def test_wide_window_still_counts_a_missing_event():
    """Pairing within a wide window can shift pairs, but never hides a loss."""
    h = [sw(0, 0, 1, 2), sw(0, 8000, 1, 2)]
    f = [fsw(0, 0, 1, 2), fsw(0, 4000, 1, 2), fsw(0, 8000, 1, 2)]
    r = matching.match(h, f, [], (-100000, 100000), tol=50000)
    assert r["matched"] == 2 and len(r["only_ftrace"]) == 1 and not r["only_hgtrace"]


def test_a_missing_event_is_reported_where_it_is():
    """One event missing mid-run is that event, and the pairs after it stay
    true: the wide window must not pair each event with its neighbour."""
    f = [fsw(0, t, 1, 2) for t in range(0, 100000, 4000)]
    h = [sw(0, t + 3, 1, 2) for t in range(0, 100000, 4000) if t != 40000]
    r = matching.match(h, f, [], (-100000, 200000), tol=50000)
    assert [t for _key, t in r["only_ftrace"]] == [40000] and not r["only_hgtrace"]
    assert r["matched"] == len(h) and r["max_dt"] == 3


def test_a_stalled_pair_still_pairs():
    """A vCPU stall between the two probes pulls a pair apart, within tol."""
    f = [fsw(0, t, 1, 2) for t in range(0, 100000, 4000)]
    h = [sw(0, t + (3000 if t == 40000 else 3), 1, 2) for t in range(0, 100000, 4000)]
    r = matching.match(h, f, [], (-100000, 200000), tol=50000)
    assert r["matched"] == len(f) and not r["only_ftrace"] and not r["only_hgtrace"]
    assert r["max_dt"] == 3000


def test_a_pair_across_the_trimmed_edge_is_a_pair():
    """Events within tol of the window's ends are not judged, but they still
    pair: an ftrace stamp just inside the edge whose partner lies just
    outside it is matched, not reported missing."""
    window, tol = (0, 100000), 1000
    f = [fsw(0, 50000, 1, 2), fsw(0, 98999, 3, 4), fsw(0, 999, 5, 6)]
    h = [sw(0, 50002, 1, 2), sw(0, 99001, 3, 4), sw(0, 1001, 5, 6)]
    r = matching.match(h, f, [], window, tol)
    assert not r["only_ftrace"] and not r["only_hgtrace"]
    # the pair at 98999 is judged (its ftrace stamp is inside), the one at 999 is not
    assert r["matched"] == 2 and r["ftrace"] == 2 and r["hgtrace"] == 2


def test_loss_stretches_looked_up_as_a_scan_would():
    """Covered answers what a scan of every stretch answers, on overlapping, nested
    and touching stretches of several CPUs, at their ends and slack's ends."""
    import random
    rnd = random.Random(7)
    for _ in range(200):
        spans = [(rnd.randint(0, 2), *sorted((rnd.randint(0, 5000), rnd.randint(0, 5000))))
                 for _ in range(rnd.randint(0, 12))]
        slack = rnd.randint(0, 200)
        covered = matching.Covered(spans, slack)
        for ts in range(-300, 5400, 7):
            for cpu in range(4):
                want = any(c == cpu and lo - slack <= ts <= hi + slack for c, lo, hi in spans)
                assert covered(cpu, ts) == want, (cpu, ts, spans, slack)


def test_ftrace_loss_stretch_starts_at_the_cpus_previous_event():
    """A LOST record's stretch runs from its CPU's latest earlier event (any CPU's
    events between do not count) to the event it stands before; at the end, to the end."""
    f = [fsw(0, 100, 1, 2), fsw(1, 150, 1, 2), fsw(0, 90, 1, 2), fsw(1, 300, 1, 2), fsw(0, 400, 1, 2)]
    drops = [(0, 5, 4), (1, 2, 3), (2, 1, 1), (1, 1, 5)]
    assert matching.loss_windows_ftrace(f, drops) == [(0, 100, 400), (1, 150, 300), (2, 0, 150), (1, 300, 1 << 64)]


def sirq(cpu, tsc):
    return Event(cpu, tsc, "softirq_entry", 0, 0, 0, dict(vec=7))


def fsirq(cpu, ts):
    return dict(cpu=cpu, ts=ts, event="softirq_entry", fields=dict(vec="7"))


def test_a_late_softirq_on_preempt_rt_pairs_with_the_other_unmatched_copy():
    """PREEMPT_RT runs softirqs preemptible: the other tracer's callback can run long after the
    module's probe. Its copy is the other side's unmatched event of that vector, not the
    nearest event of the vector (which is another softirq's, already paired)."""
    h = [sirq(0, 1000), sirq(0, 2000), sirq(0, 3000)]
    f = [fsirq(0, 1002), fsirq(0, 2003), fsirq(1, 3500)]        # the third ran late, on the other CPU
    kernel = "Linux 7.3.4+deb13-rt-amd64 #1 SMP PREEMPT_RT"
    r = matching.match(h, f, [], (0, 10000), tol=20)
    assert r["matched"] == 2 and len(r["only_ftrace"]) == 1 and len(r["only_hgtrace"]) == 1
    pairs = matching.displaced(r, h, f, [], 20, matching.preemptible_sites(kernel))
    assert pairs == [(3000, 3500, 0, 1)] and not r["only_ftrace"] and not r["only_hgtrace"]
    # not on a kernel that runs them with preemption off: unmatched stays unmatched
    assert matching.preemptible_sites("Linux 7.3.4+deb13-amd64 #1 SMP PREEMPT_DYNAMIC") == ("exit",)
    assert matching.preemptible_sites("Linux 6.12.117+deb12-rt-amd64 #1 SMP PREEMPT_RT") == ()
    r = matching.match(h, f, [], (0, 10000), tol=20)
    assert matching.displaced(r, h, f, [], 20, matching.preemptible_sites("Linux 7.3.4+deb13-amd64")) == []
    assert len(r["only_ftrace"]) == 1 and len(r["only_hgtrace"]) == 1


def test_a_pair_across_a_frozen_cpu_pairs():
    """The two probes of one event with nothing between them on their CPU are a pair however far
    apart (the emulator's thread descheduled between them); a missing event is not."""
    h = [sw(0, 1000, 1, 2), sw(0, 2000, 2, 1), sw(0, 900000, 1, 2), sw(1, 5000, 0, 3)]
    f = [fsw(0, 1001, 1, 2), fsw(0, 800000, 2, 1), fsw(0, 900001, 1, 2), fsw(1, 5001, 0, 3)]
    r = matching.match(h, f, [], (0, 10 ** 6), tol=100)
    assert len(r["only_hgtrace"]) == 1 and len(r["only_ftrace"]) == 1
    assert matching.frozen(r, h, f) == [(2000, 800000, 0)]
    assert not r["only_hgtrace"] and not r["only_ftrace"]
    # the CPU recorded between them (a switch at 3000 in the module's): not the same event
    h2 = h + [sw(0, 3000, 7, 8)]
    f2 = f + [fsw(0, 3001, 7, 8)]
    r = matching.match(h2, f2, [], (0, 10 ** 6), tol=100)
    assert matching.frozen(r, h2, f2) == []
    assert len(r["only_hgtrace"]) == 1 and len(r["only_ftrace"]) == 1
    # the other's copy first: not a pair (the module's probe runs first)
    h3 = [sw(0, 800000, 2, 1)]
    f3 = [fsw(0, 2000, 2, 1)]
    r = matching.match(h3, f3, [], (0, 10 ** 6), tol=100)
    assert matching.frozen(r, h3, f3) == [] and len(r["only_hgtrace"]) == 1
