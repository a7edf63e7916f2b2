"""The crossed items x runs decomposition against statsmodels, scipy and simulation.

Oracles: statsmodels' two-way ANOVA table (``anova_lm``) for the mean squares, statsmodels
``MixedLM`` with crossed variance components (REML) for the components, scipy for the chi-square
and F quantiles, and vectorised simulations of the crossed random-effects model (known components)
for the interval coverage and the unbiasedness of the gap's variance, with tolerances of a few
Monte-Carlo standard errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import llm_power as lp
from llm_power._kernel.crossed import (
    chi2_variance_interval,
    crossed_mean_squares,
    mls_difference_interval,
    pair_run_variance,
    satterthwaite_df,
)
from llm_power._kernel.quantiles import chi2_upper, f_upper


def crossed(rng: np.random.Generator, n: int, r: int, reps: int, *, s_item: float, s_run: float,
            s_res: float) -> np.ndarray:
    """reps independent (n, r) layouts of y = a_i + b_r + e_ir (normal)."""
    return (rng.normal(0, s_item, (reps, n, 1)) + rng.normal(0, s_run, (reps, 1, r))
            + rng.normal(0, s_res, (reps, n, r)))


def test_quantiles_match_scipy() -> None:
    for tail in (0.001, 0.025, 0.5, 0.975):
        for df in (1, 4, 37.5, 1000):
            assert chi2_upper(tail, df) == pytest.approx(stats.chi2.isf(tail, df), rel=1e-10)
            assert f_upper(tail, df, 12) == pytest.approx(stats.f.isf(tail, df, 12), rel=1e-8)
            assert f_upper(tail, df, np.inf) == pytest.approx(stats.chi2.isf(tail, df) / df, rel=1e-10)


@pytest.mark.parametrize(("n", "r"), [(30, 5), (12, 2), (7, 9)])
def test_mean_squares_equal_statsmodels_anova(n: int, r: int) -> None:
    sm = pytest.importorskip("statsmodels.api")
    smf = pytest.importorskip("statsmodels.formula.api")
    y = crossed(np.random.default_rng(n + r), n, r, 1, s_item=1.0, s_run=0.4, s_res=0.6)[0]
    df = pd.DataFrame({"y": y.ravel(), "item": np.repeat(np.arange(n), r), "run": np.tile(np.arange(r), n)})
    table = sm.stats.anova_lm(smf.ols("y ~ C(item) + C(run)", df).fit(), typ=1)
    ms = crossed_mean_squares([y])
    assert ms.ms_item[0] == pytest.approx(table.loc["C(item)", "mean_sq"], rel=1e-10)
    assert ms.ms_run[0] == pytest.approx(table.loc["C(run)", "mean_sq"], rel=1e-10)
    assert ms.ms_res[0] == pytest.approx(table.loc["Residual", "mean_sq"], rel=1e-10)
    assert ms.df_res[0] == table.loc["Residual", "df"]


def test_components_equal_statsmodels_mixedlm_reml() -> None:
    """Balanced design, positive components: REML of the crossed model = the method of moments."""
    smf = pytest.importorskip("statsmodels.formula.api")
    n, r = 30, 5
    y = crossed(np.random.default_rng(0), n, r, 1, s_item=1.0, s_run=0.5, s_res=0.7)[0]
    df = pd.DataFrame({"y": y.ravel(), "item": np.repeat(np.arange(n), r), "run": np.tile(np.arange(r), n), "g": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ 1", df, groups="g", re_formula="0",
                          vc_formula={"item": "0 + C(item)", "run": "0 + C(run)"}).fit(reml=True)
    res = lp.run_variance(y[:, :, None])
    assert res.var_item[0] == pytest.approx(fit.vcomp[0], rel=1e-4)
    assert res.var_run[0] == pytest.approx(fit.vcomp[1], rel=1e-4)
    assert res.var_res[0] == pytest.approx(fit.scale, rel=1e-4)
    # and the score's standard error: the REML fixed-effect SE of the intercept
    assert res.se[0] == pytest.approx(float(fit.bse["Intercept"]), rel=1e-3)


def test_satterthwaite_df_by_hand() -> None:
    a, b, c = 0.3, 0.2, -0.05
    want = (a + b + c) ** 2 / (a * a / 9 + b * b / 4 + c * c / 36)
    assert float(satterthwaite_df([(a, 9), (b, 4), (c, 36)])) == pytest.approx(want)
    assert float(satterthwaite_df([(a, 9), (0.0, 4)])) == pytest.approx(9.0)  # zero terms drop out


def test_mls_reduces_to_chi_square_when_the_subtracted_term_is_exact() -> None:
    """With S2 known exactly (n2 -> inf) and c2 S2 -> 0, the MLS bounds are the chi-square bounds of c1 S1."""
    lo, hi = mls_difference_interval(1.0, 2.0, 7, 1e-12, 1.0, 1e9, 0.95)
    want_lo, want_hi = chi2_variance_interval(2.0, 7, 0.95)
    assert float(lo) == pytest.approx(float(want_lo), rel=1e-6)
    assert float(hi) == pytest.approx(float(want_hi), rel=1e-6)


@pytest.mark.parametrize(("n", "r", "s_item", "s_run"), [(50, 5, 1.0, 0.3), (200, 3, 1.0, 0.15), (40, 8, 1.0, 0.5),
                                                       (50, 5, 0.3, 0.085), (30, 4, 0.25, 0.1)])
def test_component_intervals_cover(n: int, r: int, s_item: float, s_run: float) -> None:
    """Normal crossed data with known components: each interval covers at about its level (also
    where the subtracted residual mean square is as large as the component's own: n s2_run ~ s2_res).
    """
    reps = 1500
    rng = np.random.default_rng(n * r)
    y = crossed(rng, n, r, reps, s_item=s_item, s_run=s_run, s_res=0.6)
    res = lp.run_variance({f"m{k}": y[k] for k in range(reps)}, pairs="adjacent")
    se = np.sqrt(0.95 * 0.05 / reps)
    for truth, (lo, hi) in ((s_item**2, res.var_item_ci), (s_run**2, res.var_run_ci), (0.36, res.var_res_ci)):
        cover = np.mean((lo <= truth) & (truth <= hi))
        assert 0.95 - 3.5 * se <= cover <= 0.99, (truth, cover)  # MLS is at most slightly conservative


@pytest.mark.parametrize("reps", [300, pytest.param(1200, marks=pytest.mark.slow)])
@pytest.mark.parametrize("binary", [False, True])
def test_gap_variance_is_unbiased_and_its_test_has_its_size(binary: bool, reps: int) -> None:
    """Two models with the same expected score, shared item effects and independent run effects:
    the mean of the estimated Var(gap) equals the spread of the gaps over replications, and the run
    test rejects at about alpha while the IID test of the run means does not hold its level. The
    fast tier checks the first 300 of the slow tier's 1,200 replications (the same draws).
    """
    n, r = 400, 4
    rng = np.random.default_rng(11 if binary else 12)
    item = rng.normal(0, 1.0, (1200, n, 1, 1))
    run = rng.normal(0, 0.25 if binary else 0.08, (1200, 1, r, 2))
    latent = 0.4 + item + run
    if binary:
        y = (rng.random((1200, n, r, 2)) < 1 / (1 + np.exp(-latent))).astype(float)
    else:
        y = latent + rng.normal(0, 0.5, (1200, n, r, 2))
    y = y[:reps]
    gaps, var, p_run, p_iid = [], [], [], []
    for k in range(reps):
        c = lp.compare(y[k, :, :, 0], y[k, :, :, 1])
        gaps.append(c.delta)
        var.append(c.se_runs**2)
        p_run.append(c.pvalue)
        p_iid.append(lp.compare(y[k, :, :, 0].mean(1), y[k, :, :, 1].mean(1)).pvalue)
    gaps, var = np.array(gaps), np.array(var)
    emp = gaps.var(ddof=1)
    se_emp = emp * np.sqrt(2 / (reps - 1))
    assert abs(var.mean() - emp) < 3.5 * se_emp + 3 * var.std() / np.sqrt(reps), (var.mean(), emp)
    size = np.mean(np.array(p_run) <= 0.05)
    assert abs(size - 0.05) < 3.5 * np.sqrt(0.05 * 0.95 / reps), size
    assert np.mean(np.array(p_iid) <= 0.05) > 0.15  # items alone: run noise read as a gap


def test_pair_variance_parts() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(100, 3)), rng.normal(size=(100, 6))
    ms = crossed_mean_squares([a, b])
    d = a.mean(1) - b.mean(1)
    pv = pair_run_variance(np.array([d.var(ddof=1)]), 100, ms, np.array([0]), np.array([1]))
    run_a = max((ms.ms_run[0] - ms.ms_res[0]) / 100, 0)
    run_b = max((ms.ms_run[1] - ms.ms_res[1]) / 100, 0)
    assert pv.run_part[0] == pytest.approx(run_a / 3 + run_b / 6)
    assert pv.variance[0] == pytest.approx(d.var(ddof=1) / 100 + run_a / 3 + run_b / 6)
    assert pv.s2_res[0] == pytest.approx(ms.ms_res[0] + ms.ms_res[1])


@pytest.mark.parametrize(("n1", "n2", "s1", "s2"), [(4, 6, 2.0, 1.0), (3, 5, 3.0, 1.0), (6, 4, 1.5, 1.0), (10, 3, 1.3, 1.0)])
def test_mls_tails_with_few_degrees_of_freedom(n1: int, n2: int, s1: float, s2: float) -> None:
    """The MLS interval of s1 - s2 from independent chi-square mean squares on few df (where its cross
    terms G12, H12 matter): each tail misses at close to its share (Ting et al. report the MLS
    intervals within about 15% of the nominal tail; Monte-Carlo SE here 0.0011).
    """
    rng = np.random.default_rng(n1 * 10 + n2)
    reps = 40_000
    ms1 = s1 * rng.chisquare(n1, reps) / n1
    ms2 = s2 * rng.chisquare(n2, reps) / n2
    lo, hi = mls_difference_interval(1.0, ms1, n1, 1.0, ms2, n2, 0.90)
    for miss in (np.mean(lo > s1 - s2), np.mean(hi < s1 - s2)):
        assert 0.04 <= miss <= 0.0575, miss


def _logit_components(mu: float, s_item: float, s_run: float) -> tuple[float, float]:
    """True item and run components of 0/1 scores with logit(p_ir) = mu + a_i + b_r (a, b normal): the
    variances of the ANOVA main effects, Var_a E_b[p] and Var_b E_a[p], by Gauss-Hermite quadrature.
    """
    from numpy.polynomial.hermite_e import hermegauss

    x, w = hermegauss(80)
    w = w / w.sum()
    p = 1 / (1 + np.exp(-(mu + s_item * x[:, None] + s_run * x[None, :])))
    mean = w @ p @ w
    return float(w @ (p @ w - mean) ** 2), float(w @ (p.T @ w - mean) ** 2)


@pytest.mark.parametrize(("n", "r", "s_item", "s_run"), [(300, 6, 1.0, 0.3), (100, 4, 1.0, 0.5), (500, 3, 1.5, 0.2)])
def test_binary_components_are_unbiased_and_their_intervals_cover(n: int, r: int, s_item: float, s_run: float) -> None:
    """0/1 scores through a logit link: the method-of-moments components estimate the ANOVA main-effect
    variances without bias, and their intervals cover them at about 95%.
    """
    reps = 1500
    rng = np.random.default_rng(n + r)
    v_item, v_run = _logit_components(0.5, s_item, s_run)
    latent = 0.5 + rng.normal(0, s_item, (reps, n, 1)) + rng.normal(0, s_run, (reps, 1, r))
    y = (rng.random((reps, n, r)) < 1 / (1 + np.exp(-latent))).astype(float)
    res = lp.run_variance({f"m{k}": y[k] for k in range(reps)})
    for truth, est, (lo, hi) in ((v_item, res.var_item, res.var_item_ci), (v_run, res.var_run, res.var_run_ci)):
        assert abs(est.mean() - truth) < 4 * est.std() / np.sqrt(reps)  # truncation at 0 included
        cover = np.mean((lo <= truth) & (truth <= hi))
        assert 0.93 <= cover <= 0.99, (truth, cover)


@pytest.mark.parametrize(("n", "r", "s_inter", "s_run"), [(200, 4, 0.3, 0.1), (60, 3, 0.2, 0.2)])
def test_gap_component_intervals_cover(n: int, r: int, s_inter: float, s_run: float) -> None:
    """A pair run independently: the gap's item component (2 s_inter^2, the item x model interaction)
    and run component (2 s_run^2) are covered by their intervals at about 95%.
    """
    reps = 1000
    rng = np.random.default_rng(n * r)
    hit_run = hit_item = 0
    for _ in range(reps):
        y = (rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, s_inter, (n, 1, 2)) + rng.normal(0, s_run, (1, r, 2))
             + rng.normal(0, 0.6, (n, r, 2)))
        pair = lp.run_variance(y).pairs[0]
        hit_run += pair["var_run_ci"][0] <= 2 * s_run**2 <= pair["var_run_ci"][1]
        hit_item += pair["var_item_ci"][0] <= 2 * s_inter**2 <= pair["var_item_ci"][1]
    se = np.sqrt(0.95 * 0.05 / reps)
    for hits in (hit_run, hit_item):
        assert abs(hits / reps - 0.95) < 3.5 * se, hits / reps


def test_a_long_dataframe_is_accepted_everywhere() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=(50, 3, 2)) + np.array([0.0, 0.5])
    rows = [(m, t, f"q{i}", float(y[i, t, k])) for k, m in enumerate("ab") for t in range(3) for i in range(50)]
    df = pd.DataFrame(rows, columns=["model", "seed", "item", "score"])
    rs = lp.RunScores.from_array(y, models=["a", "b"], items=[f"q{i}" for i in range(50)])
    by_frame = lp.run_variance(df, run="seed")
    by_array = lp.run_variance(rs)
    assert by_frame.runs.tolist() == [3, 3]
    assert np.allclose(by_frame.var_run, by_array.var_run) and np.allclose(by_frame.mean, by_array.mean)
    d = lp.diagnose(runs=df.rename(columns={"seed": "run"}))
    assert d.pairs[0].pvalue_run == lp.diagnose(rs).pairs[0].pvalue_run


def _meets(delta: float, comps: tuple[float, ...], n, r) -> np.ndarray:
    """The planners' criterion at (n items, R runs): the planned power of the run test reaches 0.8."""
    from llm_power._kernel.crossed import planned_power

    s2_item, s2_res, va, vb, ra, rb = comps
    got = planned_power(delta, s2_item, s2_res / r, [(va, ra, r), (vb, rb, r)], np.asarray(n, dtype=float),
                        alpha=0.05)
    return np.asarray(got >= 0.8)


def test_allocation_and_runs_needed_are_the_first_designs_that_meet_the_criterion() -> None:
    """The searches (exponential then bisection) against their definition: each planned n (or R) meets the
    planned-power criterion and the one before it does not; "infeasible" fails at the cap; one run is
    never planned."""
    from llm_power._kernel.crossed import allocation_table, runs_needed

    rng = np.random.default_rng(21)
    cases = [(1.0, (0.1, 0.0, 0.005, 0.005, 0.0, 0.0)), (1.0, (0.1, 0.1, 0.005, 0.005, 0.05, 0.05)),
             (0.2, (0.3, 0.5, 0.0, 0.0, 0.25, 0.25))]  # a pilot whose run components are 0
    cases += [(float(rng.uniform(0.02, 0.3)), tuple(float(v) for v in rng.uniform(0, [1, 1, 0.01, 0.01, 0.5, 0.5])))
              for _ in range(6)]
    seen = set()
    for delta, comps in cases:
        t = allocation_table(delta, *comps, alpha=0.05, power=0.8, cost_item=1, cost_run=0, max_items=20_000,
                             max_runs=4)
        assert np.isinf(t["items"][0])  # one run: the run tests refuse it
        for r, items in zip(t["runs"][1:], t["items"][1:], strict=True):
            if np.isfinite(items):
                assert _meets(delta, comps, items, r) and (items == 2 or not _meets(delta, comps, items - 1, r))
            else:
                assert not _meets(delta, comps, 20_000, r)
            seen.add(bool(np.isfinite(items)))
        got = runs_needed(np.array([delta]), 400, *[np.array([c]) for c in comps], alpha=0.05, power=0.8,
                          max_runs=3000)[0]
        if np.isfinite(got):
            assert got >= 2 and _meets(delta, comps, 400, got) and (got == 2 or not _meets(delta, comps, 400, got - 1))
        else:
            assert not _meets(delta, comps, 400, 3000)
    assert seen == {True, False}


def test_run_verdict_when_items_add_no_variance() -> None:
    """s2_D = 0 with run noise: items do not matter, the runs alone decide (N* = 0, q = inf when the gap
    clears the run noise, N* = inf and q = 0 when it does not)."""
    from llm_power._kernel.verdict import run_verdict

    rv = run_verdict(np.array([1.0, 0.01]), np.array([0.0, 0.0]), np.array([0.01, 0.01]), 100, np.array([8.0, 8.0]),
                     np.array([True, True]), alpha=0.05, power=0.8, alternative="two-sided")
    assert rv.n_star.tolist() == [0.0, np.inf] and rv.q.tolist() == [np.inf, 0.0]
    assert rv.resolved.tolist() == [True, False]
    assert bool(rv.q[0] >= 1) == bool(abs(1.0) >= rv.mde[0])


def test_runs_needed_agrees_with_the_verdict() -> None:
    """A pair with q_run >= 1 never needs more runs than it has; one with q_run < 1 always needs more."""
    sides = set()
    for k in range(300):
        rng = np.random.default_rng(5000 + k)
        y = (rng.normal(0, 1, (300, 1, 1)) + rng.normal(0, 0.05, (1, 3, 2)) + rng.normal(0, 0.5, (300, 3, 2))
             + np.array([rng.uniform(0, 0.25), 0.0]))
        c = lp.compare(y[:, :, 0], y[:, :, 1])
        assert (c.q >= 1) == (c.runs_needed <= 3)
        sides.add(bool(c.q >= 1))
    assert sides == {True, False}  # both sides of the line were seen
