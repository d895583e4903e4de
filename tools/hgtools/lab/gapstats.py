"""gapstats - what user space could see of each actual class, from the lab's
runs: for the inference rules' author.

    python3 -m hgtools.lab.gapstats OUT [--guest icount] [--json FILE]

Reads OUT/<kernel>/<guest>/<scenario>/gaps.jsonl (tools/hgtools/lab/analyse.py
writes them) and prints, per guest and per actual class (voluntary gaps
left out), over every run and per kernel:

  - the gap length: 10th, 50th, 90th percentile and maximum (us);
  - the phase against the tick: the distance (us) from the gap's start to
    the nearest multiple of the tick period counted from the tick's phase,
    that is the median start offset of the gaps the kernel says were the
    tick, modulo the period (the period from the report's calibration, a
    user-space figure); the share within 20 us of it;
  - recurrence: the share of gaps that have another gap of the same thread
    starting one tick period earlier or later (within 20 us), as rule 2
    looks for;
  - how the gaps were inferred (the confusion row, as shares).

Every figure but the actual class is something hourglass's own data gives.
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import sys
from collections import Counter, defaultdict
from typing import Any, Dict, List

from . import analyse

NEAR_US = 20.0


def pct(vals: List[float], q: float) -> float:
    s = sorted(vals)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def run_stats(d: str) -> List[Dict[str, Any]]:
    """One record per non-voluntary gap of the run in @d: class, inferred, length, phase, recurrence."""
    with open(os.path.join(d, "report.json")) as f:
        rep = json.load(f)
    hz = rep["run"]["tsc_hz"]
    ticks = ((rep.get("inference") or {}).get("calibration") or {}).get("tick") or {}
    with open(os.path.join(d, "gaps.jsonl")) as f:
        gaps = [json.loads(line) for line in f]
    out = []
    by_cpu: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
    for g in gaps:
        if not g.get("vol"):
            by_cpu[g["cpu"]].append(g)
    for cpu, gs in by_cpu.items():
        tick = ticks.get(str(cpu))
        period = tick["period_ms"] * 1e-3 * hz if tick and tick.get("period_ms") else 4e-3 * hz
        timer_offs = [g["g0"] % period for g in gs if g["actual"] == "timer"]
        phase = statistics.median(timer_offs) if timer_offs else None
        gs.sort(key=lambda g: g["g0"])
        starts = [g["g0"] for g in gs]
        near = NEAR_US * 1e-6 * hz
        for g in gs:
            dist = None
            if phase is not None:
                off = (g["g0"] - phase) % period
                dist = min(off, period - off) / hz * 1e6
            rec = False
            for t in (g["g0"] - period, g["g0"] + period):
                i = bisect.bisect_left(starts, t - near)
                if i < len(starts) and abs(starts[i] - t) <= near:
                    rec = True
            out.append({"actual": g["actual"], "inferred": g["inferred"], "len_us": (g["g1"] - g["g0"]) / hz * 1e6,
                        "phase_us": dist, "recurs": rec})
    return out


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = {}
    by = defaultdict(list)
    for r in rows:
        by[r["actual"]].append(r)
    for c, rs in sorted(by.items()):
        lens = [r["len_us"] for r in rs]
        ph = [r["phase_us"] for r in rs if r["phase_us"] is not None]
        inf = Counter(r["inferred"] for r in rs)
        out[c] = {"gaps": len(rs), "len_p10_us": pct(lens, 0.1), "len_p50_us": pct(lens, 0.5),
                  "len_p90_us": pct(lens, 0.9), "len_max_us": max(lens),
                  "phase_p50_us": pct(ph, 0.5) if ph else None,
                  "near_tick_phase": sum(1 for p in ph if p <= NEAR_US) / len(ph) if ph else None,
                  "recurs_at_tick_period": sum(1 for r in rs if r["recurs"]) / len(rs),
                  "inferred": {k: v / len(rs) for k, v in inf.most_common()}}
    return out


def table(title: str, s: Dict[str, Any]) -> str:
    lines = [title, f"  {'class':<14}{'gaps':>7}{'p10 us':>9}{'p50 us':>9}{'p90 us':>9}{'max us':>10}"
                    f"{'phase p50':>10}{'<20us':>7}{'recurs':>7}  inferred as"]
    for c, f in s.items():
        inf = ", ".join(f"{k} {100 * v:.0f}%" for k, v in f["inferred"].items())
        ph = "" if f["phase_p50_us"] is None else f"{f['phase_p50_us']:.0f}"
        near = "" if f["near_tick_phase"] is None else f"{100 * f['near_tick_phase']:.0f}%"
        lines.append(f"  {c:<14}{f['gaps']:>7}{f['len_p10_us']:>9.1f}{f['len_p50_us']:>9.1f}{f['len_p90_us']:>9.1f}"
                     f"{f['len_max_us']:>10.1f}{ph:>10}{near:>7}{100 * f['recurs_at_tick_period']:>6.0f}%  {inf}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description="gap lengths, tick phase and recurrence by actual class")
    ap.add_argument("out")
    ap.add_argument("--guest", default=None, help="one guest only (default: each)")
    ap.add_argument("--json", help="also write the figures as JSON")
    a = ap.parse_args()
    runs = [r for r in analyse.runs_under(a.out) if os.path.exists(os.path.join(r["dir"], "gaps.jsonl"))
            and (not a.guest or r["guest"] == a.guest)]
    pooled: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    per_kernel: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    per_scenario: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for r in runs:
        rows = run_stats(r["dir"])
        pooled[r["guest"]] += rows
        per_kernel[f"{r['guest']} guest, {r['kernel']}"] += rows
        per_scenario[f"{r['guest']} guest, {r['scenario']} (every kernel)"] += rows
    result = {"pooled": {g: summarise(rs) for g, rs in pooled.items()},
              "per_kernel": {k: summarise(rs) for k, rs in per_kernel.items()},
              "per_scenario": {k: summarise(rs) for k, rs in per_scenario.items()}}
    for g, s in result["pooled"].items():
        print(table(f"{g} guest, every kernel and scenario:", s) + "\n")
    for part in ("per_kernel", "per_scenario"):
        for k, s in sorted(result[part].items()):
            print(table(f"{k}:", s) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
