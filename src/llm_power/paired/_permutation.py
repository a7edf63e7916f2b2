"""Paired sign-flip permutation test (approximate randomization, Yeh 2000): exact or Monte Carlo."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import DegenerateDataWarning, warn
from .._core.params import public
from .._core.results import Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_alternative
from ._resampling import (
    MAX_EXACT_FLIPS,
    RESAMPLE_BATCH_ELEMENTS,
    Statistic,
    accepts_axis,
    batch_size,
    call_statistic,
    check_items,
    check_resamples,
    pvalue_from_null,
    resolve_statistic,
)

__all__ = ["PermutationResult", "permutation_interval", "permutation_test"]


@dataclass(frozen=True, slots=True, repr=False)
class PermutationResult(Result):
    """Result of :func:`permutation_test`.

    Attributes
    ----------
    estimate : float
        The statistic on the observed data.
    pvalue : float
    n : int
        Number of items.
    n_differing : int
        Items whose A and B outputs differ (only these can change under a swap).
    exact : bool
        True when all 2**n_differing swaps were enumerated.
    n_resamples : int
        Number of swap patterns evaluated (2**n_differing when exact).
    alternative : str
    """

    estimate: float
    pvalue: float
    n: int
    n_differing: int
    exact: bool
    n_resamples: int
    alternative: str

    _repr_fields = ("estimate", "pvalue", "n", "exact", "n_resamples")


@public
def permutation_test(
    a: Any,
    b: Any,
    *,
    statistic: str | Statistic = "mean",
    n_resamples: int | None = None,
    alternative: str = "two-sided",
    rng: SeedLike = None,
) -> PermutationResult:
    r"""Paired sign-flip permutation test (approximate randomization, Yeh 2000).

    Under H0 the labels "A" and "B" of each item's two outputs are exchangeable, so each item's
    pair is swapped with probability 1/2 and the statistic recomputed.

    Parameters
    ----------
    a, b : array_like, shape (n_items,) or (n_items, ...)
        Aligned per-item outputs. Items are rows.
    statistic : "mean" or callable, default "mean"
        ``"mean"``: mean(a) - mean(b). A callable ``f(a, b) -> float`` gives any statistic of
        the item-level outputs (e.g. F1 from per-item tp/fp/fn rows); if it accepts ``axis`` it is
        evaluated on batches with a leading batch axis and ``axis=1``.
    n_resamples : int, optional
        Number of random swap patterns. By default the test is exact (all 2**m swap patterns of
        the m items whose outputs differ) when m <= 20, else 10,000 random patterns. When given,
        the test is exact if 2**m <= n_resamples.
    alternative : {"two-sided", "less", "greater"}
        Two-sided compares |T*| with |T|; "greater" means A > B.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    PermutationResult

    Notes
    -----
    Items with identical outputs are unchanged by a swap, so only the m differing items are
    flipped. Exact p-value: the share of all 2**m patterns (the observed one included) at least as
    extreme as the observed statistic. Monte Carlo: :math:`p = (c + 1)/(B + 1)` with c the
    number of the B random patterns at least as extreme, which keeps the test valid.

    0/1 data (more generally: the default statistic, with every differing item's difference
    a - b of the same size u) need no item flips: a pattern in which K of the m differing items
    favour A has mean difference (2K - m) u / n, and under the flips K ~ Binomial(m, 1/2). The
    exact p-value is then a binomial tail sum over the 2**m patterns, equal to the enumeration's
    (and to the exact McNemar test's two-sided p-value), and Monte Carlo draws B values of K
    instead of B x m signs: O(B) instead of O(B m) work, the same null distribution and so the
    same distribution of p, still (c + 1)/(B + 1) -- a Monte-Carlo p-value when Monte Carlo is
    asked for (``exact`` and ``n_resamples`` follow the same rule as for any data). For the same
    ``rng`` the draws, hence the p-values, differ from those of the item-level flips.

    References
    ----------
    .. [1] Yeh, A. (2000). More accurate tests for the statistical significance of result
       differences. COLING, 947-953.
    .. [2] Noreen, E. W. (1989). Computer-Intensive Methods for Testing Hypotheses. Wiley.

    Examples
    --------
    >>> from llm_power import permutation_test
    >>> res = permutation_test([0.9, 0.8, 0.75, 0.95, 0.6, 0.7], [0.5, 0.6, 0.7, 0.9, 0.4, 0.7])
    >>> res.exact, res.n_resamples, round(res.pvalue, 4)
    (True, 32, 0.0625)
    """
    a_arr, b_arr = check_items(a, b)
    func = resolve_statistic(statistic)
    alternative = check_alternative(alternative)
    if n_resamples is not None:
        n_resamples = check_resamples(n_resamples)
    gen = as_rng(rng)
    n = a_arr.shape[0]
    if func is None and a_arr.ndim != 1:
        msg = "`statistic` 'mean' needs 1-D per-item scores; pass a callable for richer items."
        raise ValueError(msg)
    differs = np.any((a_arr != b_arr).reshape(n, -1), axis=1)
    m = int(np.count_nonzero(differs))
    if func is None:
        observed = float((a_arr - b_arr).mean())
    else:
        observed = float(call_statistic(func, a_arr, b_arr, batched=False))
    if m == 0:
        warn("the two models' outputs are identical on every item: p = 1.",
                      DegenerateDataWarning)
        return PermutationResult(estimate=observed, pvalue=1.0, n=n, n_differing=0, exact=True,
                                 n_resamples=1, alternative=alternative)
    exact = (m <= MAX_EXACT_FLIPS) if n_resamples is None else (m < 63 and 2**m <= n_resamples)
    if n_resamples is None:
        n_resamples = 10_000
    idx = np.flatnonzero(differs)
    unit = None if func is not None else _common_magnitude((a_arr - b_arr)[idx])
    if exact:
        if unit is not None:
            pvalue, count = _binomial_exact_pvalue(m, unit, n, observed, alternative)
        else:
            null = _flip_null_exact(func, a_arr, b_arr, idx, n)
            pvalue = pvalue_from_null(null, observed, alternative, add_one=False)
            count = null.size
    else:
        if unit is not None:
            null = _binomial_null_random(m, unit, n, n_resamples, gen)
        else:
            null = _flip_null_random(func, a_arr, b_arr, idx, n, n_resamples, gen)
        pvalue = pvalue_from_null(null, observed, alternative, add_one=True)
        count = n_resamples
    return PermutationResult(estimate=observed, pvalue=min(1.0, pvalue), n=n, n_differing=m, exact=exact,
                             n_resamples=int(count), alternative=alternative)


# --- binary data: the null distribution is a binomial ---------------------------------------------

def _common_magnitude(d: np.ndarray) -> float | None:
    """|d| when every differing item's difference a - b has the same size (0/1 data: 1), else None."""
    size = np.abs(d)
    return float(size[0]) if np.all(size == size[0]) else None


def _binomial_statistics(k: np.ndarray, m: int, unit: float, n: int) -> np.ndarray:
    """Mean difference when k of the m differing items favour A: (k - (m - k)) * unit / n.

    For unit 1 the same floating-point values as flipping items (an integer sum divided by n).
    """
    return (2 * k - m) * unit / n


def _binomial_exact_pvalue(m: int, unit: float, n: int, observed: float, alternative: str) -> tuple[float, int]:
    """Exact sign-flip p-value when the m differing items differ by +-unit: a binomial tail sum.

    Flipping each item's sign with probability 1/2 makes the number K of items favouring A
    Binomial(m, 1/2); the 2**m patterns with K = k all give the statistic (2k - m) unit / n. The
    p-value counts the patterns at least as extreme (as :func:`pvalue_from_null`, same tie
    tolerance) in exact integers, so it equals the enumeration's count / 2**m exactly.
    """
    k = np.arange(m + 1)
    extreme = _extreme(_binomial_statistics(k, m, unit, n), observed, alternative)
    count = sum(math.comb(m, int(j)) for j in k[extreme])
    return count / 2**m, 2**m


def _binomial_null_random(m: int, unit: float, n: int, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """Monte Carlo null when the m differing items differ by +-unit: K ~ Binomial(m, 1/2) per resample.

    The same distribution as flipping each differing item with probability 1/2 (the number of
    items favouring A after the flips is Binomial(m, 1/2)), in O(n_resamples) work instead of
    O(n_resamples * m); the draws differ from the item-level ones for the same seed.
    """
    return _binomial_statistics(gen.binomial(m, 0.5, size=n_resamples), m, unit, n)


def _extreme(null: np.ndarray, observed: float, alternative: str) -> np.ndarray:
    """Which null statistics are at least as extreme as the observed one (the tolerance of pvalue_from_null)."""
    tol = 1e-9 * max(1.0, abs(observed))
    if alternative == "two-sided":
        return np.asarray(np.abs(null) >= abs(observed) - tol)
    if alternative == "greater":
        return np.asarray(null >= observed - tol)
    return np.asarray(null <= observed + tol)


def _flip_values(func: Statistic | None, a: np.ndarray, b: np.ndarray, idx: np.ndarray, n: int,
                 signs: np.ndarray) -> np.ndarray:
    """Statistic for each row of ``signs`` (+1 keep, -1 swap) over the differing items ``idx``."""
    if func is None:
        d = (a - b)[idx]
        return np.asarray(signs @ d / n)
    batched = accepts_axis(func)
    swap = signs < 0
    if batched:
        step = batch_size(n, int(np.prod(a.shape[1:], dtype=np.int64)) if a.ndim > 1 else 1)
        out = np.empty(signs.shape[0])
        for start in range(0, signs.shape[0], step):
            sw = swap[start:start + step]
            aa = np.broadcast_to(a, (sw.shape[0], *a.shape)).copy()
            bb = np.broadcast_to(b, (sw.shape[0], *b.shape)).copy()
            rows, cols = np.nonzero(sw)
            items = idx[cols]
            aa[rows, items], bb[rows, items] = b[items], a[items]
            out[start:start + step] = call_statistic(func, aa, bb, batched=True)
        return out
    out = np.empty(signs.shape[0])
    for r in range(signs.shape[0]):
        aa, bb = a.copy(), b.copy()
        items = idx[swap[r]]
        aa[items], bb[items] = b[items], a[items]
        out[r] = call_statistic(func, aa, bb, batched=False)
    return out


def _flip_null_exact(func: Statistic | None, a: np.ndarray, b: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    m = idx.size
    total = 2**m
    out = np.empty(total)
    step = max(1, RESAMPLE_BATCH_ELEMENTS // max(1, m))
    bits = np.arange(m, dtype=np.int64)
    for start in range(0, total, step):
        codes = np.arange(start, min(total, start + step), dtype=np.int64)
        signs = 1.0 - 2.0 * ((codes[:, None] >> bits[None, :]) & 1)
        out[start:start + codes.size] = _flip_values(func, a, b, idx, n, signs)
    return out


def _flip_null_random(func: Statistic | None, a: np.ndarray, b: np.ndarray, idx: np.ndarray, n: int,  # noqa: PLR0917
                      n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    m = idx.size
    out = np.empty(n_resamples)
    step = max(1, RESAMPLE_BATCH_ELEMENTS // max(1, m))
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        signs = 1.0 - 2.0 * gen.integers(0, 2, size=(stop - start, m))
        out[start:stop] = _flip_values(func, a, b, idx, n, signs)
    return out


# --- the interval that inverts the test -----------------------------------------------------------

#: items up to which the inversion enumerates every sign pattern of the shifted differences (the
#: test itself enumerates up to MAX_EXACT_FLIPS differing items)
_EXACT_SHIFT_ITEMS = MAX_EXACT_FLIPS


def permutation_interval(a: Any, b: Any, *, confidence_level: float = 0.95, alternative: str = "two-sided",
                         n_resamples: int | None = None, rng: SeedLike = None) -> tuple[float, float, float]:
    """The sign-flip test of the mean difference and the interval that inverts it:
    (p-value of :func:`permutation_test` with this ``rng``, lower, upper).

    The interval is {d0 : the test of D - d0 does not reject at 1 - confidence_level}. For every
    sign pattern s the flipped statistic is linear in d0 (sum s_i D_i - d0 sum s_i), so the patterns
    are drawn once and each shift costs one comparison: all 2**n patterns up to 20 items, else
    ``n_resamples`` (default 10,000) random ones from ``rng``. At d0 = 0 the p-value is the reported
    test's own, so the interval contains 0 exactly when the test does not reject.
    """
    from .._kernel.paired_intervals import invert_test

    gen = as_rng(rng)
    seed = int(gen.integers(2**62))
    a_arr = np.asarray(a, dtype=float)
    b_arr = np.asarray(b, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p0 = permutation_test(a_arr, b_arr, alternative=alternative, n_resamples=n_resamples, rng=seed).pvalue
    d = a_arr - b_arr
    n = d.size
    if n <= _EXACT_SHIFT_ITEMS:  # every pattern, a block at a time: 2**20 patterns are 16 MB of results
        total, add_one = 2**n, 0.0
        first, slope = np.empty(total), np.empty(total)
        bits = np.arange(n, dtype=np.int64)
        step = max(1, RESAMPLE_BATCH_ELEMENTS // max(1, n))
        for start in range(0, total, step):
            codes = np.arange(start, min(total, start + step), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits[None, :]) & 1)
            first[start:start + codes.size] = signs @ d / n  # each pattern's statistic at d0 = 0 ...
            slope[start:start + codes.size] = signs.sum(axis=1) / n  # ... and how it moves with d0
    else:
        signs = 1.0 - 2.0 * np.random.default_rng(seed).integers(0, 2, size=(n_resamples or 10_000, n))
        first, slope = signs @ d / n, signs.sum(axis=1) / n
        total, add_one = signs.shape[0], 1.0
    mean = float(d.mean())

    def pvalue(d0: float) -> float:
        if d0 == 0.0:
            return float(p0)
        observed = mean - d0
        null = first - d0 * slope
        count = int(np.count_nonzero(_extreme(null, observed, alternative)))
        return float(min(1.0, (count + add_one) / (total + add_one)))

    spread = float(np.std(d)) or 1.0
    lo, hi = invert_test(pvalue, mean, level=confidence_level, alternative=alternative, scale=spread / math.sqrt(n))
    return float(p0), lo, hi
