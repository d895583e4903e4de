"""labtable - the lab's results as people and spreadsheets read them: lab.csv
(one row per run and expectation) and index.html (one table: scenario x
kernel x guest; expected, found, named right, gaps explained, steal,
per-class precision and recall, macro F1; cells short of a target marked).
"""
from __future__ import annotations

import csv
import html
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

# the gaps' one vocabulary (tools/hgtools/vocab.py): the classes and the targets
from .. import vocab
from . import scenario

CLASS_COLS = vocab.INFERABLE_CLASSES
KERNEL_ORDER = ("6.1", "6.1-rt", "6.12", "6.12-rt", "7.3", "7.3-rt")   # scripts/kernels' order


def _order(r: Dict[str, Any]) -> Tuple[Any, ...]:
    k = r["kernel"]
    return (r["scenario"], KERNEL_ORDER.index(k) if k in KERNEL_ORDER else 99, k, r["guest"], r.get("run", 1))


def _name(r: Dict[str, Any]) -> str:
    """The scenario, and which of its runs in the boot after the first (check_runs)."""
    return str(r["scenario"]) + (f" #{r['run']}" if r.get("run", 1) > 1 else "")


def _pct(x: Optional[float], digits: int = 1) -> str:
    return "" if x is None else f"{100 * x:.{digits}f}%"


def _steal(r: Dict[str, Any], digits: int = 1) -> str:
    """The run's steal, and each CPU's where hourglass ran on more than one."""
    by = r.get("steal_by_cpu") or {}
    if len(by) < 2:
        return _pct(r.get("steal_share"), digits)
    return " ".join(f"CPU{c} {_pct(v, digits)}" for c, v in by.items())


def _num(x: Optional[float], digits: int = 3) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def write_csv(lab: Dict[str, Any], path: str) -> None:
    cols = ["scenario", "run", "kernel", "guest", "what", "expected", "found", "ratio", "count_ok", "class", "class_share",
            "named_right", "inferred_right", "median_us", "median_ok", "cross_check", "explained_share",
            "steal_share", "macro_f1", "headline_accuracy"]
    for c in CLASS_COLS:
        cols += [f"{c}_actual", f"{c}_precision", f"{c}_recall"]
    cols += ["classes_short", "not_run", "error", "dir"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in sorted(lab["runs"], key=_order):
            base = {k: r.get(k) for k in ("scenario", "run", "kernel", "guest", "explained_share", "steal_share", "macro_f1",
                                          "not_run", "error", "dir")}
            base["headline_accuracy"] = (r.get("headline") or {}).get("accuracy")
            for c in CLASS_COLS:
                f_ = (r.get("classes") or {}).get(c) or {}
                base.update({f"{c}_actual": f_.get("actual"), f"{c}_precision": f_.get("precision"),
                             f"{c}_recall": f_.get("recall")})
            base["classes_short"] = " ".join(sorted(r.get("class_short") or {}))
            for e in r.get("expectations") or [{}]:
                row = dict(base)
                for k in ("what", "expected", "found", "ratio", "count_ok", "class", "class_share", "named_right",
                          "inferred_right", "median_us", "median_ok"):
                    row[k] = e.get(k)
                cc = e.get("cross_check")
                row["cross_check"] = f"{cc['counter']}={cc.get('delta')}" if cc else None
                w.writerow(row)


def one_line(r: Dict[str, Any]) -> str:
    head = f"{_name(r):<16} {r['kernel']:<8} {r['guest']:<6}"
    if r.get("error"):
        return f"{head} ERROR {r['error'][:150]}"
    if r.get("not_run"):
        return f"{head} not made for this kernel: {r['not_run'][:150]}"
    parts = []
    for e in r.get("expectations") or []:
        parts.append(f"{e['found']}/{e['expected']}{'' if e['ok'] else '!'}")
    short = ",".join(sorted(r.get("class_short") or {}))
    return (f"{head} {' '.join(parts):<24} explained {_pct(r.get('explained_share'))} steal "
            f"{_steal(r)} macroF1 {_num(r.get('macro_f1'), 2)}"
            f"{' short: ' + short if short else ''}")


def _pr(f: Optional[Dict[str, Any]], held: bool = True) -> str:
    """A class's precision/recall and its actual count, as the markdown table shows it: bold when
    short of the target, in italics and marked "not held" where the scenario does not hold it."""
    if not f or not (f.get("actual") or f.get("inferred")):
        return ""
    p, r = f.get("precision"), f.get("recall")
    short = any(x is not None and x < vocab.CLASS_TARGET for x in (p, r)) or p is None or r is None
    text = f"{_num(p, 2) or '-'}/{_num(r, 2) or '-'} ({f.get('actual', 0)})"
    if not held:
        return f"*{text}* not held"
    return f"**{text}**" if short else text


def not_held(r: Dict[str, Any]) -> Dict[str, str]:
    """Run @r's target classes not held, each with why: the scenario's [[class_not_held]] for
    its kernel and guest, or every class where the scenario or the guest holds none there."""
    try:
        sc = scenario.load(r["scenario"])
    except (scenario.ScenarioError, OSError):
        return {}
    whole = scenario.not_held(sc, r["guest"])
    if whole:
        return {c: whole for c in vocab.TARGET_CLASSES}
    return scenario.classes_not_held(sc, r["kernel"], r["guest"])


def _not_held_rows(lab: Dict[str, Any]) -> Iterator[Tuple[Dict[str, Any], str, Dict[str, Any], str, str]]:
    """(run, class, its figures, "P/R (n actual, m inferred)", why) of each class not held
    where it occurs, run by run: what the markdown and the page both list."""
    for r in sorted(lab["runs"], key=_order):
        if r.get("error") or r.get("not_run"):
            continue
        for c, why in sorted(not_held(r).items()):
            f = (r.get("classes") or {}).get(c)
            if f and (f.get("actual") or f.get("inferred")):
                figs = (f"{_num(f.get('precision'), 2) or '-'}/{_num(f.get('recall'), 2) or '-'} "
                        f"({f.get('actual', 0)} actual, {f.get('inferred', 0)} inferred)")
                yield r, c, f, figs, why


def not_held_markdown(lab: Dict[str, Any]) -> str:
    """The classes not held, run by run where they occur: figures and why (never passed)."""
    lines = [f"| {_name(r)} | {r['kernel']} | {r['guest']} | {c} | {figs} | {why.replace('|', '/')} |"
             for r, c, _f, figs, why in _not_held_rows(lab)]
    if not lines:
        return ""
    return ("\nClasses not held (shown, never counted as passed; the scenario's data says why):\n\n"
            "| scenario | kernel | guest | class | precision/recall | why |\n| --- | --- | --- | --- | --- | --- |\n"
            + "\n".join(lines) + "\n")


def markdown(lab: Dict[str, Any]) -> str:
    """The table for docs/lab.md: a row per scenario x kernel x guest; each expectation as
    found/expected (! when short), steal, and per class precision/recall (actual count),
    bold when short of the target (vocab.CLASS_TARGET)."""
    head = ["scenario", "kernel", "guest", "found/expected", "steal", *CLASS_COLS, "macro F1"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in sorted(lab["runs"], key=_order):
        if r.get("error"):
            lines.append(f"| {_name(r)} | {r['kernel']} | {r['guest']} | error: "
                         f"{r['error'][:80].replace('|', '/')} |" + " |" * (len(head) - 4))
            continue
        if r.get("not_run"):
            lines.append(f"| {_name(r)} | {r['kernel']} | {r['guest']} | not made for this kernel (see the "
                         "scenario's not_on) |" + " |" * (len(head) - 4))
            continue
        exp = " ".join(f"{e['found']}/{e['expected']}{'' if e['ok'] else '!'}" for e in r.get("expectations") or [])
        nh = not_held(r)
        cls = [_pr((r.get("classes") or {}).get(c), c not in nh) for c in CLASS_COLS]
        lines.append(f"| {_name(r)} | {r['kernel']} | {r['guest']} | {exp} | {_steal(r, 2)} | "
                     + " | ".join(cls) + f" | {_num(r.get('macro_f1'), 2)} |")
    return "\n".join(lines) + "\n" + not_held_markdown(lab)


CSS = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: right; vertical-align: top; }
th { background: #eee; }
td.l { text-align: left; }
td.short { background: #f8c9c4; }
td.na { color: #999; }
td.nh { color: #666; font-style: italic; background: #eee; }
tr.smp2 td { background: #f6f6fb; }
tr.smp2 td.short { background: #f8d9d4; }
.ok { color: #17692b; }
.bad { color: #b00; font-weight: bold; }
small { color: #555; }
"""


def _cell(text: str, short: bool = False, left: bool = False, title: str = "", nh: bool = False) -> str:
    cls = " ".join(c for c in ("short" if short and not nh else "", "l" if left else "", "nh" if nh else "") if c)
    t = f' title="{html.escape(title)}"' if title else ""
    c = f' class="{cls}"' if cls else ""
    return f"<td{c}{t}>{text}</td>"


def _expect_cell(r: Dict[str, Any]) -> str:
    lines = []
    for e in r.get("expectations") or []:
        mark = '<span class="ok">&#10003;</span>' if e["ok"] else '<span class="bad">&#10007;</span>'
        extra = []
        if e.get("class_share") is not None:
            extra.append(f"{_pct(e['class_share'], 0)} {e['class']}")
        if e.get("median_us") is not None:
            extra.append(f"median {e['median_us']:.0f} us")
        if e.get("inferred_right") is not None:
            extra.append(f"inferred right {_pct(e['inferred_right'], 0)}")
        lines.append(f"{mark} {html.escape(e['what'])}: {e.get('found')} of {e.get('expected')}"
                     f"{' <small>(' + ', '.join(extra) + ')</small>' if extra else ''}")
    return "<br>".join(lines)


def write_html(lab: Dict[str, Any], path: str, across: str = "") -> None:
    """index.html: a row per run; @across, the tables across runs (labsummary.py), after it."""
    t = lab["targets"]
    rows = []
    for r in sorted(lab["runs"], key=_order):
        link = os.path.relpath(r["dir"], os.path.dirname(path))
        cells = [_cell(html.escape(_name(r)), left=True, title=r.get("title", "")),
                 _cell(html.escape(r["kernel"]), left=True), _cell(html.escape(r["guest"]), left=True)]
        if r.get("error"):
            cells.append(f'<td class="l short" colspan="{5 + 2 * len(CLASS_COLS)}">{html.escape(r["error"][:400])}</td>')
        elif r.get("not_run"):
            cells.append(f'<td class="l na" colspan="{5 + 2 * len(CLASS_COLS)}">not made for this kernel: '
                         f'{html.escape(r["not_run"][:400])}</td>')
        else:
            ok = all(e["ok"] for e in r.get("expectations") or [])
            cells.append(_cell(_expect_cell(r), short=not ok, left=True))
            cells.append(_cell(_pct(r.get("explained_share"))))
            cells.append(_cell(_steal(r)))
            short = r.get("class_short") or {}
            nh = not_held(r)
            for c in CLASS_COLS:
                f_ = (r.get("classes") or {}).get(c)
                if not f_ or not (f_.get("actual") or f_.get("inferred")):
                    cells.append('<td class="na" colspan="2">-</td>')
                    continue
                title = f"{c}: {f_.get('actual')} actual, {f_.get('inferred')} inferred, {f_.get('correct')} right" + (
                    f"; not held: {nh[c]}" if c in nh else "")
                p, rc = f_.get("precision"), f_.get("recall")
                cells.append(_cell(_num(p, 2), short=c in short and (p is None or p < t["class_precision_recall"]),
                                   title=title, nh=c in nh))
                cells.append(_cell(_num(rc, 2), short=c in short and (rc is None or rc < t["class_precision_recall"]),
                                   title=title, nh=c in nh))
            cells.append(_cell(_num(r.get("macro_f1"), 2)))
            cells.append(_cell(_pct((r.get("headline") or {}).get("accuracy"))))
        files = [f'<a href="{html.escape(link)}/">run</a>']
        for f, label in (("report.txt", "report"), ("report.html", "html"), ("run.perfetto-trace", "perfetto")):
            if os.path.exists(os.path.join(r["dir"], f)):
                files.append(f'<a href="{html.escape(link)}/{f}">{label}</a>')
        cells.append(_cell(" ".join(files), left=True))
        rows.append(f'<tr class="{html.escape(r["guest"])}">' + "".join(cells) + "</tr>")
    head1 = ("<tr><th rowspan=2>scenario</th><th rowspan=2>kernel</th><th rowspan=2>guest</th>"
             "<th rowspan=2>expected: found of expected (named right)</th><th rowspan=2>gaps explained</th>"
             "<th rowspan=2>steal</th>" + "".join(f"<th colspan=2>{c}</th>" for c in CLASS_COLS) +
             "<th rowspan=2>macro F1</th><th rowspan=2>headline</th><th rowspan=2>files</th></tr>")
    head2 = "<tr>" + "<th>P</th><th>R</th>" * len(CLASS_COLS) + "</tr>"
    doc = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>hourglass lab</title><style>{CSS}</style></head><body>
<h1>hourglass lab</h1>
<p>Commit {html.escape(lab.get('commit', ''))}. Each row is one scenario recorded in one guest kernel
(docs/lab.md). <b>icount</b>: one CPU on QEMU's instruction-count clock (8 ns an instruction), the
reference lab for scoring; <b>icount2</b>: two vCPUs on that clock (QEMU 10), taking turns on one
host thread, so that whatever the other CPU runs is steal on hourglass's (its steal column);
<b>smp2</b>: two vCPUs on one host thread under plain emulation, a virtual machine with heavy
steal. Marked red: a count more than {100 * t['count_tolerance']:.0f}% from what is expected, named
gaps less than {100 * t['class_share']:.0f}% of the expected class, a median outside its bounds, or
a class among {', '.join(t['classes'])} that occurs with precision or recall under
{t['class_precision_recall']:.2f} (the issue's targets are for the icount lab; icount2 and smp2 rows show the
same figures). Grey and in italics: a class the scenario does not hold on that kernel and guest (its
figures shown, never counted as passed; the cell's title and the list below say why). P and R: precision and recall of the inference per actual class; steal: hidden gaps'
share of the run time; headline: accuracy over the gaps with a kernel cause.</p>
<table>
{head1}
{head2}
{chr(10).join(rows)}
</table>
{_not_held_html(lab)}
{across}</body></html>
"""
    with open(path, "w") as page:
        page.write(doc)


def _not_held_html(lab: Dict[str, Any]) -> str:
    """The classes not held, as a list under the table (not_held_markdown's rows)."""
    items = [f"<li>{html.escape(_name(r))} on {html.escape(r['kernel'])} {html.escape(r['guest'])}: "
             f"{c} {figs}: {html.escape(why)}</li>" for r, c, _f, figs, why in _not_held_rows(lab)]
    return ("<h2>Classes not held</h2><p>Shown, never counted as passed; the scenario's data says why.</p><ul>"
            + "".join(items) + "</ul>") if items else ""
