"""The clustering-level test and leave-one-cluster-out stability (:mod:`llm_power._kernel.cluster_level`)
against slow, obviously correct versions: the score-variance statistic written from its definition in
MacKinnon, Nielsen & Webb (2023) with item loops, their wild bootstrap by explicitly re-estimating on
y*, and leave-one-out by actually dropping each cluster and rerunning the kernel's CR2 t test.
Plus edge cases and a bounded validity simulation (the full one: scripts/cluster_level_validity.py).
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from llm_power._core.errors import DegenerateDataWarning
from llm_power._kernel import cluster_level as cl
from llm_power._kernel.cluster_level import (clustering_level_test, family_level, item_level_test,
                                             leave_one_cluster_out)
from llm_power._kernel.variance import mean_variance
from llm_power._kernel.verdict import t_test


SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cluster_level_validity.py"


def _validity():
    spec = importlib.util.spec_from_file_location("cluster_level_validity", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# =================================================================================================
# Slow oracles
# =================================================================================================

def _tau_loop(y: np.ndarray, fine: np.ndarray, coarse: np.ndarray) -> float:
    """tau from the definition: the CV1 variance of the score (the residual) clustered at the coarse
    level minus that at the fine level, over the paper's variance, with explicit loops over items."""
    n = len(y)
    ybar = sum(y) / n
    u = [yi - ybar for yi in y]
    fines = sorted(set(fine.tolist()))
    coarses = sorted(set(coarse.tolist()))
    g, h = len(coarses), len(fines)
    s_fine = {f: sum(u[i] for i in range(n) if fine[i] == f) for f in fines}
    s_coarse = {c: sum(u[i] for i in range(n) if coarse[i] == c) for c in coarses}
    sigma_c = g / (g - 1) * sum(v * v for v in s_coarse.values())
    sigma_f = h / (h - 1) * sum(v * v for v in s_fine.values())
    var = 0.0
    for c in coarses:
        inside = [f for f in fines if coarse[fine == f][0] == c]
        for f1 in inside:
            for f2 in inside:
                if f1 != f2:
                    var += 2.0 * s_fine[f1] ** 2 * s_fine[f2] ** 2
    return (sigma_c - sigma_f) / math.sqrt(var) if var > 0 else math.nan


def _fine_inputs(y: np.ndarray, fine: np.ndarray, coarse: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fines = np.unique(fine)
    sums = np.array([y[fine == f].sum(axis=0) for f in fines])
    sizes = np.array([np.sum(fine == f) for f in fines], dtype=float)
    coarse_of = np.array([coarse[fine == f][0] for f in fines])
    return sums, sizes, coarse_of


def _nested(rng: np.random.Generator, g: int, per: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Item labels of ``g`` coarse clusters of ``per`` fine ones of about ``size`` items."""
    sizes = rng.integers(1, 2 * size, size=g * per)
    fine = np.repeat(np.arange(g * per), sizes)
    coarse = fine // per
    return fine, coarse


def test_statistic_equals_the_definition_with_loops():
    rng = np.random.default_rng(11)
    for g, per, size in [(2, 2, 3), (3, 4, 5), (5, 3, 8)]:
        fine, coarse = _nested(rng, g, per, size)
        y = rng.normal(size=fine.size) + 0.3 * rng.normal(size=g)[coarse]
        res = clustering_level_test(*_fine_inputs(y, fine, coarse), method="asymptotic")
        assert float(res.statistic) == pytest.approx(_tau_loop(y, fine, coarse), rel=1e-10)
        assert float(res.pvalue) == pytest.approx(float(special.ndtr(-_tau_loop(y, fine, coarse))), rel=1e-9)
        assert (res.n_coarse, res.n_fine) == (g, g * per)


def test_items_as_fine_level_and_power_sums_agree():
    rng = np.random.default_rng(5)
    codes = np.repeat(np.arange(6), [4, 9, 1, 12, 7, 3])
    d = rng.choice([-1.0, 0.0, 1.0], size=(codes.size, 5), p=[0.2, 0.5, 0.3])
    via_items = clustering_level_test(d, np.ones(codes.size), codes, method="asymptotic")
    ps = np.stack([np.stack([np.bincount(codes, d[:, j] ** k) for j in range(5)], axis=1) for k in range(1, 5)])
    via_sums = item_level_test(ps, np.bincount(codes).astype(float), method="asymptotic")
    np.testing.assert_allclose(via_sums.statistic, via_items.statistic, rtol=1e-10)
    np.testing.assert_allclose(via_sums.pvalue, via_items.pvalue, rtol=1e-9)
    for j in range(5):
        assert via_items.statistic[j] == pytest.approx(_tau_loop(d[:, j], np.arange(codes.size), codes), rel=1e-10)


def test_vectorised_equals_one_pair_at_a_time_including_the_bootstrap():
    rng = np.random.default_rng(3)
    fine, coarse = _nested(rng, 4, 3, 6)
    y = rng.normal(size=(fine.size, 4))
    sums, sizes, coarse_of = _fine_inputs(y, fine, coarse)
    for method in ("asymptotic", "bootstrap"):
        allp = clustering_level_test(sums, sizes, coarse_of, method=method, n_resamples=199, rng=7)
        for j in range(4):
            one = clustering_level_test(sums[:, j], sizes, coarse_of, method=method, n_resamples=199, rng=7)
            assert float(one.pvalue) == pytest.approx(allp.pvalue[j], rel=1e-12)


def test_bootstrap_equals_explicit_reestimation_on_y_star():
    """The wild bootstrap of the paper: y* = ybar + v_h u_i, re-estimate ybar*, recompute tau*; the
    same Rademacher draws (the kernel draws them in blocks of _RESAMPLE_BLOCK)."""
    rng = np.random.default_rng(21)
    fine, coarse = _nested(rng, 3, 3, 4)
    y = rng.normal(size=fine.size) + 0.8 * rng.normal(size=3)[coarse]
    sums, sizes, coarse_of = _fine_inputs(y, fine, coarse)
    n_boot = 150
    res = clustering_level_test(sums, sizes, coarse_of, method="bootstrap", n_resamples=n_boot, rng=42)
    gen = np.random.default_rng(42)
    tau = _tau_loop(y, fine, coarse)
    u = y - y.mean()
    order = np.argsort(coarse_of, kind="stable")  # the kernel draws v over fine clusters sorted by coarse
    fines = np.unique(fine)[order]
    exceed, done = 0, 0
    while done < n_boot:
        nb = min(cl._RESAMPLE_BLOCK, n_boot - done)
        v = gen.integers(0, 2, size=(nb, fines.size)) * 2.0 - 1.0
        for row in v:
            weight = np.empty(fine.size)
            for f, vf in zip(fines, row, strict=True):
                weight[fine == f] = vf
            y_star = y.mean() + u * weight
            tau_star = _tau_loop(y_star, fine, coarse)
            exceed += tau_star >= tau - 1e-9 * max(1.0, abs(tau))
        done += nb
    assert float(res.pvalue) == pytest.approx((1 + exceed) / (n_boot + 1), abs=1e-12)


def test_each_bootstrap_statistic_equals_explicit_reestimation():
    """tau* of given draws: the kernel's expansion against y* built item by item and tau from its loop."""
    rng = np.random.default_rng(9)
    fine, coarse = _nested(rng, 3, 4, 5)
    y = 0.4 + rng.normal(size=fine.size)  # an offset: the re-estimated mean moves
    sums, sizes, coarse_of = _fine_inputs(y, fine, coarse)  # fines 0.. are sorted by coarse already
    s = sums - sizes * y.mean()
    starts = np.r_[0, np.flatnonzero(np.diff(coarse_of)) + 1]
    v = rng.integers(0, 2, size=(20, sums.size)) * 2.0 - 1.0
    got = cl._wild_tau(v, s[:, None], sizes, starts, 3)[:, 0]
    u = y - y.mean()
    for row, tau_star in zip(v, got, strict=True):
        y_star = y.mean() + u * row[fine]
        assert tau_star == pytest.approx(_tau_loop(y_star, fine, coarse), rel=1e-10)


def test_chi_square_reference_uses_the_traces_of_the_explicit_matrix():
    rng = np.random.default_rng(8)
    m = rng.integers(5, 60, size=7).astype(float)
    codes = np.repeat(np.arange(7), m.astype(int))
    y = rng.normal(size=codes.size)
    ps = np.stack([np.bincount(codes, y**k) for k in range(1, 5)])
    res = item_level_test(ps, m, method="chi_square")
    u = y - y.mean()
    a = np.bincount(codes, u)
    b = np.bincount(codes, u * u)
    p = np.eye(7) - np.outer(m, np.ones(7)) / m.sum()
    k = p @ np.diag(b) @ p.T
    scale = np.trace(k @ k) / np.trace(k)
    nu = np.trace(k) ** 2 / np.trace(k @ k)
    assert float(res.pvalue) == pytest.approx(float(special.chdtrc(nu, np.sum(a * a) / scale)), rel=1e-9)
    # equal sizes and equal within sums of squares: exactly chi2_{G-1} with scale b
    a = np.array([3.0, -1.0, -4.0, 2.0])  # residual sums (mean 0), each cluster sum u^2 = 10
    eq = np.stack([a, np.full(4, 10.0), np.zeros(4), np.full(4, 10.0)])
    res = item_level_test(eq, np.full(4, 10.0), method="chi_square")
    assert float(res.pvalue) == pytest.approx(float(special.chdtrc(3, np.sum(a * a) / 10.0)), rel=1e-9)


def test_family_level_cauchy_combination():
    fam = family_level([0.03, 0.03, 0.03])  # identical p-values combine to themselves
    assert fam.combined_pvalue == pytest.approx(0.03, rel=1e-10)
    assert fam.share_rejected == 1.0
    single = family_level([1e-20, 0.5])
    assert 0 < single.combined_pvalue < 1e-19
    none = family_level([np.nan, np.nan])
    assert math.isnan(none.combined_pvalue) and none.n_estimable == 0


# =================================================================================================
# Leave one cluster out
# =================================================================================================

def _loo_loop(d: np.ndarray, codes: np.ndarray, alpha: float) -> tuple[float, float]:
    """Drop each cluster from the items and rerun the kernel's CR2 / IK t test."""
    def verdict(dd: np.ndarray, cc: np.ndarray) -> float:
        _, cc = np.unique(cc, return_inverse=True)
        mv = mean_variance(dd, cc, int(cc.max()) + 1, kind="cr2")
        if not mv.variance[0] > 0:
            return math.nan
        _, p = t_test(mv.mean, mv.variance, mv.df, "two-sided")
        return float(np.sign(mv.mean[0]) * (p[0] <= alpha))

    full_delta, full = d.mean(), verdict(d, codes)
    signs = verdicts = 0.0
    for k in np.unique(codes):
        keep = codes != k
        signs += np.sign(d[keep].mean()) != np.sign(full_delta)
        without = verdict(d[keep], codes[keep])
        verdicts += math.nan if math.isnan(without) or math.isnan(full) else float(without != full)
    return signs, verdicts


def _cluster_sums(d: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = int(codes.max()) + 1
    s = np.stack([np.bincount(codes, d[:, j], minlength=g) for j in range(d.shape[1])], axis=1)
    q = np.stack([np.bincount(codes, d[:, j] ** 2, minlength=g) for j in range(d.shape[1])], axis=1)
    return s, q, np.bincount(codes, minlength=g).astype(float)


def test_leave_one_out_equals_dropping_each_cluster():
    rng = np.random.default_rng(2)
    for sizes in ([30] * 6, [5, 80, 12, 1, 40, 22, 9], [50, 50, 50]):
        codes = np.repeat(np.arange(len(sizes)), sizes)
        effects = rng.normal(scale=0.25, size=(len(sizes), 8))
        d = np.clip(np.rint(rng.normal(size=(codes.size, 8)) * 0.7 + effects[codes] + 0.15), -1, 1)
        s, q, m = _cluster_sums(d, codes)
        out = leave_one_cluster_out(s, q, m, alpha=0.05)
        for j in range(8):
            signs, verdicts = _loo_loop(d[:, j], codes, 0.05)
            assert out.sign_flips[j] == signs
            assert (math.isnan(verdicts) and math.isnan(out.verdict_flips[j])) or out.verdict_flips[j] == verdicts
        one = leave_one_cluster_out(s[:, 0], q[:, 0], m)
        assert float(one.sign_flips) == out.sign_flips[0]


def test_leave_one_out_flags_a_cluster_that_carries_the_gap():
    codes = np.repeat(np.arange(5), 40)
    d = np.zeros((200, 1))
    d[:40, 0] = 1.0  # topic 0 alone: A right, B wrong on all 40
    d[40:200:7, 0] = -1.0
    s, q, m = _cluster_sums(d, codes)
    out = leave_one_cluster_out(s, q, m)
    assert out.sign_flipped[0, 0] == 1 and out.sign_flips[0] == 1


# =================================================================================================
# Edge cases: NaN with one warning, never a crash or a fake number
# =================================================================================================

def test_constant_and_all_zero_differences_are_not_estimable():
    codes = np.repeat(np.arange(4), 5)
    for value in (0.0, 1.0):
        d = np.full(20, value)
        with pytest.warns(DegenerateDataWarning):
            res = clustering_level_test(d, np.ones(20), codes, method="bootstrap", n_resamples=9, rng=0)
        assert math.isnan(res.statistic) and math.isnan(res.pvalue)
        ps = np.stack([np.bincount(codes, d**k) for k in range(1, 5)])
        with pytest.warns(DegenerateDataWarning):
            res = item_level_test(ps, np.full(4, 5.0))
        assert math.isnan(res.pvalue)
        s, q, m = _cluster_sums(d[:, None], codes)
        with pytest.warns(DegenerateDataWarning):
            loo = leave_one_cluster_out(s[:, 0], q[:, 0], m)
        assert math.isnan(loo.verdict_flips)
        assert math.isnan(loo.sign_flips) if value == 0.0 else loo.sign_flips == 0.0


def test_two_clusters_and_singletons():
    rng = np.random.default_rng(4)
    d = rng.choice([-1.0, 0.0, 1.0], size=21)
    codes = np.r_[np.zeros(20, int), 1]  # two clusters, one of a single item
    res = clustering_level_test(d, np.ones(21), codes, method="asymptotic")
    assert np.isfinite(res.statistic)
    assert float(res.statistic) == pytest.approx(_tau_loop(d, np.arange(21), codes), rel=1e-10)
    s, q, m = _cluster_sums(d[:, None], codes)
    with pytest.warns(DegenerateDataWarning):  # one cluster left: no cluster-robust verdict
        loo = leave_one_cluster_out(s[:, 0], q[:, 0], m)
    assert math.isnan(loo.verdict_flips) and np.isfinite(loo.sign_flips)
    # every coarse cluster one fine cluster: nothing to compare
    with pytest.warns(DegenerateDataWarning):
        res = clustering_level_test([1.0, 2.0, 5.0], [3, 3, 3], [0, 1, 2], method="asymptotic")
    assert math.isnan(res.pvalue)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: clustering_level_test([1.0, 2.0], [1, 1], [0, 0]), "at least 2 coarse"),
    (lambda: clustering_level_test([1.0, 2.0], [1, 0], [0, 1]), "`fine_sizes`"),
    (lambda: clustering_level_test([1.0, 2.0], [1, 1], [0, 1], method="wild"), "`method`"),
    (lambda: clustering_level_test([1.0, np.nan], [1, 1], [0, 1]), "finite"),
    (lambda: item_level_test(np.zeros((3, 4)), np.ones(4)), "shape"),
    (lambda: leave_one_cluster_out([1.0], [1.0], [1]), "at least 2"),
    (lambda: leave_one_cluster_out([1.0, 2.0], [1.0], [1, 1]), "one shape"),
    (lambda: leave_one_cluster_out([1.0, 2.0], [1.0, 2.0], [1, 1], alpha=1.5), "`alpha`"),
    (lambda: family_level([0.5, 1.2]), "`pvalues`"),
])
def test_validation_messages(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# =================================================================================================
# Validity (bounded; the full tables: scripts/cluster_level_validity.py)
# =================================================================================================

def test_size_of_the_chi_square_item_level_test_is_bounded_fast():
    """Item-level truth, 14 clusters of MMLU-Pro's sizes, 0/1 paired items: 400 replications."""
    rej = _validity().simulate_item_level(np.array([717, 789, 1132, 410, 844, 969, 818, 381, 1101, 1351, 924, 499, 1299, 798]),
                              icc=0.0, binary=True, reps=400, seed=1, method="chi_square")
    assert rej <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


@pytest.mark.slow
def test_size_and_power_slow():
    """Bounded versions of the script's table: size of the chi-square and bootstrap item-level tests
    and of the bootstrap coarse-vs-fine test, and their power at ICC 0.05."""
    val = _validity()
    sizes = np.rint(np.geomspace(20, 400, 14)).astype(int)
    for method, reps in (("chi_square", 4000), ("bootstrap", 600)):
        for binary in (True, False):
            size = val.simulate_item_level(sizes, icc=0.0, binary=binary, reps=reps, seed=2, method=method)
            assert size <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps), (method, binary, size)
            power = val.simulate_item_level(sizes, icc=0.05, binary=binary, reps=200, seed=3, method=method)
            assert power > 0.8, (method, binary, power)
    size = val.simulate_coarse_fine(icc_fine=0.05, icc_coarse=0.0, binary=True, reps=600, seed=4, method="bootstrap")
    assert size <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 600)
    power = val.simulate_coarse_fine(icc_fine=0.05, icc_coarse=0.05, binary=True, reps=200, seed=5, method="bootstrap")
    assert power > 0.8


def test_no_warning_on_ordinary_data():
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(5), 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clustering_level_test(rng.normal(size=50), np.ones(50), codes, method="asymptotic")
