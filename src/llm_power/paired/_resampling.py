"""Resampling tests for two models on the same items: paired bootstrap and sign-flip permutation.

Both work for any statistic of the item-level outputs, including non-linear ones (F1, precision)
given as a callable of the two aligned arrays. For the default statistic (the mean difference)
they use sufficient statistics and never touch items on the hot path:

- binary data: the paired bootstrap resamples the four cell counts of the 2x2 table
  (a multinomial draw), O(n_resamples) work whatever the number of items;
- the sign-flip test only flips the items where the models differ.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from scipy import special

from .._core.errors import ApproximationWarning, DegenerateDataWarning, warn
from .._core.files import limit
from .._core.params import public
from .._core.results import ConfidenceInterval, Result
from .._core.typing import SeedLike
from .._core.validation import (
    as_float_array,
    as_rng,
    check_alternative,
    check_confidence_level,
    check_option,
    is_binary,
)
from .._kernel.quantiles import z_quantile
from .._kernel.sufficient import paired_counts

__all__ = ["BootstrapResult", "paired_bootstrap"]

#: resample batches are sized to hold about this many array elements
RESAMPLE_BATCH_ELEMENTS = 2**22
#: below this many items (or clusters) the bootstrap warns that it is liberal
SMALL_SAMPLE = 30
#: exact enumeration of sign flips when the number of differing items is at most this
MAX_EXACT_FLIPS = 20

Statistic = Callable[..., Any]


@dataclass(frozen=True, slots=True, repr=False)
class BootstrapResult(Result):
    """Result of :func:`paired_bootstrap`.

    Attributes
    ----------
    estimate : float
        The statistic on the observed data (for the default: mean(a) - mean(b)).
    standard_error : float
        Standard deviation of the bootstrap distribution.
    pvalue : float
        Bootstrap p-value of H0: statistic = 0 (see :func:`paired_bootstrap`, Notes).
    n : int
        Number of items.
    n_resamples : int
    method : str
        ``"percentile"`` or ``"bca"``: how :meth:`confidence_interval` is computed.
    alternative : str
    confidence_level : float
        Default level of :meth:`confidence_interval`.
    n_clusters : int or None
        Number of clusters resampled (cluster bootstrap), else None.
    bootstrap_distribution : ndarray
        The ``n_resamples`` resampled statistics.
    """

    estimate: float
    standard_error: float
    pvalue: float
    n: int
    n_resamples: int
    method: str
    alternative: str
    confidence_level: float
    n_clusters: int | None
    bootstrap_distribution: np.ndarray = field(compare=False)
    _bias_z0: float = field(default=0.0, compare=False)
    _acceleration: float = field(default=0.0, compare=False)

    _repr_fields = ("estimate", "standard_error", "pvalue", "n", "n_resamples", "method")

    def _fields(self) -> tuple[str, ...]:
        return ("estimate", "standard_error", "pvalue", "n", "n_resamples", "method", "alternative",
                "confidence_level", "n_clusters")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Bootstrap confidence interval (percentile or BCa, one-sided per ``alternative``).

        Parameters
        ----------
        confidence_level : float, optional
            Defaults to the level given to :func:`paired_bootstrap`.
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        dist = self.bootstrap_distribution
        alpha = 1.0 - level
        if self.alternative == "two-sided":
            probs = np.array([alpha / 2.0, 1.0 - alpha / 2.0])
        elif self.alternative == "greater":
            probs = np.array([alpha, 1.0])
        else:
            probs = np.array([0.0, 1.0 - alpha])
        if self.method == "bca":
            z = z_quantile(np.clip(probs, 1e-300, 1 - 1e-16))
            z0, acc = self._bias_z0, self._acceleration
            adj = special.ndtr(z0 + (z0 + z) / (1.0 - acc * (z0 + z)))
            probs = np.where((probs > 0) & (probs < 1), adj, probs)
        low, high = np.quantile(dist, probs)
        if self.alternative == "greater":
            high = math.inf
        elif self.alternative == "less":
            low = -math.inf
        return ConfidenceInterval(float(low), float(high))

    def percentile_pvalue(self) -> float:
        """The p-value that inverts the percentile interval: the smallest alpha at which the (1 - alpha)
        percentile interval (:meth:`confidence_interval`, ``method="percentile"``) excludes 0, so that
        "the interval excludes 0" and "p <= alpha" are one statement (what :func:`llm_power.compare`
        reports with ``method="bootstrap"``).
        """
        dist = np.sort(self.bootstrap_distribution)
        if dist.size < 2:
            return 1.0
        q0 = float(np.interp(0.0, dist, np.linspace(0.0, 1.0, dist.size), left=0.0, right=1.0))
        if dist[0] == dist[-1]:  # no spread: all on one side of 0 (or at 0)
            q0 = 0.0 if dist[0] > 0 else (1.0 if dist[0] < 0 else 0.5)
        if self.alternative == "greater":
            return q0
        if self.alternative == "less":
            return 1.0 - q0
        return float(min(1.0, 2.0 * min(q0, 1.0 - q0)))

    def summary(self) -> str:
        """A short human-readable summary."""
        ci = self.confidence_interval()
        level = f"{100 * self.confidence_level:g}%"
        cl = f", {self.n_clusters} clusters" if self.n_clusters else ""
        return (
            f"Paired bootstrap ({self.n_resamples:,} resamples, {self.method}{cl})\n"
            f"  estimate {self.estimate:+.4f}  SE {self.standard_error:.4f}  p = {self.pvalue:.4g}\n"
            f"  {level} CI [{ci.low:+.4f}, {ci.high:+.4f}]  (n = {self.n} items)"
        )


# --- shared helpers ----------------------------------------------------------------------------

def _items(x: Any, name: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.ndim == 0:
        msg = f"`{name}` must be an array of per-item outputs; got a scalar."
        raise ValueError(msg)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        msg = f"`{name}` must contain finite values (no NaN or inf); item {int(bad[0])} is not."
        raise ValueError(msg)
    return arr


def check_items(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a_arr, b_arr = _items(a, "a"), _items(b, "b")
    if a_arr.shape != b_arr.shape:
        msg = f"`a` and `b` must be aligned per-item outputs of the same shape; got {a_arr.shape} and {b_arr.shape}."
        raise ValueError(
            msg
        )
    if a_arr.shape[0] < 2:
        msg = f"need at least 2 items; got {a_arr.shape[0]}."
        raise ValueError(msg)
    return a_arr, b_arr


def resolve_statistic(statistic: Any) -> Statistic | None:
    """None for the built-in mean difference, else the callable."""
    if isinstance(statistic, str):
        check_option(statistic, "statistic", ("mean",))
        return None
    if callable(statistic):
        return cast(Statistic, statistic)
    msg = f"`statistic` must be 'mean' or a callable f(a, b) -> float; got {statistic!r}."
    raise TypeError(msg)


def accepts_axis(func: Statistic) -> bool:
    try:
        return "axis" in inspect.signature(func).parameters
    except (TypeError, ValueError):  # builtins without signatures
        return False


def call_statistic(func: Statistic, a: np.ndarray, b: np.ndarray, *, batched: bool) -> np.ndarray:
    """Evaluate a user statistic on one (a, b) pair or a batch (leading batch axis)."""
    if batched:
        out = np.asarray(func(a, b, axis=1), dtype=float)
        if out.shape != (a.shape[0],):
            msg = (
                f"`statistic` called with axis=1 on a batch of {a.shape[0]} resamples must return "
                f"{a.shape[0]} values; got shape {out.shape}."
            )
            raise ValueError(
                msg
            )
        return out
    if accepts_axis(func):
        return call_statistic(func, a[None], b[None], batched=True).reshape(())
    value = np.asarray(func(a, b), dtype=float)
    if value.size != 1:
        msg = f"`statistic` must return one number; got shape {value.shape}."
        raise ValueError(msg)
    return value.reshape(())


def batch_size(n_items: int, item_size: int = 1) -> int:
    return max(1, RESAMPLE_BATCH_ELEMENTS // max(1, n_items * item_size))


def pvalue_from_null(null: np.ndarray, observed: float, alternative: str, *, add_one: bool) -> float:
    """p-value from a null distribution; ties within a relative 1e-9 count as extreme."""
    tol = 1e-9 * max(1.0, abs(observed))
    if alternative == "two-sided":
        count = np.count_nonzero(np.abs(null) >= abs(observed) - tol)
    elif alternative == "greater":
        count = np.count_nonzero(null >= observed - tol)
    else:
        count = np.count_nonzero(null <= observed + tol)
    if add_one:
        return float((count + 1) / (null.size + 1))
    return float(count / null.size)


# --- paired bootstrap ----------------------------------------------------------------------------

@public
def paired_bootstrap(
    a: Any,
    b: Any,
    *,
    statistic: str | Statistic = "mean",
    n_resamples: int = 10_000,
    cluster: Any = None,
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
    method: str = "percentile",
    rng: SeedLike = None,
) -> BootstrapResult:
    r"""Paired bootstrap (Koehn 2004): resample items with replacement, both models together.

    Parameters
    ----------
    a, b : array_like, shape (n_items,) or (n_items, ...)
        Aligned per-item outputs of model A and B: scores, or richer per-item records (e.g.
        columns tp, fp, fn) for a callable ``statistic``. Items are rows.
    statistic : "mean" or callable, default "mean"
        ``"mean"``: the mean difference mean(a) - mean(b) (an accuracy difference for 0/1 data).
        A callable ``f(a_resampled, b_resampled) -> float`` gives any statistic, e.g. an F1
        difference. If it accepts an ``axis`` keyword it is called on batches of resamples with
        a leading batch axis and ``axis=1`` (the item axis) and must return one value per resample.
    n_resamples : int, default 10_000
    cluster : array_like, optional
        One label per item (subject, source document, prompt template). Whole clusters are then
        resampled with replacement (block bootstrap), which keeps the within-cluster correlation.
    confidence_level : float, default 0.95
        Default level of :meth:`BootstrapResult.confidence_interval`.
    alternative : {"two-sided", "less", "greater"}
        For the p-value and the interval; "greater" means A > B.
    method : {"percentile", "bca"}, default "percentile"
        Interval method; BCa uses the jackknife (over items, or over clusters) for the
        acceleration.
    rng : None, int or numpy.random.Generator
        Seed or generator; same seed, same numbers.

    Returns
    -------
    BootstrapResult

    Warns
    -----
    ApproximationWarning
        With fewer than 30 items (or clusters): the bootstrap underestimates the spread of a
        small sample and its p-values are liberal (measured: type-I error 0.076 at n = 20 for a
        nominal 0.05); prefer :func:`permutation_test`.

    Notes
    -----
    *Binary data, mean statistic*: the resampled 2x2 table is a multinomial draw with the
    observed cell frequencies, which has exactly the distribution of the item-level resample;
    it is drawn directly (O(n_resamples) work). *Other data* are resampled in vectorised batches
    of bounded memory (about 2**22 elements at a time).

    The p-value tests H0: statistic = 0 by shifting the bootstrap distribution to the null
    (Efron & Tibshirani 1993, sec. 16.4; Berg-Kirkpatrick et al. 2012): two-sided
    :math:`p = (1 + \#\{|\theta^*_b - \hat\theta| \ge |\hat\theta|\})/(B + 1)`, one-sided with
    :math:`\theta^*_b - \hat\theta \ge \hat\theta` ("greater") or :math:`\le \hat\theta` ("less").
    The standard error is the standard deviation of :math:`\theta^*` (ddof = 1).

    References
    ----------
    .. [1] Koehn, P. (2004). Statistical significance tests for machine translation evaluation.
       EMNLP, 388-395.
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
    .. [3] Berg-Kirkpatrick, T., Burkett, D. & Klein, D. (2012). An empirical investigation of
       statistical significance in NLP. EMNLP-CoNLL, 995-1005.

    Examples
    --------
    Two models on 1,000 questions, A right on 780, B on 760, disagreeing on 100:

    >>> import numpy as np
    >>> from llm_power import paired_bootstrap
    >>> a = np.r_[np.ones(720), np.ones(60), np.zeros(40), np.zeros(180)]
    >>> b = np.r_[np.ones(720), np.zeros(60), np.ones(40), np.zeros(180)]
    >>> res = paired_bootstrap(a, b, rng=0)
    >>> round(res.estimate, 3), round(res.standard_error, 3)
    (0.02, 0.01)
    >>> lo, hi = res.confidence_interval()
    >>> round(lo, 2), round(hi, 2)
    (0.0, 0.04)
    """
    a_arr, b_arr = check_items(a, b)
    func = resolve_statistic(statistic)
    n_resamples = check_resamples(n_resamples)
    confidence_level = check_confidence_level(confidence_level)
    alternative = check_alternative(alternative)
    method = check_option(method, "method", ("percentile", "bca"))
    gen = as_rng(rng)
    n = a_arr.shape[0]
    labels = _cluster_codes(cluster, n)

    if func is None and a_arr.ndim != 1:
        msg = "`statistic` 'mean' needs 1-D per-item scores; pass a callable for richer items."
        raise ValueError(msg)

    if func is None:
        d = a_arr - b_arr
        estimate = float(d.mean())
        if labels is None and is_binary(a_arr, b_arr):
            dist = _bootstrap_binary_mean(a_arr, b_arr, n_resamples, gen)
        elif labels is None:
            dist = _bootstrap_mean(d, n_resamples, gen)
        else:
            dist = _bootstrap_cluster_mean(d, labels, n_resamples, gen)
    else:
        estimate = float(call_statistic(func, a_arr, b_arr, batched=False))
        dist = _bootstrap_callable(func, a_arr, b_arr, labels, n_resamples, gen)

    units = n if labels is None else int(labels.max() + 1)
    if units < SMALL_SAMPLE:
        warn(
            f"only {units} {'items' if labels is None else 'clusters'}: bootstrap p-values and "
            "intervals are too liberal with so few (type-I error near 0.08 at n = 20); use "
            "permutation_test, or paired_t when the differences look normal.",
            ApproximationWarning,
        )
    se = float(dist.std(ddof=1))
    if se == 0.0:
        warn("the bootstrap distribution has zero spread (e.g. identical models or one "
                      "cluster): the interval has zero width and the p-value is not informative.",
                      DegenerateDataWarning)
    centred = dist - estimate
    pvalue = 1.0 if estimate == 0.0 else pvalue_from_null(centred, estimate, alternative, add_one=True)
    z0 = acc = 0.0
    if method == "bca":
        z0, acc = _bca_parameters(dist, estimate, func, a_arr, b_arr, labels)
    return BootstrapResult(
        estimate=estimate, standard_error=se, pvalue=pvalue, n=n, n_resamples=n_resamples,
        method=method, alternative=alternative, confidence_level=confidence_level,
        n_clusters=None if labels is None else int(labels.max() + 1),
        bootstrap_distribution=dist, _bias_z0=z0, _acceleration=acc,
    )


def check_resamples(n_resamples: Any) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        msg = f"`n_resamples` must be a positive integer; got {n_resamples!r}."
        raise TypeError(msg)
    if n_resamples < 1:
        msg = f"`n_resamples` must be a positive integer; got {n_resamples!r}."
        raise ValueError(msg)
    cap = limit("LLM_POWER_MAX_RESAMPLES")
    if n_resamples > cap:
        msg = (
            f"`n_resamples` must be at most {cap:,} (the resampled distribution is kept in "
                         f"memory: {n_resamples:,} resamples need {8 * n_resamples / 2**30:.1f} GiB; "
                         f"LLM_POWER_MAX_RESAMPLES raises the limit); got "
                         f"{n_resamples:,}. 10,000-100,000 resamples give p-values to about 0.001."
        )
        raise ValueError(msg)
    return int(n_resamples)


def _cluster_codes(cluster: Any, n: int) -> np.ndarray | None:
    """Integer codes 0..G-1 for per-item cluster labels, or None (missing labels: DataError)."""
    if cluster is None:
        return None
    from .._core.clusters import code_labels

    return code_labels(cluster, n)[0]


def _bootstrap_binary_mean(a: np.ndarray, b: np.ndarray, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """Accuracy difference under resampling of the 2x2 table (multinomial on the 4 cells)."""
    n = a.size
    _, n10, n01, _ = paired_counts(a, b)
    # Only the discordant cells matter: draw (n10*, n01*, rest*) from a 3-cell multinomial.
    probs = np.array([n10, n01, n - n10 - n01], dtype=float) / n
    counts = gen.multinomial(n, probs, size=n_resamples)
    return (counts[:, 0] - counts[:, 1]) / n


def _bootstrap_mean(d: np.ndarray, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    n = d.size
    out = np.empty(n_resamples)
    step = batch_size(n)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        idx = gen.integers(0, n, size=(stop - start, n))
        out[start:stop] = d[idx].mean(axis=1)
    return out


def _bootstrap_cluster_mean(d: np.ndarray, codes: np.ndarray, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """Block bootstrap of the mean difference from per-cluster sums (ratio estimator)."""
    n_groups = int(codes.max() + 1)
    sums = np.bincount(codes, weights=d, minlength=n_groups)
    sizes = np.bincount(codes, minlength=n_groups).astype(float)
    out = np.empty(n_resamples)
    step = batch_size(n_groups)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        idx = gen.integers(0, n_groups, size=(stop - start, n_groups))
        out[start:stop] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    return out


def _bootstrap_callable(func: Statistic, a: np.ndarray, b: np.ndarray, codes: np.ndarray | None,
                        n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    n = a.shape[0]
    batched = accepts_axis(func)
    out = np.empty(n_resamples)
    if codes is not None:
        order = np.argsort(codes, kind="stable")
        n_groups = int(codes.max() + 1)
        members = np.split(order, np.cumsum(np.bincount(codes, minlength=n_groups))[:-1])
        for i in range(n_resamples):
            pick = gen.integers(0, n_groups, size=n_groups)
            idx = np.concatenate([members[g] for g in pick])
            out[i] = call_statistic(func, a[idx], b[idx], batched=False)
        return out
    item_size = int(np.prod(a.shape[1:], dtype=np.int64)) if a.ndim > 1 else 1
    step = batch_size(n, item_size) if batched else 1
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        if batched:
            rows = gen.integers(0, n, size=(stop - start, n))
            out[start:stop] = call_statistic(func, a[rows], b[rows], batched=True)
        else:
            one = np.asarray(gen.integers(0, n, size=n))
            out[start] = call_statistic(func, a[one], b[one], batched=False)
    return out


def _bca_parameters(dist: np.ndarray, estimate: float, func: Statistic | None, a: np.ndarray,
                    b: np.ndarray, codes: np.ndarray | None) -> tuple[float, float]:
    """Bias correction z0 and jackknife acceleration (Efron 1987)."""
    below = np.count_nonzero(dist < estimate) + 0.5 * np.count_nonzero(dist == estimate)
    z0 = float(z_quantile(np.clip(below / dist.size, 1e-12, 1 - 1e-12)))
    jack, weights = _jackknife(func, a, b, codes)
    mean = np.sum(weights * jack) / np.sum(weights)
    dev = mean - jack
    num = np.sum(weights * dev**3)
    den = 6.0 * np.sum(weights * dev**2) ** 1.5
    acc = float(num / den) if den > 0 else 0.0
    return z0, acc


def _jackknife(func: Statistic | None, a: np.ndarray, b: np.ndarray,
               codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out values and their multiplicities (items, or clusters when given)."""
    n = a.shape[0]
    if func is None:
        d = a - b
        if codes is None:
            values, counts = np.unique(d, return_counts=True)  # few distinct values for 0/1 data
            return (d.sum() - values) / (n - 1), counts.astype(float)
        n_groups = int(codes.max() + 1)
        sums = np.bincount(codes, weights=d, minlength=n_groups)
        sizes = np.bincount(codes, minlength=n_groups).astype(float)
        return (d.sum() - sums) / (n - sizes), np.ones(n_groups)
    if codes is None:
        keep = np.ones(n, dtype=bool)
        out = np.empty(n)
        for i in range(n):
            keep[i] = False
            out[i] = call_statistic(func, a[keep], b[keep], batched=False)
            keep[i] = True
        return out, np.ones(n)
    n_groups = int(codes.max() + 1)
    out = np.empty(n_groups)
    for g in range(n_groups):
        keep = codes != g
        out[g] = call_statistic(func, a[keep], b[keep], batched=False)
    return out, np.ones(n_groups)
