"""Multiple testing: R p.adjust values, statsmodels, Dror et al. (2017), and simulated error rates."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from statsmodels.stats.multitest import multipletests

from conftest import load_reference
from llm_power import adjust_pvalues, count_effects, partial_conjunction, simulate_error_rates

REF = load_reference("multiplicity_reference.json")
SM = {"bonferroni": "bonferroni", "holm": "holm", "hochberg": "simes-hochberg", "bh": "fdr_bh", "by": "fdr_by"}


@pytest.fixture(autouse=True)
def _statsmodels_holm_without_gc(monkeypatch):
    """statsmodels' Holm calls ``gc.collect()`` on every call: 0.1 s alone, seconds in a test process
    with a large heap (a hundred seconds of the fast tier). A collection changes no number, so every
    family is checked against statsmodels, without it."""
    import gc

    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)


def _padjust_cases():
    for source in REF["p_adjust"]["sources"]:
        tag = source["source"].split()[0]
        for i, case in enumerate(source["cases"]):
            if case["method"] in SM:  # hommel is not offered
                yield pytest.param(case, id=f"{tag}-{case['method']}-{i}")


@pytest.mark.parametrize("case", list(_padjust_cases()))
def test_r_p_adjust_values(case):
    ours = adjust_pvalues(case["pvalues"], method=case["method"])
    ref = np.asarray(case["adjusted"], dtype=float)
    # values are printed with 3 to 17 digits: agree to half a unit in the last printed digit
    tol = np.array([0.5 * 10.0 ** Decimal(repr(float(v))).as_tuple().exponent for v in ref])
    if "atol 1e-6" in case.get("note", ""):
        # scipy's R comparison: R was given the p-values rounded to 8 digits (scipy uses atol 1e-6)
        tol = np.maximum(tol, 1e-6)
    assert np.all(np.abs(ours - ref) <= tol + 1e-12 + 1e-12 * ref), np.c_[ours, ref]


def holm_by_loop(p, alpha=0.05):
    """Holm (1979) by its definition: walk the sorted p-values; the j-th is compared with
    alpha/(m - j + 1) and the first failure stops. Returns (adjusted p-values, rejected mask)."""
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    adjusted, running, rejected, stopped = [0.0] * m, 0.0, [False] * m, False
    for j, i in enumerate(order, start=1):
        running = max(running, min(1.0, (m - j + 1) * p[i]))
        adjusted[i] = running
        if not stopped and p[i] <= alpha / (m - j + 1):
            rejected[i] = True
        else:
            stopped = True
    return np.array(adjusted), np.array(rejected)


@pytest.mark.parametrize("method", sorted(SM))
def test_equals_statsmodels_multipletests(method):
    # every family against statsmodels and, for Holm, against the loop above
    rng = np.random.default_rng(50)
    for _ in range(300):
        m = int(rng.integers(1, 60))
        p = rng.random(m) ** rng.uniform(0.5, 4)
        if rng.random() < 0.3:
            p[rng.integers(0, m, size=3)] = p[0]  # ties
        ours = adjust_pvalues(p, method=method)
        if method == "holm":
            np.testing.assert_allclose(ours, holm_by_loop(list(p))[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ours, multipletests(p, method=SM[method])[1], rtol=1e-12, atol=1e-15)


def test_rows_of_a_matrix_are_separate_families():
    rng = np.random.default_rng(51)
    p = rng.random((20, 7))
    for method in SM:
        mat = adjust_pvalues(p, method=method)
        for r in range(20):
            np.testing.assert_array_equal(mat[r], adjust_pvalues(p[r], method=method))


# --- the unstable sort (issue 13): same results as the stable one, and as statsmodels, with ties ---

def _adjust_with_stable_sort(p, method):
    """Oracle: adjust_pvalues as it was before issue 13 (a stable argsort), verbatim."""
    p = np.asarray(p, dtype=float)
    m = p.shape[-1]
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, axis=-1, kind="stable")
    ps = np.take_along_axis(p, order, axis=-1)
    ranks = np.arange(1, m + 1, dtype=float)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - ranks + 1) * ps), axis=-1)
    elif method == "hochberg":
        adj = np.minimum.accumulate(((m - ranks + 1) * ps)[..., ::-1], axis=-1)[..., ::-1]
    else:
        factor = float(np.sum(1.0 / ranks)) if method == "by" else 1.0
        adj = np.minimum.accumulate((factor * m / ranks * ps)[..., ::-1], axis=-1)[..., ::-1]
    adj = np.minimum(1.0, adj)
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=-1)
    return out


def _tied_families(rng):
    """p-values with many ties (rounded to 2-3 digits, runs of 0 and 1, -0.0), on both sides of
    the size from which the packed-key sort is used, and values equal in their high bits."""
    for m in (1, 2, 7, 100, 2047, 2048, 2049, 5_000, 40_000):
        yield np.round(rng.random(m), 2)
        yield np.round(rng.random(m) ** 3, 3)
        p = rng.random(m)
        p[rng.random(m) < 0.2] = 1.0
        p[rng.random(m) < 0.1] = 0.0
        p[rng.random(m) < 0.05] = -0.0
        yield p
        # values a few ulps apart: they agree in the high bits the packed key keeps
        yield 0.001 + rng.integers(0, 50, size=m) * np.spacing(0.001)
        yield rng.random(m)


@pytest.mark.parametrize("method", sorted(SM))
def test_unstable_sort_gives_the_stable_sorts_results_exactly(method):
    rng = np.random.default_rng(52)
    for p in _tied_families(rng):
        ours = adjust_pvalues(p, method=method)
        np.testing.assert_array_equal(ours, _adjust_with_stable_sort(p, method))
        # and the order of the input does not matter, ties included
        perm = rng.permutation(p.size)
        np.testing.assert_array_equal(adjust_pvalues(p[perm], method=method), ours[perm])
    mat = np.round(rng.random((30, 3000)), 2)  # rows as families, packed path
    np.testing.assert_array_equal(adjust_pvalues(mat, method=method), _adjust_with_stable_sort(mat, method))


@pytest.mark.parametrize("method", sorted(SM))
def test_equals_statsmodels_multipletests_with_many_ties(method):
    # statsmodels sorts with an unstable argsort too; its BH/BY divide by j/m where we multiply by
    # m/j, a rounding apart (a few units in the last place)
    rng = np.random.default_rng(53)
    for p in _tied_families(rng):
        p = np.abs(p)  # statsmodels has no -0.0 handling to compare
        ref = multipletests(p, method=SM[method])[1]
        np.testing.assert_allclose(adjust_pvalues(p, method=method), ref, rtol=2e-15, atol=0)


def test_sort_order_is_a_sorting_permutation():
    from llm_power.multiplicity import _sort_order

    rng = np.random.default_rng(54)
    for p in _tied_families(rng):
        order, ps = _sort_order(p)
        assert np.array_equal(np.sort(order), np.arange(p.size))
        assert np.array_equal(ps, p[order]) and np.all(np.diff(ps) >= 0)
        assert np.array_equal(ps, np.sort(p))


@given(arrays(float, st.integers(1, 40), elements=st.floats(0, 1)), st.sampled_from(sorted(SM)))
def test_adjusted_are_monotone_and_not_below_raw(p, method):
    adj = adjust_pvalues(p, method=method)
    assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)


# --- partial conjunction and k-hat ---------------------------------------------------------------

def _pc_cases():
    for source in REF["partial_conjunction"]["sources"]:
        tag = source["source"].split()[0]
        for i, case in enumerate(source["cases"]):
            yield pytest.param(case, id=f"{tag}-{case['method']}-{i}")


@pytest.mark.parametrize("case", list(_pc_cases()))
def test_dror_reference_implementation_examples(case):
    res = count_effects(case["pvalues"], alpha=case["alpha"], method=case["method"])
    assert res.k == case["k_hat"]
    if case.get("identified") is not None:
        assert sorted(res.identified.tolist()) == sorted(case["identified"])


def test_partial_conjunction_formulas_by_hand():
    p = [0.04, 0.001, 0.3, 0.02]
    # sorted: 0.001, 0.02, 0.04, 0.3 ; Bonferroni (N-u+1) p_(u): 0.004, 0.06, 0.08, 0.3
    assert [partial_conjunction(p, u) for u in (1, 2, 3, 4)] == pytest.approx([0.004, 0.06, 0.08, 0.3])
    from scipy import stats

    # Fisher, u = 3: the 2 largest p-values 0.04, 0.3 -> chi2 with 4 df of -2 log(0.04 * 0.3)
    assert partial_conjunction(p, 3, method="fisher") == pytest.approx(stats.chi2.sf(-2 * np.log(0.04 * 0.3), 4))
    # monotone in u (cumulative max), for both methods
    for method in ("bonferroni", "fisher"):
        values = partial_conjunction(p, np.arange(1, 5), method=method)
        assert np.all(np.diff(values) >= 0)


def test_identified_set_equals_holm_and_k_hat_counts_it_for_bonferroni():
    rng = np.random.default_rng(52)
    for _ in range(200):
        p = rng.random(int(rng.integers(1, 12))) ** 3
        res = count_effects(p)
        holm = np.flatnonzero(holm_by_loop(list(p))[1])
        assert holm.tolist() == np.flatnonzero(multipletests(p, alpha=0.05, method="holm")[0]).tolist()
        assert res.identified.tolist() == holm.tolist()
        assert res.k == holm.size
        fisher = count_effects(p, method="fisher")
        assert fisher.k >= 0 and fisher.identified.tolist() == holm.tolist()


# --- error rates by simulation -------------------------------------------------------------------

@pytest.mark.parametrize(("m", "expected"), [(5, 0.2262), (10, 0.4013), (20, 0.6415), (50, 0.9231), (100, 0.9941)])
def test_spec_fwer_table_of_independent_tests(m, expected):
    # SPEC §5: FWER of m independent tests at 0.05: 1 - 0.95^m
    assert round(1 - 0.95**m, 4) == expected
    rates = simulate_error_rates(m, 0, n_sims=20_000, rng=m, methods=("none",))
    se = np.sqrt(expected * (1 - expected) / 20_000)
    assert abs(rates.fwer["none"] - expected) < 4 * se


@pytest.mark.parametrize("correlation", [0.0, 0.5])
def test_fwer_and_fdr_controlled(correlation):
    sims = 20_000
    se = np.sqrt(0.05 * 0.95 / sims)
    for m, m1 in [(10, 0), (20, 5), (40, 10)]:
        rates = simulate_error_rates(m, m1, effect=2.5, n_sims=sims, correlation=correlation, rng=100 + m)
        for method in ("bonferroni", "holm", "hochberg"):
            assert rates.fwer[method] <= 0.05 + 3 * se, (method, m, m1)
        m0 = m - m1
        assert rates.fdr["bh"] <= 0.05 * m0 / m + 3 * se, (m, m1)
        assert rates.fdr["by"] <= 0.05 * m0 / m + 3 * se
        if m1:
            assert rates.power["holm"] >= rates.power["bonferroni"] - 1e-12
            assert rates.power["bh"] >= rates.power["holm"] - 1e-12


def test_validation():
    with pytest.raises(ValueError, match=r"`pvalues` must be p-values in \[0, 1\]; got .*1\.5.* at index 1"):
        adjust_pvalues([0.1, 1.5])
    with pytest.raises(ValueError, match=r"`method` must be one of 'bh', 'bonferroni', 'by', 'hochberg', 'holm'; got 'fdr'"):
        adjust_pvalues([0.1], method="fdr")
    with pytest.raises(ValueError, match=r"`u` must be between 1 and N = 3; got 4"):
        partial_conjunction([0.1, 0.2, 0.3], 4)
    with pytest.raises(ValueError, match=r"`m1` must be an integer in \[0, m\]"):
        simulate_error_rates(5, 6)
    assert count_effects([]).k == 0
