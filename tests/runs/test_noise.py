"""noise(): flip rates, signal-to-noise and template sensitivity against brute force, scipy and simulation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import llm_power as lp


def test_flip_rate_is_unbiased_for_two_runs_disagreeing() -> None:
    """Per item P(two runs disagree) = 2 p (1 - p); the reported flip rate averages an unbiased estimate."""
    rng = np.random.default_rng(0)
    n, r = 4000, 4
    p = rng.beta(0.5, 0.5, n)
    y = (rng.random((n, r, 1)) < p[:, None, None]).astype(int)
    rep = lp.noise(y, models=["m"])
    truth = float(np.mean(2 * p * (1 - p)))
    lo, hi = rep.flakiness[0]["flip_rate_ci"]
    assert lo <= truth <= hi
    # brute force on the sample: the share of (run, run') pairs that disagree, per item, averaged
    pairs = list(itertools.combinations(range(r), 2))
    brute = np.mean([np.mean([y[i, a, 0] != y[i, b, 0] for a, b in pairs]) for i in range(300)])
    sub = lp.noise(y[:300], models=["m"]).flakiness[0]["flip_rate"]
    assert sub == pytest.approx(brute)


def test_signal_to_noise_by_hand() -> None:
    rng = np.random.default_rng(1)
    n, r = 200, 5
    y = np.array([0.2, 0.5, 0.6]) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.05, (1, r, 3)) \
        + rng.normal(0, 0.3, (n, r, 3))
    rep = lp.noise(y, models=["a", "b", "c"])
    run_means = y.mean(axis=0)  # (R, M)
    pooled = np.mean(run_means.var(axis=0, ddof=1))  # equal R: pooled variance of one run's score
    assert rep.noise == pytest.approx(np.sqrt(pooled), rel=1e-10)
    means = y.mean(axis=(0, 1))
    assert rep.signal == pytest.approx(means.max() - means.min())
    assert rep.snr == pytest.approx(rep.signal / rep.noise)
    lo, hi = rep.snr_ci
    df = 3 * (r - 1)
    assert lo == pytest.approx(rep.signal / np.sqrt(df * pooled / stats.chi2.ppf(0.025, df)))
    assert hi == pytest.approx(rep.signal / np.sqrt(df * pooled / stats.chi2.ppf(0.975, df)))


def test_template_sensitivity_against_scipy_and_brute_force() -> None:
    rng = np.random.default_rng(2)
    n, t, m = 300, 4, 5
    template = rng.normal(0, 0.08, (1, t, m))  # template x model interaction: rankings move
    y = np.linspace(0.5, 0.3, m) + rng.normal(0, 1, (n, 1, 1)) + template + rng.normal(0, 0.2, (n, t, m))
    rs = lp.RunScores.from_array(y, models=list("abcde"), runs_by="template")
    rep = lp.noise(rs, rng=0, n_resamples=200)
    tm = rep.templates
    assert tm is not None
    per = y.mean(axis=0)  # templates x models
    taus = [stats.kendalltau(per[a], per[b]).statistic for a, b in itertools.combinations(range(t), 2)]
    assert tm["kendall_tau"] == pytest.approx(np.mean(taus))  # no ties: tau-a = tau-b
    lo, hi = tm["kendall_tau_ci"]
    assert lo <= tm["kendall_tau"] <= hi
    flips = {(f["model_a"], f["model_b"]) for f in tm["flipping_pairs"]}
    brute = {(x, z) for (i, x), (j, z) in itertools.combinations(enumerate("abcde"), 2)
             if (per[:, i] > per[:, j]).any() and (per[:, i] < per[:, j]).any()}
    assert flips == brute and flips
    assert [s["spread"] for s in tm["spread"]] == pytest.approx(list(np.ptp(per, axis=0)))
    assert lp.noise(rs.select([0, 1]), templates=False).templates is None
    seeds = lp.RunScores.from_array(y, models=list("abcde"))  # runs_by "run": seeds, not templates
    assert lp.noise(seeds).templates is None


def test_noise_needs_two_runs() -> None:
    with pytest.raises(ValueError, match="at least 2 runs"):
        lp.noise(np.zeros((10, 1, 2)))


def test_noise_report_renders() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random((100, 3, 2)) < 0.6).astype(int)
    rep = lp.noise(y, models=["<b>x</b>", "y"])
    text = rep.summary()
    assert "Signal-to-noise" in text and "Flakiness" in text
    assert rep.to_json().startswith("{")
