"""Validity of the clustered verdict by vectorised simulation (issue 9 acceptance).

Each simulated benchmark is one column of an items x simulations matrix of paired differences
D, pushed through exactly the code diagnose and compare run (``pair_sums`` -> ``iid_verdict`` ->
``cluster_verdict``), so thousands of benchmarks cost one pass. The random-intercept model
D_i = u_g + e_i with Var(u) = ICC, Var(e) = 1 - ICC has the true variance inflation of the mean
1 + (sum m_g^2 / N - 1) ICC (Kish 1965).

Fast defaults run in ``make test-fast``; the ``slow`` versions use 10x the simulations.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from llm_power import diagnose
from llm_power._verdict import cluster_verdict, iid_verdict, pair_sums, paired_t_test

ALPHA = 0.05


def simulate(rng, sizes, icc, n_sims, *, clustered=True, binary=False):
    """Verdict arrays of ``n_sims`` null benchmarks (no true gap) with the given cluster sizes."""
    g = sizes.size
    codes = np.repeat(np.arange(g), sizes)
    n = int(sizes.sum())
    out = {"iid_resolved": [], "cluster_resolved": [], "cluster_reject": [], "de": []}
    step = max(1, 4_000_000 // n)
    for start in range(0, n_sims, step):
        s = min(step, n_sims - start)
        if clustered:
            u = rng.normal(0, math.sqrt(icc), size=(g, s))[codes]
        else:
            u = 0.0
        latent = u + rng.normal(0, math.sqrt(1 - icc) if clustered else 1.0, size=(n, s))
        if binary:  # two models with the same cluster-level skill: D = x_A - x_B in {-1, 0, 1}
            other = (u if clustered else 0.0) + rng.normal(0, math.sqrt(1 - icc) if clustered else 1.0, size=(n, s))
            d = (latent > 0).astype(float) - (other > 0).astype(float)
        else:
            d = latent
        sums = pair_sums(d, codes, g)
        var = sums.ss / n if binary else sums.ss / (n - 1)
        if binary:
            from llm_power._verdict import mcnemar_test

            b = np.sum(d > 0, axis=0).astype(float)
            c = np.sum(d < 0, axis=0).astype(float)
            p = mcnemar_test(b, c, "mcnemar_asymptotic", "two-sided")[1]
            verdict = iid_verdict(sums.delta, var, n, p, alpha=ALPHA, power=0.8, alternative="two-sided", b=b, c=c)
        else:
            p = paired_t_test(sums.delta, var, n, "two-sided")[1]
            verdict = iid_verdict(sums.delta, var, n, p, alpha=ALPHA, power=0.8, alternative="two-sided")
        cv = cluster_verdict(sums, var, verdict.resolved, alpha=ALPHA, power=0.8, alternative="two-sided",
                             design_effect="robust")
        out["iid_resolved"].append(verdict.resolved)
        out["cluster_resolved"].append(cv.resolved)
        out["cluster_reject"].append(cv.pvalue <= ALPHA)
        out["de"].append(cv.design_effect)
    return {k: np.concatenate(v) for k, v in out.items()}


def true_inflation(sizes, icc):
    return 1 + (np.sum(sizes.astype(float) ** 2) / sizes.sum() - 1) * icc


def run_de_and_false_resolution(n_sims, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for icc in (0.05, 0.1, 0.3):
        sizes = rng.integers(20, 401, size=30)
        clustered = simulate(rng, sizes, icc, n_sims)
        iid = simulate(rng, sizes, icc, n_sims, clustered=False)
        rows.append((icc, sizes, clustered, iid))
    return rows


def check_de_and_false_resolution(rows, n_sims):
    for icc, sizes, clustered, iid in rows:
        true = true_inflation(sizes, icc)
        # the reported (measured, CR2) design effect tracks the true variance inflation within 25%
        assert np.mean(clustered["de"]) == pytest.approx(true, rel=0.25)
        # clustered false resolutions <= 2x the IID-data rate, with Monte Carlo slack
        rate_c = clustered["cluster_resolved"].mean()
        rate_i = iid["iid_resolved"].mean()
        slack = 3 * math.sqrt(rate_i / n_sims) + 3 * math.sqrt(max(rate_c, 1e-4) / n_sims)
        assert rate_c <= 2 * rate_i + slack, (icc, rate_c, rate_i)


def run_size_with_8_clusters(n_sims, seed):
    rng = np.random.default_rng(seed)
    out = []
    for icc, equal, binary in ((0.05, False, False), (0.1, False, False), (0.3, False, False), (0.1, True, False),
                               (0.1, False, True)):
        sizes = np.full(8, 200) if equal else rng.integers(20, 401, size=8)
        res = simulate(rng, sizes, icc, n_sims, binary=binary)
        out.append(((icc, equal, binary), res["cluster_reject"].mean()))
    return out


def check_size(rows, n_sims):
    mc = 2 * math.sqrt(ALPHA * (1 - ALPHA) / n_sims)
    for label, size in rows:
        assert size <= ALPHA + mc, (label, size)


def test_design_effect_tracks_inflation_and_false_resolutions_are_bounded():
    check_de_and_false_resolution(run_de_and_false_resolution(4000, 1), 4000)


@pytest.mark.slow
def test_design_effect_tracks_inflation_and_false_resolutions_are_bounded_large():
    check_de_and_false_resolution(run_de_and_false_resolution(40_000, 2), 40_000)


def test_cluster_test_size_with_8_clusters():
    check_size(run_size_with_8_clusters(4000, 3), 4000)


@pytest.mark.slow
def test_cluster_test_size_with_8_clusters_large():
    check_size(run_size_with_8_clusters(40_000, 4), 40_000)


def test_the_simulated_path_is_the_one_diagnose_runs():
    # one simulated benchmark through diagnose itself gives the same DE and cluster p-value
    rng = np.random.default_rng(5)
    sizes = rng.integers(20, 401, size=8)
    codes = np.repeat(np.arange(8), sizes)
    u = rng.normal(0, math.sqrt(0.1), size=8)[codes]
    a = u + rng.normal(0, math.sqrt(0.9), size=codes.size)
    x = np.c_[a + 1.0, np.ones(codes.size)]  # model B scores 1 everywhere: D = a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = diagnose(x, cluster=codes, cluster_resamples=0)
    sums = pair_sums(a[:, None], codes, 8)
    var = sums.ss / (codes.size - 1)
    cv = cluster_verdict(sums, var, np.array([True]), alpha=ALPHA, power=0.8, alternative="two-sided",
                         design_effect="robust")
    assert res.pairs[0].design_effect == pytest.approx(float(cv.design_effect[0]), rel=1e-9)
    assert res.pairs[0].pvalue_cluster == pytest.approx(float(cv.pvalue[0]), rel=1e-9)
