"""infer - the paper's gray-box inferences (sections 4 and 7), from
hourglass's own data only: its intervals, their CPUs, and what each thread
was configured to do. Nothing here looks at the kernel's events.

A gap is a stretch of a CPU between two hourglass intervals: thread A stops,
the gap, thread B starts. Rules, in order, for each gap A did not ask for:
 1. B is not A: a context switch between hourglass threads (switch_hg).
    Non-statistical.
 2. its start recurs with the period of the clock tick, found from the run's
    own gaps: the tick (timer). Statistical. The search starts with every
    gap and with length floors of 0.5, 1, 2 ... 32 us and keeps the floor
    whose tick recurs most cleanly: under an emulator thousands of short
    gaps would drown it; a floor above the tick's own cost loses ticks and
    scores lower.
 2b. it is shorter than half the cheapest tick (the 10th percentile of the
    tick gaps): no kernel entry is that fast, so the time went below the
    kernel: hypervisor, emulator, SMI, hardware (hidden). Only when a tick
    was found; without one nothing calibrates the floor.
 3. the thread is the highest-priority real-time thread on its CPU and never
    blocks: nothing but interrupts and bottom halves can stop it (interrupt).
 4. by length, calibrated on the run: another task ran (switch_other) when
    the gap is longer than two switches at the fastest seen in rule 1 (the
    way out and back); otherwise an interrupt. Without switches, 3x the
    median tick gap, or 50 us.
Also: a thread whose next interval is on another CPU migrated.
"""
import bisect
import statistics

import hourglass_trace as H

TICK_CANDIDATES_MS = (1.0, 2.0, 1000 / 300, 4.0, 10.0)     # HZ 1000, 500, 300, 250, 100
TICK_FLOORS_US = (0, 0.5, 1, 2, 4, 8, 16, 32)
TICK_SAMPLE = 20000         # gaps per CPU the floor is chosen on
# what calibrated the switch/interrupt limit (rule 4), by hgmerge-core's code
BASES = ("two switches at the fastest seen", "3x the median tick gap",
         "50 us (no switch or tick to calibrate on)")
# the rules, by hgmerge-core's code
VOLUNTARY, SWITCH, TICK, HIDDEN, TOP_RT, SHORT, LONG = range(7)


def why(rule, hz, g, period=None, hidden_limit=0, limit=0, basis=""):
    """The text that says which rule inferred gap @g (shared with hgmerge-core's output)."""
    if rule == VOLUNTARY:
        return f"the thread called {'sched_yield' if g.voluntary == 'yield' else 'its timer'}"
    if rule == SWITCH:
        return f"thread {g.thread} stopped and thread {g.next_thread} started"
    if rule == TICK:
        return f"it recurs every {period / hz * 1e3:.3f} ms, the tick found on CPU {g.cpu0}"
    if rule == HIDDEN:
        return (f"shorter than {hidden_limit / hz * 1e6:.2f} us, half the cheapest tick: "
                "no kernel path is that fast")
    if rule == TOP_RT:
        return "the highest-priority real-time thread here never blocks: only interrupts stop it"
    if rule == SHORT:
        return f"shorter than {limit / hz * 1e6:.1f} us ({basis}): cannot be a switch"
    return f"no hourglass thread ran, and longer than {limit / hz * 1e6:.1f} us ({basis})"


def calibration(hz, limit, basis, ticks, hidden_limit, switch_gaps):
    """The calibration as the report shows it; @ticks: {cpu: (period or None, score, floor)}."""
    return {
        "switch_limit_us": limit / hz * 1e6, "switch_limit_basis": basis,
        "tick": {cpu: {"period_ms": (p / hz * 1e3) if p else None, "score": score, "floor_us": floor / hz * 1e6}
                 for cpu, (p, score, floor) in ticks.items()},
        "hidden_limit_us": hidden_limit / hz * 1e6,
        "switch_gaps": switch_gaps,
    }


def _near(sorted_starts, t, tol):
    i = bisect.bisect_left(sorted_starts, t - tol)
    return i < len(sorted_starts) and sorted_starts[i] <= t + tol


def find_tick(starts, hz):
    """The clock tick's period from gap starts that recur: (period cycles, tolerance, score)."""
    best = (None, 0, 0.0)
    if len(starts) < 20:
        return best
    for ms in TICK_CANDIDATES_MS:
        p = ms * 1e-3 * hz
        tol = max(10e-6 * hz, 0.005 * p)
        hit = sum(1 for s in starts if _near(starts, s + p, tol))
        ctrl = sum(1 for s in starts if _near(starts, s + 1.37 * p, tol))
        score = (hit - ctrl) / len(starts)
        # a real tick recurs far above chance; the longest such period wins
        # ties (a 1 ms grid also matches at 2 and 4 ms)
        if score > 0.1 and hit > 2 * max(ctrl, 1) and score > best[2] * 1.2:
            best = (p, tol, score)
    return best


def _is_top_rt_never_blocking(run, k, cpu_of_thread):
    t = run.threads[k]
    if t.get("policy") not in ("fifo", "rr") or t.get("workload") not in ("CPU", "CPU_SCAN", "CPU_PERIODIC"):
        return False
    for j, o in enumerate(run.threads):
        if j != k and o.get("policy") in ("fifo", "rr") and o.get("priority", 0) >= t.get("priority", 0) \
                and cpu_of_thread.get(j, set()) & cpu_of_thread.get(k, set()):
            return False
    return True


def infer(run):
    """Set g.inferred and g.why on every gap; return what was calibrated on the run."""
    hz = run.hz
    cpu_of_thread = {k: {r.cpu for r in ivs} for k, ivs in enumerate(run.intervals)}
    invol = [g for g in run.gaps if not g.voluntary]
    for g in run.gaps:
        if g.voluntary:
            g.inferred, g.why = "voluntary", why(VOLUNTARY, hz, g)
    switch_len = []
    rest = []
    for g in invol:
        if g.next_thread != g.thread:
            g.inferred = "switch_hg"
            g.why = why(SWITCH, hz, g)
            switch_len.append(g.length)
        else:
            rest.append(g)
    # the tick, per CPU, from the starts of involuntary gaps there
    by_cpu = {}
    for g in invol:
        by_cpu.setdefault(g.cpu0, []).append((g.g0, g.length))
    tick = {}
    for cpu, gl in by_cpu.items():
        gl.sort()
        # the floor is chosen on the run's first gaps (a stretch of time, so
        # recurrences stay together): the score is a fraction, and the search
        # then costs the same on a run of a million gaps
        sample = gl[:TICK_SAMPLE]
        best, best_floor, seen = (None, 0, 0.0), 0, set()
        for floor_us in TICK_FLOORS_US:
            starts = [t for t, n in sample if n >= floor_us * 1e-6 * hz]
            if len(starts) in seen:     # no gap between the two floors: same answer
                continue
            seen.add(len(starts))
            if len(starts) < 20:        # higher floors hold fewer still
                break
            found = find_tick(starts, hz)
            if found[0] and found[2] > best[2]:
                best, best_floor = found, floor_us * 1e-6 * hz
        tick[cpu] = best + ([t for t, n in gl if n >= best_floor], best_floor)
    tick_len = []
    rest2 = []
    for g in rest:
        p, tol, _score, starts, floor = tick.get(g.cpu0, (None, 0, 0, [], 0))
        if p and g.length >= floor and (_near(starts, g.g0 + p, tol) or _near(starts, g.g0 - p, tol)):
            g.inferred = "timer"
            g.why = why(TICK, hz, g, period=p)
            tick_len.append(g.length)
        else:
            rest2.append(g)
    hidden_limit = sorted(tick_len)[len(tick_len) // 10] / 2 if len(tick_len) >= 10 else 0
    for g in rest2:
        if g.length < hidden_limit:
            g.inferred = "hidden"
            g.why = why(HIDDEN, hz, g, hidden_limit=hidden_limit)
    rest2 = [g for g in rest2 if g.inferred != "hidden"]
    if switch_len:
        limit, basis = 2 * min(switch_len), BASES[0]
    elif tick_len:
        limit, basis = 3 * statistics.median(tick_len), BASES[1]
    else:
        limit, basis = 50e-6 * hz, BASES[2]
    for g in rest2:
        if _is_top_rt_never_blocking(run, g.thread, cpu_of_thread):
            g.inferred = "interrupt"
            g.why = why(TOP_RT, hz, g)
        elif g.length < limit:
            g.inferred = "interrupt"
            g.why = why(SHORT, hz, g, limit=limit, basis=basis)
        else:
            g.inferred = "switch_other"
            g.why = why(LONG, hz, g, limit=limit, basis=basis)
    return calibration(hz, limit, basis, {cpu: (v[0], v[2], v[4]) for cpu, v in tick.items()},
                       hidden_limit, len(switch_len))


def voluntary_kinds():
    return {H.IV_YIELD: "yield", H.IV_SLEEP: "sleep"}
