"""The power of a whole family of comparisons (:mod:`llm_power._kernel.leaderboard_power`).

1. The vectorised verdicts against a plain loop written here from the definition (per draw: p-values
   2 Phi(-|Z|), the correction's per-pair levels exactly as ``resolution._regimes._corrected`` sets
   them, q = Z^2 / K(level) >= 1 and p <= level, the right sign) on the same draws: equal counts.
2. The normal limit against a simulation of the exact tests on the paired 0/1 design: benchmarks of N
   items drawn from a pilot's joint 0/1 outcomes (a multinomial over its rows' patterns), judged by the
   package's own columns (``binary_pair_columns``: McNemar, plug-in or exact N*, as ``diagnose``) and
   correction (``_corrected``), counting resolutions in the pilot's direction: E[R] and P(all) agree
   within 3 combined Monte-Carlo SE, on MMLU-Pro and synthetic designs.
3. The items needed against a brute-force scan over N on the same draws.
4. Determinism with the seed; validation messages.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from llm_power._kernel.binary_pairs import binary_pair_columns
from llm_power._kernel.family import family_correlation, family_pairs
from llm_power._kernel.leaderboard_power import _family, _judge, items_for_leaderboard, leaderboard_power
from llm_power.io.demo import load_mmlu_pro
from llm_power.resolution._regimes import _corrected

CORRECTIONS = ["none", "bonferroni", "holm", "bh", "by"]


def adjacent_corr(m: int, rho: float = -0.5) -> np.ndarray:
    return np.eye(m) + rho * (np.eye(m, k=1) + np.eye(m, k=-1))


# ---- 1. the plain-loop oracle ---------------------------------------------------------------------

def oracle_count(z: np.ndarray, delta: np.ndarray, alpha: float, power: float, correction: str) -> int:
    """One draw, judged pair by pair from the definition."""
    m = z.size
    p = 2 * stats.norm.sf(np.abs(z))
    order = sorted(range(m), key=lambda k: p[k])  # stable: ties keep the pair order
    rank = [0] * m
    for r, k in enumerate(order, start=1):
        rank[k] = r

    def passes(k: int, level: float) -> bool:
        big_k = (stats.norm.ppf(1 - level / 2) + stats.norm.ppf(power)) ** 2
        return z[k] ** 2 / big_k >= 1 and p[k] <= level  # q >= 1 and the test rejects

    if correction in {"none", "bonferroni"}:
        level = alpha if correction == "none" else alpha / m
        flags = [passes(k, level) for k in range(m)]
    elif correction == "holm":
        flags = [False] * m
        for k in order:
            if not passes(k, alpha / (m - rank[k] + 1)):
                break
            flags[k] = True
    else:
        a = alpha / sum(1 / r for r in range(1, m + 1)) if correction == "by" else alpha
        j_star = 0
        for k in order:
            if passes(k, rank[k] * a / m):
                j_star = rank[k]
        flags = [rank[k] <= j_star and passes(k, j_star * a / m) for k in range(m)]
    return sum(1 for k in range(m) if flags[k] and np.sign(z[k]) == np.sign(delta[k]))


@pytest.mark.parametrize("correction", CORRECTIONS)
def test_counts_equal_a_plain_loop_on_the_same_draws(correction: str) -> None:
    delta = np.array([0.03, -0.01, 0.02, 0.0, 0.015, 0.04])
    sd = np.array([0.45, 0.5, 0.4, 0.5, 0.55, 0.6])
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 6))
    r = np.corrcoef(a @ a.T + np.diag(np.arange(6.0)))
    r = 0.5 * r + 0.5 * adjacent_corr(6, -0.45)
    fam = _family(delta, sd, r, alpha=0.05, power=0.8, correction=correction, n_simulations=600, rng=3)
    for n in (800.0, 3000.0, 12000.0):
        counts, flags, _ = _judge(fam, n)
        z = fam.draws + delta / sd * math.sqrt(n)
        expected = [oracle_count(z[s], delta, 0.05, 0.8, correction) for s in range(z.shape[0])]
        np.testing.assert_array_equal(counts, expected)
        assert np.array_equal(counts, flags.sum(axis=1))
        assert np.all(counts <= 5)  # the zero gap is never resolved in its direction
        res = leaderboard_power(delta, sd, r, [n], correction=correction, n_simulations=600, rng=3)
        assert res.expected_resolved[0] == pytest.approx(np.mean(expected), abs=1e-12)
        for k in range(7):
            assert res.at_least[0, k] == pytest.approx(np.mean(np.array(expected) >= k), abs=1e-12)


def test_curve_properties() -> None:
    delta, sd, r = [0.02, 0.03, 0.025], [0.45, 0.5, 0.5], adjacent_corr(3)
    res = leaderboard_power(delta, sd, r, [500, 2000, 8000, 32000], correction="holm", n_simulations=4000, rng=2)
    assert np.all(np.diff(res.expected_resolved) > 0)
    assert np.all(res.band_low <= res.expected_resolved) and np.all(res.expected_resolved <= res.band_high)
    assert np.allclose(res.at_least[:, 0], 1.0)
    assert np.allclose(res.at_least[:, 3], res.all_resolved)
    assert np.allclose(res.at_least[:, 1:].sum(axis=1), res.expected_resolved)  # E[R] = sum_k P(R >= k)
    assert np.allclose(res.each_resolved.sum(axis=1), res.expected_resolved)
    assert np.allclose(res.probability_at_least(2), res.at_least[:, 2])
    # corrections only add caution: none >= bh >= holm >= bonferroni, draw by draw on the same draws
    counts = {c: _judge(_family(delta, sd, r, alpha=0.05, power=0.8, correction=c, n_simulations=2000,
                                rng=5), 4000.0)[0] for c in ("none", "bh", "holm", "bonferroni")}
    assert np.all(counts["none"] >= counts["bh"])
    assert np.all(counts["bh"] >= counts["holm"])
    assert np.all(counts["holm"] >= counts["bonferroni"])
    one = leaderboard_power(delta, sd, r, 2000, correction="holm", n_simulations=4000, rng=2)
    assert isinstance(one.expected_resolved, float)
    assert one.expected_resolved == res.expected_resolved[1]  # common random numbers: the same draws
    d = one.to_dict()
    assert d["n_items"] == 2000.0 and len(d["at_least"]) == 4 and d["correction"] == "holm"


# ---- 2. against the exact tests on the paired 0/1 design -------------------------------------------

def exact_simulation(x: np.ndarray, i: np.ndarray, j: np.ndarray, n: int, *, correction: str, reps: int,
                     rng: np.random.Generator, alpha: float = 0.05, power: float = 0.8) -> np.ndarray:
    """Resolved counts (in the pilot's direction) of ``reps`` benchmarks of n items drawn from the pilot."""
    used = np.unique(np.concatenate([i, j]))
    patterns, freq = np.unique(x[:, used].astype(np.int64), axis=0, return_counts=True)
    col = {int(u): t for t, u in enumerate(used)}
    ii, jj = np.array([col[int(v)] for v in i]), np.array([col[int(v)] for v in j])
    truth = np.sign(x[:, i].mean(axis=0) - x[:, j].mean(axis=0))
    weights = rng.multinomial(n, freq / freq.sum(), size=reps)  # reps x patterns: items of each outcome
    right = weights @ patterns  # reps x models
    both = weights @ (patterns[:, ii] * patterns[:, jj])  # reps x pairs
    counts = np.empty(reps, dtype=np.int64)
    for s in range(reps):
        cols = binary_pair_columns(both[s].astype(float), right[s].astype(float), ii, jj, n, confidence_level=0.95,
                                   alpha=alpha, power=power)
        if correction == "none":
            flags = cols["resolved"]
        else:
            _, flags, _ = _corrected(cols["delta"], cols["var"], n, cols["pvalue"], alpha, power, correction,
                                     cols["b"], cols["c"])
        counts[s] = int(np.sum(flags & (np.sign(cols["delta"]) == truth)))
    return counts


def normal_limit(x: np.ndarray, i: np.ndarray, j: np.ndarray, n: int, *, correction: str, sims: int,
                 seed: int) -> tuple[float, float, float, float]:
    d = x[:, i] - x[:, j]
    delta, sd = d.mean(axis=0), d.std(axis=0)  # the pilot is the population: ddof 0
    r = family_correlation(x, i, j).corr
    res = leaderboard_power(delta, sd, r, n, correction=correction, n_simulations=sims, rng=seed)
    return res.expected_resolved, res.expected_resolved_se, res.all_resolved, res.all_resolved_se


def _mmlu() -> tuple[np.ndarray, np.ndarray]:
    x = load_mmlu_pro().scores
    return x, np.argsort(-x.mean(axis=0), kind="stable")


def _synthetic(kind: str) -> np.ndarray:
    rng = np.random.default_rng(45)
    if kind == "independent5":  # 5 models, independent items, 4-point steps: adjacent corr ~ -0.5
        return (rng.random((4000, 5)) < [0.70, 0.66, 0.62, 0.58, 0.54]).astype(float)
    # 8 models sharing item difficulty (positively correlated scores), uneven steps
    ability = rng.standard_normal((5000, 1))
    return (ability + 0.9 * rng.standard_normal((5000, 8)) > [-0.6, -0.5, -0.45, -0.3, -0.25, -0.1, 0.0, 0.05]
            ).astype(float)


#: (label, data, family, models, correction, N)
DESIGNS = [
    ("mmlu top 6 adjacent holm", "mmlu", "adjacent", 6, "holm", 5000),
    ("mmlu top 6 adjacent bh", "mmlu", "adjacent", 6, "bh", 250_000),
    ("mmlu top 10 adjacent bonferroni", "mmlu", "adjacent", 10, "bonferroni", 60_000),
    ("mmlu top 4 all pairs holm", "mmlu", "all_pairs", 4, "holm", 60_000),
    ("synthetic 5 adjacent bh", "independent5", "adjacent", 5, "bh", 5000),
    ("synthetic 8 adjacent none", "shared8", "adjacent", 8, "none", 12_000),
    ("synthetic 8 all pairs by", "shared8", "all_pairs", 8, "by", 18_000),
]


def _design(data: str, family: str, models: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if data == "mmlu":
        x, order = _mmlu()
    else:
        x = _synthetic(data)
        order = np.argsort(-x.mean(axis=0), kind="stable")
    i, j = family_pairs(order[:models], family)
    return x, i, j


def _agreement(label: str, data: str, family: str, models: int, correction: str, n: int, *, reps: int,
               sims: int) -> dict[str, float]:
    x, i, j = _design(data, family, models)
    e_norm, se_norm, all_norm, all_se_norm = normal_limit(x, i, j, n, correction=correction, sims=sims, seed=7)
    counts = exact_simulation(x, i, j, n, correction=correction, reps=reps, rng=np.random.default_rng(11))
    e_ex, se_ex = counts.mean(), counts.std(ddof=1) / math.sqrt(reps)
    all_ex = float(np.mean(counts == i.size))
    all_se_ex = math.sqrt(all_ex * (1 - all_ex) / reps)
    out = {"normal": e_norm, "exact": e_ex, "se": math.hypot(se_norm, se_ex), "all_normal": all_norm,
           "all_exact": all_ex, "all_se": math.hypot(all_se_norm, all_se_ex)}
    print(label, {k: round(v, 4) for k, v in out.items()})  # noqa: T201 - the measured agreement, with -s
    return out


def _check(out: dict[str, float]) -> None:
    assert abs(out["normal"] - out["exact"]) <= 3 * out["se"] + 1e-12
    assert abs(out["all_normal"] - out["all_exact"]) <= 3 * out["all_se"] + 1e-12
    # a non-trivial check: the count is moving at this N (not pinned at 0 or m)
    assert 0 < out["exact"]


@pytest.mark.parametrize(("label", "data", "family", "models", "correction", "n"), DESIGNS,
                         ids=[d[0] for d in DESIGNS])
def test_normal_limit_matches_exact_tests(label: str, data: str, family: str, models: int, correction: str,
                                          n: int) -> None:
    _check(_agreement(label, data, family, models, correction, n, reps=600, sims=20_000))


@pytest.mark.slow
@pytest.mark.parametrize(("label", "data", "family", "models", "correction", "n"), DESIGNS,
                         ids=[d[0] for d in DESIGNS])
def test_normal_limit_matches_exact_tests_large(label: str, data: str, family: str, models: int, correction: str,
                                                n: int) -> None:
    _check(_agreement(label, data, family, models, correction, n, reps=10_000, sims=200_000))


# ---- 3. items needed against a brute-force scan ----------------------------------------------------

@pytest.mark.parametrize(("correction", "goal"), [("holm", {"at_least": 2}), ("bh", {}), ("none", {"expected": 2.5}),
                                                  ("bonferroni", {"at_least": 1, "probability": 0.9})])
def test_items_needed_equal_a_brute_force_scan(correction: str, goal: dict[str, float]) -> None:
    delta, sd, r = np.array([0.05, 0.07, -0.06]), np.array([0.45, 0.5, 0.5]), adjacent_corr(3)
    res = items_for_leaderboard(delta, sd, r, correction=correction, n_simulations=3000, rng=4, **goal)
    fam = _family(delta, sd, r, alpha=0.05, power=0.8, correction=correction, n_simulations=3000, rng=4)
    k = goal.get("at_least", 3)
    prob = goal.get("probability", 0.8)

    def value(n: int) -> float:
        counts = _judge(fam, float(n))[0]
        return float(counts.mean()) if "expected" in goal else float(np.mean(counts >= k))

    target = goal.get("expected", prob)
    scan = next(n for n in range(1, 100_000) if value(n) >= target)
    assert res.n_items == scan
    assert isinstance(res.n_items, int)
    assert res.value == value(scan) >= target > res.value_below == value(scan - 1)
    assert res.monotone
    assert res.to_dict()["n_items"] == scan


def test_items_needed_default_goal_is_all() -> None:
    delta, sd, r = [0.05, 0.06], [0.45, 0.5], adjacent_corr(2)
    a = items_for_leaderboard(delta, sd, r, n_simulations=2000, rng=1)
    b = items_for_leaderboard(delta, sd, r, at_least="all", n_simulations=2000, rng=1)
    c = items_for_leaderboard(delta, sd, r, at_least=2, n_simulations=2000, rng=1)
    assert a.n_items == b.n_items == c.n_items and a.k == 2


# ---- 4. determinism and validation -----------------------------------------------------------------

def test_deterministic_with_the_seed() -> None:
    args = ([0.02, 0.03], [0.45, 0.5], adjacent_corr(2))
    a = leaderboard_power(*args, [1000, 4000], n_simulations=500, rng=9)
    b = leaderboard_power(*args, [1000, 4000], n_simulations=500, rng=np.random.default_rng(9))
    c = leaderboard_power(*args, [1000, 4000], n_simulations=500, rng=10)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != c.to_dict()
    assert items_for_leaderboard(*args, n_simulations=500, rng=9) == items_for_leaderboard(*args, n_simulations=500,
                                                                                            rng=9)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"correction": "hochberg"}, ValueError,
     "`correction` must be one of 'bh', 'bonferroni', 'by', 'dunnett', 'ebh', 'holm', 'none'"),
    ({"correction": None}, TypeError, "`correction` must be one of"),
    ({"alpha": 1.5}, ValueError, "`alpha` must be in"),
    ({"power": 0.01}, ValueError, "`power` must be greater than `alpha`"),
    ({"n_simulations": 1}, ValueError, "`n_simulations` must be an integer >= 2"),
    ({"delta": [0.1, np.nan]}, ValueError, "`delta` must be a 1-d array of finite gaps"),
    ({"sd": [0.5, 0.0]}, ValueError, "`sd` must be positive and finite"),
    ({"sd": [0.5]}, ValueError, r"`sd` must hold one value per pair \(2\)"),
    ({"corr": np.eye(3)}, ValueError, r"`corr` must be 2 x 2 \(one row per pair\)"),
    ({"corr": [[1, 2], [2, 1]]}, ValueError, "`corr` must be positive semi-definite"),
    ({"n_items": [100, -1]}, ValueError, "`n_items` must be a positive finite number of items"),
    ({"rng": "seed"}, TypeError, "`rng` must be None, an int seed"),
])
def test_power_validation(kwargs: dict[str, object], exc: type[Exception], match: str) -> None:
    args: dict[str, object] = {"delta": [0.02, 0.03], "sd": [0.45, 0.5], "corr": adjacent_corr(2),
                               "n_items": 1000, "rng": 1}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        leaderboard_power(args.pop("delta"), args.pop("sd"), args.pop("corr"), args.pop("n_items"), **args)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"at_least": 3}, ValueError, "`at_least` must be at most 2"),
    ({"at_least": 0}, ValueError, "`at_least` must be a positive integer"),
    ({"at_least": "most"}, ValueError, "`at_least` must be an integer k or 'all'"),
    ({"at_least": 1, "expected": 1.0}, ValueError, "give one goal"),
    ({"expected": 2.5}, ValueError, r"`expected` must be in \(0, 2\]"),
    ({"probability": 1.0}, ValueError, "`probability` must be in"),
    ({"max_items": 10}, ValueError, "the goal is not reached by `max_items`=10 items"),
])
def test_items_validation(kwargs: dict[str, object], exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        items_for_leaderboard([0.02, 0.03], [0.45, 0.5], adjacent_corr(2), rng=1, n_simulations=200,
                              **kwargs)  # type: ignore[arg-type]


def test_a_zero_gap_cannot_be_required() -> None:
    with pytest.raises(ValueError, match="only 1 of the 2 gaps are non-zero"):
        items_for_leaderboard([0.02, 0.0], [0.45, 0.5], adjacent_corr(2), at_least=2, rng=1, n_simulations=200)
    # "all" (the default goal) is every real gap: here the one non-zero gap, alone at its level
    res = items_for_leaderboard([0.02, 0.0], [0.45, 0.5], adjacent_corr(2), correction="none", rng=1,
                                n_simulations=4000)
    alone = items_for_leaderboard([0.02], [0.45], [[1.0]], correction="none", rng=1, n_simulations=4000)
    assert res.n_items == pytest.approx(alone.n_items, rel=0.03)


@pytest.mark.parametrize("correction", ["none", "holm", "bh"])
def test_wrong_sign_rejections_are_not_counted(correction: str) -> None:
    # tiny gaps: nearly every rejection is a coin flip of direction; only the right way round counts
    delta, sd, r = np.array([0.001, -0.001, 0.0005, -0.002]), np.full(4, 0.5), adjacent_corr(4, -0.4)
    fam = _family(delta, sd, r, alpha=0.2, power=0.6, correction=correction, n_simulations=2000, rng=8)
    counts, flags, _ = _judge(fam, 100.0)
    z = fam.draws + delta / sd * 10.0
    expected = [oracle_count(z[s], delta, 0.2, 0.6, correction) for s in range(z.shape[0])]
    np.testing.assert_array_equal(counts, expected)
    rejected_wrong_way = np.abs(z) >= 2.0  # well past the threshold, against the gap's sign
    rejected_wrong_way &= np.sign(z) != np.sign(delta)
    assert rejected_wrong_way.any()
    assert not np.any(flags & rejected_wrong_way)
