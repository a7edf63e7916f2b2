"""Intervals against independent software: statsmodels (test-only) and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from llm_power import proportion_ci

# statsmodels' names for the methods both packages define.
SM_NAMES = {
    "wald": "normal",
    "wilson": "wilson",
    "clopper_pearson": "beta",
    "agresti_coull": "agresti_coull",
    "jeffreys": "jeffreys",
}


def _grid():
    """(k, n) pairs with n from 1 to 10,000: every k for small n, spread k (and the ends) for large n."""
    ks, ns = [], []
    for n in list(range(1, 41)) + [57, 100, 164, 198, 500, 1319, 2500, 5000, 10_000]:
        k = np.arange(n + 1) if n <= 100 else np.unique(np.r_[0, 1, 2, np.linspace(0, n, 41).round(), n - 2, n - 1, n])
        ks.append(k)
        ns.append(np.full(k.shape, n))
    return np.concatenate(ks).astype(int), np.concatenate(ns).astype(int)


K, N = _grid()


@pytest.mark.filterwarnings("ignore::llm_power.DegenerateDataWarning")
@pytest.mark.parametrize("method", ["wald", "wilson", "clopper_pearson", "agresti_coull"])
@pytest.mark.parametrize("confidence_level", [0.8, 0.95, 0.99])
def test_agrees_with_statsmodels_on_grid(method, confidence_level):
    ours = proportion_ci(K, N, method=method, confidence_level=confidence_level)
    low, high = proportion_confint(K, N, alpha=1 - confidence_level, method=SM_NAMES[method])
    # statsmodels clips Wald, Wilson and Agresti-Coull to [0, 1], as we do by default.
    np.testing.assert_allclose(ours.low, low, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.high, high, rtol=1e-10, atol=1e-12)


def test_jeffreys_agrees_with_statsmodels_away_from_the_boundary():
    inner = (K > 0) & (K < N)
    ours = proportion_ci(K, N, method="jeffreys")
    low, high = proportion_confint(K, N, alpha=0.05, method="jeffreys")
    np.testing.assert_allclose(ours.low[inner], low[inner], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.high[inner], high[inner], rtol=1e-10, atol=1e-12)


def test_jeffreys_boundary_convention_differs_from_statsmodels():
    """At k = 0 we set the lower bound to 0 and at k = n the upper bound to 1 (Brown, Cai &
    DasGupta 2001); statsmodels keeps the raw equal-tailed Beta quantile there. The other bound is
    the same equal-tailed quantile in both."""
    n = np.array([1, 5, 30, 100, 10_000])
    zero = np.zeros_like(n)
    ours0 = proportion_ci(zero, n, method="jeffreys")
    sm_low0, sm_high0 = proportion_confint(zero, n, alpha=0.05, method="jeffreys")
    assert np.all(ours0.low == 0.0)
    assert np.all(sm_low0 > 0.0)  # statsmodels: Beta(0.5, n + 0.5) 2.5% quantile
    np.testing.assert_allclose(sm_low0, stats.beta.ppf(0.025, 0.5, n + 0.5), rtol=1e-10)
    np.testing.assert_allclose(ours0.high, sm_high0, rtol=1e-10)
    oursn = proportion_ci(n, n, method="jeffreys")
    sm_lown, sm_highn = proportion_confint(n, n, alpha=0.05, method="jeffreys")
    assert np.all(oursn.high == 1.0)
    assert np.all(sm_highn < 1.0)
    np.testing.assert_allclose(oursn.low, sm_lown, rtol=1e-10)


@pytest.mark.filterwarnings("ignore::llm_power.DegenerateDataWarning")
@pytest.mark.parametrize("method", ["wald", "wilson", "clopper_pearson", "agresti_coull", "jeffreys"])
def test_one_sided_agrees_with_statsmodels(method):
    # statsmodels' alternative="larger" returns [0, upper] (our "less"), "smaller" [lower, 1].
    inner = (K > 0) & (K < N)
    k, n = K[inner], N[inner]
    up = proportion_ci(k, n, method=method, alternative="less")
    sm_low, sm_up = proportion_confint(k, n, alpha=0.05, method=SM_NAMES[method], alternative="larger")
    lo = proportion_ci(k, n, method=method, alternative="greater")
    sm_lo, sm_hi = proportion_confint(k, n, alpha=0.05, method=SM_NAMES[method], alternative="smaller")
    np.testing.assert_allclose(up.high, sm_up, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lo.low, sm_lo, rtol=1e-10, atol=1e-12)
    assert np.all(up.low == 0) and np.all(lo.high == 1)


def test_clopper_pearson_and_wilson_agree_with_scipy_binomtest():
    rng = np.random.default_rng(20261129)
    for _ in range(60):
        n = int(rng.integers(1, 3000))
        k = int(rng.integers(0, n + 1))
        level = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
        res = stats.binomtest(k, n)
        for ours_method, scipy_method in (("clopper_pearson", "exact"), ("wilson", "wilson")):
            ours = proportion_ci(k, n, method=ours_method, confidence_level=level)
            ref = res.proportion_ci(confidence_level=level, method=scipy_method)
            assert ours.low == pytest.approx(ref.low, rel=1e-9, abs=1e-12)
            assert ours.high == pytest.approx(ref.high, rel=1e-9, abs=1e-12)
