"""e-BH on a live leaderboard (Wang and Ramdas 2022): the procedure against its definition by brute
force, the false discovery rate under optional stopping with many looks by simulation, and the
monitor's discoveries equal to e-BH on its pairs' e-values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import llm_power as lp
from llm_power.sequential import anytime_critical_value, beta_mixture_log_evalue


def _brute_ebh(e: np.ndarray, q: float) -> set[int]:
    """The largest set R with e_i >= K / (q |R|) for all i in R (self-consistency, maximal)."""
    k = e.size
    best: set[int] = set()
    for size in range(1, k + 1):
        for r in itertools.combinations(range(k), size):
            if all(e[i] >= k / (q * size) for i in r) and size > len(best):
                best = set(r)
    return best


def test_e_bh_equals_the_largest_self_consistent_set() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 8))
        e = np.exp(rng.normal(2.5, 2.0, k))
        got = set(np.flatnonzero(lp.e_bh(e, q=0.1)).tolist())
        assert got == _brute_ebh(e, 0.1)
    with pytest.raises(ValueError, match=">= 0"):
        lp.e_bh([1.0, -1.0])


def _stopped_fdp(truth: np.ndarray, reps: int, q: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per replication, the false discovery proportion when the reader looks after every batch of
    50 items (40 looks) and stops at the first look with a discovery (or the last): with e-BH on
    the pairs' e-values, and with BH on the fixed-n exact McNemar p-values of each look."""
    from scipy import stats

    batch, looks = 50, 40
    m = truth.size
    i, j = np.triu_indices(m, 1)
    null = truth[i] == truth[j]
    r = anytime_critical_value(q)[1]
    a = max(0.5, (r * 1000 * 0.25 - 1) / 2)  # the monitor's default tuning (tuned_for=1000)
    gen = np.random.default_rng(seed)
    x = gen.random((reps, looks * batch, m)) < truth  # independent models
    d = x[:, :, i].astype(np.int8) - x[:, :, j]
    b = np.cumsum(d > 0, axis=1)[:, batch - 1::batch]  # (reps, looks, pairs)
    c = np.cumsum(d < 0, axis=1)[:, batch - 1::batch]
    log_e = np.where(b + c > 0, beta_mixture_log_evalue(b, c, a=a), 0.0)
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), np.maximum(b + c, 1), 0.5))
    out, made = np.zeros((2, reps)), np.zeros(reps)
    for rep in range(reps):
        for kind in range(2):
            for t in range(looks):
                found = (lp.e_bh(np.exp(np.minimum(log_e[rep, t], 700)), q=q) if kind == 0
                         else lp.adjust_pvalues(p[rep, t], method="bh") <= q)
                if found.any() or t == looks - 1:
                    out[kind, rep] = np.sum(found & null) / max(found.sum(), 1)
                    made[rep] += found.sum() if kind == 0 else 0
                    break
    return out[0], out[1], made


@pytest.mark.parametrize("truth", [np.array([0.7, 0.7, 0.7, 0.7, 0.64, 0.58]), np.full(6, 0.7)],
                         ids=["6-of-15-null", "global-null"])
def test_fdr_under_optional_stopping_with_many_looks(truth: np.ndarray) -> None:
    """The false discovery rate at a data-dependent stopping time, 40 looks: e-BH's is at most q +
    3 Monte-Carlo SE; with every model equal, BH on fixed-n p-values at each look is not."""
    reps, q = 600, 0.1
    ebh, bh, made = _stopped_fdp(truth, reps, q, seed=int(truth.sum() * 100))
    se = max(float(np.std(ebh)), math.sqrt(q * (1 - q))) / math.sqrt(reps)
    assert float(np.mean(ebh)) <= q + 3 * se, float(np.mean(ebh))
    if (truth == truth[0]).all():
        assert float(np.mean(bh)) > q + 3 * se, float(np.mean(bh))  # peeking with BH breaks the promise
    else:
        assert np.mean(made > 0) > 0.9  # e-BH still finds the real gaps within the 2,000 items


def test_monitor_discoveries_are_e_bh_of_its_pairs() -> None:
    rng = np.random.default_rng(2)
    names = ["a", "b", "c", "d"]
    board = lp.LeaderboardMonitor(names, correction="e-bh", alpha=0.1, tuned_for=2000)
    for _ in range(20):
        state = board.update((rng.random((100, 4)) < [0.75, 0.7, 0.7, 0.6]).astype(int))
    keys = list(state.pairs)
    found = lp.e_bh([state.pairs[k].e_value for k in keys], q=0.1)
    want = {(a, b) if state.pairs[(a, b)].delta > 0 else (b, a) for (a, b), f in zip(keys, found, strict=True) if f}
    assert set(state.decided) == want and want
    # each pair's own verdict is e-BH's: nothing printed beside a pair contradicts the discoveries
    assert {(a, b) if st.verdict == "A better" else (b, a) for (a, b), st in state.pairs.items()
            if st.verdict != "undecided"} == want
    assert state.correction == "e-bh" and state.alpha_per_pair == 0.1
    bonf = lp.LeaderboardMonitor(names, alpha=0.1, tuned_for=2000)
    rng = np.random.default_rng(2)
    for _ in range(20):
        bstate = bonf.update((rng.random((100, 4)) < [0.75, 0.7, 0.7, 0.6]).astype(int))
    assert len(state.decided) >= len(bstate.decided)


def test_a_model_that_joins_late_is_provisional_and_its_pairs_start_then() -> None:
    rng = np.random.default_rng(3)
    board = lp.LeaderboardMonitor(["a", "b"], correction="e-bh", min_items=200)
    board.update((rng.random((500, 2)) < [0.7, 0.6]).astype(int))
    board.add_model("new")
    state = board.update((rng.random((150, 3)) < [0.7, 0.6, 0.9]).astype(int))
    assert state.provisional == ["new"]
    assert state.n_items[state.models.index("new")] == 150 and state.n == 650
    assert state.pairs[("a", "new")].n == 150 and state.pairs[("a", "b")].n == 650
    state = board.update((rng.random((100, 3)) < [0.7, 0.6, 0.9]).astype(int))
    assert state.provisional == []
    with pytest.raises(ValueError, match="already"):
        board.add_model("a")
    with pytest.raises(ValueError, match="shape"):
        board.update(np.zeros((5, 2)))
