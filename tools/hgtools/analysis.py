"""analysis - the automatic analysis of the worst sample, as `rtla timerlat -a` prints one:
for the worst wake-up, each stage from the timer's expiry to user space with what ran in it
(the IRQ delay, the handler, the task that held the CPU with its pid, and the time the kernel
recorded nothing), and the stage to blame; for the longest gap, what it was made of and what
the inference said of it. Every figure is the merger's (report 2.6: a wake-up's stage_parts,
gaps.longest), this only lays them out, for `hourglass report`, `hourglass record` and the
HTML page alike (docs/merge.md, "Wake-up latency, decomposed").
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

# what each stage is, in rtla timerlat's words where it has them
STAGE_TEXT = {
    "timer": "IRQ delay: from the timer's expiry to its interrupt",
    "irq": "the interrupt's handler, to the thread's waking",
    "sched": "from the waking to the switch to the thread",
    "return": "from the switch to the thread's first read in user space",
}
NOTHING = "nothing recorded"
# what time with no kernel event is, said once where it matters most
NOTHING_WHY = ("no event on the CPU: time below the kernel (hypervisor, emulator, SMI) or kernel "
               "work with no tracepoint (entry and exit, a page fault)")


def _parts(parts: List[Dict[str, Any]]) -> str:
    return ", ".join(f"{p['what']} {p['us']:.1f} us" for p in parts) or "no part recorded"


def wakeup_lines(x: Optional[Dict[str, Any]], name: str = "") -> List[str]:
    """The analysis of one decomposed wake-up (the report's latency.worst, or a breaktrace's):
    a line a stage, then the verdict; [] when there is none."""
    if not x:
        return []
    who = name or x.get("name") or f"hg-thread-{x.get('thread', '?')}"
    out = [f"worst wake-up: {who} on CPU {x.get('cpu', '?')} at t={x.get('t', 0):.6f} s: "
           f"{x.get('latency_us', 0):.1f} us from its timer's expiry to user space"]
    stages = x.get("stages_us") or {}
    parts = x.get("stage_parts") or {}
    total = x.get("latency_us") or 0
    for st in ("timer", "irq", "sched", "return"):
        us = stages.get(st)
        if us is None:
            out.append(f"  {st:7s} {'-':>9s}  {STAGE_TEXT[st]}: not recorded")
            continue
        sp = parts.get(st) or {}
        out.append(f"  {st:7s} {us:9.1f}  {STAGE_TEXT[st]}: {_parts(sp.get('parts') or [])}")
    big = x.get("largest_stage")
    if big and stages.get(big) is not None:
        share = f" ({100 * stages[big] / total:.0f}% of it)" if total > 0 else ""
        out.append(f"  largest stage: {big}{share}; blamed on: {x.get('blame') or 'nothing that ran instead of it'}")
        if (parts.get(big) or {}).get("unrecorded_us", 0) > 0.5 * stages[big]:
            out.append(f"  ({NOTHING}: {NOTHING_WHY})")
    if not x.get("complete", True):
        out.append("  (not every stage was recorded)")
    return out


def gap_lines(g: Optional[Dict[str, Any]],
              name: Callable[[Any], str] = lambda k: f"hg-thread-{k}") -> List[str]:
    """The analysis of the longest gap (the report's gaps.longest)."""
    if not g:
        return []
    out = [f"longest gap: {name(g.get('thread'))}->{name(g.get('next_thread'))} on CPU {g.get('cpu', '?')} at "
           f"t={g.get('t', 0):.6f} s: {g.get('us', 0):.1f} us, {g.get('actual', '?')} ({g.get('cause', '?')})",
           f"  made of: {_parts(g.get('parts') or [])}",
           f"  inferred {g.get('inferred', '?')}: {g.get('why_inferred') or '-'}"]
    if (g.get("unrecorded_us") or 0) > 0.5 * (g.get("us") or 0):
        out.append(f"  ({NOTHING} for {g['unrecorded_us']:.1f} us of it: {NOTHING_WHY})")
    return out


def report_lines(rep: Dict[str, Any]) -> List[str]:
    """Both analyses of a report, the wake-up's first (a latency run's question)."""
    names = {t.get("thread"): t.get("name") for t in (rep.get("run") or {}).get("threads") or []}
    lat = rep.get("latency") or {}
    out = wakeup_lines(lat.get("worst"))
    gl = gap_lines((rep.get("gaps") or {}).get("longest"), lambda k: names.get(k) or f"hg-thread-{k}")
    if out and gl:
        out.append("")
    return out + gl


# the workloads whose threads wake from a timer: the ones a wake-up's latency is measured for
WAKING = ("LAT", "PERIODIC")


def after_record(run_dir: str) -> List[str]:
    """What `hourglass record` prints last for a latency run (a LAT or PERIODIC thread, and a
    kernel recording): the worst wake-up's analysis, from a merge of the run just recorded.
    [] for another run; a merge that fails says so in one line, and the run stays as it is."""
    import json
    import os
    try:
        with open(os.path.join(run_dir, "hourglass.json")) as f:
            info = json.load(f)
    except (OSError, ValueError):
        return []
    if not any(str(t.get("workload", "")).upper() in WAKING for t in info.get("threads") or []):
        return []
    from . import engine          # the merge's own modules: only now, for a latency run
    from .errors import HgError
    if not engine.has_ground_truth(run_dir):
        return []
    try:
        rep = engine.merge(run_dir, show_progress=False)
    except HgError as e:
        return [f"no automatic analysis: {e}"]
    return wakeup_lines((rep.get("latency") or {}).get("worst"))
