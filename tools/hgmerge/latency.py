"""latency - every timer wake-up decomposed (seed 003: L = timer + scheduling
jitter + non-preemptible sections; what rtla timerlat's auto-analysis does
for its own thread, here for hourglass's LAT and PERIODIC threads), and
every missed deadline explained by what ran instead.

A wake-up's stages, from the kernel's events on the thread's CPU:
  timer      intended expiry -> the local timer interrupt that woke it
  irq        that interrupt's entry -> sched_waking of the thread
  sched      sched_waking -> sched_switch to the thread
  return     sched_switch -> hourglass's first TSC read in user space
"""
import statistics

import hourglass_trace as H

from . import truth as T
from .load import Window

MARGIN_US = 20      # the intended expiry is converted from CLOCK_MONOTONIC: allow for it


def windows(run):
    """The windows the sweep must account: wake-ups and missed periods."""
    out = []
    margin = int(MARGIN_US * 1e-6 * run.hz)
    for r in run.hg.records:
        tid = run.threads[r.thread].get("tid", 0)
        if r.type == H.WAKE and r.t1 > r.t0 - margin:
            out.append(Window("wake", r.thread, tid, r.t0 - margin, r.t1, r.cpu, r))
        elif r.type == H.JOB and r.flags & H.JOB_MISSED and r.t2 > r.t0:
            out.append(Window("miss", r.thread, tid, r.t0, r.t2, r.cpu, r))
    return out


def _blame(w, names, exclude_idle=True):
    comp = {k: v for k, v in w.truth["comp"].items()
            if v > 0 and k[0] != "self"
            and not (k[0] == "task" and (k[1] in (w.tid, None) or (exclude_idle and k[1] == 0)))}
    if not comp:
        return None, 0
    k = max(comp, key=comp.get)
    return T.component_name(k, names), comp[k]


def decompose(run, wins, names):
    hz = run.hz
    us = lambda c: None if c is None else c / hz * 1e6
    per = {}
    worst = None
    for w in wins:
        if w.kind != "wake" or w.truth is None:
            continue
        r, tr = w.rec, w.truth
        intended, user = r.t0, r.t1
        woken, sw_in = tr["woken"], tr["in"]
        irq = None
        ticks = [t for t in tr["ticks"] if woken is None or t <= woken]
        if ticks:
            irq = ticks[-1]
        stages = {"timer": us(irq - intended) if irq else None,
                  "irq": us(woken - irq) if irq and woken and woken >= irq else None,
                  "sched": us(sw_in - woken) if woken and sw_in and sw_in >= woken else None,
                  "return": us(user - sw_in) if sw_in else None}
        total = us(user - intended)
        known = {k: v for k, v in stages.items() if v is not None}
        largest = max(known, key=known.get) if known else None
        who, _ = _blame(w, names)
        d = {"t_ms": round((intended - run.hg.info["t0_tsc"]) / hz * 1e3, 6), "cpu": w.cpu0,
             "latency_us": total, "hourglass_lateness_us": r.lateness_ns / 1e3,
             "stages_us": stages, "largest_stage": largest, "blame": who,
             "complete": len(known) == 4}
        per.setdefault(w.thread, []).append(d)
        if worst is None or total > worst["latency_us"]:
            worst = dict(d, thread=w.thread)
    summary = {}
    for k, ds in per.items():
        s = {"wakeups": len(ds), "decomposed": sum(1 for d in ds if d["complete"])}
        for st in ("timer", "irq", "sched", "return"):
            v = sorted(d["stages_us"][st] for d in ds if d["stages_us"][st] is not None)
            if v:
                s[st] = {"median_us": statistics.median(v), "p99_us": v[min(len(v) - 1, int(len(v) * 0.99))],
                         "max_us": v[-1]}
        lat = sorted(d["latency_us"] for d in ds)
        s["latency"] = {"median_us": statistics.median(lat), "max_us": lat[-1]}
        top = sorted(ds, key=lambda d: -d["latency_us"])[:5]
        s["worst"] = top
        s["all_us"] = [round(v, 3) for v in lat]         # sorted: the CDF
        summary[k] = s
    return {"threads": summary, "worst": worst}


def misses(run, wins, names):
    """Every missed deadline: what ran on the thread's CPU in that period instead."""
    out = []
    hz = run.hz
    for w in wins:
        if w.kind != "miss" or w.truth is None:
            continue
        comp = sorted(((k, v) for k, v in w.truth["comp"].items() if v > 0 and k[0] != "self"
                       and not (k[0] == "task" and k[1] in (w.tid, None))), key=lambda kv: -kv[1])
        period = w.g1 - w.g0
        out.append({"thread": w.thread, "t_ms": round((w.g0 - run.hg.info["t0_tsc"]) / hz * 1e3, 6),
                    "cpu": w.cpu0, "period_ms": period / hz * 1e3,
                    "thread_ran_ms": sum(v for k, v in w.truth["comp"].items()
                                         if k[0] == "self" or (k[0] == "task" and k[1] == w.tid)) / hz * 1e3,
                    "instead": [{"what": T.component_name(k, names), "ms": v / hz * 1e3} for k, v in comp[:4]]})
    return out
