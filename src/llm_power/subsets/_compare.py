"""The gap between a model run on a subset of the items and another model, on the whole benchmark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import DegenerateDataWarning, warn
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.validation import as_float_array, check_alternative, check_open_unit, check_option
from .._kernel.verdict import t_interval, t_test
from ._design import TARGETS, build_design, check_fit, controls, spreadless
from ._estimate import warn_small_n

__all__ = ["SubsetCompareResult", "subset_compare"]


@dataclass(frozen=True, slots=True, repr=False)
class SubsetCompareResult(Result):
    """The full-benchmark gap estimated from a subset (see :func:`subset_compare`).

    Attributes
    ----------
    gap, se : float
        The estimate of (model - other) over all ``n_items`` items and its design-based standard error.
    df : float
        Degrees of freedom of the t test and interval.
    ci : ConfidenceInterval
        At 1 - ``alpha`` (one-sided with a one-sided ``alternative``): it leaves out 0 exactly when
        ``pvalue <= alpha``.
    pvalue : float
        The t test of "no gap on the whole benchmark".
    decided : bool
        ``pvalue <= alpha``: the subset says which model is ahead on the whole benchmark.
    verdict : str
        ``"<model> ahead"``, ``"<other> ahead"`` or ``"not decided"``.
    method : str
        As :class:`SubsetEstimateResult`; the other model's results on every item are one more
        control variate when it was run on every item.
    other_on : str
        ``"every item"`` (its full score is known) or ``"the items run"`` (both on the subset).
    n, n_items, strata : int
    target : str
        ``"population"`` (the gap compare and diagnose test) or ``"benchmark"`` (over these items).
    plain_gap, plain_se : float
        The gap on the subset alone (stratified when there are strata) and its standard error.
    variance_reduction : float
        plain_se^2 / se^2.
    names : tuple of str
    alpha : float
    alternative : str
    """

    gap: float
    se: float
    df: float
    ci: ConfidenceInterval
    pvalue: float
    decided: bool
    verdict: str
    method: str
    other_on: str
    n: int
    n_items: int
    strata: int
    target: str
    plain_gap: float
    plain_se: float
    variance_reduction: float
    names: tuple[str, str]
    alpha: float
    alternative: str

    _repr_fields = ("gap", "ci", "pvalue", "verdict", "method", "n", "n_items")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the full-benchmark gap (at 1 - alpha)."""
        return stored_interval(*self.ci, 1.0 - self.alpha, confidence_level,
                               recompute="run subset_compare(..., alpha=1 - confidence_level)")


@public
def subset_compare(scores: Any, sampled: Any, other: Any, *, reference: Any = None, predictions: Any = None,
                   strata: Any = None, n_items: int | None = None, names: tuple[str, str] = ("model", "other"),
                   alpha: float = 0.05, alternative: str = "two-sided",
                   target: str = "population") -> SubsetCompareResult:
    """Is a model run on a subset of the items ahead of another one on the whole benchmark?

    ``other`` is the other model's per-item scores, either on every item (a leaderboard model
    whose full results are known: its full score is exact and its per-item results are a control
    variate for this model's -- the same items, so usually the strongest one) or on the same
    items run (both models on the subset: the paired differences are estimated). The gap's
    estimate, standard error and degrees of freedom come from the same design-based estimators as
    :func:`subset_estimate`; the verdict is the t test on them, and the interval beside it is the
    t interval at 1 - ``alpha``, so the two never disagree. Valid for a (stratified) simple random
    sample of the items. With the default ``target="population"`` the gap is the one ``compare``
    and ``diagnose`` test on a full run (the items as a sample of the questions they stand for), so a
    subset never decides a gap the full run would not be entitled to: with every item run it is
    the paired t test; ``target="benchmark"`` asks who is ahead on exactly these ``n_items`` items.
    With control variates (the other model known on every item is one) and fewer than 100 items
    the interval is short and the test too liberal (95% intervals of the gap to the nearest
    MMLU-Pro model covered 0.92 at 20 items, 0.94 at 50), and an ApproximationWarning says so;
    the paired differences of two models both run on the subset hold from 20 items.

    Parameters
    ----------
    scores : array_like
        This model's per-item scores on the items run (n values).
    sampled : array_like of int
        Those items' positions among the benchmark's items (distinct).
    other : array_like
        The other model's scores: n_items values (every item) or n values (the items run, in the
        order of ``scores``; when every item was run, n = n_items, they are the latter and
        ``sampled`` must be the benchmark's order, 0 to n_items - 1).
    reference, predictions, strata, n_items
        As in :func:`subset_estimate`.
    names : (str, str), default ("model", "other")
        Shown in ``verdict``.
    alpha : float, default 0.05
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        "greater": the claim that this model is ahead.
    target : {"population", "benchmark"}, default "population"
        As in :func:`subset_estimate`.

    Returns
    -------
    SubsetCompareResult

    Warns
    -----
    DegenerateDataWarning
        When the control variates fit the differences exactly (the result is then the plain gap's),
        or the differences have no spread at all (NaN interval and p-value: not decided).

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(1)
    >>> difficulty = rng.random(4000)
    >>> strong = (rng.random(4000) < np.sqrt(difficulty)).astype(float)   # known on every item
    >>> new = (rng.random(4000) < difficulty).astype(float)               # run on 300 only
    >>> run = rng.choice(4000, 300, replace=False)
    >>> res = lp.subset_compare(new[run], run, strong, names=("new", "strong"))
    >>> res.verdict, bool(res.ci.high < 0), bool(res.pvalue <= 0.05)
    ('strong ahead', True, True)
    """
    a = check_open_unit(alpha, "alpha")
    alt = check_alternative(alternative)
    population = check_option(target, "target", TARGETS) == "population"
    y = as_float_array(scores, "scores").reshape(-1)
    b = as_float_array(other, "other").reshape(-1)
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(b))):
        msg = "`scores` and `other` must be finite."
        raise ValueError(msg)
    x, _ = controls(reference, predictions)
    if b.size != y.size:  # the other model on every item: its full score is exact, its results a control variate
        if x is not None and x.shape[0] != b.size:
            msg = f"`other` has {b.size} scores: give them on every item ({x.shape[0]}) or on the {y.size} items run."
            raise ValueError(msg)
        xs = b[:, None] if x is None else np.column_stack([x, b[:, None]])
        design = build_design(sampled, y.size, x=xs, strata=strata, n_items=b.size)
        d = y - b[design.positions]
        # the plain gap: the subset mean less the other's exact score; for the population target the
        # benchmark's own sampling is that of the differences
        plain, plain_se, plain_df, _ = design.estimate(y, use_controls=False)
        plain -= float(b.mean())
        if population:
            _, with_first, plain_df, _ = design.estimate(d, use_controls=False, population=True)
            without = design.estimate(d, use_controls=False)[1]
            plain_se = float(np.sqrt(plain_se**2 + with_first**2 - without**2))
        full = True
    else:  # both on the items run (in the order of `scores`): their paired differences
        design = build_design(sampled, y.size, x=x, strata=strata, n_items=n_items)
        if design.n == design.n_items and not np.array_equal(design.positions, np.arange(design.n)):
            msg = ("every item was run and `other` has one score per item: ambiguous order -- give `sampled` in "
                   "the benchmark's order (0 to n_items - 1), with `scores` and `other` in that order.")
            raise ValueError(msg)
        d = y - b
        plain, plain_se, plain_df, _ = design.estimate(d, use_controls=False, population=population)
        full = False
    p = 0 if design.x is None else design.x.shape[1]
    gap, se, df, _ = design.estimate(d, population=population)
    known = not population and design.n == design.n_items  # every item run: the benchmark's gap is known
    controlled = design.x is not None
    if controlled:
        check_fit(se, design.n, p)
        if spreadless(se, d) and not known and not spreadless(plain_se, d):
            warn(f"the control variates fit the {design.n} sampled items' differences exactly (no residual spread), "
                 "so the difference estimator's variance cannot be estimated from them: the gap and its test are "
                 "the plain subset gap's, without control variates. Run more items to use them.",
                 DegenerateDataWarning)
            gap, se, df, controlled = plain, plain_se, plain_df, False
        else:
            warn_small_n(design.n, "subset_compare" + (" (the other model's results are one)" if full else ""))
    if spreadless(se, d) and not known:  # no spread at all among the items run: nothing to test the gap with
        warn(f"the gap has no spread over the {design.n} items run (every sampled stratum's differences are equal): "
             "its interval and p-value are not known from them (NaN), and it is not decided. Run more items.",
             DegenerateDataWarning)
        pvalue, low, high = np.array([np.nan]), np.array([np.nan]), np.array([np.nan])
    else:
        _, pvalue = t_test(np.array([gap]), np.array([se * se]), df, alt)
        low, high = t_interval(np.array([gap]), np.array([se * se]), df, 1.0 - a, alt)
    decided = bool(pvalue[0] <= a)
    ahead = names[0] if gap > 0 else names[1]
    verdict = f"{ahead} ahead" if decided else "not decided"
    method = "difference estimator" if controlled else "subset mean"
    if design.pop_counts.size > 1:
        method = "stratified " + method
    return SubsetCompareResult(
        gap=float(gap), se=float(se), df=float(df), ci=ConfidenceInterval(float(low[0]), float(high[0])),
        pvalue=float(pvalue[0]), decided=decided, verdict=verdict, method=method,
        other_on="every item" if full else "the items run", n=design.n, n_items=design.n_items,
        strata=int(design.pop_counts.size), target="population" if population else "benchmark",
        plain_gap=float(plain), plain_se=float(plain_se),
        variance_reduction=(float(plain_se**2 / se**2) if se > 0 else float("inf")) if controlled else 1.0,
        names=(str(names[0]), str(names[1])), alpha=a, alternative=alt)
