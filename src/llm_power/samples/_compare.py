"""Two models compared on pass@k (or pass^k, avg@k) over the same questions: the paired difference
of the per-question estimates with its interval, per k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core.params import public
from .._core.results import ConfidenceInterval, Result, renamed_field, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least, check_option
from .._kernel.quantiles import level_quantile, t_pvalue
from .._kernel.wild_decision import wild_seed
from ._passk import (
    METRICS,
    check_cluster_method,
    k_values,
    mean_and_se,
    per_question_values,
    question_cluster_codes,
    sample_counts,
    wild_test,
)
from ._resampling import bootstrap_means

__all__ = ["PassAtKComparison", "compare_pass_at_k"]


@dataclass(frozen=True, repr=False)
class PassAtKComparison(Result):
    """Result of :func:`compare_pass_at_k`: model A - model B at each k on the same questions.

    ``difference``, ``standard_error``, ``pvalue`` (paired t over questions, per k; with clusters the
    test of ``cluster_method``), ``ci_low`` / ``ci_high`` (pointwise, the same test's interval),
    ``band_ci_low`` / ``band_ci_high`` (simultaneous over all k: max-t bootstrap over questions),
    ``critical_value`` of the band, and ``band_excludes_zero`` — the k where the band excludes 0
    (family-wise error over k at most 1 - confidence level); ``cluster_method`` the clustered test
    (None without clusters; :data:`llm_power._core.options.CLUSTER_METHOD_LABELS`). This is not
    the package's *resolved* verdict (q >= 1 and the test rejects, :func:`~llm_power.compare`): the
    band says a difference exists jointly over k, not that the benchmark is big enough for it.
    """

    metric: str
    k: np.ndarray
    difference: np.ndarray
    standard_error: np.ndarray
    pvalue: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    band_ci_low: np.ndarray
    band_ci_high: np.ndarray
    critical_value: float
    band_excludes_zero: np.ndarray
    n_questions: int
    n_clusters: int | None
    confidence_level: float
    cluster_method: str | None = None

    _repr_fields: ClassVar[tuple[str, ...]] = ("metric", "k", "difference", "band_excludes_zero")
    band_low = renamed_field("band_low", "band_ci_low")
    band_high = renamed_field("band_high", "band_ci_high")

    @public
    def confidence_interval(self, confidence_level: float | None = None, *,
                            simultaneous: bool = False) -> ConfidenceInterval:
        """The pointwise intervals of the difference at each k, or with ``simultaneous=True`` the
        band that holds for every k at once (max-t).
        """
        low, high = (self.band_ci_low, self.band_ci_high) if simultaneous else (self.ci_low, self.ci_high)
        return stored_interval(low, high, self.confidence_level, confidence_level,
                               recompute="run compare_pass_at_k(..., confidence_level=confidence_level)")

    def to_frame(self) -> Any:
        """One row per k (pandas)."""
        import pandas as pd

        return pd.DataFrame({"k": self.k, "difference": self.difference, "standard_error": self.standard_error,
                             "pvalue": self.pvalue, "ci_low": self.ci_low, "ci_high": self.ci_high,
                             "band_ci_low": self.band_ci_low, "band_ci_high": self.band_ci_high,
                             "band_excludes_zero": self.band_excludes_zero})


@public
def compare_pass_at_k(results_a: Any, results_b: Any, k: Any = None, *, metric: str = "pass@k",  # noqa: PLR0913
                      cluster: Any = None, confidence_level: float = 0.95, n_resamples: int = 4000,
                      rng: SeedLike = None, cluster_method: str = "cr2") -> PassAtKComparison:
    """Two models (or a base and a tuned checkpoint) on the same questions, at every k.

    Per k the paired difference of the per-question estimates, its standard error over questions
    (cluster-robust with ``cluster``), a paired t test and interval, and a band that holds for all
    k at once: the max over k of the studentised bootstrap deviations (questions, or whole
    clusters, resampled) gives its critical value. ``band_excludes_zero`` marks the k where the
    band excludes 0. ``k`` defaults to 1..the fewest samples of any question.

    Parameters
    ----------
    results_a, results_b : array_like (questions x samples) or tuple (n, c)
        Each model's 0/1 results per sample (NaN where a question has fewer samples) or its
        per-question sample and pass counts, on the same questions in the same order (else a
        ValueError).
    k : int or sequence of int, optional
        The k to compare, each at most the samples of every question of both models. Default
        None: every k from 1 to the fewest samples of any question.
    metric : {"pass@k", "pass^k", "avg@k"}, default "pass@k"
        The per-question estimator whose difference is compared.
    cluster : array_like, optional
        A group per question (task, subject): the clustered test of ``cluster_method`` per k and
        whole clusters resampled for the band. Default None.
    confidence_level : float, default 0.95
        Level of the pointwise intervals and of the simultaneous band, in (0, 1).
    n_resamples : int, default 4000
        Bootstrap resamples for the band's critical value (at least 100).
    rng : seed or Generator, optional
        For the bootstrap; a seed makes the band (and the wild cluster bootstrap) reproducible. The
        wild weights are drawn from ``wild_seed`` of this generator before the band draws anything,
        as :func:`~llm_power.compare` draws them.
    cluster_method : {"cr2", "cv3", "wild"}, default "cr2"
        With ``cluster``, the test and pointwise interval of each k's difference (as
        :func:`~llm_power.compare`'s ``cluster_method``): ``"cr2"`` the t test on the CR2 variance
        with the smallest Imbens-Kolesar df of the k; ``"cv3"`` the t test on the cluster jackknife's
        variance, G - 1 df; ``"wild"`` the restricted wild cluster bootstrap (CR1-studentised, Webb's
        weights up to 11 clusters, all 2^G sign vectors when at most 9,999) and the interval that
        inverts it, every k with the same draws -- ``standard_error`` is then the CR1 SE that
        studentises it. A method other than "cr2" needs ``cluster`` (else a ValueError).

    Returns
    -------
    PassAtKComparison
        Arrays of shape (len(k),): ``k``, ``difference`` (A - B), ``standard_error``, ``pvalue``
        (two-sided paired t), ``ci_low`` / ``ci_high`` (pointwise), ``band_ci_low`` / ``band_ci_high``
        (simultaneous, never narrower than the pointwise interval) and ``band_excludes_zero``;
        ``critical_value`` of the band, ``n_questions``, ``n_clusters``, ``metric`` and
        ``confidence_level``. ``to_frame()`` gives one row per k.

    Notes
    -----
    The band keeps one construction for every ``cluster_method``: ``difference +- c * standard_error``
    with c the (``confidence_level``) quantile of the bootstrap's max over k of
    ``|resampled - observed| / standard_error``, and c never below the pointwise t quantile. Its
    standard error is the chosen method's (CR2, CV3, or with ``"wild"`` the CR1 SE that studentises
    the wild test), so it is a max-t band on that SE, not an inversion of the wild test; with
    ``"wild"`` it is widened where needed to contain the pointwise wild interval, so it is never
    narrower than the pointwise interval at any k.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import compare_pass_at_k
    >>> rng = np.random.default_rng(1)
    >>> p = rng.beta(0.7, 0.8, 200)
    >>> base = (rng.random((200, 8)) < p[:, None]).astype(float)
    >>> tuned = (rng.random((200, 8)) < np.clip(p + 0.1, 0, 1)[:, None]).astype(float)
    >>> res = compare_pass_at_k(tuned, base, rng=0)
    >>> res.band_excludes_zero.tolist()
    [True, True, True, True, True, True, True, True]
    """
    check_option(metric, "metric", METRICS)
    level = check_confidence_level(confidence_level)
    cluster_method = check_cluster_method(cluster_method, cluster)
    gen = as_rng(rng)
    na, ca = sample_counts(results_a)
    nb, cb = sample_counts(results_b)
    if na.size != nb.size:
        msg = f"the two models must answer the same questions (in the same order); got {na.size} and {nb.size}"
        raise ValueError(msg)
    ks = k_values(np.arange(1, int(min(na.min(), nb.min())) + 1) if k is None else k, np.minimum(na, nb))
    d = per_question_values(metric, na, ca, ks) - per_question_values(metric, nb, cb, ks)
    codes = question_cluster_codes(cluster, na.size)
    mean, se, df, g = mean_and_se(d, codes, cluster_method)
    q = float(level_quantile(level, "two-sided", df))
    wild = codes is not None and cluster_method == "wild"
    if codes is not None and wild:  # the wild bootstrap's p-value and inverted interval, every k with the same draws
        test = wild_test(d, codes, seed=wild_seed(gen), confidence_level=level)
        se, p = test.standard_error, test.pvalue
        ci_low, ci_high = np.asarray(test.ci_low), np.asarray(test.ci_high)
    else:
        p, ci_low, ci_high = _t_test(mean, se, df), mean - q * se, mean + q * se
    safe = np.where(se > 0, se, np.inf)
    reps = bootstrap_means(d, codes, check_int_at_least(n_resamples, "n_resamples", 100), gen)
    # studentise each resample by its own standard error? The plug-in se keeps it simple and stable:
    stat = np.max(np.abs(reps - mean) / safe, axis=1)
    crit = max(float(np.quantile(stat, level)), q)
    band_low, band_high = mean - crit * se, mean + crit * se
    if wild:  # never narrower than the pointwise (wild) interval
        band_low, band_high = np.fmin(band_low, ci_low), np.fmax(band_high, ci_high)
    return PassAtKComparison(metric=metric, k=ks, difference=mean, standard_error=se, pvalue=p,
                             ci_low=ci_low, ci_high=ci_high, band_ci_low=band_low, band_ci_high=band_high,
                             critical_value=crit, band_excludes_zero=(band_low > 0) | (band_high < 0),
                             n_questions=int(na.size), n_clusters=g, confidence_level=level,
                             cluster_method=None if codes is None else cluster_method)


def _t_test(mean: np.ndarray, se: np.ndarray, df: float) -> np.ndarray:
    """Two-sided p-values of the t statistics mean / se on ``df`` (a zero SE: p 1 for no difference, else 0)."""
    safe = np.where(se > 0, se, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / safe, np.where(mean == 0, 0.0, np.inf))
    return np.asarray(t_pvalue(t, df))
