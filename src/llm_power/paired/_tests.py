"""Paired tests for two models scored on the same items.

Both models answered the same items, so their per-item results are correlated; the tests here
use the pairing. ``a`` and ``b`` are aligned per-item scores (0/1 correctness or graded scores).

- :func:`mcnemar` -- 0/1 correctness: exact conditional, asymptotic chi-square, mid-p;
- :func:`sign_test`, :func:`wilcoxon`, :func:`paired_t` -- any scores;
- :func:`cochran_q` -- 0/1 correctness of three or more models;
- :func:`unpaired_z` -- the two-sample z test that ignores the pairing (for contrast only);
- :func:`five_by_two_cv` -- Dietterich's 5x2cv paired t test from per-fold scores.

The resampling tests (paired bootstrap, sign-flip permutation) are in :mod:`llm_power.paired`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import ApproximationWarning, DegenerateDataWarning, warn
from .._core.params import public
from .._core.results import Result
from .._core.validation import (
    as_float_array,
    check_alternative,
    check_binary,
    check_option,
    check_paired,
    clean_binary_pair,
    renamed_correction,
)
from .._kernel.pvalues import mcnemar_pvalue
from .._kernel.sufficient import discordant_counts, paired_counts

__all__ = [
    "McNemarResult",
    "TestResult",
    "mcnemar",
    "mcnemar_from_counts",
    "paired_t",
    "sign_test",
    "unpaired_z",
    "wilcoxon",
]

#: below this many discordant pairs the chi-square approximation of McNemar's test is poor
ASYMPTOTIC_MIN_DISCORDANT = 25


@dataclass(frozen=True, slots=True, repr=False)
class TestResult(Result):
    """Result of a hypothesis test.

    Attributes
    ----------
    statistic : float
        The test statistic (documented by each test).
    pvalue : float
        The p-value for ``alternative``.
    method : str
        Which test (and variant) produced it.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``; "greater" means the alternative that
        model A scores higher than model B.
    n : int
        Number of items (or folds) used.
    df : float or None
        Degrees of freedom, for t and chi-square tests.
    estimate : float or None
        The estimated effect the test is about (mean difference A - B), where it has one.
    """

    __test__ = False  # not a pytest test class

    statistic: float
    pvalue: float
    method: str
    alternative: str = "two-sided"
    n: int = 0
    df: float | None = None
    estimate: float | None = None

    _repr_fields = ("statistic", "pvalue", "method", "n")


@dataclass(frozen=True, slots=True, repr=False)
class McNemarResult(Result):
    """Result of :func:`mcnemar`.

    Attributes
    ----------
    statistic : float
        ``min(b, c)`` for ``"exact"`` and ``"mid_p"`` (as statsmodels); the chi-square statistic
        for ``"asymptotic"``.
    pvalue : float
    b, c : int
        Discordant pairs: b = #(A right, B wrong), c = #(A wrong, B right).
    n : int
        Number of items.
    method : str
    continuity_correction : bool
        Whether the continuity correction was used (asymptotic only).
    alternative : str
    """

    statistic: float
    pvalue: float
    b: int
    c: int
    n: int
    method: str
    continuity_correction: bool = True
    alternative: str = "two-sided"

    _repr_fields = ("statistic", "pvalue", "b", "c", "method")


def _tail_pvalue(dist: Any, statistic: float, alternative: str) -> float:
    """p-value of a statistic with a symmetric null distribution (scipy frozen or module)."""
    if alternative == "greater":
        return float(dist.sf(statistic))
    if alternative == "less":
        return float(dist.cdf(statistic))
    return float(min(1.0, 2.0 * dist.sf(abs(statistic))))


# --- McNemar ------------------------------------------------------------------------------------


@public
def mcnemar(
    a: Any,
    b: Any,
    *,
    method: str = "exact",
    continuity_correction: bool = True,
    alternative: str = "two-sided",
    correction: bool | None = None,
) -> McNemarResult:
    r"""McNemar's test: do two models have the same accuracy on the same items?

    Only the discordant items carry information: b = #(A right, B wrong) and
    c = #(A wrong, B right). Under the null hypothesis of equal accuracy each discordant item
    favours A with probability 1/2.

    Parameters
    ----------
    a, b : array_like of 0/1
        Aligned per-item correctness of model A and model B.
    method : {"exact", "asymptotic", "mid_p"}, default "exact"
        ``"exact"``: conditional binomial test, b | b + c ~ Binomial(b + c, 1/2), two-sided
        p = min(1, 2 P(X <= min(b, c))). ``"asymptotic"``: chi-square with 1 df,
        :math:`(|b-c|-1)^2/(b+c)` with the continuity correction, :math:`(b-c)^2/(b+c)` without
        (the correction never moves the statistic below 0, as in R). ``"mid_p"``: the exact test
        with half the probability of the observed table removed from the tail (Fagerland,
        Lydersen & Laake 2013): two-sided p = 2[P(X <= min(b,c)) - P(X = min(b,c))/2].
    continuity_correction : bool, default True
        Continuity correction for ``"asymptotic"``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: A is more accurate than B (b > c).
    correction : bool, optional
        Deprecated name of ``continuity_correction`` (renamed 2026-11-30: ``correction`` names a
        multiplicity procedure elsewhere); still accepted for one release with a DeprecationWarning.

    Returns
    -------
    McNemarResult
        ``statistic``, ``pvalue``, ``b``, ``c``, ``n``.

    Warns
    -----
    DegenerateDataWarning
        When b + c = 0 (no discordant item): the p-value is 1 (no evidence), never 0.
    ApproximationWarning
        When b + c is too small: for ``"asymptotic"`` below 25 (use ``"exact"``); for any method
        when b + c <= 5, where no two-sided p-value can reach 0.05.

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference between correlated
       proportions or percentages. Psychometrika 12(2), 153-157.
    .. [2] Fagerland, M. W., Lydersen, S. & Laake, P. (2013). The McNemar test for binary
       matched-pairs data: mid-p and asymptotic are better than exact conditional. BMC Medical
       Research Methodology 13, 91.

    Examples
    --------
    A 150/200 vs B 142/200 on the same items, with only 10 discordant items (b = 9, c = 1):

    >>> import numpy as np
    >>> from llm_power import mcnemar
    >>> a = np.r_[np.ones(141), np.ones(9), np.zeros(1), np.zeros(49)]
    >>> b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    >>> res = mcnemar(a, b)
    >>> res.b, res.c, round(res.pvalue, 4)
    (9, 1, 0.0215)
    """
    method = check_option(method, "method", ("exact", "asymptotic", "mid_p"))
    alternative = check_alternative(alternative)
    if clean_binary_pair(a, b):  # numpy 0/1 vectors: one pass of checks, the counts by two comparisons
        n_items = a.size
        n_b, n_c = discordant_counts(a, b)
    else:
        a_arr, b_arr = check_paired(a, b, min_items=1)
        check_binary(a_arr, "a", why="McNemar's test needs correct/incorrect per item")
        check_binary(b_arr, "b", why="McNemar's test needs correct/incorrect per item")
        n_items = a_arr.size
        _, n_b, n_c, _ = paired_counts(a_arr, b_arr)
    continuity_correction = renamed_correction(continuity_correction, correction)
    return mcnemar_from_counts(n_b, n_c, n=n_items, method=method, continuity_correction=continuity_correction,
                               alternative=alternative)


@public
def mcnemar_from_counts(
    b: int,
    c: int,
    *,
    n: int | None = None,
    method: str = "exact",
    continuity_correction: bool = True,
    alternative: str = "two-sided",
    correction: bool | None = None,
) -> McNemarResult:
    """McNemar's test from the discordant counts b and c (see :func:`mcnemar`).

    Parameters
    ----------
    b : int
        Items model A got right and model B wrong (a non-negative whole number).
    c : int
        Items model A got wrong and model B right (a non-negative whole number).
    n : int, optional
        Total items, at least b + c; only reported in the result. Default None: b + c.
    method : {"exact", "asymptotic", "mid_p"}, default "exact"
        As in :func:`mcnemar`: the conditional binomial test, the chi-square with 1 df, or the
        mid-p exact test.
    continuity_correction : bool, default True
        Continuity correction for ``"asymptotic"``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: A is more accurate than B (b > c).
    correction : bool, optional
        Deprecated name of ``continuity_correction`` (one release, DeprecationWarning).

    Returns
    -------
    McNemarResult
        ``statistic`` (min(b, c), or the chi-square statistic for ``"asymptotic"``), ``pvalue``
        (1 when b + c = 0, with a DegenerateDataWarning), ``b``, ``c``, ``n``, ``method``,
        ``continuity_correction`` and ``alternative``.

    Examples
    --------
    >>> from llm_power import mcnemar_from_counts
    >>> round(mcnemar_from_counts(33, 25, method="asymptotic").pvalue, 3)
    0.358
    """
    method = check_option(method, "method", ("exact", "asymptotic", "mid_p"))
    alternative = check_alternative(alternative)
    continuity_correction = renamed_correction(continuity_correction, correction)
    for value, name in ((b, "b"), (c, "c")):
        if isinstance(value, bool) or not float(value).is_integer() or value < 0:
            msg = f"`{name}` must be a non-negative integer count; got {value!r}."
            raise ValueError(msg)
    b, c = int(b), int(c)
    m = b + c
    if n is None:
        n = m
    elif n < m:
        msg = f"`n` must be at least b + c = {m}; got {n}."
        raise ValueError(msg)
    if m == 0:
        warn("no discordant items (b + c = 0): the models agree on every item; p = 1.",
                      DegenerateDataWarning)
    elif m <= 5:
        warn(
            f"only b + c = {m} discordant items: no two-sided p-value can fall below "
            f"{min(1.0, 2 * 0.5 ** m):.4g}; the test has almost no power.",
            ApproximationWarning,
        )
    elif method == "asymptotic" and m < ASYMPTOTIC_MIN_DISCORDANT:
        warn(
            f"b + c = {m} < {ASYMPTOTIC_MIN_DISCORDANT} discordant items: the chi-square "
            "approximation is poor; use method='exact' or 'mid_p'.",
            ApproximationWarning,
        )
    statistic, p = mcnemar_pvalue(b, c, method=method, continuity_correction=continuity_correction,
                                  alternative=alternative)
    return McNemarResult(statistic=float(statistic), pvalue=float(p), b=b, c=c, n=int(n),
                         method=method, continuity_correction=bool(continuity_correction), alternative=alternative)


# --- sign test, Wilcoxon, paired t ----------------------------------------------------------------

@public
def sign_test(a: Any, b: Any, *, alternative: str = "two-sided") -> TestResult:
    r"""Sign test on the per-item differences D = a - b.

    Counts items where A beats B (D > 0) and where B beats A (D < 0), drops ties, and tests
    whether a non-tied item favours A with probability 1/2 (an exact binomial test). On 0/1
    data it is the exact McNemar test.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores of model A and model B (0/1 or graded; finite, same length, at
        least 2 items).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: a non-tied item favours A with probability above 1/2.

    Returns
    -------
    TestResult
        ``statistic`` = number of items with D > 0; ``n`` = number of non-tied items;
        ``estimate`` = mean difference.

    Examples
    --------
    >>> from llm_power import sign_test
    >>> res = sign_test([0.9, 0.8, 0.7, 0.95, 0.6], [0.5, 0.6, 0.7, 0.9, 0.4])
    >>> res.statistic, res.n, round(res.pvalue, 4)
    (4.0, 4, 0.125)
    """
    alternative = check_alternative(alternative)
    a_arr, b_arr = check_paired(a, b)
    d = a_arr - b_arr
    pos, neg = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    m = pos + neg
    if m == 0:
        warn("every item is tied (a == b): p = 1.", DegenerateDataWarning)
        p = 1.0
    else:
        p = float(mcnemar_pvalue(pos, neg, method="exact", alternative=alternative)[1])  # the exact binomial test
    return TestResult(statistic=float(pos), pvalue=float(p), method="sign", alternative=alternative,
                      n=m, estimate=float(d.mean()))


def _signed_rank_counts(n: int) -> np.ndarray:
    """Number of sign assignments of ranks 1..n with positive-rank sum t, t = 0..n(n+1)/2."""
    total = n * (n + 1) // 2
    counts = np.zeros(total + 1, dtype=float)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


@public
def wilcoxon(
    a: Any,
    b: Any,
    *,
    alternative: str = "two-sided",
    method: str = "auto",
    zero_method: str = "wilcox",
    continuity_correction: bool = False,
    correction: bool | None = None,
) -> TestResult:
    r"""Wilcoxon signed-rank test on the per-item differences D = a - b.

    Tests whether D is symmetric about 0 (a location shift), using the ranks of |D|.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores.
    alternative : {"two-sided", "less", "greater"}
    method : {"auto", "exact", "approx"}, default "auto"
        ``"exact"``: the exact null distribution of the positive-rank sum (no ties or zeros
        allowed). ``"approx"``: normal approximation with the tie correction of the variance.
        ``"auto"``: exact when there are at most 50 non-zero differences and no ties, as scipy.
    zero_method : {"wilcox", "pratt"}, default "wilcox"
        ``"wilcox"`` drops zero differences; ``"pratt"`` ranks them and then drops their ranks
        (normal approximation only).
    continuity_correction : bool, default False
        Continuity correction for ``"approx"``.
    correction : bool, optional
        Deprecated name of ``continuity_correction`` (one release, DeprecationWarning).

    Returns
    -------
    TestResult
        ``statistic`` = the sum of the ranks of positive differences (T+), ``n`` = number of
        non-zero differences, ``estimate`` = mean difference.

    Examples
    --------
    Judge ratings of two models on six prompts (two equal differences: a tie, so "auto" uses
    the normal approximation):

    >>> from llm_power import wilcoxon
    >>> res = wilcoxon([7.1, 6.8, 8.0, 5.9, 7.7, 6.0], [6.0, 6.9, 7.1, 5.0, 6.5, 5.8])
    >>> res.statistic, round(res.pvalue, 4)
    (20.0, 0.0458)
    """
    from scipy import stats  # on first use: importing scipy.stats costs start-up time

    alternative = check_alternative(alternative)
    method = check_option(method, "method", ("auto", "exact", "approx"))
    zero_method = check_option(zero_method, "zero_method", ("wilcox", "pratt"))
    continuity_correction = renamed_correction(continuity_correction, correction)
    a_arr, b_arr = check_paired(a, b)
    d = a_arr - b_arr
    nonzero = d != 0
    if zero_method == "wilcox":
        d = d[nonzero]
        ranks = stats.rankdata(np.abs(d))
    else:
        ranks = stats.rankdata(np.abs(d))[nonzero]
        d = d[nonzero]
    n = d.size
    if n == 0:
        warn("every difference is zero: p = 1.", DegenerateDataWarning)
        return TestResult(statistic=0.0, pvalue=1.0, method="wilcoxon", alternative=alternative,
                          n=0, estimate=0.0)
    t_plus = float(ranks[d > 0].sum())
    has_ties = np.unique(np.abs(d)).size < n
    has_zeros = not bool(np.all(nonzero))
    if method == "auto":
        method = "exact" if (n <= 50 and not has_ties and not has_zeros) else "approx"
    if method == "exact":
        if has_ties or (has_zeros and zero_method == "pratt"):
            msg = "`method` 'exact' needs differences without ties; use method='approx'."
            raise ValueError(msg)
        counts = _signed_rank_counts(n)
        pmf = counts / counts.sum()
        t_int = int(round(t_plus))
        upper = pmf[t_int:].sum()  # P(T >= t)
        lower = pmf[: t_int + 1].sum()  # P(T <= t)
        if alternative == "greater":
            p = upper
        elif alternative == "less":
            p = lower
        else:
            p = min(1.0, 2.0 * min(upper, lower))
    else:
        n_zero = int(np.count_nonzero(~nonzero)) if zero_method == "pratt" else 0
        n_all = n + n_zero
        # Pratt: zeros take the smallest ranks 1..n_zero, then are dropped.
        mean = (n_all * (n_all + 1) - n_zero * (n_zero + 1)) / 4.0
        var = (n_all * (n_all + 1) * (2 * n_all + 1) - n_zero * (n_zero + 1) * (2 * n_zero + 1)) / 24.0
        _, tie_counts = np.unique(ranks, return_counts=True)
        var -= np.sum(tie_counts.astype(float) ** 3 - tie_counts) / 48.0
        diff = t_plus - mean
        if continuity_correction:
            if alternative == "two-sided":
                diff = np.sign(diff) * max(abs(diff) - 0.5, 0.0)
            elif alternative == "greater":
                diff -= 0.5
            else:
                diff += 0.5
        z = diff / math.sqrt(var) if var > 0 else 0.0
        p = _tail_pvalue(stats.norm, z, alternative)
    return TestResult(statistic=t_plus, pvalue=float(p), method=f"wilcoxon_{method}",
                      alternative=alternative, n=n, estimate=float((a_arr - b_arr).mean()))


@public
def paired_t(a: Any, b: Any, *, alternative: str = "two-sided") -> TestResult:
    r"""Paired t test on the per-item differences D = a - b.

    :math:`T = \bar D / (s_D/\sqrt n)` with n - 1 degrees of freedom. For a mean of item scores
    over many items the central limit theorem makes it valid even for 0/1 or skewed scores.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores of model A and model B (0/1 or graded; finite, same length, at
        least 2 items).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: the mean difference a - b is positive (A scores higher).

    Returns
    -------
    TestResult
        ``statistic`` = T, ``df`` = n - 1, ``estimate`` = mean difference.

    Warns
    -----
    DegenerateDataWarning
        When every difference is equal (zero variance): T is infinite (or NaN when all are 0).

    Examples
    --------
    >>> from llm_power import paired_t
    >>> res = paired_t([0.71, 0.64, 0.90, 0.55, 0.80], [0.62, 0.60, 0.85, 0.56, 0.70])
    >>> round(res.statistic, 3), res.df, round(res.pvalue, 4)
    (2.75, 4.0, 0.0514)
    """
    from scipy import stats  # on first use: importing scipy.stats costs start-up time

    alternative = check_alternative(alternative)
    a_arr, b_arr = check_paired(a, b)
    d = a_arr - b_arr
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        warn("every per-item difference is equal: the paired t statistic is degenerate.",
                      DegenerateDataWarning)
        t = math.nan if mean == 0 else math.copysign(math.inf, mean)
    else:
        t = mean / (sd / math.sqrt(n))
    df = n - 1
    p = 1.0 if math.isnan(t) else _tail_pvalue(stats.t(df), t, alternative)
    return TestResult(statistic=t, pvalue=p, method="paired_t", alternative=alternative, n=n,
                      df=float(df), estimate=mean)


@public
def unpaired_z(a: Any, b: Any, *, alternative: str = "two-sided") -> TestResult:
    r"""Two-sample z test that IGNORES the pairing -- provided only to show what that costs.

    For 0/1 data: the pooled two-proportion z test,
    :math:`z = (\hat p_A - \hat p_B)/\sqrt{\bar p(1-\bar p)(1/n_A + 1/n_B)}`; for graded scores:
    :math:`z = (\bar a - \bar b)/\sqrt{s_a^2/n_A + s_b^2/n_B}`. When ``a`` and ``b`` have the same
    length they are presumably paired, and the test warns: on paired data it wastes the
    correlation between the models (compare :func:`mcnemar` / :func:`paired_t`).

    Parameters
    ----------
    a, b : array_like
        Scores of model A and model B (0/1 or graded; finite, at least 2 each; the lengths may
        differ). Equal lengths give an ApproximationWarning: the data are probably paired.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: A's mean is higher than B's.

    Returns
    -------
    TestResult
        ``statistic`` = z (+-inf when the standard error is 0 and the means differ), ``pvalue``
        (normal), ``method`` = ``"unpaired_z"``, ``n`` = n_A + n_B, ``estimate`` = mean(a) -
        mean(b).

    Examples
    --------
    Same data, same 4-point gap (SPEC §5): unpaired p = 0.37 versus exact McNemar p = 0.02.

    >>> import warnings, numpy as np
    >>> from llm_power import unpaired_z
    >>> a = np.r_[np.ones(150), np.zeros(50)]
    >>> b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     print(round(unpaired_z(a, b).pvalue, 3))
    0.368
    """
    from scipy import stats  # on first use: importing scipy.stats costs start-up time

    alternative = check_alternative(alternative)
    a_arr = as_float_array(a, "a").reshape(-1)
    b_arr = as_float_array(b, "b").reshape(-1)
    for arr, name in ((a_arr, "a"), (b_arr, "b")):
        if arr.size < 2:
            msg = f"`{name}` needs at least 2 items; got {arr.size}."
            raise ValueError(msg)
        if not np.all(np.isfinite(arr)):
            msg = f"`{name}` must contain finite scores (no NaN or inf)."
            raise ValueError(msg)
    if a_arr.size == b_arr.size:
        warn(
            "unpaired_z ignores the pairing: when both models answered the same items use a "
            "paired test (mcnemar, paired_t, compare); the unpaired p-value is typically far too large.",
            ApproximationWarning,
        )
    na, nb = a_arr.size, b_arr.size
    diff = float(a_arr.mean() - b_arr.mean())
    binary = bool(np.all((a_arr == 0) | (a_arr == 1)) and np.all((b_arr == 0) | (b_arr == 1)))
    if binary:
        pooled = (a_arr.sum() + b_arr.sum()) / (na + nb)
        se = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
    else:
        se = math.sqrt(a_arr.var(ddof=1) / na + b_arr.var(ddof=1) / nb)
    if se == 0:
        z = 0.0 if diff == 0 else math.copysign(math.inf, diff)
    else:
        z = diff / se
    p = _tail_pvalue(stats.norm, z, alternative)
    return TestResult(statistic=z, pvalue=p, method="unpaired_z", alternative=alternative,
                      n=int(na + nb), estimate=diff)
