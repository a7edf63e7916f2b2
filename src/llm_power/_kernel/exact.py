"""Exact power of the exact conditional McNemar test: the sum over the discordant count, no simulation.

Also the two searches built on it: the exact N* (:func:`first_n_reaching`, a bracketed search
that returns exactly what a scan of every n returns) and the exact power as a function of the gap
at a fixed n (:class:`PowerInGap`, for the exact MDE).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["EXACT_POWER_MAX_N", "EXACT_SCAN_MAX_N"]


def _critical_counts(m: np.ndarray, alpha: float, alternative: str) -> np.ndarray:
    """Largest c with P(X <= c | m, 1/2) <= level, per m (c = -1: nothing rejects in that tail).

    The level is alpha/2 two-sided and alpha one-sided; the rejection region given m discordant
    items is {b <= c} (B favoured), {b >= m - c} (A favoured) or both. It does not depend on the
    alternative's effect size, so the searches compute it once.
    """
    m = np.asarray(m, dtype=np.int64)
    half = 0.5
    level = alpha / 2.0 if alternative == "two-sided" else alpha
    c = np.asarray(stats.binom.ppf(level, m, half)).astype(np.int64)
    return np.asarray(np.where(stats.binom.cdf(c, m, half) <= level * (1 + 1e-12), c, c - 1))


def _rejection_given_critical(m: np.ndarray, c: np.ndarray, pi: float, alternative: str) -> np.ndarray:
    """P(b in the rejection region | m, each discordant item favouring A with probability pi)."""
    if alternative == "two-sided":
        lower = np.where(c >= 0, stats.binom.cdf(c, m, pi), 0.0)  # B favoured: b small
        upper = np.where(c >= 0, stats.binom.sf(m - c - 1, m, pi), 0.0)  # A favoured: b >= m - c
        return np.asarray(lower + upper)
    if alternative == "greater":
        return np.asarray(np.where(c >= 0, stats.binom.sf(m - c - 1, m, pi), 0.0))
    return np.asarray(np.where(c >= 0, stats.binom.cdf(c, m, pi), 0.0))


def rejection_probability(m: np.ndarray, pi: float, alpha: float, alternative: str) -> np.ndarray:
    """P(exact McNemar rejects | m discordant items, each favouring A with probability pi)."""
    m = np.asarray(m, dtype=np.int64)
    return _rejection_given_critical(m, _critical_counts(m, alpha, alternative), pi, alternative)


#: bounds on the exact methods' time and memory; beyond them they are refused -- the normal
#: approximations are then within a fraction of a percent of the exact answers. The exact power
#: sums over every count up to n (about 7 s at 10^6). The exact N* (a bisection on a bound, about
#: 20 evaluations, then a scan of about 1.4/|delta| values of n next to the answer) takes about
#: 1.5 s at 1.6 * 10^5, mostly the critical counts; the exact MDE (root-finding in the gap at fixed
#: n) about 0.25 s at 2 * 10^5.
#: (the environment variables that move each bound; their defaults are 1,000,000 and 200,000)
EXACT_POWER_MAX_N = "LLM_POWER_MAX_EXACT_POWER_ITEMS"
EXACT_SCAN_MAX_N = "LLM_POWER_MAX_EXACT_SEARCH_ITEMS"


def check_exact_size(n: float, *, what: str, limit: str = EXACT_POWER_MAX_N) -> None:
    from .._core.files import limit as env_limit

    cap = env_limit(limit)
    if not n <= cap:
        msg = (
            f"{what} needs n ≈ {n:.3g} items, beyond the {cap:,} the exact method computes "
                         f"in bounded time and memory ({limit} raises the limit); use method='connor' (sample size, "
                         "MDE) or method='normal' (power), which agree with the exact answer to well under 1% at "
                         "this size"
        )
        raise ValueError(msg)


def exact_power_paired(n: np.ndarray, p_d: float, p10: float, alpha: float, alternative: str) -> np.ndarray:
    """Exact power for each n: sum over m ~ Binomial(n, p_d) of P(reject | m)."""
    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    n_max = int(n.max())
    check_exact_size(n_max, what="the exact power")
    m = np.arange(n_max + 1)
    reject = rejection_probability(m, p10 / p_d, alpha, alternative)
    out = np.empty(n.shape, dtype=float)
    step = max(1, 4_000_000 // (n_max + 1))
    for start in range(0, n.size, step):
        block = n[start:start + step]
        pmf = stats.binom.pmf(m[None, :], block[:, None], p_d)
        out[start:start + step] = pmf @ reject
    return out


#: probabilities of a discordant count below this are left out of the searches' sums: they cannot
#: change a power near the target (10^6 of them sum to 1e-284), and their subnormal products would
#: slow every vector operation down a hundredfold
_NEGLIGIBLE = 1e-290


class PowerInGap:
    """Exact power at a fixed n and discordance p_d as a function of the gap (for the exact MDE).

    What does not depend on the gap is computed once: the distribution of the discordant count,
    restricted to the counts with probability above 1e-290 (a few tens of standard deviations
    either side of n p_d), and their critical counts. Each evaluation is then two binomial tail sums over that
    window -- the terms left out change the power by less than 1e-280.
    """

    def __init__(self, n: int, p_d: float, alpha: float, alternative: str) -> None:
        check_exact_size(n, what="the exact power")
        pmf = stats.binom.pmf(np.arange(n + 1), n, p_d)
        kept = np.flatnonzero(pmf >= _NEGLIGIBLE)
        self.m = np.arange(kept[0], kept[-1] + 1)
        self.pmf = pmf[kept[0] : kept[-1] + 1]
        self.critical = _critical_counts(self.m, alpha, alternative)
        self.p_d = p_d
        self.alternative = alternative

    def __call__(self, p10: float) -> float:
        reject = _rejection_given_critical(self.m, self.critical, p10 / self.p_d, self.alternative)
        return float(np.sum(self.pmf * reject))


#: the bisection only trusts an upper bound that clears the target by this margin (floating-point
#: error of a sum of at most 10^6 binomial probabilities is far below it)
_BOUND_MARGIN = 1e-9


def first_n_reaching(p_d: float, p10: float, alpha: float, power: float, alternative: str,  # noqa: PLR0917
                      guess: float) -> int:
    """Smallest n >= 1 whose exact power is >= ``power`` (the first n that reaches it).

    The exact power P(n) = E[R(M_n)], M_n ~ Binomial(n, p_d), R(m) the rejection probability
    given m discordant items, need not be monotone in n (R is a saw-tooth in m; P visibly
    saw-tooths at high discordance, p_d >= 0.8), so a bisection on P could stop at a later
    crossing than the first. The search bisects on a monotone upper bound
    instead: with the running maximum R+(m) = max_{j <= m} R(j) >= R(m), non-decreasing in m,

        U(n) = E[R+(M_n)] >= P(n),   and U is non-decreasing in n

    because M_{n+1} has the law of M_n + Bernoulli(p_d) >= M_n. If U(lo) < power then P(n) <=
    U(n) <= U(lo) < power for every n <= lo: no n up to lo reaches the target. The bisection
    finds such an lo next to the crossing of U (with a margin of 1e-9 for rounding), and a scan
    of n = lo + 1, lo + 2, ... (one convolution step per n) returns the first n whose power
    reaches the target. The bound is tight: U - P is about the saw-tooth's mean depth, so the scan
    covers about 1.4/|delta| values of n (measured: 20-30 for a 5-point gap, 270-280 for a
    0.5-point gap at N* = 29,000-157,000), where a scan from N*/2 covers N*/2.

    ``guess`` (Connor's N*, within a few percent of the exact one) sizes the first bracket.
    """
    pi = p10 / p_d
    size = int(1.25 * guess) + 64  # counts m = 0 .. size - 1
    m = np.arange(size)
    reject = rejection_probability(m, pi, alpha, alternative)
    envelope = np.maximum.accumulate(reject)  # R+(m)

    def bound_below_target(n: int) -> bool:  # U(n) < power, with a margin for rounding
        return float(np.sum(stats.binom.pmf(m[: n + 1], n, p_d) * envelope[: n + 1])) < power - _BOUND_MARGIN

    # bracket: U(lo) < power (P(0) = 0 < power: nothing is rejected without items), U(hi) is not
    lo, hi = 0, size - 1
    while bound_below_target(hi):
        lo, size = hi, 2 * size
        m = np.arange(size)
        reject = rejection_probability(m, pi, alpha, alternative)
        envelope = np.maximum.accumulate(reject)
        hi = size - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound_below_target(mid):
            lo = mid
        else:
            hi = mid
    # scan from lo + 1, updating the distribution of the discordant count from n to n + 1 by one
    # convolution step, over the window [a, b) of counts with probability above _NEGLIGIBLE
    # (pairwise sums, not BLAS's dot, whose threads make it 300x slower on a busy machine)
    n = lo + 1
    pmf = np.zeros(size)
    pmf[: n + 1] = stats.binom.pmf(np.arange(n + 1), n, p_d)
    pmf[pmf < _NEGLIGIBLE] = 0.0
    support = np.flatnonzero(pmf)
    a, b = int(support[0]), int(support[-1]) + 1
    while True:
        if float(np.sum(pmf[a:b] * reject[a:b])) >= power:
            return n
        n += 1
        if b + 1 >= size:  # grow the buffers
            size *= 2
            reject = rejection_probability(np.arange(size), pi, alpha, alternative)
            pmf = np.concatenate([pmf, np.zeros(size - pmf.size)])
        shifted = pmf[a:b] * p_d
        pmf[a:b] *= 1.0 - p_d
        pmf[a + 1 : b + 1] += shifted
        b += 1
        while pmf[a] < _NEGLIGIBLE:
            pmf[a], a = 0.0, a + 1
        while pmf[b - 1] < _NEGLIGIBLE:
            pmf[b - 1], b = 0.0, b - 1
