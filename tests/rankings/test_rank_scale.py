"""Rank intervals at leaderboard scale (issue 43): the exact pruned maximum over pairs against brute
force, the normal-limit critical value against the old implementation (kept here as the reference),
the guard that counts the chosen method's work, ``top=``, and the coverage at the new draw counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_power as lp
from llm_power._kernel import ranks as K
from llm_power.rankings import _section


def _old_gaussian_max_abs(cov, i, j, se, level, gen, n_draws=20000):  # noqa: ANN001, ANN202
    """gaussian_max_abs before issue 43 (scalar df = inf): every contrast gathered per block."""
    inv_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    vals, vecs = np.linalg.eigh(np.nan_to_num(cov, nan=0.0))
    root = vecs * np.sqrt(np.maximum(vals, 0.0))
    m, size = cov.shape[0], max(i.size, 1)
    n_draws = int(max(2000, min(n_draws, 400_000_000 // size)))
    block = max(1, 4_000_000 // size)
    out = []
    for start in range(0, n_draws, block):
        z = gen.standard_normal((min(block, n_draws - start), m)) @ root.T
        out.append(np.abs((z[:, i] - z[:, j]) * inv_se).max(axis=1))
    return float(np.quantile(np.concatenate(out), level))


def _board(m: int, n: int, seed: int, duplicates: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.random((n, m)) < np.linspace(0.35, 0.8, m)).astype(float)
    if duplicates:  # near-copies: tiny standard errors, the pruning's worst case
        x[:, 1::2] = np.where(rng.random((n, m // 2)) < 0.01, 1 - x[:, ::2][:, : m // 2], x[:, ::2][:, : m // 2])
    return x


@pytest.mark.parametrize("duplicates", [False, True])
def test_max_studentised_gap_equals_every_pair(duplicates: bool) -> None:
    x = _board(120, 800, 1, duplicates)
    x[:, 5] = x[:, 4]  # an identical pair: se 0, left out
    cov = K.mean_covariance(x, True)
    i, j = np.triu_indices(x.shape[1], 1)
    se = K.pair_se(cov, i, j)
    inv = np.zeros((120, 120))
    inv[i, j] = inv[j, i] = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    z = np.random.default_rng(2).standard_normal((500, 120)) @ K._factor(cov).T
    brute = np.abs((z[:, i] - z[:, j]) * inv[i, j]).max(axis=1)
    assert np.array_equal(K.max_studentised_gap(z, inv), brute)


def test_pruned_critical_value_is_the_old_one_with_the_same_draws(monkeypatch) -> None:
    """250 models (31,125 pairs: the pruned path): with the old factor, the same seed gives the old
    critical value (to rounding: the products are formed in other blocks)."""
    x = _board(250, 3000, 3)
    cov = K.mean_covariance(x, True)
    i, j = np.triu_indices(250, 1)
    se = K.pair_se(cov, i, j)
    old = _old_gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(7), n_draws=2000)
    monkeypatch.setattr(K, "_factor", lambda c: (lambda v, w: w * np.sqrt(np.maximum(v, 0.0)))(*np.linalg.eigh(c)))
    new = K.gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(7), n_draws=2000)
    assert new == pytest.approx(old, rel=1e-12)


def test_small_boards_are_unchanged() -> None:
    """Up to 4e6 / M pairs the old path runs: the same seed, the same critical value, exactly."""
    x = _board(40, 1000, 4)
    cov = K.mean_covariance(x, True)
    i, j = np.triu_indices(40, 1)
    se = K.pair_se(cov, i, j)
    new = K.gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(5))
    old = _old_gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(5))
    assert new == pytest.approx(old, rel=1e-12)


def test_pruned_critical_value_covers_at_its_draw_count() -> None:
    """The critical value of 300 models (2,000 + draws of the normal limit) against 20,000 fresh
    draws of the same normal: the share below it is 0.95 within 4 Monte-Carlo SE of the quantile's
    own draws (sqrt(0.95 * 0.05 / 8,918) = 0.0023) and of the check's (0.0015)."""
    x = _board(300, 4000, 6)
    cov = K.mean_covariance(x, True)
    i, j = np.triu_indices(300, 1)
    se = K.pair_se(cov, i, j)
    crit = K.gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(8))
    inv = np.zeros((300, 300))
    inv[i, j] = inv[j, i] = 1.0 / se
    fresh = K.max_studentised_gap(np.random.default_rng(9).standard_normal((20000, 300)) @ K._factor(cov).T, inv)
    tol = 4 * math.hypot(math.sqrt(0.95 * 0.05 / 8918), math.sqrt(0.95 * 0.05 / 20000))
    assert abs(np.mean(fresh <= crit) - 0.95) <= tol


def test_the_guard_counts_the_work_of_the_method_that_runs(monkeypatch) -> None:
    x = _board(460, 400, 10)  # 105,570 pairs: the bootstrap would be 1e8+ values at 1,000 resamples
    res = lp.rank_intervals(x, rng=0)
    assert res.method == "gaussian" and len(res.models) == 460
    with pytest.raises(ValueError, match=r"method='bootstrap' \(use method='gaussian'"):
        lp.rank_intervals(x, method="bootstrap", rng=0)
    monkeypatch.setattr(_section, "MAX_RANK_PAIRS", 1000)
    with pytest.raises(ValueError, match="105,570 pairs, more than 1,000.*`top=K`"):
        lp.rank_intervals(x, rng=0)
    assert len(lp.rank_intervals(x, top=40, rng=0).models) == 40  # what the message offers is accepted


def test_top_ranks_the_k_best_models_as_diagnose_top_does() -> None:
    """``top`` has diagnose's one meaning: only the K best models by mean score, ranked among
    themselves -- the same intervals as ranking those K columns alone, picked here by hand."""
    x = _board(12, 2000, 11)
    names = [f"m{k}" for k in range(12)]
    best = np.argsort(-x.mean(axis=0), kind="stable")[:4]
    part = lp.rank_intervals(x, models=names, top=4, rng=3)
    alone = lp.rank_intervals(x[:, best], models=[names[k] for k in best], rng=3)
    assert part.models == alone.models and part.critical_value == alone.critical_value
    assert part.rank_ci_low.tolist() == alone.rank_ci_low.tolist()
    assert part.rank_ci_high.tolist() == alone.rank_ci_high.tolist()
    assert part.best_set == alone.best_set and part.top_sets == alone.top_sets
    via = lp.rank_intervals(lp.diagnose(x, models=names, top=4, cluster_resamples=0, rng=3), rng=3)
    assert via.rank_ci_low.tolist() == part.rank_ci_low.tolist()
    with pytest.raises(ValueError, match="top"):
        lp.rank_intervals(x, top=1)
    with pytest.raises(TypeError, match="`top` is given with a Diagnosis"):
        lp.rank_intervals(lp.diagnose(x, rng=0), top=3)


@pytest.mark.slow
def test_simultaneous_coverage_at_scale_with_the_new_draws() -> None:
    """200 leaderboards of 220 models (24,090 pairs: the pruned path, 16,604 draws) on 500 0/1 items
    with known accuracies: the kernel's normal-limit critical value (the means' covariance
    estimated from each leaderboard, as rank_sets) makes every pairwise max-t interval cover its
    true gap in >= 95% - 3 MC SE = 0.904 of them (SE 0.0154)."""
    m, n, reps = 220, 500, 200
    truth = np.linspace(0.4, 0.8, m)
    rng = np.random.default_rng(43)
    i, j = np.triu_indices(m, 1)
    every = 0
    for r in range(reps):
        x = (rng.random((n, m)) < truth).astype(float)
        cov = K.mean_covariance(x, True)
        se = K.pair_se(cov, i, j)
        crit = K.gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(r))
        err = x.mean(axis=0)[i] - x.mean(axis=0)[j] - (truth[i] - truth[j])
        every += bool(np.all(np.abs(err) <= crit * se))
    assert every / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), every / reps
