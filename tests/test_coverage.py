"""Exact coverage: against brute force, Monte Carlo, and the known facts (Brown, Cai & DasGupta 2001)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from llm_power import INTERVAL_METHODS, DegenerateDataWarning, coverage, proportion_ci


def _slow_coverage(n, p, method, level=0.95):
    """Obviously correct: loop over k, one interval at a time."""
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        for k in range(n + 1):
            lo, hi = proportion_ci(k, n, method=method, confidence_level=level)
            if lo <= p <= hi:
                total += stats.binom.pmf(k, n, p)
    return total


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_equals_item_level_loop(method):
    for n in (1, 7, 30, 101):
        for p in (0.0, 0.013, 0.2, 0.5, 0.77, 1.0):
            assert coverage(n, p, method=method) == pytest.approx(_slow_coverage(n, p, method), abs=1e-12)


def test_vectorised_broadcasting_equals_scalar_calls():
    n = np.array([[5], [40], [300]])
    p = np.array([0.05, 0.5, 0.9])
    grid = coverage(n, p, method="wilson", confidence_level=0.9)
    assert grid.shape == (3, 3)
    for i in range(3):
        for j in range(3):
            assert grid[i, j] == pytest.approx(
                coverage(int(n[i, 0]), float(p[j]), method="wilson", confidence_level=0.9), rel=1e-13
            )


def test_matches_monte_carlo_within_standard_error():
    """Brute-force Monte Carlo: draw benchmarks, compute the interval, count coverage.

    Each grid point must be within 4.5 Monte-Carlo standard errors, and the z-scores together
    must look standard normal (sum of squares below the 99.9% chi-square quantile).
    """
    rng = np.random.default_rng(12345)
    reps = 40_000
    z = []
    for method in INTERVAL_METHODS:
        for n in (5, 10, 30, 100, 400):
            for p in (0.02, 0.1, 0.3, 0.5, 0.8, 0.97):
                k = rng.binomial(n, p, size=reps)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DegenerateDataWarning)
                    lo, hi = proportion_ci(k, n, method=method)
                mc = np.mean((lo <= p) & (p <= hi))
                exact = coverage(n, p, method=method)
                se = np.sqrt(exact * (1 - exact) / reps)
                if se == 0:
                    assert mc == exact
                    continue
                z.append((mc - exact) / se)
    z = np.array(z)
    assert np.max(np.abs(z)) < 4.5
    assert np.sum(z**2) < stats.chi2.ppf(0.999, z.size)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_clopper_pearson_never_below_nominal(level):
    p = np.linspace(0.0005, 0.9995, 1999)
    for n in range(1, 61):
        cov = coverage(n, p, method="clopper_pearson", confidence_level=level)
        assert cov.min() >= level - 1e-10, (n, p[np.argmin(cov)], cov.min())


def test_clopper_pearson_never_below_nominal_large_n():
    p = np.linspace(0.001, 0.999, 999)
    for n in (100, 164, 500, 1319):
        assert coverage(n, p, method="clopper_pearson").min() >= 0.95 - 1e-10


def test_wald_coverage_oscillates_with_n_at_one_half():
    # BCD (2001), Figure 1 / Example 2: at p = 0.5 Wald coverage is not monotone in n; it
    # jumps up and down by several points from one n to the next, even for n near 100.
    n = np.arange(10, 101)
    cov = coverage(n, 0.5, method="wald")
    steps = np.diff(cov)
    sign_changes = np.sum(np.sign(steps[1:]) != np.sign(steps[:-1]))
    assert sign_changes >= 40  # a zig-zag, not a trend
    assert cov.min() < 0.90 and cov.max() > 0.955
    assert np.max(np.abs(steps[-20:])) > 0.01  # still jumping by > 1 point near n = 100
    # "lucky" and "unlucky" n, also at p = 0.2 (BCD 2001): n = 30 covers better than n = 98
    assert coverage(30, 0.2, method="wald") > coverage(98, 0.2, method="wald")


def test_wald_collapses_near_0_02_at_n_10():
    # At n = 10 and p = 0.02 the Wald interval covers p only for k = 1, 2, 3 (k = 0 gives the
    # point {0}, k >= 4 has a lower bound above 0.02); so the coverage is P(1 <= K <= 3).
    analytic = stats.binom.cdf(3, 10, 0.02) - stats.binom.pmf(0, 10, 0.02)
    wald = coverage(10, 0.02, method="wald")
    assert wald == pytest.approx(analytic, rel=1e-12)
    assert wald < 0.2
    for method in ("wilson", "clopper_pearson", "jeffreys", "agresti_coull"):
        assert coverage(10, 0.02, method=method) > 0.95


def test_mean_coverage_wilson_near_nominal_wald_below():
    # BCD (2001) sec. 4: averaged over p, Wilson's coverage is close to nominal; Wald's is well below
    # for small n, and Clopper-Pearson's is above.
    p = np.linspace(0.01, 0.99, 981)
    for n in (20, 50, 100):
        mean = {m: coverage(n, p, method=m).mean() for m in INTERVAL_METHODS}
        assert abs(mean["wilson"] - 0.95) < 0.01
        assert mean["wald"] < 0.94
        assert mean["clopper_pearson"] > 0.96
