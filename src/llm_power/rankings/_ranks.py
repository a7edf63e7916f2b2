"""Simultaneous confidence sets for ranks (Mogstad, Romano, Shaikh and Wilhelm 2024, REStud)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.results import Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least, check_score_matrix
from .._kernel.sufficient import pairwise_statistics

__all__ = ["RankIntervalsResult", "rank_intervals"]

#: largest (resamples x pairs) the max-t bootstrap holds at once
MAX_ELEMENTS = 50_000_000


@dataclass(frozen=True, slots=True, repr=False)
class RankIntervalsResult(Result):
    """Rank intervals that hold for every model at once (see :func:`rank_intervals`).

    Attributes
    ----------
    models : list of str
        By mean score, best first.
    means : numpy.ndarray
    rank_low, rank_high : numpy.ndarray
        Each model's rank interval (1 = best): with probability at least ``confidence_level`` every
        model's true rank lies in its interval simultaneously.
    best_set : list of str
        The models that can be #1 at that level (rank_low = 1).
    critical_value : float
        The bootstrap (1 - alpha) quantile of the largest studentised pairwise deviation.
    n_items, n_resamples : int
    confidence_level : float
    """

    models: list[Any]
    means: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    best_set: list[Any]
    critical_value: float
    n_items: int
    n_resamples: int
    confidence_level: float

    _repr_fields = ("models", "rank_low", "rank_high", "best_set")
    _title = "Simultaneous rank intervals"

    def summary(self) -> str:
        """Each model's rank interval, and the set that can be #1."""
        lines = [f"Ranks with {self.confidence_level:.0%} simultaneous coverage ({self.n_items:,} items, "
                 f"max-t bootstrap, {self.n_resamples:,} resamples, critical value {self.critical_value:.3g})"]
        for k, name in enumerate(self.models):
            lo, hi = int(self.rank_low[k]), int(self.rank_high[k])
            lines.append(f"  {str(name)[:32]:<32} {self.means[k]:.4f}  rank {lo}" + (f"-{hi}" if hi != lo else ""))
        lines.append("#1 is one of: " + ", ".join(map(str, self.best_set)))
        return "\n".join(lines)


def rank_intervals(scores: Any, *, models: Any = None, confidence_level: float = 0.95, n_resamples: int = 1000,
                   rng: SeedLike = None) -> RankIntervalsResult:
    r"""Confidence intervals for every model's rank that hold simultaneously, and the set of models
    that can be #1 (Mogstad, Romano, Shaikh and Wilhelm 2024).

    Parameters
    ----------
    scores : array_like or DataFrame, shape (n_items, n_models)
        Per-item scores, every model on every item (0/1 or graded).
    models : sequence of str, optional
    confidence_level : float, default 0.95
        Simultaneous coverage of all the rank intervals.
    n_resamples : int, default 1000
        Bootstrap resamples of the items for the critical value.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    RankIntervalsResult

    Notes
    -----
    For every pair (j, k) the paired difference of means has standard error se_jk (the paired
    variance diagnose uses: the plug-in (b + c)/n - delta^2 for 0/1 scores, the sample variance of
    the differences for graded ones). The critical value c is the bootstrap (resampling items) quantile of
    max_{j<k} |(Dhat*_jk - Dhat_jk) / se_jk|, so the intervals Dhat_jk +- c se_jk cover every pairwise
    difference at once. Model j's rank interval is [1 + #{k: k better than j by its interval},
    M - #{k: j better than k}]; the best set is the models no other model beats. With ties in the
    truth, a rank is the interval of ranks the tied models share.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import rank_intervals
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((3000, 4)) < [0.70, 0.69, 0.55, 0.40]).astype(int)
    >>> res = rank_intervals(x, models=["w", "x", "y", "z"], rng=0)
    >>> res.best_set, res.rank_low.tolist(), res.rank_high.tolist()
    (['w', 'x'], [1, 1, 3, 4], [2, 2, 3, 4])
    """
    level = check_confidence_level(confidence_level)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    x, names = check_score_matrix(scores, models)
    n, m = x.shape
    if m < 2:
        msg = "at least 2 models are needed to rank"
        raise ValueError(msg)
    means = x.mean(axis=0)
    order = np.argsort(-means, kind="stable")
    x, means, names = x[:, order], means[order], [names[k] for k in order]
    i, j = np.triu_indices(m, 1)
    if n_resamples * i.size > MAX_ELEMENTS:
        msg = (f"{m} models are {i.size:,} pairs; x {n_resamples:,} resamples that is more than {MAX_ELEMENTS:,} "
               "values (use fewer models or resamples)")
        raise ValueError(msg)
    # the paired variance of each pair from the kernel's all-pairs statistics (one Gram matrix), with
    # diagnose's convention: the plug-in (b + c)/n - delta^2 for 0/1 scores, ddof 1 for graded ones
    st = pairwise_statistics(x)
    var_diff = np.asarray(st.var_diff)
    var = var_diff[i, j] if st.binary else var_diff[i, j] * n / (n - 1)
    delta = means[i] - means[j]
    se = np.sqrt(var / n)
    gen = as_rng(rng)
    largest = np.empty(n_resamples)
    step = max(1, 4_000_000 // max(n * m, i.size, 1))  # resamples per block: (block x items x models) bounded
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        picks = gen.integers(0, n, size=(b, n))  # items drawn with replacement
        boot = x[picks].mean(axis=1)  # (b, M) resampled means
        with np.errstate(divide="ignore", invalid="ignore"):
            dev = np.abs((boot[:, i] - boot[:, j] - delta) / se)
        dev = np.where(np.isfinite(dev), dev, 0.0)  # a pair without spread (se 0) is the same in every resample
        largest[start:start + b] = dev.max(axis=1)
    crit = float(np.quantile(largest, level))
    better = np.zeros((m, m), dtype=bool)  # better[a, b]: a beats b by its simultaneous interval
    ahead = delta - crit * se > 0
    behind = delta + crit * se < 0
    better[i[ahead], j[ahead]] = True
    better[j[behind], i[behind]] = True
    rank_low = 1 + better.sum(axis=0)
    rank_high = m - better.sum(axis=1)
    return RankIntervalsResult(models=names, means=means, rank_low=rank_low, rank_high=rank_high,
                               best_set=[names[k] for k in range(m) if rank_low[k] == 1], critical_value=crit,
                               n_items=n, n_resamples=n_resamples, confidence_level=level)
