"""Several samples per item: variance components, SE and N* checked by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from llm_power import paired_variance_components, repeated_sampling_plan, sample_size_repeated, variance_components
from llm_power.planning import k_factor


def two_stage(rng, n, k, between, within):
    mu = rng.normal(0.5, np.sqrt(between), size=(n, 1))
    return mu + rng.normal(0, np.sqrt(within), size=(n, k))


def test_components_unbiased_and_se_correct():
    rng = np.random.default_rng(40)
    b_true, w_true, n, k = 0.04, 0.2, 200, 5
    est_b, est_w, means, ses, naive = [], [], [], [], []
    for _ in range(2000):
        vc = variance_components(two_stage(rng, n, k, b_true, w_true))
        est_b.append(vc.var_item_means - vc.within / k)  # untruncated
        est_w.append(vc.within)
        means.append(vc.mean)
        ses.append(vc.standard_error)
        naive.append(vc.standard_error_naive)
    assert np.mean(est_w) == pytest.approx(w_true, rel=0.01)
    assert np.mean(est_b) == pytest.approx(b_true, abs=0.002)
    true_se = np.sqrt(b_true / n + w_true / (n * k))  # law of total variance
    assert np.std(means) == pytest.approx(true_se, rel=0.05)
    assert np.mean(ses) == pytest.approx(true_se, rel=0.02)
    assert np.mean(naive) < 0.8 * true_se  # ignoring the item axis understates the SE


def test_paired_components_by_simulation():
    rng = np.random.default_rng(41)
    n, k = 300, 4
    sds = []
    for _ in range(1000):
        p = rng.uniform(0.2, 0.9, size=(n, 1))
        a = (rng.random((n, k)) < p).astype(float)
        b = (rng.random((n, k)) < np.clip(p - 0.05 + rng.normal(0, 0.1, size=(n, 1)), 0, 1)).astype(float)
        vc = paired_variance_components(a, b)
        sds.append((vc.mean, vc.standard_error))
    sds = np.array(sds)
    assert np.mean(sds[:, 1]) == pytest.approx(np.std(sds[:, 0]), rel=0.05)


def test_sample_size_repeated_formula_and_plan():
    k = k_factor()
    assert sample_size_repeated(0.03, between=0.05, within=0.2, samples_per_item=4) == int(np.ceil(k * (0.05 + 0.05) / 0.0009))
    plan = repeated_sampling_plan(0.02, between=0.02, within=0.2, cost_per_item=20, max_samples_per_item=40)
    costs = plan.n_items * (20 + plan.samples_per_item)
    assert plan.best_samples_per_item == plan.samples_per_item[np.argmin(costs)]
    # the integer optimum sits next to the continuous two-stage optimum sqrt((w/b)(c_item/c_sample))
    assert abs(plan.best_samples_per_item - np.sqrt(10 * 20)) <= 2
    assert np.all(np.diff(plan.n_items) <= 0)  # more samples per item never need more items
    assert "<- cheapest" in plan.summary()
