"""fig4 - section 5.1: the direct cost of a context switch, and the quantum.

Ten CPU-bound NORMAL threads (and the CPU_YIELD 0.9 ms variant) on one CPU.
From hourglass alone (the paper's way): a gap between two different threads
that did not yield is an involuntary switch; its length is the switch's
cost as user space sees it, tick included. From the kernel (the truth): the
gaps the kernel says were a switch to another hourglass thread, split into
the interrupt handlers inside them (the tick that ended the quantum) and
the rest (kernel entry, schedule(), the switch, the return): the switch
path. Quantum: CPU time per slice, by hourglass's inferred switches and by
the kernel's (schedstat's slice count, sched_switch).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import figures, plan, stats
from .context import Ctx
from .model import Column, Section, Table
from ..errors import HgError
from .runs import RunDir

PAPER = ("Ten CPU-bound threads at NORMAL for 60 s; histograms of the gaps between two threads when the "
         "first did not yield (quantum expirations, Fig. 4). On a Pentium III at 850 MHz: about 10 us a "
         "switch on Linux (less with high-resolution timers, whose clock interrupt handler is cheaper), "
         "over 30 us on FreeBSD 4.5; 2.4.17 gave CPU-bound threads 60 ms quanta (18 switches a second), "
         "TimeSys, Windows 2000 and FreeBSD 20 ms (50 a second). Involuntary switches cost more than "
         "voluntary ones because they come with a clock interrupt.")
PAPER_QUANTUM = "60 ms, 18/s (2.4.17); 20 ms, 50/s (TimeSys, W2K, FreeBSD)"
PAPER_COST = "about 10 us (PIII 850 MHz)"


def _us(cycles: float, hz: float) -> float:
    return cycles / hz * 1e6


def run_figures(r: RunDir) -> Dict[str, Any]:
    """The figures of one run (cpu or yield) from its gap stream and hourglass's summary."""
    hz = r.tsc_hz
    hg = r.hourglass
    dur_s = hg["duration_ns"] / 1e9
    inv_inf: List[float] = []            # hourglass: gaps between two threads, not asked for
    k_len: List[float] = []              # kernel: involuntary switches between hourglass threads
    k_path: List[float] = []
    k_handler: List[float] = []
    vol_switch: List[float] = []         # yields that let another thread run
    vol_same: List[float] = []           # yields that came straight back
    vol_k_path: List[float] = []
    k_switches = 0
    with_tick = 0
    for g in r.gaps():
        length = _us(g["g1"] - g["g0"], hz)
        if g["actual"] == "switch_hg":
            k_switches += 1
        if g["vol"] == 1:
            if g["thread"] != g["next_thread"]:
                vol_switch.append(length)
                if g["actual"] == "switch_hg":
                    vol_k_path.append(_us(g["switch_path_cycles"], hz))
            else:
                vol_same.append(length)
            continue
        if g["vol"]:
            continue
        if g["inferred"] == "switch_hg":
            inv_inf.append(length)
        if g["actual"] == "switch_hg" and g.get("preempted"):
            k_len.append(length)
            k_handler.append(_us(g["handler_cycles"], hz))
            k_path.append(_us(g["switch_path_cycles"], hz))
            if g["tick"]:
                with_tick += 1
    threads = hg["threads"]
    cpu_ms = sum(t["cpu_time_ns"] for t in threads) / 1e6
    slices = sum(t["accounting"]["schedstat_slices"] for t in threads)
    sched_ms = sum(t["accounting"]["schedstat_on_cpu_ns"] for t in threads) / 1e6
    n_inf = len(inv_inf) + len(vol_switch)
    rep = r.report
    tick = None
    cal = ((rep.get("inference") or {}).get("calibration") or {}).get("tick") or {}
    for v in cal.values():
        tick = v.get("period_ms")
    return {
        "duration_s": dur_s,
        "switches_inferred": n_inf, "switches_kernel": k_switches, "slices": slices,
        "per_s_inferred": n_inf / dur_s, "per_s_kernel": k_switches / dur_s,
        "quantum_ms_inferred": cpu_ms / n_inf if n_inf else None,
        "quantum_ms_kernel": sched_ms / slices if slices else None,
        "tick_ms_inferred": tick,
        "inv_inferred_us": inv_inf, "inv_kernel_us": k_len, "inv_path_us": k_path, "inv_handler_us": k_handler,
        "with_tick": with_tick, "vol_switch_us": vol_switch, "vol_same_us": vol_same, "vol_path_us": vol_k_path,
        "steal": (rep.get("steal") or {}).get("share"),
    }


def _m(xs: List[float]) -> Optional[float]:
    return stats.median(xs) if xs else None


def analyse(ctx: Ctx) -> Section:
    exp = plan.BY_KEY["fig4"]
    sec = Section("fig4", exp.section, exp.title, exp.guest, plan.WHY[exp.guest], PAPER,
                  commands=[ctx.command("fig4", r.name) for r in exp.runs])
    q = Table("quantum", "Quantum length and switches per second: hourglass's inference against the kernel's count",
              [Column("kernel", "key"), Column("threads", "key"),
               Column("switches/s (hourglass)", unit="1/s"), Column("switches/s (kernel)", "truth", "1/s",
                                                                   "sched_switch between hourglass threads"),
               Column("quantum (hourglass)", unit="ms", note="CPU time per inferred switch"),
               Column("quantum (kernel)", "truth", "ms", note="schedstat: CPU time per slice"),
               Column("tick found (hourglass)", unit="ms"), Column("steal", unit="%"),
               Column("paper (2002)", "paper")])
    c = Table("cost", "Cost of a switch: the gap hourglass sees against the kernel's switch path and tick handler "
              "(medians, us)",
              [Column("kernel", "key"), Column("threads", "key"),
               Column("involuntary: shortest (hourglass)", unit="us"), Column("involuntary: median (hourglass)", unit="us"),
               Column("involuntary: median gap (kernel)", "truth", "us"),
               Column("switch path (kernel)", "truth", "us", "the two threads' own kernel time in the gap"),
               Column("tick handler (kernel)", "truth", "us"),
               Column("with the tick inside (kernel)", "truth", "%"),
               Column("voluntary: median (hourglass)", unit="us", note="yields another thread followed"),
               Column("voluntary: switch path (kernel)", "truth", "us"),
               Column("yields that switched", unit="%"),
               Column("paper (2002)", "paper")])
    hist: Dict[str, Dict[str, List[float]]] = {}
    per_kernel: Dict[str, Dict[str, Any]] = {}
    for k in ctx.kernels:
        for run in ("cpu", "yield"):
            r = ctx.run(k, "fig4", run)
            if r is None:
                continue
            try:
                f = run_figures(r)
            except (HgError, KeyError, OSError) as e:
                ctx.note_error(f"fig4/{run} on {k}", e)
                continue
            per_kernel.setdefault(k, {})[run] = {x: y for x, y in f.items() if not x.endswith("_us")}
            label = "CPU" if run == "cpu" else "CPU_YIELD 0.9ms"
            q.add(k, label, f["per_s_inferred"], f["per_s_kernel"], f["quantum_ms_inferred"], f["quantum_ms_kernel"],
                  f["tick_ms_inferred"], None if f["steal"] is None else 100 * f["steal"], PAPER_QUANTUM)
            inv, nvol = f["inv_inferred_us"], len(f["vol_switch_us"]) + len(f["vol_same_us"])
            c.add(k, label, min(inv) if inv else None, _m(inv), _m(f["inv_kernel_us"]), _m(f["inv_path_us"]),
                  _m(f["inv_handler_us"]), 100 * f["with_tick"] / len(f["inv_kernel_us"]) if f["inv_kernel_us"] else None,
                  _m(f["vol_switch_us"]), _m(f["vol_path_us"]),
                  100 * len(f["vol_switch_us"]) / nvol if nvol else None, PAPER_COST)
            if run == "cpu":
                hist[k] = {"hourglass: involuntary switch gap": inv, "kernel: switch path": f["inv_path_us"],
                           "kernel: tick handler in it": f["inv_handler_us"]}
    sec.tables += [q, c]
    if hist:
        sec.figures.append(_histograms(ctx, hist))
    sec.finding = _finding(per_kernel, c)
    sec.notes.append("Times are the instruction-count guest's (8 ns an instruction, no caches): a switch's "
                     "cost is the length of its code path, not what a real CPU would take.")
    return sec


def _histograms(ctx: Ctx, hist: Dict[str, Dict[str, List[float]]]) -> Any:
    ks = list(hist)
    ncols = 2 if len(ks) > 1 else 1
    nrows = (len(ks) + ncols - 1) // ncols
    # the bulk, as the paper's histograms show it: the rare long ones (a switch with more in it) are in the data
    hi = max([stats.percentile(v, 98) for h in hist.values() for v in h.values() if v] or [100.0])
    edges = [hi * 1.5 * i / 60 for i in range(61)]

    def paint(axes: Any) -> None:
        flat = [axes] if nrows * ncols == 1 else list(axes.flat)
        for ax, k in zip(flat, ks):
            for (name, xs), col in zip(hist[k].items(), ("#1f77b4", "#2ca02c", "#d62728")):
                if xs:
                    ax.hist(xs, bins=edges, histtype="step", color=col, label=f"{name} ({len(xs)})")
            ax.set_title(k, fontsize=9)
            ax.set_xlabel("us")
            ax.set_ylabel("switches")
            ax.legend(fontsize=7)
        for ax in flat[len(ks):]:
            ax.set_visible(False)
    data = {k: {n: sorted(v) for n, v in h.items()} for k, h in hist.items()}
    return figures.draw(ctx.out, "fig4", "hist", "Involuntary context switches between ten CPU-bound threads",
                        "Like the paper's Fig. 4: how long each quantum expiration took, as hourglass sees it "
                        "(the gap) and as the kernel recorded it (the switch path and the tick handler inside "
                        "the gap).", data, paint, height_in=2.6 * nrows + 0.6, ncols=ncols, nrows=nrows)


def _finding(per_kernel: Dict[str, Dict[str, Any]], cost: Table) -> str:
    if not per_kernel:
        return "no run"
    qs = [v["cpu"]["quantum_ms_kernel"] for v in per_kernel.values() if "cpu" in v and v["cpu"]["quantum_ms_kernel"]]
    ps = [v["cpu"]["per_s_kernel"] for v in per_kernel.values() if "cpu" in v]
    med = [row[3] for row in cost.rows if row[1] == "CPU" and row[3] is not None]
    vol = [row[8] for row in cost.rows if row[1] != "CPU" and row[8] is not None]
    s = ""
    if qs and ps:
        s += (f"quanta of {min(qs):.1f}-{max(qs):.1f} ms ({min(ps):.0f}-{max(ps):.0f} switches/s) against 2.4.17's "
              f"60 ms (18/s)")
    if med:
        s += f"; an involuntary switch is a {min(med):.0f}-{max(med):.0f} us gap in instruction time"
    if vol:
        s += f", a voluntary one {min(vol):.0f}-{max(vol):.0f} us (no tick in it)"
    return s
