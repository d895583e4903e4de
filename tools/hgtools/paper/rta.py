"""rta - exact response-time analysis for fixed-priority preemptive
scheduling on one CPU (Joseph and Pandya 1986; Audsley et al. 1993, with
release jitter and blocking after Tindell et al. 1994), as the paper's
section 5.5 uses it.

For task i, with higher-priority tasks hp(i):

    w = B_i + C_i + sum_{j in hp(i)} ceil((w + J_j) / T_j) * C_j

iterated from w = C_i to a fixed point; the worst-case response time is
R_i = w + J_i, measured from when the job should have been released.
Overheads (the kernel's measured costs) enter as tasks of their own (the
tick: cost per period) and as extra cost per job (the switches into and
out of a job, its timer wake-up), which is how the analysis "takes the
kernel into account".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import List, Optional, Sequence


@dataclass
class Task:
    """One periodic task. Times in one unit (the callers use ms). Lower prio value = higher priority
    (ties are not allowed: fixed-priority analysis needs a strict order)."""
    name: str
    cost: float                 # C: worst-case execution time a job needs
    period: float               # T
    prio: int                   # 0 is the highest
    deadline: Optional[float] = None   # D, the period when None
    jitter: float = 0.0         # J: the largest delay of a release after its due time
    blocking: float = 0.0       # B: the longest a lower-priority task can hold it off

    @property
    def d(self) -> float:
        return self.period if self.deadline is None else self.deadline


@dataclass
class Result:
    name: str
    response: Optional[float]   # R = w + J; None when the iteration passed the limit (unbounded)
    busy: Optional[float]       # w, the fixed point of the recurrence
    iterations: List[float] = field(default_factory=list)   # every w tried, for the page
    schedulable: bool = False


def response_times(tasks: Sequence[Task], limit_factor: float = 20.0) -> List[Result]:
    """The worst-case response time of every task, in the order given.

    A task whose recurrence passes @limit_factor times its deadline (or whose higher-priority
    load is 100% or more) has no bounded response time: response None, not schedulable.
    """
    prios = [t.prio for t in tasks]
    if len(set(prios)) != len(prios):
        raise ValueError("fixed-priority analysis needs distinct priorities: " + ", ".join(
            f"{t.name}={t.prio}" for t in tasks))
    out: List[Result] = []
    for t in tasks:
        hp = [h for h in tasks if h.prio < t.prio]
        util = sum(h.cost / h.period for h in hp)
        res = Result(t.name, None, None)
        if util >= 1.0:
            out.append(res)
            continue
        w = t.cost + t.blocking
        res.iterations.append(w)
        limit = limit_factor * max(t.d, t.period)
        while True:
            nxt = t.blocking + t.cost + sum(math.ceil((w + h.jitter) / h.period - 1e-12) * h.cost for h in hp)
            res.iterations.append(nxt)
            if abs(nxt - w) < 1e-12:
                break
            w = nxt
            if w > limit:
                w = None  # type: ignore[assignment]
                break
        if w is not None:
            res.busy = w
            res.response = w + t.jitter
            res.schedulable = res.response <= t.d + 1e-12
        out.append(res)
    return out
