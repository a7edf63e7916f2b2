"""Properties of the paired tests (hypothesis): swapping, permuting items, identical models."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from llm_power import (
    compare,
    mcnemar,
    paired_bootstrap,
    paired_difference_ci,
    paired_t,
    permutation_test,
    sign_test,
    wilcoxon,
)

BINARY_TESTS = {
    "mcnemar_exact": lambda a, b: mcnemar(a, b).pvalue,
    "mcnemar_asymptotic": lambda a, b: mcnemar(a, b, method="asymptotic").pvalue,
    "mcnemar_mid_p": lambda a, b: mcnemar(a, b, method="mid_p").pvalue,
}
ANY_TESTS = {
    "sign": lambda a, b: sign_test(a, b).pvalue,
    "wilcoxon": lambda a, b: wilcoxon(a, b).pvalue,
    "paired_t": lambda a, b: paired_t(a, b).pvalue,
    "permutation": lambda a, b: permutation_test(a, b, rng=0).pvalue,
}


@st.composite
def paired(draw, binary=False, min_n=2, max_n=60):
    n = draw(st.integers(min_n, max_n))
    if binary:
        elems = st.sampled_from([0.0, 1.0])
    else:
        elems = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(-5, 5, allow_nan=False, width=32)
    a = draw(arrays(float, n, elements=elems))
    b = draw(arrays(float, n, elements=elems))
    return a, b


def quiet(func, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args)


@given(paired(binary=True), st.sampled_from(sorted(BINARY_TESTS)))
def test_swapping_keeps_two_sided_p_binary(data, name):
    a, b = data
    p_ab = quiet(BINARY_TESTS[name], a, b)
    p_ba = quiet(BINARY_TESTS[name], b, a)
    assert abs(p_ab - p_ba) < 1e-12


@given(paired(), st.sampled_from(sorted(ANY_TESTS)))
def test_swapping_keeps_two_sided_p(data, name):
    a, b = data
    p_ab = quiet(ANY_TESTS[name], a, b)
    p_ba = quiet(ANY_TESTS[name], b, a)
    assert abs(p_ab - p_ba) < 1e-9 or (np.isnan(p_ab) and np.isnan(p_ba))


@given(paired(binary=True, min_n=3))
def test_swapping_flips_the_estimate_and_interval(data):
    a, b = data
    ab = quiet(compare, a, b)
    ba = quiet(compare, b, a)
    assert ab.delta == -ba.delta
    assert abs(ab.pvalue - ba.pvalue) < 1e-12 and ab.q == ba.q and ab.n_star == ba.n_star
    ci_ab, ci_ba = paired_difference_ci(a, b), paired_difference_ci(b, a)
    assert abs(ci_ab.low + ci_ba.high) < 1e-9 and abs(ci_ab.high + ci_ba.low) < 1e-9


@settings(max_examples=50)
@given(paired(min_n=3), st.integers(0, 2**32 - 1))
def test_permuting_items_changes_nothing(data, seed):
    a, b = data
    perm = np.random.default_rng(seed).permutation(a.size)
    for name, test in ANY_TESTS.items():
        if name == "permutation":
            continue  # random resamples: the item order changes which sign pattern is drawn
        p1, p2 = quiet(test, a, b), quiet(test, a[perm], b[perm])
        assert abs(p1 - p2) < 1e-9 or (np.isnan(p1) and np.isnan(p2)), name
    r1 = quiet(compare, a, b)
    r2 = quiet(compare, a[perm], b[perm])
    assert r1.method == r2.method and abs(r1.delta - r2.delta) < 1e-12
    # the exact permutation test and the binary bootstrap do not depend on the item order
    e1 = quiet(permutation_test, a, b)
    e2 = quiet(permutation_test, a[perm], b[perm])
    if e1.exact:
        assert abs(e1.pvalue - e2.pvalue) < 1e-12


@given(st.integers(2, 200), st.booleans())
def test_identical_models_give_p_one_and_delta_zero(n, binary):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 2, size=n).astype(float) if binary else rng.random(n)
    res = quiet(compare, a, a.copy())
    assert res.delta == 0.0 and res.pvalue == 1.0 and not res.resolved and res.q == 0.0
    for name, test in ANY_TESTS.items():
        p = quiet(test, a, a.copy())
        assert p == 1.0, name
    assert quiet(lambda x, y: paired_bootstrap(x, y, n_resamples=200, rng=0).pvalue, a, a.copy()) == 1.0
    if binary:
        for name, test in BINARY_TESTS.items():
            assert quiet(test, a, a.copy()) == 1.0, name


@given(paired(binary=True, min_n=5, max_n=200), st.floats(0.5, 0.99))
def test_paired_difference_ci_contains_estimate_and_nests(data, level):
    a, b = data
    delta = a.mean() - b.mean()
    for method in ("newcombe", "tango", "wald"):
        ci = paired_difference_ci(a, b, method=method, confidence_level=level)
        wider = paired_difference_ci(a, b, method=method, confidence_level=min(0.999, level + 0.005))
        assert -1 <= ci.low <= ci.high <= 1
        if method != "wald":
            assert ci.low - 1e-9 <= delta <= ci.high + 1e-9
        assert wider.low <= ci.low + 1e-9 and ci.high <= wider.high + 1e-9
