"""More than one axis of sampling: several samples per item (temperature, templates, seeds).

When each item is answered K times, a score has two sources of noise: which items were drawn
(between-item variance) and which samples were drawn for each item (within-item variance). By
the law of total variance the mean over n items of K samples each has

    Var = sigma_between^2 / n + sigma_within^2 / (n K),

so more samples per item only shrink the second term. These functions estimate the two parts,
give the standard error and the paired N* that account for both, and plan the trade-off
"more items versus more samples per item".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import Result
from .._core.validation import as_float_array, check_positive
from .._kernel.sizes import ceil_items, k_factor

__all__ = [
    "RepeatedSamplingPlanResult",
    "VarianceComponentsResult",
    "paired_variance_components",
    "repeated_sampling_plan",
    "sample_size_repeated",
    "variance_components",
]


@dataclass(frozen=True, slots=True, repr=False)
class VarianceComponentsResult(Result):
    """Between- and within-item variance of per-sample scores (see :func:`variance_components`).

    Attributes
    ----------
    n_items, n_samples : int
    mean : float
        Grand mean (for paired data: the mean difference).
    between : float
        Between-item variance of the item means sigma_b^2 (truncated at 0).
    within : float
        Within-item variance sigma_w^2 (for paired data, sigma_wA^2/K_A*K + ... see Notes).
    var_item_means : float
        Sample variance of the per-item means: sigma_b^2 + sigma_w^2 / K.
    standard_error : float
        SE of the mean accounting for both axes: sqrt(var_item_means / n_items).
    standard_error_naive : float
        SE that wrongly treats all n_items x n_samples scores as independent.
    """

    n_items: int
    n_samples: int
    mean: float
    between: float
    within: float
    var_item_means: float
    standard_error: float
    standard_error_naive: float

    _repr_fields = ("n_items", "n_samples", "between", "within", "standard_error")


def _matrix(x: Any, name: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.ndim != 2:
        msg = f"`{name}` must be a 2-D (n_items, n_samples) array; got shape {arr.shape}."
        raise ValueError(msg)
    if arr.shape[0] < 2 or arr.shape[1] < 2:
        msg = f"`{name}` needs at least 2 items and 2 samples per item; got shape {arr.shape}."
        raise ValueError(msg)
    if not np.all(np.isfinite(arr)):
        msg = f"`{name}` must not contain NaN or inf."
        raise ValueError(msg)
    return arr


def variance_components(scores: Any) -> VarianceComponentsResult:
    r"""Split the variance of a score over items and samples (one-way random-effects ANOVA).

    Parameters
    ----------
    scores : array_like, shape (n_items, n_samples)
        Score of each sample of each item (e.g. 0/1 correctness of K temperature samples).

    Returns
    -------
    VarianceComponentsResult
        ``n_items`` = n and ``n_samples`` = K; ``mean``: the grand mean score (for 0/1 scores an
        accuracy, a proportion); ``between``: the between-item variance sigma_b^2 (truncated at 0);
        ``within``: the within-item variance sigma_w^2; ``var_item_means``: the sample variance of
        the item means, an estimate of sigma_b^2 + sigma_w^2 / K; ``standard_error``: SE of the
        mean accounting for both axes; ``standard_error_naive``: the SE that treats all n K scores
        as independent (too small when items differ). Variances are in squared score units.

    Notes
    -----
    :math:`\hat\sigma_w^2` = mean over items of the within-item sample variance (ddof = 1);
    :math:`s^2_{\bar y}` = sample variance of the item means;
    :math:`\hat\sigma_b^2 = \max(0, s^2_{\bar y} - \hat\sigma_w^2/K)` (unbiased before truncation).
    :math:`SE = s_{\bar y}/\sqrt n` is unbiased for the two-stage design whatever the components.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import variance_components
    >>> scores = np.array([[1, 1, 1, 0], [0, 0, 1, 0], [1, 1, 1, 1], [0, 1, 0, 0], [1, 0, 1, 1]])
    >>> vc = variance_components(scores)
    >>> round(vc.between, 4), round(vc.within, 4), round(vc.standard_error, 4)
    (0.0625, 0.2, 0.15)
    """
    y = _matrix(scores, "scores")
    n, k = y.shape
    item_means = y.mean(axis=1)
    within = float(np.mean(y.var(axis=1, ddof=1)))
    var_means = float(item_means.var(ddof=1))
    between = max(0.0, var_means - within / k)
    return VarianceComponentsResult(
        n_items=n, n_samples=k, mean=float(y.mean()), between=between, within=within, var_item_means=var_means,
        standard_error=math.sqrt(var_means / n), standard_error_naive=math.sqrt(float(y.var(ddof=1)) / (n * k)),
    )


def paired_variance_components(a: Any, b: Any) -> VarianceComponentsResult:
    r"""Variance components of the paired difference when each model answers each item K times.

    Parameters
    ----------
    a, b : array_like, shape (n_items, K_a) and (n_items, K_b)
        Per-sample scores of model A and B on the same items (K_a and K_b may differ).

    Returns
    -------
    VarianceComponentsResult
        For the item-level differences :math:`D_i = \bar a_i - \bar b_i`: ``between`` is the
        variance of the true per-item differences, ``within`` the per-sample noise expressed at
        the common K = ``n_samples`` = K_a when K_a = K_b (within = sigma_wA^2 + sigma_wB^2), so
        that var_item_means = between + within / K.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import paired_variance_components
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.2, 0.9, size=(500, 1))
    >>> a = (rng.random((500, 8)) < p).astype(float)
    >>> b = (rng.random((500, 8)) < p - 0.05).astype(float)
    >>> vc = paired_variance_components(a, b)
    >>> round(vc.mean, 3), vc.n_samples
    (0.047, 8)
    """
    xa, xb = _matrix(a, "a"), _matrix(b, "b")
    if xa.shape[0] != xb.shape[0]:
        msg = f"`a` and `b` must have the same items (rows); got {xa.shape[0]} and {xb.shape[0]}."
        raise ValueError(msg)
    n, ka = xa.shape
    kb = xb.shape[1]
    d = xa.mean(axis=1) - xb.mean(axis=1)
    wa = float(np.mean(xa.var(axis=1, ddof=1)))
    wb = float(np.mean(xb.var(axis=1, ddof=1)))
    noise = wa / ka + wb / kb  # variance of D_i around the true difference
    var_means = float(d.var(ddof=1))
    between = max(0.0, var_means - noise)
    k = ka if ka == kb else 1
    within = noise * k
    naive_var = (float(xa.var(ddof=1)) / ka + float(xb.var(ddof=1)) / kb) / n
    return VarianceComponentsResult(
        n_items=n, n_samples=k, mean=float(d.mean()), between=between, within=within, var_item_means=var_means,
        standard_error=math.sqrt(var_means / n), standard_error_naive=math.sqrt(naive_var),
    )


@public
def sample_size_repeated(
    delta: float,
    *,
    between: float,
    within: float,
    samples_per_item: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
) -> int:
    r"""Items N* to detect ``delta`` with K samples per item: :math:`K_f(\sigma_b^2 + \sigma_w^2/K)/\delta^2`.

    Parameters
    ----------
    delta : float
        The gap to detect, as a proportion for 0/1 scores (0.02 is 2 points); finite and non-zero,
        its sign does not matter.
    between : float
        Between-item variance sigma_b^2 (keyword-only, e.g. ``between`` of
        :func:`paired_variance_components` from a pilot), finite and >= 0.
    within : float
        Within-item (per-sample) variance sigma_w^2, finite and >= 0; ``between`` and ``within``
        cannot both be 0.
    samples_per_item : int, default 1
        Samples K drawn per item and averaged, a positive integer.
    alpha : float, default 0.05
        Significance level, in (0, 1).
    power : float, default 0.8
        Target power, in (0, 1) and above ``alpha``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        One-sided alternatives use :math:`z_{1-\alpha}` in the constant :math:`K_f`.

    Returns
    -------
    int
        The number of items, rounded up (at least 1); each is answered ``samples_per_item`` times.

    Examples
    --------
    >>> from llm_power import sample_size_repeated
    >>> sample_size_repeated(0.02, between=0.05, within=0.15, samples_per_item=1)
    3925
    >>> sample_size_repeated(0.02, between=0.05, within=0.15, samples_per_item=8)
    1350
    """
    d = float(delta)
    if d == 0 or not math.isfinite(d):
        msg = f"`delta` must be a finite non-zero gap; got {delta!r}."
        raise ValueError(msg)
    b, w = _components(between, within)
    k = _samples(samples_per_item)
    raw = k_factor(alpha, power, alternative) * (b + w / k) / (d * d)
    return max(1, int(ceil_items(raw)))


def _components(between: float, within: float) -> tuple[float, float]:
    b, w = float(between), float(within)
    if not (math.isfinite(b) and b >= 0):
        msg = f"`between` must be a non-negative variance; got {between!r}."
        raise ValueError(msg)
    if not (math.isfinite(w) and w >= 0):
        msg = f"`within` must be a non-negative variance; got {within!r}."
        raise ValueError(msg)
    if b + w == 0:
        msg = "`between` and `within` are both 0: every score is the same."
        raise ValueError(msg)
    return b, w


def _samples(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        msg = f"`samples_per_item` must be a positive integer; got {k!r}."
        raise ValueError(msg)
    return int(k)


@dataclass(frozen=True, slots=True, repr=False)
class RepeatedSamplingPlanResult(Result):
    """Items needed and cost for K = 1..max samples per item (see :func:`repeated_sampling_plan`)."""

    samples_per_item: np.ndarray = field(compare=False)
    n_items: np.ndarray = field(compare=False)
    total_samples: np.ndarray = field(compare=False)
    cost: np.ndarray = field(compare=False)
    best_samples_per_item: int = 1
    optimal_k_continuous: float = 1.0

    _repr_fields = ("best_samples_per_item", "optimal_k_continuous")

    def summary(self) -> str:
        """A short human-readable summary."""
        lines = ["samples/item    items   total samples        cost"]
        for k, n, t, c in zip(self.samples_per_item, self.n_items, self.total_samples, self.cost, strict=False):
            mark = "  <- cheapest" if k == self.best_samples_per_item else ""
            lines.append(f"{k:>12} {n:>8,} {t:>15,} {c:>11,.0f}{mark}")
        return "\n".join(lines)


@public
def repeated_sampling_plan(
    delta: float,
    *,
    between: float,
    within: float,
    cost_per_item: float = 1.0,
    cost_per_sample: float = 1.0,
    max_samples_per_item: int = 32,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
) -> RepeatedSamplingPlanResult:
    r"""Plan "more items versus more samples per item" for a target gap ``delta``.

    Cost of a design with n items and K samples each: n (c_item + K c_sample) (c_item: writing or
    licensing an item, c_sample: one model call). The continuous optimum is the classic two-stage
    result :math:`K^* = \sqrt{(\sigma_w^2/\sigma_b^2)(c_{item}/c_{sample})}`; the plan lists every
    K up to ``max_samples_per_item`` and marks the cheapest.

    Parameters
    ----------
    delta : float
        The gap to detect, as a proportion for 0/1 scores (0.02 is 2 points); finite and non-zero.
    between : float
        Between-item variance sigma_b^2 (keyword-only), finite and >= 0.
    within : float
        Within-item (per-sample) variance sigma_w^2, finite and >= 0; not both 0.
    cost_per_item : float, default 1.0
        Cost c_item of one item (writing, licensing or preparing it), positive and finite; any
        unit, as long as it is the unit of ``cost_per_sample``.
    cost_per_sample : float, default 1.0
        Cost c_sample of one sample (one model call), positive and finite.
    max_samples_per_item : int, default 32
        Largest K listed, a positive integer.
    alpha : float, default 0.05
        Significance level, in (0, 1).
    power : float, default 0.8
        Target power, in (0, 1) and above ``alpha``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        As in :func:`sample_size_repeated`.

    Returns
    -------
    RepeatedSamplingPlanResult
        Arrays of shape (max_samples_per_item,), one entry per K = 1..max: ``samples_per_item``
        (K), ``n_items`` (N* of :func:`sample_size_repeated`), ``total_samples`` (n K) and ``cost``
        (n (c_item + K c_sample), float); ``best_samples_per_item``: the K of the lowest cost (the
        smallest such K on ties); ``optimal_k_continuous``: K* of the formula above (inf when
        ``between`` is 0: then more samples per item always pay).

    Examples
    --------
    Items are expensive to write (cost 20 calls each), within-item noise large:

    >>> from llm_power import repeated_sampling_plan
    >>> plan = repeated_sampling_plan(0.02, between=0.02, within=0.2, cost_per_item=20)
    >>> plan.best_samples_per_item, round(plan.optimal_k_continuous, 1)
    (14, 14.1)
    """
    b, w = _components(between, within)
    c_item = float(check_positive(cost_per_item, "cost_per_item"))
    c_sample = float(check_positive(cost_per_sample, "cost_per_sample"))
    kmax = _samples(max_samples_per_item)
    ks = np.arange(1, kmax + 1)
    n = np.array([sample_size_repeated(delta, between=b, within=w, samples_per_item=int(k), alpha=alpha,
                                       power=power, alternative=alternative) for k in ks])
    total = n * ks
    cost = n * (c_item + ks * c_sample)
    k_opt = math.inf if b == 0 else math.sqrt((w / b) * (c_item / c_sample))
    return RepeatedSamplingPlanResult(samples_per_item=ks, n_items=n, total_samples=total, cost=cost.astype(float),
                                best_samples_per_item=int(ks[np.argmin(cost)]), optimal_k_continuous=k_opt)
