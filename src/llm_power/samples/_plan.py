r"""Planning evals with several samples per question: questions versus samples per question for a
target half-width of pass@k, and the smallest detectable difference between two models.

The variance of a benchmark's pass@k over N questions with m samples each is
:math:`(\sigma^2_{between} + \overline{\operatorname{Var}}_m)/N`: the spread of the questions' true
pass@k (only more questions shrink it) plus the estimator's noise with m samples (more samples
shrink it). Both are estimated from a pilot (see :mod:`llm_power.samples` for the estimators).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from .._core.errors import DataError
from .._core.params import public
from .._core.results import Result
from .._core.validation import check_confidence_level, check_int_at_least, check_option
from .._kernel.quantiles import k_constant, level_quantile
from ._passk import (
    METRICS,
    conditional_variance,
    falling_ratio,
    k_values,
    metric_values,
    per_question_values,
    sample_counts,
)

__all__ = ["PassAtKPlanResult", "pass_at_k_mde", "pass_at_k_plan"]


def _components(metric: str, n: np.ndarray, c: np.ndarray, k: int,
                samples: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Per-question estimates at the pilot, the between-question variance of the true metric
    (method of moments: the estimates' variance minus their mean conditional variance, >= 0), and
    the mean conditional variance at each candidate number of samples per question.
    """
    ks = np.array([k])
    est = per_question_values(metric, n, c, ks)[:, 0]
    noise = conditional_variance(metric, n, c, ks)[:, 0]
    between = max(0.0, float(est.var(ddof=1) - noise.mean()))
    within = np.array([float(np.mean(_variance_at(metric, n, c, k, int(size)))) for size in samples])
    return est, between, within


def _variance_at(metric: str, n: np.ndarray, c: np.ndarray, k: int, m: int) -> np.ndarray:
    """Per pilot question: Var of its estimate with m samples, Var(U_m | p) = E U_m^2 - pi_k(p)^2.

    Unbiased from the pilot's n samples where m <= n and 2k <= n: E U_m^2 by the hypergeometric
    law of c' passes among m of the n pilot samples (unbiased for the binomial weights), pi_k^2 by
    the products of binomial ratios (see :func:`conditional_variance`). Else the binomial
    variance at p = c / n (an extrapolation beyond the pilot).
    """
    grid = np.arange(m + 1)
    f = metric_values(metric, np.full(grid.size, m), grid, np.full(grid.size, k))
    out = np.empty(n.size)
    exact = (m <= n) & (2 * k <= n)
    if np.any(exact):
        rows = np.nonzero(exact)[0]
        pmf = stats.hypergeom.pmf(grid[None, :], n[rows, None], c[rows, None], m)
        second = pmf @ (f * f)
        nn, cc = n[rows], c[rows]
        kk = np.full(rows.size, k if metric != "avg@k" else 1)
        if metric == "pass^k":
            square = falling_ratio(cc, nn, 2 * kk)
        elif metric == "pass@k":
            square = 1.0 - 2.0 * falling_ratio(nn - cc, nn, kk) + falling_ratio(nn - cc, nn, 2 * kk)
        else:
            square = falling_ratio(cc, nn, 2 * kk)  # p^2
        out[rows] = second - square
    if np.any(~exact):
        rows = np.nonzero(~exact)[0]
        pmf = stats.binom.pmf(grid[None, :], m, (c[rows] / n[rows])[:, None])
        mean = pmf @ f
        out[rows] = np.maximum(pmf @ (f * f) - mean * mean, 0.0)
    return out


@dataclass(frozen=True, repr=False)
class PassAtKPlanResult(Result):
    """Result of :func:`pass_at_k_plan`: questions needed for each number of samples per question.

    ``samples_per_question``, ``n_questions``, ``cost`` (n_questions x (cost_per_question +
    samples x cost_per_sample)), ``best_samples_per_question`` (the cheapest), ``between`` (the
    between-question variance of the true per-question metric) and ``within`` (the mean
    variance of one question's estimate, per candidate number of samples).
    """

    metric: str
    k: int
    half_width: float
    samples_per_question: np.ndarray
    n_questions: np.ndarray
    cost: np.ndarray
    best_samples_per_question: int
    between: float
    within: np.ndarray
    confidence_level: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("metric", "k", "half_width", "best_samples_per_question")

    def to_frame(self) -> Any:
        """One row per candidate number of samples (pandas)."""
        import pandas as pd

        return pd.DataFrame({"samples_per_question": self.samples_per_question, "n_questions": self.n_questions,
                             "cost": self.cost, "within": self.within})


@public
def pass_at_k_plan(pilot: Any, k: int, half_width: float, *, metric: str = "pass@k",  # noqa: PLR0913
                   samples_per_question: Any = None, cost_per_question: float = 1.0, cost_per_sample: float = 1.0,
                   confidence_level: float = 0.95) -> PassAtKPlanResult:
    r"""Questions versus samples per question for a target half-width of pass@k (questions population).

    The variance of the benchmark's pass@k over N questions with m samples each is
    :math:`(\sigma^2_{between} + \overline{\operatorname{Var}}_m)/N`: the spread of the questions'
    true pass@k, which only more questions shrink, plus the estimator's noise with m samples,
    which more samples shrink. Both come from a ``pilot`` (questions x samples 0/1, or (n, c)):
    the noise exactly, from each pilot question's pass rate; the spread by the method of moments.
    For each candidate m (default k..max(4k, 32)) the plan gives the N for
    z x SE <= ``half_width`` and the cost N (cost_per_question + m cost_per_sample).

    Parameters
    ----------
    pilot : array_like (questions x samples) or tuple (n, c)
        The pilot's 0/1 results per sample (NaN where a question has fewer samples), or its
        per-question sample and pass counts; at least 3 questions, each with at least k samples.
    k : int
        The k of pass@k (at least 1).
    half_width : float
        Target half-width of the two-sided interval, on the metric's [0, 1] scale (0.03 = ±3
        points); positive and finite.
    metric : {"pass@k", "pass^k", "avg@k"}, default "pass@k"
        The metric planned for.
    samples_per_question : int or sequence of int, optional
        The candidate numbers of samples per question m, each at least k. Default None:
        k, k + 1, ..., max(4k, 32).
    cost_per_question : float, default 1.0
        Cost of adding a question (writing, grading setup), in any unit.
    cost_per_sample : float, default 1.0
        Cost of one sample (generation and scoring), in the same unit.
    confidence_level : float, default 0.95
        Level of the planned interval, in (0, 1).

    Returns
    -------
    PassAtKPlanResult
        Per candidate m (arrays of the candidates' length): ``samples_per_question``,
        ``n_questions`` (at least 2), ``cost`` and ``within`` (the mean variance of one question's
        estimate with m samples); ``best_samples_per_question`` (the cheapest m), ``between`` (the
        between-question variance, floored at 0), ``metric``, ``k``, ``half_width``,
        ``confidence_level``; ``to_frame()`` gives one row per candidate.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import pass_at_k_plan
    >>> rng = np.random.default_rng(0)
    >>> pilot = (rng.random((60, 16)) < rng.beta(0.6, 0.9, 60)[:, None]).astype(float)
    >>> plan = pass_at_k_plan(pilot, 1, 0.03, cost_per_question=10)
    >>> int(plan.best_samples_per_question), int(plan.n_questions[plan.samples_per_question == 1][0])
    (4, 905)
    """
    check_option(metric, "metric", METRICS)
    level = check_confidence_level(confidence_level)
    n, c = sample_counts(pilot)
    if n.size < 3:
        msg = f"a pilot needs at least 3 questions to estimate their spread; got {n.size}"
        raise DataError(msg)
    k = check_int_at_least(k, "k", 1)
    k_values(k, n)
    if not (half_width > 0 and math.isfinite(half_width)):
        msg = f"half_width must be a positive number; got {half_width!r}"
        raise ValueError(msg)
    if samples_per_question is None:
        samples = np.arange(k, max(4 * k, 32) + 1)
    else:
        samples = np.atleast_1d(np.asarray(samples_per_question)).astype(np.int64)
        if np.any(samples < k):
            msg = f"every samples_per_question must be at least k = {k}"
            raise ValueError(msg)
    _, between, within = _components(metric, n, c, k, samples)
    z = float(level_quantile(level))
    n_questions = np.ceil(z * z * (between + within) / (half_width * half_width) - 1e-9).astype(np.int64)
    n_questions = np.maximum(n_questions, 2)
    cost = n_questions * (float(cost_per_question) + samples * float(cost_per_sample))
    return PassAtKPlanResult(metric=metric, k=k, half_width=float(half_width), samples_per_question=samples,
                             n_questions=n_questions, cost=cost.astype(float),
                             best_samples_per_question=int(samples[np.argmin(cost)]), between=between, within=within,
                             confidence_level=level)


@public
def pass_at_k_mde(pilot_a: Any, pilot_b: Any, k: int, *, n_questions: int, samples_per_question: int,  # noqa: PLR0913
                  metric: str = "pass@k", alpha: float = 0.05, power: float = 0.8) -> float:
    r"""Smallest difference in pass@k between two models that a paired comparison on
    ``n_questions`` questions with ``samples_per_question`` samples each detects with ``power``.

    From pilots of both models on the same questions: the variance of the per-question difference
    is the spread of the true differences (method of moments on the pilot) plus both estimators'
    noise at the planned number of samples; MDE = (z_{1-alpha/2} + z_power) x sqrt(variance / N).

    Parameters
    ----------
    pilot_a, pilot_b : array_like (questions x samples) or tuple (n, c)
        The two models' pilot results on the same questions (0/1 per sample, or per-question
        sample and pass counts); at least 3 questions, each with at least k samples.
    k : int
        The k of pass@k (at least 1).
    n_questions : int
        N, questions of the planned comparison (at least 2).
    samples_per_question : int
        Samples per question and model in the planned comparison (at least k).
    metric : {"pass@k", "pass^k", "avg@k"}, default "pass@k"
        The metric compared.
    alpha : float, default 0.05
        Level of the two-sided paired test, in (0, 1).
    power : float, default 0.8
        Probability of detecting a true difference of the returned size, in (0, 1).

    Returns
    -------
    float
        The minimum detectable difference (absolute, on the metric's [0, 1] scale: 0.035 = 3.5
        points); it shrinks as 1 / sqrt(n_questions).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import pass_at_k_mde
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(0.6, 0.9, 80)
    >>> a = (rng.random((80, 8)) < p[:, None]).astype(float)
    >>> b = (rng.random((80, 8)) < np.clip(p + 0.05, 0, 1)[:, None]).astype(float)
    >>> round(pass_at_k_mde(a, b, 4, n_questions=500, samples_per_question=8), 3)
    0.035
    """
    from .._core.validation import check_open_unit

    check_option(metric, "metric", METRICS)
    alpha = check_open_unit(alpha, "alpha")
    power = check_open_unit(power, "power")
    na, ca = sample_counts(pilot_a)
    nb, cb = sample_counts(pilot_b)
    if na.size != nb.size or na.size < 3:
        msg = f"the two pilots must cover the same questions (at least 3); got {na.size} and {nb.size}"
        raise DataError(msg)
    k = check_int_at_least(k, "k", 1)
    k_values(k, np.minimum(na, nb))
    m = check_int_at_least(samples_per_question, "samples_per_question", k)
    big_n = check_int_at_least(n_questions, "n_questions", 2)
    est_a, _, within_a = _components(metric, na, ca, k, np.array([m]))
    est_b, _, within_b = _components(metric, nb, cb, k, np.array([m]))
    ks = np.array([k])
    noise = conditional_variance(metric, na, ca, ks)[:, 0] + conditional_variance(metric, nb, cb, ks)[:, 0]
    between_d = max(0.0, float((est_a - est_b).var(ddof=1) - noise.mean()))
    var = between_d + float(within_a[0] + within_b[0])
    return float(math.sqrt(k_constant(alpha, power)) * math.sqrt(var / big_n))
