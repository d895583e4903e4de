"""html - `hourglass export --html`: one self-contained page (no script, no
external file) from one or more reports (JSON v2), runs side by side.

The page opens with a paragraph saying what to look at first, a row per run
(kernel, gaps, how many the kernel explains, inference accuracy, worst
latency and its cause), then per run: its summary lines, provenance and
warnings, and each section the report has, tables beside their charts
(inline SVG from charts.py). Sections the merger left null are left out.
"""
from __future__ import annotations

import html as _html
import io
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from . import analysis
from . import charts as _charts
from . import report_text
from .errors import cannot
from .report_json import Report, disagreement_counts, lat_threads, loads_by_name, loads_head, migrations_text
from .report_json import pct, run_label, run_whole, section, t, thread_name
from .report_json import classes as report_classes, stages as report_stages

STYLE = """
body{font-family:sans-serif;margin:20px auto;max-width:1100px;color:#222;line-height:1.35}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#eee}td:first-child,th:first-child{text-align:left}
.lead{font-size:15px;background:#f4f7fb;border-left:4px solid #1f77b4;padding:8px 12px}
.break{background:#fdecea;border-left:4px solid #c0392b;padding:4px 10px;white-space:pre-wrap}
.warn{color:#8a3a00;background:#fff4e5;border-left:4px solid #e08a00;padding:4px 10px;margin:4px 0}
.summary li{font-family:monospace;font-size:13px}
figure{margin:14px 0}figcaption{font-size:13px;color:#444;margin-bottom:4px}
svg{max-width:100%;height:auto;display:block}code{font-size:12px}
h2{border-bottom:2px solid #ccc;margin-top:36px}
tr:target{background:#fff3b0}
"""


@dataclass
class Page:
    """The page's text, and its charts to write as files on request."""
    text: str
    charts: int = 0
    files: Dict[str, _charts.Chart] = field(default_factory=dict)      # file stem -> chart

    def write_charts(self, where: str, fmt: str) -> List[str]:
        """Each chart as WHERE/RUN-NAME.FMT (png or svg); the paths written."""
        try:
            os.makedirs(where, exist_ok=True)
        except OSError as e:
            raise cannot("create", where, e)
        out = []
        for stem, chart in self.files.items():
            path = os.path.join(where, f"{stem}.{fmt}")
            try:
                chart.save(path, fmt)
            except OSError as e:
                raise cannot("write", path, e)
            out.append(path)
        return out


def esc(s: Any) -> str:
    return _html.escape(str(s), quote=True)


def table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
    return "".join(out) + "</table>"


def page(reps: Sequence[Report]) -> Page:
    """The page for @reps (the first is the main run; the others sit beside it)."""
    labels = _labels(reps)
    p = Page("")
    parts = []
    drawn = [{c.name: c for c in _charts.all_charts(rep)} for rep in reps]
    _charts.render_svgs([(c, f"r{i}-{c.name}") for i, d in enumerate(drawn) for c in d.values()])
    for i, (rep, label) in enumerate(zip(reps, labels)):
        for name, c in drawn[i].items():
            p.files[f"{label}-{name}"] = c
        p.charts += len(drawn[i])
        parts.append(run_section(rep, label, drawn[i], f"r{i}"))
    head = ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
            "<title>hourglass: inferred against actual</title><style>", STYLE, "</style></head><body>",
            "<h1>hourglass: inferred against actual</h1>",
            f"<p class=lead>{lead(reps)}</p>",
            _runs_table(reps, labels)]
    p.text = "".join(head + parts + ["</body></html>\n"])
    return p


def lead(reps: Sequence[Report]) -> str:
    """The first paragraph: what to look at first, in this page's own figures."""
    rep = reps[0]
    out = ["Start with each run's three summary lines: how many gaps the kernel explains, how well "
           "hourglass's own inferences did, and the worst wake-up."]
    nb = sum(1 for r in reps if r.get("breaktrace"))
    if nb:
        out.insert(0, f"{'A run' if nb == 1 else f'{nb} runs'} stopped at hourglass -b: the box at the top of "
                      "its section names the sample that passed the threshold, what the kernel says of it, "
                      "and the gaps that led there.")
    nw = sum(len(r.get("warnings") or []) for r in reps)
    if nw:
        out.append(f"Then read the {nw} warning{'s' if nw > 1 else ''} (orange): they say which figures "
                   "to distrust.")
    if section(rep, "inference"):
        dc = disagreement_counts(rep)
        out.append(f"The heat map shows where the {dc['count']} disagreement{'s' if dc['count'] != 1 else ''} "
                   "went (every non-zero cell off the outlined diagonal): "
                   f"{dc['explained']} wrong inference{'s' if dc['explained'] != 1 else ''} on gaps the kernel "
                   "gives a cause (the score's) and "
                   f"{dc['hidden']} hidden gap{'s' if dc['hidden'] != 1 else ''} (the kernel recorded nothing in "
                   "them) inferred as something else. The execution map's red marks show when; point at a gap "
                   "there for what it was, click a wrong one for its row in the disagreements.")
    lat = section(rep, "latency") or {}
    wst = lat.get("worst")
    if wst:
        out.append(f"The worst wake-up took {wst['latency_us']:.1f} us at {t(wst.get('t'))} "
                   f"({thread_name(rep, wst.get('thread'))}), largest stage {wst.get('largest_stage', '?')}"
                   f"{' during ' + wst['blame'] if wst.get('blame') else ''}: the latency histogram counts on "
                   "a log scale so such outliers show, and the stages chart says where a typical wake-up's "
                   "time goes.")
    md = section(rep, "missed_deadlines")
    if md and md.get("count"):
        out.append(f"{md['count']} deadline{'s were' if md['count'] > 1 else ' was'} missed: the table "
                   "lists what ran instead.")
    out.append("Times are seconds from the start of the kernel's recording, as in <code>trace-cmd report</code> "
               "and Perfetto on the exported trace.")
    return " ".join(esc(s) if "<code>" not in s else s for s in out)


def _labels(reps: Sequence[Report]) -> List[str]:
    labels: List[str] = []
    for rep in reps:
        base = run_label(rep)
        label, n = base, 2
        while label in labels:
            label, n = f"{base}{n}", n + 1
        labels.append(label)
    return labels


def _runs_table(reps: Sequence[Report], labels: Sequence[str]) -> str:
    rows = []
    for rep, label in zip(reps, labels):
        k = rep["run"].get("kernel") or {}
        g = section(rep, "gaps") or {}
        inf = section(rep, "inference") or {}
        acc = (inf.get("headline") or {}).get("accuracy")
        wst = (section(rep, "latency") or {}).get("worst")
        rows.append([label, (str(k.get("release") or "?").split() or ["?"])[0], "yes" if k.get("preempt_rt") else "no",
                     g.get("total", "-"), (g.get("classes") or {}).get("hidden", 0) if g else "-",
                     pct(acc) if inf else "-", f"{wst['latency_us']:.1f} us" if wst else "-",
                     (wst.get("blame") or wst.get("largest_stage") or "-") if wst else "-",
                     len(rep.get("warnings") or [])])
    return table(["run", "kernel", "PREEMPT_RT", "gaps", "hidden", "inference accuracy",
                  "worst latency", "its cause", "warnings"], rows)


def _figure(c: Optional[_charts.Chart], prefix: str) -> str:
    if c is None:
        return ""
    return (f"<figure id={prefix}-{c.name}><figcaption><b>{esc(c.title)}.</b> {esc(c.caption)}</figcaption>"
            f"{c.svg(f'{prefix}-{c.name}')}</figure>")


def run_section(rep: Report, label: str, drawn: Dict[str, _charts.Chart], prefix: str) -> str:
    """One run: its summary, provenance, warnings, then every section it has."""
    r = rep["run"]
    k = r.get("kernel") or {}

    def fig(name: str) -> str:
        return _figure(drawn.get(name), prefix)
    s = [f"<h2>{esc(label)}</h2>"]
    if rep.get("breaktrace"):
        # the same lines as the text report's first block: one wording of the trip
        buf = io.StringIO()
        report_text.breaktrace(rep, buf.write)
        s.append(f"<pre class=break>{esc(buf.getvalue().rstrip())}</pre>")
    if rep.get("summary"):
        s.append("<ul class=summary>" + "".join(f"<li>{esc(x)}</li>" for x in rep["summary"]) + "</ul>")
    dur = r.get("duration_s")
    s.append(f"<p><code>{esc(' '.join(r.get('command') or []))}</code><br>{esc(r.get('dir', ''))}<br>"
             f"Linux {esc(k.get('release', '?'))}, PREEMPT_RT {'yes' if k.get('preempt_rt') else 'no'}, "
             f"TSC {(r.get('tsc_hz') or 0) / 1e6:.3f} MHz"
             f"{f', {dur:.3f} s' if dur is not None else ''}"
             f"{'; hourglass&#39;s own zero at ' + esc(t(r['t0'])) if r.get('t0') is not None else ''}</p>")
    for w in rep.get("warnings") or []:
        s.append(f"<p class=warn>warning: {esc(w)}</p>")
    threads = r.get("threads") or []
    if threads:
        s.append(table(["thread", "tid", "workload", "policy", "priority", "timer", "CPUs", "period ms"],
                       [[th.get("name") or thread_name(rep, th.get("thread")), th.get("tid", ""),
                         th.get("workload", ""), th.get("policy", ""), th.get("priority", ""), th.get("timer", ""),
                         th.get("affinity") or "any", th.get("period_ms") if th.get("period_ms") else "-"]
                        for th in threads]))
    kr = section(rep, "kernel_recording")
    if kr:
        lost = kr.get("lost_total", sum((kr.get("lost") or {}).values()))
        s.append(f"<p>kernel: {esc(kr.get('events', 0))} events from <code>{esc(kr.get('path', '?'))}</code>"
                 f"{', ' + esc(kr['recorder']) if kr.get('recorder') else ''}, {esc(lost)} lost</p>")
    s += [_gaps(rep, fig), _inference(rep, fig), fig("map"), _causes(rep), _switches(rep, fig),
          _interrupts(rep), _migrations(rep), _loads(rep), _microstates(rep), _latency(rep, fig), _sbf(fig),
          _missed(rep), _disagreements(rep, prefix, _linked(drawn.get("map"))), _analysis(rep)]
    return "<section>" + "".join(s) + "</section>"


def _linked(c: Optional[_charts.Chart]) -> List[int]:
    """The disagreements a chart's spots link to (dis-I)."""
    return [int(s.link[4:]) for s in (c.spots if c else []) if s.link and s.link.startswith("dis-")]


def _gaps(rep: Report, fig: Callable[[str], str]) -> str:
    g = section(rep, "gaps")
    if not g or not g.get("total"):     # a latency run: no gaps, no section
        return ""
    n = g.get("total", 0)
    cl = g.get("classes") or {}
    order = report_classes(rep)
    rows = [[c, cl[c], f"{cl[c] / max(n, 1) * 100:.1f}%"] for c in order + sorted(set(cl) - set(order))
            if cl.get(c)]
    out = [f"<h3>Gaps</h3><p>{esc(n)} gaps: {esc(g.get('voluntary', 0))} voluntary, {esc(g.get('scored', 0))} "
           f"scored, {esc(g.get('unexplainable', 0))} unexplainable</p>", table(["class", "gaps", "share"], rows)]
    st = section(rep, "steal")
    if st and st.get("hidden_gaps"):
        out.append(f"<p>hidden: {esc(st['hidden_gaps'])} gaps, {st.get('hidden_ms', 0):.3f} ms "
                   f"(steal {esc(pct(st.get('share')))} of {esc(run_whole(st))})</p>")
    out.append(fig("gaps"))
    return "".join(out)


def _inference(rep: Report, fig: Callable[[str], str]) -> str:
    inf = section(rep, "inference")
    if not inf:
        return ""
    conf = inf["confusion"]
    cls = inf.get("classes") or {}
    cols = conf["inferred"]
    rows: List[List[Any]] = [[a] + list(row) + [pct(cls.get(a, {}).get("recall"))]
                             for a, row in zip(conf["actual"], conf["matrix"]) if sum(row)]
    rows.append(["precision"] + [pct(cls.get(c, {}).get("precision")) for c in cols] + [""])
    out = ["<h3>Inferred against actual</h3>", table(["actual \\ inferred"] + cols + ["recall"], rows)]
    h, a = inf.get("headline") or {}, inf.get("all") or {}
    acc = []
    if h:
        acc.append(f"{h['correct']} of {h['gaps']} gaps with a kernel cause ({pct(h.get('accuracy'))})")
    if a:
        acc.append(f"{a['correct']} of {a['gaps']} with the hidden ones ({pct(a.get('accuracy'))})")
    if inf.get("macro_f1") is not None:
        acc.append(f"macro F1 {inf['macro_f1']:.2f}")
    out.append(f"<p>accuracy: {esc('; '.join(acc))}</p>")
    cal = section(inf, "calibration")
    if cal:
        ticks = ", ".join(f"CPU {c}: {v['period_ms']:.3f} ms" for c, v in (cal.get("tick") or {}).items()
                          if v.get("period_ms"))
        bits = [f"switch/interrupt limit {cal['switch_limit_us']:.1f} us" if cal.get("switch_limit_us") else "",
                f"tick {ticks}" if ticks else "",
                f"below {cal['hidden_limit_us']:.2f} us hidden" if cal.get("hidden_limit_us") else ""]
        if any(bits):
            out.append(f"<p>calibrated on this run: {esc('; '.join(b for b in bits if b))}</p>")
    out.append(fig("matrix"))
    return "".join(out)


def _causes(rep: Report) -> str:
    out = []
    causes = section(rep, "causes")
    if causes:
        out.append("<h3>Causes, by time lost</h3>" + table(
            ["cause", "gaps", "total ms", "median us"],
            [[c["cause"], c["gaps"], f"{c['total_ms']:.3f}", _f(c.get("median_us"), 2)] for c in causes[:15]]))
    tl = section(rep, "time_lost")
    if tl:
        out.append("<h3>Time lost, each component charged its own time</h3>" + table(
            ["what", "kind", "ms", "gaps"], [[x["what"], x.get("kind", ""), f"{x['ms']:.3f}", x.get("gaps", "")]
                                             for x in tl[:15]]))
    return "".join(out)


def _switches(rep: Report, fig: Callable[[str], str]) -> str:
    cs = section(rep, "context_switch")
    if not cs:
        return ""
    return (f"<h3>Context switches between hourglass threads</h3><p>{esc(cs['switches'])} switches, inferred "
            f"median {_f(cs.get('inferred_median_us'), 2)} us (shortest {_f(cs.get('inferred_shortest_us'), 2)} us); "
            f"the kernel confirmed {esc(cs.get('kernel_confirmed', 0))}, the switch alone median "
            f"{_f(cs.get('kernel_switch_only_median_us'), 2)} us</p>" + fig("switch"))


def _interrupts(rep: Report) -> str:
    ints = section(rep, "interrupt_durations")
    if not ints:
        return ""
    return "<h3>Interrupt durations</h3>" + table(
        ["source", "gaps", "gap median us", "handler median us"],
        [[d["source"], d["gaps"], _f(d.get("inferred_median_us"), 2), _f(d.get("handler_median_us"), 2)]
         for d in ints[:10]])


def _migrations(rep: Report) -> str:
    line = migrations_text(rep)
    return f"<p>{esc(line)}</p>" if line else ""


def _loads(rep: Report) -> str:
    loads = loads_by_name(rep)
    if not loads:
        return ""
    out = f"<h3>Loads</h3><p>{esc(loads_head(rep))}</p>"
    if (section(rep, "gaps") or {}).get("total"):
        out += table(["load", "gaps caused", "caused ms", "median us", "gaps in", "charged ms"],
                     [[ld["label"], ld["gaps_caused"], f"{ld['caused_ms']:.3f}",
                       _f(ld["caused_median_us"] if ld["gaps_caused"] else None, 1),
                       "-" if ld["gaps_touched"] is None else ld["gaps_touched"], f"{ld['charged_ms']:.3f}"]
                      for ld in loads])
    return out


def _microstates(rep: Report) -> str:
    ms = section(rep, "microstates")
    if not ms:
        return ""

    def way(m: Dict[str, Any], k: str) -> str:
        v = m.get(f"{k}_vs_kernel")
        return f"{(m.get(k + '_ns') or 0) / 1e6:.3f}" + ("" if v is None else f" ({v * 100:+.1f}%)")
    return "<h3>CPU time per thread, five ways (ms)</h3>" + table(
        ["thread", "kernel", "handlers", "intervals", "cputime", "schedstat", "rusage"],
        [[m.get("name") or thread_name(rep, m.get("thread")), f"{(m.get('kernel_ns') or 0) / 1e6:.3f}",
          f"{(m.get('handlers_ns') or 0) / 1e6:.3f}", way(m, "intervals"), way(m, "cputime"), way(m, "schedstat"),
          way(m, "rusage")] for m in ms])


def _latency(rep: Report, fig: Callable[[str], str]) -> str:
    lat = section(rep, "latency")
    threads = lat_threads(rep)
    if not lat or not threads:
        return ""
    rows = []
    for k, s in threads:
        for st in report_stages(rep) + ["latency"]:
            v = s.get(st)
            if v:
                rows.append([s.get("name") or thread_name(rep, k), "total" if st == "latency" else st] +
                            [_f(v.get(f), 1) for f in ("min_us", "median_us", "avg_us", "p99_us", "max_us")])
    out = ["<h3>Wake-up latency</h3>",
           "<p>" + esc(", ".join(f"{s.get('name') or thread_name(rep, k)}: {s.get('wakeups', 0)} wake-ups"
                                 for k, s in threads)) + "</p>",
           table(["thread", "stage", "min us", "median us", "avg us", "p99 us", "max us"], rows)]
    wst = lat.get("worst")
    if wst:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in (wst.get("stages_us") or {}).items() if v is not None)
        out.append(f"<p>worst: {wst['latency_us']:.1f} us at {esc(t(wst.get('t')))} on CPU {esc(wst.get('cpu', '?'))} "
                   f"({esc(thread_name(rep, wst.get('thread')))}): {esc(stages)} us; largest stage "
                   f"{esc(wst.get('largest_stage', '?'))}{', blamed on ' + esc(wst['blame']) if wst.get('blame') else ''}"
                   "</p>")
    out += [fig("latency"), fig("cdf"), fig("stages")]
    return "".join(out)


def _analysis(rep: Report) -> str:
    """The worst samples' automatic analysis, the lines report.txt ends with (analysis.py:
    one text for both)."""
    lines = analysis.report_lines(rep)
    if not lines:
        return ""
    return ("<h3>Automatic analysis of the worst samples</h3><pre class=analysis>" + esc("\n".join(lines)) +
            "</pre>")


def _sbf(fig: Callable[[str], str]) -> str:
    body = fig("sbf")
    return "<h3>Supply-bound functions</h3>" + body if body else ""


def _missed(rep: Report) -> str:
    md = section(rep, "missed_deadlines")
    if not md or not md.get("count"):
        return ""
    return f"<h3>Missed deadlines: {esc(md['count'])}</h3>" + table(
        ["t (s)", "thread", "CPU", "ran ms", "period ms", "instead"],
        [[f"{m.get('t', 0):.6f}", thread_name(rep, m.get("thread")), m.get("cpu", ""),
          f"{m.get('thread_ran_ms', 0):.2f}", f"{m.get('period_ms', 0):.2f}",
          ", ".join(f"{i['what']} {i['ms']:.2f} ms" for i in m.get("instead") or []) or "nothing the kernel recorded"]
         for m in (md.get("listed") or [])[:30]])


def _disagreements(rep: Report, prefix: str, linked: Iterable[int] = ()) -> str:
    """Every gap inferred otherwise than the kernel says: first the wrong inferences on gaps the
    kernel gives a cause (the score's), then the hidden gaps named something else; each row's id
    PREFIX-dis-I (its index in the report's list), where the execution map links. The first
    DIS_ROWS of each, and every one the map links to."""
    dis = section(rep, "disagreements")
    if not dis or section(rep, "inference") is None:
        return ""
    listed = dis.get("listed") or []
    dc = disagreement_counts(rep)
    keep = set(linked)
    out = [f"<h3>Disagreements: {esc(dc['count'])}</h3>"
           f"<p>Every gap whose inferred class is not the kernel's: {esc(dc['explained'])} wrong inference"
           f"{'s' if dc['explained'] != 1 else ''} on gaps the kernel gives a cause, then {esc(dc['hidden'])} hidden "
           f"gap{'s' if dc['hidden'] != 1 else ''} (no kernel event in them: the emulator, a hypervisor, an SMI) "
           "that hourglass named something else. Times are on the report's clock; the events are the kernel's "
           "inside the gap, from its start.</p>"]
    for title, hidden in (("Wrong inferences on gaps the kernel gives a cause", False),
                          ("Hidden gaps inferred as something else", True)):
        mine = [(i, d) for i, d in enumerate(listed) if (d.get("actual") == "hidden") == hidden]
        if not mine:
            continue
        shown = [(i, d) for n, (i, d) in enumerate(mine) if n < DIS_ROWS or i in keep]
        more = f" (the first {DIS_ROWS}, and those on the execution map; all are in the JSON)" \
            if len(shown) < len(mine) else ""
        rows = "".join(
            f"<tr id={prefix}-dis-{i}>" + "".join(f"<td>{esc(c)}</td>" for c in (
                f"{d.get('t', 0):.6f}", d.get("cpu", ""),
                f"{thread_name(rep, d.get('thread'))} -> {thread_name(rep, d.get('next_thread'))}",
                f"{d.get('length_us', 0):.2f}", d["inferred"], d.get("inferred_why") or "", d["actual"],
                d.get("primary") or d.get("actual_why") or "", "; ".join(d.get("events") or []))) + "</tr>"
            for i, d in shown)
        out.append(f"<h4>{esc(title)}: {len(mine)}{esc(more)}</h4><table><tr>" + "".join(
            f"<th>{h}</th>" for h in ("t (s)", "CPU", "threads", "us", "inferred", "why", "actual", "cause",
                                      "kernel events")) + "</tr>" + rows + "</table>")
    return "".join(out)


DIS_ROWS = 30


def _f(v: Optional[float], prec: int) -> str:
    return "-" if v is None else f"{v:.{prec}f}"
