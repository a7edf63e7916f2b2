"""A live leaderboard (``LeaderboardMonitor``): one array pass over the pairs against the loop over
per-pair monitors it replaced (issue 43).

Before issue 43 a ``LeaderboardMonitor`` kept one ``SequentialMonitor`` per pair of models and
updated and read them in a Python loop at every look: M(M-1)/2 objects, each with its own numpy
calls and its own result. ``OldMonitor`` below is that loop, reconstructed from d520675 on the
public ``SequentialMonitor`` (which issue 43 did not change). The new monitor keeps the pairs'
state as arrays and gives the same numbers (``tests/test_sequential_leaderboard.py`` holds it to
the loop exactly; here each case also checks the two final states equal).

Cases, CPU seconds (``time.process_time``) of 0/1 scores, each method x correction:

- 50 models (1,225 pairs), one item per look: CPU per look of the old loop and of the new pass over
  the same looks -- the first 100 looks, and 100 looks after 5,000 items (the betting sequences have
  narrowed by then, and the new pass moves only the candidates still inside them) -- and of the new
  pass alone over 10,000 looks, its total.
- 400 models (79,800 pairs; ``LLM_POWER_MAX_MONITOR_PAIRS`` and ``LLM_POWER_MAX_MONITOR_MB`` raised):
  a new board, one update of 10 items and one single-item look: CPU of each, and the peak of
  traced memory (``tracemalloc``, a separate run) from creating the board to the end.

Run: ``.venv/bin/python benchmarks/monitor.py`` (about 40 minutes on the 2-core machine, most of it
the old loop); ``--quick`` leaves out the 400-model betting boards of the old loop and shortens the
10,000 looks to 2,000.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

os.environ.setdefault("LLM_POWER_MAX_MONITOR_PAIRS", "100000")
os.environ.setdefault("LLM_POWER_MAX_MONITOR_MB", "16384")

import numpy as np  # noqa: E402
from _common import md_table  # noqa: E402

import llm_power as lp  # noqa: E402
from llm_power.multiplicity import e_bh  # noqa: E402
from llm_power.sequential import SequentialMonitor  # noqa: E402


def _agree(cs: Any, hit: bool, ahead: bool, *, exact: bool) -> Any:
    out = cs.low > 0 or cs.high < 0
    tiny = math.nextafter(0.0, math.inf)
    if hit and not out and exact:
        return (lp.ConfidenceInterval(tiny, max(cs.high, tiny)) if ahead
                else lp.ConfidenceInterval(min(cs.low, -tiny), -tiny))
    if not hit and out:
        return lp.ConfidenceInterval(min(cs.low, 0.0), max(cs.high, 0.0))
    return cs


class OldMonitor:
    """d520675's LeaderboardMonitor: one SequentialMonitor per pair, a Python loop at every look."""

    def __init__(self, models: list[str], *, alpha: float = 0.05, correction: str | None = "bonferroni",
                 min_items: int = 100, **kwargs: Any) -> None:
        self.models, self.alpha, self.correction, self.min_items, self.kwargs = list(models), alpha, correction, \
            min_items, kwargs
        k = len(self.models)
        self.pair_index = [(i, j) for i in range(k) for j in range(i + 1, k)]
        self.alpha_per_pair = alpha / len(self.pair_index) if correction == "bonferroni" else alpha
        self.monitors = {pair: self._monitor() for pair in self.pair_index}
        self.sums, self.counts, self.n = np.zeros(k), np.zeros(k, dtype=np.int64), 0

    def _monitor(self) -> SequentialMonitor:
        mon = SequentialMonitor(alpha=self.alpha_per_pair, **self.kwargs)
        mon._track_all = self.correction == "e-bh"  # noqa: SLF001
        return mon

    def update(self, x: np.ndarray) -> Any:
        for (i, j), mon in self.monitors.items():
            mon.update(x[:, i], x[:, j])
        self.sums += x.sum(axis=0)
        self.counts += x.shape[0]
        self.n = int(self.counts[0])
        return self.state()

    def state(self) -> Any:
        means = self.sums / np.maximum(self.counts, 1)
        order = np.argsort(-means, kind="stable")
        pairs, decided = {}, []
        states = {pair: mon.state() for pair, mon in self.monitors.items()}
        if self.correction == "e-bh":
            keys = list(states)
            found = e_bh([states[p].e_value for p in keys], q=self.alpha)
            chosen = {p for p, f in zip(keys, found, strict=True) if f}
            level = self.alpha * max(len(chosen), 1) / max(len(keys), 1)
        for (i, j), st in states.items():
            if self.correction == "e-bh":
                mon = self.monitors[i, j]
                cs, hit, ahead = mon.interval_at(level), (i, j) in chosen, mon.leans_a()
                cs = _agree(cs, hit, ahead, exact=mon.method == "betting")
                st = dataclasses.replace(st, verdict=("A better" if ahead else "B better") if hit else "undecided",
                                         decided_at=None, confidence_sequence=cs)
                if hit:
                    a, b = (i, j) if ahead else (j, i)
                    decided.append((self.models[a], self.models[b]))
            pairs[(self.models[i], self.models[j])] = st
            if self.correction != "e-bh" and st.verdict != "undecided":
                a, b = (i, j) if st.verdict == "A better" else (j, i)
                decided.append((self.models[a], self.models[b]))
        return lp.LeaderboardMonitorResult(
            n=self.n, models=[self.models[k] for k in order], means=[float(means[k]) for k in order], pairs=pairs,
            decided=decided, alpha_per_pair=self.alpha_per_pair, correction=self.correction,
            n_items=[int(self.counts[k]) for k in order],
            provisional=[self.models[k] for k in order if self.counts[k] < self.min_items])


CONFIGS = [("betting", "bonferroni"), ("betting", "e-bh"), ("mixture", "bonferroni"), ("mixture", "e-bh")]


def _scores(m: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((n, m)) < rng.uniform(0.55, 0.8, m)).astype(float)


def _looks(board: Any, x: np.ndarray) -> tuple[float, Any]:
    """CPU seconds of one update per row of ``x``, and the last state."""
    state = None
    start = time.process_time()
    for row in range(x.shape[0]):
        state = board.update(x[row:row + 1])
    return time.process_time() - start, state


def _same(a: Any, b: Any) -> None:
    assert a.to_dict() == b.to_dict(), "the old loop and the new pass disagree"


def fifty(method: str, correction: str, long_looks: int) -> list[Any]:
    names = [f"m{k}" for k in range(50)]
    x = _scores(50, 5_000 + 200 + long_looks, 50)
    opts = {"method": method, "correction": correction}
    old, new = OldMonitor(names, **opts), lp.LeaderboardMonitor(names, **opts)
    old_a, s_old = _looks(old, x[:100])
    new_a, s_new = _looks(new, x[:100])
    _same(s_old, s_new)
    start = time.process_time()
    old.update(x[100:5_100])
    old_batch = time.process_time() - start
    start = time.process_time()
    new.update(x[100:5_100])
    new_batch = time.process_time() - start
    old_b, s_old = _looks(old, x[5_100:5_200])
    new_b, s_new = _looks(new, x[5_100:5_200])
    _same(s_old, s_new)
    del old
    gc.collect()
    fresh = lp.LeaderboardMonitor(names, **opts)
    whole, _ = _looks(fresh, x[:long_looks])
    return [f"{method}, {correction}", f"{1e3 * old_a / 100:.1f}", f"{1e3 * new_a / 100:.2f}",
            f"{old_a / new_a:.0f}x", f"{old_batch:.1f}", f"{new_batch:.2f}", f"{1e3 * old_b / 100:.1f}",
            f"{1e3 * new_b / 100:.2f}", f"{old_b / new_b:.0f}x", f"{whole:.1f}", f"{1e3 * whole / long_looks:.2f}"]


def _four_hundred(make: Callable[[], Any], x: np.ndarray) -> tuple[float, float, Any]:
    start = time.process_time()
    board = make()
    board.update(x[:10])
    first = time.process_time() - start
    start = time.process_time()
    state = board.update(x[10:11])
    return first, time.process_time() - start, state


def _peak(make: Callable[[], Any], x: np.ndarray) -> float:
    gc.collect()
    tracemalloc.start()
    board = make()
    board.update(x[:10])
    board.update(x[10:11])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del board
    gc.collect()
    return peak / 2**20


def four_hundred(method: str, correction: str, *, old_too: bool) -> list[Any]:
    names = [f"m{k}" for k in range(400)]
    x = _scores(400, 11, 400)
    opts = {"method": method, "correction": correction}
    row = [f"{method}, {correction}"]
    new_first, new_look, s_new = _four_hundred(lambda: lp.LeaderboardMonitor(names, **opts), x)
    new_peak = _peak(lambda: lp.LeaderboardMonitor(names, **opts), x)
    if old_too:
        old_first, old_look, s_old = _four_hundred(lambda: OldMonitor(names, **opts), x)
        _same(s_old, s_new)
        del s_old
        old_peak = _peak(lambda: OldMonitor(names, **opts), x)
        row += [f"{old_first:.1f}", f"{old_look:.1f}", f"{old_peak:,.0f}"]
    else:
        row += ["—", "—", "—"]
    return [*row, f"{new_first:.2f}", f"{new_look:.3f}", f"{new_peak:,.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = [fifty(method, correction, 2_000 if args.quick else 10_000) for method, correction in CONFIGS]
    print("50 models (1,225 pairs), one 0/1 item per look; CPU on the 2-core machine\n")
    print(md_table(["method, correction", "old ms/look (looks 1-100)", "new ms/look", "speed-up",
                    "old: 5,000 items at once (s)", "new (s)", "old ms/look (after 5,000)", "new ms/look",
                    "speed-up", "new: 10,000 looks (CPU-s)" if not args.quick else "new: 2,000 looks (CPU-s)",
                    "new ms/look (all)"], rows))
    rows = [four_hundred(method, correction, old_too=not (args.quick and method == "betting"))
            for method, correction in CONFIGS]
    print("\n400 models (79,800 pairs): a new board, one update of 10 items, then one look of 1 item\n")
    print(md_table(["method, correction", "old: create + 10 items (CPU-s)", "old: next look (CPU-s)",
                    "old peak traced MB", "new: create + 10 items (CPU-s)", "new: next look (CPU-s)",
                    "new peak traced MB"], rows))


if __name__ == "__main__":
    main()
