"""allowances - the lab's allowances, as the scenarios' data holds them, in one table:
every known misread ([[known_misread]]: a kernel's guest reads some gaps of one class
as another, excused up to its share of a class's gaps, 2% at most) and every class not
held ([[class_not_held]]), each with why and the dated runs behind it.

    python3 -m hgtools.lab.allowances            print the table (markdown)
    python3 -m hgtools.lab.allowances --write    put it in docs/lab.md, between its markers

docs/lab.md's copy is this table (tests/unit/test_lab.py checks it), so that editing a
scenario's data and running --write is all a change of allowance takes.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List

from . import scenario
from .. import vocab

DOC = os.path.join(scenario.TOP, "docs", "lab.md")
BEGIN = "<!-- allowances: python3 -m hgtools.lab.allowances --write -->"
END = "<!-- end of allowances -->"


def table() -> str:
    """The markdown table of every scenario's allowances and classes not held."""
    rows: List[str] = []
    for name in scenario.names():
        sc = scenario.load(name)
        for m in sc["known_misread"]:
            rows.append(f"| {name} | {', '.join(m['kernels'])} | {', '.join(m['guests'])} | known misread: "
                        f"{m['actual']} read as {m['inferred']}, at most {100 * m['share']:g}% | {m['why']} | "
                        f"{'; '.join(m['runs'])} |")
        for e in sc["class_not_held"]:
            rows.append(f"| {name} | {', '.join(e['kernels'])} | {', '.join(e['guests'])} | not held: "
                        f"{', '.join(e['classes'])} | {e['why']} | {'; '.join(e['runs'])} |")
    head = (f"Each known misread excuses at most its share of a class's gaps in a run, and all of a class's "
            f"together at most {100 * vocab.ALLOWANCE_CEILING:g}% (`vocab.ALLOWANCE_CEILING`).\n\n"
            "| scenario | kernels | guests | what | why | the runs behind it |\n"
            "| --- | --- | --- | --- | --- | --- |\n")
    return head + "\n".join(r.replace("\n", " ") for r in rows) + "\n"


def block() -> str:
    return f"{BEGIN}\n{table()}{END}"


def in_doc(text: str) -> str:
    """@text's allowances block (between the markers), '' if it has none."""
    a, b = text.find(BEGIN), text.find(END)
    return text[a:b + len(END)] if 0 <= a < b else ""


def main() -> int:
    ap = argparse.ArgumentParser(description="the lab's allowances (scenario data) as one table")
    ap.add_argument("--write", action="store_true", help=f"replace the table in {DOC}")
    a = ap.parse_args()
    if not a.write:
        print(table(), end="")
        return 0
    with open(DOC) as f:
        text = f.read()
    old = in_doc(text)
    if not old:
        print(f"allowances: {DOC} has no '{BEGIN}' ... '{END}' block", file=sys.stderr)
        return 1
    with open(DOC, "w") as f:
        f.write(text.replace(old, block()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
