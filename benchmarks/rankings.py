"""Rankings and live leaderboards (issue 28): llm-power against what users write by hand, side by
side in one process (interleaved, best of 3).

- **Rank intervals**, MMLU-Pro (26 models x 12,032 items): ``lp.rank_intervals`` (the max-t
  bootstrap over the paired differences, 1,000 resamples, simultaneous over the models; through
  ``diagnose``) against the naive percentile bootstrap of ranks: 1,000 resamples of the items, each
  model's rank in each, the 2.5/97.5 percentiles (marginal, not simultaneous: it undercovers the
  ranking as a whole, and it is what a notebook does).
- **Fragility of #1**, MMLU-Pro: ``lp.fragility`` (exact, all adjacent gaps and #1) against a
  user's greedy loop that drops, one item at a time, the item helping the leader most against the
  runner-up of the moment, and recomputes the means (stops when #1 changes).
- **Live leaderboard**, 10 models x 10,000 0/1 items arriving in 100 batches: ``LeaderboardMonitor``
  with e-BH (betting sequences, the default; and the mixtures) against re-running an exact McNemar
  test on every pair at every batch with BH (``scipy.stats.binomtest``; not valid under that
  peeking -- tests/test_sequential_ebh.py -- but what users run).

Run: ``python benchmarks/rankings.py [--load K]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, interleaved, loaded, md_table  # noqa: E402

B = 1000


def naive_rank_bootstrap(x: np.ndarray) -> np.ndarray:
    gen = np.random.default_rng(0)
    n, k = x.shape
    ranks = np.empty((B, k))
    for b in range(B):
        means = x[gen.integers(0, n, n)].mean(axis=0)
        ranks[b] = (-means).argsort().argsort() + 1
    return np.quantile(ranks, [0.025, 0.975], axis=0)


def naive_flip_top(x: np.ndarray) -> int:
    keep = np.ones(x.shape[0], dtype=bool)
    sums = x.sum(axis=0)
    top = int(np.argmax(sums))
    removed = 0
    while True:
        n = keep.sum()
        means = sums / n
        if int(np.argmax(means)) != top or n == 0:
            return removed
        second = int(np.argsort(-means)[1])
        gain = np.where(keep, x[:, top] - x[:, second], -np.inf)
        i = int(np.argmax(gain))
        keep[i] = False
        sums -= x[i]
        removed += 1


def naive_monitor(x: np.ndarray, q: float) -> list[tuple[int, int]]:
    from scipy import stats

    import llm_power as lp

    k = x.shape[1]
    i, j = np.triu_indices(k, 1)
    found: list[tuple[int, int]] = []
    for t in range(1, 101):
        part = x[: 100 * t]
        b = ((part[:, i] == 1) & (part[:, j] == 0)).sum(axis=0)
        c = ((part[:, i] == 0) & (part[:, j] == 1)).sum(axis=0)
        p = np.array([stats.binomtest(int(bb), int(bb + cc)).pvalue if bb + cc else 1.0 for bb, cc in zip(b, c, strict=True)])
        hit = lp.adjust_pvalues(p, method="bh") <= q
        found = [(int(a), int(bb)) for a, bb, h in zip(i, j, hit, strict=True) if h]
    return found


def monitor(x: np.ndarray, method: str) -> list[tuple[str, str]]:
    import llm_power as lp

    board = lp.LeaderboardMonitor([f"m{k}" for k in range(x.shape[1])], correction="e-bh", method=method,
                                  tuned_for=5000)
    for t in range(100):
        state = board.update(x[100 * t: 100 * (t + 1)])
    return list(state.decided)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=16)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import llm_power as lp
    from llm_power.io.demo import load_mmlu_pro

    d = load_mmlu_pro()
    x = np.asarray(d.scores, dtype=float)
    rng = np.random.default_rng(1)
    live = (rng.random((10_000, 10)) < np.linspace(0.62, 0.74, 10)).astype(float)
    groups = {
        "rank intervals, MMLU-Pro 26 x 12,032, 1,000 resamples": {
            "llm-power rank_intervals (simultaneous)": lambda: lp.rank_intervals(x, models=d.models,
                                                                                 n_resamples=B, rng=0),
            "naive percentile bootstrap of ranks": lambda: naive_rank_bootstrap(x),
        },
        "fragility of #1, MMLU-Pro": {
            "llm-power fragility (exact, every gap)": lambda: lp.fragility(x, models=d.models),
            "naive greedy removal loop (#1 only)": lambda: naive_flip_top(x),
        },
        "live leaderboard, 10 models x 10,000 items, 100 looks": {
            "llm-power LeaderboardMonitor e-BH, betting": lambda: monitor(live, "betting"),
            "llm-power LeaderboardMonitor e-BH, mixture": lambda: monitor(live, "mixture"),
            "naive McNemar + BH at every look": lambda: naive_monitor(live, 0.05),
        },
    }
    for group in groups.values():
        next(iter(group.values()))()  # imports, caches
    for title, jobs in groups.items():
        rows = []
        for load in (None, args.load):
            with loaded(load):
                times, results = interleaved(jobs, repeat=3)
            base = times[list(jobs)[-1]]
            for name, t in times.items():
                rows.append([name, "loaded" if load else "idle", fmt_s(t), f"{base / t:.1f}x"])
        print(f"### {title}\n")
        print(md_table(["method", "machine", "time", "naive / this"], rows))
        if title.startswith("fragility"):
            frag = results["llm-power fragility (exact, every gap)"]
            print(f"\nItems to flip #1: llm-power {int(frag.items_to_flip_top):,} (exact); the greedy loop "
                  f"{results['naive greedy removal loop (#1 only)']:,}.")
        if title.startswith("live"):
            print(f"\nPairs decided at the last look (45 pairs): betting "
                  f"{len(results['llm-power LeaderboardMonitor e-BH, betting'])}, mixture "
                  f"{len(results['llm-power LeaderboardMonitor e-BH, mixture'])}, naive "
                  f"{len(results['naive McNemar + BH at every look'])} (no error control under peeking).")
        print()


if __name__ == "__main__":
    main()
