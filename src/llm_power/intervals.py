"""Confidence intervals for one benchmark score (a binomial proportion).

A score of ``k`` correct out of ``n`` items estimates the model's accuracy on the population of
items the benchmark was drawn from. These functions say how uncertain that estimate is:

- :func:`proportion_ci` -- five interval methods, two-sided or one-sided, vectorised;
- :func:`coverage` -- the *exact* coverage probability of a method at a true accuracy ``p``;
- :func:`rule_of_three` -- the quick upper bound after 0 failures (or 0 successes) in ``n`` items;
- :func:`half_width` and :func:`n_for_half_width` -- error bars of a benchmark of a given size,
  and the number of items needed for a target error bar.

Which interval when (Brown, Cai & DasGupta 2001): Wilson is the default -- coverage close to
nominal on average, sensible at k = 0 and k = n. Use Clopper-Pearson when under-coverage is
unacceptable (it never covers less than nominal, at the price of width). Jeffreys and
Agresti-Coull behave like Wilson. Never use Wald near 0 or 1 or at small n: at k = 0 it is the
single point {0}, and its coverage oscillates and collapses (0.19 at n = 10, p = 0.02).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._core.clusters import code_labels
from ._core.errors import DegenerateDataWarning, warn
from ._core.options import INTERVAL_METHODS  # one list, shared with the command line
from ._core.params import public
from ._core.results import ConfidenceInterval
from ._core.validation import (
    MAX_COUNT,
    as_rng,
    check_alternative,
    check_confidence_level,
    check_counts,
    check_integers,
    check_option,
    check_positive,
    check_probabilities,
    scalar_or_array,
)
from ._kernel.binomial import binomial_bounds, wilson_scalar
from ._kernel.quantiles import interval_half_width, level_quantile
from ._kernel.variance import mean_variance

__all__ = [
    "INTERVAL_METHODS",
    "coverage",
    "half_width",
    "n_for_half_width",
    "one_model_summary",
    "proportion_ci",
    "rule_of_three",
]

#: The interval methods of :func:`proportion_ci`, in the order tables show them.


@public
def proportion_ci(
    k: Any,
    n: Any,
    *,
    method: str = "wilson",
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
    clip: bool = True,
) -> ConfidenceInterval:
    r"""Confidence interval for a binomial proportion (a benchmark score k/n).

    Parameters
    ----------
    k : int or array_like of int
        Number of items scored correct. Vectorised: ``k`` and ``n`` broadcast together.
    n : int or array_like of int
        Number of items (at least 1).
    method : str, default "wilson"
        One of ``"agresti_coull"``, ``"clopper_pearson"``, ``"jeffreys"``, ``"wald"``,
        ``"wilson"``.
    confidence_level : float, default 0.95
        In (0, 1).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"less"`` gives the one-sided interval ``[0, high]`` (an upper confidence bound),
        ``"greater"`` gives ``[low, 1]`` (a lower confidence bound), both at level
        ``confidence_level`` (scipy's convention, as in ``scipy.stats.binomtest``).
    clip : bool, default True
        Clip the bounds to [0, 1]. ``clip=False`` shows the raw Wald and Agresti-Coull bounds,
        which can leave [0, 1]; the other methods never do.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)``: floats for scalar input, arrays for array input.

    Warns
    -----
    DegenerateDataWarning
        For ``method="wald"`` at k = 0 or k = n, where the Wald interval has zero width.

    Notes
    -----
    With :math:`\hat p = k/n` and :math:`z = z_{1-\alpha/2}` (:math:`z_{1-\alpha}` one-sided):

    - Wald: :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}`.
    - Wilson score: :math:`\frac{k + z^2/2}{n + z^2} \pm \frac{z}{n+z^2}\sqrt{k(n-k)/n + z^2/4}`.
    - Clopper-Pearson: Beta quantiles :math:`B(\alpha/2; k, n-k+1)` and
      :math:`B(1-\alpha/2; k+1, n-k)`; lower bound 0 at k = 0, upper bound 1 at k = n.
    - Agresti-Coull: :math:`\tilde n = n + z^2`, :math:`\tilde p = (k + z^2/2)/\tilde n`,
      :math:`\tilde p \pm z\sqrt{\tilde p(1-\tilde p)/\tilde n}`.
    - Jeffreys: equal-tailed quantiles of Beta(k + 1/2, n - k + 1/2), with the lower bound set
      to 0 at k = 0 and the upper bound to 1 at k = n (Brown, Cai & DasGupta 2001, sec. 4.1.2).
      statsmodels does not apply this boundary convention; R's ``binom`` package does.

    The item set is treated as a simple random sample of items; for items in clusters (subjects,
    source documents) the interval is too narrow.

    References
    ----------
    .. [1] Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial
       proportion. Statistical Science 16(2), 101-133.
    .. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
       inference. JASA 22(158), 209-212.
    .. [3] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits
       illustrated in the case of the binomial. Biometrika 26(4), 404-413.
    .. [4] Agresti, A. & Coull, B. A. (1998). Approximate is better than "exact" for interval
       estimation of binomial proportions. The American Statistician 52(2), 119-126.

    Examples
    --------
    A model solved 17 of 20 held-out tasks:

    >>> from llm_power import proportion_ci
    >>> lo, hi = proportion_ci(17, 20)
    >>> print(f"{lo:.4f} {hi:.4f}")
    0.6396 0.9476

    Wald leaves [0, 1] -- the raw bound says an accuracy above 100% is plausible:

    >>> print(f"{proportion_ci(17, 20, method='wald', clip=False).high:.4f}")
    1.0065

    Vectorised over a leaderboard of scores on 164 items:

    >>> ci = proportion_ci([120, 131, 150], 164, method="clopper_pearson")
    >>> ci.low.round(3)
    array([0.657, 0.729, 0.861])
    """
    method = check_option(method, "method", INTERVAL_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    alternative = check_alternative(alternative)
    if method == "wilson" and _whole(k) and _whole(n) and 0 <= k <= n and 1 <= n <= MAX_COUNT:  # one count
        return ConfidenceInterval(*wilson_scalar(int(k), int(n), confidence_level, alternative, clip=clip))
    k_arr, n_arr = check_counts(k, n)
    if method == "wald" and np.any((k_arr == 0) | (k_arr == n_arr)):
        warn(
            "the Wald interval has zero width at k = 0 or k = n (it claims certainty); "
            "use method='wilson' or 'clopper_pearson'.",
            DegenerateDataWarning,
        )
    low, high = binomial_bounds(k_arr, n_arr, method, confidence_level, alternative, clip=clip)
    return ConfidenceInterval(scalar_or_array(low), scalar_or_array(high))


def _whole(value: Any) -> bool:
    """A Python or numpy integer that is not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@public
def coverage(
    n: Any,
    p: Any,
    *,
    method: str,
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
) -> Any:
    r"""Exact coverage probability of an interval method at true accuracy ``p``.

    Coverage is the probability, over benchmarks of ``n`` items drawn from a population with
    accuracy ``p``, that the interval contains ``p``. It is computed exactly,

    .. math:: C(n, p) = \sum_{k=0}^{n} \binom{n}{k} p^k (1-p)^{n-k}\,
              \mathbf 1\{p \in \mathrm{CI}(k, n)\},

    not by simulation. A method is honest when C stays close to ``confidence_level``.

    Parameters
    ----------
    n : int or array_like of int
        Number of items (at least 1).
    p : float or array_like of float
        True accuracy in [0, 1]. ``n`` and ``p`` broadcast together.
    method : str
        An interval method of :func:`proportion_ci`.
    confidence_level : float, default 0.95
        Nominal level of the interval.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        Which interval of :func:`proportion_ci`.

    Returns
    -------
    float or ndarray
        Coverage probability; a float for scalar input.

    Notes
    -----
    The bounds are the clipped bounds of :func:`proportion_ci` and the interval is closed.
    Work is O(n) per (n, p) pair and vectorised over ``p``.

    References
    ----------
    .. [1] Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial
       proportion. Statistical Science 16(2), 101-133.

    Examples
    --------
    Wald at p = 0.02 on a 10-item benchmark covers the truth less than one time in five:

    >>> from llm_power import coverage
    >>> print(f"{coverage(10, 0.02, method='wald'):.3f}")
    0.183
    >>> print(f"{coverage(10, 0.02, method='wilson'):.3f}")
    0.984
    """
    method = check_option(method, "method", INTERVAL_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    alternative = check_alternative(alternative)
    n_arr = check_integers(n, "n", minimum=1)
    p_arr = check_probabilities(p, "p")
    n_b, p_b = np.broadcast_arrays(n_arr, p_arr)
    out = np.empty(n_b.shape, dtype=float)
    flat_n, flat_p, flat_out = n_b.reshape(-1), p_b.reshape(-1), out.reshape(-1)
    for n_value in np.unique(flat_n):
        sel = np.flatnonzero(flat_n == n_value)
        if n_value + 1 > _COVERAGE_WINDOW:  # large n: sum only where the pmf is not negligible
            for i in sel:
                flat_out[i] = _coverage_window(int(n_value), float(flat_p[i]), method, confidence_level, alternative)
            continue
        ks = np.arange(n_value + 1)
        low, high = binomial_bounds(ks, np.full(ks.shape, n_value), method, confidence_level, alternative)
        # Chunk over p so the (n+1) x len(p) pmf matrix stays below ~8M entries.
        step = max(1, 8_000_000 // (n_value + 1))
        for start in range(0, sel.size, step):
            idx = sel[start : start + step]
            pv = flat_p[idx]
            from scipy import stats

            pmf = stats.binom.pmf(ks[:, None], n_value, pv[None, :])
            inside = (low[:, None] <= pv[None, :]) & (pv[None, :] <= high[:, None])
            flat_out[idx] = np.sum(pmf * inside, axis=0)
    return scalar_or_array(out)


#: above this many terms, coverage sums the pmf over mean +- 40 SD only (the rest is below 1e-300)
_COVERAGE_WINDOW = 2_000_000
#: the most terms one coverage value may sum (20,000,000 by default)
_COVERAGE_MAX_TERMS = "LLM_POWER_MAX_COVERAGE_TERMS"


def _coverage_window(n: int, p: float, method: str, confidence_level: float, alternative: str) -> float:
    mean, sd = n * p, math.sqrt(n * p * (1.0 - p))
    lo = max(0, int(math.floor(mean - 40.0 * sd - 10.0)))
    hi = min(n, int(math.ceil(mean + 40.0 * sd + 10.0)))
    from ._core.files import limit

    cap = limit(_COVERAGE_MAX_TERMS)
    if hi - lo + 1 > cap:
        msg = (
            f"exact coverage at n = {n:,}, p = {p:g} sums {hi - lo + 1:,} binomial terms, more than "
                         f"the {cap:,} computed in bounded memory ({_COVERAGE_MAX_TERMS} raises the limit); at this n "
                         "every method's coverage "
                         "is within rounding of the nominal level unless p is within a few /n of 0 or 1"
        )
        raise ValueError(msg)
    ks = np.arange(lo, hi + 1)
    low, high = binomial_bounds(ks, np.full(ks.shape, n), method, confidence_level, alternative)
    from scipy import stats

    pmf = stats.binom.pmf(ks, n, p)
    return float(np.sum(pmf * ((low <= p) & (p <= high))))


@public
def rule_of_three(n: Any, *, confidence_level: float = 0.95) -> Any:
    r"""Approximate one-sided upper bound on the error rate after 0 errors in ``n`` items.

    If a model makes no mistake on ``n`` items, the error rate can still be as high as about
    ``3/n`` at 95% confidence. The bound is :math:`-\ln(1-c)/n`, the first-order expansion of the
    exact Clopper-Pearson bound :math:`1 - (1-c)^{1/n}`; at c = 0.95, :math:`-\ln 0.05 = 2.996`,
    hence the "rule of three". By symmetry, after ``n`` correct answers the accuracy is at
    least ``1 - rule_of_three(n)``.

    Parameters
    ----------
    n : int or array_like of int
        Number of items, all without the event (at least 1).
    confidence_level : float, default 0.95
        One-sided confidence level.

    Returns
    -------
    float or ndarray

    References
    ----------
    .. [1] Hanley, J. A. & Lippman-Hand, A. (1983). If nothing goes wrong, is everything all
       right? JAMA 249(13), 1743-1745.

    Examples
    --------
    A model passed all 100 safety prompts; its failure rate may still be about 3%:

    >>> from llm_power import rule_of_three
    >>> print(f"{rule_of_three(100):.4f}")
    0.0300
    """
    confidence_level = check_confidence_level(confidence_level)
    n_arr = check_integers(n, "n", minimum=1)
    return scalar_or_array(-math.log1p(-confidence_level) / n_arr)


@public
def half_width(
    n: Any,
    p: Any = 0.5,
    *,
    method: str = "wilson",
    confidence_level: float = 0.95,
) -> Any:
    r"""Half-width of the two-sided interval for an observed score ``p`` on ``n`` items.

    The "error bar" of a benchmark: a score of 80% on 164 items is really 80% ± 6.1 points.

    Parameters
    ----------
    n : int or array_like of int
        Number of items (at least 1).
    p : float or array_like of float, default 0.5
        Observed score in [0, 1]. A score on ``n`` items is a multiple of 1/n, so ``p`` is
        rounded to the nearest attainable score: the interval is that of k = round(p·n)
        (198 items cannot score exactly 80%; the nearest score is 158/198 = 79.8%).
    method : str, default "wilson"
        An interval method of :func:`proportion_ci`.
    confidence_level : float, default 0.95

    Returns
    -------
    float or ndarray
        ``(high - low) / 2`` as a proportion (multiply by 100 for points). Wald and
        Agresti-Coull bounds are not clipped here, so for Wald this is :math:`z\sqrt{p(1-p)/n}`.

    Examples
    --------
    >>> from llm_power import half_width
    >>> print(f"±{100 * half_width(164, 0.8):.1f} points")
    ±6.1 points
    """
    method = check_option(method, "method", INTERVAL_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    n_arr = check_integers(n, "n", minimum=1)
    p_arr = check_probabilities(p, "p")
    n_b, p_b = np.broadcast_arrays(n_arr.astype(float), p_arr)
    k_b = np.round(p_b * n_b)
    low, high = binomial_bounds(k_b, n_b, method, confidence_level, "two-sided", clip=False)
    return scalar_or_array((high - low) / 2.0)


@public
def n_for_half_width(
    width: Any,
    p: Any = 0.5,
    *,
    method: str = "wilson",
    confidence_level: float = 0.95,
) -> Any:
    r"""Number of items needed so that the interval's half-width is at most ``width``.

    Parameters
    ----------
    width : float or array_like
        Target half-width as a proportion (0.02 for ±2 points), in (0, 0.5].
    p : float or array_like, default 0.5
        Anticipated score; 0.5 is the worst case for Wald.
    method : str, default "wilson"
        ``"wald"`` gives the classic closed form :math:`n = \lceil z^2 p(1-p)/w^2 \rceil`; the
        other methods give the smallest ``n`` whose :func:`half_width` at ``p`` is at most
        ``width`` (found by bisection on integers), with the interval evaluated at the
        anticipated score k = p·n without rounding, so that the half-width decreases
        smoothly in ``n``.
    confidence_level : float, default 0.95

    Returns
    -------
    int or ndarray of int

    Examples
    --------
    Error bars of ±2 points around an expected 80% need about 1,500 items:

    >>> from llm_power import n_for_half_width
    >>> n_for_half_width(0.02, 0.8, method="wald")
    1537
    >>> n_for_half_width(0.02, 0.8)
    1535
    """
    method = check_option(method, "method", INTERVAL_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    w_arr = check_positive(width, "width")
    if np.any(w_arr > 0.5):
        bad = float(w_arr[w_arr > 0.5].reshape(-1)[0])
        msg = f"`width` must be at most 0.5 (a proportion, not points); got {bad!r}."
        raise ValueError(msg)
    p_arr = check_probabilities(p, "p")
    w_b, p_b = np.broadcast_arrays(w_arr, p_arr)
    z = float(level_quantile(confidence_level, "two-sided"))
    wald = np.maximum(1.0, np.ceil(z * z * p_b * (1.0 - p_b) / w_b**2 - 1e-9))
    if method == "wald":
        return _int_out(wald)
    out = np.empty(w_b.shape, dtype=np.int64)
    flat_w, flat_p, flat_out, flat_start = (
        w_b.reshape(-1), p_b.reshape(-1), out.reshape(-1), wald.reshape(-1)
    )
    for i in range(flat_w.size):
        flat_out[i] = _smallest_n(flat_w[i], flat_p[i], method, confidence_level, int(flat_start[i]))
    return _int_out(out)


def _hw(n: int, p: float, method: str, confidence_level: float) -> float:
    low, high = binomial_bounds(np.array(p * n), np.array(float(n)), method, confidence_level, "two-sided", clip=False)
    return float((high - low) / 2.0)


def _smallest_n(width: float, p: float, method: str, confidence_level: float, guess: int) -> int:
    """Smallest n >= 1 with half-width <= width (half-width decreases in n)."""
    lo, hi = 0, max(1, guess)
    while _hw(hi, p, method, confidence_level) > width:
        lo, hi = hi, hi * 2
    # invariant: hw(lo) > width (or lo == 0), hw(hi) <= width
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _hw(mid, p, method, confidence_level) > width:
            lo = mid
        else:
            hi = mid
    return hi


def _int_out(arr: np.ndarray) -> Any:
    arr = np.asarray(arr).astype(np.int64)
    return int(arr) if arr.ndim == 0 else arr


def one_model_summary(scores: Any, clusters: Any, *, confidence_level: float, cluster_method: str = "cr2",
                      rng: Any = None) -> dict[str, Any]:
    """Score and interval of one model's per-item scores: Wilson for 0/1 scores, Student t for
    graded ones; with clusters the ``cluster_method``'s interval, as :func:`~llm_power.diagnose` gives
    each model: a cluster-robust t interval (CR2 design effect, Imbens-Kolesar df), the CV3 jackknife's
    t on G - 1 df, or the inverted restricted wild cluster bootstrap (drawn from the first draw of
    ``rng``, as diagnose's).
    """
    from ._core.options import CLUSTER_METHODS

    cluster_method = check_option(cluster_method, "cluster_method", CLUSTER_METHODS)
    x = np.asarray(scores, dtype=float)
    n = int(x.size)
    binary = bool(np.isin(x, (0.0, 1.0)).all())
    mean = float(x.mean())
    out: dict[str, Any] = {"n": n, "binary": binary, "mean": mean, "confidence_level": confidence_level}
    if clusters is not None and len(set(clusters)) >= 2:
        codes, g = code_labels(clusters, n)
        v = mean_variance(x, codes, g, kind="cr2", ddof=0 if binary else 1)
        half = float(interval_half_width(math.sqrt(float(v.variance[0])), confidence_level, "two-sided",
                                         float(v.df[0])))
        low, high = mean - half, mean + half
        method, df = "cluster-robust t (CR2)", float(v.df[0])
        if cluster_method != "cr2":
            from ._kernel.sufficient import PairSums
            from ._kernel.wild_cluster import cv3_variance
            from ._kernel.wild_decision import wild_decision, wild_seed

            sizes = np.bincount(codes, minlength=g).astype(float)
            sums = np.bincount(codes, weights=x, minlength=g)
            if cluster_method == "cv3":
                df = g - 1.0
                half = float(interval_half_width(math.sqrt(float(cv3_variance(sums, sizes))), confidence_level,
                                                 "two-sided", df))
                low, high, method = mean - half, mean + half, "cluster jackknife t (CV3)"
            else:
                wild = wild_decision(PairSums(n=n, delta=np.array([mean]), ss=np.array([np.nan]), sizes=sizes,
                                              resid=(sums - sizes * mean)[:, None], resid_sq=np.full((g, 1), np.nan)),
                                     seed=wild_seed(as_rng(rng)), confidence_level=confidence_level)
                low, high = float(np.asarray(wild.ci_low)[0]), float(np.asarray(wild.ci_high)[0])
                method, df = "wild cluster bootstrap (restricted)", math.nan
        if binary:
            low, high = max(low, 0.0), min(high, 1.0)
        out.update(method=method, low=low, high=high, n_clusters=g, design_effect=float(v.design_effect[0]), df=df)
    elif binary:
        ci = proportion_ci(int(x.sum()), n, method="wilson", confidence_level=confidence_level)
        out.update(method="Wilson", low=float(ci.low), high=float(ci.high))
    else:
        se = float(x.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
        half = float(interval_half_width(se, confidence_level, "two-sided", n - 1)) if n > 1 else math.nan
        out.update(method="Student t", low=mean - half, high=mean + half)
    return out
