"""matching - pair the module's events with ftrace's, one to one.

Both recorders hook the same tracepoints, so each event should appear in both,
on the same CPU, with the same identity (pids, irq, vector), a few
microseconds apart (the other probe runs in between). Events inside a window
where either recorder reported a loss are excluded, as are events near or
outside the edges of the module's start/stop window; every other event must
find its partner.
"""
import bisect
import re
from collections import defaultdict

# ftrace event -> (hgtrace kind, key from ftrace fields, key from hgtrace fields)
KINDS = {
    "sched_switch": ("switch", lambda f: (int(f["prev_pid"]), int(f["next_pid"])),
                     lambda f: (f["prev_pid"], f["next_pid"])),
    "irq_handler_entry": ("irq_entry", lambda f: int(f["irq"]), lambda f: f["irq"]),
    "irq_handler_exit": ("irq_exit", lambda f: int(f["irq"]), lambda f: f["irq"]),
    "softirq_entry": ("softirq_entry", lambda f: int(f["vec"]), lambda f: f["vec"]),
    "softirq_exit": ("softirq_exit", lambda f: int(f["vec"]), lambda f: f["vec"]),
}
HGT_KIND = {v[0]: (k, v[2]) for k, v in KINDS.items()}


def loss_windows_hgt(events):
    """(cpu, lo, hi) stretches the module reported as lost: after the previous
    record on that CPU up to the LOST marker."""
    out, last = [], {}
    for ev in sorted(events, key=lambda e: (e.cpu, e.tsc)):
        if ev.kind == "lost":
            out.append((ev.cpu, last.get(ev.cpu, 0), ev.tsc))
        last[ev.cpu] = ev.tsc
    return out


def loss_windows_ftrace(fevents, drops):
    """(cpu, lo, hi) stretches hgtrace-ftrace reported as lost: after its previous
    event on that CPU up to the event the LOST record stands before (one pass over
    the events: a recording can hold a million events and a hundred LOST records)."""
    prev, last, i = {}, {}, 0
    for d, (cpu, _count, idx) in sorted(enumerate(drops), key=lambda x: x[1][2]):
        for e in fevents[i:idx]:
            last[e["cpu"]] = max(last.get(e["cpu"], 0), e["ts"])
        i = max(i, idx)
        prev[d] = last.get(cpu, 0)
    return [(cpu, prev[d], fevents[idx]["ts"] if idx < len(fevents) else 1 << 64)
            for d, (cpu, _count, idx) in enumerate(drops)]


class Covered:
    """Whether a stamp lies in a loss stretch, within @slack of either end: the
    stretches widened by @slack and merged per CPU, so each look-up is a
    bisection (a scan of every stretch per event was quadratic, and took ten
    minutes of an emulated guest for 500 000 events and 90 stretches)."""

    def __init__(self, windows, slack):
        per = defaultdict(list)
        for cpu, lo, hi in windows:
            per[cpu].append((lo - slack, hi + slack))
        self.lo, self.hi = {}, {}
        for cpu, spans in per.items():
            merged = []
            for lo, hi in sorted(spans):
                if merged and lo <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], hi)
                else:
                    merged.append([lo, hi])
            self.lo[cpu] = [m[0] for m in merged]
            self.hi[cpu] = [m[1] for m in merged]

    def __call__(self, cpu, ts):
        los = self.lo.get(cpu)
        if not los:
            return False
        i = bisect.bisect_right(los, ts) - 1
        return i >= 0 and ts <= self.hi[cpu][i]


def _pair(fa, hb, tol):
    """Pair two sorted stamp lists in order within tol; returns (pairs, rest_f, rest_h)."""
    pairs, rest_f, rest_h = [], [], []
    i = j = 0
    while i < len(fa) and j < len(hb):
        dt = hb[j] - fa[i]
        if abs(dt) <= tol:
            pairs.append((fa[i], hb[j]))
            i += 1
            j += 1
        elif dt < 0:
            rest_h.append(hb[j])
            j += 1
        else:
            rest_f.append(fa[i])
            i += 1
    return pairs, rest_f + fa[i:], rest_h + hb[j:]


def match(hgt_events, fevents, drops, window, tol, near=None):
    """Match; returns a dict of counts, the pairs' stamp differences (all, and by
    (cpu, kind) in dts_by), the pairs as (cpu, ftrace stamp, module stamp) and the
    unmatched events as (key, stamp).

    Pairing runs in two passes per (cpu, kind, identity): first in order
    within near (default tol / 250), where almost every pair lies, then what
    is left within tol, for the pairs a stalled vCPU pulled apart. One pass at
    the wide tol would pair a missing event's neighbour in its place and shift
    every later pair by one: the loss would surface at the end of the run,
    with the shifted pairs' differences counted as disagreement.

    Events are paired over the whole window but judged only inside it less
    tol at each end: a pair whose two stamps lie on either side of the
    trimmed edge is still a pair.  A pair is judged by its ftrace event.
    """
    lo, hi = window
    near = tol // 250 if near is None else near
    covered = Covered(loss_windows_hgt(hgt_events) + loss_windows_ftrace(fevents, drops), tol)
    a, b = defaultdict(list), defaultdict(list)      # (cpu, kind, key) -> [ts]
    excluded = 0
    judged = lambda ts: lo + tol <= ts <= hi - tol
    for e in fevents:
        if e["event"] not in KINDS or not lo <= e["ts"] <= hi:
            continue
        if covered(e["cpu"], e["ts"]):
            excluded += judged(e["ts"])
            continue
        kind, fkey, _ = KINDS[e["event"]]
        a[(e["cpu"], kind, fkey(e["fields"]))].append(e["ts"])
    for e in hgt_events:
        if e.kind not in HGT_KIND or not lo <= e.tsc <= hi:
            continue
        if covered(e.cpu, e.tsc):
            excluded += judged(e.tsc)
            continue
        b[(e.cpu, e.kind, HGT_KIND[e.kind][1](e.fields))].append(e.tsc)

    res = dict(ftrace=0, hgtrace=0, matched=0, excluded=excluded, max_dt=0, dts=[], pairs=[],
               only_ftrace=[], only_hgtrace=[], dts_by=defaultdict(list))
    for key in set(a) | set(b):
        close, rest_f, rest_h = _pair(sorted(a.get(key, [])), sorted(b.get(key, [])), near)
        far, rest_f, rest_h = _pair(rest_f, rest_h, tol)
        dts = [h - f for f, h in close + far if judged(f)]
        res["pairs"] += [(key[0], f, h) for f, h in close + far if judged(f)]
        only_f = [t for t in rest_f if judged(t)]
        only_h = [t for t in rest_h if judged(t)]
        res["matched"] += len(dts)
        res["dts"] += dts
        res["dts_by"][key[:2]] += dts
        res["ftrace"] += len(dts) + len(only_f)
        res["hgtrace"] += len(dts) + len(only_h)
        res["only_ftrace"] += [(key, t) for t in only_f]
        res["only_hgtrace"] += [(key, t) for t in only_h]
    if res["dts"]:
        res["max_dt"] = max(abs(d) for d in res["dts"])
    return res


# Kinds whose tracepoint is called where the task can be preempted (do_exit). Where the kernel
# calls probes preemptible (after 6.12: 7.3 calls them under SRCU, kmod/compat.h), a callback
# behind another's can run only once the task runs again, maybe on another CPU. The module's
# probes come first (HGT_TP_PRIO), so of such an event the other recorder's stamp is the late one.
PREEMPTIBLE_SITES = ("exit",)
# on PREEMPT_RT the softirqs run preemptible too (kmod/compat.h, HGT_TP_PRIO): 7.3-rt, fresh-clone run
# of 2026-12-02 on a slow host, hgtrace-ftrace's softirq_entry callback ran 84 ms after the module's
RT_PREEMPTIBLE_SITES = PREEMPTIBLE_SITES + ("softirq_entry", "softirq_exit")
SHARED_IDENTITY = ("softirq_entry", "softirq_exit")


def preemptible_probes(kernel):
    """Whether the kernel named in a recording's metadata ("Linux 7.3.4+deb13-amd64 ...")
    calls its probes preemptible: releases after 6.12."""
    m = re.search(r"(\d+)\.(\d+)", kernel or "")
    return bool(m) and (int(m.group(1)), int(m.group(2))) > (6, 12)


def preemptible_sites(kernel):
    """The kinds whose probes the kernel named in a recording's metadata may call preemptible:
    none up to 6.12; the exit after it; the softirqs too on PREEMPT_RT."""
    if not preemptible_probes(kernel):
        return ()
    return RT_PREEMPTIBLE_SITES if "PREEMPT_RT" in (kernel or "") or "-rt-" in (kernel or "") else PREEMPTIBLE_SITES


def displaced(res, hgt_events, fevents, drops, tol, sites=PREEMPTIBLE_SITES):
    """Pair what @res left unmatched of @sites (preemptible_sites) with the other recording's event of
    the same kind and identity, on any CPU and at any distance, wherever it lies: matched or
    not, or left out near a loss stretch (a callback run late can land outside the stretch its
    other copy lies in). Take the unmatched ones paired off the lists and return the pairs as
    (the module's stamp, the other's stamp, the module's CPU, the other's CPU).

    One with no copy at all in the other recording is excluded (counted in res["excluded"])
    where the other reported a loss on any CPU from @tol before it to 20 @tol (1 s at the
    tests' 50 ms) after: the late callback ran on whatever CPU the task was resumed on, once
    it was, inside that CPU's lost stretch (7.3, 2026-12-02: a late callback 93 ms after the
    module's probe under LOSS_LOAD's 40 hackbench tasks on 2 vCPUs, and a module-only exit
    whose copy fell in hgtrace-ftrace's lost stretches from 85 ms after it)."""
    mod, other = defaultdict(list), defaultdict(list)
    for e in hgt_events:
        if e.kind in sites and e.kind in HGT_KIND:
            mod[(e.kind, HGT_KIND[e.kind][1](e.fields))].append((e.tsc, e.cpu))
    for e in fevents:
        if e["event"] in KINDS and KINDS[e["event"]][0] in sites:
            kind, fkey, _ = KINDS[e["event"]]
            other[(kind, fkey(e["fields"]))].append((e["ts"], e["cpu"]))
    late = 20 * tol
    lost_in = {"only_hgtrace": [(lo - late, hi + tol) for _c, lo, hi in loss_windows_ftrace(fevents, drops)],
               "only_ftrace": [(lo - late, hi + tol) for _c, lo, hi in loss_windows_hgt(hgt_events)]}
    pairs, left = [], {"only_ftrace": [], "only_hgtrace": []}
    # a softirq's identity is its vector, shared by thousands of events: its late copy is the other
    # recording's unmatched event of that vector (nearest first, each taken once), not any event
    spare = {"only_ftrace": defaultdict(list), "only_hgtrace": defaultdict(list)}
    for side in spare:
        for (cpu, kind, key), ts in res[side]:
            if kind in sites and kind in SHARED_IDENTITY:
                spare[side][(kind, key)].append((ts, cpu))
    taken = set()
    for side, there, mine_first in (("only_ftrace", mod, False), ("only_hgtrace", other, True)):
        opposite = spare["only_hgtrace" if side == "only_ftrace" else "only_ftrace"]
        for (cpu, kind, key), ts in res[side]:
            if kind not in sites:
                left[side].append(((cpu, kind, key), ts))
                continue
            if (side, kind, key, ts, cpu) in taken:
                continue
            cands = there.get((kind, key), []) if kind not in SHARED_IDENTITY else \
                [x for x in opposite.get((kind, key), []) if (("only_hgtrace" if side == "only_ftrace"
                                                               else "only_ftrace"), kind, key) + x not in taken]
            if cands and kind in SHARED_IDENTITY:
                t, c = min(cands, key=lambda x: abs(x[0] - ts))
                taken.add((("only_hgtrace" if side == "only_ftrace" else "only_ftrace"), kind, key, t, c))
                pairs.append((ts, t, cpu, c) if mine_first else (t, ts, c, cpu))
            elif cands:
                t, c = min(cands, key=lambda x: abs(x[0] - ts))
                pairs.append((ts, t, cpu, c) if mine_first else (t, ts, c, cpu))
            elif any(lo <= ts <= hi for lo, hi in lost_in[side]):
                res["excluded"] += 1
            else:
                left[side].append(((cpu, kind, key), ts))
    res["only_ftrace"], res["only_hgtrace"] = left["only_ftrace"], left["only_hgtrace"]
    return pairs


def frozen(res, hgt_events, fevents):
    """Pair what @res left unmatched across a frozen CPU: the module's event and the other
    recording's of the same CPU, kind and identity, the module's stamp first, with no event of
    either recording on that CPU between the two stamps. Both probes of one event run back to
    back on one CPU; when the emulator's thread is descheduled between them, the CPU does
    nothing at all until the second (6.12-rt, fresh-clone run of 2026-12-07: one waking of
    65 323 events stamped 0.78 s apart, both recordings 65 323 events, no loss). A missing event
    does not pair this way: its CPU ran on, and recorded, between it and the other's next copy.
    Takes the pairs off @res's lists and returns them as (the module's stamp, the other's, CPU)."""
    stamps = defaultdict(list)          # cpu -> every stamp of either recording, sorted
    for e in hgt_events:
        stamps[e.cpu].append(e.tsc)
    for e in fevents:
        stamps[e["cpu"]].append(e["ts"])
    for s in stamps.values():
        s.sort()
    others = defaultdict(list)
    for (key, ts) in res["only_ftrace"]:
        others[key].append(ts)
    pairs, left_h, taken = [], [], set()
    for key, th in sorted(res["only_hgtrace"], key=lambda x: x[1]):
        s = stamps[key[0]]
        # the CPU's next stamp after the module's own (the module's copy itself is in s)
        i = bisect.bisect_right(s, th)
        nxt = s[i] if i < len(s) else None
        tf = nxt if nxt in others.get(key, ()) and (key, nxt) not in taken else None
        if tf is None:
            left_h.append((key, th))
            continue
        taken.add((key, tf))
        pairs.append((th, tf, key[0]))
    res["only_hgtrace"] = left_h
    res["only_ftrace"] = [(k, t) for k, t in res["only_ftrace"] if (k, t) not in taken]
    return pairs

