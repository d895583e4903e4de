"""matching - pair the module's events with ftrace's, one to one.

Both recorders hook the same tracepoints, so each event should appear in both,
on the same CPU, with the same identity (pids, irq, vector), a few
microseconds apart (the other probe runs in between). Events inside a window
where either recorder reported a loss are excluded, as are events outside the
module's start/stop window; every other event must find its partner.
"""
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
    out = []
    for cpu, _count, idx in drops:
        prev = max((e["ts"] for e in fevents[:idx] if e["cpu"] == cpu), default=0)
        out.append((cpu, prev, fevents[idx]["ts"] if idx < len(fevents) else 1 << 64))
    return out


def _covered(cpu, ts, windows, slack):
    return any(c == cpu and lo - slack <= ts <= hi + slack for c, lo, hi in windows)


def match(hgt_events, fevents, drops, window, tol):
    """Match; returns a dict of counts and up to 20 unmatched examples per side."""
    lo, hi = window
    losses = loss_windows_hgt(hgt_events) + loss_windows_ftrace(fevents, drops)
    a, b = defaultdict(list), defaultdict(list)      # (cpu, kind, key) -> [ts]
    excluded = 0
    for e in fevents:
        if e["event"] not in KINDS or not (lo + tol <= e["ts"] <= hi - tol):
            continue
        if _covered(e["cpu"], e["ts"], losses, tol):
            excluded += 1
            continue
        kind, fkey, _ = KINDS[e["event"]]
        a[(e["cpu"], kind, fkey(e["fields"]))].append(e["ts"])
    for e in hgt_events:
        if e.kind not in HGT_KIND or not (lo + tol <= e.tsc <= hi - tol):
            continue
        if _covered(e.cpu, e.tsc, losses, tol):
            excluded += 1
            continue
        b[(e.cpu, e.kind, HGT_KIND[e.kind][1](e.fields))].append(e.tsc)

    res = dict(ftrace=0, hgtrace=0, matched=0, excluded=excluded, max_dt=0, dts=[],
               only_ftrace=[], only_hgtrace=[])
    for key in set(a) | set(b):
        fa, hb = sorted(a.get(key, [])), sorted(b.get(key, []))
        res["ftrace"] += len(fa)
        res["hgtrace"] += len(hb)
        i = j = 0
        while i < len(fa) and j < len(hb):
            dt = hb[j] - fa[i]
            if abs(dt) <= tol:
                res["matched"] += 1
                res["dts"].append(dt)
                i += 1
                j += 1
            elif hb[j] < fa[i]:
                res["only_hgtrace"].append((key, hb[j]))
                j += 1
            else:
                res["only_ftrace"].append((key, fa[i]))
                i += 1
        res["only_ftrace"] += [(key, t) for t in fa[i:]]
        res["only_hgtrace"] += [(key, t) for t in hb[j:]]
    if res["dts"]:
        res["max_dt"] = max(abs(d) for d in res["dts"])
    return res
