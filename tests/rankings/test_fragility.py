"""Fragility: the fewest items whose removal ties or reverses a gap or #1, against brute force over
every subset of small benchmarks, 0/1 and graded."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import llm_power as lp


def _brute_pair(d: np.ndarray) -> float:
    """The smallest k such that some k items, removed, leave a mean difference <= 0 (n - k >= 1)."""
    n = d.size
    if d.sum() <= 1e-12:
        return 0.0
    for k in range(1, n):
        for drop in itertools.combinations(range(n), k):
            keep = np.setdiff1d(np.arange(n), drop)
            if d[keep].sum() <= 1e-12:
                return float(k)
    return math.inf


def _brute_top(x: np.ndarray) -> float:
    """The smallest k such that removing some k items leaves the (ranked) top model not strictly ahead."""
    n = x.shape[0]
    for k in range(n):
        for drop in itertools.combinations(range(n), k):
            keep = np.setdiff1d(np.arange(n), drop)
            means = x[keep].mean(axis=0)
            if means[1:].max() >= means[0] - 1e-12:
                return float(k)
    return math.inf


@pytest.mark.parametrize("graded", [False, True])
def test_counts_equal_brute_force(graded: bool) -> None:
    """Random small benchmarks (3 to 9 items, 3 models): every pair's count and #1's equal brute force over
    every subset; the models are ranked by mean (stable), the pairs are the three (A above B), the
    challenger is the model whose pair with #1 needs the fewest removals; and every kind of answer the
    counts can give (0: tied or reversed already, a finite k, no removal can) is among those checked."""
    rng = np.random.default_rng(11 if graded else 12)
    kinds = {"zero": 0, "finite": 0, "inf": 0}
    checked = 0
    for case in range(60):
        n = int(rng.integers(3, 10))
        x = (rng.integers(0, 4, (n, 3)) / 3.0) if graded else (rng.random((n, 3)) < [0.8, 0.5, 0.3]).astype(float)
        if np.ptp(x.mean(axis=0)) == 0 and case % 2:
            continue
        res = lp.fragility(x, models=["a", "b", "c"], pairs="all")
        ranked = np.argsort(-x.mean(axis=0), kind="stable")
        assert res.models == [["a", "b", "c"][k] for k in ranked], case
        assert [(res.models.index(a), res.models.index(b)) for a, b in zip(res.model_a, res.model_b, strict=True)] \
            == [(0, 1), (0, 2), (1, 2)], case
        xs = x[:, ranked]
        for p, (a, b) in enumerate(zip(res.model_a, res.model_b, strict=True)):
            ia, ib = res.models.index(a), res.models.index(b)
            want = _brute_pair(xs[:, ia] - xs[:, ib])
            assert res.items_to_flip[p] == want, (case, a, b)
            kinds["zero" if want == 0 else "inf" if math.isinf(want) else "finite"] += 1
            checked += 1
        assert res.items_to_flip_top == _brute_top(xs), case
        k = res.models.index(res.challenger)
        assert k > 0 and res.items_to_flip_top == _brute_pair(xs[:, 0] - xs[:, k]), case
        assert res.share_top == res.items_to_flip_top / n
        assert np.array_equal(res.share, res.items_to_flip / n)
    assert checked >= 150
    assert min(kinds.values()) >= 1, kinds  # each branch of the count met brute force at least once


def test_no_removal_can_flip_a_pair_that_wins_every_item() -> None:
    x = np.array([[1, 0], [1, 0], [1, 0]])
    res = lp.fragility(x)
    assert res.items_to_flip.tolist() == [math.inf] and res.items_to_flip_top == math.inf
    assert not res.fragile[0]


def test_binary_counts_are_b_minus_c_and_the_label_uses_the_share() -> None:
    rng = np.random.default_rng(3)
    x = (rng.random((20000, 3)) < [0.701, 0.70, 0.6]).astype(int)
    res = lp.fragility(x, fragile_share=0.002)
    xs = x[:, np.argsort(-x.mean(axis=0), kind="stable")]
    b = int(np.sum((xs[:, 0] == 1) & (xs[:, 1] == 0)))
    c = int(np.sum((xs[:, 0] == 0) & (xs[:, 1] == 1)))
    assert res.items_to_flip[0] == b - c
    assert res.fragile.tolist() == (res.items_to_flip / 20000 <= 0.002).tolist()
    assert res.fragile_top == (res.items_to_flip_top / 20000 <= 0.002)


def test_diagnose_reports_the_same_counts() -> None:
    """The report's fragility (rank_report of a diagnosis) is fragility() of the scores and of the diagnosis."""
    rng = np.random.default_rng(5)
    x = rng.normal([0.5, 0.49, 0.45, 0.3], 1.0, (400, 4))
    diag = lp.diagnose(x, rng=0)
    res = lp.fragility(x)
    fr = lp.rank_report(diag, rng=0).fragility
    assert np.array_equal(fr.items_to_flip, res.items_to_flip)
    assert fr.items_to_flip_top == res.items_to_flip_top and fr.challenger == res.challenger
    assert np.array_equal(lp.fragility(diag).items_to_flip, res.items_to_flip)
    with pytest.raises(TypeError, match="carries its own"):
        lp.fragility(diag, pairs="all")
