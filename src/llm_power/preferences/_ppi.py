r"""Prediction-powered inference (PPI++) for judge-scored evals with a human-labelled subset.

n items carry a human label :math:`Y` and the judge's score :math:`f`; N more items carry the
judge's score only. PPI++ (Angelopoulos, Duchi and Zrnic, 2023) estimates the mean of :math:`Y` by

.. math:: \hat\theta_\lambda = \lambda\,\bar f_N + \overline{(Y - \lambda f)}_n,

unbiased for every :math:`\lambda` (the judge's bias is measured on the labelled items), with
variance :math:`\lambda^2\operatorname{Var}(f)/N + \operatorname{Var}(Y - \lambda f)/n`.
Power tuning picks :math:`\hat\lambda = \widehat{\operatorname{Cov}}(Y, f) /
((1 + n/N)\,\widehat{\operatorname{Var}}(f))`, clipped to [0, 1] — never worse than the
labels alone (:math:`\lambda = 0`) asymptotically, and classical PPI at :math:`\lambda = 1`.
Conventions (as the reference implementation ``ppi_py``): the covariance is the labelled items'
(divisor n), the judge variance pools labelled and unlabelled scores (divisor n + N - 1), the
standard error uses divisor n and N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core.errors import DataError
from .._core.params import public
from .._core.results import ConfidenceInterval, Result
from .._core.validation import check_confidence_level, check_open_unit, check_option
from .._kernel.quantiles import interval_half_width, level_quantile, t_pvalue

__all__ = ["labels_only_interval", "PPIResult", "ppi_labels_needed", "ppi_mean", "ppi_mean_difference"]


@dataclass(frozen=True, repr=False)
class PPIResult(Result):
    """Result of :func:`ppi_mean` / :func:`ppi_mean_difference`.

    ``estimate``, ``standard_error``, ``lam`` (the power-tuning weight used), ``n_labeled``,
    ``n_unlabeled``; ``classical_se``: the labels-only standard error (same divisor) for comparison;
    ``effective_labels``: how many labels alone would give this standard error.
    """

    estimate: float
    standard_error: float
    lam: float
    n_labeled: int
    n_unlabeled: int
    classical_estimate: float
    classical_se: float
    confidence_level: float
    alternative: str = "two-sided"

    _repr_fields: ClassVar[tuple[str, ...]] = ("estimate", "standard_error", "lam", "n_labeled", "n_unlabeled")

    @property
    def effective_labels(self) -> float:
        """N x (classical_se / standard_error)^2: the labelled-only sample with the same precision."""
        if self.standard_error == 0:
            return math.inf
        return float(self.n_labeled * (self.classical_se / self.standard_error) ** 2)

    @property
    def df(self) -> float:
        """Degrees of freedom of the t quantiles: labelled items - 1 (the labels' variance is the
        estimate that is scarce; measured coverage in ``docs/preferences.md``).
        """
        return float(self.n_labeled - 1)

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Student-t interval on n_labeled - 1 degrees of freedom (one-sided per ``alternative``)."""
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        half = float(interval_half_width(self.standard_error, level, self.alternative, self.df))
        if self.alternative == "two-sided":
            return ConfidenceInterval(self.estimate - half, self.estimate + half)
        if self.alternative == "greater":
            return ConfidenceInterval(self.estimate - half, math.inf)
        return ConfidenceInterval(-math.inf, self.estimate + half)

    def pvalue(self, null: float = 0.0) -> float:
        """T p-value (n_labeled - 1 df) of mean = ``null`` against ``alternative``."""
        if self.standard_error == 0:
            return 1.0 if self.estimate == null else 0.0
        return float(t_pvalue((self.estimate - null) / self.standard_error, self.df, self.alternative))


def _vector(values: Any, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        msg = f"{name} must be 1-D; got shape {x.shape}"
        raise ValueError(msg)
    if not np.all(np.isfinite(x)):
        i = int(np.argmax(~np.isfinite(x)))
        msg = f"{name}[{i}] is {float(x[i])!r}; PPI needs finite values (drop unlabelled or unjudged items first)"
        raise DataError(msg)
    return x


def _tuned_lambda(y: np.ndarray, f: np.ndarray, f_unl: np.ndarray) -> float:
    n, big_n = y.size, f_unl.size
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var = float(np.var(np.concatenate([f, f_unl]), ddof=1))
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


@public
def ppi_mean(y: Any, yhat: Any, yhat_unlabeled: Any, *, lam: float | None = None, confidence_level: float = 0.95,
             alternative: str = "two-sided") -> PPIResult:
    """Prediction-powered estimate of a mean (accuracy, win rate) from a few human labels and many
    judge scores.

    Parameters
    ----------
    y : array_like
        Human labels on the labelled items.
    yhat : array_like
        The judge's scores on the same labelled items.
    yhat_unlabeled : array_like
        The judge's scores on the items without human labels.
    lam : float, optional
        Fixed weight of the judge (0: labels only; 1: classical PPI). Default: power-tuned.
    confidence_level : float, default 0.95
        In (0, 1): the default level of the result's ``confidence_interval()``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The side of the result's interval and ``pvalue(null)``: ``"greater"`` gives a lower bound
        and tests mean > null, ``"less"`` an upper bound and mean < null.

    Returns
    -------
    PPIResult
        ``estimate`` (the PPI++ mean), ``standard_error``, ``lam`` (the weight used), ``n_labeled``,
        ``n_unlabeled``, ``classical_estimate`` / ``classical_se`` (the labels alone, divisor n),
        ``effective_labels``, ``confidence_interval()`` and ``pvalue(null)`` (Student t on
        n_labeled - 1 degrees of freedom). At least 2 labelled and 1 unlabelled items are needed;
        every value must be finite.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import ppi_mean
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(5000) < 0.7
    >>> judge = np.where(rng.random(5000) < 0.9, truth, ~truth).astype(float)
    >>> res = ppi_mean(truth[:200], judge[:200], judge[200:])
    >>> round(res.estimate, 3), round(res.standard_error, 4), round(res.classical_se, 4)
    (0.672, 0.0188, 0.034)
    """
    check_option(alternative, "alternative", ("two-sided", "greater", "less"))
    level = check_confidence_level(confidence_level)
    yv, f, f_unl = _vector(y, "y"), _vector(yhat, "yhat"), _vector(yhat_unlabeled, "yhat_unlabeled")
    if yv.shape != f.shape:
        msg = f"y and yhat must describe the same labelled items; got {yv.size} and {f.size}"
        raise ValueError(msg)
    if yv.size < 2 or f_unl.size < 1:
        msg = f"PPI needs at least 2 labelled and 1 unlabelled item; got {yv.size} and {f_unl.size}"
        raise DataError(msg)
    if lam is None:
        weight = _tuned_lambda(yv, f, f_unl)
    else:
        weight = float(lam)
        if not math.isfinite(weight):
            msg = f"lam must be finite; got {lam!r}"
            raise ValueError(msg)
    rect = yv - weight * f
    est = float(weight * f_unl.mean() + rect.mean())
    se = math.sqrt(float(np.var(weight * f_unl)) / f_unl.size + float(np.var(rect)) / yv.size)
    return PPIResult(estimate=est, standard_error=se, lam=weight, n_labeled=int(yv.size), n_unlabeled=int(f_unl.size),
                     classical_estimate=float(yv.mean()), classical_se=float(np.std(yv) / math.sqrt(yv.size)),
                     confidence_level=level, alternative=alternative)


@public
def ppi_mean_difference(y_a: Any, y_b: Any, yhat_a: Any, yhat_b: Any, yhat_a_unlabeled: Any, yhat_b_unlabeled: Any, *,
                        lam: float | None = None, confidence_level: float = 0.95,
                        alternative: str = "two-sided") -> PPIResult:
    """PPI++ for the difference of two models' means on the same items (A - B): the paired
    differences of labels and of judge scores go through :func:`ppi_mean`.

    Parameters
    ----------
    y_a, y_b : array_like
        Human labels of model A's and model B's answers on the same labelled items (aligned).
    yhat_a, yhat_b : array_like
        The judge's scores of the two models' answers on those labelled items.
    yhat_a_unlabeled, yhat_b_unlabeled : array_like
        The judge's scores of the two models on the items without human labels (aligned).
    lam : float, optional
        Fixed weight of the judge for the differences (0: labels only; 1: classical PPI).
        Default: power-tuned.
    confidence_level : float, default 0.95
        In (0, 1): the default level of the result's ``confidence_interval()``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: A's mean is higher than B's.

    Returns
    -------
    PPIResult
        As :func:`ppi_mean`, for the mean difference A - B: ``estimate``, ``standard_error``,
        ``lam``, ``classical_estimate`` / ``classical_se`` (labelled differences alone),
        ``confidence_interval()`` and ``pvalue()`` (of no difference by default).

    Examples
    --------
    Two models, 3,000 prompts judged by an LLM that agrees with humans 90 % of the time, 150 of
    them labelled by humans:

    >>> import numpy as np
    >>> from llm_power import ppi_mean_difference
    >>> rng = np.random.default_rng(0)
    >>> truth_a, truth_b = rng.random(3000) < 0.72, rng.random(3000) < 0.65
    >>> judge_a = np.where(rng.random(3000) < 0.9, truth_a, ~truth_a).astype(float)
    >>> judge_b = np.where(rng.random(3000) < 0.9, truth_b, ~truth_b).astype(float)
    >>> res = ppi_mean_difference(truth_a[:150], truth_b[:150], judge_a[:150], judge_b[:150],
    ...                           judge_a[150:], judge_b[150:])
    >>> round(res.estimate, 3), round(res.standard_error, 4), round(res.classical_se, 4)
    (-0.017, 0.0408, 0.0565)
    """
    arrays = [_vector(v, name) for v, name in ((y_a, "y_a"), (y_b, "y_b"), (yhat_a, "yhat_a"), (yhat_b, "yhat_b"),
                                                (yhat_a_unlabeled, "yhat_a_unlabeled"),
                                                (yhat_b_unlabeled, "yhat_b_unlabeled"))]
    if arrays[0].shape != arrays[1].shape or arrays[2].shape != arrays[3].shape or arrays[4].shape != arrays[5].shape:
        msg = "the two models must be scored on the same items (pairs of arrays of equal length)"
        raise ValueError(msg)
    return ppi_mean(arrays[0] - arrays[1], arrays[2] - arrays[3], arrays[4] - arrays[5], lam=lam,
                    confidence_level=confidence_level, alternative=alternative)


@public
def ppi_labels_needed(half_width: float, *, sd: float, correlation: float, n_unlabeled: float,
                      confidence_level: float = 0.95) -> int:
    r"""Human labels needed for a PPI++ interval of ±``half_width``.

    With the power-tuned weight the variance is
    :math:`\sigma^2 (1 - \rho^2 N/(n + N)) / n` (:math:`\sigma` the labels' sd, :math:`\rho` the
    correlation of label and judge score, N unlabelled items); this returns the smallest n with
    :math:`z_{1-\alpha/2}` x SE <= half_width. Estimate ``sd`` and ``correlation`` from a pilot
    (``np.std(y)``, ``np.corrcoef(y, yhat)[0, 1]``). Without a judge (rho = 0) it is the classical
    :math:`(z\sigma/h)^2`.

    Parameters
    ----------
    half_width : float
        The target half-width h of the two-sided interval, in the labels' units (0.02 = ±2
        points of accuracy); positive and finite.
    sd : float
        The labels' standard deviation sigma (non-negative; for 0/1 labels sqrt(p (1 - p))).
    correlation : float
        Correlation rho of the human label and the judge's score, in [-1, 1] (only rho^2 matters).
    n_unlabeled : float
        N, the items with a judge score only (positive).
    confidence_level : float, default 0.95
        Level of the interval, in (0, 1).

    Returns
    -------
    int
        The smallest number of labelled items n (at least 2) with z x SE <= ``half_width``.

    Examples
    --------
    ±2 points on an accuracy near 70 % (sd 0.458), a judge correlating 0.8 with humans, 10,000
    judged items:

    >>> from llm_power import ppi_labels_needed
    >>> ppi_labels_needed(0.02, sd=0.458, correlation=0.8, n_unlabeled=10_000)
    824
    >>> ppi_labels_needed(0.02, sd=0.458, correlation=0.0, n_unlabeled=10_000)
    2015
    """
    h = float(half_width)
    if not (h > 0 and math.isfinite(h)):
        msg = f"half_width must be a positive number; got {half_width!r}"
        raise ValueError(msg)
    if not (sd >= 0 and math.isfinite(sd)):
        msg = f"sd must be a non-negative number; got {sd!r}"
        raise ValueError(msg)
    rho2 = float(correlation) ** 2
    if rho2 > 1:
        msg = f"correlation must be in [-1, 1]; got {correlation!r}"
        raise ValueError(msg)
    big_n = float(n_unlabeled)
    if not big_n > 0:
        msg = f"n_unlabeled must be positive; got {n_unlabeled!r}"
        raise ValueError(msg)
    level = check_open_unit(confidence_level, "confidence_level")
    c = (float(level_quantile(level)) * sd / h) ** 2  # classical n
    # n (n + N) = c (n + N - rho^2 N)  ->  n^2 + (N - c) n - c N (1 - rho^2) = 0
    b = big_n - c
    n = (-b + math.sqrt(b * b + 4.0 * c * big_n * (1.0 - rho2))) / 2.0
    return max(2, math.ceil(n - 1e-9))


def labels_only_interval(result: PPIResult, confidence_level: float = 0.95) -> ConfidenceInterval:
    """The labels-only (classical) interval shown beside a PPI estimate: the labelled items' mean
    +- t on n_labeled - 1 degrees of freedom times ``classical_se``.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.preferences import labels_only_interval
    >>> res = ppi_mean([1, 0, 1, 1], [1, 0, 1, 0], [1, 1, 0, 1, 1, 0])
    >>> lo, hi = labels_only_interval(res)
    >>> bool(lo < res.classical_estimate < hi)
    True
    """
    half = float(interval_half_width(result.classical_se, confidence_level, "two-sided", result.n_labeled - 1))
    return ConfidenceInterval(result.classical_estimate - half, result.classical_estimate + half)
