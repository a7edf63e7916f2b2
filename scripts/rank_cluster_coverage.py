"""Simultaneous coverage of the max-t rank intervals with few clusters (docs/rankings.md, issue 39).

Leaderboards of six models whose true means are all equal (the least favourable case: the rank
intervals cover every true rank exactly when no pair is separated, i.e. when every pairwise
interval covers its true gap of 0) on G clusters of items, each model with its own random effect
per cluster (so every gap has a cluster component) and 0/1 items. For each design the share of
leaderboards whose pairwise intervals delta_k +- c se_k all cover 0:

- ``old bootstrap`` / ``old gaussian``: the code before issue 39 (studentised by the IID se; the
  cluster bootstrap's quantile, or a multivariate t on G - 1 df with the CR2 covariance);
- ``bootstrap`` / ``gaussian``: :func:`llm_power._kernel.ranks.max_t_critical_value` (each pair
  studentised by its own CR2 se and referred to its own cluster t on its Imbens-Kolesar df; the
  bootstrap takes the larger of its quantile and that reference).

Also the mean half-width c se_k in units of the pair's CR2 se (how wide the intervals are). The
normal-limit critical values use 5,000 draws here (the package's default is 20,000: a little less
Monte-Carlo noise in each critical value, so coverage a hair closer to nominal).

Run: python scripts/rank_cluster_coverage.py [replications]  (2,000 by default; minutes on 2 cores).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from llm_power._kernel.ranks import (
    bootstrap_max_deviation,
    gaussian_max_abs,
    max_t_critical_value,
    mean_covariance,
    pair_se,
)
from llm_power._kernel.variance import mean_variance

METHODS = ("old bootstrap", "old gaussian", "bootstrap", "gaussian")


def cluster_sizes(g: int, per: int, unequal: bool) -> np.ndarray:
    """``g`` clusters of ``per`` items on average: equal, or spread tenfold (largest / smallest)."""
    if not unequal:
        return np.full(g, per)
    w = np.exp(np.linspace(0.0, math.log(10.0), g))
    return np.maximum(2, np.round(w / w.sum() * g * per)).astype(int)


def leaderboard(rng: np.random.Generator, codes: np.ndarray, g: int, m: int, tau: float) -> np.ndarray:
    """0/1 scores of ``m`` equal models: p = 0.6 + a cluster's difficulty + the model's own effect."""
    p = 0.6 + rng.normal(0.0, 0.15, g)[codes][:, None] + rng.normal(0.0, tau, (g, m))[codes]
    return (rng.random((codes.size, m)) < np.clip(p, 0.02, 0.98)).astype(float)


def design(g: int, unequal: bool, reps: int, *, per: int = 100, m: int = 6, tau: float = 0.15,  # noqa: PLR0913
           n_resamples: int = 999, n_draws: int = 5000, seed: int = 0,
           level: float = 0.95) -> dict[str, tuple[float, float]]:
    """(coverage, mean half-width in CR2 se) of each method over ``reps`` leaderboards."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(g), cluster_sizes(g, per, unequal))
    n = codes.size
    i, j = np.triu_indices(m, 1)
    hits = dict.fromkeys(METHODS, 0)
    width = dict.fromkeys(METHODS, 0.0)
    for _ in range(reps):
        x = leaderboard(rng, codes, g, m, tau)
        means = x.mean(axis=0)
        delta = means[i] - means[j]
        d = x[:, i] - x[:, j]
        se_iid = np.sqrt(d.var(axis=0) / n)  # the paired plug-in se of 0/1 scores (diagnose's "se")
        cov = mean_covariance(x, True, codes, g)
        own = pair_se(cov, i, j)
        df = mean_variance(d, codes, g, ddof=0).df  # each pair's Imbens-Kolesar df (diagnose's cluster_df)
        got = {
            "old bootstrap": (float(np.quantile(bootstrap_max_deviation(x, i, j, delta, se_iid, n_resamples, rng,
                                                                        codes=codes, n_groups=g), level)), se_iid),
            "old gaussian": (gaussian_max_abs(cov, i, j, se_iid, level, rng, df=g - 1, n_draws=n_draws), se_iid),
        }
        for method in ("bootstrap", "gaussian"):
            got[method] = max_t_critical_value(method, x, i, j, delta, se_iid, cov, level, n_resamples, rng,
                                               codes=codes, n_groups=g, df=df, n_draws=n_draws)
        for name, (c, se) in got.items():
            hits[name] += bool(np.all(np.abs(delta) <= c * se))
            width[name] += float(np.mean(c * se / own))
    return {name: (hits[name] / reps, width[name] / reps) for name in METHODS}


def main(reps: int = 2000) -> None:
    mc = math.sqrt(0.95 * 0.05 / reps)
    print(f"simultaneous coverage of 95% max-t intervals, 6 equal models, {reps:,} leaderboards per row "
          f"(Monte-Carlo SE at 0.95: {mc:.4f}); in brackets the mean half-width in CR2 standard errors\n")
    print("| clusters | sizes | " + " | ".join(METHODS) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in METHODS) + " |")
    for g in (8, 14, 30):
        for unequal in (False, True):
            out = design(g, unequal, reps, seed=1000 * g + unequal)
            sizes = cluster_sizes(g, 100, unequal)
            label = f"{sizes.min()}-{sizes.max()}" if unequal else f"{sizes[0]} each"
            print(f"| {g} | {label} | " + " | ".join(f"{c:.3f} ({w:.2f})" for c, w in out.values()) + " |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
