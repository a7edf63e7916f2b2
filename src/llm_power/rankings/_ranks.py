"""Simultaneous confidence sets for ranks (Mogstad, Romano, Shaikh and Wilhelm 2024, REStud)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.results import Result
from .._core.typing import SeedLike
from .._core.validation import check_alpha_power, check_confidence_level, check_int_at_least

__all__ = ["RankIntervalsResult", "rank_intervals"]

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
    top_sets : dict of str to list
        The models that can be in the top k ("1", "3", "5", "10", those below the number of models).
    resampled : {"items", "clusters"}
    method : {"bootstrap", "gaussian"}
        How the critical value was found.
    rule : {"resolved", "max-t"}
        "resolved": a pair separates two ranks when its max-t interval excludes 0 and the pair is
        resolved (q >= 1 and its test rejects; every regime of the report), as in
        :func:`~llm_power.diagnose`; "max-t": the max-t intervals alone (``power=None``).
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
    top_sets: dict[str, list[Any]]
    resampled: str
    rule: str
    method: str = "bootstrap"

    _repr_fields = ("models", "rank_low", "rank_high", "best_set")
    _title = "Simultaneous rank intervals"

    def summary(self) -> str:
        """Each model's rank interval, and the set that can be #1."""
        how = (f"max-t bootstrap of the {self.resampled}, {self.n_resamples:,} resamples" if self.method == "bootstrap"
               else f"max-t, normal limit{' over clusters' if self.resampled == 'clusters' else ''}")
        lines = [f"Ranks with {self.confidence_level:.0%} simultaneous coverage ({self.n_items:,} items, " + how
                 + f", critical value {self.critical_value:.3g})"]
        for k, name in enumerate(self.models):
            lo, hi = int(self.rank_low[k]), int(self.rank_high[k])
            lines.append(f"  {str(name)[:32]:<32} {self.means[k]:.4f}  rank {lo}" + (f"-{hi}" if hi != lo else ""))
        lines.append("#1 is one of: " + ", ".join(map(str, self.best_set)))
        return "\n".join(lines)


def rank_intervals(scores: Any, *, models: Any = None, cluster: Any = None, confidence_level: float = 0.95,
                   power: float | None = 0.8, n_resamples: int = 1000, method: str = "auto",
                   rng: SeedLike = None) -> RankIntervalsResult:
    r"""Confidence intervals for every model's rank that hold simultaneously, and the set of models
    that can be #1 (Mogstad, Romano, Shaikh and Wilhelm 2024).

    Parameters
    ----------
    scores : array_like or DataFrame, shape (n_items, n_models)
        Per-item scores, every model on every item (0/1 or graded).
    models : sequence of str, optional
    cluster : array_like, optional
        One cluster label per item: whole clusters are resampled, and a pair must also be resolved
        by the cluster-robust test.
    confidence_level : float, default 0.95
        Simultaneous coverage of all the rank intervals (the pairs' tests run at 1 - this).
    power : float or None, default 0.8
        A pair separates two ranks only when it is also *resolved* at this power (q >= 1 and its
        test rejects), so that the ranks never say more than :func:`~llm_power.diagnose`'s table
        (they are the same numbers); None: the max-t intervals alone, as in Mogstad et al.
    n_resamples : int, default 1000
        Bootstrap resamples of the items (or clusters) for the critical value.
    method : {"auto", "bootstrap", "gaussian"}, default "auto"
        The bootstrap, or draws of its normal limit (the covariance of the means); "auto": the
        bootstrap up to 2,000,000 resampled items, the normal limit beyond (as
        :func:`~llm_power.diagnose`'s ``rank_method``).
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
    truth, a rank is the interval of ranks the tied models share. The same numbers are
    ``diagnose(scores, ranks=True).rankings``.

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
    from ..resolution import diagnose

    level = check_confidence_level(confidence_level)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    pw = 0.8 if power is None else check_alpha_power(1.0 - level, power)[1]
    diag = diagnose(scores, models=models, cluster=cluster, alpha=1.0 - level, power=pw, confidence_level=level,
                    ranks=True, rank_resamples=n_resamples, rank_method=method, cluster_resamples=0, rng=rng)
    sec = diag.rankings
    assert sec is not None  # noqa: S101 - ranks=True computes them or raises
    sets = sec if power is not None else sec["simultaneous"]
    low, high = np.asarray(sets["rank_low"]), np.asarray(sets["rank_high"])
    names = list(diag.models)
    top_sets = {k: [names[g] for g in range(len(names)) if low[g] <= int(k)] for k in sec["top_sets"]}
    return RankIntervalsResult(models=names, means=np.asarray(diag.means), rank_low=low, rank_high=high,
                               best_set=list(sets["best_set"]), critical_value=float(sec["critical_value"]),
                               n_items=diag.n, n_resamples=n_resamples, confidence_level=level, top_sets=top_sets,
                               resampled=sec["resampled"], rule="max-t" if power is None else "resolved",
                               method=sec["method"])
