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


# ---- the counts without a diagnosis (issue 43): exactly the old path's numbers ---------------------------------


def _old_fragility(x: np.ndarray, models: list[str], pairs: str) -> dict:
    """The implementation before issue 43, as a reference: diagnose the scores (its ranking and pairs), then
    count each shown pair from the ranked matrix (graded) or its discordant counts b - c (0/1), and #1's pairs
    from the diagnosis of every pair (0/1) or the ranked matrix (graded)."""
    import warnings

    from llm_power._kernel.ranks import binary_items_to_flip, items_to_flip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant models: diagnose warns of their zero variance
        diag = lp.diagnose(x, models=models, pairs=pairs, cluster_resamples=0, rng=0, max_pairs=10**6)
        every = diag.all_pairs().columns if diag.settings["binary"] else None
    cols, n, m = diag.columns, diag.n, len(diag.models)
    i, j = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    ranked = np.asarray(x, dtype=float)[:, np.asarray(diag.order)]
    if every is not None:
        flips = binary_items_to_flip(cols["b"], cols["c"], n)
        first = np.asarray(every["rank_a"]) == 1  # (1, k), k = 2..M, in that order
        top = binary_items_to_flip(np.asarray(every["b"])[first], np.asarray(every["c"])[first], n)
    else:
        flips = items_to_flip(ranked[:, i] - ranked[:, j])
        top = items_to_flip(ranked[:, [0] * (m - 1)] - ranked[:, 1:])
    k = int(np.argmin(top))
    return {"models": list(diag.models), "model_a": list(cols["model_a"]), "model_b": list(cols["model_b"]),
            "delta": np.asarray(cols["delta"], dtype=float), "flips": flips, "top": float(top[k]),
            "challenger": diag.models[k + 1], "diag": diag}


def _matrices() -> list[np.ndarray]:
    """0/1 and graded matrices with ties (equal means, copied columns), constant models (all right, all
    wrong, a constant grade), 2 to 12 models, 2 to 900 items."""
    rng = np.random.default_rng(43)
    out = []
    for case in range(24):
        n, m = int(rng.choice([2, 3, 7, 40, 900])), int(rng.integers(2, 13))
        graded = case % 2 == 1
        p = rng.uniform(0.2, 0.9, m)
        x = (rng.integers(0, 5, (n, m)) / 4.0 + p / 3.0) if graded else (rng.random((n, m)) < p).astype(float)
        if m > 3 and case % 3 == 0:
            x[:, 2] = x[:, 0]  # a copy: tied with the model it copies
            x[:, 3] = 1.0 if not graded else 0.7  # a constant model
        if m > 4 and case % 4 == 1:
            x[:, 4] = x[::-1, 1]  # the same mean, other items
            x[:, m - 1] = 0.0
        out.append(x)
    tied = np.zeros((50, 5))
    tied[:25] = 1.0  # five models, every one tied with every other
    out.append(tied)
    return out


@pytest.mark.parametrize("pairs", ["adjacent", "all"])
def test_counts_without_a_diagnosis_equal_the_old_path_exactly(pairs: str) -> None:
    """fragility(scores) ranks, pairs and counts without diagnose, and gives the old path's numbers bit for bit:
    the models and their order (ties in column order), the pairs, the gaps (diagnose's delta), every count
    (0, finite, inf), #1's count and its challenger (the first of the fewest); fragility(diagnosis) too."""
    seen = {"binary": 0, "graded": 0, "ties": 0, "inf": 0}
    for case, x in enumerate(_matrices()):
        names = [f"m{k}" for k in range(x.shape[1])]
        old = _old_fragility(x, names, pairs)
        for res in (lp.fragility(x, models=names, pairs=pairs), lp.fragility(old["diag"])):
            assert res.models == old["models"], case
            assert (res.model_a, res.model_b) == (old["model_a"], old["model_b"]), case
            assert np.array_equal(res.delta, old["delta"]), case
            assert np.array_equal(res.items_to_flip, old["flips"]), case
            assert (res.items_to_flip_top, res.challenger) == (old["top"], old["challenger"]), case
        seen["binary" if old["diag"].settings["binary"] else "graded"] += 1
        seen["ties"] += int(np.any(old["delta"] == 0))
        seen["inf"] += int(np.isinf(old["flips"]).any())
    assert min(seen.values()) >= 2, seen


def test_neither_diagnose_nor_every_pair_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scores are counted without diagnose, and a Diagnosis of 0/1 scores without its all-pairs diagnosis (#1's
    pairs are differences of correct answers); the counts are those of the old path."""
    from llm_power.resolution import Diagnosis, _diagnose

    rng = np.random.default_rng(8)
    x = (rng.random((3000, 9)) < np.linspace(0.5, 0.7, 9)).astype(int)
    old = _old_fragility(x, [f"m{k}" for k in range(9)], "adjacent")
    diag = lp.diagnose(x, models=[f"m{k}" for k in range(9)], cluster=np.arange(3000) % 40)

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("not needed")

    monkeypatch.setattr(Diagnosis, "all_pairs", refuse)
    monkeypatch.setattr(_diagnose, "diagnose_source", refuse)
    for res in (lp.fragility(diag), lp.fragility(x, models=[f"m{k}" for k in range(9)])):
        assert np.array_equal(res.items_to_flip, old["flips"])
        assert (res.items_to_flip_top, res.challenger) == (old["top"], old["challenger"])


def test_graded_blocks_of_pairs_give_the_same_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graded differences are formed a block of pairs at a time: blocks of 2 pairs give the counts and gaps of
    one block, and #1's pairs are read from the pairs when every pair is shown."""
    from llm_power.rankings import _section

    rng = np.random.default_rng(9)
    x = rng.integers(0, 11, (60, 7)) / 10.0
    whole = [lp.fragility(x, pairs=p) for p in ("adjacent", "all")]
    monkeypatch.setattr(_section, "_FLIP_BLOCK", 2 * 60)
    for one, res in zip(whole, [lp.fragility(x, pairs=p) for p in ("adjacent", "all")], strict=True):
        assert np.array_equal(res.items_to_flip, one.items_to_flip)
        assert np.allclose(res.delta, one.delta, rtol=0, atol=1e-15)
        assert (res.items_to_flip_top, res.challenger) == (one.items_to_flip_top, one.challenger)


def test_max_pairs_is_fragilitys_own_option() -> None:
    """All pairs of many models are refused as diagnose refuses them, by an option fragility takes (no `top`,
    which it does not); raised, the pairs are counted; a Diagnosis carries its own."""
    x = (np.random.default_rng(4).random((200, 30)) < 0.6).astype(int)
    with pytest.raises(ValueError, match=r"435 pairs, more than max_pairs = 100 .*raise `max_pairs`") as err:
        lp.fragility(x, pairs="all", max_pairs=100)
    assert "`top`" not in str(err.value)
    assert lp.fragility(x, pairs="all", max_pairs=435).items_to_flip.size == 435
    assert lp.fragility(x, max_pairs=29).items_to_flip.size == 29
    with pytest.raises(ValueError, match="`max_pairs` must be a non-negative integer"):
        lp.fragility(x, max_pairs=-1)
    with pytest.raises(ValueError, match="`pairs` must be one of 'adjacent', 'all'"):
        lp.fragility(x, pairs="every")
    with pytest.raises(TypeError, match="`max_pairs` is given with a Diagnosis"):
        lp.fragility(lp.diagnose(x), max_pairs=10)
