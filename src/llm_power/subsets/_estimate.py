"""The full-benchmark score of a model run on a random subset of the items."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.results import ConfidenceInterval, Result
from .._core.validation import as_float_array, check_open_unit
from .._kernel.quantiles import level_quantile
from .._kernel.survey import difference_estimate, subset_mean

__all__ = ["SubsetEstimateResult", "subset_estimate"]


@dataclass(frozen=True, slots=True, repr=False)
class SubsetEstimateResult(Result):
    """The full-benchmark mean estimated from a subset (see :func:`subset_estimate`).

    Attributes
    ----------
    estimate, se : float
        The estimate of the mean over all ``n_items`` items and its design-based standard error.
    df : int
        Degrees of freedom of the t interval (n - 1, or n - p - 1 with p control variates).
    ci : ConfidenceInterval
        At ``confidence_level``, valid for a simple random sample of the items.
    method : str
        ``"subset mean"`` or ``"difference estimator"`` (control variates).
    n, n_items : int
        Items run, and items in the benchmark.
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
    df: int
    ci: ConfidenceInterval
    method: str
    n: int
    n_items: int
    plain_estimate: float
    plain_se: float
    variance_reduction: float
    coefficients: list[float]
    confidence_level: float

    _repr_fields = ("estimate", "ci", "method", "n", "n_items", "variance_reduction")

    def confidence_interval(self) -> ConfidenceInterval:
        """The interval of the full-benchmark mean."""
        return self.ci


def subset_estimate(scores: Any, sampled: Any, *, reference: Any = None, predictions: Any = None,
                    n_items: int | None = None, confidence_level: float = 0.95) -> SubsetEstimateResult:
    """Estimate a model's score on the whole benchmark from the items it was run on.

    The items run must be a simple random sample (without replacement) of the benchmark's items
    -- ``lm-eval --limit`` takes the first ones, which is not. Without control variates the
    estimate is the subset mean with the finite-population correction. With ``reference`` (the
    other models' results on every item) and/or ``predictions`` (a cheap model's or judge's score
    of this model on every item), it is the difference (regression) estimator: the control
    variates are fitted on the subset and their known full-benchmark means correct the subset
    mean. It stays valid when the control variates predict nothing (they then cost their degrees
    of freedom); when they do, the interval shrinks by ``variance_reduction``.

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
    n_items : int, optional
        Items in the benchmark (default: the rows of ``reference`` or ``predictions``).
    confidence_level : float, default 0.95

    Returns
    -------
    SubsetEstimateResult
        ``estimate``, ``se``, ``ci`` (t on ``df``), the plain subset mean beside, and the
        estimated ``variance_reduction``.

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> difficulty = rng.random(5000)
    >>> others = (rng.random((5000, 8)) < difficulty[:, None]).astype(float)
    >>> model = (rng.random(5000) < difficulty).astype(float)
    >>> run = rng.choice(5000, 300, replace=False)
    >>> res = lp.subset_estimate(model[run], run, reference=others)
    >>> res.method, bool(res.ci.low < model.mean() < res.ci.high), bool(res.variance_reduction > 1.2)
    ('difference estimator', True, True)
    """
    level = check_open_unit(confidence_level, "confidence_level")
    y = as_float_array(scores, "scores").reshape(-1)
    idx = np.asarray(sampled)
    if idx.ndim != 1 or idx.size != y.size or not np.issubdtype(idx.dtype, np.integer):
        msg = f"`sampled` must be {y.size} integer item positions, one per score; got {idx.shape} of {idx.dtype}."
        raise ValueError(msg)
    columns = []
    for value, name in ((reference, "reference"), (predictions, "predictions")):
        if value is None:
            continue
        arr = as_float_array(value, name)
        arr = arr.reshape(arr.shape[0], -1)
        if not np.all(np.isfinite(arr)):
            msg = f"`{name}` must be finite on every item (no NaN)."
            raise ValueError(msg)
        columns.append((arr.mean(axis=1) if name == "reference" else arr[:, 0], name))
    sizes = {c.size for c, _ in columns}
    if len(sizes) > 1:
        msg = f"`reference` and `predictions` must cover the same items; got {sorted(sizes)} rows."
        raise ValueError(msg)
    n_pop = n_items if n_items is not None else (sizes.pop() if sizes else None)
    if n_pop is None:
        msg = "give `n_items` (the benchmark's size), or `reference` / `predictions` on every item."
        raise ValueError(msg)
    if columns and columns[0][0].size != n_pop:
        msg = f"`n_items` = {n_pop} but the control variates cover {columns[0][0].size} items."
        raise ValueError(msg)
    n = y.size
    if n < 2 or np.unique(idx).size != n or idx.min() < 0 or idx.max() >= n_pop:
        msg = (f"`sampled` must be at least 2 distinct positions in [0, {n_pop}); "
               f"got {n} ({np.unique(idx).size} distinct).")
        raise ValueError(msg)
    if not np.all(np.isfinite(y)):
        msg = "`scores` must be finite."
        raise ValueError(msg)
    plain, plain_se, plain_df = subset_mean(y, n_pop)
    if columns:
        x = np.stack([c for c, _ in columns], axis=1)
        if n - x.shape[1] - 1 < 1:
            msg = f"{n} items cannot fit {x.shape[1]} control variate(s) and an intercept; run more items."
            raise ValueError(msg)
        est, se, df, coef = difference_estimate(y, x[idx], x.mean(axis=0), n_pop)
        method, coefficients = "difference estimator", [float(c) for c in np.atleast_1d(coef)]
    else:
        est, se, df, method, coefficients = plain, plain_se, plain_df, "subset mean", []
    half = float(level_quantile(level, "two-sided", df)) * float(se)
    reduction = float(plain_se) ** 2 / float(se) ** 2 if float(se) > 0 else float("inf")
    return SubsetEstimateResult(
        estimate=float(est), se=float(se), df=int(df), ci=ConfidenceInterval(float(est) - half, float(est) + half),
        method=method, n=n, n_items=int(n_pop), plain_estimate=float(plain), plain_se=float(plain_se),
        variance_reduction=reduction if columns else 1.0, coefficients=coefficients, confidence_level=level)
