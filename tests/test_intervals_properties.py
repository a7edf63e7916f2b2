"""Properties of the intervals (hypothesis)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from llm_power import INTERVAL_METHODS, DegenerateDataWarning, n_for_half_width, proportion_ci

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
