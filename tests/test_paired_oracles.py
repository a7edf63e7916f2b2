"""Paired tests against independent implementations: scipy, statsmodels, brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q

from llm_power import (
    cochran_q,
    five_by_two_cv,
    mcnemar,
    paired_bootstrap,
    paired_t,
    permutation_test,
    sign_test,
    wilcoxon,
)

ALTS = ("two-sided", "less", "greater")


def random_pairs(rng, n, kind):
    if kind == "continuous":
        a = rng.normal(size=n)
        return a, 0.7 * a + rng.normal(0.1, 0.6, size=n)
    if kind == "graded":  # few distinct levels: ties and zeros
        a = rng.integers(0, 5, size=n) / 4
        return a, np.clip(a + rng.integers(-1, 2, size=n) / 4, 0, 1)
    a = rng.integers(0, 2, size=n).astype(float)
    return a, np.where(rng.random(n) < 0.7, a, 1 - a)


@pytest.mark.parametrize("kind", ["continuous", "graded", "binary"])
def test_paired_t_equals_scipy(kind):
    rng = np.random.default_rng(1)
    for _ in range(100):
        a, b = random_pairs(rng, int(rng.integers(3, 300)), kind)
        if np.ptp(a - b) == 0:
            continue
        for alt in ALTS:
            ours = paired_t(a, b, alternative=alt)
            ref = stats.ttest_rel(a, b, alternative=alt)
            assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
            assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
            assert ours.df == ref.df


@pytest.mark.parametrize("kind", ["continuous", "graded", "binary"])
def test_sign_test_equals_scipy_binomtest(kind):
    rng = np.random.default_rng(2)
    for _ in range(100):
        a, b = random_pairs(rng, int(rng.integers(2, 400)), kind)
        d = a - b
        pos, neg = int(np.sum(d > 0)), int(np.sum(d < 0))
        if pos + neg == 0:
            continue
        for alt in ALTS:
            ref = stats.binomtest(pos, pos + neg, 0.5, alternative=alt).pvalue
            assert sign_test(a, b, alternative=alt).pvalue == pytest.approx(ref, rel=1e-10, abs=1e-300)


def test_sign_test_on_binary_is_exact_mcnemar():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a, b = random_pairs(rng, int(rng.integers(20, 300)), "binary")
        assert sign_test(a, b).pvalue == pytest.approx(mcnemar(a, b).pvalue, rel=1e-12)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
@pytest.mark.parametrize("kind", ["continuous", "graded"])
def test_wilcoxon_approx_equals_scipy(kind, zero_method):
    rng = np.random.default_rng(4)
    for _ in range(80):
        a, b = random_pairs(rng, int(rng.integers(5, 400)), kind)
        if np.all(a == b):
            continue
        for alt in ALTS:
            for correction in (False, True):
                ours = wilcoxon(a, b, alternative=alt, method="approx", zero_method=zero_method, continuity_correction=correction)
                ref = stats.wilcoxon(a, b, alternative=alt, method="approx", zero_method=zero_method,
                                     correction=correction)
                assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


def test_wilcoxon_exact_equals_scipy():
    rng = np.random.default_rng(5)
    for _ in range(80):
        n = int(rng.integers(1, 51))
        a, b = random_pairs(rng, max(n, 2), "continuous")
        for alt in ALTS:
            ours = wilcoxon(a, b, alternative=alt, method="exact")
            ref = stats.wilcoxon(a, b, alternative=alt, method="exact")
            assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
            if alt != "two-sided":
                assert ours.statistic == pytest.approx(ref.statistic)


def _brute_force_flip_pvalue(a, b, func, alternative):
    observed = func(a, b)
    null = []
    for swaps in itertools.product((False, True), repeat=len(a)):
        s = np.array(swaps).reshape((-1,) + (1,) * (a.ndim - 1))
        null.append(func(np.where(s, b, a), np.where(s, a, b)))
    null = np.array(null)
    tol = 1e-9 * max(1.0, abs(observed))
    if alternative == "two-sided":
        return np.mean(np.abs(null) >= abs(observed) - tol)
    if alternative == "greater":
        return np.mean(null >= observed - tol)
    return np.mean(null <= observed + tol)


def _f1_difference(a, b):
    """F1 of A minus F1 of B from per-item (tp, fp, fn) rows."""
    def f1(x):
        tp, fp, fn = x[..., 0].sum(-1), x[..., 1].sum(-1), x[..., 2].sum(-1)
        return np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)
    return f1(a) - f1(b)


@pytest.mark.parametrize("alternative", ALTS)
def test_exact_permutation_equals_brute_force_enumeration(alternative):
    rng = np.random.default_rng(6)
    for n in range(2, 13):
        for kind in ("continuous", "graded", "binary"):
            a, b = random_pairs(rng, n, kind)
            if np.all(a == b):
                continue
            ref = _brute_force_flip_pvalue(a, b, lambda x, y: np.mean(x - y), alternative)
            assert permutation_test(a, b, alternative=alternative).pvalue == pytest.approx(ref, abs=1e-12)


def test_exact_permutation_with_nonlinear_statistic_equals_brute_force():
    rng = np.random.default_rng(7)
    for n in (4, 8, 11):
        a = rng.integers(0, 4, size=(n, 3)).astype(float)
        b = rng.integers(0, 4, size=(n, 3)).astype(float)
        ref = _brute_force_flip_pvalue(a, b, _f1_difference, "two-sided")
        ours = permutation_test(a, b, statistic=_f1_difference)
        assert ours.exact and ours.pvalue == pytest.approx(ref, abs=1e-12)

        def batched(x, y, axis):
            assert axis == 1
            return _f1_difference(x, y)

        assert permutation_test(a, b, statistic=batched).pvalue == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("alternative", ALTS)
def test_sign_flip_equals_scipy_permutation_test(alternative):
    rng = np.random.default_rng(8)

    def stat(x, y, axis=-1):
        return np.mean(x - y, axis=axis)

    for _ in range(40):
        a, b = random_pairs(rng, int(rng.integers(2, 15)), "continuous")
        ref = stats.permutation_test((a, b), stat, permutation_type="samples", n_resamples=np.inf,
                                     vectorized=True, alternative=alternative)
        assert permutation_test(a, b, alternative=alternative).pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_monte_carlo_permutation_close_to_exact_and_valid_formula():
    rng = np.random.default_rng(9)
    a, b = random_pairs(rng, 40, "continuous")
    mc = permutation_test(a, b, n_resamples=20_000, rng=1)
    assert not mc.exact and mc.n_resamples == 20_000
    # p = (count + 1)/(B + 1) is never 0 ...
    assert mc.pvalue >= 1 / 20_001
    # ... and close to the normal approximation of the randomization distribution (Fisher-Pitman)
    d = a - b
    z = d.sum() / np.sqrt(np.sum(d**2))
    approx = 2 * stats.norm.sf(abs(z))
    assert mc.pvalue == pytest.approx(approx, abs=0.02)
    # same seed, same numbers
    assert permutation_test(a, b, n_resamples=20_000, rng=1).pvalue == mc.pvalue


def test_cochran_q_equals_statsmodels():
    rng = np.random.default_rng(10)
    for _ in range(100):
        n, k = int(rng.integers(5, 300)), int(rng.integers(2, 8))
        base = rng.random(n) < 0.6
        x = np.where(rng.random((n, k)) < 0.8, base[:, None], rng.random((n, k)) < 0.5).astype(int)
        row = x.sum(1)
        if np.all((row == 0) | (row == k)):
            continue
        ref = sm_cochrans_q(x)
        ours = cochran_q(x)
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
        assert ours.df == ref.df


def test_cochran_q_two_models_is_uncorrected_mcnemar():
    rng = np.random.default_rng(11)
    a, b = random_pairs(rng, 300, "binary")
    q = cochran_q(np.c_[a, b])
    m = mcnemar(a, b, method="asymptotic", continuity_correction=False)
    assert q.statistic == pytest.approx(m.statistic, rel=1e-12)


def test_five_by_two_cv_against_item_level_formula():
    # Written out from Dietterich (1998), eqs. for p_i^(j), s_i^2 and t, with loops.
    rng = np.random.default_rng(12)
    for _ in range(30):
        a = rng.uniform(0.6, 0.9, size=(5, 2))
        b = a - rng.normal(0.01, 0.02, size=(5, 2))
        s2 = []
        for i in range(5):
            p1, p2 = a[i, 0] - b[i, 0], a[i, 1] - b[i, 1]
            pbar = (p1 + p2) / 2
            s2.append((p1 - pbar) ** 2 + (p2 - pbar) ** 2)
        t = (a[0, 0] - b[0, 0]) / np.sqrt(sum(s2) / 5)
        res = five_by_two_cv(a, b)
        assert res.statistic == pytest.approx(t, rel=1e-12)
        assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(t), 5), rel=1e-10)


# --- bootstrap -------------------------------------------------------------------------------------

def test_binary_bootstrap_has_the_item_level_distribution():
    """The 4-cell multinomial shortcut gives the same distribution as resampling items."""
    rng = np.random.default_rng(13)
    a, b = random_pairs(rng, 500, "binary")
    fast = paired_bootstrap(a, b, n_resamples=20_000, rng=1).bootstrap_distribution
    idx = np.random.default_rng(2).integers(0, 500, size=(20_000, 500))
    slow = (a[idx] - b[idx]).mean(axis=1)
    assert stats.ks_2samp(fast, slow).pvalue > 0.001
    assert fast.std() == pytest.approx(slow.std(), rel=0.03)
    assert fast.mean() == pytest.approx(slow.mean(), abs=4 * slow.std() / np.sqrt(20_000) * 1.5)


def test_bootstrap_standard_error_matches_analytic():
    rng = np.random.default_rng(14)
    for kind in ("continuous", "binary"):
        a, b = random_pairs(rng, 400, kind)
        d = a - b
        analytic = d.std(ddof=0) / np.sqrt(d.size)  # SE of the mean under item resampling
        res = paired_bootstrap(a, b, n_resamples=20_000, rng=3)
        # SE of a bootstrap SD estimate with B draws is about SE/sqrt(2B): 4 of those
        assert res.standard_error == pytest.approx(analytic, rel=4 / np.sqrt(2 * 20_000) + 0.005)


def test_bootstrap_percentile_and_bca_close_to_scipy():
    rng = np.random.default_rng(15)
    a, b = random_pairs(rng, 300, "continuous")

    def stat(x, y, axis=-1):
        return np.mean(x - y, axis=axis)

    for method, sp_method in (("percentile", "percentile"), ("bca", "BCa")):
        ours = paired_bootstrap(a, b, n_resamples=20_000, method=method, rng=4).confidence_interval()
        ref = stats.bootstrap((a, b), stat, paired=True, vectorized=True, n_resamples=20_000,
                              method=sp_method, rng=5).confidence_interval
        se = (a - b).std() / np.sqrt(300)
        # two independent Monte-Carlo runs: quantiles agree to a few percent of the SE
        assert ours.low == pytest.approx(ref.low, abs=0.06 * se)
        assert ours.high == pytest.approx(ref.high, abs=0.06 * se)


def test_bca_acceleration_matches_jackknife_by_hand():
    rng = np.random.default_rng(16)
    a, b = random_pairs(rng, 60, "continuous")
    res = paired_bootstrap(a, b, n_resamples=2_000, method="bca", rng=0)
    d = a - b
    jack = np.array([np.delete(d, i).mean() for i in range(d.size)])
    dev = jack.mean() - jack
    acc = np.sum(dev**3) / (6 * np.sum(dev**2) ** 1.5)
    assert res._acceleration == pytest.approx(acc, rel=1e-9)


def test_callable_statistic_vectorised_equals_loop():
    rng = np.random.default_rng(17)
    a = rng.integers(0, 3, size=(80, 3)).astype(float)
    b = rng.integers(0, 3, size=(80, 3)).astype(float)

    def loop(x, y):
        return float(_f1_difference(x, y))

    def batched(x, y, axis):
        return _f1_difference(x, y)

    r1 = paired_bootstrap(a, b, statistic=loop, n_resamples=500, rng=9)
    r2 = paired_bootstrap(a, b, statistic=batched, n_resamples=500, rng=9)
    assert r1.estimate == r2.estimate == pytest.approx(float(_f1_difference(a, b)))
    assert r1.standard_error > 0 and r2.standard_error > 0
    assert r1.standard_error == pytest.approx(r2.standard_error, rel=0.15)


@pytest.mark.filterwarnings("ignore:only 12 clusters")
def test_cluster_bootstrap_equals_slow_cluster_resampling():
    rng = np.random.default_rng(18)
    n_groups = 12
    sizes = rng.integers(5, 40, size=n_groups)
    cluster = np.repeat(np.arange(n_groups), sizes)
    shift = np.repeat(rng.normal(0, 0.1, size=n_groups), sizes)
    a = (rng.random(cluster.size) < 0.7 + shift).astype(float)
    b = (rng.random(cluster.size) < 0.65 + shift).astype(float)
    fast = paired_bootstrap(a, b, cluster=cluster, n_resamples=20_000, rng=1)
    gen = np.random.default_rng(2)
    slow = []
    for _ in range(5_000):
        pick = gen.integers(0, n_groups, size=n_groups)
        idx = np.concatenate([np.flatnonzero(cluster == g) for g in pick])
        slow.append((a[idx] - b[idx]).mean())
    slow = np.array(slow)
    assert fast.n_clusters == n_groups
    assert fast.standard_error == pytest.approx(slow.std(ddof=1), rel=0.06)
    # the callable path resamples clusters too
    call = paired_bootstrap(a, b, cluster=cluster, statistic=lambda x, y: np.mean(x - y), n_resamples=2_000, rng=1)
    assert call.standard_error == pytest.approx(slow.std(ddof=1), rel=0.1)


def test_bootstrap_is_deterministic_given_rng():
    rng = np.random.default_rng(19)
    a, b = random_pairs(rng, 200, "continuous")
    r1 = paired_bootstrap(a, b, rng=42)
    r2 = paired_bootstrap(a, b, rng=np.random.default_rng(42))
    assert np.array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)
    assert r1.pvalue == r2.pvalue
