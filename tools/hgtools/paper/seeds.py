"""seeds - seed 001 (rt-muse: supply-bound functions) and seed 002
(microstate accounting) on the runs of sections 5.1, 5.5 and 5.6.

Supply: per thread, the merger's lower and upper supply-bound functions
(report JSON charts.sbf) summed up as rt-muse does (sbf.py): guaranteed
bandwidth alpha and delay Delta, most bandwidth and burst, the longest
window with nothing; beside the kernel's own share of the CPU for that
thread (microstates: on-CPU time by its switches over the window).

Microstates: each thread's CPU time five ways (docs/merge.md), against the
kernel's switches; getrusage's user/system split is sampled at the tick,
its total scaled to the scheduler's runtime (cputime_adjust), so where
sampling under-reports shows in the split and, for threads that run in
short bursts between ticks, in the system share.
"""
from __future__ import annotations

from typing import Any, Dict, List

from ..errors import HgError
from . import figures, plan, sbf
from .context import Ctx
from .model import Column, Section, Table

PAPER = ("Seed 001 (rt-muse, Maggio, Lelli and Bini 2017): lower and upper supply-bound functions from a run's "
         "trace, summed up as a bandwidth and a delay (lower) and a bandwidth and a burst (upper); SCHED_OTHER "
         "guarantees nothing, SCHED_DEADLINE its reservation. Seed 002 (Chubb 2003): per-thread time in each "
         "state measured at every transition against tick-sampled getrusage(), which misses threads that run "
         "between ticks.")
SOURCES = [("fig4", "cpu", "10 x CPU, NORMAL"), ("fig4", "yield", "10 x CPU_YIELD 0.9ms"),
           ("rta", "hr", "5.5 RTMED 3/8 + RTLOW 17/33, HR"), ("dl", "hard_over", "5.6 hard +0.1 ms"),
           ("dl", "hard_exact", "5.6 hard exact")]
MICRO = [("fig4", "cpu", "10 x CPU, NORMAL"), ("fig4", "yield", "10 x CPU_YIELD 0.9ms"),
         ("table1", "idle", "LAT 1ms HR + SCHED_IDLE probe")]


def analyse(ctx: Ctx) -> Section:
    exp = plan.BY_KEY["seeds"]
    sec = Section("seeds", exp.section, exp.title, exp.guest, plan.WHY[exp.guest], PAPER)
    t = Table("supply", "Supply-bound functions per thread, rt-muse's summary (windows 10 us to half the run)",
              [Column("kernel", "key"), Column("run", "key"), Column("thread", "key"),
               Column("alpha (lower)", note="guaranteed share of the CPU"), Column("Delta", unit="ms"),
               Column("alpha (upper)"), Column("burst", unit="ms"), Column("longest nothing", unit="ms"),
               Column("share, longest window (lower / upper)"),
               Column("CPU share (kernel)", "truth", note="on-CPU time by its switches / the thread's window"),
               Column("paper (2002)", "paper")])
    curves: Dict[str, Any] = {}
    for k in ctx.kernels:
        for exp_key, run, label in SOURCES:
            r = ctx.run(k, exp_key, run)
            if r is None:
                continue
            try:
                rep = r.report
                micro = {m["thread"]: m for m in rep.get("microstates") or []}
                for key, s in sorted(((rep.get("charts") or {}).get("sbf") or {}).items(), key=lambda kv: int(kv[0])):
                    su = sbf.from_report(s)
                    if su is None:
                        continue
                    m = micro.get(int(key))
                    share = m["kernel_ns"] / (m["window_ms"] * 1e6) if m and m.get("window_ms") else None
                    t.add(k, label, s.get("name", key), su.alpha, su.delta, su.alpha_upper, su.burst, su.blackout,
                          f"{su.share_lower:.3f} / {su.share_upper:.3f}", share,
                          "rt-muse: SCHED_OTHER no guarantee" if exp_key == "fig4" else "-")
                    if exp_key in ("rta", "dl"):
                        curves.setdefault(f"{k} {label}", {})[s.get("name", key)] = s
            except (HgError, KeyError, OSError, ValueError, TypeError) as e:
                ctx.note_error(f"seeds: {exp_key}/{run} on {k}", e)
    sec.tables.append(t)
    m = Table("microstates", "CPU time per thread five ways against the kernel's switches (seed 002); getrusage's "
              "system share is tick-sampled",
              [Column("kernel", "key"), Column("run", "key"), Column("thread", "key"),
               Column("on CPU (kernel)", "truth", "ms", "between its sched_switch events"),
               Column("in handlers (kernel)", "truth", "ms", "interrupt handlers while it was current"),
               Column("hourglass intervals", unit="%", note="relative to the kernel's"),
               Column("thread CPU clock", unit="%"), Column("schedstat", unit="%"), Column("getrusage", unit="%"),
               Column("getrusage system", unit="ms"),
               Column("paper (2002)", "paper")])
    under: List[Any] = []
    for k in ctx.kernels:
        for exp_key, run, label in MICRO:
            r = ctx.run(k, exp_key, run)
            if r is None:
                continue
            try:
                rep = r.report
                acc = {int(x["thread"]): x["accounting"] for x in r.hourglass["threads"]}
                for x in rep.get("microstates") or []:
                    kern = x["kernel_ns"] / 1e6
                    if kern <= 0:
                        continue

                    def rel(v: Any) -> Any:
                        return None if v is None else 100.0 * v

                    a = acc.get(int(x["thread"]), {})
                    t_sys = a.get("rusage_system_ns")
                    # a LAT thread records no intervals: nothing to compare
                    ivk = None if not x.get("intervals_ns") else x.get("intervals_vs_kernel")
                    m.add(k, label, x["name"], kern, x["handlers_ns"] / 1e6, rel(ivk),
                          rel(x.get("cputime_vs_kernel")), rel(x.get("schedstat_vs_kernel")),
                          rel(x.get("rusage_vs_kernel")), None if t_sys is None else t_sys / 1e6,
                          "getrusage: tick-sampled (Chubb)")
                    under.append((k, label, x.get("rusage_vs_kernel"), ivk))
            except (HgError, KeyError, OSError, ValueError, TypeError) as e:
                ctx.note_error(f"seeds: microstates of {exp_key}/{run} on {k}", e)
    m.notes.append("Percentages are each source's difference from the kernel's on-CPU time (+ over, - under). "
                   "hourglass's intervals leave out the gaps inside the thread's slices (interrupts, the tick), "
                   "which is why they read low by the handlers' share.")
    sec.tables.append(m)
    if curves:
        sec.figures.append(_sbf_figure(ctx, curves))
    sec.finding = _finding(t, under)
    return sec


def _sbf_figure(ctx: Ctx, curves: Dict[str, Any]) -> Any:
    keys = list(curves)[:4]
    ncols = 2 if len(keys) > 1 else 1
    nrows = (len(keys) + ncols - 1) // ncols

    def paint(axes: Any) -> None:
        flat = list(axes.flat) if hasattr(axes, "flat") else [axes]
        for ax, key in zip(flat, keys):
            for i, (name, s) in enumerate(curves[key].items()):
                col = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"][i % 4]
                ds = s["window_ms"]
                ax.plot(ds, s["lower_ms"], "--", color=col, label=f"{name} lower")
                ax.plot(ds, s["upper_ms"], "-", color=col, label=f"{name} upper")
            ax.set_xscale("log")
            ax.set_yscale("symlog", linthresh=0.01)
            ax.set_xlabel("window (ms)")
            ax.set_ylabel("CPU received (ms)")
            ax.set_title(key, fontsize=8)
            ax.legend(fontsize=6)
        for ax in flat[len(keys):]:
            ax.set_visible(False)
    return figures.draw(ctx.out, "seeds", "sbf", "Supply-bound functions of the real-time threads",
                        "Per window length (x), the least (dashed) and the most (solid) CPU time the thread got "
                        "in any window that long (rt-muse's lower and upper supply functions).",
                        {k: curves[k] for k in keys}, paint, height_in=2.8 * nrows + 0.5, ncols=ncols, nrows=nrows)


def _finding(t: Table, under: List[Any]) -> str:
    s = ""
    dl = [r for r in t.rows if str(r[1]).startswith("5.6 hard +0.1")]
    if dl:
        s += "SCHED_DEADLINE +0.1 ms: guaranteed shares " + ", ".join(f"{r[0]} {r[2]} {r[3]:.3f}" for r in dl[:4])
    other = [r for r in t.rows if str(r[1]).startswith("10 x CPU,")]
    if other:
        s += ("; " if s else "") + f"SCHED_OTHER threads: longest window with nothing {max(r[7] for r in other):.1f} ms"
    ru = [u for _, _, u, _ in under if u is not None]
    if ru:
        s += ("; " if s else "") + f"getrusage within {100 * min(ru):+.1f}% to {100 * max(ru):+.1f}% of the kernel's " \
                                   "on-CPU time (its total is scaled to the scheduler's clock)"
    return s or "no run"
