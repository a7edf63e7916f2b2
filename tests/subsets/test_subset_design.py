"""Stratified designs, the population target and gaps from subsets. Oracles: statsmodels' weighted
least squares (the combined regression coefficient with stratum intercepts), Cochran's exact
variance of the stratified mean (Theorem 5.3) checked by simulation, scipy's paired and one-sample
t tests (the population target with every item run), and leave-one-model-out validity on MMLU-Pro
(coverage and wrong gap calls at the promised rates)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import llm_power as lp


def _strata_population(rng, sizes=(400, 250, 900), probs=(0.9, 0.5, 0.3)):
    labels = np.repeat(["a", "b", "c"], sizes)
    p = np.repeat(probs, sizes)
    return labels, p


def test_stratified_coefficient_is_weighted_least_squares_with_stratum_intercepts():
    rng = np.random.default_rng(3)
    labels, p = _strata_population(rng)
    n_pop = labels.size
    x = rng.normal(size=(n_pop, 2)) + p[:, None]
    y_all = (rng.random(n_pop) < np.clip(p + 0.2 * x[:, 0] - 0.1 * x[:, 1], 0, 1)).astype(float)
    run = np.concatenate([rng.choice(np.flatnonzero(labels == s), k, replace=False)
                          for s, k in (("a", 40), ("b", 25), ("c", 60))])
    res = lp.subset_estimate(y_all[run], run, reference=x[:, :1], predictions=x[:, 1], strata=labels,
                             target="benchmark")
    frame = pd.DataFrame({"y": y_all[run], "s": labels[run], "x0": x[run, 0], "x1": x[run, 1]})
    big = pd.Series(labels).value_counts()
    small = frame["s"].value_counts()
    w_h = big / n_pop
    omega = (w_h**2 * (1 - small / big) / (small * (small - 1)))
    dummies = pd.get_dummies(frame["s"], dtype=float)
    fit = sm.WLS(frame["y"], pd.concat([dummies, frame[["x0", "x1"]]], axis=1),
                 weights=frame["s"].map(omega)).fit()
    assert res.coefficients == pytest.approx([fit.params["x0"], fit.params["x1"]], rel=1e-8)
    b = fit.params[["x0", "x1"]].to_numpy()
    pop_x = pd.DataFrame({"s": labels, "x0": x[:, 0], "x1": x[:, 1]}).groupby("s").mean()
    sub = frame.groupby("s")[["y", "x0", "x1"]].mean()
    want = sum(w_h[h] * (sub.loc[h, "y"] + (pop_x.loc[h].to_numpy() - sub.loc[h, ["x0", "x1"]].to_numpy()) @ b)
               for h in big.index)
    assert res.estimate == pytest.approx(want, rel=1e-10)
    # each stratum's residual variance on n_h - (its items' leverage in statsmodels' fit, stratum
    # intercepts included): n_h - 1 - L_h, the L_h adding up to the 2 coefficients
    wx = np.asarray(fit.model.wexog)
    hat = pd.Series(((wx @ np.asarray(fit.normalized_cov_params)) * wx).sum(axis=1)).groupby(
        frame["s"].to_numpy()).sum()
    assert hat.sum() == pytest.approx(3 + 2)
    rss = (fit.resid**2).groupby(frame["s"]).sum()
    var = sum(w_h[h] ** 2 * (1 - small[h] / big[h]) * rss[h] / (small[h] - hat[h]) / small[h] for h in big.index)
    assert res.se == pytest.approx(math.sqrt(var), rel=1e-8)
    assert res.method == "stratified difference estimator" and res.strata == 3


def test_stratified_mean_variance_is_cochrans_and_its_interval_covers():
    """Cochran's Theorem 5.3 on a fixed population (three strata, unequal sizes and spreads): the
    estimates' variance over 20,000 draws equals sum W_h^2 (1 - f_h) S_h^2 / n_h, the estimated
    variance is unbiased for it, and the Satterthwaite t interval covers the benchmark's mean."""
    rng = np.random.default_rng(5)
    labels, p = _strata_population(rng)
    y_all = (rng.random(labels.size) < p).astype(float)
    run_h = {"a": 8, "b": 12, "c": 30}
    sizes = pd.Series(labels).value_counts()
    w = sizes / labels.size
    s2 = pd.Series(y_all).groupby(labels).var(ddof=1)
    exact = sum(w[h] ** 2 * (1 - run_h[h] / sizes[h]) * s2[h] / run_h[h] for h in run_h)
    reps = 20000
    est, var, hit = np.empty(reps), np.empty(reps), 0
    idx = {h: np.flatnonzero(labels == h) for h in run_h}
    for r in range(reps):
        run = np.concatenate([rng.choice(idx[h], k, replace=False) for h, k in run_h.items()])
        res = lp.subset_estimate(y_all[run], run, strata=labels, target="benchmark")
        est[r], var[r] = res.estimate, res.se**2
        hit += res.ci.low <= y_all.mean() <= res.ci.high
    assert est.mean() == pytest.approx(y_all.mean(), abs=4 * math.sqrt(exact / reps))
    assert est.var() == pytest.approx(exact, rel=4 * math.sqrt(2 / reps))
    assert var.mean() == pytest.approx(exact, rel=4 * var.std() / exact / math.sqrt(reps))
    assert hit / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)


@pytest.mark.parametrize("target", ["benchmark", "population"])
def test_never_worse_than_the_plain_mean_by_more_than_the_fit_costs(target):
    rng = np.random.default_rng(8)
    labels, p = _strata_population(rng)
    for _ in range(200):
        y_all = (rng.random(labels.size) < p).astype(float)
        junk = rng.normal(size=(labels.size, 3))
        run = np.concatenate([rng.choice(np.flatnonzero(labels == s), k, replace=False)
                              for s, k in (("a", 6), ("b", 9), ("c", 15))])
        res = lp.subset_estimate(y_all[run], run, reference=junk, predictions=junk[:, 2], strata=labels,
                                 target=target)
        # b = 0 is the plain estimate, so the fitted b's residuals are no larger; the leverage (at most
        # the 2 coefficients in any stratum) is the most the variance can grow by
        smallest, k = 6, 2
        assert res.se**2 <= res.plain_se**2 * (smallest - 1) / (smallest - 1 - k) * (1 + 1e-12)


def test_population_target_with_every_item_run_is_the_t_test():
    rng = np.random.default_rng(1)
    n = 60
    a = (rng.random(n) < 0.7).astype(float)
    b = (rng.random(n) < 0.55).astype(float)
    everything = np.arange(n)
    one = lp.subset_estimate(a, everything, n_items=n)
    assert one.se == pytest.approx(a.std(ddof=1) / math.sqrt(n), rel=1e-10) and one.df == n - 1  # the t test's
    # 0/1 scores (a proportion): the modified Wilson interval at the t test's variance, n* = p(1 - p) / v (issue 39)
    from statsmodels.stats.proportion import proportion_confint

    n_eff = a.mean() * (1 - a.mean()) / one.se**2
    assert (one.ci.low, one.ci.high) == pytest.approx(proportion_confint(a.mean() * n_eff, n_eff, 0.05, "wilson"),
                                                      rel=1e-10)
    graded = lp.subset_estimate(a * 0.5 + b * 0.25, everything, n_items=n)  # graded scores: the t test itself
    ref = stats.ttest_1samp(a * 0.5 + b * 0.25, 0.0).confidence_interval(0.95)
    assert (graded.ci.low, graded.ci.high) == pytest.approx((ref.low, ref.high), rel=1e-10)
    gap = lp.subset_compare(a, everything, b, n_items=n)
    paired = stats.ttest_rel(a, b)
    assert gap.pvalue == pytest.approx(paired.pvalue, rel=1e-10) and gap.other_on == "the items run"
    ci = paired.confidence_interval(0.95)
    assert (gap.ci.low, gap.ci.high) == pytest.approx((ci.low, ci.high), rel=1e-8)
    census = lp.subset_estimate(a, everything, n_items=n, target="benchmark")  # the benchmark's mean is known
    assert census.ci.low == census.ci.high == pytest.approx(a.mean())


def test_population_target_covers_the_population_mean_and_the_benchmark_target_does_not():
    """Benchmarks of 400 items drawn from an infinite population (mean 0.6), 300 of them run: the
    population target's interval covers 0.6 at 95% - 3 SE; the benchmark target's, which leaves
    out the benchmark's own sampling, falls short of it (the precondition that the target matters)."""
    rng = np.random.default_rng(4)
    reps, bench, n = 3000, 400, 300
    hits = {"population": 0, "benchmark": 0}
    for _ in range(reps):
        p = rng.beta(1.2, 0.8, size=bench)  # items of varying difficulty, mean 0.6
        y_all = (rng.random(bench) < p).astype(float)
        helper = p + rng.normal(scale=0.2, size=bench)
        run = rng.choice(bench, n, replace=False)
        for target in hits:
            res = lp.subset_estimate(y_all[run], run, predictions=helper, target=target)
            hits[target] += res.ci.low <= 0.6 <= res.ci.high
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert hits["population"] / reps >= floor, hits
    assert hits["benchmark"] / reps < 0.90, hits


def test_gap_verdict_and_interval_never_disagree():
    rng = np.random.default_rng(2)
    for case in range(300):
        n_pop = int(rng.integers(40, 400))
        n = int(rng.integers(5, n_pop))
        a = (rng.random(n_pop) < rng.random()).astype(float)
        b = (rng.random(n_pop) < rng.random()).astype(float)
        run = rng.choice(n_pop, n, replace=False)
        alt = ("two-sided", "greater", "less")[case % 3]
        target = ("population", "benchmark")[case % 2]
        alpha = float(rng.choice([0.01, 0.05, 0.2]))
        other = b if case % 4 else b[run]
        res = lp.subset_compare(a[run], run, other, n_items=n_pop, alpha=alpha, alternative=alt, target=target)
        excludes = res.ci.low > 0 or res.ci.high < 0
        assert res.decided == (res.pvalue <= alpha) == excludes, (case, res)
        if res.decided:
            assert (res.verdict == "model ahead") == (res.gap > 0)


def test_gap_against_a_known_model_uses_it_as_a_control_variate():
    rng = np.random.default_rng(6)
    n_pop = 3000
    difficulty = rng.random(n_pop)
    others = (rng.random((n_pop, 5)) < difficulty[:, None]).astype(float)
    known = (rng.random(n_pop) < difficulty**0.7).astype(float)
    new = (rng.random(n_pop) < difficulty).astype(float)
    run = rng.choice(n_pop, 250, replace=False)
    gap = lp.subset_compare(new[run], run, known, reference=others, target="benchmark")
    score = lp.subset_estimate(new[run], run, reference=others, predictions=known, target="benchmark")
    assert gap.gap == pytest.approx(score.estimate - known.mean(), rel=1e-10)
    assert gap.se == pytest.approx(score.se, rel=1e-10)
    assert gap.variance_reduction > 1.0 and gap.method == "difference estimator"


def _census_design(rng, reps):
    """The small stratum run whole (100 items), 12 of the big one's 1,000 at random, in each of ``reps``
    designs: (run positions (reps, 112), strata labels, predictions b, 0/1 scores y)."""
    strata = np.repeat(["small", "big"], [100, 1000])
    b = rng.random(1100)
    y = (rng.random(1100) < 0.3 + 0.4 * b).astype(float)
    picks = np.argsort(rng.random((reps, 1000)), axis=1)[:, :12] + 100
    run = np.concatenate([np.broadcast_to(np.arange(100), (reps, 100)), picks], axis=1)
    return run, strata, b, y


def _census_estimates(run, strata, b, y):
    """subset_estimate(..., predictions=b, strata=strata, target="benchmark") of every design at once,
    through the kernel it calls (held equal to the public function in the test)."""
    from llm_power._kernel.survey import stratified_estimate

    _, codes_all = np.unique(strata, return_inverse=True)
    pop = np.bincount(codes_all).astype(float)
    xbar = np.array([[b[codes_all == h].mean()] for h in range(pop.size)])
    est, se, df, _ = stratified_estimate(y[run], codes_all[run[0]], pop, b[run][..., None], xbar)
    return est, se, df


def test_census_strata_leave_the_fit_to_the_sampled_ones():
    """All 100 items of a small stratum run, 2 of a big one (review D1): the control variate is
    fitted on the big stratum's 2 items alone, which it uses up -- an error, never a zero-width
    interval; with 12 of the big stratum's items the fit's price is the big stratum's alone (10 df).

    Coverage of the benchmark's mean, 4,000 designs (Monte-Carlo SE 0.0038): at least 0.925. The interval
    leaves out the coefficient's sampling error, which at 12 items is documented as short (Cochran's factor
    1 + 1/(n - 3) predicts 0.94; measured 0.936, so the nominal 0.95 - 3 SE = 0.939 is not asserted; issue
    39 point 8). Sized for the error this design exists to catch: the census stratum's 100 items counted in
    the df (110 instead of 10) would cover about 0.91, 3 SE below the floor (caught with probability 0.999)."""
    rng = np.random.default_rng(9)
    run, strata, b, y = _census_design(rng, 4000)
    two = np.r_[np.arange(100), 100 + rng.choice(1000, 2, replace=False)]
    with pytest.raises(ValueError, match="uses up the items"):
        lp.subset_compare(y[two], two, b, strata=strata, target="benchmark")
    with pytest.raises(ValueError, match="uses up the items"):
        lp.subset_estimate(y[two], two, predictions=b, strata=strata)
    est, se, df = _census_estimates(run, strata, b, y)
    for k in range(5):  # the vectorised kernel path is the public function
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*control variates on")  # the documented shortfall
            res = lp.subset_estimate(y[run[k]], run[k], predictions=b, strata=strata, target="benchmark")
            single = lp.subset_estimate(y[run[k, 100:]], run[k, 100:] - 100, predictions=b[100:], target="benchmark")
        assert (res.estimate, res.se, res.df) == pytest.approx((est[k], se[k], df[k]), rel=1e-10)
        assert res.df == pytest.approx(single.df) == 10  # 12 - 1 - 1: the census stratum adds no df
    spread = se > 0  # 12 equal scores leave no residual variance (about 1 design in 1,000: see below)
    assert np.all(df[spread] == 10) and spread.mean() > 0.99
    half = stats.t.isf(0.025, df) * se
    cover = float(np.mean((est - half <= y.mean()) & (y.mean() <= est + half)))
    assert cover >= 0.925, cover


def test_no_residual_spread_is_never_a_zero_width_interval():
    """12 sampled items of a 1,000-item stratum, all 0: the control variates fit them exactly, so the
    difference estimator's variance is unknown -- one DegenerateDataWarning and the subset mean's interval
    (the modified Wilson interval with Korn and Graubard's design effect 1: n* = 12 / (1 - 12/1000) for the
    big stratum's share), never a zero-width one. Graded scores without spread: NaN, with the warning."""
    rng = np.random.default_rng(9)
    strata = np.repeat(["small", "big"], [100, 1000])
    b = rng.random(1100)
    y = np.zeros(1100)
    run = np.r_[np.arange(100), 100 + np.arange(12)]
    with pytest.warns(lp.DegenerateDataWarning, match="no residual spread") as caught:
        res = lp.subset_estimate(y[run], run, predictions=b, strata=strata, target="benchmark")
    assert len(caught) == 1
    assert res.method == "stratified subset mean" and res.coefficients == [] and res.variance_reduction == 1.0
    assert res.ci.low == 0.0 and res.ci.high > 0.01
    plain = lp.subset_estimate(y[run], run, strata=strata, target="benchmark")
    assert (res.ci.low, res.ci.high) == (plain.ci.low, plain.ci.high)
    graded = np.full(1100, 0.5)
    with pytest.warns(lp.DegenerateDataWarning, match="no spread within any stratum"):
        flat = lp.subset_estimate(graded[run], run, predictions=b, strata=strata, target="benchmark")
    assert np.isnan(flat.ci.low) and np.isnan(flat.ci.high) and flat.estimate == 0.5
    census = lp.subset_estimate(graded, np.arange(1100), predictions=b, strata=strata, target="benchmark")
    assert census.ci.low == census.ci.high == 0.5  # every item run: the benchmark's mean is known


def test_a_gap_without_spread_is_not_decided_on_a_zero_width_interval():
    """The same 112 items as above, the two models equal on every item run: the gap's spread is unknown, so
    NaN interval and p-value with one DegenerateDataWarning (not decided); with the other model known on
    every item, its control variate fits the differences exactly, and the gap falls back to the plain
    subset gap (its t interval, width > 0). Every item run: the benchmark's gap is known, a point."""
    rng = np.random.default_rng(1)
    strata = np.repeat(["small", "big"], [100, 1000])
    other = (rng.random(1100) < 0.5).astype(float)
    run = np.r_[np.arange(100), 100 + np.arange(12)]
    with pytest.warns(lp.DegenerateDataWarning, match="no spread") as caught:
        res = lp.subset_compare(other[run], run, other[run], strata=strata, n_items=1100, target="benchmark")
    assert len(caught) == 1
    assert np.isnan(res.ci.low) and np.isnan(res.pvalue) and not res.decided and res.verdict == "not decided"
    known = rng.random(1100)
    y = 0.5 * known  # graded; the differences -known / 2 are exactly linear in the other model's scores
    with pytest.warns(lp.DegenerateDataWarning, match="no residual spread"):
        fell = lp.subset_compare(y[run], run, known, strata=strata, target="benchmark")
    assert fell.method == "stratified subset mean" and fell.variance_reduction == 1.0
    assert fell.ci.low < fell.gap < fell.ci.high and fell.gap == fell.plain_gap
    census = lp.subset_compare(other, np.arange(1100), other, strata=strata, target="benchmark")
    assert census.ci.low == census.ci.high == 0.0


def test_a_near_census_keeps_its_degrees_of_freedom():
    """599 of 600 items run (review D2): the verdict and interval are the census's, not one of a
    stratum of 3 items with 1 degree of freedom."""
    y = np.r_[np.tile([1.0, 1.0, 0.0, 1.0, 0.0], 119), [1.0, 1.0], [1.0, 0.0, 1.0]]
    o = np.r_[np.tile([1.0, 0.0, 0.0, 1.0, 0.0], 119), [0.0, 1.0], [0.0, 0.0, 0.0]]
    strata = ["big"] * 597 + ["s"] * 3
    full = lp.subset_compare(y, np.arange(600), o, strata=strata)
    nearly = lp.subset_compare(y[:599], np.arange(599), o[:599], strata=strata)
    assert full.verdict == nearly.verdict == "model ahead"
    assert nearly.df > 500 and nearly.ci.high - nearly.ci.low < 1.2 * (full.ci.high - full.ci.low)


def test_plain_gap_of_the_population_target_uses_the_differences():
    """Every item run, the other model known (review D3): the control variate adds nothing to a
    census, so the reported variance reduction is 1, not an artefact of S_y against S_d."""
    rng = np.random.default_rng(10)
    n = 400
    b = (rng.random(n) < 0.6).astype(float)
    y = np.where(rng.random(n) < 0.8, b, 1 - b)
    others = (rng.random((n, 3)) < 0.5).astype(float)
    gap = lp.subset_compare(y, np.arange(n), b, reference=others, n_items=n + 0)
    assert gap.other_on == "the items run" and gap.variance_reduction == pytest.approx(1.0)
    half = rng.choice(n, 200, replace=False)
    known = lp.subset_compare(y[half], half, b, target="population")
    frac = 1 - 200 / n
    d = y[half] - b[half]
    want = math.sqrt(frac * y[half].var(ddof=1) / 200 + d.var(ddof=1) / n)  # the subset mean, and S_d^2 / N
    assert known.plain_se == pytest.approx(want, rel=1e-10)


def test_every_item_with_scores_out_of_order_is_refused():
    rng = np.random.default_rng(11)
    y, o = (rng.random((2, 300)) < 0.5).astype(float)
    perm = rng.permutation(300)
    with pytest.raises(ValueError, match="ambiguous order"):
        lp.subset_compare(y[perm], perm, o[perm], n_items=300)


def test_strata_errors_name_the_stratum():
    labels = np.repeat(["x", "y"], [50, 50])
    y = np.ones(5)
    with pytest.raises(ValueError, match="stratum 'y' has 50 item"):
        lp.subset_estimate(y, np.array([0, 1, 2, 3, 60]), strata=labels)
    with pytest.raises(ValueError, match="not one number"):
        lp.subset_estimate(y, np.arange(5), strata=labels, n_items=90)
    with pytest.raises(ValueError, match="target"):
        lp.subset_estimate(y, np.arange(5), n_items=90, target="items")


@pytest.mark.parametrize("reps", [8, pytest.param(40, marks=pytest.mark.slow)])
def test_leave_one_model_out_on_mmlu_pro_with_a_neyman_plan(reps):
    """Each MMLU-Pro model left out in turn, 40 stratified Neyman plans of 300 items by category
    (from the other models' residual spread), the stratified difference estimator: the score's
    interval covers the full score in at least 95% - 3 MC SE of 1,040 cases (benchmark target; the
    population target is wider), and gaps to the two nearest models (the hardest calls) are called
    the wrong way in at most 2.5% + 3 SE of the tests. The fast tier draws 8 plans per model (208
    cases), the slow tier the 40."""
    from llm_power.io.demo import load_mmlu_pro

    d = load_mmlu_pro()
    x = np.asarray(d.scores, dtype=float)
    category = np.asarray(d.clusters)
    means = x.mean(axis=0)
    k = x.shape[1]
    hits = {"benchmark": 0, "population": 0}
    tests = called = wrong = 0
    rng = np.random.default_rng(12)
    for j in range(k):
        others = np.delete(x, j, axis=1)
        near = np.argsort(np.abs(means - means[j]))[1:3]
        plan = lp.subset_plan(x.shape[0], strata=category, budget=300, reference=others, rng=j)
        blocks = [(np.flatnonzero(category == a["stratum"]), a["run"]) for a in plan.allocation]
        for _ in range(reps):  # fresh draws of the plan's allocation
            run = np.concatenate([rng.choice(idx, size, replace=False) for idx, size in blocks])
            for target in hits:
                res = lp.subset_estimate(x[run, j], run, reference=others, strata=category, target=target)
                hits[target] += res.ci.low <= means[j] <= res.ci.high
            for b in near:
                gap = lp.subset_compare(x[run, j], run, x[:, b], reference=others, strata=category)
                tests += 1
                called += gap.decided
                wrong += gap.decided and (gap.gap > 0) != (means[j] > means[b])
    total = reps * k
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / total)
    assert hits["benchmark"] / total >= floor and hits["population"] >= hits["benchmark"], hits
    assert called / tests > 0.1  # the precondition: the nearest gaps are called often enough to go wrong
    assert wrong / tests <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / tests), (wrong, called, tests)
