"""ICC, design effect and cluster-robust SE: against slow loops, statsmodels and simulation."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from llm_power import DataError, DegenerateDataWarning, cluster_robust_se, design_effect, design_effects, icc_anova


def slow_icc(y, g):
    """ANOVA ICC with explicit loops over clusters (Donner 1986)."""
    labels = sorted(set(g))
    groups = [[y[i] for i in range(len(y)) if g[i] == lab] for lab in labels]
    n = len(y)
    k = len(groups)
    grand = sum(y) / n
    ssb = sum(len(x) * (sum(x) / len(x) - grand) ** 2 for x in groups)
    ssw = sum(sum((v - sum(x) / len(x)) ** 2 for v in x) for x in groups)
    msb, msw = ssb / (k - 1), ssw / (n - k)
    n0 = (n - sum(len(x) ** 2 for x in groups) / n) / (k - 1)
    return (msb - msw) / (msb + (n0 - 1) * msw)


def clustered(rng, sizes, icc, binary=False):
    g = np.repeat(np.arange(len(sizes)), sizes)
    u = rng.normal(0, np.sqrt(icc), size=len(sizes))[g]
    y = u + rng.normal(0, np.sqrt(1 - icc), size=g.size)
    if binary:
        y = (y > 0.3).astype(float)
    return y, g


def test_icc_equals_slow_loop_unequal_sizes():
    rng = np.random.default_rng(30)
    for _ in range(20):
        sizes = rng.integers(2, 40, size=int(rng.integers(3, 15)))
        y, g = clustered(rng, sizes, 0.2, binary=bool(rng.integers(0, 2)))
        res = icc_anova(y, g)
        assert res.icc_raw == pytest.approx(slow_icc(list(y), list(g)), rel=1e-10, abs=1e-12)
        assert res.icc == max(0.0, res.icc_raw)
        kish = np.sum(sizes.astype(float) ** 2) / y.size  # Kish (1965): sum m^2 / N
        assert res.design_effect == pytest.approx(1 + (kish - 1) * res.icc)
        assert res.design_effect_paper == pytest.approx(1 + (y.size / len(sizes) - 1) * res.icc)


def test_icc_recovers_the_true_value_in_simulation():
    rng = np.random.default_rng(31)
    for true in (0.0, 0.05, 0.3):
        est = [icc_anova(*clustered(rng, np.full(40, 25), true)).icc_raw for _ in range(200)]
        # the ANOVA estimator is nearly unbiased; SE of the mean of 200 estimates is < 0.005
        assert np.mean(est) == pytest.approx(true, abs=0.015)


def test_cr1_equals_statsmodels_cluster_robust_ols():
    rng = np.random.default_rng(32)
    for _ in range(20):
        sizes = rng.integers(1, 30, size=int(rng.integers(2, 20)))
        y, g = clustered(rng, sizes, 0.3)
        ref = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": g}).bse[0]
        assert cluster_robust_se(y, g) == pytest.approx(ref, rel=1e-10)


def test_design_effect_is_the_variance_inflation_of_the_mean():
    # Simulation: the variance of the mean of clustered data / the IID variance ~ DE
    rng = np.random.default_rng(33)
    sizes = np.full(30, 20)
    means = [clustered(rng, sizes, 0.1)[0].mean() for _ in range(4000)]
    iid_var = 1.0 / sizes.sum()
    de = design_effect(20, 0.1)
    assert np.var(means) / iid_var == pytest.approx(de, rel=0.07)


def test_degenerate_clusters_warn_and_return_nan():
    with pytest.warns(DegenerateDataWarning, match="undefined"):
        res = icc_anova([1.0, 0.0, 1.0], ["a", "a", "a"])
    assert np.isnan(res.icc)
    with pytest.warns(DegenerateDataWarning):
        assert np.isnan(cluster_robust_se([1.0, 0.0], [1, 1]))
    with pytest.raises(ValueError, match=r"`cluster` must have one label per item \(3\); got shape \(2,\)"):
        icc_anova([1.0, 0.0, 1.0], [1, 2])


def test_unequal_sizes_kish_and_robust_track_the_inflation_paper_understates():
    # Simulation (SPEC §4 Clustering, corrected 2026-11-30): sizes 20-400, ICC 0.1. The true
    # variance inflation of the mean is 1 + (sum m^2 / N - 1) ICC; the paper's mean-size form is
    # below it, the measured (CR1) and Kish design effects track it.
    rng = np.random.default_rng(34)
    sizes = rng.integers(20, 401, size=30)
    icc = 0.1
    n = sizes.sum()
    true = 1 + (np.sum(sizes.astype(float) ** 2) / n - 1) * icc
    sims = [clustered(rng, sizes, icc) for _ in range(300)]
    means = np.array([y.mean() for y, _ in sims])
    assert np.var(means) / (1.0 / n) == pytest.approx(true, rel=0.2)  # the simulation itself
    des = [design_effects(y, g) for y, g in sims]
    robust = np.mean([d.robust for d in des])
    anova = np.mean([d.anova for d in des])
    paper = np.mean([d.paper for d in des])
    assert robust == pytest.approx(true, rel=0.15)
    assert anova == pytest.approx(true, rel=0.1)
    assert paper < 0.9 * true


def test_missing_cluster_labels_are_an_error_everywhere():
    y = [1.0, 0.0, 1.0, 1.0]
    for labels in (["a", None, "b", "b"], [1.0, np.nan, 2.0, 2.0], ["a", "", "b", "b"], ["a", "  ", "b", "b"]):
        with pytest.raises(DataError, match="no cluster label"):
            icc_anova(y, labels)
        with pytest.raises(DataError, match="no cluster label"):
            cluster_robust_se(y, labels)
        with pytest.raises(DataError, match="no cluster label"):
            design_effects(y, labels)


def test_design_effects_robust_equals_statsmodels():
    rng = np.random.default_rng(35)
    sizes = rng.integers(5, 60, size=12)
    y, g = clustered(rng, sizes, 0.2)
    ref = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": g}).bse[0]
    de = design_effects(y, g)
    assert de.cr1 == pytest.approx(ref**2 / (np.var(y, ddof=1) / y.size), rel=1e-10)
    assert de.kish_cluster_size == pytest.approx(np.sum(sizes.astype(float) ** 2) / sizes.sum())
