"""Small subsets (20, 30, 50 items) on MMLU-Pro, leave one model out (docs/subsets.md, issue 39).

As ``scripts/subsets_loo.py``: each of the 26 MMLU-Pro models with every item is in turn "the new
model", "run" on random subsets; printed, per size and design, the coverage of its full-benchmark
score (mean over the models; lowest model) by

- ``t``: the t interval on the design's df (every interval before issue 39);
- ``reported``: what :func:`llm_power.subset_estimate` reports -- for the subset mean of 0/1 scores
  the modified Wilson interval on the effective sample size
  (:func:`llm_power.subsets._estimate.wilson_effective`), else the t interval.

Designs: the subset mean of a simple random sample; stratified (Neyman) by four groups of the 14
categories (those of similar leaderboard accuracy) and, from 30 items, by the 14 categories
(2 items each at least); the difference estimator with the leaderboard's per-item mean (simple
random and by the four groups); a cheap model (Mistral-7B-Instruct-v0.2) as the only predictor.
Then gaps: each model against the models just above and below it on the full benchmark (the
hardest calls), coverage of the full-benchmark gap by subset_compare's t interval, with the other
model on every item (a control variate, with or without the leaderboard's mean) or both run on
the subset (paired differences).

Run: python scripts/subsets_small_n.py [replications]  (1,000 by default; a few minutes).
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import stats
from subsets_loo import CHEAP, draws

from llm_power._kernel.survey import stratified_estimate
from llm_power.io.demo import load_mmlu_pro
from llm_power.subsets._estimate import wilson_effective
from llm_power.subsets._plan import subset_plan

SIZES = (20, 30, 50)


def _groups(x: np.ndarray, codes: np.ndarray, k: int = 4) -> np.ndarray:
    """Each item's group of categories: the 14 categories in ``k`` groups by leaderboard accuracy."""
    acc = np.bincount(codes, weights=x.mean(axis=1)) / np.bincount(codes)
    rank = np.argsort(np.argsort(acc))
    return (rank * k // rank.size)[codes]


def estimates(reps: int, rng: np.random.Generator) -> None:
    data = load_mmlu_pro()
    x = np.asarray(data.scores, dtype=float)
    models = list(data.models)
    codes = np.unique(np.asarray(data.clusters), return_inverse=True)[1]
    groups = _groups(x, codes)
    n_pop, k = x.shape
    cheap = models.index(CHEAP)
    one = np.zeros(n_pop, dtype=np.int64)
    print(f"coverage of the full-benchmark score, {k} models x {reps:,} subsets per row "
          f"(Monte-Carlo SE of a row's mean {np.sqrt(0.0475 / (reps * k)):.4f})")
    print("| items | design | target | t interval: mean (lowest model) | reported: mean (lowest model) |")
    print("| --- | --- | --- | --- | --- |")
    for n in SIZES:
        rows: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for j in range(k):
            y = x[:, j]
            truth = y.mean()
            others = np.delete(x, j, axis=1)
            lb = others.mean(axis=1)
            srs = draws(rng, one, np.array([n]), reps)
            zero = np.zeros(n, dtype=np.int64)
            designs = {"subset mean": (srs, zero, np.array([n_pop]), None, None),
                       "difference, leaderboard mean": (srs, zero, np.array([n_pop]), lb, np.array([[lb.mean()]]))}
            if j != cheap:
                c = x[:, cheap]
                designs["a cheap 7B model as predictor"] = (srs, zero, np.array([n_pop]), c, np.array([[c.mean()]]))
            for label, strata in (("4 groups", groups), ("14 categories", codes)):
                h = int(strata.max()) + 1
                if n < 2 * h + 1:
                    continue
                sizes_h = np.bincount(strata).astype(float)
                plan = subset_plan(n_pop, strata=strata, budget=n, reference=others, rng=j)
                run_h = np.array([a["run"] for a in plan.allocation])
                idx = draws(rng, strata, run_h, reps)
                sc = np.repeat(np.arange(h), run_h)
                designs[f"stratified ({label}) mean"] = (idx, sc, sizes_h, None, None)
                if label == "4 groups":
                    xbar = (np.bincount(strata, weights=lb) / sizes_h)[:, None]
                    designs[f"stratified ({label}) difference"] = (idx, sc, sizes_h, lb, xbar)
            for name, (idx, cd, counts, ctl, xbar) in designs.items():
                for target in ("benchmark", "population"):
                    args = (y[idx], cd, counts) if ctl is None else (y[idx], cd, counts, ctl[idx][..., None], xbar)
                    est, se, df, _ = stratified_estimate(*args, population=target == "population")
                    half = stats.t.ppf(0.975, df) * se
                    t_hit = np.abs(est - truth) <= half
                    if ctl is None:  # 0/1 scores: the modified Wilson interval (subset_estimate's rule)
                        lo, hi = wilson_effective(est, se, df, n, n_pop, 0.95, benchmark=target == "benchmark")
                        rep_hit = (lo <= truth) & (truth <= hi)
                    else:
                        rep_hit = t_hit
                    rows.setdefault((name, target), []).append((float(t_hit.mean()), float(rep_hit.mean())))
        for (name, target), vals in rows.items():
            v = np.array(vals)
            print(f"| {n} | {name} | {target} | {v[:, 0].mean():.3f} ({v[:, 0].min():.3f}) | "
                  f"{v[:, 1].mean():.3f} ({v[:, 1].min():.3f}) |", flush=True)


def gaps(reps: int, rng: np.random.Generator) -> None:
    data = load_mmlu_pro()
    x = np.asarray(data.scores, dtype=float)
    n_pop, k = x.shape
    means = x.mean(axis=0)
    order = np.argsort(means)
    one = np.zeros(n_pop, dtype=np.int64)
    print(f"\ncoverage of the full-benchmark gap to each neighbour (50 pairs x {reps:,} subsets per row; "
          f"Monte-Carlo SE {np.sqrt(0.0475 / (reps * 50)):.4f}), subset_compare's t interval")
    print("| items | the other model | target | coverage: mean (lowest pair) |")
    print("| --- | --- | --- | --- |")
    for n in SIZES:
        rows: dict[tuple[str, str], list[float]] = {}
        for pos, j in enumerate(order):
            y = x[:, j]
            lb = np.delete(x, j, axis=1).mean(axis=1)
            srs = draws(rng, one, np.array([n]), reps)
            zero, counts = np.zeros(n, dtype=np.int64), np.array([n_pop])
            for b in (order[q] for q in (pos - 1, pos + 1) if 0 <= q < k):
                other = x[:, b]
                d = y - other
                truth = means[j] - means[b]
                for name, ctl in (("on every item, with the leaderboard's mean", np.stack([lb, other], axis=1)),
                                  ("on every item", other[:, None]), ("both run on the subset", None)):
                    for target in ("benchmark", "population"):
                        args = (d[srs], zero, counts) if ctl is None else (d[srs], zero, counts, ctl[srs],
                                                                          ctl.mean(axis=0)[None, :])
                        est, se, df, _ = stratified_estimate(*args, population=target == "population")
                        hit = np.abs(est - truth) <= stats.t.ppf(0.975, df) * se
                        rows.setdefault((name, target), []).append(float(hit.mean()))
        for (name, target), vals in rows.items():
            print(f"| {n} | {name} | {target} | {np.mean(vals):.3f} ({np.min(vals):.3f}) |", flush=True)


if __name__ == "__main__":
    r = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    gen = np.random.default_rng(39)
    estimates(r, gen)
    gaps(r, gen)
