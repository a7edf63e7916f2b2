"""The rankings section of a diagnosis: simultaneous rank intervals and the set that can be #1,
the selected winner's score corrected for selection, and how few items flip each gap and #1.

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

from .._kernel.ranks import (
    binary_items_to_flip,
    bootstrap_max_deviation,
    gaussian_max_abs,
    items_to_flip,
    score_step,
    winner_from_covariance,
)
from ..matrix import ScoreMatrix, ScoreSource
from ._regimes import REGIMES, tie_groups_and_rank_intervals

__all__ = ["MAX_RANK_MODELS", "RANK_METHODS", "fragility_columns", "rankings_section", "ranks_available"]

#: diagnose computes the rankings by default up to this many models (4,950 pairs)
MAX_RANK_MODELS = 100
#: pairs x resamples of the max-t bootstrap refused beyond this
MAX_RANK_ELEMENTS = 100_000_000
#: rank_method="auto": the max-t critical value is bootstrapped when (items or clusters) x resamples
#: stays below this (small benchmarks, where the normal limit is rough), else drawn from the normal
#: with the means' covariance (the bootstrap's large-sample limit, at a fraction of the cost)
MAX_BOOTSTRAP_DRAWS = 2_000_000
#: how the critical value of the rank intervals is found
RANK_METHODS = ("auto", "bootstrap", "gaussian")
#: graded differences formed per block when counting the items that flip a gap
_FLIP_BLOCK = 4_000_000


def ranks_available(source: ScoreSource, rank_resamples: int) -> str | None:
    """Why the rankings cannot be computed for this source (None: they can)."""
    m = source.n_models
    if m < 2 or source.n < 2:
        return "at least 2 models and 2 items are needed to rank"
    if m * (m - 1) // 2 * rank_resamples > MAX_RANK_ELEMENTS:
        return (f"{m:,} models are {m * (m - 1) // 2:,} pairs; x {rank_resamples:,} resamples that is more than "
                f"{MAX_RANK_ELEMENTS:,} values (use `top`, or fewer rank resamples)")
    return None


def _resolved_everywhere(diag: Any) -> np.ndarray:
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


def rankings_section(source: ScoreSource, ranked_x: np.ndarray | None, all_pairs: Any, shown: Any, *,  # noqa: PLR0913
                     confidence_level: float, rank_resamples: int, gen: np.random.Generator,
                     fragile_share: float, rank_method: str = "auto", extra_var: Any = None,
                     order: np.ndarray | None = None) -> dict[str, Any]:
    """The rankings of a diagnosis (models in rank order; ``all_pairs`` the diagnosis of every pair
    with the same regimes, ``shown`` the displayed one; ``ranked_x`` the matrix in rank order, None
    for item shards: then the normal limit, and no fragility of graded scores; ``order`` the
    source's columns by rank).
    """
    names = list(all_pairs.models)
    m, n = len(names), all_pairs.n
    cols = all_pairs.columns
    i, j = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    delta, se = np.asarray(cols["delta"], dtype=float), np.asarray(cols["se"], dtype=float)
    codes, n_groups = source.coding if isinstance(source, ScoreMatrix) else (None, source.n_groups)
    order = np.arange(m) if order is None else order
    cov = source_covariance(source, order, all_pairs)
    if rank_method == "bootstrap" and ranked_x is None:
        msg = "rank_method='bootstrap' needs the scores in memory (item shards: 'gaussian' or 'auto')"
        raise ValueError(msg)
    if ranked_x is not None and (rank_method == "bootstrap" or (
            rank_method == "auto" and (n_groups or n) * rank_resamples <= MAX_BOOTSTRAP_DRAWS)):
        method = "bootstrap"
        largest = bootstrap_max_deviation(ranked_x, i, j, delta, se, rank_resamples, gen,
                                          codes=codes, n_groups=n_groups)
        crit = float(np.quantile(largest, confidence_level))
    else:  # many items: the normal limit, with the covariance of the means (cluster-robust with clusters)
        method = "gaussian"
        crit = gaussian_max_abs(cov, i, j, se, confidence_level, gen, df=n_groups - 1 if n_groups else math.inf)
    simultaneous = delta - crit * se > 0  # pairs are in rank order: delta >= 0
    resolved = _resolved_everywhere(all_pairs)
    shown_flags = _resolved_everywhere(shown)
    at = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(i, j, strict=True))}
    for a, b, ok in zip(np.asarray(shown.columns["rank_a"]) - 1, np.asarray(shown.columns["rank_b"]) - 1,
                        shown_flags, strict=True):
        resolved[at[int(a), int(b)]] &= bool(ok)
    separated = simultaneous & resolved
    pair_idx = np.stack([i, j], axis=1)
    _, both = tie_groups_and_rank_intervals(m, pair_idx, separated, "all")
    _, alone = tie_groups_and_rank_intervals(m, pair_idx, simultaneous, "all")
    low = [both[k][0] for k in range(m)]
    high = [both[k][1] for k in range(m)]
    section: dict[str, Any] = {
        "confidence_level": confidence_level, "critical_value": crit, "n_resamples": rank_resamples,
        "resampled": "clusters" if n_groups else "items", "method": method, "rank_low": low, "rank_high": high,
        "best_set": [names[k] for k in range(m) if low[k] == 1],
        "top_sets": {str(k): [names[g] for g in range(m) if low[g] <= k] for k in (1, 3, 5, 10) if k < m},
        "simultaneous": {"rank_low": [alone[k][0] for k in range(m)], "rank_high": [alone[k][1] for k in range(m)],
                         "best_set": [names[k] for k in range(m) if alone[k][0] == 1]},
    }
    step = 1.0 if source.binary else (score_step(ranked_x) if ranked_x is not None else 0.0)
    section["winner"] = winner_from_covariance(
        np.asarray(all_pairs.means, dtype=float), cov, names, confidence_level, gen, n_groups=n_groups, n_items=n,
        slack=step / (2.0 * n), extra_var=extra_var)
    if ranked_x is None and not source.binary:
        section["fragility"] = None  # graded item shards: the per-item differences are not at hand
        return section
    flips = fragility_columns(ranked_x, np.zeros(m - 1, dtype=np.int64), np.arange(1, m), cols, n, source.binary)
    k_top = int(np.argmin(flips))
    top = float(flips[k_top])
    section["fragility"] = {"fragile_share": fragile_share, "top_model": names[0], "challenger": names[k_top + 1],
                            "items_to_flip_top": top, "share_top": top / n,
                            "fragile_top": bool(top / n <= fragile_share)}
    return section


def fragility_columns(x: np.ndarray | None, i: np.ndarray, j: np.ndarray, cols: Any, n: int,
                      binary: bool) -> np.ndarray:
    """For each pair (i, j) of ranked columns: the fewest items whose removal makes the gap <= 0
    (0/1: from the discordant counts in ``cols``; graded: the sorted differences, in blocks).
    """
    if binary and "b" in cols:
        b, c = np.asarray(cols["b"], dtype=float), np.asarray(cols["c"], dtype=float)
        pos = _pair_positions(cols, i, j)
        return binary_items_to_flip(b[pos], c[pos], n)
    if x is None:
        msg = "graded scores: the items that flip a gap need the per-item differences"
        raise ValueError(msg)
    out = np.empty(i.size)
    step = max(1, _FLIP_BLOCK // max(n, 1))
    for start in range(0, i.size, step):
        sl = slice(start, start + step)
        out[sl] = items_to_flip(x[:, i[sl]] - x[:, j[sl]])
    return out


def _pair_positions(cols: Any, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Rows of ``cols`` holding the pairs (i, j) (0-based ranks)."""
    ra, rb = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    m = int(max(ra.max(initial=0), rb.max(initial=0), i.max(initial=0), j.max(initial=0))) + 1
    where = np.full(m * m, -1, dtype=np.int64)
    where[ra * m + rb] = np.arange(ra.size)
    pos = where[i * m + j]
    if (pos < 0).any():
        msg = "a pair is missing from the columns"
        raise ValueError(msg)
    return np.asarray(pos, dtype=np.int64)
