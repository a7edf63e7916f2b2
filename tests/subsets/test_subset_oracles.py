"""Oracles for the subset wing's formulas, each expected value computed here from outside the package (issue 49).

Each test names the wrong formula it is sized to catch. Sources: Cochran (1977, *Sampling Techniques*) written
out term by term -- the simple random sample's variance (1 - f) s^2 / n (Theorem 2.2), the stratified one
sum W_h^2 (1 - f_h) s_h^2 / n_h (Theorem 5.3) with Satterthwaite's degrees of freedom (section 5.4), the
regression (difference) estimator of section 7 with its residual mean square on n - p - 1 df, the two-phase
variance of the population target (section 12.2); statsmodels' OLS and WLS with the hat matrix formed here by
hand (the fit's leverage per stratum); statsmodels' Wilson interval; Neyman allocation n_h proportional to
N_h S_h with Hamilton's largest-remainder rounding, done by hand; and brute-force betting capitals over the
grid of candidate means (Waudby-Smith and Ramdas 2024).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import llm_power as lp
from llm_power._kernel.betting import BettingSequence, bets
from llm_power._kernel.survey import stratified_estimate

#: the documented ApproximationWarning of control variates on fewer than 100 items (these tests check the
#: formulas at small n on purpose)
SMALL_N = pytest.mark.filterwarnings("ignore:.*control variates on")


def _strata(sizes):
    return np.repeat([f"s{k}" for k in range(len(sizes))], sizes)


def _draw(rng, labels, runs):
    """A stratified simple random sample: runs[h] items of stratum s{h}, in stratum order."""
    return np.concatenate([rng.choice(np.flatnonzero(labels == f"s{h}"), k, replace=False)
                           for h, k in enumerate(runs)])


# ---- the kernel's simple-random-sample estimators ----------------------------------------------------------


def test_kernel_subset_mean_is_the_finite_population_mean_and_its_t_df():
    """Cochran's Theorem 2.2: ybar with variance (1 - n/N) s^2 / n on n - 1 df, vectorised over a leading axis.
    Sized for: the finite-population correction dropped, s^2 with ddof 0, df n instead of n - 1."""
    rng = np.random.default_rng(31)
    y = rng.normal(size=(3, 25))
    est, se, df, _ = stratified_estimate(y, np.zeros(25, dtype=np.int64), np.array([200]))  # one stratum
    assert est == pytest.approx(y.mean(axis=1), rel=1e-12)
    assert se == pytest.approx(np.sqrt((1 - 25 / 200) * y.var(axis=1, ddof=1) / 25), rel=1e-12)
    assert df == pytest.approx(24)


def test_kernel_difference_estimate_is_ols_with_its_residual_mean_square():
    """Cochran section 7 (the regression estimator with b fitted by least squares): the estimate is
    ybar + b'(Xbar - xbar), its variance (1 - f) MSE / n with statsmodels' OLS residual mean square on
    n - p - 1 df, and df n - p - 1. Sized for: a df of n - p (the intercept forgotten), the residual
    variance on n - 1 (the fit's leverage forgotten), the correction's sign."""
    rng = np.random.default_rng(32)
    n_pop, n, p = 600, 30, 2
    x = rng.normal(size=(n_pop, p))
    y_all = 0.3 + x @ [0.8, -0.4] + rng.normal(size=n_pop)
    run = rng.choice(n_pop, n, replace=False)
    est, se, df, coef = stratified_estimate(y_all[run], np.zeros(n, dtype=np.int64), np.array([n_pop]), x[run],
                                            x.mean(axis=0)[None, :])  # one stratum: the difference estimator
    fit = sm.OLS(y_all[run], sm.add_constant(x[run])).fit()
    assert coef == pytest.approx(fit.params[1:], rel=1e-9)
    assert est == pytest.approx(y_all[run].mean() + fit.params[1:] @ (x.mean(axis=0) - x[run].mean(axis=0)),
                                rel=1e-12)
    assert se == pytest.approx(math.sqrt((1 - n / n_pop) * fit.mse_resid / n), rel=1e-10)
    assert df == pytest.approx(n - p - 1) and fit.df_resid == n - p - 1


@SMALL_N
def test_reference_control_variate_is_the_leaderboards_per_item_mean():
    """``reference`` (N x K, other models' results on every item) enters as one control variate, their per-item
    mean, beside ``predictions``: statsmodels' OLS of y on [1, mean of the K columns, predictions] gives the
    coefficients in that order, the GREG estimate and the residual mean square. Sized for: one model's column
    (or another summary) for the mean, the two control variates' order."""
    rng = np.random.default_rng(49)
    n_pop, n = 900, 60
    easy = rng.random(n_pop)
    ref = (rng.random((n_pop, 4)) < easy[:, None] ** [0.5, 1.0, 1.5, 3.0]).astype(float)
    guess = easy + rng.normal(0, 0.3, n_pop)
    y_all = (rng.random(n_pop) < easy).astype(float)
    run = rng.choice(n_pop, n, replace=False)
    res = lp.subset_estimate(y_all[run], run, reference=ref, predictions=guess, target="benchmark")
    design = sm.add_constant(np.column_stack([ref.mean(axis=1), guess]))
    fit = sm.OLS(y_all[run], design[run]).fit()
    assert res.coefficients == pytest.approx(fit.params[1:].tolist(), rel=1e-8)
    assert res.estimate == pytest.approx(fit.predict(design).mean() + fit.resid.mean(), rel=1e-10)
    assert res.se == pytest.approx(math.sqrt((1 - n / n_pop) * fit.mse_resid / n), rel=1e-10)


# ---- the stratified difference estimator: WLS with the hat matrix by hand ----------------------------------


@SMALL_N
def test_stratified_difference_estimator_against_wls_and_its_hat_matrix():
    """Three strata with different sampling fractions and sizes (so that every part of the weight
    W_h^2 (1 - f_h) / (n_h (n_h - 1)) moves the fit), two control variates. The coefficient is statsmodels'
    WLS with stratum intercepts; each stratum's residual variance is on n_h - (its items' leverage in the
    weighted hat matrix W^1/2 X (X'WX)^-1 X' W^1/2, formed here), the Satterthwaite df over the strata use
    those df, and the estimate is sum W_h [ybar_h + b'(Xbar_h - xbar_h)].

    Sized for: the weight without (1 - f_h) or with n_h^2 for n_h (n_h - 1) (a different b), the leverage
    unweighted or left out, Satterthwaite on n_h - 1, the correction's sign or its strata unweighted."""
    rng = np.random.default_rng(33)
    sizes = [300, 120, 500]
    labels = _strata(sizes)
    n_pop = sum(sizes)
    x = rng.normal(size=(n_pop, 2)) + np.repeat([0.5, -0.3, 0.1], sizes)[:, None]
    y_all = np.repeat([0.2, 0.6, -0.4], sizes) + x @ [0.7, 0.3] + rng.normal(size=n_pop) * np.repeat([1, 2, 0.5],
                                                                                                     sizes)
    runs = [12, 40, 9]
    run = _draw(rng, labels, runs)
    res = lp.subset_estimate(y_all[run], run, reference=x[:, :1], predictions=x[:, 1], strata=labels,
                             target="benchmark")
    s = labels[run]
    w_h = {f"s{h}": sizes[h] / n_pop for h in range(3)}
    big = {f"s{h}": sizes[h] for h in range(3)}
    small = {f"s{h}": runs[h] for h in range(3)}
    omega = {h: w_h[h] ** 2 * (1 - small[h] / big[h]) / (small[h] * (small[h] - 1)) for h in w_h}
    design = np.column_stack([(s == h).astype(float) for h in sorted(w_h)] + [x[run]])
    weights = np.array([omega[h] for h in s])
    fit = sm.WLS(y_all[run], design, weights=weights).fit()
    b = fit.params[3:]
    assert res.coefficients == pytest.approx(b.tolist(), rel=1e-8)
    want = sum(w_h[h] * (y_all[run][s == h].mean() + (x[labels == h].mean(axis=0) - x[run][s == h].mean(axis=0)) @ b)
               for h in w_h)
    assert res.estimate == pytest.approx(want, rel=1e-10)
    xw = design * np.sqrt(weights)[:, None]
    hat = np.diag(xw @ np.linalg.inv(xw.T @ xw) @ xw.T)
    resid = y_all[run] - design @ fit.params
    parts, dfs = [], []
    for h in sorted(w_h):
        df_h = small[h] - hat[s == h].sum()  # n_h - 1 - L_h: the intercept's 1 and the stratum's share of b
        a = w_h[h] ** 2 * (1 - small[h] / big[h]) / small[h]
        parts.append(a * np.sum(resid[s == h] ** 2) / df_h)
        dfs.append(df_h)
    assert sum(dfs) == pytest.approx(sum(runs) - 3 - 2)  # the leverages add up to the 2 coefficients
    var = sum(parts)
    assert res.se == pytest.approx(math.sqrt(var), rel=1e-8)
    assert res.df == pytest.approx(var**2 / sum(pt**2 / d for pt, d in zip(parts, dfs, strict=True)), rel=1e-8)
    half = stats.t.isf(0.025, res.df) * math.sqrt(var)
    assert (res.ci.low, res.ci.high) == pytest.approx((want - half, want + half), rel=1e-8)


@SMALL_N
def test_stratified_population_target_two_phase_variance_with_a_control_variate():
    """The population target of the stratified difference estimator: Cochran's two-phase variance, the
    benchmark target's (residual) variance plus S_y^2 / N, S_y^2 from the subset's *scores* (not the
    residuals) over the N items -- [sum (N_h - 1) s_h^2 + sum N_h (ybar_h - ybar_st)^2] / (N - 1) with the
    strata weighted by N_h, ybar_st the stratified mean -- on Satterthwaite's df over the two parts, S_y^2 / N
    on n - 1 (capped at n - 1). Sized for: S_y^2 over N, within-strata terms on N_h, the between-strata term
    about the unweighted mean of the strata, the first phase over n."""
    rng = np.random.default_rng(34)
    sizes = [200, 50, 350]
    labels = _strata(sizes)
    n_pop = sum(sizes)
    x = rng.normal(size=n_pop)
    y_all = np.repeat([1.5, 0.0, -1.0], sizes) + 0.8 * x + rng.normal(size=n_pop)
    runs = [10, 20, 8]
    run = _draw(rng, labels, runs)
    bench = lp.subset_estimate(y_all[run], run, predictions=x, strata=labels, target="benchmark")
    pop = lp.subset_estimate(y_all[run], run, predictions=x, strata=labels)
    y, s = y_all[run], labels[run]
    w = np.array(sizes) / n_pop
    means = np.array([y[s == f"s{h}"].mean() for h in range(3)])
    s2 = np.array([y[s == f"s{h}"].var(ddof=1) for h in range(3)])
    ybar_st = float(w @ means)
    s_y2 = (np.sum((np.array(sizes) - 1) * s2) + np.sum(np.array(sizes) * (means - ybar_st) ** 2)) / (n_pop - 1)
    first = s_y2 / n_pop
    n = run.size
    assert pop.estimate == pytest.approx(bench.estimate, rel=1e-12)
    assert pop.se == pytest.approx(math.sqrt(bench.se**2 + first), rel=1e-10)
    mixed = (first + bench.se**2) ** 2 / (first**2 / (n - 1) + bench.se**4 / bench.df)
    assert pop.df == pytest.approx(min(mixed, n - 1), rel=1e-10)


def test_population_target_caps_its_df_at_n_minus_1():
    """Satterthwaite's df of a sum of two variance parts can exceed either part's df (up to their sum); both
    parts come from the same n items, so the population target's df stop at n - 1. Here (one stratum,
    two-phase) the uncapped df would be near 2 (n - 1). Sized for: the cap left out."""
    rng = np.random.default_rng(35)
    y_all = rng.normal(size=60)
    run = rng.choice(60, 30, replace=False)
    res = lp.subset_estimate(y_all[run], run, n_items=60)
    a, b = (1 - 30 / 60) * y_all[run].var(ddof=1) / 30, y_all[run].var(ddof=1) / 60
    assert (a + b) ** 2 / (a**2 / 29 + b**2 / 29) > 50  # the precondition: uncapped, far above n - 1
    assert res.df == 29
    assert res.se == pytest.approx(y_all[run].std(ddof=1) / math.sqrt(30), rel=1e-12)  # s^2 / n exactly


# ---- the modified Wilson interval where the variance is 0 --------------------------------------------------


def test_zero_variance_wilson_uses_design_effect_1_and_the_strata_df():
    """Korn and Graubard (1998): where the estimated variance is 0 (every item run wrong) the design effect is
    taken as 1, so n* = n / (1 - n/N) for the benchmark's own mean (n for the population), and with H strata
    the df are the design's n - H: n* (t_{n-1} / t_{n-H})^2. Upper bound: statsmodels' Wilson at 0 of n*.
    Sized for: the finite-population factor dropped from n*, the strata df taken as n - 1."""
    labels = _strata([100, 60, 40])
    run = np.r_[np.arange(6), 100 + np.arange(5), 160 + np.arange(4)]
    n, h = run.size, 3
    adjust = (stats.t.isf(0.025, n - 1) / stats.t.isf(0.025, n - h)) ** 2
    bench = lp.subset_estimate(np.zeros(n), run, strata=labels, target="benchmark")
    n_eff = n / (1 - n / 200) * adjust
    assert bench.ci.low == 0.0
    assert bench.ci.high == pytest.approx(proportion_confint(0, n_eff, 0.05, "wilson")[1], rel=1e-10)
    one = lp.subset_estimate(np.ones(12), np.arange(12), n_items=50, target="benchmark")  # one stratum: no adjustment
    n_eff = 12 / (1 - 12 / 50)
    assert one.ci.high == 1.0
    assert one.ci.low == pytest.approx(proportion_confint(n_eff, n_eff, 0.05, "wilson")[0], rel=1e-10)


# ---- plans ---------------------------------------------------------------------------------------------------


def _hamilton(n, share):
    """Largest-remainder (Hamilton) apportionment of n seats by ``share`` (no bounds binding)."""
    quota = n * share / share.sum()
    seats = np.floor(quota)
    rest = int(n - seats.sum())
    seats[np.argsort(-(quota - seats), kind="stable")[:rest]] += 1
    return seats


def test_neyman_allocation_is_n_h_proportional_to_n_h_s_h_rounded_by_largest_remainders():
    """Cochran section 5.5: n_h = n N_h S_h / sum N_k S_k, with S_h the sd the plan reports; the integer
    allocation is that quota rounded by largest remainders (no stratum near its bounds here). Proportional
    allocation: the quota n N_h / N. Sized for: n_h proportional to N_h S_h^2 or sqrt(N_h) S_h, and the
    remainders given to the smallest fractions."""
    sizes = np.array([700.0, 450.0, 900.0, 350.0])
    labels = _strata(sizes.astype(int))
    rng = np.random.default_rng(36)
    probs = np.repeat([0.9, 0.6, 0.75, 0.5], sizes.astype(int))
    ref = (rng.random((labels.size, 5)) < probs[:, None]).astype(float)
    for budget in (211, 397):
        plan = lp.subset_plan(labels.size, strata=labels, budget=budget, reference=ref, control=False, rng=0)
        sd = np.array([a["sd"] for a in plan.allocation])
        assert np.ptp(sd) > 0.1  # the precondition: the spreads differ, so N_h S_h and N_h S_h^2 differ
        run = np.array([a["run"] for a in plan.allocation], dtype=float)
        assert run.tolist() == _hamilton(budget, sizes * sd).tolist(), budget
        prop = lp.subset_plan(labels.size, strata=labels, budget=budget, allocation="proportional", rng=0)
        assert [a["run"] for a in prop.allocation] == _hamilton(budget, sizes).tolist()


def test_plan_population_target_from_reference_models_adds_their_variance_over_n():
    """One stratum, reference models and no control variate: the expected variance is Cochran's two-phase
    (1 - n/N) S^2 / n + S^2 / N, S^2 the reference models' mean sample variance (ddof 1) over all N items.
    Sized for: S^2 with ddof 0 in the first phase, the first phase dropped."""
    rng = np.random.default_rng(37)
    ref = (rng.random((80, 3)) < [0.3, 0.5, 0.8]).astype(float)
    s2 = float(np.mean(ref.var(axis=0, ddof=1)))
    plan = lp.subset_plan(80, budget=20, reference=ref, control=False, rng=0)
    assert plan.expected_se == pytest.approx(math.sqrt((1 - 20 / 80) * s2 / 20 + s2 / 80), rel=1e-12)
    bench = lp.subset_plan(80, budget=20, reference=ref, control=False, target="benchmark", rng=0)
    assert bench.expected_se == pytest.approx(math.sqrt((1 - 20 / 80) * s2 / 20), rel=1e-12)


def test_plan_with_one_reference_model_uses_its_own_spread():
    """With a single reference model there is no leaderboard mean of the *other* models to take residuals
    after: S_h is that model's within-stratum sd (ddof 1), whatever ``control`` says. Sized for: the
    leave-one-out mean tried with one model (0 / 0)."""
    rng = np.random.default_rng(50)
    labels = _strata([120, 80])
    one = (rng.random(200) < np.repeat([0.8, 0.4], [120, 80])).astype(float)
    plan = lp.subset_plan(200, strata=labels, budget=30, reference=one[:, None], rng=0)
    want = [one[labels == h].std(ddof=1) for h in ("s0", "s1")]
    assert [a["sd"] for a in plan.allocation] == pytest.approx(want, rel=1e-12)
    assert plan.sd_source == "1 reference model(s)"


# ---- the sequence ----------------------------------------------------------------------------------------


def _rejected_by_brute_force(y, grid, alpha_side, horizon):
    """Each grid candidate m (values in [0, 1], drawn with replacement): ever rejected by either side's
    capital prod (1 +- lambda_i (y_i - m)) reaching 1/alpha_side at some look (the running intersection)."""
    lam = bets(y, alpha_side, horizon)
    out = np.zeros(grid.size, dtype=bool)
    for k, m in enumerate(grid):
        up = np.cumsum(np.log1p(lam * (y - m)))
        dn = np.cumsum(np.log1p(-lam * (y - m)))
        out[k] = bool(np.any(up >= math.log(1 / alpha_side)) or np.any(dn >= math.log(1 / alpha_side)))
    return out


def test_sequence_bounds_hold_every_candidate_not_rejected_by_brute_force():
    """The population target's sequence is the set of candidate means no capital has rejected (either side,
    alpha/2 each, at any look so far): its bounds lie strictly between the last rejected grid point and the
    first one still in, on both sides. Sized for: a bound placed on a rejected or a surviving grid point
    (one grid step off), alpha not halved."""
    rng = np.random.default_rng(38)
    y = (rng.random(700) < 0.64).astype(float)
    seq = lp.SubsetSequence(100_000, horizon=300)
    for start in range(0, 700, 100):
        res = seq.add(y[start:start + 100])
    grid = np.linspace(0.0, 1.0, 2001)
    out = _rejected_by_brute_force(y, grid, 0.025, 300)
    inside = np.flatnonzero(~out)
    a, b = inside[0], inside[-1]
    assert np.all(~out[a:b + 1])  # one interval of survivors
    assert grid[a - 1] < res.ci.low <= grid[a] and grid[b] <= res.ci.high < grid[b + 1]
    assert res.estimate == pytest.approx(y.mean(), rel=1e-12) and res.n == 700  # the mean of the items run so far


def test_sequence_default_horizon_is_documented():
    """The bets are tuned for ``horizon`` items: by default a tenth of the benchmark (at least 100), or with
    ``half_width`` the size of a fixed sample with that half-width at the widest spread, Cochran's
    n0 / (1 + n0 / N) with n0 = (1.96 (high - low) / 2 / half_width)^2. The kernel's sequence with that
    horizon gives the same bounds. Sized for: a horizon of N / 100, the spread taken as the range."""
    rng = np.random.default_rng(39)
    y = (rng.random(400) < 0.7).astype(float)
    for kwargs, horizon in (({}, 800), ({"half_width": 0.05}, round(384.16 / (1 + 384.16 / 8000)))):
        seq = lp.SubsetSequence(8000, **kwargs)
        ref = BettingSequence(0.0, 1.0, alpha_lower=0.025, alpha_upper=0.025, horizon=horizon)
        res = seq.add(y)
        ref.extend(y)
        assert (res.ci.low, res.ci.high) == pytest.approx(ref.bounds(), abs=1e-12), kwargs
        other = BettingSequence(0.0, 1.0, alpha_lower=0.025, alpha_upper=0.025, horizon=horizon // 4 + 1)
        other.extend(y)
        assert other.bounds() != pytest.approx(ref.bounds(), abs=1e-6)  # the horizon shows in the bounds


def test_the_population_sequence_is_not_a_point_when_every_item_is_run():
    """Only the benchmark's own mean is known once every item is run; the population target's sequence still
    allows for the benchmark's own sampling. Sized for: the census rule applied to both targets."""
    y = (np.random.default_rng(40).random(300) < 0.6).astype(float)
    pop = lp.SubsetSequence(300).add(y)
    bench = lp.SubsetSequence(300, target="benchmark").add(y)
    assert bench.ci.low == bench.ci.high == pytest.approx(y.mean())
    assert pop.ci.high - pop.ci.low > 0.1 and pop.ci.low < y.mean() < pop.ci.high
