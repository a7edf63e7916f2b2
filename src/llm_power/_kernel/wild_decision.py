r"""The wild cluster bootstrap's decision, in one place: its seed (the first draw of the caller's
generator), its work bound and its two-sided test of a zero mean with the interval that inverts it
from the same draws (:mod:`.wild_cluster` does the arithmetic). :func:`.verdict.cluster_verdict`
turns it into the clustered verdict of a pair; the repeated-samples wing and each model's interval
use it as they are.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from .._core.files import limit
from .sufficient import PairSums

__all__ = ["WILD_RESAMPLES", "WildDecision", "check_wild_work", "wild_decision", "wild_seed"]

#: bootstrap draws of the wild cluster test (all 2^G sign vectors when fewer)
WILD_RESAMPLES = 9999


def wild_seed(gen: np.random.Generator) -> int:
    """The seed of the wild cluster bootstrap's weights: the first draw of the caller's generator,
    taken from a copy (the generator itself is not advanced), so that ``compare``, ``diagnose`` and
    the gate draw the same weights for the same ``rng`` whatever else they draw first.
    """
    return int(copy.deepcopy(gen).integers(2**63))


def check_wild_work(n_columns: int, n_clusters: int, what: str, n_resamples: int = WILD_RESAMPLES) -> None:
    """The wild cluster bootstrap's work bound: ``n_columns`` (pairs, models) x its draws at most
    ``LLM_POWER_MAX_WILD_DRAWS`` (its inverted interval tests each column about 50 times).
    """
    from .wild_cluster import WEBB_MAX_CLUSTERS

    draws = n_resamples if n_clusters <= WEBB_MAX_CLUSTERS else min(n_resamples, 2 ** n_clusters)  # as the kernel
    cap = limit("LLM_POWER_MAX_WILD_DRAWS")
    if n_columns * draws > cap:
        msg = (f"the wild cluster bootstrap of {n_columns:,} {what} x {draws:,} draws is more than {cap:,} "
               "(its inverted interval tests each one about 50 times): show fewer pairs (--pairs adjacent, --top K), "
               "or use --cluster-method cr2 / cluster_method='cr2' (LLM_POWER_MAX_WILD_DRAWS raises the limit)")
        raise ValueError(msg)


@dataclass(frozen=True)
class WildDecision:
    """The wild cluster bootstrap's test of a zero mean and its inverted interval, per column (shape (P,)).

    ``pvalue`` never below 1 / ``n_resamples`` and 1 where not ``estimable`` (no variation between
    clusters: no evidence, as the t tests' NaN variance); ``standard_error`` the CR1 SE that
    studentises the test (``statistic`` = estimate / SE); ``ci_low``/``ci_high`` the interval at
    ``confidence_level`` from the same draws (None without a level), so that it excludes 0 exactly
    when the test rejects at 1 - level; ``cluster_sums`` (G, P) and ``sizes`` what the draws act on
    (the interval at another level is ``wild_cluster_interval`` of them with the same ``seed``).
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    estimable: np.ndarray
    standard_error: np.ndarray
    n_resamples: int
    ci_low: np.ndarray | None
    ci_high: np.ndarray | None
    cluster_sums: np.ndarray
    sizes: np.ndarray
    seed: int


def wild_decision(sums: PairSums, *, seed: int, n_resamples: int = WILD_RESAMPLES,
                  confidence_level: float | None = None) -> WildDecision:
    """The restricted wild cluster bootstrap's two-sided test of a zero mean of each column of ``sums``
    (paired gaps, or per-question differences at several k) and, with ``confidence_level``, its
    inverted interval -- the one place where its p-value is floored at 1/B and its draws seeded
    (``seed`` from :func:`wild_seed` of the caller's generator: the same seed, the same weights in
    every entry point).
    """
    from .wild_cluster import wild_cluster_interval, wild_cluster_test

    sizes, resid, _ = sums.clusters()
    cluster_sums = resid + sizes[:, None] * sums.delta
    test = wild_cluster_test(cluster_sums, sizes, 0.0, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    b_count = int(test.n_resamples)
    raw = np.asarray(test.pvalue, dtype=float).reshape(-1)
    # the p-value's resolution is 1 / B: never below it; not estimable (no between-cluster variation) is
    # no evidence (p = 1), as the t tests' NaN variance
    pvalue = np.where(np.isnan(raw), 1.0, np.maximum(raw, 1.0 / b_count))
    low = high = None
    if confidence_level is not None:
        ci = wild_cluster_interval(cluster_sums, sizes, confidence_level=confidence_level, n_resamples=n_resamples,
                                   rng=np.random.default_rng(seed))
        low, high = np.asarray(ci.low, dtype=float).reshape(-1), np.asarray(ci.high, dtype=float).reshape(-1)
    se = np.asarray(test.standard_error, dtype=float).reshape(-1)
    return WildDecision(statistic=np.asarray(test.statistic, dtype=float).reshape(-1), pvalue=pvalue,
                        estimable=~np.isnan(raw), standard_error=se,
                        n_resamples=b_count, ci_low=low, ci_high=high, cluster_sums=cluster_sums, sizes=sizes,
                        seed=seed)
