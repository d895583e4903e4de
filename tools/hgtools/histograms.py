"""histograms - `hourglass results DIR... --histograms OUT.html`: the latency and gap histograms
of many runs on one chart each, as cyclictest's and OSADL's latency plots show many machines or
kernels: one line per run, the count on a log axis (so that one late wake-up among millions
still shows), and per run a KernelShark session that opens at its worst wake-up.

The figures are each run's report's (results.report_of: its report.json when newer than the
run, else a merge now): the latency histogram of every LAT or PERIODIC thread of the run,
summed (the merger's bins are the same for every run: report-json.md, latency.threads.N.hist),
and the lengths of every involuntary gap, all classes summed (charts.gap_hist). The sessions
(OUT's directory, sessions/RUN.json) open the run's exported trace (hourglass export RUN
--kernelshark RUN/merged.dat) on the worst wake-up, the span from its intended expiry to its
return to user space and half a millisecond on each side; a run that was not exported gets
the command that exports it instead. Perfetto: the run's trace.perfetto-trace, with the time
to go to.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import charts, results
from .errors import EXIT_BAD_INPUT, EXIT_USAGE, HgError, cannot
from .html import STYLE, esc, table
from .report_json import Report, lat_threads, section, t, thread_name

MARGIN_S = 0.0005       # the session's span around the worst wake-up, each side


@dataclass
class Run:
    """One run on the charts: its name on them, its directory and report."""
    label: str
    path: str
    rep: Report


def runs_of(paths: Sequence[str]) -> List[Run]:
    """Every run directory under @paths (directories; a Parquet table holds no histograms), each
    named by its path from the directory given (the directory's own name when it is a run)."""
    out: List[Run] = []
    for p in paths:
        if p.endswith(".parquet"):
            raise HgError(f"{p}: --histograms draws run directories' reports: a Parquet table holds no "
                          "histograms", EXIT_USAGE)
        if not os.path.isdir(p):
            raise HgError(f"{p}: no such directory", EXIT_USAGE)
        found = list(results.run_dirs(p))
        if not found:
            raise HgError(f"{p}: no run directory in it (a run holds hourglass.hgl and hourglass.json)",
                          EXIT_BAD_INPUT)
        for d in found:
            rel = os.path.relpath(d, p)
            label = os.path.basename(os.path.abspath(p)) if rel == "." else rel
            out.append(Run(label, d, results.report_of(d)))
    seen: Dict[str, int] = {}
    for r in out:                       # one name a line on the charts
        n = seen.get(r.label, 0)
        seen[r.label] = n + 1
        if n:
            r.label = f"{r.label} ({n + 1})"
    return out


def latency_hist(rep: Report) -> Optional[Tuple[List[float], List[int]]]:
    """The run's wake-up latencies: every thread's histogram summed (edges, counts)."""
    edges: Optional[List[float]] = None
    counts: List[int] = []
    for _, s in lat_threads(rep):
        h = s.get("hist") or {}
        if not h.get("counts"):
            continue
        if edges is None:
            edges, counts = list(h["edges_us"]), [0] * len(h["counts"])
        if list(h["edges_us"]) != edges:
            raise HgError(f"{rep['run'].get('dir')}: its threads' latency histograms have different bins",
                          EXIT_BAD_INPUT)
        counts = [int(a) + int(b) for a, b in zip(counts, h["counts"])]
    return (edges, counts) if edges is not None and any(counts) else None


def gap_hist(rep: Report) -> Optional[Tuple[List[float], List[int]]]:
    """The run's involuntary gaps' lengths, every class summed (edges, counts)."""
    gh = (section(rep, "charts") or {}).get("gap_hist") or {}
    cls = gh.get("classes") or {}
    if not cls or not gh.get("edges_us"):
        return None
    counts = [sum(v) for v in zip(*cls.values())]
    return (list(gh["edges_us"]), counts) if sum(counts) else None


def _chart(name: str, title: str, caption: str, lines: List[Tuple[str, List[float], List[int]]],
           xlabel: str, ylabel: str) -> Optional[charts.Chart]:
    """Histograms as lines, one per run, on log axes (charts' own, so that they read as the page's)."""
    if not lines:
        return None
    fig, ax = charts._figure(3.8)
    top, spans = 1.0, []
    for i, (label, edges, counts) in enumerate(lines):
        e, c = charts._positive_edges(edges, counts)
        ax.stairs(c, e, color=charts.THREAD_COLORS[i % len(charts.THREAD_COLORS)], linewidth=1.6,
                  label=f"{label} ({sum(c)})")
        top = max(top, max(c))
        spans += charts._populated(e, c)
    charts._hist_axes(ax, spans, top * 2, ylabel, xlabel)
    charts._legend_outside(ax, title="run (count)")
    return charts.Chart(name, title, caption, fig)


def worst(rep: Report) -> Optional[Dict[str, Any]]:
    return (section(rep, "latency") or {}).get("worst")


def session(run: Run, into: str) -> Optional[str]:
    """A KernelShark session for @run's exported trace at its worst wake-up, written in @into; its
    path, or None when the run has no wake-up or was not exported. It is the session the export
    wrote beside the trace (RUN/kernelshark-session.json), when there is one, with only its span
    changed and its markers cleared (they name entries of the other span); else one of the same
    shape that opens the trace (and the hourglass stream beside it, when there is one)."""
    w = worst(run.rep)
    dat = os.path.join(run.path, "merged.dat")
    if not w or w.get("t") is None or not os.path.isfile(dat):
        return None
    lo = max(0.0, float(w["t"]) - MARGIN_S)
    hi = float(w["t"]) + float(w.get("latency_us") or 0) / 1e6 + MARGIN_S
    try:
        with open(os.path.join(run.path, "kernelshark-session.json")) as f:
            ses = json.load(f)
        for s in ses.get("data streams") or []:     # the export's relative names, from here
            p = s["data"]["file"]
            s["data"]["file"] = os.path.abspath(p if os.path.isabs(p) else os.path.join(run.path, p))
    except (OSError, ValueError, KeyError, TypeError):
        ses = _session_of(run.path, dat)
    ses["Model"] = dict(ses.get("Model") or {"type": "kshark.config.model", "bins": 1468},
                        range=[int(lo * 1e9), int(hi * 1e9)])
    ses["Markers"] = {"type": "kshark.config.markers", "markA": {"isSet": False}, "markB": {"isSet": False},
                      "Active": "A"}
    ses.pop("ViewTop", None)
    path = os.path.join(into, "sessions", _safe(run.label) + ".json")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(ses, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise cannot("write", path, e)
    return path


def _session_of(run_dir: str, dat: str) -> Dict[str, Any]:
    """A session of KernelShark 2's shape for @dat (and merged-hourglass.dat beside it)."""
    files = [dat] + [p for p in (os.path.join(run_dir, "merged-hourglass.dat"),) if os.path.isfile(p)]
    streams = []
    for i, p in enumerate(files):
        streams.append({"type": "kshark.config.stream", "stream id": i,
                        "data": {"type": "kshark.config.data", "file": os.path.abspath(p), "name": "top buffer",
                                 "time": int(os.path.getmtime(p))},
                        "filters": {"type": "kshark.config.filter", "filter mask": 7},
                        "plugins": {"type": "kshark.config.plugins",
                                    "registered": [["sched_events", True]] if i == 0 else []},
                        "CPUPlots": [], "TaskPlots": []})
    return {"type": "kshark.config.session", "MainWindow": [1580, 980], "Splitter": [300, 640],
            "data streams": streams, "ComboPlots": [], "ColorScheme": 0.75,
            "User Plugins": {"type": "kshark.config.plugins", "obj. files": []}}


def _near(path: str, into: str) -> str:
    """@path from @into when it is below it, else whole."""
    rel = os.path.relpath(path, into)
    return os.path.abspath(path) if rel.startswith("..") else rel


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in label) or "run"


def page(paths: Sequence[str], out: str) -> Tuple[str, int, int]:
    """The page at @out for the runs under @paths, and its sessions beside it: (its text, the
    number of runs, of sessions written)."""
    runs = runs_of(paths)
    into = os.path.dirname(os.path.abspath(out))
    lat = [(r.label, *h) for r in runs for h in [latency_hist(r.rep)] if h]
    gap = [(r.label, *h) for r in runs for h in [gap_hist(r.rep)] if h]
    drawn = [c for c in (
        _chart("latency", "Wake-up latency, every run",
               "Each run's wake-ups (all its LAT and PERIODIC threads) by how late they reached user space, one "
               "line a run; the count axis is logarithmic, as cyclictest's and OSADL's plots, so that a single "
               "late wake-up shows.", lat, "wake-up latency (intended expiry to user space)", "wake-ups"),
        _chart("gaps", "Gap lengths, every run",
               "Each run's involuntary gaps (every class) by length, one line a run, the count on a log axis.",
               gap, "gap length", "gaps")) if c is not None]
    charts.render_svgs([(c, f"h-{c.name}") for c in drawn])
    rows, n_ses = [], 0
    for r in runs:
        w = worst(r.rep)
        ses = session(r, into)
        n_ses += ses is not None
        pf = os.path.join(r.path, "trace.perfetto-trace")
        if not w:
            link = "-"
        elif ses:
            link = f"kernelshark -s {os.path.relpath(ses, into)}"
        else:
            link = f"not exported: hourglass export {r.path} --kernelshark {os.path.join(r.path, 'merged.dat')}"
        rows.append([r.label, (str((r.rep['run'].get('kernel') or {}).get('release') or '?').split() or ['?'])[0],
                     f"{w['latency_us']:.1f} us" if w else "-",
                     f"{t(w.get('t'))}, CPU {w.get('cpu', '?')}, {thread_name(r.rep, w.get('thread'))}" if w else "-",
                     link, f"{_near(pf, into)} at {w['t']:.6f} s" if w and os.path.isfile(pf) else "-"])
    body = ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
            "<title>hourglass results: histograms</title><style>", STYLE, "</style></head><body>",
            "<h1>hourglass results: histograms</h1>",
            f"<p class=lead>{len(runs)} runs. Each chart draws one line per run, the counts on a log axis; the "
            "table gives each run's worst wake-up and a KernelShark session that opens at it (run the command "
            "from this page's directory), and where its Perfetto trace is, with the time to go to.</p>",
            table(["run", "kernel", "worst latency", "when", "KernelShark at the worst", "Perfetto"], rows)]
    for c in drawn:
        body.append(f"<figure id=h-{c.name}><figcaption><b>{esc(c.title)}.</b> {esc(c.caption)}</figcaption>"
                    f"{c.svg(f'h-{c.name}')}</figure>")
    if not drawn:
        body.append("<p>None of these runs has a wake-up or a gap to draw.</p>")
    body.append("</body></html>\n")
    text = "".join(body)
    try:
        with open(out, "w") as f:
            f.write(text)
    except OSError as e:
        raise cannot("write", out, e)
    return text, len(runs), n_ses
