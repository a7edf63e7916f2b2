"""The rankings of a finished diagnosis: simultaneous rank intervals and the set that can be #1, the
selected winner's score corrected for selection, and how few items flip each gap and #1.

Everything here is a function of a :class:`~llm_power.Diagnosis` and the source it holds (a matrix in
memory, or item shards while their cluster is up), so the same data and the same seed give the same
numbers through :func:`~llm_power.rank_intervals`, :func:`~llm_power.rank_report`, ``llm-power rank``,
``llm-power diagnose`` and the demo.

One rule keeps one verdict: a pair is *separated* in the rank intervals only when its simultaneous
max-t interval excludes 0 **and** every regime of the report resolves it (in the family of all
pairs, and in the displayed family when it is displayed). The rank intervals are therefore never
narrower than the resolution table allows, and they still hold simultaneously (a larger set only
covers more often). ``simultaneous`` keeps the max-t sets alone (Mogstad et al. 2024).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import DataError, DegenerateDataWarning, warn
from .._kernel.crossed import model_run_variance
from .._kernel.ranks import (
    binary_gap_items_to_flip,
    items_to_flip,
    max_t_critical_value,
    rank_order,
    score_step,
    winner_from_covariance,
)
from ..matrix import ScoreMatrix, ScoreSource
from ..resolution import REGIMES, pair_indices, tie_groups_and_rank_intervals

__all__ = ["MAX_RANK_MODELS", "RANK_METHODS", "carries_its_own", "chosen_method", "fragility_of", "pair_flips",
           "rank_sets", "ranks_available", "scores_fragility", "winner_of"]

#: rank_report computes the rankings by default up to this many models (4,950 pairs)
MAX_RANK_MODELS = 100
#: pairs x resamples of the max-t bootstrap refused beyond this
MAX_RANK_ELEMENTS = 100_000_000
#: pairs of the rank intervals refused beyond this (about 5,000 models: the all-pairs table and an
#: M x M matrix of standard errors in memory)
MAX_RANK_PAIRS = 12_500_000
#: method="auto": the max-t critical value is bootstrapped when (items or clusters) x resamples
#: stays below this (small benchmarks, where the normal limit is rough), else drawn from the normal
#: with the means' covariance (the bootstrap's large-sample limit, at a fraction of the cost)
MAX_BOOTSTRAP_DRAWS = 2_000_000
#: how the critical value of the rank intervals is found
RANK_METHODS = ("auto", "bootstrap", "gaussian")
#: graded differences formed per block when counting the items that flip a gap (diagnose's block of
#: pairs for their sums, ``llm_power._kernel.sufficient.pair_sums_graded``: the same blocks give the same gaps)
_FLIP_BLOCK = 4_000_000


def carries_its_own(data: Any, **given: Any) -> bool:
    """Whether ``data`` is a Diagnosis (then none of ``given`` may be set: it carries its own models,
    clusters, pairs and level -- a TypeError names the first one set).
    """
    from ..resolution import Diagnosis

    if not isinstance(data, Diagnosis):
        return False
    for name, value in given.items():
        if value is not None:
            msg = f"`{name}` is given with a Diagnosis, which carries its own; diagnose again to change it"
            raise TypeError(msg)
    return True


def _held(diag: Any) -> Any:
    if diag.held is None:
        msg = "this Diagnosis holds no scores (it was not made by diagnose): diagnose the scores again"
        raise ValueError(msg)
    return diag.held


def ranked_matrix(diag: Any) -> np.ndarray | None:
    """The diagnosis's scores, columns in rank order (None for item shards)."""
    held = _held(diag)
    source = held.source
    return source.matrix()[:, held.local_order] if isinstance(source, ScoreMatrix) else None


def ranks_available(diag: Any, n_resamples: int, method: str = "auto") -> str | None:
    """Why the rank intervals cannot be computed for this diagnosis with ``method`` (None: they can).
    The guard counts the work of the method that will run (:func:`chosen_method`): pairs x resamples
    for the bootstrap; for the normal limit the pairs alone (their table and an M x M matrix of
    standard errors), whose draws cost a few M-vectors each (:func:`~llm_power._kernel.ranks.max_studentised_gap`).
    """
    m = len(diag.models)
    if m < 2 or diag.n < 2:
        return "at least 2 models and 2 items are needed to rank"
    n_pairs = m * (m - 1) // 2
    if method == "bootstrap" and n_pairs * n_resamples > MAX_RANK_ELEMENTS:
        return (f"{m:,} models are {n_pairs:,} pairs; x {n_resamples:,} resamples that is more than "
                f"{MAX_RANK_ELEMENTS:,} values for method='bootstrap' (use method='gaussian' or 'auto', or fewer "
                "`n_resamples`)")
    if n_pairs > MAX_RANK_PAIRS:
        return (f"{m:,} models are {n_pairs:,} pairs, more than {MAX_RANK_PAIRS:,} (rank fewer models: `top=K`, "
                "--top K)")
    return None


def chosen_method(method: str, *, in_memory: bool, units: int, n_pairs: int, n_resamples: int) -> str:
    """The method that finds the critical value: "bootstrap" when asked, or with ``method="auto"`` when
    the scores are in memory, ``units`` (items or clusters) x resamples stays within
    ``MAX_BOOTSTRAP_DRAWS`` and pairs x resamples within ``MAX_RANK_ELEMENTS``; else "gaussian".
    """
    if method == "bootstrap":
        return "bootstrap"
    small = units * n_resamples <= MAX_BOOTSTRAP_DRAWS and n_pairs * n_resamples <= MAX_RANK_ELEMENTS
    return "bootstrap" if method == "auto" and in_memory and small else "gaussian"


def resolved_everywhere(diag: Any) -> np.ndarray:
    """Per pair of a diagnosis: resolved under every regime it computed."""
    flags = np.ones(len(diag.columns["delta"]), dtype=bool)
    for r in REGIMES:
        if r.key in diag.n_unresolved:
            flags &= np.asarray(diag.columns[r.resolved_field], dtype=bool)
    return flags


def source_covariance(source: ScoreSource, order: np.ndarray, all_pairs: Any) -> np.ndarray:
    """The covariance of the ranked models' mean scores from a source's sufficient statistics (the
    same for a matrix in memory and for item shards): with clusters the CR2 one from each model's
    per-cluster residual sums; else each model's variance (plug-in for 0/1, ddof 1 for graded:
    the paired variances of the report) and each pair's from the variance of its difference,
    cov_ij = (v_i + v_j - se_ij^2) / 2.
    """
    n = source.n
    means, m2 = source.moments()
    if source.n_groups:
        sizes, resid, _ = source.model_cluster_sums(means)
        r = np.asarray(resid, dtype=float)[:, order]
        w = 1.0 / np.maximum(1.0 - np.asarray(sizes, dtype=float) / n, 1e-12)
        return np.asarray((r.T * w) @ r / n**2, dtype=float)
    var = np.asarray(m2, dtype=float)[order] / (n if source.binary else n - 1) / n
    cols = all_pairs.columns
    i, j = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    se2 = np.asarray(cols["se"], dtype=float) ** 2
    cov = np.diag(var)
    cov[i, j] = cov[j, i] = (var[i] + var[j] - se2) / 2.0
    return cov


def rank_sets(diag: Any, *, n_resamples: int, method: str, gen: np.random.Generator) -> dict[str, Any]:
    """The simultaneous rank intervals of a diagnosis's models (in rank order): the max-t critical value
    of every pairwise gap, and the ranks that the pairs both separated by it and resolved allow.
    """
    held = _held(diag)
    source = held.source
    every = diag.all_pairs()
    names = list(diag.models)
    m, n = len(names), diag.n
    level = float(diag.settings["confidence_level"])
    cols = every.columns
    i, j = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    delta, se = np.asarray(cols["delta"], dtype=float), np.asarray(cols["se"], dtype=float)
    codes, n_groups = source.coding if isinstance(source, ScoreMatrix) else (None, source.n_groups)
    cov = source_covariance(source, held.local_order, every)
    ranked_x = ranked_matrix(diag)
    if method == "bootstrap" and ranked_x is None:
        msg = "method='bootstrap' needs the scores in memory (item shards: 'gaussian' or 'auto')"
        raise ValueError(msg)
    chosen = chosen_method(method, in_memory=ranked_x is not None, units=n_groups or n, n_pairs=i.size,
                           n_resamples=n_resamples)
    # with clusters each gap is studentised by its own CR2 se and referred to its cluster t (the kernel)
    crit, se = max_t_critical_value(chosen, ranked_x, i, j, delta, se, cov, level, n_resamples, gen,
                                    codes=codes, n_groups=n_groups,
                                    df=cols["cluster_df"] if "cluster_df" in cols else None)
    simultaneous = delta - crit * se > 0  # pairs are in rank order: delta >= 0
    resolved = resolved_everywhere(every)
    shown = diag.columns
    at = np.full(m * m, -1, dtype=np.int64)
    at[i * m + j] = np.arange(i.size)
    si, sj = np.asarray(shown["rank_a"]) - 1, np.asarray(shown["rank_b"]) - 1
    resolved[at[si * m + sj]] &= resolved_everywhere(diag)  # a shown pair: the table's word too
    separated = simultaneous & resolved
    pair_idx = np.stack([i, j], axis=1)
    _, both = tie_groups_and_rank_intervals(m, pair_idx, separated, complete=True)
    _, alone = tie_groups_and_rank_intervals(m, pair_idx, simultaneous, complete=True)
    return {"critical_value": float(crit), "method": chosen, "resampled": "clusters" if n_groups else "items",
            "rank_ci_low": np.array([both[k][0] for k in range(m)]),
            "rank_ci_high": np.array([both[k][1] for k in range(m)]),
            "max_t_rank_ci_low": np.array([alone[k][0] for k in range(m)]),
            "max_t_rank_ci_high": np.array([alone[k][1] for k in range(m)]), "cov": cov}


def winner_of(diag: Any, *, level: float, gen: np.random.Generator, target: str = "winner", new: int | None = None,
              beta: float | None = None) -> dict[str, Any]:
    """The selected winner's score (or gap) corrected for selection, from the diagnosis's covariance of
    the means (cluster-robust with clusters; raised to the run noise of the models table with runs).
    """
    held = _held(diag)
    source, order = held.source, held.local_order
    every = diag.all_pairs() if not source.n_groups else diag  # the covariance needs every pair's se without clusters
    cov = source_covariance(source, order, every)
    ranked_x = ranked_matrix(diag)
    step = 1.0 if source.binary else (score_step(ranked_x) if ranked_x is not None else 0.0)
    extra = None
    if held.runs is not None:  # the winner's variance over items and runs, as the models table's
        extra = np.asarray(model_run_variance(held.runs[0])[0])[order]
    out = winner_from_covariance(np.asarray(diag.means, dtype=float), cov, list(diag.models), level, gen,
                                 n_groups=source.n_groups, n_items=diag.n, slack=step / (2.0 * diag.n),
                                 extra_var=extra, beta=beta, target=target, new=new)
    if not out["se"] > 0:  # every item the same (a 100% score): no variance, so no interval -- never a zero-width one
        warn(f"the selected target ({', '.join(map(str, out['selected']))}) has no variance over the items: its "
             "selection-corrected estimates and intervals are undefined (NaN)", DegenerateDataWarning)
        nan = (math.nan, math.nan)
        out.update(median_unbiased=math.nan, hybrid_estimate=math.nan, naive_ci=nan, conditional_ci=nan,
                   hybrid_ci=nan, projection_ci=nan)
    return out


def fragility_of(diag: Any) -> dict[str, Any] | None:
    """The fewest items whose removal ties or reverses each shown gap, and #1 (None: graded item
    shards, whose per-item differences are not at hand): from the diagnosis's means for 0/1 scores
    (as whole counts), from the per-item differences of the shown pairs and of #1's for graded ones
    -- never from the diagnosis of every pair.
    """
    held = _held(diag)
    source = held.source
    if not source.binary and not isinstance(source, ScoreMatrix):
        return None
    cols = diag.columns
    i, j = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    flips, top, _ = pair_flips(source, np.asarray(held.local_order), np.asarray(diag.means, dtype=float), i, j)
    k_top = int(np.argmin(top))
    return {"pairs": flips, "top": float(top[k_top]), "challenger": diag.models[k_top + 1]}


def scores_fragility(source: ScoreMatrix, pairs: str) -> dict[str, Any]:
    """:func:`fragility_of` straight from scores in memory, without a diagnosis: the models ranked as
    :func:`~llm_power.diagnose` ranks them (:func:`~llm_power._kernel.ranks.rank_order` of the same
    means), its pairs (``pairs``), their gaps (the same numbers as its ``delta``) and counts.
    """
    means = source.moments()[0]
    order = rank_order(means)
    idx = pair_indices(source.n_models, pairs)
    i, j = idx[:, 0], idx[:, 1]
    flips, top, delta = pair_flips(source, order, means[order], i, j, gaps=True)
    names = [source.models[k] for k in order]
    k_top = int(np.argmin(top))
    return {"models": names, "i": i, "j": j, "delta": delta, "pairs": flips, "top": float(top[k_top]),
            "challenger": names[k_top + 1]}


def pair_flips(source: ScoreSource, order: np.ndarray, ranked_means: np.ndarray, i: np.ndarray, j: np.ndarray, *,
               gaps: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """For each pair (i, j) of ranks (``order``: the source's column of each rank), the fewest items
    whose removal makes the gap <= 0; the same for #1's pairs (0, k), k = 1..M-1; and with ``gaps``
    the pairs' gaps.

    0/1 scores: a pair's b - c is the difference of the two models' correct answers (the integer
    column sums, recovered from the means as diagnose recovers them), so every pair is two lookups
    (:func:`~llm_power._kernel.ranks.binary_gap_items_to_flip`). Graded scores: the sorted per-item
    differences of these pairs only, a block of pairs at a time (:func:`_graded_flips`).
    """
    n, m = source.n, order.size
    if source.binary:
        right = np.rint(ranked_means * n)  # each model's correct answers: exact whole numbers
        gap = right[i] - right[j]  # = b - c
        top = binary_gap_items_to_flip(right[0] - right[1:], n)
        return binary_gap_items_to_flip(gap, n), top, (gap / n if gaps else None)
    x = source.matrix()
    flips, delta = _graded_flips(x, order[i], order[j], gaps)
    first = np.arange(1, m)
    if i.size >= m - 1 and not i[:m - 1].any() and np.array_equal(j[:m - 1], first):  # pairs="all": #1's lead
        top = flips[:m - 1]
    else:
        top, _ = _graded_flips(x, np.full(m - 1, order[0]), order[first], False)
    return flips, top, delta


def _graded_flips(x: np.ndarray, ci: np.ndarray, cj: np.ndarray,
                  gaps: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Per pair of columns (ci, cj) of graded scores: the items that flip it (the kernel's
    :func:`~llm_power._kernel.ranks.items_to_flip`) and, with ``gaps``, the mean difference -- formed
    from the same blocks of differences as diagnose's (so the same bits), ``_FLIP_BLOCK`` values at a time.
    """
    n = x.shape[0]
    flips = np.empty(ci.size)
    delta = np.empty(ci.size) if gaps else None
    step = max(1, _FLIP_BLOCK // max(n, 1))
    for start in range(0, ci.size, step):
        sl = slice(start, start + step)
        with np.errstate(over="ignore", invalid="ignore"):
            d = x[:, ci[sl]] - x[:, cj[sl]]
        if not np.all(np.isfinite(d)):
            msg = "the score differences overflow: scores are too large to compare (rescale them)"
            raise DataError(msg)
        if delta is not None:
            delta[sl] = d.mean(axis=0)
        flips[sl] = items_to_flip(d)
    return flips, delta
