"""figures - the page's charts, drawn with matplotlib: inline SVG for the
page (element ids prefixed per chart so that several never collide), and
PNG and SVG files beside it (figures/), with the data each was drawn from.
"""
from __future__ import annotations

import io
import os
import re
from typing import Any, Callable, Optional

from .model import Figure

KERNEL_COLORS = {"6.1": "#1f77b4", "6.1-rt": "#d62728", "6.12": "#2ca02c", "6.12-rt": "#9467bd",
                 "7.3": "#8c564b", "7.3-rt": "#e377c2", "native": "#ff7f0e"}
WIDTH_IN = 9.0


def _mpl() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "svg.fonttype": "none", "axes.grid": True, "grid.alpha": 0.3,
                         "svg.hashsalt": "hourglass-paper"})
    return plt


def color(kernel: str) -> str:
    return KERNEL_COLORS.get(kernel, "#7f7f7f")


def draw(out_dir: str, section: str, key: str, title: str, how: str, data: Any,
         paint: Callable[[Any], None], height_in: float = 3.6, ncols: int = 1, nrows: int = 1,
         sharex: bool = False, sharey: bool = False) -> Figure:
    """A Figure drawn by @paint(axes) (one axes, or an array of them): SVG inline, PNG and SVG files
    in @out_dir/figures/."""
    plt = _mpl()
    fig, ax = plt.subplots(nrows, ncols, figsize=(WIDTH_IN, height_in), squeeze=(nrows * ncols == 1),
                           sharex=sharex, sharey=sharey, layout="constrained")
    try:
        paint(ax)
        fig.suptitle(title, fontsize=10)
        name = f"{section}-{key}"
        os.makedirs(os.path.join(out_dir, "figures"), exist_ok=True)
        files = {}
        for fmt in ("png", "svg"):
            rel = os.path.join("figures", f"{name}.{fmt}")
            fig.savefig(os.path.join(out_dir, rel), dpi=110 if fmt == "png" else None)
            files[fmt] = rel
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
    finally:
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.find("<svg"):]
    # ids unique per chart: matplotlib names clip paths and glyphs alike in every chart
    pre = re.sub(r"[^a-zA-Z0-9]", "", name)
    svg = re.sub(r'id="([^"]+)"', lambda m: f'id="{pre}-{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#|xlink:href="#|href="#)([^")]+)', lambda m: f"{m.group(1)}{pre}-{m.group(2)}", svg)
    return Figure(key, title, how, svg=svg, files=files, data=data)


def log_us_axis(ax: Any, axis: str = "x") -> None:
    """A log axis read as 1 us, 10 us, 1 ms, never 1e+03."""
    from matplotlib.ticker import FuncFormatter

    def f(v: float, _pos: Optional[int]) -> str:
        if v >= 1000:
            return f"{v / 1000:g} ms"
        return f"{v:g} us"
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(FuncFormatter(f))


def kb_axis(ax: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    def f(v: float, _pos: Optional[int]) -> str:
        return f"{v / 1024:g} MB" if v >= 1024 else f"{v:g} KB"
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(f))
