"""context - what every experiment's analysis is given: where the runs are,
which kernels were asked for, quick or full, and a place to say which run
gave no figure and why."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from . import plan
from ..errors import HgError
from .runs import RunDir, find


@dataclass
class Ctx:
    out: str
    kernels: Sequence[str]
    quick: bool
    missing: List[str] = field(default_factory=list)

    def run(self, kernel: str, exp: str, run: str, guest: Optional[str] = None) -> Optional[RunDir]:
        """The run directory, or None (and a line in missing) when it was not run or is unreadable."""
        e = plan.BY_KEY[exp]
        g = guest or next((plan.guest_of(e, r) for r in plan.runs_of(e, self.quick) if r.name == run), e.guest)
        try:
            r = find(self.out, kernel, g, exp, run)
        except HgError as e:
            self.missing.append(str(e))
            return None
        if r is None:
            where = "this machine" if g == plan.NATIVE else f"{kernel} ({g} guest)"
            self.missing.append(f"{exp}/{run} on {where}: not run")
        return r

    def note_error(self, what: str, e: Exception) -> None:
        self.missing.append(f"{what}: {e}")

    def command(self, exp: str, run: str) -> str:
        for r in plan.runs_of(plan.BY_KEY[exp], self.quick):
            if r.name == run:
                return "hourglass " + " ".join(r.args(self.quick))
        return ""


_NOT_RUN = re.compile(r"^(\S+) on (.+): not run$")


def fold_not_run(missing: Sequence[str]) -> List[str]:
    """One line per kernel and guest for the runs that were not made ("6.12 (icount guest): not run:
    fig4/cpu, fig4/yield"), in the order first seen, the other lines as they are, duplicates dropped:
    a run cut short leaves whole guests out, and a line per run would bury the page."""
    out: List[str] = []
    runs: Dict[str, List[str]] = {}
    for m in missing:
        hit = _NOT_RUN.match(m)
        if hit is None:
            if m not in out:
                out.append(m)
            continue
        run, where = hit.groups()
        if where not in runs:
            runs[where] = []
            out.append(where)
        if run not in runs[where]:
            runs[where].append(run)
    return [f"{m}: not run: {_names(runs[m])}" if m in runs else m for m in out]


def _names(runs: List[str], most: int = 8) -> str:
    if len(runs) <= most:
        return ", ".join(runs)
    return f"{', '.join(runs[:most - 2])} and {len(runs) - most + 2} more ({len(runs)} runs)"

