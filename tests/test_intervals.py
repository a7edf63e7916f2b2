"""One-score intervals (llm_power.intervals): input validation, reference values, oracles, properties, validity (exact coverage)."""

from __future__ import annotations

import warnings
import numpy as np
import pytest
from conftest import load_reference
from llm_power import DegenerateDataWarning, half_width, proportion_ci, rule_of_three
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from hypothesis import assume, given
from hypothesis import strategies as st
from llm_power import INTERVAL_METHODS, n_for_half_width
from llm_power import coverage


# =================================================================================================
# reference (was test_intervals_reference.py)
# =================================================================================================

SPEC_INTERVALS = [
    # (k, n, method, low, high)   SPEC §5 rows "Wilson 95%, 17/20", "98/100", "0/100", "10/10"
    (17, 20, "wilson", 0.6396, 0.9476),
    (17, 20, "clopper_pearson", 0.6211, 0.9679),
    (17, 20, "agresti_coull", 0.6312, 0.9561),
    (17, 20, "jeffreys", 0.6514, 0.9559),
    (17, 20, "wald", 0.6935, 1.0),
    (98, 100, "wald", 0.9526, 1.0),
    (98, 100, "wilson", 0.9300, 0.9945),
    (98, 100, "clopper_pearson", 0.9296, 0.9976),
    (98, 100, "agresti_coull", 0.9256, 0.9989),
    (98, 100, "jeffreys", 0.9374, 0.9958),
    (0, 100, "wald", 0.0, 0.0),
]

@pytest.mark.parametrize(("k", "n", "method", "low", "high"), SPEC_INTERVALS)
@pytest.mark.filterwarnings("ignore::llm_power.DegenerateDataWarning")
def test_spec_intervals(k, n, method, low, high):
    ci = proportion_ci(k, n, method=method)
    assert round(ci.low, 4) == pytest.approx(low, abs=1e-12)
    assert round(ci.high, 4) == pytest.approx(high, abs=1e-12)

def test_spec_wald_raw_upper_leaves_unit_interval():
    # SPEC §5: Wald raw [0.6935, 1.0065] -> clipped upper 1
    raw = proportion_ci(17, 20, method="wald", clip=False)
    assert (round(raw.low, 4), round(raw.high, 4)) == (0.6935, 1.0065)
    assert proportion_ci(17, 20, method="wald").high == 1.0

@pytest.mark.parametrize(
    ("method", "upper"),
    [("wilson", 0.03699), ("clopper_pearson", 0.03622), ("agresti_coull", 0.04441), ("jeffreys", 0.02475)],
)
def test_spec_zero_of_hundred(method, upper):
    # SPEC §5 row "0/100": upper bounds to 5 decimals, lower bound 0
    ci = proportion_ci(0, 100, method=method)
    assert ci.low == 0.0
    assert round(ci.high, 5) == pytest.approx(upper, abs=1e-12)

def test_spec_rule_of_three():
    # SPEC §5 row "0/100": rule of three 0.03
    assert round(rule_of_three(100), 4) == 0.03

@pytest.mark.parametrize(("method", "lower"), [("wilson", 0.7225), ("clopper_pearson", 0.6915)])
def test_spec_ten_of_ten(method, lower):
    # SPEC §5 row "10/10"
    ci = proportion_ci(10, 10, method=method)
    assert round(ci.low, 4) == pytest.approx(lower, abs=1e-12)
    assert ci.high == 1.0

@pytest.mark.parametrize(
    ("n", "points"), [(30, 13.9), (80, 8.7), (164, 6.1), (198, 5.6), (1319, 2.2), (14042, 0.7)]
)
def test_spec_half_widths(n, points):
    # SPEC §5 row "Wilson half-width at p̂=0.8" (in points, 1 decimal)
    assert round(100 * half_width(n, 0.8), 1) == pytest.approx(points, abs=1e-9)

def test_rule_of_three_against_exact_clopper_pearson():
    # The exact one-sided bound is 1 - alpha**(1/n) (CP upper at k = 0); rule of three is its
    # first-order expansion -ln(alpha)/n, within O(1/n^2).
    n = np.array([50, 100, 1000, 10000])
    exact = 1 - 0.05 ** (1 / n)
    assert np.allclose(rule_of_three(n), exact, rtol=3 / n)
    cp = proportion_ci(0, n, method="clopper_pearson", alternative="less").high
    assert np.allclose(cp, exact, rtol=1e-10)

def _r_cases():
    ref = load_reference("r_binom_confint.json")
    for source in ref["sources"]:
        tag = source["source"].split()[0]
        for i, case in enumerate(source["cases"]):
            yield pytest.param(case, id=f"{tag}-{case['method']}-{case['k']}/{case['n']}-{i}")

R_CASES = list(_r_cases())

def test_enough_r_cases_for_every_method():
    methods = [c.values[0]["method"] for c in R_CASES]
    for m in ("wald", "wilson", "clopper_pearson", "agresti_coull", "jeffreys"):
        assert methods.count(m) >= 5, m

@pytest.mark.parametrize("case", R_CASES)
def test_r_reference_values(case):
    clipped = bool(case.get("clipped", False))
    tol = float(case["tolerance_abs"]) if "tolerance_abs" in case else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # Wald at k = 0 or n
        ci = proportion_ci(case["k"], case["n"], method=case["method"],
                           confidence_level=case["confidence_level"], clip=clipped)
    if tol is not None:
        assert ci.low == pytest.approx(case["low"], abs=tol)
        assert ci.high == pytest.approx(case["high"], abs=tol)
    else:
        # Values are printed with 7 or more significant digits.
        assert ci.low == pytest.approx(case["low"], rel=2e-6, abs=1e-7)
        assert ci.high == pytest.approx(case["high"], rel=2e-6, abs=1e-7)


# =================================================================================================
# oracles (was test_intervals_oracles.py)
# =================================================================================================

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


# =================================================================================================
# properties (was test_intervals_properties.py)
# =================================================================================================

GOOD = ["wilson", "clopper_pearson", "jeffreys", "agresti_coull"]

EPS = 1e-12

@st.composite
def counts(draw, max_n=5000):
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(0, n))
    return k, n

levels = st.floats(0.5, 0.999)

def ci(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return proportion_ci(*args, **kwargs)

@given(counts(), st.sampled_from(GOOD), levels)
def test_contains_point_estimate(kn, method, level):
    k, n = kn
    lo, hi = ci(k, n, method=method, confidence_level=level)
    assert lo - EPS <= k / n <= hi + EPS

@given(counts(), st.sampled_from(INTERVAL_METHODS), levels, levels)
def test_nested_in_confidence_level(kn, method, l1, l2):
    k, n = kn
    assume(abs(l1 - l2) > 1e-9)
    small, large = sorted((l1, l2))
    a = ci(k, n, method=method, confidence_level=small)
    b = ci(k, n, method=method, confidence_level=large)
    assert b.low <= a.low + EPS and a.high <= b.high + EPS

@given(counts(), st.sampled_from(INTERVAL_METHODS), levels)
def test_symmetric_under_k_to_n_minus_k(kn, method, level):
    k, n = kn
    a = ci(k, n, method=method, confidence_level=level)
    b = ci(n - k, n, method=method, confidence_level=level)
    assert abs(a.low - (1 - b.high)) < 1e-9 and abs(a.high - (1 - b.low)) < 1e-9

@given(counts(), st.sampled_from(INTERVAL_METHODS), st.floats(0.55, 0.995))
def test_one_sided_bounds_consistent_with_two_sided(kn, method, level):
    k, n = kn
    two = ci(k, n, method=method, confidence_level=level)
    upper = ci(k, n, method=method, confidence_level=level, alternative="less")
    lower = ci(k, n, method=method, confidence_level=level, alternative="greater")
    assert upper.low == 0.0 and lower.high == 1.0
    # A one-sided bound at level c is the same bound of the two-sided interval at level 2c - 1 ...
    two_equiv = ci(k, n, method=method, confidence_level=2 * level - 1)
    assert abs(upper.high - two_equiv.high) < 1e-9 and abs(lower.low - two_equiv.low) < 1e-9
    # ... so it is tighter than the two-sided bound at level c.
    assert upper.high <= two.high + EPS and lower.low >= two.low - EPS

@given(st.lists(counts(max_n=2000), min_size=1, max_size=30), st.sampled_from(INTERVAL_METHODS))
def test_vectorised_equals_loop(pairs, method):
    k = np.array([p[0] for p in pairs])
    n = np.array([p[1] for p in pairs])
    vec = ci(k, n, method=method)
    for i in range(len(pairs)):
        one = ci(int(k[i]), int(n[i]), method=method)
        assert vec.low[i] == one.low and vec.high[i] == one.high

@given(counts(), st.sampled_from(INTERVAL_METHODS))
def test_bounds_inside_unit_interval_and_ordered(kn, method):
    k, n = kn
    lo, hi = ci(k, n, method=method)
    assert 0.0 <= lo <= hi <= 1.0

def _wilson_half_width(n, p, z=1.959963984540054):
    """Wilson half-width at the anticipated score p (k = p n, not rounded), written out here."""
    return z / (n + z * z) * np.sqrt(n * p * (1 - p) + z * z / 4)

@given(st.floats(0.002, 0.3), st.floats(0.0, 1.0))
def test_n_for_half_width_is_the_smallest_sufficient_n(width, p):
    n = n_for_half_width(width, p)
    assert _wilson_half_width(n, p) <= width
    assert n == 1 or _wilson_half_width(n - 1, p) > width

@given(st.floats(0.002, 0.3), st.floats(0.0, 1.0))
def test_n_for_half_width_wald_closed_form(width, p):
    z2 = 1.959963984540054**2
    expected = max(1, int(np.ceil(z2 * p * (1 - p) / width**2 - 1e-9)))
    assert n_for_half_width(width, p, method="wald") == expected


# =================================================================================================
# validity (was test_coverage.py)
# =================================================================================================

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
