"""Simultaneous confidence sets for ranks (Mogstad, Romano, Shaikh and Wilhelm 2024, REStud)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import check_power_above, public
from .._core.progress import step
from .._core.results import ConfidenceInterval, Result, renamed_field, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_int_at_least, check_option
from ._section import RANK_METHODS, carries_its_own, rank_sets, ranks_available

__all__ = ["RankIntervalsResult", "rank_intervals"]

#: the name of this step in progress reports
TASK = "rank intervals"


@dataclass(frozen=True, slots=True, repr=False)
class RankIntervalsResult(Result):
    """Rank intervals that hold for every model at once (see :func:`rank_intervals`).

    Attributes
    ----------
    models : list of str
        By mean score, best first.
    means : numpy.ndarray
    rank_ci_low, rank_ci_high : numpy.ndarray
        Each model's rank interval (1 = best): with probability at least ``confidence_level`` every
        model's true rank lies in its interval simultaneously.
    best_set : list of str
        The models that can be #1 at that level (rank_ci_low = 1).
    critical_value : float
        The (1 - alpha) quantile of the largest studentised pairwise deviation (with clusters, at
        least that of each pair's own cluster t).
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
    max_t_rank_ci_low, max_t_rank_ci_high : numpy.ndarray
        The rank intervals of the max-t intervals alone (equal to ``rank_ci_low``/``rank_ci_high`` when
        ``rule`` is "max-t").
    """

    models: list[Any]
    means: np.ndarray
    rank_ci_low: np.ndarray
    rank_ci_high: np.ndarray
    best_set: list[Any]
    critical_value: float
    n_items: int
    n_resamples: int
    confidence_level: float
    top_sets: dict[str, list[Any]]
    resampled: str
    rule: str
    method: str = "bootstrap"
    max_t_rank_ci_low: np.ndarray | None = None
    max_t_rank_ci_high: np.ndarray | None = None

    _repr_fields = ("models", "rank_ci_low", "rank_ci_high", "best_set")
    rank_low = renamed_field("rank_low", "rank_ci_low")
    rank_high = renamed_field("rank_high", "rank_ci_high")
    max_t_low = renamed_field("max_t_low", "max_t_rank_ci_low")
    max_t_high = renamed_field("max_t_high", "max_t_rank_ci_high")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Per model (in ``models`` order), its simultaneous rank interval ``(rank_ci_low, rank_ci_high)``."""
        return stored_interval(self.rank_ci_low, self.rank_ci_high, self.confidence_level, confidence_level,
                               recompute="run rank_intervals(..., confidence_level=confidence_level)")
    _title = "Simultaneous rank intervals"

    def summary(self) -> str:
        """Each model's rank interval, and the set that can be #1."""
        how = (f"max-t bootstrap of the {self.resampled}, {self.n_resamples:,} resamples" if self.method == "bootstrap"
               else f"max-t, normal limit{' over clusters' if self.resampled == 'clusters' else ''}")
        lines = [f"Ranks with {self.confidence_level:.0%} simultaneous coverage ({self.n_items:,} items, " + how
                 + f", critical value {self.critical_value:.3g})"]
        for k, name in enumerate(self.models):
            lo, hi = int(self.rank_ci_low[k]), int(self.rank_ci_high[k])
            lines.append(f"  {str(name)[:32]:<32} {self.means[k]:.4f}  rank {lo}" + (f"-{hi}" if hi != lo else ""))
        lines.append("#1 is one of: " + ", ".join(map(str, self.best_set)))
        return "\n".join(lines)


@public(nullable=("power", "top"))
def rank_intervals(data: Any, *, models: Any = None, cluster: Any = None, confidence_level: float | None = None,
                   power: float | None = 0.8, n_resamples: int = 1000, method: str = "auto",
                   top: int | None = None, rng: SeedLike = None) -> RankIntervalsResult:
    r"""Confidence intervals for every model's rank that hold simultaneously, and the set of models
    that can be #1 (Mogstad, Romano, Shaikh and Wilhelm 2024).

    Parameters
    ----------
    data : Diagnosis, or array_like or DataFrame of shape (n_items, n_models)
        A finished :func:`~llm_power.diagnose` (its models, clusters, runs, level and regimes), or
        per-item scores, every model on every item (0/1 or graded), diagnosed here with
        ``alpha = 1 - confidence_level`` and ``power``.
    models : sequence of str, optional
        With scores only.
    cluster : array_like, optional
        With scores only: one cluster label per item (a Diagnosis carries its own). Whole clusters
        are resampled, each gap is studentised by its cluster-robust (CR2) standard error, and a
        pair must also be resolved by the cluster-robust test.
    confidence_level : float, optional
        Simultaneous coverage of all the rank intervals (the pairs' tests run at 1 - this). Default:
        the diagnosis's level, or 0.95 for scores.
    power : float or None, default 0.8
        A pair separates two ranks only when it is also *resolved* (q >= 1 and its test rejects;
        every regime of a diagnosis), so that the ranks never say more than
        :func:`~llm_power.diagnose`'s table; a Diagnosis brings its own power. None: the max-t
        intervals alone, as in Mogstad et al.
    n_resamples : int, default 1000
        Bootstrap resamples of the items (or clusters) for the critical value.
    method : {"auto", "bootstrap", "gaussian"}, default "auto"
        The bootstrap, or draws of its normal limit (the covariance of the means, a multivariate t on
        G - 1 df with clusters); "auto": the bootstrap up to 2,000,000 resampled items (or
        clusters x resamples, and up to 100,000,000 pairs x resamples), the normal limit beyond.
    top : int, optional
        With scores only: rank only the ``top`` best models by mean score (at least 2), as
        :func:`~llm_power.diagnose`'s ``top`` -- the same models, pairs and ranks among them as
        ``rank_intervals(diagnose(data, top=top))``. A Diagnosis carries its own. None (default):
        every model.
    rng : None, int or numpy.random.Generator
        The same seed gives the same intervals for the same data, whether the scores or their
        Diagnosis are given.

    Returns
    -------
    RankIntervalsResult

    Notes
    -----
    For every pair (j, k) the paired difference of means has standard error se_jk (the paired
    variance diagnose uses: the plug-in (b + c)/n - delta^2 for 0/1 scores, the sample variance of
    the differences for graded ones; each pair's own CR2 one with clusters). The critical value c is
    the bootstrap (resampling items, or clusters) quantile of max_{j<k} |(Dhat*_jk - Dhat_jk) / se_jk|
    -- with clusters, the larger of that and the level quantile of the maximum of each pair's own
    cluster t (Imbens-Kolesar df, independent scales: conservative with few, unequal clusters;
    docs/rankings.md) -- so the intervals Dhat_jk +- c se_jk cover every pairwise difference at once. Model j's rank
    interval is [1 + #{k: k better than j by its interval}, M - #{k: j better than k}]; the best set
    is the models no other model beats. With ties in the truth, a rank is the interval of ranks the
    tied models share. ``rank_report(diagnose(scores, ...), rng=s).ranks`` gives the same numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import rank_intervals
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((3000, 4)) < [0.70, 0.69, 0.55, 0.40]).astype(int)
    >>> res = rank_intervals(x, models=["w", "x", "y", "z"], rng=0)
    >>> res.best_set, res.rank_ci_low.tolist(), res.rank_ci_high.tolist()
    (['w', 'x'], [1, 1, 3, 4], [2, 2, 3, 4])
    """
    from ..resolution import diagnose

    method = check_option(method, "method", RANK_METHODS)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    if carries_its_own(data, models=models, cluster=cluster, confidence_level=confidence_level, top=top):
        diag = data
    else:
        level = 0.95 if confidence_level is None else confidence_level
        pw = 0.8 if power is None else power
        check_power_above(pw, 1.0 - level, level_name="confidence_level")
        diag = diagnose(data, models=models, cluster=cluster, alpha=1.0 - level, power=pw, confidence_level=level,
                        top=top, cluster_resamples=0, rng=rng)
    why = ranks_available(diag, n_resamples, method)
    if why is not None:
        raise ValueError(why)
    with step(TASK):
        sets = rank_sets(diag, n_resamples=n_resamples, method=method, gen=as_rng(rng))
    names = list(diag.models)
    rule = "max-t" if power is None else "resolved"
    which = "max_t_rank_ci" if rule == "max-t" else "rank_ci"
    low, high = sets[f"{which}_low"], sets[f"{which}_high"]
    m = len(names)
    return RankIntervalsResult(
        models=names, means=np.asarray(diag.means), rank_ci_low=low, rank_ci_high=high,
        best_set=[names[g] for g in range(m) if low[g] == 1], critical_value=sets["critical_value"], n_items=diag.n,
        n_resamples=n_resamples, confidence_level=float(diag.settings["confidence_level"]),
        top_sets={str(t): [names[g] for g in range(m) if low[g] <= t] for t in (1, 3, 5, 10) if t < m},
        resampled=sets["resampled"], rule=rule, method=sets["method"],
        max_t_rank_ci_low=sets["max_t_rank_ci_low"], max_t_rank_ci_high=sets["max_t_rank_ci_high"])
