"""The probability of correct selection (issue 45): Bechhofer's table in the independent equal-variance
limit (published tau values, and his integral by quadrature), the items needed against a scan over N,
and a simulation of paired 0/1 benchmarks drawn from MMLU-Pro's joint outcomes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from llm_power._kernel.family import family_correlation
from llm_power._kernel.selection import items_for_selection, selection_probability

# Bechhofer (1954); Gibbons, Olkin & Sobel (1977) Table A.1: tau = delta* sqrt(n) / sigma for P* = 0.95
BECHHOFER_95 = {2: 2.3262, 3: 2.7101, 4: 2.9162, 5: 3.0552, 6: 3.1591, 8: 3.3099, 10: 3.4182}


def _equi(k: int, rho: float) -> np.ndarray:
    return np.full((k, k), rho) + (1 - rho) * np.eye(k)


@pytest.mark.parametrize("arms", sorted(BECHHOFER_95))
def test_bechhofers_table_in_the_independent_equal_variance_limit(arms: int) -> None:
    tau = BECHHOFER_95[arms]
    k = arms - 1  # comparisons of the best with each other arm: D_k has variance 2 sigma^2, correlation 1/2
    p = float(selection_probability([tau] * k, [np.sqrt(2.0)] * k, _equi(k, 0.5), 1.0))
    assert p == pytest.approx(0.95, abs=2e-4)  # the table's four decimals
    quad = integrate.quad(lambda z: stats.norm.cdf(z + tau) ** k * stats.norm.pdf(z), -12, 12)[0]
    assert p == pytest.approx(quad, abs=1e-5)


def test_items_needed_equal_a_scan_over_n() -> None:
    r = np.array([[1.0, 0.4, 0.3], [0.4, 1.0, 0.5], [0.3, 0.5, 1.0]])
    delta, sd = np.array([0.03, 0.04, 0.06]), np.array([0.42, 0.45, 0.5])
    n = int(items_for_selection(delta, sd, r, probability=0.9))
    grid = np.arange(max(n - 40, 1), n + 41)
    ok = selection_probability(delta, sd, r, grid) >= 0.9
    assert grid[np.argmax(ok)] == n and ok[grid >= n].all()
    assert items_for_selection([0.0, 0.02, 0.03], sd, r) == np.inf


def test_against_paired_binary_benchmarks_drawn_from_mmlu_pro() -> None:
    """Benchmarks of N items drawn from the joint 0/1 outcomes of MMLU-Pro's models ranked 2-5 (leads of
    0.46, 3.01 and 3.27 points); the share whose observed best is the pilot's best against the limit."""
    from llm_power.io.demo import load_mmlu_pro

    data = load_mmlu_pro()
    order = np.argsort(-data.scores.mean(axis=0), kind="stable")[1:5]
    x = data.scores[:, order]
    best, others = 0, np.arange(1, 4)
    d = x[:, [best]] - x[:, others]
    corr = family_correlation(x, np.zeros(3, dtype=int), others).corr
    rng = np.random.default_rng(11)
    patterns, counts = np.unique(x, axis=0, return_counts=True)
    for n in (3000, 8000, 20000):
        limit = float(selection_probability(d.mean(axis=0), d.std(axis=0), corr, float(n)))
        sums = rng.multinomial(n, counts / counts.sum(), size=20_000) @ patterns  # N items from the joint outcomes
        at_top = sums == sums.max(axis=1, keepdims=True)
        correct = np.mean(at_top[:, best] / at_top.sum(axis=1))  # a tie at the top: chosen at random
        se = np.sqrt(limit * (1 - limit) / 20_000)
        assert abs(correct - limit) <= 3 * se, (n, correct, limit)


def test_validation() -> None:
    with pytest.raises(ValueError, match="`sd` must be > 0"):
        selection_probability([0.1], [0.0], [[1.0]], 100)
    with pytest.raises(ValueError, match="`n_items` must be finite and > 0"):
        selection_probability([0.1], [0.3], [[1.0]], 0)
    with pytest.raises(ValueError, match="`corr` must be symmetric"):
        selection_probability([0.1, 0.2], [0.3, 0.3], [[1.0, 0.2], [0.3, 1.0]], 10)
