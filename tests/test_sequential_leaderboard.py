"""The leaderboard monitor's array pass over the pairs against the per-pair monitors it replaced
(issue 43): ``_ReferenceMonitor`` below is the ``LeaderboardMonitor`` of d520675 -- one public
:class:`~llm_power.SequentialMonitor` per pair, updated and read in a Python loop -- and every
result field of the new one (ranking, decided pairs, each pair's n, gap, e-value, verdict, decision
time, confidence sequence and discordant counts, provisional models, item counts) must equal it
exactly, not approximately: on random streams of 0/1, graded and mixed scores, with ties, batches
of 0 to 300 items (past the betting blocks of 128), models added mid-stream, every method and every
correction.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

import llm_power as lp
from llm_power.sequential import MONITOR_CORRECTIONS, MONITOR_METHODS, SequentialMonitor


def _agree(cs, hit, ahead, *, exact):  # d520675's, verbatim
    out = cs.low > 0 or cs.high < 0
    if hit and not out and exact:
        return (lp.ConfidenceInterval(math.nextafter(0.0, math.inf), max(cs.high, math.nextafter(0.0, math.inf)))
                if ahead else lp.ConfidenceInterval(min(cs.low, -math.nextafter(0.0, math.inf)),
                                                    -math.nextafter(0.0, math.inf)))
    if not hit and out:
        return lp.ConfidenceInterval(min(cs.low, 0.0), max(cs.high, 0.0))
    return cs


class _ReferenceMonitor:
    """d520675's LeaderboardMonitor (its checks of the arguments left out): a SequentialMonitor per pair."""

    def __init__(self, models, *, alpha=0.05, correction="bonferroni", min_items=100, **kwargs):
        self.models = [str(m) for m in models]
        self.alpha, self.correction, self.min_items, self.kwargs = alpha, correction, min_items, kwargs
        k = len(self.models)
        self.pair_index = [(i, j) for i in range(k) for j in range(i + 1, k)]
        self.alpha_per_pair = self.alpha / len(self.pair_index) if correction == "bonferroni" else self.alpha
        self.monitors = {pair: self._monitor() for pair in self.pair_index}
        self.sums = np.zeros(k)
        self.counts = np.zeros(k, dtype=np.int64)
        self.n = 0

    def _monitor(self):
        mon = SequentialMonitor(alpha=self.alpha_per_pair, **self.kwargs)
        mon._track_all = self.correction == "e-bh"
        return mon

    def add_model(self, name):
        k = len(self.models)
        self.models.append(str(name))
        for i in range(k):
            self.pair_index.append((i, k))
            self.monitors[i, k] = self._monitor()
        self.sums = np.append(self.sums, 0.0)
        self.counts = np.append(self.counts, 0)

    def update(self, scores):
        x = np.asarray(scores, dtype=float)
        for (i, j), mon in self.monitors.items():
            mon.update(x[:, i], x[:, j])
        self.sums += x.sum(axis=0)
        self.counts += x.shape[0]
        self.n = int(self.counts[0])
        return self.state()

    def state(self):
        from llm_power.multiplicity import e_bh

        means = self.sums / np.maximum(self.counts, 1)
        order = np.argsort(-means, kind="stable")
        pairs, decided = {}, []
        states = {pair: mon.state() for pair, mon in self.monitors.items()}
        if self.correction == "e-bh":
            keys = list(states)
            found = e_bh([states[p].e_value for p in keys], q=self.alpha) if keys else np.zeros(0, dtype=bool)
            chosen = {p for p, f in zip(keys, found, strict=True) if f}
            level = self.alpha * max(len(chosen), 1) / max(len(keys), 1)
        for (i, j), st in states.items():
            if self.correction == "e-bh":
                mon = self.monitors[i, j]
                cs, hit, ahead = mon.interval_at(level), (i, j) in chosen, mon.leans_a()
                cs = _agree(cs, hit, ahead, exact=mon.method == "betting")
                st = dataclasses.replace(st, verdict=("A better" if ahead else "B better") if hit
                                         else "undecided", decided_at=None, confidence_sequence=cs)
                if hit:
                    a, b = (i, j) if ahead else (j, i)
                    decided.append((self.models[a], self.models[b]))
            pairs[(self.models[i], self.models[j])] = st
            if self.correction == "e-bh":
                continue
            if st.verdict == "A better":
                decided.append((self.models[i], self.models[j]))
            elif st.verdict == "B better":
                decided.append((self.models[j], self.models[i]))
        ranked = [self.models[k] for k in order]
        return lp.LeaderboardMonitorResult(
            n=self.n, models=ranked, means=[float(means[k]) for k in order], pairs=pairs, decided=decided,
            alpha_per_pair=self.alpha_per_pair, correction=self.correction,
            n_items=[int(self.counts[k]) for k in order],
            provisional=[self.models[k] for k in order if self.counts[k] < self.min_items])


def _identical(x: Any, y: Any, where: str = "") -> None:
    """Equal to the bit (a float's sign of zero included; NaN equals NaN) and of the same type."""
    if dataclasses.is_dataclass(x):
        assert type(x) is type(y), where
        for f in dataclasses.fields(x):
            _identical(getattr(x, f.name), getattr(y, f.name), f"{where}.{f.name}")
        return
    if hasattr(x, "keys") and hasattr(x, "items"):
        assert list(x.keys()) == list(y.keys()), where
        for (k, a), b in zip(x.items(), y.values(), strict=True):
            _identical(a, b, f"{where}[{k}]")
        return
    if isinstance(x, (list, tuple)):
        assert type(x) is type(y) and len(x) == len(y), (where, x, y)
        for k, (a, b) in enumerate(zip(x, y, strict=True)):
            _identical(a, b, f"{where}[{k}]")
        return
    assert type(x) is type(y), (where, x, y)
    if isinstance(x, float):
        assert (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y)), \
            (where, x, y)
    else:
        assert x == y, (where, x, y)


def _scores(rng: np.random.Generator, kind: str, n: int, means: np.ndarray, score_range) -> np.ndarray:
    m = means.size
    lo, hi = score_range
    if kind == "binary":
        x = (rng.random((n, m)) < means).astype(float)
    elif kind == "graded":  # rounded: ties between models and zero differences
        x = lo + (hi - lo) * np.clip(np.round(rng.beta(2, 2, (n, m)) * 0.5 + means * 0.5, 2), 0, 1)
    else:  # "mixed": the first column graded, the others 0/1 (pairs with it are graded, the rest 0/1)
        x = (rng.random((n, m)) < means).astype(float)
        x[:, 0] = np.round(rng.random(n) * 0.6 + 0.3, 3)
    if m > 2 and rng.random() < 0.5:
        x[:, m - 1] = x[:, m - 2]  # two models with the same scores: a pair of ties, e-values tied with others
    return x


CASES = [(method, correction, kind) for method in MONITOR_METHODS for correction in (*MONITOR_CORRECTIONS, None)
         for kind in ("binary", "graded", "mixed")]


@pytest.mark.parametrize(("method", "correction", "kind"), CASES)
def test_the_array_pass_equals_a_monitor_per_pair(method, correction, kind) -> None:
    rng = np.random.default_rng(abs(hash((method, str(correction), kind))) % 2**32)
    score_range = (0.0, 1.0) if kind != "graded" else (-1.0, 2.0)
    for rep in range(3):
        m = int(rng.integers(3, 6))
        opts = {"method": method, "tuned_for": int(rng.choice([50, 300, 1000])),
                "expected_discordance": float(rng.choice([0.1, 0.25, 0.5])), "score_range": score_range}
        if kind != "mixed" and rng.random() < 0.3:
            opts["binary"] = kind == "binary"
        alpha, min_items = float(rng.choice([0.05, 0.3, 0.6])), int(rng.choice([0, 30, 200]))
        names = [f"m{k}" for k in range(m)]
        new = lp.LeaderboardMonitor(names, alpha=alpha, correction=correction, min_items=min_items, **opts)
        ref = _ReferenceMonitor(names, alpha=alpha, correction=correction, min_items=min_items, **opts)
        means = rng.uniform(0.3, 0.9, m)
        _identical(new.state(), ref.state(), f"rep {rep} before any item")
        fresh = True  # a pair is 0/1 or graded by its first batch: an empty one would make it 0/1
        for look in range(12):
            if look in (4, 8) and rng.random() < 0.7:  # a model joins mid-stream; read before its first items
                name = f"late{look}"
                new.add_model(name)
                ref.add_model(name)
                means = np.r_[means, rng.uniform(0.3, 0.95)]
                _identical(new.state(), ref.state(), f"rep {rep} after add_model")
                fresh = True
            n = int(rng.choice([0, 1, 2, 7, 60, 129, 300]))
            if fresh and kind != "binary":
                n, fresh = max(n, 2), False
            x = _scores(rng, kind, n, means, score_range)
            _identical(new.update(x), ref.update(x), f"rep {rep} look {look}")


@pytest.mark.parametrize(("method", "correction"), [("betting", "bonferroni"), ("betting", "e-bh"),
                                                    ("mixture", "bonferroni")])
def test_the_pieces_the_work_is_cut_into_change_nothing(monkeypatch, method, correction) -> None:
    """The temporaries are formed in pieces (of pairs, of packed candidates); pieces a hundred times
    smaller than the defaults, cutting every board into many, give the same results."""
    from llm_power import sequential
    from llm_power._kernel import betting_pairs

    monkeypatch.setattr(betting_pairs, "_ELEMENTS", 3000)
    monkeypatch.setattr(betting_pairs, "_PIECE", 3000)
    monkeypatch.setattr(sequential, "_BLOCK", 40)
    rng = np.random.default_rng(7)
    names = [f"m{k}" for k in range(7)]
    new = lp.LeaderboardMonitor(names, correction=correction, method=method, tuned_for=200, alpha=0.3)
    ref = _ReferenceMonitor(names, correction=correction, method=method, tuned_for=200, alpha=0.3)
    means = rng.uniform(0.3, 0.9, 7)
    for look in range(10):
        if look == 5:
            new.add_model("late")
            ref.add_model("late")
            means = np.r_[means, 0.95]
        x = _scores(rng, "binary", int(rng.choice([1, 3, 200])), means, (0.0, 1.0))
        _identical(new.update(x), ref.update(x), f"look {look}")


def test_a_large_first_batch_of_many_pairs_reads_the_mixture_from_a_table() -> None:
    """A first batch of 100 items over 435 pairs: the Beta-mixture log e-values come from a table of
    the counts that occur (a few thousand, not 43,500 values), and equal the per-pair ones."""
    from llm_power.sequential import _beta_mixture_table

    rng = np.random.default_rng(8)
    names = [f"m{k}" for k in range(30)]
    new = lp.LeaderboardMonitor(names, method="mixture", tuned_for=300, alpha=0.5)
    ref = _ReferenceMonitor(names, method="mixture", tuned_for=300, alpha=0.5)
    means = rng.uniform(0.2, 0.95, 30)
    for n in (100, 1, 40, 1):
        x = (rng.random((n, 30)) < means).astype(float)
        _identical(new.update(x), ref.update(x), f"batch of {n}")
    b, c = rng.integers(0, 40, (100, 500)), rng.integers(0, 40, (100, 500))
    direct = np.where(b + c > 0, lp.sequential.beta_mixture_log_evalue(b, c, a=3.0), 0.0)
    assert np.array_equal(_beta_mixture_table(b, c, 3.0), direct)


def test_a_refused_batch_gives_the_per_pair_error_and_changes_nothing() -> None:
    cases = [  # (options, batches: the last one refused)
        ({}, [np.ones((3, 4)), np.c_[np.ones(2), np.full(2, 0.5), np.ones((2, 2))]]),
        ({}, [np.ones((3, 4)), np.c_[np.ones(2), np.ones(2), np.full(2, np.nan), np.ones(2)]]),
        ({"binary": False, "score_range": (0, 2)}, [np.ones((3, 4)), np.c_[np.ones((2, 3)), np.full(2, 2.5)]]),
        ({}, [np.c_[np.full(3, 0.5), np.ones((3, 3))], np.c_[np.full(2, 0.5), np.zeros((2, 3))],
              np.c_[np.full(2, 1.5), np.ones((2, 3))]]),
    ]
    for opts, batches in cases:
        new = lp.LeaderboardMonitor(list("abcd"), **opts)
        ref = _ReferenceMonitor(list("abcd"), **opts)
        for x in batches[:-1]:
            _identical(new.update(x), ref.update(x))
        before = new.state()
        with pytest.raises(ValueError) as ours:
            new.update(batches[-1])
        with pytest.raises(ValueError) as theirs:
            ref.update(batches[-1])
        assert str(ours.value) == str(theirs.value)
        _identical(new.state(), before)  # the old loop had updated the pairs before the one refused


def test_the_pairs_mapping_is_the_dict_of_its_items_and_a_look_stays_as_it_was() -> None:
    import pickle

    rng = np.random.default_rng(9)
    board = lp.LeaderboardMonitor(["a", "b", "c"], tuned_for=500)
    state = board.update((rng.random((300, 3)) < [0.9, 0.6, 0.6]).astype(float))
    pairs = state.pairs
    plain = dict(pairs.items())
    assert pairs == plain and plain == pairs and repr(pairs) == repr(plain) and len(pairs) == 3
    assert list(pairs) == [("a", "b"), ("a", "c"), ("b", "c")] and ("b", "a") not in pairs and [] not in pairs
    with pytest.raises(KeyError):
        pairs["b", "a"]
    assert pickle.loads(pickle.dumps(state)) == state
    kept = state.to_dict()
    board.add_model("d")
    later = board.update((rng.random((300, 4)) < [0.9, 0.6, 0.6, 0.1]).astype(float))
    assert state.to_dict() == kept and len(state.pairs) == 3 and ("a", "d") not in state.pairs
    assert len(later.pairs) == 6 and later.pairs["a", "d"].n == 300 and later.pairs["a", "b"].n == 600


def test_the_pairs_state_is_sized_before_it_is_allocated(monkeypatch) -> None:
    """The betting state grows with the pairs (2,001 candidates each, 501 with e-BH): more than
    LLM_POWER_MAX_MONITOR_MB is refused at creation and at add_model, naming the variable."""
    import tracemalloc

    monkeypatch.setenv("LLM_POWER_MAX_MONITOR_MB", "10")
    names = [f"m{k}" for k in range(30)]  # 435 pairs: 16 MB with betting, 1 MB with e-BH or the mixture
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"435 pairs .*: 16 is more than the limit of 10 "
                                         r"\(LLM_POWER_MAX_MONITOR_MB raises it\)"):
        lp.LeaderboardMonitor(names)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2**20
    lp.LeaderboardMonitor(names, correction="e-bh")
    lp.LeaderboardMonitor(names, method="mixture")
    board = lp.LeaderboardMonitor(names[:24])  # 276 pairs: 10 MB
    with pytest.raises(ValueError, match=r"300 pairs .*: 11 is more than the limit of 10 \(LLM_POWER_MAX_MONITOR_MB"):
        board.add_model("one more")
    with pytest.raises(ValueError, match="LLM_POWER_MAX_MONITOR_MB"):
        board.add_model("one more")
    assert len(board.models) == 24 and len(board.pair_index) == 276 and "one more" not in board.models
    assert board.update(np.ones((2, 24))).n == 2
    monkeypatch.setenv("LLM_POWER_MAX_MONITOR_PAIRS", "280")
    with pytest.raises(ValueError, match=r"300 is more than the limit of 280 \(LLM_POWER_MAX_MONITOR_PAIRS"):
        board.add_model("one more")
    with pytest.raises(ValueError, match=r"300 is more than the limit of 280 \(LLM_POWER_MAX_MONITOR_PAIRS"):
        lp.LeaderboardMonitor(names[:25], method="mixture")


def test_an_e_value_below_the_smallest_double_is_zero_not_an_error() -> None:
    """Two equally good models disagreeing item after item: both capitals at 0 fall (a test
    martingale drifts down under its null) below e^-745 within 30,000 items (log e falls by about 0.065
    per two items: e^-280 at 20,000, 0.0 from about 23,000), where exp gives 0.0; the per-pair monitor
    then took log(0) and raised "math domain error" at every look."""
    a = np.tile([1.0, 0.0], 15_000)
    mon = lp.SequentialMonitor(tuned_for=100)
    state = mon.update(a, 1 - a)
    assert state.e_value == 0.0 and state.verdict == "undecided"
    for correction in (*MONITOR_CORRECTIONS, None):
        board = lp.LeaderboardMonitor(["a", "b", "c"], tuned_for=100, correction=correction)
        ref = _ReferenceMonitor(["a", "b", "c"], tuned_for=100, correction=correction)
        x = np.c_[a, 1 - a, a]
        _identical(board.update(x), ref.update(x))
        assert board.state().pairs["a", "b"].e_value == 0.0
