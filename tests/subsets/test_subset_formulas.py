"""Every formula of the subset wing against a value computed outside the package.

Oracles: scipy's one-sample and paired t tests (a census of the items: the population target is the t
test on every item), Cochran (1977, *Sampling Techniques*) written out here -- the stratified variance
sum W_h^2 (1 - f_h) s_h^2 / n_h (Theorem 5.3), Satterthwaite's df over the strata (section 5.4), the
two-phase variance of the population target (section 12.2) with the finite population's S_y^2 from
its within- and between-strata parts -- statsmodels' OLS for the control variate's fit, brute-force
enumeration for the plans' sizes, the logical bounds of a benchmark's mean when only some of its items
are unseen, and the kernel's betting sequence (itself checked against brute-force capitals in
tests/kernel/test_kernel.py and tests/subsets/test_subset_sequential.py) for the sequence's two tails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

import llm_power as lp
from llm_power._kernel.betting import BettingSequence


def _strata(sizes):
    return np.repeat([f"s{k}" for k in range(len(sizes))], sizes)


#: the documented ApproximationWarning of control variates on fewer than 100 items (these tests check the
#: formulas at small n on purpose)
SMALL_N = pytest.mark.filterwarnings("ignore:.*control variates on")


def _by_hand(y, labels_run, big):
    """Cochran's stratified mean, its variance and Satterthwaite df (strata in sorted label order)."""
    keys = sorted(big)
    n_tot = sum(big.values())
    est = var = den = 0.0
    parts = {}
    for h in keys:
        yh = y[labels_run == h]
        w, nh = big[h] / n_tot, yh.size
        a = w**2 * (1 - nh / big[h]) / nh
        s2 = yh.var(ddof=1) if nh > 1 else 0.0
        est += w * yh.mean()
        var += a * s2
        if a > 0:
            den += (a * s2) ** 2 / (nh - 1)
        parts[h] = (yh.mean(), s2, nh)
    return est, var, var**2 / den if den > 0 else math.inf, parts


# ---- the population target: a two-phase design --------------------------------------------------


def test_population_target_with_every_item_of_every_stratum_is_the_t_test():
    """Every item run: the population target's interval is the one-sample t interval on all N items
    (scipy), whatever the strata -- S_y^2 over the N items holds the between-strata spread, so leaving that
    term out (the within-strata part alone) narrows the interval below the t test's."""
    rng = np.random.default_rng(2)
    labels = _strata([30, 50, 20])
    y = rng.normal(np.repeat([0.9, 0.5, 0.1], [30, 50, 20]), 0.2)  # graded scores: the t interval
    res = lp.subset_estimate(y, np.arange(100), strata=labels)
    ref = stats.ttest_1samp(y, 0.0)
    assert res.se == pytest.approx(y.std(ddof=1) / 10, rel=1e-10)
    ci = ref.confidence_interval(0.95)
    assert (res.ci.low, res.ci.high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert res.df == 99
    other = rng.normal(np.repeat([0.8, 0.5, 0.3], [30, 50, 20]), 0.2)
    gap = lp.subset_compare(y, np.arange(100), other, strata=labels)
    paired = stats.ttest_rel(y, other)
    assert gap.pvalue == pytest.approx(paired.pvalue, rel=1e-9)
    # 0/1 scores: the same standard error (whatever interval is drawn around it)
    hits = (rng.random(100) < np.repeat([0.9, 0.5, 0.1], [30, 50, 20])).astype(float)
    assert lp.subset_estimate(hits, np.arange(100), strata=labels).se == pytest.approx(hits.std(ddof=1) / 10,
                                                                                        rel=1e-10)


def test_population_target_of_a_stratified_subset_is_cochrans_two_phase_variance():
    """Cochran section 12.2: V = sum W_h^2 (1 - f_h) s_h^2 / n_h + S_y^2 / N with
    S_y^2 = [sum (N_h - 1) s_h^2 + sum N_h (ybar_h - ybar_st)^2] / (N - 1), on Satterthwaite df over the
    two parts (S_y^2 / N on n - 1), at most n - 1."""
    rng = np.random.default_rng(27)
    sizes = [300, 500, 200]
    labels = _strata(sizes)
    # a spread-out stratum sampled thinly: few df in the subset's variance, so the df are not capped at n - 1
    y_all = rng.normal(np.repeat([2.0, 0.0, -1.0], sizes), np.repeat([3.0, 0.3, 0.3], sizes))
    run = np.concatenate([rng.choice(np.flatnonzero(labels == h), k, replace=False)
                          for h, k in (("s0", 3), ("s1", 20), ("s2", 15))])
    res = lp.subset_estimate(y_all[run], run, strata=labels)
    big = {f"s{k}": s for k, s in enumerate(sizes)}
    est, var, df, parts = _by_hand(y_all[run], labels[run], big)
    n_tot, n = 1000, run.size
    s_y2 = (sum((big[h] - 1) * parts[h][1] for h in big) + sum(big[h] * (parts[h][0] - est) ** 2 for h in big)) \
        / (n_tot - 1)
    first = s_y2 / n_tot
    want_df = min((first + var) ** 2 / (first**2 / (n - 1) + var**2 / df), n - 1)
    assert want_df < n - 1
    assert res.estimate == pytest.approx(est, rel=1e-12)
    assert res.se == pytest.approx(math.sqrt(var + first), rel=1e-10)
    assert res.df == pytest.approx(want_df, rel=1e-10)
    half = stats.t.isf(0.025, want_df) * math.sqrt(var + first)
    assert (res.ci.low, res.ci.high) == pytest.approx((est - half, est + half), rel=1e-10)
    bench = lp.subset_estimate(y_all[run], run, strata=labels, target="benchmark")
    assert bench.se == pytest.approx(math.sqrt(var), rel=1e-10) and bench.df == pytest.approx(df, rel=1e-10)
    # one stratum, no control variate: exactly s_y^2 / n (the statement of the kernel's docstring)
    one = lp.subset_estimate(y_all[run], run, n_items=1000)
    assert one.se == pytest.approx(y_all[run].std(ddof=1) / math.sqrt(n), rel=1e-10) and one.df == n - 1


def test_a_one_item_stratum_run_whole_is_a_census_of_it():
    """A stratum of a single item, run: it adds W_h y_h to the estimate and nothing to the variance (Cochran's
    stratified mean with f_h = 1), beside a sampled stratum."""
    rng = np.random.default_rng(12)
    labels = np.array(["one"] + ["many"] * 99)
    y_all = rng.normal(size=100)
    run = np.r_[0, 1 + rng.choice(99, 10, replace=False)]
    res = lp.subset_estimate(y_all[run], run, strata=labels, target="benchmark")
    many = y_all[run[1:]]
    assert res.estimate == pytest.approx(0.01 * y_all[0] + 0.99 * many.mean(), rel=1e-12)
    assert res.se == pytest.approx(0.99 * math.sqrt((1 - 10 / 99) * many.var(ddof=1) / 10), rel=1e-10)
    assert res.df == 9


@SMALL_N
def test_difference_estimator_population_target_adds_the_first_phase():
    """One stratum, one control variate: the benchmark target's variance is (1 - f) MSE / n with statsmodels'
    OLS residual mean square on n - 2 df; the population target adds s_y^2 / N, on Satterthwaite df."""
    rng = np.random.default_rng(4)
    n_pop, n = 2000, 40
    x = rng.normal(size=n_pop)
    y_all = 0.5 * x + rng.normal(size=n_pop)
    run = rng.choice(n_pop, n, replace=False)
    fit = sm.OLS(y_all[run], sm.add_constant(x[run])).fit()
    v_bench = (1 - n / n_pop) * fit.mse_resid / n
    first = y_all[run].var(ddof=1) / n_pop
    res = lp.subset_estimate(y_all[run], run, predictions=x)
    assert res.se == pytest.approx(math.sqrt(v_bench + first), rel=1e-10)
    df = (v_bench + first) ** 2 / (v_bench**2 / (n - 2) + first**2 / (n - 1))
    assert res.df == pytest.approx(min(df, n - 1), rel=1e-10)
    bench = lp.subset_estimate(y_all[run], run, predictions=x, target="benchmark")
    assert bench.se == pytest.approx(math.sqrt(v_bench), rel=1e-10) and bench.df == n - 2
    assert bench.variance_reduction == pytest.approx((1 - n / n_pop) * y_all[run].var(ddof=1) / n / v_bench,
                                                     rel=1e-10)


@SMALL_N
def test_a_gap_against_a_model_known_on_every_item():
    """The other model's full score is exact; its per-item results are a control variate: the gap is the
    difference estimator of this model's score less the other's mean (statsmodels' OLS on the subset);
    the plain gap's population SE adds the first phase of the differences, s_d^2 / N."""
    rng = np.random.default_rng(5)
    n_pop, n = 1500, 60
    base = rng.random(n_pop)
    other = (rng.random(n_pop) < base).astype(float)
    mine = (rng.random(n_pop) < np.clip(base + 0.05, 0, 1)).astype(float)
    run = rng.choice(n_pop, n, replace=False)
    res = lp.subset_compare(mine[run], run, other, target="benchmark")
    fit = sm.OLS(mine[run], sm.add_constant(other[run])).fit()
    want = fit.params[0] + fit.params[1] * other.mean() - other.mean()  # GREG: regression prediction of the mean
    assert res.gap == pytest.approx(want, rel=1e-10)
    assert res.se == pytest.approx(math.sqrt((1 - n / n_pop) * fit.mse_resid / n), rel=1e-10)
    assert res.df == n - 2
    t = res.gap / res.se
    assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(t), n - 2), rel=1e-9)
    pop = lp.subset_compare(mine[run], run, other)
    d = mine[run] - other[run]
    plain_var = (1 - n / n_pop) * mine[run].var(ddof=1) / n + d.var(ddof=1) / n_pop
    assert pop.plain_se == pytest.approx(math.sqrt(plain_var), rel=1e-10)
    assert pop.plain_gap == pytest.approx(mine[run].mean() - other.mean(), rel=1e-12)


# ---- plans: the expected variance, its df, and the size by enumeration ----------------------------


def _equal_split(n, h):
    """n items over h equal strata: n // h each, the first n % h one more."""
    return np.array([n // h + (k < n % h) for k in range(h)], dtype=float)


def test_plan_expected_variance_carries_the_price_of_the_fitted_control_variate():
    """With the leaderboard's mean as a control variate (p = 1) over H strata, the plan's expected variance is
    sum W_h^2 (1 - f_h) S_h^2 / n_h x (n - H) / (n - H - p) (each stratum's residual variance on
    n_h - 1 - L_h df, the L_h adding up to p), and its half-width t_{n - H - p} times its square root."""
    rng = np.random.default_rng(6)
    sizes = np.array([200.0, 120.0, 80.0])
    labels = _strata(sizes.astype(int))
    difficulty = rng.random(400)
    ref = (rng.random((400, 6)) < difficulty[:, None]).astype(float)
    for budget in (9, 14, 40):
        plan = lp.subset_plan(400, strata=labels, budget=budget, reference=ref, target="benchmark", rng=0)
        run = np.array([a["run"] for a in plan.allocation], dtype=float)
        sd = np.array([a["sd"] for a in plan.allocation])
        w = sizes / sizes.sum()
        base = float(np.sum(w**2 * (1 - run / sizes) * sd**2 / run))
        n, h, p = budget, 3, 1
        var = base * (n - h) / (n - h - p)
        assert plan.expected_se == pytest.approx(math.sqrt(var), rel=1e-10), budget
        assert plan.expected_half_width == pytest.approx(stats.t.isf(0.025, n - h - p) * math.sqrt(var), rel=1e-10)
    # without the control variate (p = 0) no price, and df n - H
    plain = lp.subset_plan(400, strata=labels, budget=14, reference=ref, control=False, target="benchmark", rng=0)
    run = np.array([a["run"] for a in plain.allocation], dtype=float)
    sd = np.array([a["sd"] for a in plain.allocation])
    var = float(np.sum((sizes / 400) ** 2 * (1 - run / sizes) * sd**2 / run))
    assert plain.expected_se == pytest.approx(math.sqrt(var), rel=1e-10)
    assert plain.expected_half_width == pytest.approx(stats.t.isf(0.025, 14 - 3) * math.sqrt(var), rel=1e-10)


@pytest.mark.parametrize("target", ["benchmark", "population"])
def test_plan_size_for_a_half_width_over_many_strata_by_enumeration(target):
    """Five equal strata, the worst case S = 1/2: the smallest n whose t interval on n - H df (H = 5 strata
    estimated) has the half-width (variance sum W_h^2 (1 - f_h) S^2 / n_h, + S^2 / N for the population).
    Sized so that n - H and n df give different answers (checked here), so the df cannot be the wrong one."""
    sizes = np.full(5, 40.0)
    labels = _strata([40] * 5)
    half = 0.2
    first = 0.25 / 200 if target == "population" else 0.0

    def half_width(n, df):
        run = _equal_split(n, 5)
        var = float(np.sum((sizes / 200) ** 2 * (1 - run / sizes) * 0.25 / run)) + first
        return stats.t.isf(0.025, df) * math.sqrt(var)

    want = next(n for n in range(10, 201) if half_width(n, n - 5) <= half)
    wrong = next(n for n in range(10, 201) if half_width(n, n) <= half)
    assert want != wrong  # the sizing sees the df
    plan = lp.subset_plan(200, strata=labels, half_width=half, target=target, rng=0)
    assert [a["run"] for a in plan.allocation] == _equal_split(plan.n, 5).tolist()
    assert plan.n == want and plan.target_met
    assert plan.expected_half_width == pytest.approx(half_width(want, want - 5), rel=1e-10)


def test_plan_size_for_a_gap_over_many_strata_by_enumeration():
    """The smallest n with (t_{1 - alpha/2, df} + t_{power, df}) sqrt(V) <= gap on df = n - H (scipy)."""
    sizes = np.full(5, 40.0)
    labels = _strata([40] * 5)
    gap = 0.3

    def enough(n, df):
        run = _equal_split(n, 5)
        var = float(np.sum((sizes / 200) ** 2 * (1 - run / sizes) * 0.25 / run))
        return (stats.t.isf(0.025, df) + stats.t.ppf(0.8, df)) * math.sqrt(var) <= gap

    want = next(n for n in range(10, 201) if enough(n, n - 5))
    assert want != next(n for n in range(10, 201) if enough(n, n))  # the sizing sees the df
    plan = lp.subset_plan(200, strata=labels, gap=gap, target="benchmark", rng=0)
    assert plan.n == want


def test_plan_spread_from_a_pilot_with_the_control_variate():
    """S_h from a pilot run with the leaderboard's mean as control variate: each stratum's residual variance
    of y on x with one common slope and stratum intercepts (statsmodels' OLS), over n_h - 1."""
    rng = np.random.default_rng(7)
    labels = _strata([100, 100])
    ref = rng.normal(size=(200, 3))
    pilot_items = np.r_[rng.choice(100, 15, replace=False), 100 + rng.choice(100, 20, replace=False)]
    x = ref.mean(axis=1)
    y = 0.8 * x[pilot_items] + rng.normal(size=35) * np.r_[np.full(15, 1.0), np.full(20, 3.0)]
    plan = lp.subset_plan(200, strata=labels, budget=20, reference=ref, pilot=y, pilot_items=pilot_items, rng=0)
    group = (pilot_items >= 100).astype(float)
    fit = sm.OLS(y, np.column_stack([1 - group, group, x[pilot_items]])).fit()
    e = fit.resid
    want = [math.sqrt(np.sum(e[group == g] ** 2) / (np.sum(group == g) - 1)) for g in (0, 1)]
    assert [a["sd"] for a in plan.allocation] == pytest.approx(want, rel=1e-10)
    assert plan.sd_source == "a pilot run, residuals after the leaderboard's mean"
    no_cv = lp.subset_plan(200, strata=labels, budget=20, pilot=y, pilot_items=pilot_items, rng=0)
    assert [a["sd"] for a in no_cv.allocation] == pytest.approx(
        [y[group == g].std(ddof=1) for g in (0, 1)], rel=1e-10)


# ---- the sequence: two tails, and the benchmark's own mean ------------------------------------------


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_the_sequence_spends_half_of_alpha_on_each_side(level):
    """A two-sided sequence at level L is the betting sequence with (1 - L)/2 on each side (a union bound
    over the two one-sided sequences); alpha per side would be a level 1 - 2 alpha sequence labelled L."""
    rng = np.random.default_rng(8)
    y = (rng.random(600) < 0.62).astype(float)
    seq = lp.SubsetSequence(5000, confidence_level=level, horizon=500)
    ref = BettingSequence(0.0, 1.0, alpha_lower=(1 - level) / 2, alpha_upper=(1 - level) / 2, horizon=500)
    wrong = BettingSequence(0.0, 1.0, alpha_lower=1 - level, alpha_upper=1 - level, horizon=500)
    for start in range(0, 600, 150):
        res = seq.add(y[start:start + 150])
        ref.extend(y[start:start + 150])
        wrong.extend(y[start:start + 150])
        assert (res.ci.low, res.ci.high) == pytest.approx(ref.bounds(), abs=1e-12)
    assert ref.bounds() != pytest.approx(wrong.bounds(), abs=1e-6)  # the two differ at this look


def test_the_benchmark_sequence_closes_on_the_benchmarks_mean():
    """With n of N items seen, the benchmark's mean lies in [S/N, (S + N - n)/N] for sure (the unseen
    values are in [0, 1]). The without-replacement sequence closes on it: at 290 and 299 of 300 items its
    width is within three times that logical range (0.1 and 0.01; the grid of candidate means adds 0.001),
    while a with-replacement sequence (the population target's) is still about 0.15 wide."""
    rng = np.random.default_rng(0)
    big_n = 300
    y = (rng.random(big_n) < 0.6).astype(float)
    bench, pop = lp.SubsetSequence(big_n, target="benchmark"), lp.SubsetSequence(big_n)
    bench.add(y[:290])
    pop_res = pop.add(y[:290])
    for seen in (290, 299):
        res = bench.result() if seen == 290 else bench.add(y[290:299])
        s = y[:seen].sum()
        lo_sure, hi_sure = s / big_n, (s + big_n - seen) / big_n
        assert res.ci.low <= y.mean() <= res.ci.high
        assert res.ci.high - res.ci.low <= 3 * (hi_sure - lo_sure), seen
    assert pop_res.ci.high - pop_res.ci.low > 0.1
    last = bench.add(y[299:])
    assert last.ci.low == last.ci.high == pytest.approx(y.mean())


def test_plan_minimum_budget_is_two_per_stratum_and_one_for_the_control_variate():
    """The fewest items a plan can have: 2 per stratum (or all of a smaller one) to estimate each stratum's
    variance, and 1 more for the fitted control variate (its residual variance loses a df)."""
    labels = _strata([50, 40, 1])
    ref = np.random.default_rng(9).random((91, 3))
    with pytest.raises(ValueError, match="at least 6"):  # 2 + 2 + 1, and 1 for the control variate
        lp.subset_plan(91, strata=labels, budget=5, reference=ref, rng=0)
    assert lp.subset_plan(91, strata=labels, budget=6, reference=ref, rng=0).n == 6
    assert lp.subset_plan(91, strata=labels, budget=5, reference=ref, control=False, rng=0).n == 5


def test_plan_population_target_from_a_pilot_adds_the_pilots_variance_over_n():
    """The population target's first phase S_y^2 / N, S_y^2 the pilot's sample variance (ddof 1): the worst
    case of one stratum, Cochran's two-phase variance (1 - f) S^2 / n + S^2 / N."""
    rng = np.random.default_rng(10)
    pilot = rng.normal(size=25)
    plan = lp.subset_plan(1000, budget=60, pilot=pilot, pilot_items=np.arange(25), rng=0)
    s2 = pilot.var(ddof=1)
    assert plan.expected_se == pytest.approx(math.sqrt((1 - 60 / 1000) * s2 / 60 + s2 / 1000), rel=1e-10)


def test_plan_spread_from_reference_models_after_the_others_mean():
    """With reference models and the control variate: S_h^2 is, averaged over the reference models, each one's
    residual variance within stratum h after the mean of the others (one common slope, stratum intercepts:
    statsmodels' OLS), over n_h - 1."""
    rng = np.random.default_rng(11)
    labels = _strata([60, 40])
    easy = rng.random(100)
    ref = (rng.random((100, 4)) < easy[:, None]).astype(float)
    plan = lp.subset_plan(100, strata=labels, budget=20, reference=ref, rng=0)
    group = (np.arange(100) >= 60).astype(float)
    per_model = []
    for k in range(4):
        others = np.delete(ref, k, axis=1).mean(axis=1)
        e = sm.OLS(ref[:, k], np.column_stack([1 - group, group, others])).fit().resid
        per_model.append([np.sum(e[group == g] ** 2) / (np.sum(group == g) - 1) for g in (0, 1)])
    want = np.sqrt(np.mean(per_model, axis=0))
    assert [a["sd"] for a in plan.allocation] == pytest.approx(want.tolist(), rel=1e-10)


def test_the_sequence_decides_below_and_stops_at_its_half_width():
    """A model far below ``against``: the verdict is "below" once the sequence's upper bound is under it (and
    stays); without ``against``, it stops exactly when its half-width (high - low) / 2 reaches ``half_width``."""
    rng = np.random.default_rng(13)
    y = (rng.random(3000) < 0.3).astype(float)
    seq = lp.SubsetSequence(3000, against=0.6, target="benchmark")
    decided_at = None
    for start in range(0, 3000, 50):
        res = seq.add(y[start:start + 50])
        assert res.decided == (res.ci.high < 0.6 or res.ci.low > 0.6)
        if res.decided and decided_at is None:
            decided_at = res.n
        if decided_at is not None:
            assert res.decided and res.verdict == "below 0.6" and res.stop
    assert decided_at is not None and decided_at < 3000
    narrow = lp.SubsetSequence(3000, half_width=0.05, target="benchmark")
    seen = set()
    for start in range(0, 3000, 20):
        res = narrow.add(y[start:start + 20])
        half = (res.ci.high - res.ci.low) / 2
        assert res.stop == (half <= 0.05 or res.n == 3000), (res.n, half)
        seen.add(res.stop)
        if 0.05 < 2 * half <= 0.1:
            assert res.stop  # half the width, not the width, is compared
    assert seen == {True, False}
