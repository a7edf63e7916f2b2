"""The report's own count (:mod:`llm_power._kernel.report_power`): a future report ranks its own benchmark.

1. Against simulated reports: benchmarks of N items drawn from a population of 0/1 items, each ranked by
   its own means and its adjacent gaps judged by the package's columns and correction (as
   ``test_leaderboard_power.exact_simulation`` judges a fixed family; here the family is re-formed per
   benchmark), and (slow) by ``diagnose`` itself: E[R] and P(all) within 3 combined Monte-Carlo SE, on
   boards whose models are close (the report reorders near-ties) and far apart.
2. Far-apart models: the report's count equals the fixed family's (``leaderboard_power`` on the pilot's
   adjacent pairs) within 3 SE; close models: it is lower, as the benchmark measured.
3. The items needed against a scan; determinism; validation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_power as lp
from llm_power._kernel.binary_pairs import binary_pair_columns
from llm_power._kernel.family import family_correlation, family_pairs
from llm_power._kernel.leaderboard_power import leaderboard_power
from llm_power._kernel.report_power import items_for_report, report_power
from llm_power.resolution._regimes import _corrected


def population(m: int, spread: float, seed: int = 3, n: int = 20_000) -> np.ndarray:
    """0/1 items of m models sharing item difficulty (Rasch-like), abilities ``spread`` apart."""
    rng = np.random.default_rng(seed)
    ability = -spread * np.arange(m)
    difficulty = rng.normal(0, 1.5, n)
    p = 1 / (1 + np.exp(-(1.0 + ability[None, :] - difficulty[:, None])))
    return (rng.random((n, m)) < p).astype(float)


def simulated_reports(x: np.ndarray, n: int, reps: int, correction: str, seed: int) -> np.ndarray:
    """Resolved adjacent gaps of ``reps`` reports of n items drawn from ``x``, each ranked by its own means."""
    rng = np.random.default_rng(seed)
    counts = np.empty(reps, dtype=np.int64)
    for s in range(reps):
        b = x[rng.integers(0, x.shape[0], n)]
        means = b.mean(axis=0)
        order = np.argsort(-means, kind="stable")
        i, j = order[:-1], order[1:]
        both = (b[:, i] * b[:, j]).sum(axis=0)
        cols = binary_pair_columns(both, b.sum(axis=0), i, j, n, confidence_level=0.95, alpha=0.05, power=0.8)
        if correction == "none":
            flags = cols["resolved"]
        else:
            _, flags, _ = _corrected(cols["delta"], cols["var"], n, cols["pvalue"], 0.05, 0.8, correction,
                                     cols["b"], cols["c"])
        counts[s] = int(np.sum(flags))
    return counts


def _limit(x: np.ndarray, n: int, correction: str, sims: int) -> object:
    means = x.mean(axis=0)
    c = x - means
    return report_power(means, c.T @ c / x.shape[0], n, correction=correction, n_simulations=sims, rng=5)


#: (label, models, spread, N, correction)
DESIGNS = [
    ("20 close models holm", 20, 0.06, 20_000, "holm"),
    ("12 models bh", 12, 0.1, 10_000, "bh"),
    ("6 models apart none", 6, 0.25, 3000, "none"),
]


def _check(label: str, m: int, spread: float, n: int, correction: str, reps: int, sims: int) -> None:
    x = population(m, spread)
    lim = _limit(x, n, correction, sims)
    counts = simulated_reports(x, n, reps, correction, seed=9)
    se = math.hypot(counts.std(ddof=1) / math.sqrt(reps), lim.expected_resolved_se)
    p_all = float(np.mean(counts == m - 1))
    se_all = math.hypot(math.sqrt(max(p_all * (1 - p_all), 1e-4) / reps), lim.all_resolved_se)
    print(label, round(counts.mean(), 3), round(lim.expected_resolved, 3), round(se, 3), p_all,  # noqa: T201
          round(lim.all_resolved, 3))
    assert abs(counts.mean() - lim.expected_resolved) <= 3 * se
    assert abs(p_all - lim.all_resolved) <= 3 * se_all
    assert 0.5 < counts.mean() < m - 1.2


@pytest.mark.parametrize(("label", "m", "spread", "n", "correction"), DESIGNS, ids=[d[0] for d in DESIGNS])
def test_the_reports_count_matches_simulated_reports(label: str, m: int, spread: float, n: int,
                                                     correction: str) -> None:
    _check(label, m, spread, n, correction, reps=800 if m > 6 else 3000, sims=10_000)


@pytest.mark.slow
@pytest.mark.parametrize(("label", "m", "spread", "n", "correction"), DESIGNS, ids=[d[0] for d in DESIGNS])
def test_the_reports_count_matches_simulated_reports_large(label: str, m: int, spread: float, n: int,
                                                           correction: str) -> None:
    _check(label, m, spread, n, correction, reps=10_000, sims=100_000)


@pytest.mark.slow
def test_the_reports_count_matches_diagnose() -> None:
    """The same through ``diagnose`` itself (its own ranking, columns and Holm)."""
    x = population(12, 0.1)
    n, reps = 10_000, 600
    rng = np.random.default_rng(21)
    counts = []
    for _ in range(reps):
        diag = lp.diagnose(x[rng.integers(0, x.shape[0], n)], correction="holm", rng=0)
        counts.append(len(diag.columns["delta"]) - diag.n_unresolved["corrected"])
    lim = _limit(x, n, "holm", 40_000)
    se = math.hypot(np.std(counts, ddof=1) / math.sqrt(reps), lim.expected_resolved_se)
    assert abs(np.mean(counts) - lim.expected_resolved) <= 3 * se


def test_far_apart_the_report_counts_the_pilots_gaps_close_together_fewer() -> None:
    for m, spread, agree in ((10, 0.3, True), (20, 0.06, False)):
        x = population(m, spread)
        order = np.argsort(-x.mean(axis=0), kind="stable")
        i, j = family_pairs(order, "adjacent")
        d = x[:, i] - x[:, j]
        n = 2000 if agree else 20_000
        fixed = leaderboard_power(d.mean(axis=0), d.std(axis=0), family_correlation(x, i, j).corr, n,
                                  correction="holm", n_simulations=20_000, rng=1)
        rep = _limit(x, n, "holm", 20_000)
        se = math.hypot(fixed.expected_resolved_se, rep.expected_resolved_se)
        if agree:
            assert abs(fixed.expected_resolved - rep.expected_resolved) <= 3 * se
        else:
            assert rep.expected_resolved < fixed.expected_resolved - 3 * se


def test_items_for_a_report_equal_a_scan_on_the_same_draws() -> None:
    x = population(6, 0.08)
    means = x.mean(axis=0)
    c = x - means
    cov = c.T @ c / x.shape[0]
    res = items_for_report(means, cov, at_least=3, n_simulations=4000, rng=2)
    grid = np.arange(max(res.n_items - 60, 1), res.n_items + 60, 1)
    curve = report_power(means, cov, grid, n_simulations=4000, rng=2).probability_at_least(3)
    first = int(grid[np.argmax(curve >= 0.8)])
    assert res.n_items == first
    again = report_power(means, cov, [1000, 4000], n_simulations=4000, rng=2)
    np.testing.assert_array_equal(again.expected_resolved,
                                  report_power(means, cov, [1000, 4000], n_simulations=4000, rng=2).expected_resolved)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"means": [0.5]}, "`means` must be a 1-d array of 2 to"),
    ({"cov": np.eye(3)}, r"`cov` must be a finite symmetric 2 x 2"),
    ({"cov": [[1.0, 2.0], [2.0, 1.0]]}, "positive semi-definite"),
    ({"correction": "dunnett"}, "`correction` must be one of"),
])
def test_validation(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"means": [0.6, 0.5], "cov": np.eye(2) * 0.2}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        report_power(args.pop("means"), args.pop("cov"), 100, rng=1, **args)
