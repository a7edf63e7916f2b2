"""The correlation of a comparison family and many-to-one (Dunnett) power
(:mod:`llm_power._kernel.family`): the correlation against ``np.corrcoef`` of the explicit difference
columns and against the numbers measured on MMLU-Pro in issue 45; Dunnett's critical values against
his 1955 table and ``scipy.stats.dunnett``; the power against a simulation of the joint normal and
of the exact paired 0/1 design (z tests on simulated items); the items needed against brute force.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from llm_power._core.errors import DegenerateDataWarning
from llm_power._kernel.family import (
    dunnett_critical_value,
    dunnett_power,
    family_correlation,
    family_pairs,
    items_for_dunnett,
)
from llm_power.io.demo import load_mmlu_pro


def equi(k: int, rho: float) -> np.ndarray:
    return np.full((k, k), rho) + (1 - rho) * np.eye(k)


# ---- the correlation ------------------------------------------------------------------------------

@pytest.mark.parametrize("family", ["adjacent", "all_pairs", "many_to_one"])
@pytest.mark.parametrize("binary", [True, False])
def test_correlation_equals_corrcoef_of_difference_columns(family: str, binary: bool) -> None:
    rng = np.random.default_rng(45)
    n, m = 300, 6
    latent = rng.standard_normal((n, 1)) + 0.8 * rng.standard_normal((n, m))
    x = (latent > rng.normal(0, 0.5, m)).astype(float) if binary else latent
    order = rng.permutation(m)
    i, j = family_pairs(order, family, control=int(order[2]))
    res = family_correlation(x, i, j)
    oracle = np.corrcoef(x[:, i] - x[:, j], rowvar=False)
    np.testing.assert_allclose(res.corr, oracle, atol=1e-12)
    off = oracle[~np.eye(i.size, dtype=bool)]
    assert res.minimum == pytest.approx(off.min()) and res.maximum == pytest.approx(off.max())
    assert res.median == pytest.approx(np.median(off))
    assert res.share_negative == pytest.approx(np.mean(off < 0))
    assert res.prds_plausible == bool(np.all(off >= 0))


@pytest.fixture(scope="module")
def mmlu_top10() -> np.ndarray:
    data = load_mmlu_pro()
    order = np.argsort(-data.scores.mean(axis=0), kind="stable")[:10]
    return np.asarray(data.scores[:, order])


def test_mmlu_pro_adjacent_pairs_correlate_negatively(mmlu_top10: np.ndarray) -> None:
    # issue 45 (published): adjacent pairs (those sharing a model) correlate -0.57 ... -0.39, median -0.50
    i, j = family_pairs(np.arange(10), "adjacent")
    res = family_correlation(mmlu_top10, i, j)
    neighbours = np.diag(res.corr, 1)
    assert round(neighbours.min(), 2) == -0.57
    assert round(neighbours.max(), 2) == -0.39
    assert round(float(np.median(neighbours)), 2) == -0.50
    assert not res.prds_plausible and res.minimum == pytest.approx(neighbours.min())


def test_mmlu_pro_one_model_against_the_board_correlates_positively(mmlu_top10: np.ndarray) -> None:
    # issue 45 (published): one model against each other +0.42 ... +0.69 -- the 10th of the top 10
    # against the nine above it
    i, j = family_pairs(np.arange(10), "many_to_one", control=9)
    res = family_correlation(mmlu_top10, i, j)
    assert (round(res.minimum, 2), round(res.maximum, 2)) == (0.42, 0.69)
    assert res.prds_plausible and res.share_negative == 0
    # every model against the other nine: all positive (BH inside PRDS for many-to-one)
    for control in range(10):
        assert family_correlation(mmlu_top10, *family_pairs(np.arange(10), "many_to_one", control=control)).minimum > 0.3


def test_mmlu_pro_a_third_of_all_pairs_correlations_negative(mmlu_top10: np.ndarray) -> None:
    res = family_correlation(mmlu_top10, *family_pairs(np.arange(10), "all_pairs"))
    assert res.corr.shape == (45, 45)
    assert res.share_negative == pytest.approx(1 / 3, abs=0.02)
    assert not res.prds_plausible


def test_correlation_messages_and_degenerate() -> None:
    x = np.random.default_rng(1).integers(0, 2, (50, 3)).astype(float)
    with pytest.raises(ValueError, match="`i` and `j` must have the same length"):
        family_correlation(x, [0, 1], [1])
    with pytest.raises(ValueError, match=r"`j` must hold model indices in \[0, 2\]"):
        family_correlation(x, [0], [3])
    with pytest.raises(ValueError, match="`i` and `j` must differ"):
        family_correlation(x, [0], [0])
    with pytest.raises(ValueError, match="`x` must have no missing"):
        family_correlation(np.where(x == 1, np.nan, x), [0], [1])
    with pytest.raises(ValueError, match="`family` must be one of"):
        family_pairs([0, 1], "adjacnet")
    with pytest.raises(ValueError, match="`control` must be one of the models"):
        family_pairs([0, 1], "many_to_one", control=5)
    x2 = np.column_stack([x, x[:, 0]])
    with pytest.warns(DegenerateDataWarning, match="zero-variance"):
        res = family_correlation(x2, [0, 1], [3, 2])
    assert np.isnan(res.corr[0, 1]) and not res.prds_plausible
    one = family_correlation(x, [0], [1])
    assert one.corr.shape == (1, 1) and math.isnan(one.median) and one.to_dict()["median"] is None


# ---- Dunnett's critical value ---------------------------------------------------------------------

# Dunnett (1955), Tables 1a and 2a, infinite df, alpha = 0.05, equal sizes (correlation 1/2),
# k = 1..9 comparisons, printed to two decimals
ONE_SIDED = [1.64, 1.92, 2.06, 2.16, 2.23, 2.29, 2.34, 2.38, 2.42]
TWO_SIDED = [1.96, 2.21, 2.35, 2.44, 2.51, 2.57, 2.61, 2.65, 2.69]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, pytest.param(9, marks=pytest.mark.slow)])  # k = 9: ~15-30 s
def test_critical_value_reproduces_dunnetts_table(k: int) -> None:
    assert dunnett_critical_value(equi(k, 0.5), 0.05, "greater") == pytest.approx(ONE_SIDED[k - 1], abs=0.006)
    assert dunnett_critical_value(equi(k, 0.5), 0.05, "two-sided") == pytest.approx(TWO_SIDED[k - 1], abs=0.006)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_critical_value_against_scipy_dunnett(alternative: str) -> None:
    # equal groups of n against a control: correlation 1/2; every treatment shifted so that every
    # statistic equals our c; scipy's p-value (multivariate t, df = 4(n-1), near the normal) is alpha
    k, n, alpha = 3, 4000, 0.05
    c = dunnett_critical_value(equi(k, 0.5), alpha, alternative)
    base = np.tile([-1.0, 1.0], n // 2)  # mean 0, pooled sd 1 (ddof 1: sqrt(n / (n - 1)))
    sd = math.sqrt(n / (n - 1))
    shift = c * sd * math.sqrt(2 / n) * (-1 if alternative == "less" else 1)
    res = stats.dunnett(*[base + shift] * k, control=base, alternative=alternative, rng=1)
    np.testing.assert_allclose(res.statistic, c * (-1 if alternative == "less" else 1), rtol=1e-9)
    # df = 15,996: the t critical value exceeds the normal's by about c^3 / (4 df) -> p above alpha
    assert res.pvalue == pytest.approx(np.full(k, alpha), abs=1.5e-3)


def test_critical_value_against_the_joint_normal_simulation() -> None:
    rng = np.random.default_rng(7)
    r = np.array([[1.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 1.0]])
    z = rng.multivariate_normal(np.zeros(3), r, size=400_000)
    for alternative, stat in (("greater", z.max(axis=1)), ("two-sided", np.abs(z).max(axis=1))):
        c = dunnett_critical_value(r, 0.05, alternative)
        rate = float(np.mean(stat > c))
        assert abs(rate - 0.05) < 3 * math.sqrt(0.05 * 0.95 / z.shape[0])


def test_critical_value_limits() -> None:
    assert dunnett_critical_value(equi(4, 0.0), 0.05, "greater") == pytest.approx(-special.ndtri(1 - 0.95 ** 0.25), abs=1e-5)
    assert dunnett_critical_value(np.ones((3, 3)), 0.05, "greater") == pytest.approx(-special.ndtri(0.05), abs=1e-5)
    assert dunnett_critical_value([[1.0]], 0.05, "two-sided") == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(ValueError, match="`corr` must be symmetric"):
        dunnett_critical_value([[1.0, 0.2], [0.3, 1.0]])
    with pytest.raises(ValueError, match="positive semi-definite"):
        dunnett_critical_value(equi(3, -0.9))
    with pytest.raises(ValueError, match="`alpha` must be in"):
        dunnett_critical_value(equi(2, 0.5), 1.5)
    with pytest.raises(ValueError, match="`alternative`"):
        dunnett_critical_value(equi(2, 0.5), 0.05, "greatr")


# ---- power ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mu", "corr", "alternative"), [
    ([2.5, 3.0, 2.8], equi(3, 0.5), "greater"),
    ([2.5, 1.5, 3.5, 2.0], equi(4, 0.65), "greater"),
    ([-2.6, 3.1, 2.9], np.array([[1.0, -0.4, 0.3], [-0.4, 1.0, 0.5], [0.3, 0.5, 1.0]]), "two-sided"),
    ([-2.6, -3.1], equi(2, 0.45), "less"),
])
def test_power_against_the_joint_normal_simulation(mu: list[float], corr: np.ndarray, alternative: str) -> None:
    mu_a = np.asarray(mu)
    res = dunnett_power(mu_a * 0.01, 0.01, corr, alpha=0.05, alternative=alternative)
    z = np.random.default_rng(11).multivariate_normal(mu_a, corr, size=200_000)
    s = {"greater": 1.0, "less": -1.0}.get(alternative, np.sign(mu_a))
    rej = s * z > res.critical_value
    for got, sim in ((res.all_rejected, rej.all(axis=1)), (res.any_rejected, rej.any(axis=1))):
        p = float(sim.mean())
        assert abs(got - p) < 3 * math.sqrt(p * (1 - p) / z.shape[0]) + 1e-4
    np.testing.assert_allclose(res.each_rejected, rej.mean(axis=0), atol=3 * 0.5 / math.sqrt(z.shape[0]))
    assert res.expected_rejected == pytest.approx(float(res.each_rejected.sum()))


def _mixture(weights: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means and covariance over items of 0/1 models that answer independently given the item's
    class (weights: classes; probs: classes x models)."""
    mean = weights @ probs
    second = (probs.T * weights) @ probs
    np.fill_diagonal(second, mean)  # E[X^2] = E[X] for 0/1
    return mean, second - np.outer(mean, mean)


# 1 new model (column 0) and k board models; items of three difficulty classes induce the
# item-level correlation. Each design is run at the N the planner gives for 80% power.
DESIGNS = [
    (np.array([0.3, 0.4, 0.3]), np.array([[0.95, 0.9, 0.9, 0.85], [0.7, 0.6, 0.62, 0.55], [0.3, 0.2, 0.25, 0.2]])),
    (np.array([0.5, 0.5]), np.array([[0.9, 0.85, 0.8], [0.45, 0.4, 0.38]])),
    (np.array([0.2, 0.5, 0.3]), np.array([[0.99, 0.97, 0.96, 0.98, 0.95], [0.75, 0.7, 0.66, 0.68, 0.7],
                                          [0.4, 0.3, 0.35, 0.33, 0.32]])),
]


@pytest.mark.parametrize("design", range(len(DESIGNS)))
def test_power_against_the_exact_paired_binary_design(design: int) -> None:
    weights, probs = DESIGNS[design]
    k = probs.shape[1] - 1
    mean, cov = _mixture(weights, probs)
    i = np.zeros(k, dtype=np.intp)
    j = np.arange(1, k + 1)
    vd = cov[np.ix_(i, i)] - cov[np.ix_(i, j)] - cov[np.ix_(j, i)] + cov[np.ix_(j, j)]
    sd = np.sqrt(np.diag(vd))
    corr = vd / np.outer(sd, sd)
    delta = mean[0] - mean[1:]
    n = int(items_for_dunnett(delta, sd, corr, alpha=0.05, power=0.8))
    res = dunnett_power(delta, sd / math.sqrt(n), corr, alpha=0.05)
    assert res.all_rejected >= 0.8
    rng = np.random.default_rng(100 + design)
    reps, hits_all, hits_each = 4000, 0, np.zeros(k)
    for start in range(0, reps, 500):
        block = min(500, reps - start)
        cls = rng.choice(weights.size, p=weights, size=(block, n))
        x = (rng.random((block, n, k + 1)) < probs[cls]).astype(float)
        d = x[:, :, :1] - x[:, :, 1:]
        z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
        rej = z > res.critical_value
        hits_all += int(rej.all(axis=1).sum())
        hits_each += rej.sum(axis=0)
    p_all = hits_all / reps
    assert abs(res.all_rejected - p_all) < 3 * math.sqrt(p_all * (1 - p_all) / reps)
    for got, h in zip(res.each_rejected, hits_each, strict=True):
        p = h / reps
        assert abs(got - p) < 3 * math.sqrt(max(p * (1 - p), 1e-4) / reps)


def test_power_messages() -> None:
    with pytest.raises(ValueError, match="`se` must be > 0"):
        dunnett_power([0.1, 0.1], [0.01, 0.0], equi(2, 0.5))
    with pytest.raises(ValueError, match="`delta` must hold 2 finite values"):
        dunnett_power([0.1, 0.1, 0.1], 0.01, equi(2, 0.5))


# ---- items needed --------------------------------------------------------------------------------

@pytest.mark.parametrize(("delta", "sd", "corr", "alternative"), [
    pytest.param([0.08, 0.1, 0.12], [0.4, 0.45, 0.5], equi(3, 0.5), "greater", marks=pytest.mark.slow),
    ([0.05, -0.06], [0.5, 0.45], np.array([[1.0, -0.3], [-0.3, 1.0]]), "two-sided"),
    pytest.param([0.15, 0.15, 0.15, 0.15], [0.6] * 4, equi(4, 0.7), "greater", marks=pytest.mark.slow),
])
def test_items_equal_brute_force(delta: list[float], sd: list[float], corr: np.ndarray, alternative: str) -> None:
    n = items_for_dunnett(delta, sd, corr, alpha=0.05, power=0.8, alternative=alternative)
    sd_a = np.asarray(sd)

    def power_at(m: int) -> float:
        return dunnett_power(delta, sd_a / math.sqrt(m), corr, alpha=0.05, alternative=alternative).all_rejected

    brute = next(m for m in range(1, 100_000) if power_at(m) >= 0.8)
    assert n == brute


def test_items_limits_and_messages() -> None:
    assert items_for_dunnett([0.05, 0.0], [0.5, 0.5], equi(2, 0.5)) == math.inf
    assert items_for_dunnett([0.05, -0.05], [0.5, 0.5], equi(2, 0.5)) == math.inf
    one = items_for_dunnett([0.1], [0.7], [[1.0]], alternative="two-sided")
    assert one == math.ceil(7.848879 * 0.49 / 0.01 - 1e-9)  # the single-pair N* (K sigma^2 / delta^2)
    with pytest.raises(ValueError, match="`sd` must be > 0"):
        items_for_dunnett([0.05], [0.0], [[1.0]])
    with pytest.raises(ValueError, match="`power` must be in"):
        items_for_dunnett([0.05], [0.5], [[1.0]], power=1.2)
