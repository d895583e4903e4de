"""fig5 - section 5.2 (Fig. 5): the indirect cost of a context switch (the
cache state a thread loses) against its working set, on this machine's real
caches (no module: its kernel cannot load one).

Per working set and trial: one CPU_SCAN thread, then ten, pinned to one CPU;
work W = full passes over the arrays (hourglass's work units). The paper's

    C = ((W1 - W10) / W1) * (T / N10)

with N10 the switches in the ten-thread run: as hourglass infers them (a
change of thread between two intervals) and as the kernel counts them
(schedstat's slices: the truth here). This machine is shared (other guests
and this machine's own hypervisor take CPU time), so besides the paper's
form with T the run's length, the figure uses work per CPU-second received
(W / the threads' CPU time) and T the CPU time the ten threads received:
steal then cancels out. 95% confidence intervals by the t-test over trials.
"""
from __future__ import annotations

import collections
import glob
import os
from typing import Any, Dict, List, Optional, Tuple

from . import figures, plan, stats
from .context import Ctx
from .model import Column, Section, Table
from ..errors import HgError
from .runs import RunDir, RunError

PAPER = ("One CPU_SCAN thread against ten, 15 trials of 45 s each way per working set, on a Pentium III at 850 "
         "MHz (256 KB L2, about 300 MB/s from memory): C grows with the working set, roughly as reading it back "
         "from memory (about 333 us for 100 KB), and becomes unpredictable past 128 KB (half the L2), likely "
         "from conflict misses without page colouring. 95% confidence intervals by the t-test.")


def caches() -> List[Tuple[str, int]]:
    """(name, KB) of the data caches of CPU 1 (the one the runs are pinned to), from sysfs."""
    out = []
    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu1/cache/index*")):
        try:
            typ = open(os.path.join(d, "type")).read().strip()
            lvl = open(os.path.join(d, "level")).read().strip()
            size = open(os.path.join(d, "size")).read().strip()
        except OSError:
            continue
        if typ == "Instruction":
            continue
        kb = int(size[:-1]) * (1024 if size.endswith("M") else 1) if size[-1] in "KM" else int(size) // 1024
        out.append((f"L{lvl}", kb))
    return out


def switches_inferred(r: RunDir) -> int:
    """Switches between hourglass threads as hourglass's own trace shows them: consecutive intervals
    (on its one CPU, by start time) of different threads."""
    iv = sorted((x["t0"], x["thread"]) for x in r.records("hourglass.hgl") if x.get("kind") == "interval")
    return sum(1 for a, b in zip(iv, iv[1:]) if a[1] != b[1])


def trial_figures(one: RunDir, ten: RunDir) -> Dict[str, Any]:
    h1, h10 = one.hourglass, ten.hourglass
    w1 = sum(t["work_units"] for t in h1["threads"])
    w10 = sum(t["work_units"] for t in h10["threads"])
    cpu1 = sum(t["accounting"]["thread_cputime_ns"] for t in h1["threads"]) / 1e9
    cpu10 = sum(t["accounting"]["thread_cputime_ns"] for t in h10["threads"]) / 1e9
    T = h10["duration_ns"] / 1e9
    n_inf = switches_inferred(ten)
    n_k = sum(t["accounting"]["schedstat_slices"] for t in h10["threads"])
    r1, r10 = w1 / cpu1 if cpu1 else 0.0, w10 / cpu10 if cpu10 else 0.0

    def c(loss: float, t: float, n: int) -> Optional[float]:
        return loss * t / n * 1e6 if n else None
    return {"W1": w1, "W10": w10, "T": T, "cpu1": cpu1, "cpu10": cpu10, "N10_inferred": n_inf, "N10_kernel": n_k,
            "C_paper_us": c((w1 - w10) / w1, T, n_inf) if w1 else None,
            "C_cpu_us": c((r1 - r10) / r1, cpu10, n_inf) if r1 else None,
            "C_cpu_kernel_us": c((r1 - r10) / r1, cpu10, n_k) if r1 else None,
            "cpu_share10": cpu10 / T if T else None}


def analyse(ctx: Ctx) -> Section:
    exp = plan.BY_KEY["fig5"]
    sec = Section("fig5", exp.section, exp.title, exp.guest, plan.WHY[exp.guest], PAPER,
                  commands=["hourglass -n 1 -d 2s -a -p NORMAL -w CPU_SCAN KB --affinity 1, then -n 10, "
                            "interleaved, per working set and trial"])
    by: Dict[int, List[Dict[str, Any]]] = collections.defaultdict(list)
    sizes = plan.FIG5_QUICK_KB if ctx.quick else plan.FIG5_KB
    trials = plan.FIG5_QUICK_TRIALS if ctx.quick else plan.FIG5_TRIALS
    for kb in sizes:
        for tr in range(trials):
            one = ctx.run("native", "fig5", f"ws{kb}k-n1-t{tr}")
            ten = ctx.run("native", "fig5", f"ws{kb}k-n10-t{tr}")
            if one is None or ten is None:
                continue
            if one.errors or ten.errors:
                # a trace cut short counts too few switches: such a trial is left out, not averaged in
                ctx.note_error(f"fig5 {kb} KB trial {tr}", RunError("; ".join(one.errors + ten.errors)))
                continue
            try:
                by[kb].append(trial_figures(one, ten))
            except (HgError, KeyError, OSError, ZeroDivisionError) as e:
                ctx.note_error(f"fig5 {kb} KB trial {tr}", e)
    t = Table("cost", "Indirect cost of a switch against the working set (mean over trials, 95% CI by the t-test)",
              [Column("working set", "key", "KB"), Column("trials"),
               Column("C, the paper's form", unit="us", note="T the run's length, N10 inferred"),
               Column("95% CI half-width", unit="us"),
               Column("C per CPU-second", unit="us", note="work per CPU-second; T the ten threads' CPU time; N10 inferred"),
               Column("95% CI half-width ", unit="us"),
               Column("C with the kernel's N10", "truth", "us", "the same, N10 = schedstat's slices"),
               Column("95% CI half-width  ", "truth", "us"),
               Column("N10/s (hourglass)", unit="1/s"), Column("N10/s (kernel)", "truth", "1/s"),
               Column("CPU share of the ten", unit="%", note="CPU time they received / run length: the rest was stolen"),
               Column("paper (2002)", "paper")])
    points = {}
    for kb in sizes:
        xs = by.get(kb) or []
        if not xs:
            continue
        cis = {}
        for key in ("C_paper_us", "C_cpu_us", "C_cpu_kernel_us"):
            v = [x[key] for x in xs if x[key] is not None]
            cis[key] = stats.mean_ci(v) if v else None
        T = sum(x["T"] for x in xs)
        paper = "about 333 us at 100 KB (back-of-envelope); unpredictable past 128 KB" if kb <= 256 else \
            "unpredictable past 128 KB (half the 256 KB L2)"
        t.add(kb, len(xs), *[y for ci in (cis[key] for key in ("C_paper_us", "C_cpu_us", "C_cpu_kernel_us"))
                             for y in ((ci.mean, ci.half) if ci else (None, None))],
              sum(x["N10_inferred"] for x in xs) / T, sum(x["N10_kernel"] for x in xs) / T,
              100 * sum(x["cpu_share10"] for x in xs) / len(xs), paper)
        points[kb] = {"trials": xs, **{k: (None if v is None else {"mean": v.mean, "half": v.half, "n": v.n})
                                       for k, v in cis.items()}}
    sec.tables.append(t)
    cs = caches()
    if cs:
        sec.notes.append("This machine's data caches (CPU 1): " + ", ".join(f"{n} {kb} KB" for n, kb in cs) +
                         ". Ten threads share the last level: past a tenth of it their arrays no longer all fit.")
    sec.notes.append("This machine is itself a virtual machine whose other CPU runs the guests of the whole team: "
                     "the runs hold the team's guest lock so that no guest runs beside them, and the CPU share column "
                     "says how much of the time the threads still did not get.")
    if points:
        sec.figures.append(_figure(ctx, points, cs))
    sec.finding = _finding(points, cs)
    return sec


def _figure(ctx: Ctx, points: Dict[int, Any], cs: List[Tuple[str, int]]) -> Any:
    def paint(ax: Any) -> None:
        for key, col, lab in (("C_cpu_us", "#1f77b4", "per CPU-second, N10 by hourglass"),
                              ("C_cpu_kernel_us", "#2ca02c", "per CPU-second, N10 by the kernel"),
                              ("C_paper_us", "#ff7f0e", "the paper's form (wall time)")):
            ks = [kb for kb in sorted(points) if points[kb].get(key)]
            ax.errorbar(ks, [points[kb][key]["mean"] for kb in ks],
                        yerr=[points[kb][key]["half"] or 0 for kb in ks], fmt="o-", color=col, capsize=3, label=lab,
                        markersize=4)
        for n, kb in cs:
            ax.axvline(kb, color="#999", ls=":", lw=1)
            ax.text(kb, ax.get_ylim()[1], f" {n}", fontsize=7, va="top", color="#666")
        figures.kb_axis(ax)
        ax.set_xlabel("working set per thread")
        ax.set_ylabel("cost per switch (us)")
        ax.legend(fontsize=7)
    return figures.draw(ctx.out, "fig5", "cost", "Indirect cost of a context switch against the working set",
                        "As the paper's Fig. 5: per working set, the work lost to switching, per switch, with 95% "
                        "confidence intervals; dotted lines are this machine's caches.", points, paint, height_in=3.8)


def _finding(points: Dict[int, Any], cs: List[Tuple[str, int]]) -> str:
    if not points:
        return "no run"
    ks = sorted(points)
    lo, hi = points[ks[0]].get("C_cpu_us"), points[ks[-1]].get("C_cpu_us")
    if not lo or not hi:
        return "no figure"
    big = max(ks, key=lambda kb: (points[kb].get("C_cpu_us") or {}).get("mean") or 0)
    return (f"on this machine ({', '.join(f'{n} {kb} KB' for n, kb in cs)}): {lo['mean']:.1f} us a switch at "
            f"{ks[0]} KB, {hi['mean']:.1f} us at {ks[-1]} KB, the most {points[big]['C_cpu_us']['mean']:.1f} us at "
            f"{big} KB (2002: about 333 us at 100 KB)")
