"""report_mutate - corrupted report JSON, for the fuzz target of hgtools
(fuzz_report.py, atheris) and its property test (tests/unit/test_report_robust.py).

A report the merger wrote is changed in one to three places a `choose`
function picks (random.Random in the test, atheris's FuzzedDataProvider in
the target): a key removed, renamed or added, a value replaced by one of
another type or an extreme one (null, a string, a bool, a list, an object,
huge, negative, zero, NaN, infinite), a list cut, grown or reordered. Then
the loader (report_json.load) must refuse it, naming the file, or the text
and HTML renderers must lay it out: never a traceback.
"""
from __future__ import annotations

import copy
import io
import json
import math
import os
from typing import Any, Callable, List, Tuple

# what a value may become
REPLACEMENTS: List[Any] = [None, True, False, 0, -1, 1, 2 ** 31, 2 ** 70, -(2 ** 70), 0.5, -0.5, 1e308, -1e308,
                           5e-324, math.nan, math.inf, -math.inf, "", "x", "12", "hg-thread-0", [], [1, 2], [[1, 2]],
                           {}, {"a": 1}, {"0": {}}, ["x", 1, None]]
KEYS = ["0", "1", "-1", "x", "thread", "name", "counts", "edges_us", "t", "gaps", "total", "latency_us"]


def paths(v: Any, at: Tuple[Any, ...] = ()) -> List[Tuple[Any, ...]]:
    """Every place in @v: the keys and indexes down to it."""
    out = [at]
    if isinstance(v, dict):
        for k, x in v.items():
            out += paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:6]):          # the first few items are enough
            out += paths(x, at + (i,))
    return out


def get(v: Any, at: Tuple[Any, ...]) -> Any:
    for k in at:
        v = v[k]
    return v


def mutate(rep: Any, choose: Callable[[int], int]) -> Any:
    """@rep changed in 1..3 places; choose(n) picks one of n."""
    rep = copy.deepcopy(rep)
    for _ in range(1 + choose(3)):
        ps = paths(rep)
        at = ps[choose(len(ps))]
        if not at:
            if choose(8) == 0:
                rep = REPLACEMENTS[choose(len(REPLACEMENTS))]
            continue
        parent, key = get(rep, at[:-1]), at[-1]
        what = choose(6)
        if what == 0 and isinstance(parent, dict):
            del parent[key]
        elif what == 1 and isinstance(parent, dict):
            parent[KEYS[choose(len(KEYS))]] = parent.pop(key)
        elif what == 2 and isinstance(parent[key], list) and parent[key]:
            lst = parent[key]
            how = choose(4)
            if how == 0:
                del lst[choose(len(lst)):]
            elif how == 1:
                lst.append(copy.deepcopy(lst[choose(len(lst))]))
            elif how == 2:
                lst.reverse()
            else:
                lst[choose(len(lst))] = REPLACEMENTS[choose(len(REPLACEMENTS))]
        elif what == 3 and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            parent[key] = [-parent[key], parent[key] * 1e300, 0, parent[key] + 1e-9, -1][choose(5)]
        else:
            parent[key] = copy.deepcopy(REPLACEMENTS[choose(len(REPLACEMENTS))])
    return rep


def seeds(top: str) -> List[Any]:
    """Reports to corrupt: the unit tests' (tests/unit/data) and the merger's of real runs
    (tests/fuzz/corpus/report)."""
    out = []
    for d in (os.path.join(top, "tests", "unit", "data"), os.path.join(top, "tests", "fuzz", "corpus", "report")):
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f.endswith(".json") and (f.startswith("report-") or "corpus" in d):
                with open(os.path.join(d, f)) as x:
                    out.append(json.load(x))
    return out


def exercise(path: str, charts: int = 2) -> str:
    """Load @path and render it as text and as HTML: the outcome, 'refused: ...' or 'rendered'.
    @charts: 0 the page without its charts, 1 the charts made but not drawn (what most
    of a bad figure trips on, fast), 2 drawn as the page has them. Anything but the
    loader's one-line refusal propagates: a traceback is a failure."""
    from hgtools import html, report_json, report_text
    from hgtools.errors import HgError
    import matplotlib.pyplot as plt
    try:
        rep = report_json.load(path)
    except HgError as e:
        msg = str(e)
        if not msg.startswith(path + ":") or "\n" in msg or e.status != 3:
            raise AssertionError(f"a refusal that is not one line naming the file, exit 3: {msg!r}")
        return "refused: " + msg[len(path) + 2:]
    saved = html._charts.Chart.svg, html._charts.all_charts
    if charts < 2:
        html._charts.Chart.svg = lambda self, prefix: "<svg></svg>"
    if charts < 1:
        html._charts.all_charts = lambda rep: []
    try:
        report_text.render(rep, io.StringIO())
        html.page([rep])
    finally:
        html._charts.Chart.svg, html._charts.all_charts = saved
        plt.close("all")
    return "rendered"
