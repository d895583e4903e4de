"""page - the experiments' sections as one self-contained HTML page
(index.html: tables, inline SVG figures), the same as Markdown
(paper-today.md: tables, figures as links), and every table and figure's
data as CSV and JSON (data/)."""
from __future__ import annotations

import csv
import html
import json
import os
from typing import Any, Dict, List, Sequence

from .model import Section, Table, fmt, is_number

CSS = """
body { font-family: sans-serif; max-width: 1200px; margin: 1em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; vertical-align: top; }
td.key, th.key { text-align: left; }
th.truth, td.truth { background: #eef6ee; }
th.paper, td.paper { background: #f6f0e6; text-align: left; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
.why { background: #f4f4f8; padding: 0.4em 0.8em; border-left: 3px solid #99c; font-size: 0.9em; }
.paper { font-size: 0.9em; }
.note { color: #555; font-size: 0.85em; }
.missing { color: #a00; font-size: 0.85em; }
code { font-size: 0.9em; }
.legend span { display: inline-block; padding: 0 6px; margin-right: 6px; border: 1px solid #ccc; }
"""


def _cell(v: Any) -> str:
    return fmt(v)


def write_data(out: str, sections: Sequence[Section]) -> List[str]:
    """Each table as data/<section>-<table>.csv and .json, each figure's data as .json; the paths."""
    d = os.path.join(out, "data")
    os.makedirs(d, exist_ok=True)
    written = []
    for s in sections:
        for t in s.tables:
            base = os.path.join(d, f"{s.key}-{t.key}")
            with open(base + ".csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow([c.name + (f" ({c.unit})" if c.unit else "") for c in t.columns])
                for r in t.rows:
                    w.writerow(["" if v is None else v for v in r])
            with open(base + ".json", "w") as f:
                json.dump({"section": s.number, "table": t.key, "caption": t.caption,
                           "columns": [{"name": c.name, "kind": c.kind, "unit": c.unit, "note": c.note}
                                       for c in t.columns],
                           "rows": t.rows, "notes": t.notes}, f, indent=1)
            written += [base + ".csv", base + ".json"]
        for fig in s.figures:
            p = os.path.join(d, f"{s.key}-{fig.key}.json")
            with open(p, "w") as f:
                json.dump({"section": s.number, "figure": fig.key, "title": fig.title, "data": fig.data}, f)
            written.append(p)
    return written


def _html_table(sec: str, t: Table) -> str:
    out = [f"<table id=\"{html.escape(sec)}-{html.escape(t.key)}\"><caption>{html.escape(t.caption)}</caption><tr>"]
    for c in t.columns:
        title = f' title="{html.escape(c.note)}"' if c.note else ""
        unit = f" ({html.escape(c.unit)})" if c.unit else ""
        mark = " &#9673;" if c.kind == "truth" else ""
        out.append(f'<th class="{c.kind}"{title}>{html.escape(c.name)}{unit}{mark}</th>')
    out.append("</tr>")
    for r in t.rows:
        out.append("<tr>" + "".join(f'<td class="{c.kind}">{html.escape(_cell(v))}</td>'
                                   for c, v in zip(t.columns, r)) + "</tr>")
    out.append("</table>")
    for n in t.notes:
        out.append(f'<p class="note">{html.escape(n)}</p>')
    return "\n".join(out)


def render_html(sections: Sequence[Section], head: Dict[str, Any]) -> str:
    h = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
         "<title>hourglass: the paper's experiments on today's kernels</title>",
         f"<style>{CSS}</style></head><body>",
         "<h1>hourglass: the paper's experiments on today's kernels</h1>",
         f"<p>{html.escape(head['intro'])}</p>",
         "<p class=\"legend\"><span class=\"key\">what the row is</span>"
         "<span style=\"background:#f6f0e6\">the paper (2002)</span><span>hourglass (user space)</span>"
         "<span style=\"background:#eef6ee\">the kernel's recording (the truth) &#9673;</span></p>",
         "<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in head["facts"]) + "</ul>",
         "<h2 id=\"summary\">Today against 2002, one line an experiment</h2><ul>"]
    for s in sections:
        h.append(f"<li><a href=\"#{s.key}\">{html.escape(s.number)}</a> {html.escape(s.title)}: "
                 f"{html.escape(s.finding or 'no figure')}</li>")
    h.append("</ul>")
    for s in sections:
        h.append(f"<h2 id=\"{s.key}\">{html.escape(s.number)}: {html.escape(s.title)}</h2>")
        h.append(f"<p class=\"paper\"><b>The paper:</b> {html.escape(s.paper)}</p>")
        h.append(f"<p class=\"why\"><b>Where:</b> {html.escape(s.why_guest)}.</p>")
        if s.commands:
            h.append("<p class=\"note\">" + "<br>".join(f"<code>{html.escape(c)}</code>" for c in s.commands if c)
                     + "</p>")
        for t in s.tables:
            h.append(_html_table(s.key, t))
        for f in s.figures:
            h.append(f"<figure id=\"{html.escape(s.key)}-{html.escape(f.key)}\">{f.svg}"
                     f"<figcaption class=\"note\">{html.escape(f.how_to_read)} "
                     f"(data: data/{html.escape(s.key)}-{html.escape(f.key)}.json)</figcaption></figure>")
        for n in s.notes:
            h.append(f"<p class=\"note\">{html.escape(n)}</p>")
        for m in s.missing:
            h.append(f"<p class=\"missing\">Missing: {html.escape(m)}</p>")
    h.append(f"<p class=\"note\">{html.escape(head['footer'])}</p></body></html>")
    return "\n".join(h)


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_table(t: Table) -> str:
    cols = []
    for c in t.columns:
        name = c.name + (f" ({c.unit})" if c.unit else "")
        cols.append(f"**{name}** ◉" if c.kind == "truth" else (f"*{name}*" if c.kind == "paper" else name))
    out = [f"*{_md_escape(t.caption)}*", "", "| " + " | ".join(_md_escape(x) for x in cols) + " |",
           "| " + " | ".join("---:" if c.kind in ("measured", "truth") else "---" for c in t.columns) + " |"]
    for r in t.rows:
        out.append("| " + " | ".join(_md_escape(_cell(v)) for v in r) + " |")
    out.append("")
    out += [f"{_md_escape(n)}" for n in t.notes]
    return "\n".join(out)


def render_md(sections: Sequence[Section], head: Dict[str, Any]) -> str:
    m = ["# The paper's experiments on today's kernels", "", head["intro"], ""]
    m += [f"- {x}" for x in head["facts"]]
    m += ["", "Columns: *the paper (2002)* in italics, hourglass's own figures plain, **the kernel's "
          "recording (the truth)** in bold with ◉.", "", "## Today against 2002, one line an experiment", ""]
    for s in sections:
        m.append(f"- **{s.number}** {s.title}: {s.finding or 'no figure'}")
    for s in sections:
        m += ["", f"## {s.number}: {s.title}", "", f"**The paper:** {s.paper}", "", f"**Where:** {s.why_guest}.", ""]
        for c in s.commands:
            if c:
                m.append(f"    {c}")
        m.append("")
        for t in s.tables:
            m += [_md_table(t), ""]
        for f in s.figures:
            m.append(f"Figure: {f.title} ({f.files.get('png', '')}; data: data/{s.key}-{f.key}.json). "
                     f"{f.how_to_read}")
            m.append("")
        for n in s.notes:
            m += [n, ""]
        for x in s.missing:
            m += [f"Missing: {x}", ""]
    m += ["", head["footer"], ""]
    return "\n".join(m)


def summary_numbers(sections: Sequence[Section]) -> Dict[str, Any]:
    """How many tables and figures each section has, and whether each table has figures and a truth column:
    what scripts/paper-check asserts."""
    return {s.key: {"tables": {t.key: {"rows": len(t.rows), "figures": t.has_figures(), "truth": t.has_truth(),
                                       "numbers": sum(1 for r in t.rows for v in r if is_number(v))}
                               for t in s.tables},
                    "figures": [f.key for f in s.figures], "missing": s.missing, "finding": s.finding}
            for s in sections}
