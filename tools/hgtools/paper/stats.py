"""stats - the paper's statistics: means with 95% confidence intervals by
Student's t-test (section 5.2, after Jain, "The Art of Computer Systems
Performance Analysis", pp. 209-211), medians and percentiles.

Standard library only: the t quantile comes from the regularised incomplete
beta function (a continued fraction), inverted by bisection.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    # the fraction converges fast on this side of the mean; the other by symmetry
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with @df degrees of freedom."""
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = @p (0 < p < 1), by bisection on t_cdf."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, not p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass
class MeanCI:
    """A sample's mean and its confidence interval (half-width), as the paper's Fig. 5 shows."""
    n: int
    mean: float
    sd: Optional[float]
    half: Optional[float]       # None below two samples: no interval
    level: float

    @property
    def lo(self) -> Optional[float]:
        return None if self.half is None else self.mean - self.half

    @property
    def hi(self) -> Optional[float]:
        return None if self.half is None else self.mean + self.half


def mean_ci(xs: Sequence[float], level: float = 0.95) -> MeanCI:
    """Mean of @xs with the two-sided @level interval mean +- t_{(1+level)/2, n-1} s / sqrt(n)."""
    n = len(xs)
    if n == 0:
        raise ValueError("mean_ci of no samples")
    m = sum(xs) / n
    if n < 2:
        return MeanCI(n, m, None, None, level)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return MeanCI(n, m, sd, t_quantile((1.0 + level) / 2.0, n - 1) * sd / math.sqrt(n), level)


def percentile(xs: Sequence[float], q: float) -> float:
    """The @q-th percentile (0..100) of @xs by linear interpolation between order statistics."""
    if not xs:
        raise ValueError("percentile of no samples")
    s = sorted(xs)
    pos = (len(s) - 1) * q / 100.0
    i = int(math.floor(pos))
    j = min(i + 1, len(s) - 1)
    return s[i] + (s[j] - s[i]) * (pos - i)


def median(xs: Sequence[float]) -> float:
    return percentile(xs, 50.0)
