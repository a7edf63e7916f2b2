r"""Several samples per question: pass@k, pass^k, avg@k and maj@k with intervals that name the
population they describe.

Each question i is sampled :math:`n_i` times and :math:`c_i` samples pass. Per question, the
unbiased estimators (Chen et al. 2021; and the analogue for "all k pass") are

.. math:: \widehat{\text{pass@}k}_i = 1 - \binom{n_i - c_i}{k}\Big/\binom{n_i}{k}, \qquad
          \widehat{\text{pass}^k}_i = \binom{c_i}{k}\Big/\binom{n_i}{k},

computed in the numerically stable product form. The benchmark value is their mean over
questions. Two populations, two intervals:

- ``population="questions"`` (the default): the questions are a sample of the questions one
  cares about. The per-question estimates are independent across questions with the right mean,
  so their sample variance over the number of questions is the standard error (cluster-robust
  when questions come in groups) — it contains the between-question spread *and* the sampling
  noise. Use it to say anything about the model beyond these questions.
- ``population="fixed_questions"``: only the sampling noise given these very questions (what a
  re-run with new seeds would change): the sum of the per-question variances
  :math:`\operatorname{Var}(\hat p_i \mid p_i)`, each estimated without bias when a question has at
  least 2k samples (else the exact binomial variance at its observed pass rate). Narrower, and it
  under-covers the population value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from .._core.errors import DataError, warn
from .._core.params import public
from .._core.results import ConfidenceInterval, Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least, check_option
from .._kernel.quantiles import upper_quantile
from .._kernel.variance import mean_variance
from .._kernel.wild_decision import wild_seed
from ._resampling import bayesian_bootstrap_means

__all__ = ["PassAtKResult", "pass_at_k", "pass_at_k_ci", "pass_at_k_matrix", "pass_hat_k"]

METRICS = ("pass@k", "pass^k", "avg@k")
#: ``pass_at_k_ci(method=...)``: the t interval (default) and the resampling interval
PASSK_INTERVAL_METHODS = ("bayesian_bootstrap", "t")


def _counts(n: Any, c: Any, k: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_arr, c_arr, k_arr = (np.asarray(v) for v in (n, c, k))
    for name, arr in (("n", n_arr), ("c", c_arr), ("k", k_arr)):
        if arr.dtype.kind not in "iub" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
            msg = f"`{name}` must be whole numbers"
            raise ValueError(msg)
    n_arr, c_arr, k_arr = (a.astype(np.int64) for a in np.broadcast_arrays(n_arr, c_arr, k_arr))
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        msg = "every `c` must be in 0..n (passing samples of the n drawn)"
        raise ValueError(msg)
    if np.any(k_arr < 1) or np.any(k_arr > n_arr):
        msg = "every `k` must be in 1..n: pass@k needs at least k samples of the question"
        raise ValueError(msg)
    return n_arr, c_arr, k_arr


def _log_falling_ratio(top: np.ndarray, bottom: np.ndarray, k: np.ndarray) -> np.ndarray:
    r"""Log of C(top, k) / C(bottom, k) = sum_{i=0}^{k-1} log((top - i) / (bottom - i)), top <= bottom,
    for top >= k (the caller handles top < k: the ratio is 0).
    """
    # log C(t, k) - log C(b, k) = [lgamma(t+1) - lgamma(t-k+1)] - [lgamma(b+1) - lgamma(b-k+1)]
    t, b = top.astype(float), bottom.astype(float)
    kk = k.astype(float)
    return np.asarray((special.gammaln(t + 1) - special.gammaln(t - kk + 1))
                      - (special.gammaln(b + 1) - special.gammaln(b - kk + 1)), dtype=float)


def falling_ratio(top: np.ndarray, bottom: np.ndarray, k: np.ndarray) -> np.ndarray:
    """C(top, k) / C(bottom, k), exact product form for small k, log form beyond."""
    top, bottom, k = np.broadcast_arrays(top, bottom, k)
    out = np.zeros(top.shape)
    ok = top >= k
    if not np.any(ok):
        return out
    t, b, kk = top[ok], bottom[ok], k[ok]
    small = kk <= 64
    vals = np.empty(t.size)
    if np.any(small):  # the product of k factors (t - i) / (b - i): exact to rounding
        ts, bs, ks = t[small].astype(float), b[small].astype(float), kk[small]
        i = np.arange(int(ks.max()))
        with np.errstate(divide="ignore", invalid="ignore"):  # factors past k are masked out
            factors = np.where(i[None, :] < ks[:, None], (ts[:, None] - i) / (bs[:, None] - i), 1.0)
        vals[small] = np.prod(factors, axis=1)
    if np.any(~small):
        vals[~small] = np.exp(_log_falling_ratio(t[~small], b[~small], kk[~small]))
    out[ok] = vals
    return out


def pass_at_k(n: Any, c: Any, k: Any) -> Any:
    r"""Unbiased pass@k of each question: 1 - C(n - c, k) / C(n, k) (Chen et al. 2021).

    ``n`` samples drawn, ``c`` of them passed; vectorised (arrays broadcast). Computed as
    :math:`1 - \prod_{i=0}^{k-1} (n - c - i)/(n - i)`, never forming the binomial coefficients.

    Parameters
    ----------
    n : int or array_like of int
        Samples drawn per question (whole numbers; floats such as 16.0 are accepted).
    c : int or array_like of int
        Passing samples per question, in 0..n.
    k : int or array_like of int
        Budget of attempts, in 1..n (pass@k needs at least k samples of the question).
        ``n``, ``c`` and ``k`` broadcast together; anything out of range is a ValueError.

    Returns
    -------
    float or ndarray
        The probability in [0, 1] that at least one of k samples drawn without replacement from
        the n passes: a float for scalar input, else an array of the broadcast shape. It is 1
        when n - c < k (every k-subset holds a pass) and 0 when c = 0.

    Examples
    --------
    >>> from llm_power import pass_at_k
    >>> round(pass_at_k(16, 3, 1), 4), round(pass_at_k(16, 3, 5), 4), pass_at_k(16, 12, 5)
    (0.1875, 0.7054, 1.0)
    """
    n_arr, c_arr, k_arr = _counts(n, c, k)
    out = 1.0 - falling_ratio(n_arr - c_arr, n_arr, k_arr)
    return float(out) if out.ndim == 0 else out


def pass_hat_k(n: Any, c: Any, k: Any) -> Any:
    r"""Unbiased pass^k of each question — all of k samples pass: C(c, k) / C(n, k).

    The reliability metric of agent benchmarks (tau-bench's pass^k); vectorised like
    :func:`pass_at_k`.

    Parameters
    ----------
    n : int or array_like of int
        Samples drawn per question (whole numbers).
    c : int or array_like of int
        Passing samples per question, in 0..n.
    k : int or array_like of int
        Number of attempts that must all pass, in 1..n. ``n``, ``c`` and ``k`` broadcast
        together; anything out of range is a ValueError.

    Returns
    -------
    float or ndarray
        The probability in [0, 1] that all of k samples drawn without replacement from the n
        pass: a float for scalar input, else an array of the broadcast shape; 0 when c < k.

    Examples
    --------
    >>> from llm_power import pass_hat_k
    >>> round(pass_hat_k(16, 12, 1), 4), round(pass_hat_k(16, 12, 5), 4), pass_hat_k(16, 3, 5)
    (0.75, 0.1813, 0.0)
    """
    n_arr, c_arr, k_arr = _counts(n, c, k)
    out = falling_ratio(c_arr, n_arr, k_arr)
    return float(out) if out.ndim == 0 else out


def metric_values(metric: str, n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    if metric == "pass@k":
        return np.asarray(1.0 - falling_ratio(n - c, n, k))
    if metric == "pass^k":
        return np.asarray(falling_ratio(c, n, k))
    return np.asarray(c / n, dtype=float) * np.ones(np.broadcast(n, c, k).shape)  # avg@k: the mean pass rate


@dataclass(frozen=True, repr=False)
class PassAtKResult(Result):
    """Result of :func:`pass_at_k_ci`: one value per requested k.

    Attributes
    ----------
    metric : str
        ``"pass@k"``, ``"pass^k"`` or ``"avg@k"``.
    k : ndarray
    estimate, standard_error : ndarray
        The mean over questions of the per-question unbiased estimates, and its standard error
        for ``population``.
    population : str
        ``"questions"`` (new questions from the same population) or ``"fixed_questions"`` (these
        questions, new samples).
    n_questions : int
    n_clusters : int or None
    df : float
        Degrees of freedom of the t interval (questions - 1, or with clusters the CR2 Imbens-Kolesar df, G - 1 for
        ``cluster_method="cv3"``; inf for ``fixed_questions``, a normal interval; NaN for the wild cluster
        bootstrap, whose interval is the bootstrap's).
    method : str
        ``"t"``, ``"normal"`` (``fixed_questions``) or ``"bayesian_bootstrap"`` (Dirichlet weights
        on the questions, or on whole clusters).
    replicates : ndarray or None
        The Bayesian-bootstrap means (resamples x k) with ``method="bayesian_bootstrap"``.
    cluster_method : str or None
        With clusters, the clustered test whose interval is reported (``"cr2"``, ``"cv3"``, ``"wild"``:
        :data:`llm_power._core.options.CLUSTER_METHOD_LABELS`); None without.
    """

    metric: str
    k: np.ndarray
    estimate: np.ndarray
    standard_error: np.ndarray
    population: str
    n_questions: int
    n_clusters: int | None
    df: float
    method: str
    confidence_level: float
    replicates: np.ndarray | None = None
    cluster_method: str | None = None
    #: "wild": (cluster sums (G, k), sizes, seed, low, high at ``confidence_level``): the interval at any level
    _wild: tuple[Any, ...] | None = field(default=None, compare=False, repr=False)

    _repr_fields: ClassVar[tuple[str, ...]] = ("metric", "k", "estimate", "standard_error", "population")

    def _fields(self) -> tuple[str, ...]:
        return tuple(name for name in Result._fields(self) if not name.startswith("_"))

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Per-k interval, clipped to [0, 1] (arrays, one entry per k).

        t (or normal) from the standard error; percentile of the replicates with the Bayesian
        bootstrap; with ``cluster_method="wild"`` the wild cluster bootstrap's test inverted, with the
        same draws at every level. When every question's estimate is the same (all 0, all 1) there is no spread to
        measure: Wilson's score interval on the number of questions (the widest a [0, 1] mean
        allows) replaces the empty t or percentile interval.
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        tail = (1.0 - level) / 2.0
        if self.replicates is not None:
            lo, hi = np.quantile(self.replicates, [tail, 1.0 - tail], axis=0)
        elif self._wild is not None:
            sums, sizes, seed, lo, hi = self._wild
            if not math.isclose(level, self.confidence_level, rel_tol=0.0, abs_tol=1e-12):
                from .._kernel.wild_cluster import wild_cluster_interval
                from .._kernel.wild_decision import WILD_RESAMPLES

                ci = wild_cluster_interval(sums, sizes, confidence_level=level, n_resamples=WILD_RESAMPLES,
                                           rng=np.random.default_rng(seed))
                lo, hi = np.asarray(ci.low, dtype=float).reshape(-1), np.asarray(ci.high, dtype=float).reshape(-1)
        else:
            q = float(upper_quantile(tail, self.df))
            lo, hi = self.estimate - q * self.standard_error, self.estimate + q * self.standard_error
        if self.population == "questions":
            # every question with the same estimate (all 0, all 1, ...): no spread to measure; a
            # [0, 1] variable with mean mu has variance at most mu (1 - mu), which gives Wilson's
            # score interval on the number of questions
            flat = self.standard_error == 0
            if np.any(flat):
                z = float(upper_quantile(tail))
                m, e = float(self.n_questions), self.estimate
                centre = (e + z * z / (2 * m)) / (1 + z * z / m)
                half = z / (1 + z * z / m) * np.sqrt(e * (1 - e) / m + z * z / (4 * m * m))
                lo, hi = np.where(flat, centre - half, lo), np.where(flat, centre + half, hi)
        return ConfidenceInterval(np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0))

    def to_frame(self) -> Any:
        """One row per k (pandas)."""
        import pandas as pd

        lo, hi = self.confidence_interval()
        return pd.DataFrame({"k": self.k, self.metric: self.estimate, "standard_error": self.standard_error,
                             "ci_low": lo, "ci_high": hi, "population": self.population})


def sample_counts(results: Any) -> tuple[np.ndarray, np.ndarray]:
    """(n, c) per question from a questions x samples 0/1 matrix (NaN = not sampled) or an (n, c) pair."""
    if isinstance(results, tuple) and len(results) == 2:
        n, c = (np.asarray(v) for v in results)
        if n.shape != c.shape or n.ndim != 1:
            msg = f"(n, c) must be two 1-D arrays of one length; got shapes {n.shape} and {c.shape}"
            raise ValueError(msg)
        if np.any(n < 1):
            msg = f"question {int(np.argmax(n < 1))}: n = {int(n[np.argmax(n < 1)])}; every question needs samples"
            raise DataError(msg)
        n_arr, c_arr, _ = _counts(n, c, np.ones_like(n))
        return n_arr, c_arr
    raw = np.asarray(results)
    if raw.ndim == 2 and raw.dtype.kind in "biu":  # bool / integer 0-1: no missing samples, no float copy
        if raw.dtype.kind != "b":
            bad_int = (raw < 0) | (raw > 1)
            if bad_int.any():
                q, s = (int(v[0]) for v in np.nonzero(bad_int))
                msg = f"question {q}, sample {s}: {float(raw[q, s])!r} is not 0/1 (pass@k needs pass/fail per sample)"
                raise DataError(msg)
        if raw.shape[1] == 0 and raw.shape[0] > 0:
            msg = "question 0 has no samples"
            raise DataError(msg)
        return np.full(raw.shape[0], raw.shape[1], dtype=np.int64), raw.sum(axis=1, dtype=np.int64)
    x = np.asarray(raw, dtype=float)
    if x.ndim != 2:
        msg = f"results must be a questions x samples matrix or an (n, c) pair; got shape {x.shape}"
        raise ValueError(msg)
    seen = np.isfinite(x)
    bad = seen & (x != 0) & (x != 1)
    if bad.any():
        q, s = (int(v[0]) for v in np.nonzero(bad))
        msg = f"question {q}, sample {s}: {float(x[q, s])!r} is not 0/1 (pass@k needs pass/fail per sample)"
        raise DataError(msg)
    n = seen.sum(axis=1)
    if np.any(n == 0):
        msg = f"question {int(np.argmax(n == 0))} has no samples"
        raise DataError(msg)
    return n.astype(np.int64), np.where(seen, x, 0).sum(axis=1).astype(np.int64)


def _graded(results: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(samples, mean, within-question variance) per question of a matrix with graded scores, or
    None for 0/1 results or (n, c) counts.
    """
    if isinstance(results, tuple):
        return None
    raw = np.asarray(results)
    if raw.dtype.kind == "b" or (raw.dtype.kind in "iu" and not (np.any(raw > 1) or np.any(raw < 0))):
        return None  # 0/1 results (bool or integer): pass@k counts, not graded scores
    x = np.asarray(raw, dtype=float)
    if x.ndim != 2:
        return None
    seen = np.isfinite(x)
    if not np.any(seen & (x != 0) & (x != 1)):
        return None
    n = seen.sum(axis=1)
    if np.any(n < 2):
        msg = f"question {int(np.argmax(n < 2))}: graded avg@k needs at least 2 samples per question"
        raise DataError(msg)
    filled = np.where(seen, x, 0.0)
    means = filled.sum(axis=1) / n
    within = np.where(seen, (x - means[:, None]) ** 2, 0.0).sum(axis=1) / (n - 1)
    return n.astype(np.int64), means, within


def k_values(k: Any, n: np.ndarray) -> np.ndarray:
    ks = np.atleast_1d(np.asarray(k))
    if ks.dtype.kind not in "iu" or ks.ndim != 1 or np.any(ks < 1):
        msg = f"`k` must be a positive integer or a sequence of them; got {k!r}"
        raise ValueError(msg)
    too_big = ks > n.min()
    if np.any(too_big):
        q = int(np.argmin(n))
        msg = (f"k = {int(ks[too_big][0])} but question {q} has only {int(n[q])} samples: an unbiased pass@k needs "
               "k <= the samples of every question")
        raise DataError(msg)
    return ks.astype(np.int64)


def per_question_values(metric: str, n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Questions x ks matrix of the per-question unbiased estimates."""
    return metric_values(metric, n[:, None], c[:, None], ks[None, :])


def conditional_variance(metric: str, n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per question and k, an estimate of Var(estimate | the question's pass rate).

    Unbiased where n >= 2k: with q_j = C(n - c, j) / C(n, j) unbiased for (1 - p)^j, pass@k's
    estimate U = 1 - q_k has Var U = E U^2 - (1 - (1-p)^k)^2, estimated without bias by
    q_k^2 - q_2k (pass^k likewise with C(c, j) / C(n, j); k = 1 gives c (n - c) / (n^2 (n - 1))).
    Where n < 2k: the exact binomial variance at p = c / n (plug-in).
    """
    out = _plugin_variance(metric, n, c, ks)
    nn, cc, kk = np.broadcast_arrays(n[:, None], c[:, None], ks[None, :])
    ok = nn >= 2 * kk
    if np.any(ok):
        if metric == "pass^k":
            first, second = falling_ratio(cc[ok], nn[ok], kk[ok]), falling_ratio(cc[ok], nn[ok], 2 * kk[ok])
        else:  # pass@k; avg@k is pass@1's estimate
            k_eff = kk[ok] if metric == "pass@k" else np.ones_like(kk[ok])
            first = falling_ratio(nn[ok] - cc[ok], nn[ok], k_eff)
            second = falling_ratio(nn[ok] - cc[ok], nn[ok], 2 * k_eff)
        out[ok] = first * first - second
    return out


def _plugin_variance(metric: str, n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per question and k: Var(estimate | p) evaluated at p = c / n (exact binomial sums)."""
    out = np.empty((n.size, ks.size))
    for size in np.unique(n):
        rows = np.nonzero(n == size)[0]
        j = np.arange(size + 1)
        pmf = stats.binom.pmf(j[None, :], size, (c[rows] / size)[:, None])  # rows x (n + 1)
        f = metric_values(metric, np.full((j.size, 1), size), j[:, None], ks[None, :])  # (n + 1) x ks
        mean = pmf @ f
        out[rows] = np.maximum(pmf @ (f * f) - mean * mean, 0.0)
    return out


def question_cluster_codes(cluster: Any, n_questions: int) -> np.ndarray | None:
    if cluster is None:
        return None
    from .._core.clusters import code_labels, require_clusters

    codes, g = code_labels(cluster, n_questions, unit="question")
    require_clusters(g, unit="question")
    return codes


def mean_and_se(values: np.ndarray, codes: np.ndarray | None,
                cluster_method: str = "cr2") -> tuple[np.ndarray, np.ndarray, float, int | None]:
    """Column means, their SE over questions, the df of their t quantiles and the cluster count.

    Without clusters: the SE over questions, questions - 1 df. With clusters, the kernel's variance of
    the chosen clustered test (:data:`llm_power._core.options.CLUSTER_METHODS`): ``"cr2"`` CR2 with the
    smallest Imbens-Kolesar df of the columns; ``"cv3"`` the cluster jackknife on G - 1 df; ``"wild"``
    the CR1 SE that studentises the wild cluster bootstrap's test (G - 1 df: its t reference, which
    only the band's floor uses -- the wild test and interval are the bootstrap's, :func:`wild_test`).
    """
    n = values.shape[0]
    mean = values.mean(axis=0)
    if codes is None:
        return mean, values.std(axis=0, ddof=1) / math.sqrt(n), float(n - 1), None
    g = int(codes.max()) + 1
    if cluster_method == "cv3":  # the kernel's cluster jackknife of the per-cluster sums, on G - 1 df
        from .._kernel.sufficient import pair_sums
        from .._kernel.wild_cluster import cv3_variance

        sizes, resid, _ = pair_sums(values, codes, g).clusters()
        cv3 = np.asarray(cv3_variance(resid + sizes[:, None] * mean, sizes), dtype=float).reshape(mean.shape)
        return mean, np.sqrt(cv3), float(g - 1), g
    v = mean_variance(values, codes, g, kind="cr1" if cluster_method == "wild" else "cr2")
    return mean, np.sqrt(v.variance), float(np.min(v.df)), g


def wild_test(values: np.ndarray, codes: np.ndarray, *, seed: int, confidence_level: float) -> Any:
    """The kernel's wild cluster bootstrap (:func:`llm_power._kernel.wild_decision.wild_decision`) of a zero
    mean of each column of ``values`` (questions x k: every k with the same draws) and its inverted
    interval at ``confidence_level``.
    """
    from .._kernel.sufficient import pair_sums
    from .._kernel.wild_decision import wild_decision

    return wild_decision(pair_sums(values, codes, int(codes.max()) + 1), seed=seed, confidence_level=confidence_level)


def question_summary(values: np.ndarray, codes: np.ndarray | None, cluster_method: str, gen: np.random.Generator,
                     level: float) -> tuple[np.ndarray, np.ndarray, float, int | None, tuple[Any, ...] | None]:
    """:func:`mean_and_se` and, for ``cluster_method="wild"``, the wild test's CR1 SE, df NaN and what
    :class:`PassAtKResult` keeps of it (cluster sums, sizes, seed and the interval at ``level``).
    """
    mean, se, df, g = mean_and_se(values, codes, cluster_method)
    wild = None
    if codes is not None and cluster_method == "wild":
        test = wild_test(values, codes, seed=wild_seed(gen), confidence_level=level)
        se, df = test.standard_error, math.nan
        wild = (test.cluster_sums, test.sizes, test.seed, test.ci_low, test.ci_high)
    return mean, se, df, g, wild


def check_cluster_method(cluster_method: str, cluster: Any) -> str:
    """``cluster_method`` checked against the declared choices; a method other than "cr2" needs ``cluster``."""
    from .._core.options import CLUSTER_METHODS

    cluster_method = check_option(cluster_method, "cluster_method", CLUSTER_METHODS)
    if cluster_method != "cr2" and cluster is None:
        msg = (f"cluster_method={cluster_method!r} chooses the clustered test: it needs `cluster` labels "
               "(one group per question)")
        raise ValueError(msg)
    return cluster_method


@public
def pass_at_k_ci(results: Any, k: Any, *, metric: str = "pass@k", population: str = "questions",  # noqa: PLR0913
                 cluster: Any = None, method: str = "t", confidence_level: float = 0.95, n_resamples: int = 2000,
                 rng: SeedLike = None, cluster_method: str = "cr2") -> PassAtKResult:
    """pass@k (or pass^k, avg@k) of a benchmark with an interval for the population you name.

    Parameters
    ----------
    results : array_like (questions x samples) or tuple (n, c)
        0/1 per sample (NaN where a question has fewer samples), or per-question sample and pass
        counts. With ``metric="avg@k"`` graded scores are allowed too (the mean per question; its
        within-question sample variance for ``fixed_questions``).
    k : int or sequence of int
        Every k at once (vectorised), each at most the samples of every question.
    metric : {"pass@k", "pass^k", "avg@k"}, default "pass@k"
    population : {"questions", "fixed_questions"}, default "questions"
        ``"questions"``: new questions from the same population (the between-question spread
        counts; t interval on questions - 1 degrees of freedom, or cluster-robust: CR2, Imbens-Kolesar df).
        ``"fixed_questions"``: these questions, new samples only (normal interval from the exact
        conditional variances).
    cluster : array_like, optional
        A group per question (task, subject): cluster-robust standard error, or whole clusters
        weighted by the Bayesian bootstrap. Only with ``population="questions"``.
    method : {"t", "bayesian_bootstrap"}, default "t"
        ``"t"``: the t interval from the standard error — the default, fast, and in simulation it
        covers at least as well as a resampling interval. ``"bayesian_bootstrap"``
        (``population="questions"``): percentile interval of the means under Dirichlet(1, ..., 1)
        weights on the questions (Rubin 1981), or on whole clusters with ``cluster``, drawn as one
        Gamma variate per *distinct* per-question value (questions with n samples have at most
        n + 1 per k). It has the ordinary bootstrap's first-order distribution (mean: the sample
        mean; variance: population variance / (questions + 1) instead of / questions).
        ``"bootstrap"`` is a deprecated alias (DeprecationWarning) that now gives the Bayesian
        bootstrap.
    confidence_level : float, default 0.95
        In (0, 1): the default level of the result's ``confidence_interval()``.
    n_resamples : int, default 2000
        Resamples of ``method="bayesian_bootstrap"`` (at least 2).
    rng : seed or Generator, optional
        For the Bayesian bootstrap and the wild cluster bootstrap: the same seed gives the same
        interval (the wild weights are drawn from ``wild_seed`` of this generator, as
        :func:`~llm_power.compare` draws them).
    cluster_method : {"cr2", "cv3", "wild"}, default "cr2"
        With ``cluster`` and ``method="t"``, the clustered interval (as :func:`~llm_power.compare`'s
        ``cluster_method``): the t interval on the CR2 variance (Imbens-Kolesar df), on the cluster
        jackknife's (CV3, G - 1 df), or the restricted wild cluster bootstrap's test of each value
        inverted (``standard_error`` then the CR1 SE that studentises it). A method other than "cr2"
        needs ``cluster`` (else a ValueError).

    Returns
    -------
    PassAtKResult
        One entry per requested k: ``k``, ``estimate`` and ``standard_error`` (arrays of shape
        (len(k),)), with ``metric``, ``population``, ``n_questions``, ``n_clusters``, ``df`` (inf:
        a normal interval for ``fixed_questions``), ``method`` (``"t"``, ``"bayesian_bootstrap"`` or
        ``"normal"``) and ``replicates`` (resamples x k, or None); ``confidence_interval()`` gives
        the per-k interval clipped to [0, 1] and ``to_frame()`` one row per k. With
        ``fixed_questions`` and a question sampled only once the standard error is NaN (with an
        ApproximationWarning).

    Examples
    --------
    30 questions, 16 samples each:

    >>> import numpy as np
    >>> from llm_power import pass_at_k_ci
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(0.6, 0.9, 30)                        # each question's own pass rate
    >>> x = (rng.random((30, 16)) < p[:, None]).astype(float)
    >>> res = pass_at_k_ci(x, [1, 8])
    >>> res.estimate.round(3), res.standard_error.round(3)
    (array([0.404, 0.799]), array([0.056, 0.064]))
    >>> pass_at_k_ci(x, [1, 8], population="fixed_questions").standard_error.round(3)
    array([0.018, 0.03 ])

    The t interval and the Bayesian bootstrap's percentile interval side by side (the same seed gives
    the same resampling interval):

    >>> lo, hi = pass_at_k_ci(x, [1, 8]).confidence_interval()
    >>> lo.round(2), hi.round(2)
    (array([0.29, 0.67]), array([0.52, 0.93]))
    >>> lo, hi = pass_at_k_ci(x, [1, 8], method="bayesian_bootstrap", rng=0).confidence_interval()
    >>> lo.round(2), hi.round(2)
    (array([0.3 , 0.66]), array([0.51, 0.9 ]))

    References
    ----------
    Chen, M. et al. (2021). Evaluating large language models trained on code. arXiv:2107.03374.
    Rubin, D. B. (1981). The Bayesian bootstrap. *The Annals of Statistics* 9(1), 130-134.
    """
    check_option(metric, "metric", METRICS)
    check_option(population, "population", ("questions", "fixed_questions"))
    if method == "bootstrap":
        warn("`method='bootstrap'` of pass_at_k_ci was renamed 'bayesian_bootstrap' and now gives the Bayesian "
             "bootstrap (Dirichlet weights on the distinct per-question values, the same first-order "
             "distribution); the old name will be removed in the next release.", DeprecationWarning)
        method = "bayesian_bootstrap"
    check_option(method, "method", PASSK_INTERVAL_METHODS)
    cluster_method = check_cluster_method(cluster_method, cluster)
    if cluster_method != "cr2" and (method != "t" or population != "questions"):
        msg = (f"cluster_method={cluster_method!r} chooses the clustered t or wild interval over new questions: "
               "it takes method='t' and population='questions'")
        raise ValueError(msg)
    level = check_confidence_level(confidence_level)
    graded = _graded(results) if metric == "avg@k" else None
    if graded is not None:  # avg@k of graded scores: the mean per question, its within-question variance
        n, means, within = graded
        c = np.zeros_like(n)
    else:
        n, c = sample_counts(results)
    if n.size < 2:
        msg = f"an interval over questions needs at least 2 questions; got {n.size}"
        raise DataError(msg)
    ks = k_values(k, n)
    values = per_question_values(metric, n, c, ks) if graded is None else np.repeat(means[:, None], ks.size, axis=1)
    if population == "fixed_questions" and graded is not None:
        if cluster is not None or method != "t":
            msg = "population='fixed_questions' conditions on the questions: no cluster and no bootstrap over them"
            raise ValueError(msg)
        se = np.full(ks.size, math.sqrt(float(np.sum(within / n))) / n.size)
        return PassAtKResult(metric=metric, k=ks, estimate=values.mean(axis=0), standard_error=se,
                             population=population, n_questions=int(n.size), n_clusters=None, df=math.inf,
                             method="normal", confidence_level=level)
    if population == "fixed_questions":
        if cluster is not None or method != "t":
            msg = "population='fixed_questions' conditions on the questions: no cluster and no bootstrap over them"
            raise ValueError(msg)

        from .._core.errors import ApproximationWarning

        if n.min() < 2:  # one sample of some question: its sampling noise cannot be estimated at all
            warn(f"question {int(np.argmin(n))} has a single sample: the sampling noise of these questions "
                          "cannot be estimated (standard error NaN); draw at least 2 samples per question",
                          ApproximationWarning)
            return PassAtKResult(metric=metric, k=ks, estimate=values.mean(axis=0),
                                 standard_error=np.full(ks.size, np.nan), population=population,
                                 n_questions=int(n.size), n_clusters=None, df=math.inf, method="normal",
                                 confidence_level=level)
        if np.any(n.min() < 2 * ks) and metric != "avg@k":
            warn(f"k = {int(ks[n.min() < 2 * ks][0])} is more than half the samples of some question "
                          f"({int(n.min())}): its conditional variance is a plug-in at the observed pass rate and "
                          "tends to be too small; draw at least 2k samples per question", ApproximationWarning)
        se = np.sqrt(np.maximum(conditional_variance(metric, n, c, ks).sum(axis=0), 0.0)) / n.size
        return PassAtKResult(metric=metric, k=ks, estimate=values.mean(axis=0), standard_error=se,
                             population=population, n_questions=int(n.size), n_clusters=None, df=math.inf,
                             method="normal", confidence_level=level)
    codes = question_cluster_codes(cluster, n.size)
    gen = as_rng(rng)
    mean, se, df, g, wild = question_summary(values, codes, cluster_method, gen, level)
    reps = None
    if method == "bayesian_bootstrap":
        reps = bayesian_bootstrap_means(values, codes, check_int_at_least(n_resamples, "n_resamples", 2), gen)
    return PassAtKResult(metric=metric, k=ks, estimate=mean, standard_error=se, population=population,
                         n_questions=int(n.size), n_clusters=g, df=df, method=method, confidence_level=level,
                         replicates=reps, cluster_method=None if codes is None else cluster_method, _wild=wild)


def pass_at_k_matrix(results: Any, k: int, *, metric: str = "pass@k") -> tuple[np.ndarray, list[str]]:
    """Questions x models matrix of per-question estimates at one k, for :func:`llm_power.diagnose`.

    ``results`` maps model name -> its questions x samples 0/1 matrix (or (n, c) counts), the
    questions in the same order for every model. Each column holds that model's unbiased
    per-question pass@k (pass^k, avg@k); their means are the benchmark values, and ``diagnose``
    on the matrix ranks the models with paired tests over questions (the ``questions`` population).

    Parameters
    ----------
    results : dict
        Model name -> its results: a questions x samples 0/1 matrix (NaN where a question has
        fewer samples) or a tuple (n, c) of per-question sample and pass counts. Every model must
        cover the same questions (same number, same order); an empty dict is a ValueError.
    k : int
        The one k, at most the samples of every question of every model.
    metric : {"pass@k", "pass^k", "avg@k"}, default "pass@k"
        The per-question estimator.

    Returns
    -------
    values : ndarray
        Shape (questions, models): column j holds model j's unbiased per-question estimates,
        each in [0, 1].
    names : list of str
        The model names, in the order of the columns (the dict's order).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import diagnose, pass_at_k_matrix
    >>> rng = np.random.default_rng(2)
    >>> p = rng.beta(0.7, 0.8, 300)
    >>> runs = {f"ckpt-{s}": (rng.random((300, 8)) < np.clip(p + s / 20, 0, 1)[:, None]).astype(float)
    ...         for s in range(3)}
    >>> values, names = pass_at_k_matrix(runs, 4)
    >>> values.shape, diagnose(values, models=names).models
    ((300, 3), ['ckpt-2', 'ckpt-1', 'ckpt-0'])
    """
    check_option(metric, "metric", METRICS)
    if not isinstance(results, dict) or not results:
        msg = "results must map model names to their questions x samples results"
        raise ValueError(msg)
    names = [str(name) for name in results]
    columns = []
    sizes = set()
    for name, res in results.items():
        n, c = sample_counts(res)
        ks = k_values(k, n)
        columns.append(per_question_values(metric, n, c, ks)[:, 0])
        sizes.add(n.size)
        if len(sizes) > 1:
            msg = f"model {name!r} has {n.size} questions, the others {min(sizes)}: the models must share the questions"
            raise ValueError(msg)
    return np.column_stack(columns), names


