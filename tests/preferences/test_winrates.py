"""Win rates: AlpacaEval 2.0's published leaderboard win rates and standard errors from the per-item
preferences, intervals against statsmodels, the paired comparison against scipy's ttest_rel and
statsmodels' clustered OLS, and the same verdict as ``diagnose`` on a preference matrix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from llm_power import compare_win_rates, diagnose, win_rate
from llm_power._core.errors import DataError


@pytest.fixture
def alpaca(shared_data):
    folder = shared_data / "alpaca_eval2"
    return pd.read_csv(folder / "alpaca_eval2_preference.csv.gz"), pd.read_csv(folder / "models.csv")


def test_alpaca_eval_leaderboard_win_rates_and_standard_errors(alpaca):
    prefs, models = alpaca
    published = models.dropna(subset=["lb_win_rate"])
    assert len(published) == 57
    for row in published.itertuples():
        res = win_rate(prefs[row.model] - 1.0)  # AlpacaEval's 1..2 scale
        assert res.n == row.lb_n_total
        assert 100 * res.estimate == pytest.approx(row.lb_win_rate, rel=1e-6, abs=1e-9)
        assert 100 * res.standard_error == pytest.approx(row.lb_standard_error, rel=1e-6, abs=1e-9)


def test_binary_intervals_equal_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    prefs = np.r_[np.ones(37), np.zeros(21), np.full(9, 0.5)]
    res = win_rate(prefs, ties="exclude")
    assert (res.n, res.n_ties, res.method) == (58, 9, "wilson")
    assert res.confidence_interval() == pytest.approx(proportion_confint(37, 58, method="wilson"), rel=1e-12)
    exact = win_rate(prefs, ties="exclude", method="exact")
    assert exact.confidence_interval(0.9) == pytest.approx(proportion_confint(37, 58, alpha=0.1, method="beta"),
                                                           rel=1e-10)
    with pytest.raises(DataError, match="needs 0/1 preferences"):
        win_rate(prefs, method="wilson")


def test_clustered_win_rate_equals_statsmodels_cluster_ols():
    import statsmodels.api as sm

    rng = np.random.default_rng(3)
    prompts = np.repeat(np.arange(60), 5)  # five judge samples per prompt
    prefs = np.clip(rng.normal(0.55, 0.2, 60)[prompts] + rng.normal(0, 0.2, 300), 0, 1)
    res = win_rate(prefs, cluster=prompts)
    fit = sm.OLS(prefs, np.ones(300)).fit(cov_type="cluster", cov_kwds={"groups": prompts})
    assert res.standard_error == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert (res.n_clusters, res.df, res.method) == (60, 59.0, "cluster-t")
    assert res.standard_error > 1.5 * win_rate(prefs).standard_error


def test_paired_comparison_equals_scipy_ttest_rel(alpaca):
    from scipy import stats

    prefs, _ = alpaca
    a, b = prefs["claude-2.1"] - 1, prefs["gpt-3.5-turbo-1106"] - 1
    res = compare_win_rates(a, b, confidence_level=0.9)
    keep = a.notna() & b.notna()
    ref = stats.ttest_rel(a[keep], b[keep])
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    ci = ref.confidence_interval(0.9)
    assert res.confidence_interval() == pytest.approx((ci.low, ci.high), rel=1e-10) == res.ci
    assert res.n == keep.sum()
    assert res.correlation > 0.2  # same instructions: the two models' preferences correlate
    # the unpaired standard error (two win rates' SEs combined) overstates the uncertainty
    unpaired = np.hypot(win_rate(a[keep]).standard_error, win_rate(b[keep]).standard_error)
    assert res.standard_error < 0.95 * unpaired


def test_paired_comparison_clustered_equals_statsmodels():
    import statsmodels.api as sm

    rng = np.random.default_rng(5)
    prompts = np.repeat(np.arange(40), 4)
    a = np.clip(rng.normal(0.6, 0.2, 40)[prompts] + rng.normal(0, 0.2, 160), 0, 1)
    b = np.clip(a - 0.05 + rng.normal(0, 0.15, 160), 0, 1)
    res = compare_win_rates(a, b, cluster=prompts)
    fit = sm.OLS(a - b, np.ones(160)).fit(cov_type="cluster", cov_kwds={"groups": prompts}, use_t=True)
    assert res.standard_error == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert res.pvalue == pytest.approx(float(fit.pvalues[0]), rel=1e-8)  # t on G - 1 = 39 df


def test_diagnose_on_a_preference_matrix_gives_the_same_verdict(alpaca):
    """The same pair through diagnose (items x models preference matrix) and compare_win_rates."""
    prefs, _ = alpaca
    names = ["claude-2.1", "gpt-3.5-turbo-1106", "vicuna-13b-v1.5", "Qwen-14B-Chat"]
    matrix = (prefs[names] - 1).dropna()
    diag = diagnose(matrix, pairs="all")
    frame = diag.to_frame()
    for row in frame.itertuples():
        res = compare_win_rates(matrix[row.model_a], matrix[row.model_b])
        assert row.pvalue == pytest.approx(res.pvalue, rel=1e-8)


def test_win_rate_errors():
    with pytest.raises(DataError, match=r"preferences\[1\] = 2.0 is outside \[0, 1\]"):
        win_rate([1.0, 2.0])
    with pytest.raises(DataError, match="at least two"):
        win_rate([1.0, np.nan])
    with pytest.raises(ValueError, match="same instructions"):
        compare_win_rates([1, 0], [1, 0, 1])


def test_bootstrap_interval_agrees_with_scipy_bootstrap(alpaca):
    """Percentile bootstrap of continuous preferences: within Monte-Carlo error of
    scipy.stats.bootstrap's percentile interval (5,000 resamples each: endpoints within 0.15 SE),
    and close to the t interval."""
    from scipy import stats

    prefs, _ = alpaca
    x = (prefs["claude-2.1"] - 1).dropna().to_numpy()
    res = win_rate(x, method="bootstrap", n_resamples=5000, rng=0)
    assert res.method == "bootstrap" and res.replicates.shape == (5000,)
    ref = stats.bootstrap((x,), np.mean, n_resamples=5000, method="percentile", rng=np.random.default_rng(1))
    lo, hi = res.confidence_interval()
    assert abs(lo - ref.confidence_interval.low) < 0.15 * res.standard_error
    assert abs(hi - ref.confidence_interval.high) < 0.15 * res.standard_error
    t_lo, t_hi = win_rate(x).confidence_interval()
    assert abs(lo - t_lo) < 0.2 * res.standard_error and abs(hi - t_hi) < 0.2 * res.standard_error


def test_cluster_bootstrap_resamples_whole_prompts():
    rng = np.random.default_rng(6)
    prompts = np.repeat(np.arange(80), 5)
    prefs = np.clip(rng.normal(0.55, 0.2, 80)[prompts] + rng.normal(0, 0.2, 400), 0, 1)
    boot = win_rate(prefs, cluster=prompts, method="bootstrap", n_resamples=4000, rng=1)
    assert boot.method == "cluster-bootstrap"
    # the bootstrap SD of the mean tracks the CR1 standard error (x sqrt((G-1)/G) for the plug-in), not the iid one
    assert np.std(boot.replicates) == pytest.approx(boot.standard_error * np.sqrt(79 / 80), rel=0.06)
    assert np.std(boot.replicates) > 1.5 * win_rate(prefs).standard_error
    again = win_rate(prefs, cluster=prompts, method="bootstrap", n_resamples=4000, rng=1)
    np.testing.assert_array_equal(again.replicates, boot.replicates)  # same seed, same numbers
