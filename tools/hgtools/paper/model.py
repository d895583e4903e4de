"""model - what each experiment's analysis hands to the page: sections with
tables (the paper's published numbers in their own columns, the kernel's
recorded truth in others, marked), figures (drawn, with their data), notes
on what could not be measured and why, and a one-line finding.

The page (page.py) renders these as HTML and Markdown; every table and
figure is also written as CSV and JSON (data/), and make check's quick mode
(scripts/paper-check) asserts on the same structure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

# what a cell of a table may hold
Cell = Any


@dataclass
class Column:
    name: str
    kind: str = "measured"     # "key" (what the row is), "paper" (2002), "measured" (hourglass), "truth" (the kernel)
    unit: str = ""
    note: str = ""


@dataclass
class Table:
    key: str                    # file name part: data/<section>-<key>.csv
    caption: str
    columns: List[Column]
    rows: List[List[Cell]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def add(self, *cells: Cell) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"table {self.key}: a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(list(cells))

    def kinds(self) -> List[str]:
        return [c.kind for c in self.columns]

    def has_figures(self) -> bool:
        """Whether some measured or truth cell holds a number (what the quick check asks of a table)."""
        idx = [i for i, c in enumerate(self.columns) if c.kind in ("measured", "truth")]
        return any(is_number(r[i]) for r in self.rows for i in idx)

    def has_truth(self) -> bool:
        idx = [i for i, c in enumerate(self.columns) if c.kind == "truth"]
        return bool(idx) and any(r[i] not in (None, "", "-") for r in self.rows for i in idx)


@dataclass
class Figure:
    key: str
    title: str
    how_to_read: str
    svg: str = ""               # inline, for the page
    files: Dict[str, str] = field(default_factory=dict)   # format -> path relative to the output directory
    data: Any = None            # what it was drawn from: written as data/<section>-<key>.json


@dataclass
class Section:
    key: str                    # the experiment's key (plan.py)
    number: str                 # the paper's section
    title: str
    guest: str
    why_guest: str
    paper: str                  # what the paper did and found, in a few sentences
    commands: List[str] = field(default_factory=list)
    tables: List[Table] = field(default_factory=list)
    figures: List[Figure] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)        # including what could not be measured
    finding: str = ""           # the closing note's line: today against 2002
    missing: List[str] = field(default_factory=list)      # runs that gave no figure, and why


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v))


def fmt(v: Cell, digits: int = 3) -> str:
    """A cell as text: numbers to @digits significant figures (integers as they are), None as '-'."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if v == 0:
            return "0"
        mag = math.floor(math.log10(abs(v)))
        if mag >= digits - 1:
            return f"{v:.0f}"
        return f"{v:.{max(0, digits - 1 - mag)}f}"
    return str(v)


def pct(part: float, whole: float) -> Optional[float]:
    return None if not whole else 100.0 * part / whole


def first(seq: Sequence[Any], default: Any = None) -> Any:
    return seq[0] if seq else default
