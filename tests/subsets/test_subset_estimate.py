"""Subset estimates of a full-benchmark score: the difference estimator against statsmodels' OLS
fit on the subset (its prediction averaged over every item plus the subset's mean residual, and the
residual variance), the plain one against the finite-population t interval, and validity on real
data by simulation: each MMLU-Pro model left out in turn (its full score known), random subsets
of 200 items, the other 25 models' per-item mean as the control variate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

import llm_power as lp


def test_difference_estimator_is_the_ols_fit_corrected_by_its_residuals():
    rng = np.random.default_rng(0)
    n_pop, n = 3000, 250
    x = rng.normal(size=(n_pop, 2))
    y_all = (rng.random(n_pop) < 1 / (1 + np.exp(-(0.3 + x @ [1.0, -0.5])))).astype(float)
    run = rng.choice(n_pop, n, replace=False)
    res = lp.subset_estimate(y_all[run], run, reference=x[:, :1], predictions=x[:, 1], target="benchmark")
    design = sm.add_constant(x)
    fit = sm.OLS(y_all[run], design[run]).fit()
    want = fit.predict(design).mean() + fit.resid.mean()  # the model-assisted (GREG) form
    assert res.estimate == pytest.approx(want, rel=1e-10)
    se = math.sqrt((1 - n / n_pop) * fit.mse_resid / n)
    assert res.se == pytest.approx(se, rel=1e-10) and res.df == n - 3
    half = stats.t.ppf(0.975, n - 3) * se
    assert (res.ci.low, res.ci.high) == pytest.approx((want - half, want + half), rel=1e-10)
    assert res.coefficients == pytest.approx(fit.params[1:].tolist(), rel=1e-8)
    assert res.variance_reduction == pytest.approx(res.plain_se**2 / res.se**2)


def test_plain_subset_mean_is_the_finite_population_t_interval():
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    res = lp.subset_estimate(y, np.arange(8) * 3, n_items=40, target="benchmark")
    se = math.sqrt((1 - 8 / 40) * y.var(ddof=1) / 8)
    assert (res.method, res.estimate, res.df) == ("subset mean", y.mean(), 7)
    assert res.se == pytest.approx(se) and res.ci.high == pytest.approx(y.mean() + stats.t.ppf(0.975, 7) * se)
    assert res.variance_reduction == 1.0 and res.coefficients == []
    for bad, match in (({"sampled": np.arange(8), "n_items": 5}, r"distinct positions in \[0, 5\)"),
                       ({"sampled": np.zeros(8, dtype=int), "n_items": 40}, "distinct"),
                       ({"sampled": np.arange(7), "n_items": 40}, "one per score"),
                       ({"sampled": np.arange(8)}, "n_items")):
        with pytest.raises(ValueError, match=match):
            lp.subset_estimate(y, **bad)


def test_coverage_and_variance_reduction_on_mmlu_pro_leave_one_out():
    """26 models x 150 random subsets of 200 items (3,900 intervals): both intervals cover the left-out
    model's full MMLU-Pro score in at least 95% - 3 MC SE of them, and the control variate cuts the
    variance (measured over the replications) by a factor above 1.3 in the median model."""
    from llm_power.io.demo import load_mmlu_pro

    d = load_mmlu_pro()
    x = np.asarray(d.scores, dtype=float)
    n_pop, k = x.shape
    reps, n = 150, 200
    rng = np.random.default_rng(11)
    hits = {"plain": 0, "difference": 0}
    ratios = []
    for j in range(k):
        y, others = x[:, j], np.delete(x, j, axis=1)
        truth = y.mean()
        est = {"plain": [], "difference": []}
        for _ in range(reps):
            run = rng.choice(n_pop, n, replace=False)
            res = lp.subset_estimate(y[run], run, reference=others, target="benchmark")
            plain = lp.subset_estimate(y[run], run, n_items=n_pop, target="benchmark")
            for name, r in (("plain", plain), ("difference", res)):
                hits[name] += r.ci.low <= truth <= r.ci.high
                est[name].append(r.estimate)
        ratios.append(np.var(est["plain"]) / np.var(est["difference"]))
    total = reps * k
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / total)
    assert hits["plain"] / total >= floor and hits["difference"] / total >= floor, hits
    assert np.median(ratios) > 1.3 and min(ratios) > 1.0
