"""gapmodel - a profile's model: a small decision tree over what hourglass's own data says of each
gap, fitted on runs with ground truth where the fitted limits cannot separate the classes
(docs/profile.md, "THE MODEL").

Under plain emulation a tick's handler takes 100 to 800 us and starts up to half a millisecond
late, so lengths alone misread whole classes: the rules read such ticks as switches, and a limit
cannot move them without taking interrupts and switches along. A tree that also sees where a gap
falls in the tick's period and what came just before and after it separates more of them.

The features (FEATURES) are hourglass's alone, computed from the gap stream's user-space fields
(g0, g1, cpu, thread, next_thread, vol): nothing of the kernel's, so a run recorded with
`hourglass record --no-kernel` is read as one with ground truth is. The tick's period comes from
the runs the model was learned on (the kernel's own ticks); its phase on each CPU from the run
being read (where its long gaps gather in the period). The tree is stored as plain nodes in the
profile (readable, and walked here without any library); fitting it needs scikit-learn, which is
optional: only `hourglass learn --model tree` imports it.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import vocab
from .errors import EXIT_ENV, EXIT_BAD_INPUT, HgError

FEATURES = ("log_len_us", "switch", "phase_us", "log_since_us", "log_until_us", "log_prev_us", "log_next_us")
CLASSES = vocab.INFERABLE_CLASSES
DEPTH = 4            # 15 questions at most: a tree a person can read, and as good as deeper ones
                     # on runs it never saw (6.12's plain-emulation lab: depth 4 80.3%, 6 80.8%)
LEAF = 20            # gaps a leaf holds at least
HIDDEN_WEIGHT = 0.05  # hidden gaps are most gaps under emulation, and not in the headline
PHASE_BINS = 40
HZ_CANDIDATES = (1000, 500, 300, 250, 100)

Gap = Dict[str, Any]


def _log(x: float) -> float:
    return math.log10(max(x, 1e-3))


def tick_period_s(ticks_by_cpu: Dict[int, List[int]], tsc_hz: float) -> Optional[float]:
    """The tick's period (s) from the kernel's own ticks' starts (TSC): the longest of HZ's
    periods on whose lattice they gather (80% of the best's concentration or more: ticks every
    4 ms gather on the 1 ms lattice too); None with fewer than 20 ticks."""
    starts = [(c, t) for c, ts in ticks_by_cpu.items() for t in ts]
    if len(starts) < 20:
        return None
    conc: Dict[int, float] = {}
    for hz in HZ_CANDIDATES:
        per = tsc_hz / hz
        x = sum(math.cos(2 * math.pi * (t % per) / per) for _, t in starts)
        y = sum(math.sin(2 * math.pi * (t % per) / per) for _, t in starts)
        conc[hz] = math.hypot(x, y) / len(starts)
    best = max(conc.values())
    return 1.0 / min(hz for hz, v in conc.items() if v >= 0.8 * best)


def phases(gaps: Sequence[Gap], tsc_hz: float, period_s: float, floor_us: float) -> Dict[int, float]:
    """Each CPU's tick phase (0..1 of the period) from hourglass's data: the densest stretch of
    the period (three bins of PHASE_BINS, circular) among the starts of involuntary gaps of
    @floor_us or longer."""
    per = period_s * tsc_hz
    hist: Dict[int, List[int]] = {}
    for g in gaps:
        if g["vol"] or (g["g1"] - g["g0"]) / tsc_hz * 1e6 < floor_us:
            continue
        h = hist.setdefault(g["cpu"], [0] * PHASE_BINS)
        h[int((g["g0"] % per) / per * PHASE_BINS) % PHASE_BINS] += 1
    out = {}
    for cpu, h in hist.items():
        smooth = [h[i - 1] + h[i] + h[(i + 1) % PHASE_BINS] for i in range(PHASE_BINS)]
        out[cpu] = (smooth.index(max(smooth)) + 0.5) / PHASE_BINS
    return out


def features(gaps: Sequence[Gap], tsc_hz: float, period_s: float, floor_us: float) -> List[Tuple[Gap, List[float]]]:
    """Each involuntary gap of @gaps with its FEATURES, in each CPU's time order."""
    ph = phases(gaps, tsc_hz, period_s, floor_us)
    per = period_s * tsc_hz
    us = tsc_hz / 1e6
    by_cpu: Dict[int, List[Gap]] = {}
    for g in gaps:
        by_cpu.setdefault(g["cpu"], []).append(g)
    out = []
    for cpu, gs in sorted(by_cpu.items()):
        gs.sort(key=lambda g: g["g0"])
        for i, g in enumerate(gs):
            if g["vol"]:
                continue
            prev = gs[i - 1] if i else None
            nxt = gs[i + 1] if i + 1 < len(gs) else None
            after = ((g["g0"] % per) / per - ph.get(cpu, 0.0)) % 1.0     # of the period, after the tick
            out.append((g, [_log((g["g1"] - g["g0"]) / us),
                            1.0 if g["next_thread"] != g["thread"] else 0.0,
                            (after if after < 0.5 else after - 1.0) * period_s * 1e6,
                            _log((g["g0"] - prev["g1"]) / us) if prev else 4.0,
                            _log((nxt["g0"] - g["g1"]) / us) if nxt else 4.0,
                            _log((prev["g1"] - prev["g0"]) / us) if prev else -3.0,
                            _log((nxt["g1"] - nxt["g0"]) / us) if nxt else -3.0]))
    return out


def fit(rows: Sequence[List[float]], labels: Sequence[str], period_s: float, floor_us: float) -> Dict[str, Any]:
    """A tree of DEPTH over @rows (FEATURES) and their kernel classes @labels, as a profile
    stores it. Needs scikit-learn."""
    try:
        from sklearn.tree import DecisionTreeClassifier  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise HgError("--model tree needs scikit-learn, which this Python lacks (pip install 'hgtools[learn]'; "
                      "make setup puts it in the build tree's virtual environment)", EXIT_ENV)
    weights = [HIDDEN_WEIGHT if y == "hidden" else 1.0 for y in labels]
    t = DecisionTreeClassifier(max_depth=DEPTH, min_samples_leaf=LEAF, random_state=0)
    t.fit(list(rows), list(labels), sample_weight=weights)
    tree = t.tree_
    nodes: List[Dict[str, Any]] = []
    for i in range(tree.node_count):
        if tree.children_left[i] < 0:
            counts = tree.value[i][0]
            nodes.append({"class": str(t.classes_[int(counts.argmax())])})
        else:
            nodes.append({"feature": FEATURES[int(tree.feature[i])], "le": round(float(tree.threshold[i]), 4),
                          "yes": int(tree.children_left[i]), "no": int(tree.children_right[i])})
    return {"kind": "tree", "features": list(FEATURES), "tick_period_ms": round(period_s * 1e3, 6),
            "phase_floor_us": round(floor_us, 3), "nodes": nodes}


def check(model: Dict[str, Any], where: str) -> None:
    """A profile's model as this version walks it, or an error naming what is wrong."""
    try:
        ok = (model["kind"] == "tree" and list(model["features"]) == list(FEATURES)
              and float(model["tick_period_ms"]) > 0 and float(model["phase_floor_us"]) >= 0)
        nodes = model["nodes"]
        for i, n in enumerate(nodes):
            if "class" in n:
                ok = ok and n["class"] in CLASSES
            else:
                ok = ok and n["feature"] in FEATURES and isinstance(n["le"], (int, float)) \
                    and i < int(n["yes"]) < len(nodes) and i < int(n["no"]) < len(nodes)
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok or not model.get("nodes"):
        raise HgError(f"{where}: its model is not a tree of this version's features ({', '.join(FEATURES)}) "
                      "with classes and forward links", EXIT_BAD_INPUT)


def decide(model: Dict[str, Any], row: Sequence[float]) -> Tuple[str, List[str]]:
    """The tree's class for a gap's FEATURES @row, and the questions that led there, in words."""
    nodes, i, path = model["nodes"], 0, []
    index = {f: k for k, f in enumerate(FEATURES)}
    while "class" not in nodes[i]:
        n = nodes[i]
        v = row[index[n["feature"]]]
        yes = v <= n["le"]
        path.append(f"{n['feature']} {v:.3g} {'<=' if yes else '>'} {n['le']:g}")
        i = int(n["yes"] if yes else n["no"])
    return nodes[i]["class"], path


def classify(model: Dict[str, Any], gaps: Sequence[Gap], tsc_hz: float) -> List[Tuple[Gap, str, List[str]]]:
    """Every involuntary gap of a run with the model's class and its path."""
    out = []
    for g, row in features(gaps, tsc_hz, float(model["tick_period_ms"]) / 1e3, float(model["phase_floor_us"])):
        cls, path = decide(model, row)
        out.append((g, cls, path))
    return out


def write_classes(decided: Sequence[Tuple[Gap, str, List[str]]], path: str) -> None:
    """hgmerge --classes' file (docs/profile.md, "THE CLASSES FILE")."""
    with open(path, "w") as f:
        f.write("hourglass-classes 1\n# CPU G0 CLASS\n")
        for g, cls, _ in decided:
            f.write(f"{g['cpu']} {g['g0']} {cls}\n")


def text(model: Dict[str, Any]) -> List[str]:
    """The tree as indented rules, for a person."""
    out: List[str] = []

    def walk(i: int, depth: int) -> None:
        n = model["nodes"][i]
        pad = "  " * depth
        if "class" in n:
            out.append(f"{pad}-> {n['class']}")
            return
        out.append(f"{pad}if {n['feature']} <= {n['le']:g}:")
        walk(int(n["yes"]), depth + 1)
        out.append(f"{pad}else ({n['feature']} > {n['le']:g}):")
        walk(int(n["no"]), depth + 1)
    walk(0, 0)
    return out
