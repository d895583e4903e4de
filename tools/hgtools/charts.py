"""charts - the HTML page's charts, drawn with matplotlib from the report's
figures (the merger computes them, bounded in size: docs/report-json.md).

Each chart is returned as a Chart: inline SVG for the page (its element ids
prefixed per chart, so that several in one page never collide), and a PNG
or SVG file on request (matplotlib writes both itself).

What they are drawn to avoid (issue 19, item 7):
- log axes read 1 us, 10 us, 100 us, 1 ms: never 1.43e+03;
- histograms have a log count axis whose floor sits below 1, so a single
  6.68 ms wake-up among thousands of 5 us ones still shows as a bar;
- the confusion heat map is shaded by count on a log scale (4 wrong gaps
  are pale, 700 are dark), with the count written in each cell;
- in the execution map "running" is light grey and "hidden" violet;
- the supply-bound functions share a colour per thread, lower dashed and
  upper solid, drawn as the share of the window (so that every decade of
  window length reads, not only the last), the legend outside the plot.
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .errors import EXIT_ENV, HgError
from .report_json import Report, disagreement_of, lat_threads, section, thread_name
from .report_json import stages as report_stages

# one colour per class, the same in every chart and in the page's tables
CLASS_COLORS = {
    "running": "#d0d0d0",           # the thread itself: a neutral, light background
    "switch_hg": "#1f77b4",
    "switch_other": "#ff7f0e",
    "timer": "#2ca02c",
    "interrupt": "#d62728",
    "hidden": "#9467bd",            # violet: never to be mistaken for "running"
    "other": "#8c564b",
    "voluntary": "#bcbd22",
    "unexplainable": "#000000",
}
STAGE_COLORS = {"timer": "#2ca02c", "irq": "#d62728", "sched": "#ff7f0e", "return": "#1f77b4"}
# threads: distinct hues, none of them grey
THREAD_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                 "#bcbd22", "#7f7f7f"]
# the supply-bound chart draws the first threads, as many as there are colours: with 512 its
# 1024 lines and its legend left no room for the axes (matplotlib warned and gave up the layout)
SBF_THREADS = len(THREAD_COLORS)
WIDTH_IN = 9.0


def require() -> None:
    """Check that matplotlib is there, or say how to get it: by finding it, not importing it
    (a sixth of a second, which preload() spends while the merge runs instead)."""
    import importlib.util
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise HgError("the HTML page's charts need matplotlib (Debian: apt-get install python3-matplotlib; "
                      "or pip install matplotlib)", EXIT_ENV)


def preload_or_fail() -> None:
    """Import matplotlib's drawing parts (a third of a second the first time): the Figure and
    the SVG writer the charts use, not pyplot, whose figure manager they never need."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401


def preload() -> None:
    """preload_or_fail() ahead, e.g. while the merge runs; a failure is said when drawing."""
    try:
        preload_or_fail()
    except ImportError:
        pass


@dataclass
class Spot:
    """A place on a chart that can be opened: a box in data coordinates, the tooltip it shows
    (an SVG <title>) and, on the page, the element of the run's section it links to (the
    fragment after the run's prefix: "dis-12" is #r0-dis-12), or none."""
    x0: float
    x1: float
    y0: float
    y1: float
    title: str
    link: Optional[str] = None


@dataclass
class Chart:
    """One drawn chart: its file name part, title, a sentence on how to read it, and the figure;
    @spots: the places on it that can be opened (the execution map's gaps)."""
    name: str
    title: str
    caption: str
    fig: Any
    drawn: Dict[str, str] = field(default_factory=dict, repr=False)    # prefix -> SVG (render_svgs)
    spots: List[Spot] = field(default_factory=list, repr=False)

    def svg(self, prefix: str) -> str:
        """The chart as an <svg> element for an HTML page; every id starts with @prefix
        (drawn now, or taken from render_svgs). A page's prefix is RUN-NAME: the spots link
        into the run's section (#RUN-...); a file's (save) is the chart's name alone, and its
        spots keep their tooltips only."""
        if prefix in self.drawn:
            return self.drawn[prefix]
        from matplotlib import rc_context
        buf = io.StringIO()
        with rc_context({"svg.fonttype": "none", "svg.hashsalt": prefix}):
            self.fig.savefig(buf, format="svg", metadata={"Date": None})
        text = buf.getvalue()
        text = text[text.index("<svg"):]
        # ids are per figure ("axes_1", ...): make them unique in the page
        text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', text)
        text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", text)
        text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', text)
        if self.spots:
            run = prefix[:-len(self.name) - 1] if prefix.endswith("-" + self.name) else None
            end = text.rindex("</svg>")
            text = text[:end] + self._spots_svg(text, prefix, run) + text[end:]
        return text

    def _spots_svg(self, text: str, prefix: str, run: Optional[str]) -> str:
        """The spots as transparent boxes over the drawing, each with its <title> (a browser's
        tooltip) and, with @run, a link: drawn after the figure was laid out, where the axes
        are, in the SVG's own units (its viewBox: points). Never narrower than 3 points, so a
        2 us gap in a 40 ms window can still be pointed at."""
        from html import escape
        m = re.search(r'viewBox="([\d.\s-]+)"', text[:2000])
        if not m:
            return ""
        _, _, vw, vh = (float(v) for v in m.group(1).split())
        ax = self.fig.axes[0]
        to_fig = self.fig.transFigure.inverted()
        out = [f'<g id="{prefix}-spots">']
        for s in self.spots:
            (fx0, fy0), (fx1, fy1) = to_fig.transform(ax.transData.transform([(s.x0, s.y0), (s.x1, s.y1)]))
            x, w = fx0 * vw, max((fx1 - fx0) * vw, 3.0)
            if w > (fx1 - fx0) * vw:
                x -= (w - (fx1 - fx0) * vw) / 2
            y, h = (1 - fy1) * vh, (fy1 - fy0) * vh
            box = (f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" fill="#000" '
                   f'fill-opacity="0"><title>{escape(s.title)}</title></rect>')
            out.append(f'<a href="#{run}-{s.link}">{box}</a>' if run and s.link else box)
        return "".join(out) + "</g>"

    def save(self, path: str, fmt: str) -> None:
        """Write the chart to @path as @fmt ("png" or "svg")."""
        if fmt == "svg":
            with open(path, "w") as f:
                f.write(self.svg(self.name))
            return
        self.fig.savefig(path, format="png", dpi=110, metadata={"Software": None})


def render_svgs(todo: Sequence[Tuple[Chart, str]]) -> None:
    """Draw each (chart, prefix) of @todo as its SVG for Chart.svg, on every CPU we may
    use: drawing is nearly all of the page's time (matplotlib's layout and ticks, a
    fixed second or so whatever the run's length), and the charts do not depend on
    one another. Forked children draw every other chart and send their text back
    through a pipe; what a child could not draw (it failed, or fork did) is drawn
    here, so the page is the same either way."""
    import json
    import os
    try:
        workers = min(len(os.sched_getaffinity(0)), len(todo))
    except (AttributeError, OSError):
        workers = 1
    kids = []
    for w in range(1, workers):
        try:
            r, wr = os.pipe()
        except OSError:
            break
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(wr)
            break
        if pid == 0:            # the child: its share, as JSON, then gone without cleanup
            code = 1
            try:
                os.close(r)
                mine = {i: c.svg(prefix) for i, (c, prefix) in enumerate(todo) if i % workers == w}
                with os.fdopen(wr, "w") as f:
                    json.dump(mine, f)
                code = 0
            finally:
                os._exit(code)
        os.close(wr)
        kids.append((pid, r))
    for i, (c, prefix) in enumerate(todo):
        if i % workers == 0 or not kids:
            c.drawn[prefix] = c.svg(prefix)
    for pid, r in kids:
        with os.fdopen(r) as f:
            text = f.read()
        _, status = os.waitpid(pid, 0)
        if status == 0 and text:
            for i, svg in json.loads(text).items():
                c, prefix = todo[int(i)]
                c.drawn[prefix] = svg
    for c, prefix in todo:      # a child that failed: its charts drawn here
        if prefix not in c.drawn:
            c.drawn[prefix] = c.svg(prefix)


def all_charts(rep: Report) -> List[Chart]:
    """Every chart the report has figures for, in the page's order."""
    require()
    try:
        preload_or_fail()
    except ImportError as e:
        raise HgError(f"the HTML page's charts need matplotlib, which is there but does not import: {e}", EXIT_ENV)
    out: List[Chart] = []
    for make in (confusion, execution_map, gap_lengths, switch_times, latency_hist, latency_cdf,
                 latency_stages, supply_bounds):
        c = make(rep)
        if c is not None:
            out.append(c)
    return out


# --- axes -------------------------------------------------------------------------------------------

def fmt_us(v: float) -> str:
    """A duration given in microseconds, in the unit that reads best: 500 ns, 10 us, 1 ms, 2.5 s."""
    if v <= 0:
        return "0"
    for scale, unit in ((1e6, "s"), (1e3, "ms"), (1.0, "us"), (1e-3, "ns")):
        if v >= scale * 0.9999:
            return f"{v / scale:.3g} {unit}"
    return f"{v * 1e3:.3g} ns"


def fmt_count(v: float) -> str:
    """A count on a log axis: 1, 10, 100, 1000, 10000 (never 1e+04)."""
    if v < 1:
        return f"{v:g}"
    return f"{int(round(v))}"


def _log_axis(axis: Any, lo: float, hi: float, fmt: Any) -> None:
    """Log ticks that read: 1-2-5 steps over up to three decades, decades beyond; labels by @fmt.
    Minor ticks (2..9 in each decade) only over up to three decades: beyond, the decades'
    grid lines say as much, and matplotlib lays out every tick as an object of its own (the
    eighty or so of a wide axis were 40% of the page's drawing time, 2026-11-28)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator
    decades = math.log10(max(hi, lo * 1.0001) / max(lo, 1e-12))
    subs: Tuple[float, ...] = (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt(v)))
    if decades <= 3:
        axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)), numticks=30))
    else:
        axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def _figure(height: float = 3.4) -> Tuple[Any, Any]:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, which="major", color="#e6e6e6", linewidth=0.8)
    ax.set_axisbelow(True)
    return fig, ax


def _legend_outside(ax: Any, handles: Optional[List[Any]] = None, title: Optional[str] = None) -> None:
    kw: Dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "frameon": False, "fontsize": 9}
    if title:
        kw["title"] = title
        kw["title_fontsize"] = 9
    if handles is not None:
        ax.legend(handles=handles, **kw)
    else:
        ax.legend(**kw)


def _hist_axes(ax: Any, edges: Sequence[float], counts_max: float, ylabel: str, xlabel: str) -> None:
    """A duration histogram's axes: log x in readable units over the whole decades that @edges (the
    populated bins' edges) reach, log counts from below 1."""
    ax.set_xscale("log")
    ax.set_yscale("log", nonpositive="clip")
    lo, hi = max(min(e for e in edges if e > 0), 1e-3), max(edges)
    lo, hi = 10 ** math.floor(math.log10(lo) + 1e-9), 10 ** math.ceil(math.log10(hi) - 1e-9)
    if hi <= lo:
        hi = lo * 10
    ax.set_xlim(lo, hi)
    ax.set_ylim(0.5, max(counts_max, 1) * 2)
    _log_axis(ax.xaxis, lo, hi, fmt_us)
    _log_axis(ax.yaxis, 1, max(counts_max, 10), fmt_count)
    ax.set_ylabel(ylabel + " (log scale)")
    ax.set_xlabel(xlabel)


def _populated(edges: Sequence[float], counts: Sequence[float]) -> List[float]:
    """The edges of the bins that hold something: the histogram's x axis spans these, not the report's
    whole fixed range (10 ns to 10 s), where a run's 2-5 us gaps were a sliver."""
    out: List[float] = []
    for i, c in enumerate(counts):
        if c > 0 and i + 1 < len(edges):
            out += [edges[i], edges[i + 1]]
    return out or list(edges)


def _positive_edges(edges: Sequence[float], counts: Sequence[float]) -> Tuple[List[float], List[float]]:
    """Bins whose left edge is above zero (a log axis cannot start at 0): the first bin [0, e1] starts at e1/2."""
    edges = list(edges)
    if edges and edges[0] <= 0 and len(edges) > 1:
        edges[0] = edges[1] / 2
    return edges, list(counts)


# --- the charts -------------------------------------------------------------------------------------

def confusion(rep: Report) -> Optional[Chart]:
    """Inferred against actual, shaded by count (log), counts written, right answers outlined."""
    inf = section(rep, "inference")
    if not inf:
        return None
    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle
    conf = inf["confusion"]
    rows = [(a, r) for a, r in zip(conf["actual"], conf["matrix"]) if sum(r)]
    if not rows:
        return None
    cols = conf["inferred"]
    m = np.array([r for _, r in rows], dtype=float)
    fig, ax = _figure(1.2 + 0.45 * len(rows))
    ax.grid(False)
    top = max(m.max(), 1.0)
    masked = np.ma.masked_where(m <= 0, m)  # type: ignore[no-untyped-call]  # numpy.ma is untyped
    # vmin below 1: a cell of one gap is tinted, never as white as an empty one
    im = ax.imshow(masked, cmap="Blues", norm=LogNorm(vmin=0.4, vmax=max(top, 10)), aspect="auto")
    norm = im.norm
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = int(m[i, j])
            dark = v > 0 and norm(v) > 0.6
            ax.text(j, i, str(v), ha="center", va="center", fontsize=9,
                    color="white" if dark else ("#b0b0b0" if v == 0 else "black"))
            if rows[i][0] == cols[j]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.6))
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([a for a, _ in rows])
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("inferred from hourglass alone")
    ax.set_ylabel("actual (kernel)")
    ax.tick_params(length=0)
    cb = fig.colorbar(im, ax=ax, pad=0.02)
    cb.set_label("gaps (log scale)")
    cb.ax.set_ylim(1, max(top, 10))
    cb.ax.yaxis.set_major_formatter(_count_formatter())
    return Chart("matrix", "Inferred against actual: gaps",
                 "Each cell counts gaps, shaded by its count on a log scale: dark cells hold many gaps, "
                 "pale ones few. Outlined cells are right answers; every other non-zero cell is a wrong "
                 "inference.", fig)


def _count_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _pos: fmt_count(v))


def execution_map(rep: Report) -> Optional[Chart]:
    """The paper's Fig. 3: each thread's intervals and its gaps, the upper half of a gap coloured by
    what hourglass inferred, the lower half by what the kernel says; wrong inferences marked. Every
    gap has a tooltip, and a wrong one links to its row of the disagreements."""
    m = (section(rep, "charts") or {}).get("map")
    if not m or not any(th.get("intervals") or th.get("gaps") for th in m.get("threads") or []):
        return None         # a latency run's threads record no intervals: nothing to draw
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    threads = m["threads"]
    listed = (section(rep, "disagreements") or {}).get("listed") or []
    fig, ax = _figure(1.5 + 0.55 * len(threads))
    ax.grid(True, axis="x")
    seen = set()
    spots: List[Spot] = []
    for row, th in enumerate(threads):
        y = len(threads) - 1 - row
        name = th.get("name") or thread_name(rep, th.get("thread"))
        ivs = [(a, b - a) for a, b in th.get("intervals") or []]
        if ivs:
            _bars(ax, ivs, y - 0.35, 0.7, CLASS_COLORS["running"], "none", 0)
            seen.add("running")
        lower: Dict[str, List[Tuple[float, float]]] = {}
        upper: Dict[str, List[Tuple[float, float]]] = {}
        wrong_x = []
        for g in th.get("gaps") or []:
            a, b, cls = g[0], g[1], g[2]
            wrong = len(g) > 3 and bool(g[3])
            lower.setdefault(cls, []).append((a, b - a))
            i = disagreement_of(rep, int(th.get("thread", row)), a, b) if wrong else None
            inferred = listed[i]["inferred"] if i is not None else (cls if not wrong else UNKNOWN)
            upper.setdefault(inferred, []).append((a, b - a))
            if wrong:
                wrong_x.append((a + b) / 2)
            spots.append(Spot(a, b, y - 0.35, y + 0.35, _gap_title(rep, name, a, b, cls, inferred,
                                                                   listed[i] if i is not None else None),
                              f"dis-{i}" if i is not None else None))
        for half, y0 in ((lower, y - 0.35), (upper, y)):
            for cls, bars in half.items():
                c = CLASS_COLORS.get(cls, "#ffffff")
                # an outline as wide as a hairline: a 2 us gap in a 40 ms window still shows
                _bars(ax, bars, y0, 0.35, c, c if cls in CLASS_COLORS else "#000000", 0.6)
                seen.add(cls)
        if wrong_x:
            ax.plot(wrong_x, [y + 0.48] * len(wrong_x), linestyle="none", marker="v", markersize=5,
                    color="red", clip_on=False)
            seen.add("wrong")
    ax.set_yticks(range(len(threads)))
    ax.set_yticklabels([th.get("name") or thread_name(rep, th.get("thread")) for th in reversed(threads)])
    ax.set_ylim(-0.6, len(threads) - 0.35)
    ax.set_xlim(m["from"], m["to"])
    ax.ticklabel_format(axis="x", useOffset=False, style="plain")
    ax.set_xlabel("t (s, from the start of the kernel's recording)")
    handles: List[Any] = [Patch(color=CLASS_COLORS[c], label=c) for c in CLASS_COLORS if c in seen]
    if UNKNOWN in seen:
        handles.append(Patch(facecolor="#ffffff", edgecolor="#000000", label=UNKNOWN))
    if "wrong" in seen:
        handles.append(Line2D([], [], linestyle="none", marker="v", color="red", label="wrong inference"))
    _legend_outside(ax, handles, title="a gap: upper half inferred,\nlower half actual")
    span_ms = (m["to"] - m["from"]) * 1e3
    chart = Chart("map", f"Execution map, {span_ms:.0f} ms" + _of_threads(len(threads), m.get("threads_total")),
                  "Each thread's intervals (grey: running) and its gaps, each in two halves: the upper one "
                  "coloured by what hourglass inferred from its own intervals, the lower one by the actual cause "
                  "the kernel recorded. Where the halves differ the inference was wrong (a red triangle). Point "
                  "at a gap for what it was; click a wrong one for its row in the disagreements.", fig)
    chart.spots = spots
    return chart


# a wrong gap whose inferred class the report does not list (drawn white, outlined)
UNKNOWN = "inferred: not listed"


def _gap_title(rep: Report, name: str, a: float, b: float, actual: str, inferred: str,
               d: Optional[Dict[str, Any]]) -> str:
    """A gap's tooltip on the map: when, whose, how long, inferred against actual, and why each
    when the disagreement says."""
    line = f"{name}, t={a:.6f} s, {(b - a) * 1e6:.2f} us: inferred {inferred}"
    if d and d.get("inferred_why"):
        line += f" ({d['inferred_why']})"
    line += f"; actual {actual}"
    if d and (d.get("primary") or d.get("actual_why")):
        line += f" ({d.get('primary') or d.get('actual_why')})"
    return line + ("; right" if inferred == actual else "; WRONG")


def _bars(ax: Any, spans: Sequence[Tuple[float, float]], y: float, height: float, face: str, edge: str,
          linewidth: float) -> None:
    """Rectangles (x, width) from @y up by @height, drawn as one path: a map holds thousands of them, and
    one element each (broken_barh's collection) made the page's SVG 1.5 MB and took a second to draw."""
    import numpy as np
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path
    a = np.asarray(spans, dtype=float).reshape(-1, 2)
    x0, x1 = a[:, 0], a[:, 0] + a[:, 1]
    y0, y1 = np.full(len(a), y), np.full(len(a), y + height)
    # each rectangle: four corners and a close (whose vertex is ignored)
    verts = np.stack([np.stack(p, axis=1) for p in ((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0))], axis=1)
    codes = np.tile([Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY], len(a))
    # add_artist, not add_patch: the limits are set by the caller, and add_patch's walk of every segment
    # to update them took longer than drawing them
    ax.add_artist(PathPatch(Path(verts.reshape(-1, 2), codes), facecolor=face, edgecolor=edge,
                            linewidth=linewidth, transform=ax.transData))


def gap_lengths(rep: Report) -> Optional[Chart]:
    """How long the gaps of each class were."""
    gh = (section(rep, "charts") or {}).get("gap_hist")
    if not gh or not gh.get("classes") or not any(sum(v) for v in gh["classes"].values()):
        return None
    fig, ax = _figure()
    top, spans = 1.0, []
    for cls in [c for c in CLASS_COLORS if c in gh["classes"]] + sorted(set(gh["classes"]) - set(CLASS_COLORS)):
        counts = gh["classes"][cls]
        if not sum(counts):
            continue
        edges, counts = _positive_edges(gh["edges_us"], counts)
        ax.stairs(counts, edges, label=f"{cls} ({sum(counts)})", color=CLASS_COLORS.get(cls, "#000000"),
                  linewidth=1.6)
        top = max(top, max(counts))
        spans += _populated(edges, counts)
    _hist_axes(ax, spans, top, "gaps", "gap length")
    _legend_outside(ax, title="actual class")
    return Chart("gaps", "Gap length by actual class",
                 "How long the gaps of each class lasted (both axes logarithmic: a class with a handful of "
                 "long gaps still shows).", fig)


def _one_hist(edges_us: Sequence[float], counts: Sequence[float], ylabel: str, xlabel: str,
              color: str = "#1f77b4") -> Tuple[Any, Any]:
    fig, ax = _figure()
    edges, cs = _positive_edges(edges_us, counts)
    ax.stairs(cs, edges, fill=True, color=color, alpha=0.85, baseline=0.5)
    _hist_axes(ax, _populated(edges, cs), max(cs or [1]), ylabel, xlabel)
    return fig, ax


def switch_times(rep: Report) -> Optional[Chart]:
    """The paper's Fig. 4: gap lengths of context switches between hourglass threads."""
    sh = (section(rep, "charts") or {}).get("switch_hist")
    if not sh or not sum(sh.get("counts") or []):
        return None
    fig, ax = _one_hist(sh["edges_us"], sh["counts"], "switches", "gap length of a switch between hourglass threads")
    cs = section(rep, "context_switch") or {}
    if cs.get("inferred_median_us"):
        ax.axvline(cs["inferred_median_us"], color="black", linestyle=":", linewidth=1)
        ax.annotate(f"median {fmt_us(cs['inferred_median_us'])}", (cs["inferred_median_us"], 0.97),
                    xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points",
                    va="top", fontsize=9)
    return Chart("switch", "Context switches between hourglass threads",
                 "How long the gaps that were switches from one hourglass thread to another lasted "
                 "(the paper's Fig. 4).", fig)


def latency_hist(rep: Report) -> Optional[Chart]:
    """Wake-up latency per thread, log counts so that one outlier shows."""
    threads = [(k, s) for k, s in lat_threads(rep) if s.get("hist") and sum(s["hist"].get("counts") or [])]
    if not threads:
        return None
    fig, ax = _figure()
    top, edges_all = 1.0, []
    for i, (k, s) in enumerate(threads):
        edges, counts = _positive_edges(s["hist"]["edges_us"], s["hist"]["counts"])
        color = THREAD_COLORS[i % len(THREAD_COLORS)]
        name = s.get("name") or thread_name(rep, k)
        if len(threads) == 1:
            ax.stairs(counts, edges, fill=True, color=color, alpha=0.85, baseline=0.5, label=name)
        else:
            ax.stairs(counts, edges, color=color, linewidth=1.6, label=name)
        top = max(top, max(counts))
        edges_all += _populated(edges, counts)
        mx = (s.get("latency") or {}).get("max_us")
        if mx:
            ax.annotate(f"max {fmt_us(mx)}", (mx, 1), xytext=(0, 28), textcoords="offset points", ha="center",
                        fontsize=9, color=color, arrowprops={"arrowstyle": "->", "color": color})
    _hist_axes(ax, edges_all, top * 4, "wake-ups", "wake-up latency (intended expiry to user space)")
    _legend_outside(ax)
    return Chart("latency", "Wake-up latency",
                 "How late each timer wake-up reached user space. The count axis is logarithmic, so a "
                 "single late wake-up is a visible bar; the arrow marks each thread's worst.", fig)


def latency_cdf(rep: Report) -> Optional[Chart]:
    """The share of wake-ups at most so late, per thread, on a percentile axis that opens up the tail."""
    threads = [(k, s) for k, s in lat_threads(rep) if s.get("cdf")]
    if not threads:
        return None
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    fig, ax = _figure(3.8)
    lo, hi, n_max = math.inf, 0.0, 1
    for i, (k, s) in enumerate(threads):
        n = max(int(s.get("wakeups") or 0), len(s["cdf"]), 1)
        n_max = max(n_max, n)
        top = 1 - 0.5 / n
        xs = [p[0] for p in s["cdf"]]
        # the last wake-up (share 1) would sit at infinity: it is drawn at the axis' top, half a wake-up below 1
        ys = [min(p[1], top) for p in s["cdf"]]
        color = THREAD_COLORS[i % len(THREAD_COLORS)]
        ax.step(xs, ys, where="post", color=color, linewidth=1.6, label=s.get("name") or thread_name(rep, k))
        ax.plot([xs[-1]], [ys[-1]], marker="o", markersize=4, color=color)
        lo, hi = min([lo] + [x for x in xs if x > 0]), max(hi, max(xs))
    if not hi > 0:
        return None         # no latency above zero: nothing a log axis can show
    lo = min(lo, hi)
    ax.set_yscale("logit")
    top = 1 - 0.5 / n_max
    ax.set_ylim(min(0.5 / n_max, 0.01), top)
    ticks = [p for p in (0.0001, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999) if 0.5 / n_max <= p <= top]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v * 100:.10g}%"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.2, hi * 1.2)
    _log_axis(ax.xaxis, lo / 1.2, hi * 1.2, fmt_us)
    ax.set_ylabel("wake-ups at most so late")
    ax.set_xlabel("wake-up latency")
    _legend_outside(ax)
    return Chart("cdf", "Wake-up latency, cumulative",
                 "The share of wake-ups that were at most so late, on a percentile scale that gives 90%, 99% "
                 "and 99.9% the same room, so the tail reads; the dot at the top is each thread's last "
                 "(worst) wake-up.", fig)


def latency_stages(rep: Report) -> Optional[Chart]:
    """Median latency by stage (timer, irq, sched, return), stacked per thread."""
    names = report_stages(rep)
    threads = [(k, s) for k, s in lat_threads(rep) if any(s.get(st) for st in names)]
    if not threads:
        return None
    from matplotlib.patches import Patch
    fig, ax = _figure(1.2 + 0.5 * len(threads))
    ax.grid(True, axis="x")
    labels = []     # the threads' (the stages' names stay in @names: the legend's)
    for row, (k, s) in enumerate(threads):
        y = len(threads) - 1 - row
        x = 0.0
        for st in names:
            v = float((s.get(st) or {}).get("median_us") or 0)
            if v > 0:
                ax.barh(y, v, left=x, height=0.6, color=STAGE_COLORS.get(st, "#7f7f7f"))
            x += v
        ax.annotate(f"{x:.1f} us", (x, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=9)
        labels.append(s.get("name") or thread_name(rep, k))
    ax.set_yticks(range(len(threads)))
    ax.set_yticklabels(list(reversed(labels)))
    ax.set_xlim(0, ax.get_xlim()[1] * 1.12)
    ax.set_xlabel("median of each stage (us)")
    _legend_outside(ax, [Patch(color=STAGE_COLORS.get(st, "#7f7f7f"), label=st) for st in names], title="stage")
    return Chart("stages", "Median wake-up latency by stage",
                 "Where a typical wake-up's time goes: the timer firing late (timer), the interrupt until the "
                 "thread is woken (irq), until it is switched in (sched), back to user space (return).", fig)


def supply_bounds(rep: Report) -> Optional[Chart]:
    """Lower and upper supply-bound functions per thread, as a share of the window."""
    sbf = (section(rep, "charts") or {}).get("sbf")
    if not sbf:
        return None
    from matplotlib.lines import Line2D
    fig, ax = _figure(3.8)
    handles: List[Any] = []
    lo, hi = math.inf, 0.0
    drawn = sorted(sbf.items(), key=lambda kv: int(kv[0]))[:SBF_THREADS]
    for i, (k, s) in enumerate(drawn):
        win = s.get("window_ms") or []
        if not win:
            continue
        color = THREAD_COLORS[i % len(THREAD_COLORS)]
        ax.plot(win, _share(s.get("upper_ms") or [], win), color=color, linewidth=1.6)
        ax.plot(win, _share(s.get("lower_ms") or [], win), color=color, linewidth=1.6, linestyle="--")
        handles.append(Line2D([], [], color=color, linewidth=2.5, label=s.get("name") or thread_name(rep, int(k))))
        lo, hi = min(lo, min(win)), max(hi, max(win))
    if not handles:
        return None
    handles += [Line2D([], [], color="black", linewidth=1.6, label="upper: the most CPU"),
                Line2D([], [], color="black", linewidth=1.6, linestyle="--", label="lower: the least CPU")]
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    _log_axis(ax.xaxis, lo * 1e3, hi * 1e3, lambda v: fmt_us(v * 1e3))
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("CPU received / window")
    ax.set_xlabel("window length")
    _legend_outside(ax, handles)
    return Chart("sbf", "Supply-bound functions" + _of_threads(len(drawn), len(sbf)),
                 "For each window length, the least (dashed) and the most (solid) CPU time the thread received "
                 "in any window of that length, as a share of the window: where a dashed line leaves zero is "
                 "the longest the thread went without the CPU.", fig)


def _of_threads(shown: int, total: Optional[int]) -> str:
    """A chart's title, when it shows only the first of the threads: how many of how many."""
    return f", the first {shown} of {total} threads" if total and total > shown else ""


def _share(vals: Sequence[Optional[float]], win: Sequence[float]) -> List[float]:
    """CPU received as a share of each window; a window no stretch of the run
    bounded (null in the JSON) is not drawn (nan breaks the line)."""
    return [float("nan") if v is None else v / d if d > 0 else 0.0 for v, d in zip(vals, win)]
