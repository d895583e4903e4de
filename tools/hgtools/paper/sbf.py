"""sbf - rt-muse's summary of supply-bound functions (seed 001: Maggio,
Lelli, Bini, Real-Time Systems 2017).

The merger measures, per thread, the least (lower) and the most (upper) CPU
time the thread received in any window of length d, at a few dozen window
lengths (report JSON: charts.sbf). rt-muse sums such bounds up in two lines:

- the lower bound by the rate-latency line alpha * (d - Delta): the
  bandwidth alpha the thread is guaranteed and the delay Delta before it
  starts to get it; of the lines below every measured point, the one with
  the largest area over [0, H] (H, the longest window), as rt-muse's
  bestAlphaDelta_low chooses;
- the upper bound by min(m * d, alpha_u * d + beta): the most bandwidth
  alpha_u and the burst beta; of the lines above every point, the one
  with the least area under min(m d, alpha_u d + beta) over [0, H], m
  being the most a thread can run (1 CPU).

Besides: the long-run shares lower(H)/H and upper(H)/H, and the longest
window measured in which the thread got nothing at all (its blackout).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple


@dataclass
class Summary:
    alpha: float            # guaranteed bandwidth (share of one CPU)
    delta: float            # delay before it, in the windows' unit
    alpha_upper: float      # most bandwidth
    burst: float            # beta, in the supply's unit
    share_lower: float      # lower(H) / H
    share_upper: float      # upper(H) / H
    blackout: float         # longest measured window with no supply at all (0: none measured)
    horizon: float          # H


def _points(ds: Sequence[float], ys: Sequence[float]) -> List[Tuple[float, float]]:
    if len(ds) != len(ys) or not ds:
        raise ValueError("supply bound: window lengths and supplies must be non-empty and of one length")
    pts = sorted(zip(ds, ys))
    if pts[0][0] > 0:
        pts.insert(0, (0.0, 0.0))
    return pts


def _candidate_slopes(pts: Sequence[Tuple[float, float]], extra: int = 400) -> List[float]:
    """Slopes worth trying: every line through two points and a fine grid between the extremes
    (the optimum line passes through one or two points of the convex hull)."""
    s = set()
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            dx = pts[j][0] - pts[i][0]
            if dx > 0:
                s.add((pts[j][1] - pts[i][1]) / dx)
    pos = [x for x in s if x > 0]
    if pos:
        lo, hi = min(pos), max(pos)
        s.update(lo + (hi - lo) * k / extra for k in range(extra + 1))
    return sorted(x for x in s if x > 0)


def lower_line(ds: Sequence[float], lower: Sequence[float]) -> Tuple[float, float]:
    """(alpha, Delta) of the rate-latency line below every point of @lower with the largest area
    over [0, H]; (0, H) when the thread received nothing in some window of every length."""
    pts = _points(ds, lower)
    H = pts[-1][0]
    best = (0.0, H, 0.0)
    for a in _candidate_slopes(pts):
        # the smallest delay that keeps a * (d - delay) under every point
        delay = max(d - y / a for d, y in pts)
        if delay >= H:
            continue
        area = a * (H - delay) ** 2 / 2.0
        if area > best[2] + 1e-15:
            best = (a, delay, area)
    return best[0], best[1]


def upper_line(ds: Sequence[float], upper: Sequence[float], max_rate: float = 1.0) -> Tuple[float, float]:
    """(alpha_u, beta) of the line above every point of @upper with the least area under
    min(max_rate * d, alpha_u * d + beta) over [0, H]."""
    pts = _points(ds, upper)
    H = pts[-1][0]

    def area(a: float, b: float) -> float:
        if a >= max_rate:
            return max_rate * H * H / 2.0
        ts = min(H, b / (max_rate - a))
        return max_rate * ts * ts / 2.0 + a * (H * H - ts * ts) / 2.0 + b * (H - ts)

    best = (max_rate, 0.0, area(max_rate, 0.0))
    for a in _candidate_slopes(pts) + [0.0]:
        if a > max_rate:
            continue
        b = max(0.0, max(y - a * d for d, y in pts))
        ar = area(a, b)
        if ar < best[2] - 1e-15:
            best = (a, b, ar)
    return best[0], best[1]


def summarise(ds: Sequence[float], lower: Sequence[float], upper: Sequence[float],
              max_rate: float = 1.0) -> Summary:
    """rt-muse's figures for one thread's bounds (lists as in report JSON charts.sbf)."""
    a, delta = lower_line(ds, lower)
    au, beta = upper_line(ds, upper, max_rate)
    H = max(ds)
    lo_h = lower[list(ds).index(H)]
    up_h = upper[list(ds).index(H)]
    blackout = max((d for d, y in zip(ds, lower) if y <= 0.0), default=0.0)
    return Summary(a, delta, au, beta, lo_h / H, up_h / H, blackout, H)


def from_report(sbf: Dict[str, Any]) -> Optional[Summary]:
    """The summary of one thread's entry of report JSON charts.sbf (times in ms); None if empty."""
    ds, lo, up = sbf.get("window_ms") or [], sbf.get("lower_ms") or [], sbf.get("upper_ms") or []
    if not ds:
        return None
    return summarise(ds, lo, up)
