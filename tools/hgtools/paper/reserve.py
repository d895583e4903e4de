"""reserve - section 5.6: CPU reservations, today SCHED_DEADLINE. The
paper's two tasks (3 ms every 8 ms, 17 ms every 33) each in a reservation
of exactly their need, and of 0.1 ms more; hard (-rh: runtime, deadline and
period) and soft (-rs: the same with SCHED_FLAG_RECLAIM, GRUB reclaiming).

Measured: misses per task (hourglass). The kernel's side, from its
recording: how often each task was switched out while still runnable
(throttled when its budget ran out, or preempted by the other reservation),
how often the deadline scheduler's replenishment timer (dl_task_timer)
fired and gave it back the CPU, and, for the misses, what ran instead.
"""
from __future__ import annotations

import collections
from typing import Any, Dict, List

from . import plan
from .context import Ctx
from .model import Column, Section, Table
from ..errors import HgError
from .runs import RunDir

PAPER = ("On TimeSys Linux/CPU (and Linux/RK), reservations of exactly 3 ms in 8 and 17 ms in 33 missed 985 and "
         "106 deadlines (hit 12 and 197): 'vulnerable to minute perturbations'. With 0.1 ms more each: no misses "
         "(1000 and 303 hit). Soft reservations (-rs) would let a task use time left over.")
PAPER_RUNS = {"hard_exact": "t0 985 missed, 12 hit; t1 106 missed, 197 hit", "hard_over": "0 missed (1000, 303 hit)",
              "hard_more": "-",
              "soft_exact": "-", "soft_over": "-"}
LABEL = {"hard_exact": "hard, exact budget", "hard_over": "hard, +0.1 ms", "hard_more": "hard, +0.3 ms", "soft_exact": "soft (reclaim), exact",
         "soft_over": "soft (reclaim), +0.1 ms"}


def kernel_view(r: RunDir) -> Dict[int, Dict[str, int]]:
    """Per hourglass thread, from the kernel's own records: how often it was switched out while still
    runnable, and how often its replenishment timer (dl_task_timer) fired. The timer's address is its
    task's (dl_se->dl_timer): each address is given to the thread most often switched in next after
    it fires (the replenished task runs next unless the other has the earlier deadline)."""
    tids = {int(t["tid"]): int(t["thread"]) for t in r.hourglass["threads"]}
    names: Dict[int, str] = {}
    out = {k: {"out_runnable": 0, "replenished": 0} for k in tids.values()}
    fired: Dict[int, int] = collections.Counter()
    votes: Dict[int, "collections.Counter[int]"] = collections.defaultdict(collections.Counter)
    pending: List[int] = []
    for rec in r.records("kernel.hgt"):
        kind = rec.get("kind")
        f = rec.get("fields") or {}
        if kind == "name" and f.get("name_kind") == "func":
            names[int(f["id"])] = str(f["name"])
        elif kind == "hrtimer_entry" and names.get(int(f.get("func", -1))) == "dl_task_timer":
            fired[int(f["timer"])] += 1
            pending.append(int(f["timer"]))
        elif kind == "switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            if prev in tids and int(f["prev_state"]) == 0:
                out[tids[prev]]["out_runnable"] += 1
            if nxt in tids and pending:
                for tm in pending:
                    votes[tm][tids[nxt]] += 1
                pending = []
    for tm, n in fired.items():
        if votes.get(tm):
            out[votes[tm].most_common(1)[0][0]]["replenished"] += n
    return out


def analyse(ctx: Ctx) -> Section:
    exp = plan.BY_KEY["dl"]
    sec = Section("dl", exp.section, exp.title, exp.guest, plan.WHY[exp.guest], PAPER,
                  commands=[ctx.command("dl", r.name) for r in exp.runs])
    t = Table("reservations", "SCHED_DEADLINE reservations: misses, and what the kernel shows about each task",
              [Column("kernel", "key"), Column("reservation", "key"), Column("task", "key"),
               Column("jobs"), Column("missed"), Column("missed", unit="%"),
               Column("switched out runnable (kernel)", "truth", note="throttled or preempted with work left"),
               Column("replenishment timer fired (kernel)", "truth",
                      note="its dl_task_timer: armed when the budget ran out (throttled), fires at the next period"),
               Column("ran instead during misses (kernel)", "truth", note="the largest, ms summed over misses"),
               Column("paper (2002)", "paper")])
    found = []
    for k in ctx.kernels:
        for run in exp.runs:
            r = ctx.run(k, "dl", run.name)
            if r is None:
                continue
            try:
                kv = kernel_view(r)
                md = (r.report.get("missed_deadlines") or {}).get("listed") or []
                for th in r.hourglass["threads"]:
                    tid = int(th["thread"])
                    d = th.get("deadlines") or {}
                    hit, missed = int(d.get("hit", 0)), int(d.get("missed", 0))
                    inst: Dict[str, float] = collections.defaultdict(float)
                    for m in md:
                        if m.get("thread") == tid:
                            for x in m.get("instead") or []:
                                inst[x["what"]] += x["ms"]
                    top = "; ".join(f"{w} {v:.1f} ms" for w, v in sorted(inst.items(), key=lambda kv: -kv[1])[:2])
                    t.add(k, LABEL[run.name], f"t{tid}: {th.get('amount_ns', 0) / 1e6:g} ms in "
                          f"{th.get('period_ns', 0) / 1e6:g}", hit + missed, missed,
                          100.0 * missed / (hit + missed) if hit + missed else None,
                          kv[tid]["out_runnable"], kv[tid]["replenished"], top or "-", PAPER_RUNS[run.name])
                    found.append((k, run.name, tid, missed, hit + missed))
            except (HgError, KeyError, OSError, ValueError, TypeError) as e:
                ctx.note_error(f"dl/{run.name} on {k}", e)
    sec.tables.append(t)
    sec.notes.append("A PERIODIC job that is not done by its period's end is a miss and is dropped: the next starts "
                     "at once (docs/hourglass.md). SCHED_DEADLINE charges the kernel's work on the task's behalf "
                     "(switches, the tick, its timer's interrupt) to its budget, which is why an exact budget falls "
                     "short.")
    sec.finding = _finding(found)
    return sec


def _finding(found: List[Any]) -> str:
    if not found:
        return "no run"
    parts = []
    for run in ("hard_exact", "hard_over", "hard_more", "soft_exact", "soft_over"):
        xs = [(m, n) for _, r, _, m, n in found if r == run]
        if xs:
            parts.append(f"{LABEL[run]} {sum(m for m, _ in xs)} of {sum(n for _, n in xs)} jobs missed")
    return "; ".join(parts) + " over all kernels (2002 exact: 985/997 and 106/303; +0.1 ms: none)"
