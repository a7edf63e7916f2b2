"""The full-benchmark score of a model run on a random subset of the items."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import ApproximationWarning, DegenerateDataWarning, warn
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.validation import as_float_array, check_open_unit, check_option
from .._kernel.binomial import wilson_bounds
from .._kernel.quantiles import level_quantile
from ._design import TARGETS, build_design, check_fit, controls, spreadless

__all__ = ["SMALL_N_CONTROLS", "SubsetEstimateResult", "subset_estimate", "warn_small_n", "wilson_effective"]

#: below this many items run, intervals that use control variates are short (they leave out the
#: fitted coefficients' sampling error): measured on MMLU-Pro, docs/subsets.md
SMALL_N_CONTROLS = 100


def wilson_effective(est: Any, se: Any, df: Any, n: int, n_items: int, confidence_level: float, *,
                     benchmark: bool) -> tuple[np.ndarray, np.ndarray]:
    r"""The modified Wilson interval of a proportion estimated from a (stratified) random subset.

    Wilson's score interval on the design's *effective sample size* n* = p(1 - p) / v (p the
    estimate, v its design-based variance: Kish's n / deff), with Korn and Graubard's (1998)
    degrees-of-freedom adjustment n* (t_{n-1} / t_df)^2 when the variance has fewer than n - 1
    degrees of freedom (strata); the "modified Wilson" limits of survey software (SAS SURVEYFREQ's
    ``CL(TYPE=WILSON)``), recommended for proportions from complex samples by Franco, Little,
    Louis and Slud (2019, *J. Survey Statistics and Methodology* 7, 334-364). Under simple random
    sampling the design effect is 1 and n* = n - 1 (n - 1 over 1 - n/N for the benchmark's own
    mean). Where the variance is 0 (p = 0 or 1, or every sampled stratum constant) the design effect
    is taken as 1 (Korn and Graubard's rule): n* = n, or n / (1 - n/N) for the benchmark's own mean
    -- a point only once every item is run. Vectorised over ``est``, ``se``, ``df``.
    """
    p = np.clip(np.asarray(est, dtype=float), 0.0, 1.0)
    v = np.asarray(se, dtype=float) ** 2
    df = np.asarray(df, dtype=float)
    known = (p > 0) & (p < 1) & (v > 0)
    fallback = n / (1.0 - n / n_items) if benchmark and n < n_items else (np.inf if benchmark else float(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(known, p * (1.0 - p) / np.where(known, v, 1.0), fallback)
        adjust = (level_quantile(confidence_level, "two-sided", max(n - 1, 1))
                  / level_quantile(confidence_level, "two-sided", df)) ** 2
    n_eff = n_eff * np.minimum(adjust, 1.0)
    finite = np.isfinite(n_eff)
    safe = np.where(finite, n_eff, 1.0)
    low, high = wilson_bounds(p * safe, safe, confidence_level)
    return np.where(finite, low, p), np.where(finite, high, p)


def warn_small_n(n: int, what: str) -> None:
    """The ApproximationWarning of an interval that uses control variates on few items."""
    if n < SMALL_N_CONTROLS:
        warn(f"{what} uses control variates on {n} items: below {SMALL_N_CONTROLS} items its interval is short (it "
             "leaves out the fitted coefficients' sampling error; 95% intervals covered 0.92-0.94 of MMLU-Pro "
             "subsets of 20-50 items, docs/subsets.md). Run more items, or estimate without control variates "
             "(whose interval holds from 20 items).", ApproximationWarning)


@dataclass(frozen=True, slots=True, repr=False)
class SubsetEstimateResult(Result):
    """The full-benchmark mean estimated from a subset (see :func:`subset_estimate`).

    Attributes
    ----------
    estimate, se : float
        The estimate of the mean over all ``n_items`` items and its design-based standard error.
    df : float
        Degrees of freedom of the t interval (n - 1, or n - p - 1 with p control variates; with
        strata Satterthwaite's, less p).
    ci : ConfidenceInterval
        At ``confidence_level``, valid for a simple random sample of the items: the t interval
        ``estimate +- t_df se``, except for the subset mean of 0/1 scores (a proportion), whose
        interval is the modified Wilson interval on the design's effective sample size
        (:func:`wilson_effective`; asymmetric, inside [0, 1]).
    method : str
        ``"subset mean"`` or ``"difference estimator"`` (control variates), prefixed
        ``"stratified "`` with strata.
    n, n_items : int
        Items run, and items in the benchmark.
    strata : int
        Strata of the design (1: a simple random sample).
    target : str
        ``"population"`` (the mean over the questions the benchmark's items stand for, as compare
        and diagnose infer it) or ``"benchmark"`` (the mean over its ``n_items`` items).
    plain_estimate, plain_se : float
        The subset mean and its standard error, beside.
    variance_reduction : float
        plain_se^2 / se^2: how many times fewer items the control variates are worth (1 without).
    coefficients : list of float
        The fitted coefficients of the control variates (empty without).
    confidence_level : float
    """

    estimate: float
    se: float
    df: float
    ci: ConfidenceInterval
    method: str
    n: int
    n_items: int
    strata: int
    target: str
    plain_estimate: float
    plain_se: float
    variance_reduction: float
    coefficients: list[float]
    confidence_level: float

    _repr_fields = ("estimate", "ci", "method", "n", "n_items", "variance_reduction")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the full-benchmark mean."""
        return stored_interval(*self.ci, self.confidence_level, confidence_level,
                               recompute="run subset_estimate(..., confidence_level=confidence_level)")


@public
def subset_estimate(scores: Any, sampled: Any, *, reference: Any = None, predictions: Any = None,
                    strata: Any = None, n_items: int | None = None, target: str = "population",
                    confidence_level: float = 0.95) -> SubsetEstimateResult:
    """Estimate a model's score on the whole benchmark from the items it was run on.

    The items run must be a simple random sample (without replacement) of the benchmark's items,
    or of each stratum's items (a plan of :func:`subset_plan`) -- ``lm-eval --limit`` takes the
    first ones, which is neither. Without control variates the estimate is the (stratified)
    subset mean. With ``reference`` (the other models'
    results on every item) and/or ``predictions`` (a cheap model's or judge's score of this model
    on every item), it is the difference (regression) estimator: the control variates are fitted
    on the subset and their known full-benchmark means correct the subset mean. It stays valid
    when the control variates predict nothing: their coefficients are fitted to minimise the
    estimated variance, so it is never above the plain one by more than the price of fitting p
    of them (each sampled stratum's residual variance on n_h - 1 - L_h degrees of freedom, L_h
    its share of the fit's leverage). When they do predict, the interval shrinks by
    ``variance_reduction``. Below 100 items the interval with control variates is short (it
    leaves out the coefficients' sampling error: 95% intervals covered 0.93-0.94 of MMLU-Pro
    subsets of 20-50 items), and an ApproximationWarning says so. Without control variates the
    interval is the t interval, or for 0/1 scores -- a proportion, for which the t interval falls
    short on small subsets (0.939 at 20 items on MMLU-Pro) -- the modified Wilson interval on the
    design's effective sample size (:func:`wilson_effective`), which holds from 20 items.

    Parameters
    ----------
    scores : array_like
        The model's per-item scores on the items run (n values).
    sampled : array_like of int
        Those items' positions among the benchmark's items (0 to n_items - 1, distinct).
    reference : array_like, optional
        Every item's scores of other models (n_items x K); their per-item mean is one control
        variate (an item's difficulty, as the leaderboard sees it).
    predictions : array_like, optional
        A prediction of this model's score on every item (n_items values, e.g. a judge's), a
        second control variate (prediction-powered estimation with a fitted coefficient).
    strata : array_like, optional
        The stratum of every item (n_items labels) when the items were drawn stratum by stratum;
        each stratum needs at least 2 items run (or all of its items).
    n_items : int, optional
        Items in the benchmark (default: the rows of ``reference``, ``predictions`` or ``strata``).
    target : {"population", "benchmark"}, default "population"
        What the interval is of. ``"population"``: the score on the population of questions the
        benchmark's items are a sample of -- what ``compare``, ``diagnose`` and the models' intervals
        of a full run infer, so a subset never claims more than the full run would (its variance
        adds the benchmark's own sampling, s^2 / n_items). ``"benchmark"``: the score the full run
        would print, over exactly these ``n_items`` items (the finite-population interval; zero
        width when every item was run).
    confidence_level : float, default 0.95

    Returns
    -------
    SubsetEstimateResult
        ``estimate``, ``se``, ``ci`` (t on ``df``), the plain subset mean beside, and the
        estimated ``variance_reduction``.

    Warns
    -----
    DegenerateDataWarning
        When the control variates fit the sampled items exactly (the result is then the plain
        subset mean's), or graded scores have no spread in any sampled stratum (NaN interval).

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> difficulty = rng.random(5000)
    >>> others = (rng.random((5000, 8)) < difficulty[:, None]).astype(float)
    >>> model = (rng.random(5000) < difficulty).astype(float)
    >>> run = rng.choice(5000, 300, replace=False)
    >>> res = lp.subset_estimate(model[run], run, reference=others, target="benchmark")
    >>> res.method, bool(res.ci.low < model.mean() < res.ci.high), bool(res.variance_reduction > 1.2)
    ('difference estimator', True, True)
    """
    level = check_open_unit(confidence_level, "confidence_level")
    goal = check_option(target, "target", TARGETS)
    y = as_float_array(scores, "scores").reshape(-1)
    if not np.all(np.isfinite(y)):
        msg = "`scores` must be finite."
        raise ValueError(msg)
    x, _ = controls(reference, predictions)
    design = build_design(sampled, y.size, x=x, strata=strata, n_items=n_items)
    return _result(design, y, level, goal)


def _result(design: Any, y: np.ndarray, level: float, goal: str) -> SubsetEstimateResult:
    population = goal == "population"
    plain, plain_se, plain_df, _ = design.estimate(y, use_controls=False, population=population)
    n, p = design.n, 0 if design.x is None else design.x.shape[1]
    # a point only when the benchmark's own mean is the target and every item is run
    known = goal == "benchmark" and n == design.n_items
    x = design.x
    if x is not None:
        est, se, df, coefficients = design.estimate(y, population=population)
        check_fit(se, n, p)
        method = "difference estimator"
        if spreadless(se, y) and not known:  # the fit leaves no residual spread: its variance is not known
            warn(f"the control variates fit the {n} sampled items exactly (no residual spread), so the "
                 "difference estimator's variance cannot be estimated from them: the estimate and interval "
                 "are the subset mean's, without control variates. Run more items to use them.",
                 DegenerateDataWarning)
            x = None
    if x is None:
        est, se, df, coefficients, method = plain, plain_se, plain_df, [], "subset mean"
    strata = int(design.pop_counts.size)
    if strata > 1:
        method = "stratified " + method
    if x is None and np.all((y == 0) | (y == 1)):  # a proportion: the modified Wilson interval
        low, high = (float(b) for b in wilson_effective(est, se, df, n, design.n_items, level,
                                                        benchmark=goal == "benchmark"))
    elif spreadless(se, y) and not known:  # graded scores all equal in every sampled stratum: no spread to go on
        warn(f"the {n} sampled items have no spread within any stratum: the interval of the mean is not known "
             "from them (NaN). Run more items.", DegenerateDataWarning)
        low = high = se = float("nan")
    else:
        half = float(level_quantile(level, "two-sided", df)) * se
        low, high = est - half, est + half
        if x is not None:
            warn_small_n(n, "subset_estimate")
    reduction = plain_se**2 / se**2 if se > 0 else float("inf")
    return SubsetEstimateResult(
        estimate=est, se=se, df=df, ci=ConfidenceInterval(low, high), method=method, n=n,
        n_items=design.n_items, strata=strata, target=goal, plain_estimate=plain, plain_se=plain_se,
        variance_reduction=reduction if x is not None else 1.0, coefficients=coefficients,
        confidence_level=level)
