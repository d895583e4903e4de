"""judge - the inferences against the kernel's account: a confusion matrix
with precision and recall, the disagreements with the events that explain
them, context-switch cost and interrupt durations inferred and actual."""
import statistics
from collections import Counter, defaultdict

from . import truth as T

ACTUAL = ["switch_hg", "switch_other", "timer", "interrupt", "hidden", "other"]
INFERRED = ["switch_hg", "switch_other", "timer", "interrupt", "hidden"]


def _us(run, cycles):
    return cycles / run.hz * 1e6


def _median(v):
    return statistics.median(v) if v else None


def confusion(gaps):
    m = {a: {i: 0 for i in INFERRED} for a in ACTUAL}
    for g in gaps:
        m[g.truth["class"]][g.inferred] += 1
    return confusion_table(m)


def confusion_table(m):
    """Precision, recall and accuracy of matrix @m[actual][inferred]."""
    rows = {}
    for a in ACTUAL:
        n = sum(m[a].values())
        rows[a] = {"n": n, "recall": (m[a].get(a, 0) / n) if n and a in INFERRED else None}
    cols = {}
    for i in INFERRED:
        n = sum(m[a][i] for a in ACTUAL)
        cols[i] = {"n": n, "precision": (m[i][i] / n) if n else None}
    correct = sum(m[c][c] for c in INFERRED)
    total = sum(r["n"] for r in rows.values())
    return {"matrix": m, "rows": rows, "cols": cols, "correct": correct, "total": total,
            "accuracy": correct / total if total else None}


def describe_events(run, g, names, limit=12):
    """The kernel events inside a gap, as short text, times in us from g0."""
    out = []
    for tsc, typ, arg, flags in (g.truth["events"] or [])[:limit]:
        kind = {T.SWITCH: "switch to", T.IRQ_ENTRY: "irq", T.IRQ_EXIT: "irq end",
                T.SOFTIRQ_ENTRY: "softirq", T.SOFTIRQ_EXIT: "softirq end",
                T.VEC_ENTRY: "vector", T.VEC_EXIT: "vector end", T.WAKING: "waking",
                T.WAKEUP: "wakeup", T.MIGRATE: "migrate", T.NMI: "nmi",
                T.HRTIMER_ENTRY: "hrtimer", T.HRTIMER_EXIT: "hrtimer end"}.get(typ, f"type {typ}")
        if typ in (T.SWITCH, T.WAKING, T.WAKEUP, T.MIGRATE):
            what = names.task(arg)
        elif typ in (T.IRQ_ENTRY, T.IRQ_EXIT):
            what = f"{arg} {names.irq.get(arg, '')}".rstrip()
        elif typ in (T.SOFTIRQ_ENTRY, T.SOFTIRQ_EXIT):
            what = T.SOFTIRQS[arg] if arg < len(T.SOFTIRQS) else str(arg)
        elif typ in (T.VEC_ENTRY, T.VEC_EXIT):
            what = T.component_name(("vec", flags), names)
        else:
            what = ""
        out.append(f"+{_us(run, tsc - g.g0):.1f}us {kind} {what}".rstrip())
    if g.truth["n_events"] > limit:
        out.append(f"... {g.truth['n_events'] - limit} more")
    return out


def gap_record(run, g, names):
    tr = g.truth
    comp = {T.component_name(k, names) if k[0] != "self" else "self": round(_us(run, v), 3)
            for k, v in sorted(tr["comp"].items(), key=lambda kv: -kv[1]) if v > 0}
    return {"t_ms": round((g.g0 - run.hg.info["t0_tsc"]) / run.hz * 1e3, 6), "cpu": g.cpu0,
            "thread": g.thread, "next_thread": g.next_thread, "length_us": round(_us(run, g.length), 3),
            "inferred": g.inferred, "inferred_why": g.why, "actual": tr["class"],
            "actual_kind": tr["kind"],
            "primary": T.component_name(tr["primary"], names) if tr["primary"] else None,
            "actual_why": tr["why"], "components_us": comp,
            "events": describe_events(run, g, names)}


def cause_rows(run, items):
    """Actual causes by time lost; @items: (name, gaps, total cycles, median cycles), in the order
    of their first gap (the order of ties)."""
    return sorted(({"cause": k, "gaps": n, "total_ms": round(_us(run, total) / 1e3, 3),
                    "median_us": round(_us(run, med), 3)} for k, n, total, med in items),
                  key=lambda c: -c["total_ms"])


def duration_rows(run, items):
    """Interrupt durations; @items: (source, gaps, median gap, median handler time) in cycles."""
    return sorted(({"source": k, "gaps": n, "inferred_median_us": round(_us(run, a), 3),
                    "handler_median_us": round(_us(run, b), 3)} for k, n, a, b in items),
                  key=lambda d: -d["gaps"])


def context_switch(run, switches, shortest, med, confirmed, handler_med, only_med, only_shortest,
                   pre, ticked, resched):
    """Context-switch cost the paper's way and the kernel's (cycles in, microseconds out)."""
    cs = {"switches": switches, "inferred_shortest_us": _us(run, shortest),
          "inferred_median_us": _us(run, med), "kernel_confirmed": confirmed,
          "kernel_handler_median_us": _us(run, handler_med or 0),
          "kernel_switch_only_median_us": _us(run, only_med or 0),
          "kernel_switch_only_shortest_us": _us(run, only_shortest)}
    if pre:
        cs["preemptions_between_cpu_bound"] = pre
        cs["with_tick_in_gap"] = ticked
        cs["with_resched_ipi"] = resched
    return cs


def migrations(inferred, confirmed, kernel):
    return {"inferred": inferred, "confirmed": confirmed, "kernel_migrations_of_hourglass_threads": kernel}


def judge(run, kinfo, calib):
    names = kinfo["names"]
    scored = [g for g in run.gaps if not g.voluntary and g.truth["class"] != "unexplainable"]
    unexpl = [g for g in run.gaps if g.truth["class"] == "unexplainable"]
    conf = confusion(scored)

    # actual causes, fine-grained
    by_primary = defaultdict(list)
    for g in run.gaps:
        tr = g.truth
        key = T.component_name(tr["primary"], names) if tr["primary"] else tr["kind"]
        if tr["class"] in ("switch_hg", "switch_other") and tr["out"]:
            key = f"switched to {names.task(tr['out'][2])}"
        by_primary[key].append(g.length)
    causes = cause_rows(run, [(k, len(v), sum(v), _median(v)) for k, v in by_primary.items()])
    classes = Counter(g.truth["class"] for g in run.gaps)

    # context-switch cost, the paper's way (5.1) and the kernel's
    sw = [g for g in scored if g.inferred == "switch_hg"]
    sw_true = [g for g in sw if g.truth["class"] == "switch_hg"]
    handler = lambda g: sum(v for k, v in g.truth["comp"].items() if k[0] in ("irq", "vec", "softirq", "nmi"))
    cs = None
    if sw:
        lens = [g.length for g in sw]
        only = [g.length - handler(g) for g in sw_true]
        # preemption between threads that never yield implies a tick (section 4)
        cpu_bound = {t["thread"] for t in run.threads if t.get("workload") in ("CPU", "CPU_SCAN")}
        pre = [g for g in sw_true if g.thread in cpu_bound and g.next_thread in cpu_bound]
        cs = context_switch(run, len(sw), min(lens), _median(lens), len(sw_true),
                            _median([handler(g) for g in sw_true]), _median(only), min(only or [0]),
                            len(pre), sum(1 for g in pre if ("vec", 0) in g.truth["comp"]),
                            sum(1 for g in pre if ("vec", 1) in g.truth["comp"]))

    # interrupt durations: inferred (the gap) against the handlers' time
    irq = defaultdict(lambda: ([], []))
    for g in scored:
        if g.inferred in ("timer", "interrupt") and g.truth["class"] in ("timer", "interrupt"):
            key = T.component_name(g.truth["primary"], names)
            irq[key][0].append(g.length)
            irq[key][1].append(handler(g))
    durations = duration_rows(run, [(k, len(a), _median(a), _median(b)) for k, (a, b) in irq.items()])

    # migrations, inferred from each interval's CPU, against the kernel's
    kmig = kinfo["migrations"]
    confirmed = 0
    for k, a, b in run.migrations:
        tid = run.threads[k].get("tid")
        if any(a.t1 <= t <= b.t0 and pid == tid for t, pid, _o, _d in kmig):
            confirmed += 1
    migr = migrations(len(run.migrations), confirmed, len(kmig))

    dis = [gap_record(run, g, names) for g in scored if g.inferred != g.truth["class"]]
    return {"confusion": conf, "causes": causes, "classes": dict(classes), "context_switch": cs,
            "interrupt_durations": durations, "migrations": migr,
            "unexplainable": {"gaps": len(unexpl), "why": dict(Counter(g.truth["why"] for g in unexpl))},
            "scored": len(scored), "voluntary": sum(1 for g in run.gaps if g.voluntary),
            "disagreements": dis, "calibration": calib}
