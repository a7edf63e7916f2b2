r"""The interval of a paired 0/1 difference that inverts the reported McNemar test.

"The interval excludes 0" and "the test rejects" must be one statement (one verdict). Newcombe's
interval does not invert McNemar's test: with 10 items and b = 0, c = 5 it is [-76.3, -11.7]
points beside an exact p of 0.0625. So each McNemar variant reports its own interval:

- ``exact`` and ``mid_p``: the *melded* interval of Fay & Lumbard (2021), compatible with the exact
  (mid-p) McNemar test. With m = b + c discordant items, delta = tau (2 pi - 1), tau the
  discordance and pi the share of discordant items model A wins. Melding the exact
  (Clopper-Pearson) confidence distributions of tau, Beta(m, n - m + 1) / Beta(m + 1, n - m), and of
  pi, Beta(b, c + 1) / Beta(b + 1, c), the lower bound L solves
  :math:`P[T(2B - 1) \le L] = \alpha'` (T the lower or upper confidence variable of tau as L is
  above or below 0, B the lower one of pi), the upper bound mirrors it. At delta = 0 the
  probability is P(B <= 1/2) = the one-sided exact p-value, so the bound clears 0 exactly when
  the test rejects. Coverage is at least nominal in Fay & Lumbard's enumerations.
- ``asymptotic``: McNemar's z = (|b - c| - cc) / sqrt(b + c) uses the variance of D under equal
  accuracy, (b + c) / n^2, so its interval is delta_hat +- (z_{1-alpha/2} sqrt(b + c) + cc) / n: 0 is
  outside exactly when the test rejects. The null variance p_d is at least the variance
  p_d - delta^2 of D, so the interval is conservative (coverage at or above nominal).

References
----------
.. [1] Fay, M. P. & Lumbard, K. (2021). Confidence intervals for difference in proportions for
   matched pairs compatible with exact McNemar's or sign tests. Statistics in Medicine 40,
   1147-1159.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import optimize, special

from .binomial import binomial_bounds
from .quantiles import level_quantile

__all__ = ["invert_test", "mcnemar_interval", "newcombe_arrays", "newcombe_combine", "tango_null_variance", "tango_z"]


@lru_cache(maxsize=1)
def _legendre() -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on (0, 1) for the melding integral over the discordance's
    confidence variable: computed on first use, not at import (a 256 x 256 eigenproblem that holds
    the interpreter 25 ms to 1 s, depending on the BLAS threads and the machine's load).
    """
    nodes, weights = np.polynomial.legendre.leggauss(256)
    return (nodes + 1.0) / 2.0, weights / 2.0


def _cdf_pi(x: int, m: int, mid: bool, lower: bool) -> Callable[[np.ndarray], np.ndarray]:
    """The confidence distribution of pi (CDF at p) behind the one-sided exact (mid-p) test: the lower
    one is Beta(x, m - x + 1) (P(X >= x | p)); the upper one Beta(x + 1, m - x) (1 - P(X <= x | p)).
    """
    def exact_lower(p: np.ndarray) -> np.ndarray:
        return np.asarray(special.betainc(x, m - x + 1, p)) if x > 0 else np.ones_like(p)

    def exact_upper(p: np.ndarray) -> np.ndarray:
        return np.asarray(special.betainc(x + 1, m - x, p)) if x < m else np.zeros_like(p)

    if not mid:
        return exact_lower if lower else exact_upper
    return lambda p: 0.5 * (exact_lower(p) + exact_upper(p))


@lru_cache(maxsize=4096)
def _melded_lower(x: int, m: int, n: int, tail: float, mid: bool) -> float:
    """The melded lower bound of delta at one-sided level ``tail`` (Fay & Lumbard 2021)."""
    if m == 0:
        return -float(special.betaincinv(1.0, n, 1.0 - tail))  # no discordant item: tau's upper bound
    if x == 0 and not mid:
        if m == n:
            return -1.0
        return -float(special.betaincinv(m + 1.0, n - m, 1.0 - tail))  # B = 0: delta = -T, T's upper bound
    f_b = _cdf_pi(x, m, mid, lower=True)
    nodes, weights = _legendre()
    t_low = special.betaincinv(m, n - m + 1.0, nodes)  # T_L: Beta(m, n - m + 1)
    t_high = np.ones_like(nodes) if m == n else special.betaincinv(m + 1.0, n - m, nodes)  # T_U: Beta(m + 1, n - m)

    def prob(d: float) -> float:
        t = t_low if d > 0 else t_high
        arg = np.clip(0.5 + d / (2.0 * np.maximum(t, 1e-300)), 0.0, 1.0)
        return float(np.sum(weights * f_b(arg)))

    at_zero = float(f_b(np.array([0.5]))[0])  # the one-sided p-value of the test
    if at_zero == tail:
        return 0.0
    lo, hi = (-1.0, 0.0) if at_zero > tail else (0.0, 1.0)
    if prob(lo) > tail:  # even -1 is not rejected
        return lo
    if prob(hi) < tail:
        return hi
    return float(optimize.brentq(lambda d: prob(d) - tail, lo, hi, xtol=1e-12))


def _asymptotic(b: np.ndarray, c: np.ndarray, n: float, level: float, alternative: str,
                cc: float) -> tuple[np.ndarray, np.ndarray]:
    delta = (b - c) / n
    half = (level_quantile(level, alternative) * np.sqrt(b + c) + cc) / n
    lo, hi = np.clip(delta - half, -1.0, 1.0), np.clip(delta + half, -1.0, 1.0)
    if alternative == "greater":
        hi = np.ones_like(hi)
    elif alternative == "less":
        lo = -np.ones_like(lo)
    return lo, hi


def mcnemar_interval(b: Any, c: Any, n: int, *, variant: str, level: float, alternative: str = "two-sided",
                     continuity_correction: bool = True) -> tuple[Any, Any]:
    """The interval of delta = (b - c) / n that inverts McNemar's test ``variant`` ("exact", "mid_p",
    "asymptotic"): vectorised over arrays of discordant counts (scalars give floats).

    Examples
    --------
    10 items, b = 0, c = 5: the exact p is 0.0625, and the interval contains 0.

    >>> from llm_power._kernel.paired_intervals import mcnemar_interval
    >>> lo, hi = mcnemar_interval(0, 5, 10, variant="exact", level=0.95)
    >>> round(lo, 3), round(hi, 3), lo < 0 < hi
    (-0.813, 0.022, True)
    """
    scalar = np.ndim(b) == 0 and np.ndim(c) == 0
    b_arr = np.atleast_1d(np.asarray(b, dtype=np.int64))
    c_arr = np.atleast_1d(np.asarray(c, dtype=np.int64))
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    if variant == "asymptotic":
        lo, hi = _asymptotic(b_arr.astype(float), c_arr.astype(float), float(n), level, alternative,
                             1.0 if continuity_correction else 0.0)
        none = (b_arr + c_arr) == 0  # no discordant item: the exact interval (a zero-width one says nothing)
        if np.any(none):
            lo, hi = lo.astype(float), hi.astype(float)
            lo[none], hi[none] = _melded_lower(0, 0, int(n), tail, False), -_melded_lower(0, 0, int(n), tail, False)
            if alternative == "greater":
                hi[none] = 1.0
            elif alternative == "less":
                lo[none] = -1.0
    else:
        mid = variant == "mid_p"
        lo = np.full(b_arr.shape, -1.0)
        hi = np.full(b_arr.shape, 1.0)
        pairs = np.stack([b_arr, c_arr], axis=1)
        uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        for k, (bb, cc) in enumerate(uniq.tolist()):
            sel = inv == k
            m = bb + cc
            if alternative in ("two-sided", "greater"):
                lo[sel] = _melded_lower(bb, m, int(n), tail, mid)
            if alternative in ("two-sided", "less"):
                hi[sel] = -_melded_lower(cc, m, int(n), tail, mid)  # the upper bound: A and B swapped
    if scalar:
        return float(lo[0]), float(hi[0])
    return lo, hi


def invert_test(pvalue: Callable[[float], float], estimate: float, *, level: float, alternative: str,
                scale: float, limits: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float]:
    """The interval {d0 : p(d0) > 1 - level} of a test of "the gap is d0", by bisection outward from the
    estimate (p = 1 there). The side towards 0 starts at 0 when p(0) does not reject, so that the
    interval contains 0 exactly when the test at 0 does not reject; ``scale`` sizes the search.
    """
    alpha = 1.0 - level

    def bound(direction: float) -> float:
        inner = estimate
        if (0.0 - estimate) * direction > 0 and pvalue(0.0) > alpha:
            inner = 0.0
        step = max(scale, 1e-12)
        outer = inner + direction * step
        while pvalue(outer) > alpha:
            inner, step = outer, step * 2.0
            outer = inner + direction * step
            if not (limits[0] <= outer <= limits[1]) or step > 1e12 * max(scale, 1.0):
                return limits[1] if direction > 0 else limits[0]
        for _ in range(80):
            mid = 0.5 * (inner + outer)
            if abs(outer - inner) <= 1e-10 * max(scale, abs(estimate), 1e-12):
                break
            inner, outer = (mid, outer) if pvalue(mid) > alpha else (inner, mid)
        return inner

    lo = -math.inf if alternative == "less" else bound(-1.0)
    hi = math.inf if alternative == "greater" else bound(1.0)
    return lo, hi


def newcombe_arrays(n11: np.ndarray, n10: np.ndarray, n01: np.ndarray, n00: np.ndarray,
                    confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's (1998, method 10) paired score interval for arrays of 2x2 tables (one per pair):
    the Wilson intervals of both margins combined with the continuity-corrected phi coefficient.
    """
    n11, n10, n01, n00 = (np.asarray(v, dtype=float) for v in (n11, n10, n01, n00))
    n = n11 + n10 + n01 + n00
    l1, u1 = binomial_bounds(n11 + n10, n, "wilson", confidence_level, "two-sided")
    l2, u2 = binomial_bounds(n11 + n01, n, "wilson", confidence_level, "two-sided")
    return newcombe_combine(n11, n10, n01, n00, (l1, u1), (l2, u2))


def newcombe_combine(n11: np.ndarray, n10: np.ndarray, n01: np.ndarray, n00: np.ndarray,
                     wilson_a: tuple[np.ndarray, np.ndarray],
                     wilson_b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's interval from the 2x2 tables and the Wilson intervals of the two margins (which
    depend on one model each: a leaderboard computes them once per model, not once per pair).
    """
    n = n11 + n10 + n01 + n00
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    (l1, u1), (l2, u2) = wilson_a, wilson_b
    margins = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    cross = n11 * n00 - n10 * n01
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.sqrt(margins)
        phi = np.where(margins == 0, 0.0,
                       np.where(cross > n / 2, (cross - n / 2) / root, np.where(cross >= 0, 0.0, cross / root)))
    delta = p1 - p2
    dl1, du1, dl2, du2 = p1 - l1, u1 - p1, p2 - l2, u2 - p2
    low = delta - np.sqrt(np.maximum(dl1**2 - 2 * phi * dl1 * du2 + du2**2, 0.0))
    high = delta + np.sqrt(np.maximum(du1**2 - 2 * phi * du1 * dl2 + dl2**2, 0.0))
    return np.maximum(-1.0, low), np.minimum(1.0, high)


def _tango_p01(delta: float, n10: int, n01: int, n: int) -> float:
    """Tango's restricted MLE of p01 under a difference ``delta`` (closed form of the quadratic)."""
    w = -n10 - n01 + (2 * n - n10 + n01) * delta
    return (math.sqrt(max(w * w + 8.0 * n * n01 * delta * (1.0 - delta), 0.0)) - w) / (4.0 * n)


def tango_null_variance(delta: float, n10: int, n01: int, n: int) -> float:
    """Per-item variance of D under a difference ``delta``, at Tango's restricted MLE:
    2 p01~ + delta (1 - delta) (the variance his score test of delta uses).
    """
    return max(2.0 * _tango_p01(delta, n10, n01, n) + delta * (1.0 - delta), 0.0)


def tango_z(delta: float, n10: int, n01: int, n: int) -> float:
    var = n * tango_null_variance(delta, n10, n01, n)
    num = n10 - n01 - n * delta
    if var <= 0:
        return math.copysign(math.inf, num) if num != 0 else 0.0
    return num / math.sqrt(var)
