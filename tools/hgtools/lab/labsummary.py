"""labsummary - the lab page's tables across runs, built from the runs' one table
(OUT/results.parquet, `hourglass results`, docs/results.md) with its named DuckDB queries:
accuracy per kernel and guest, each class's precision and recall per kernel and guest, and
the runs whose expectations failed. analyse.py writes the table, then index.html and lab.md
show these beside the per-run rows (labtable.py), so the page says what a farm's query says.
"""
from __future__ import annotations

import html
import os
import subprocess
import sys
from typing import Any, List, Optional, Sequence, Tuple

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
# (title, the named query of hgtools.results.QUERIES)
SECTIONS = (("Accuracy per kernel and guest: gaps with a kernel cause, the share inferred right", "accuracy"),
            ("Each class per kernel and guest, summed over the runs", "classes"),
            ("Runs whose expectations failed", "failed"))
Table = Tuple[str, List[str], List[Tuple[Any, ...]]]


def write_table(out: str) -> Tuple[Optional[str], str]:
    """`hourglass results OUT -o OUT/results.parquet`: the table's path, or None and why not
    (no pyarrow or duckdb where the lab is analysed: a farm's device)."""
    path = os.path.join(out, "results.parquet")
    if os.path.exists(path):
        os.unlink(path)     # never a table of an earlier analysis beside this one's lab.json
    cmd = [os.path.join(TOP, "build", "hourglass"), "results", out, "-o", path]
    env = dict(os.environ, HG_PROGRESS="0", HG_PYTHON=os.environ.get("HG_PYTHON", sys.executable))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return None, f"hourglass results exited {p.returncode}: {p.stderr.strip()[-300:]}"
    return path, ""


def tables(parquet: str) -> List[Table]:
    """The sections' rows, queried from @parquet as `hourglass results --query NAME` would."""
    from .. import results   # the one reader of the table

    t = results.read(parquet)
    return [(title, *results.query(t, results.QUERIES[name])) for title, name in SECTIONS]


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def as_html(ts: Sequence[Table], why_not: str = "") -> str:
    if not ts:
        return f"<h2>Across the runs</h2>\n<p>Not built: {html.escape(why_not)}</p>\n"
    parts = ["<h2>Across the runs</h2>\n<p>From <a href=\"results.parquet\">results.parquet</a>, the runs' one "
             "table (<code>hourglass results</code>, docs/results.md), by its named DuckDB queries: "
             "<code>hourglass results results.parquet --query NAME</code> prints the same.</p>"]
    for title, names, rows in ts:
        head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
        body = "\n".join("<tr>" + "".join(f"<td class=\"l\">{html.escape(_text(v))}</td>" for v in r) + "</tr>"
                         for r in rows) or f"<tr><td class=\"na\" colspan=\"{len(names)}\">none</td></tr>"
        parts.append(f"<h3>{html.escape(title)}</h3>\n<table>\n<tr>{head}</tr>\n{body}\n</table>")
    return "\n".join(parts) + "\n"


def as_markdown(ts: Sequence[Table], why_not: str = "") -> str:
    if not ts:
        return f"\n## Across the runs\n\nNot built: {why_not}\n"
    out = ["\n## Across the runs\n", "From `results.parquet` (`hourglass results OUT/results.parquet --query NAME`).\n"]
    for title, names, rows in ts:
        out.append(f"### {title}\n")
        out.append("| " + " | ".join(names) + " |")
        out.append("|" + " --- |" * len(names))
        out += ["| " + " | ".join(_text(v) for v in r) + " |" for r in rows] or ["| none |" + " |" * (len(names) - 1)]
        out.append("")
    return "\n".join(out)
