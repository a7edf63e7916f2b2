"""Leave-one-model-out validation of the subset estimators on MMLU-Pro (docs/subsets.md).

Each of the 26 models with every item is in turn "the new model": its full score is known, it is
"run" on random subsets, and its full score and its gaps to the 25 others are estimated from
them with each design. Printed, for each target:

- ``benchmark`` (the score over the 12,032 items): coverage of the full score (mean over models
  and the lowest model), the variance reduction against the plain subset mean of a simple random
  sample of the same size (measured over the replications: median and lowest model);
- ``population`` (the default: the questions the items stand for): coverage of the full score
  (conservative by design), and, for the gaps, the share of (pair, subset) tests called at
  alpha = 0.05 and of wrong calls (the sign on the subset opposite to the full benchmark's; the
  interval promises at most alpha / 2 per test);
- a superpopulation check of the population target: benchmarks of 3,000 items drawn from the
  12,032 (so the population mean is known), subsets of 500 of them.

The subset mean of these 0/1 scores gets the modified Wilson interval (what ``subset_estimate``
reports since issue 39), every other design the t interval. Smaller subsets (20-50 items):
``scripts/subsets_small_n.py``.

Run: python scripts/subsets_loo.py [replications] [streams]  (bundled data; minutes on 2 cores).
The estimators are the kernel's (``_kernel.survey.stratified_estimate``), vectorised over the
replications; ``lp.subset_estimate`` / ``lp.subset_compare`` call the same function.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import stats

from llm_power._kernel.survey import stratified_estimate
from llm_power.io.demo import load_mmlu_pro
from llm_power.subsets._estimate import wilson_effective
from llm_power.subsets._plan import allocate, subset_plan

CHEAP = "Mistral-7B-Instruct-v0.2"  # the cheap model of the PPI-style design (run on every item)
SIZES = (100, 500, 2000)
DESIGNS = ("subset mean", "difference (leaderboard mean)", "PPI-style (a cheap 7B model)",
           "stratified Neyman + difference")


def draws(rng: np.random.Generator, codes: np.ndarray, run: np.ndarray, reps: int) -> np.ndarray:
    """(reps, n) positions: ``run[h]`` random items of each stratum h, stratum by stratum."""
    blocks = [np.flatnonzero(codes == h) for h in range(run.size)]
    return np.concatenate([np.stack([rng.choice(b, int(k), replace=False) for _ in range(reps)])
                           for b, k in zip(blocks, run, strict=True) if k], axis=1)


def covered(est: np.ndarray, se: np.ndarray, df: np.ndarray, truth: float, *, wilson: tuple[int, int, bool] | None = None,
            ) -> float:
    """Share of the intervals that cover ``truth``: the t interval, or with ``wilson`` = (n, N, benchmark
    target) the modified Wilson interval subset_estimate reports for the subset mean of 0/1 scores."""
    if wilson is None:
        return float(np.mean(np.abs(est - truth) <= stats.t.ppf(0.975, df) * se))
    lo, hi = wilson_effective(est, se, df, wilson[0], wilson[1], 0.95, benchmark=wilson[2])
    return float(np.mean((lo <= truth) & (truth <= hi)))


def main(reps: int = 200) -> None:  # noqa: C901, PLR0915 - one table, written out
    data = load_mmlu_pro()
    x = np.asarray(data.scores, dtype=float)
    models = list(data.models)
    category = np.asarray(data.clusters)
    codes = np.unique(category, return_inverse=True)[1]
    n_pop, k = x.shape
    sizes_h = np.bincount(codes).astype(float)
    cheap = models.index(CHEAP)
    rng = np.random.default_rng(2026)
    one = np.zeros(n_pop, dtype=np.int64)
    rows = []
    for n in SIZES:
        cover = {(d, t): [] for d in DESIGNS for t in ("benchmark", "population")}
        var = {d: [] for d in DESIGNS}
        calls = {(d, t): [0, 0, 0] for d in (DESIGNS[1], DESIGNS[3]) for t in ("benchmark", "population")}
        for j in range(k):
            y = x[:, j]
            truth = y.mean()
            lb = np.delete(x, j, axis=1).mean(axis=1)  # the leaderboard's mean without the new model
            plan = subset_plan(n_pop, strata=category, budget=n, reference=np.delete(x, j, axis=1), rng=j)
            run_h = np.array([a["run"] for a in plan.allocation])
            assert np.array_equal(run_h, allocate(n, sizes_h, np.array([a["sd"] for a in plan.allocation])))
            srs = draws(rng, one, np.array([n]), reps)
            strat = draws(rng, codes, run_h, reps)
            scodes = np.repeat(np.arange(run_h.size), run_h)
            zero = np.zeros(n, dtype=np.int64)
            xbar_lb = np.bincount(codes, weights=lb) / sizes_h
            args = {
                DESIGNS[0]: (y[srs], zero, np.array([n_pop])),
                DESIGNS[1]: (y[srs], zero, np.array([n_pop]), lb[srs][..., None], np.array([[lb.mean()]])),
                DESIGNS[3]: (y[strat], scodes, sizes_h, lb[strat][..., None], xbar_lb[:, None]),
            }
            if j != cheap:
                c = x[:, cheap]
                args[DESIGNS[2]] = (y[srs], zero, np.array([n_pop]), c[srs][..., None], np.array([[c.mean()]]))
            for name, a in args.items():
                for target in ("benchmark", "population"):
                    est, se, df, _ = stratified_estimate(*a, population=target == "population")
                    plain = (n, n_pop, target == "benchmark") if name == DESIGNS[0] else None
                    cover[name, target].append(covered(est, se, df, truth, wilson=plain))
                var[name].append(float(np.var(est)))
            for name, idx, cd, counts in ((DESIGNS[1], srs, zero, np.array([n_pop])),
                                          (DESIGNS[3], strat, scodes, sizes_h)):
                pop_codes = one if counts.size == 1 else codes
                for b in range(k):
                    if b == j:
                        continue
                    other = x[:, b]
                    full_gap = truth - other.mean()
                    ctrl = np.stack([lb, other], axis=1)
                    xbar = np.stack([np.bincount(pop_codes, weights=col) for col in ctrl.T], axis=1) / counts[:, None]
                    for target in ("benchmark", "population"):
                        est, se, df, _ = stratified_estimate(y[idx] - other[idx], cd, counts, ctrl[idx], xbar,
                                                             population=target == "population")
                        called = np.abs(est / se) >= stats.t.ppf(0.975, df)
                        wrong = called & (np.sign(est) != np.sign(full_gap))
                        tally = calls[name, target]
                        tally[0] += reps
                        tally[1] += int(called.sum())
                        tally[2] += int(wrong.sum())
        base = np.array(var[DESIGNS[0]])
        for name in DESIGNS:
            v = np.array(var[name])
            ratio = base / v if name != DESIGNS[2] else np.delete(base, cheap) / v
            cb, cp = np.array(cover[name, "benchmark"]), np.array(cover[name, "population"])
            row = [n, name, f"{cb.mean():.3f}", f"{cb.min():.3f}", f"{np.median(ratio):.2f}x", f"{ratio.min():.2f}x",
                   f"{cp.mean():.3f}"]
            for target in ("population", "benchmark"):
                if (name, target) in calls:
                    tests, called, wrong = calls[name, target]
                    row += [f"{called / tests:.3f}", f"{wrong / tests:.4f}"]
                else:
                    row += ["", ""]
            rows.append(row)
            print(" | ".join(map(str, row)), flush=True)
    print()
    print("| items run | design | coverage of the full score (mean) | (lowest model) | variance reduction (median) "
          "| (lowest) | population target: coverage of the full score | gaps called | wrong calls per test | "
          "benchmark target: gaps called | wrong calls per test |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(f"{r:,}" if isinstance(r, int) else r for r in row) + " |")
    superpopulation(reps)


def superpopulation(reps: int, bench: int = 3000, n: int = 500) -> None:
    """Coverage of the population target's intervals of the 12,032-item mean (the population here)
    for benchmarks of ``bench`` items drawn from it and subsets of ``n`` of each benchmark.
    """
    data = load_mmlu_pro()
    x = np.asarray(data.scores, dtype=float)
    n_pop, k = x.shape
    rng = np.random.default_rng(99)
    hit_plain, hit_diff, hit_bench = [], [], []
    for j in range(k):
        mu = x[:, j].mean()
        lb_all = np.delete(x, j, axis=1).mean(axis=1)
        for _ in range(reps):
            items = rng.choice(n_pop, bench, replace=True)  # the benchmark: a sample of the population
            y, lb = x[items, j], lb_all[items]
            run = rng.choice(bench, n, replace=False)
            zero = np.zeros(n, dtype=np.int64)
            est, se, df, _ = stratified_estimate(y[run], zero, np.array([bench]), population=True)
            lo, hi = wilson_effective(est, se, df, n, bench, 0.95, benchmark=False)  # subset_estimate's interval
            hit_plain.append(lo <= mu <= hi)
            est, se, df, _ = stratified_estimate(y[run], zero, np.array([bench]), lb[run][:, None],
                                                 np.array([[lb.mean()]]), population=True)
            hit_diff.append(abs(est - mu) <= stats.t.ppf(0.975, df) * se)
            est, se, df, _ = stratified_estimate(y[run], zero, np.array([bench]), lb[run][:, None],
                                                 np.array([[lb.mean()]]))
            hit_bench.append(abs(est - mu) <= stats.t.ppf(0.975, df) * se)
    print(f"\nsuperpopulation: {k} models x {reps} benchmarks of {bench} items drawn from the 12,032, {n} run: "
          f"coverage of the population mean -- subset mean {np.mean(hit_plain):.3f}, difference estimator "
          f"{np.mean(hit_diff):.3f} (population target); the benchmark target's interval {np.mean(hit_bench):.3f}")


def sequential(streams: int = 40, look: int = 50, half_width: float = 0.01) -> None:
    """Sequential subsets (benchmark target): each model against the models just above and below it
    on the full benchmark (its closest gaps), ``streams`` random orders each, a look every ``look``
    items, stopping when the verdict is decided or the interval is +-``half_width``; and the
    population target on the paired differences with the same neighbours.
    """
    from llm_power import SubsetSequence

    data = load_mmlu_pro()
    x = np.asarray(data.scores, dtype=float)
    n_pop, k = x.shape
    means = x.mean(axis=0)
    order_models = np.argsort(means)
    rng = np.random.default_rng(7)
    for target in ("benchmark", "population"):
        n_runs = missed_stop = missed_path = decided = wrong = 0
        stopped = []
        for pos, j in enumerate(order_models):
            for other in (order_models[pos - 1] if pos else None, order_models[pos + 1] if pos + 1 < k else None):
                if other is None:
                    continue
                if target == "benchmark":
                    values, against, low, truth = x[:, j], float(means[other]), 0.0, float(means[j])
                else:
                    values, against, low, truth = x[:, j] - x[:, other], 0.0, -1.0, float(means[j] - means[other])
                for _ in range(streams):
                    seq = SubsetSequence(n_pop, against=against, half_width=half_width, low=low, target=target)
                    order = rng.permutation(n_pop)
                    out = False
                    for start in range(0, n_pop, look):
                        res = seq.add(values[order[start:start + look]])
                        out |= not (res.ci.low <= truth <= res.ci.high)
                        if res.stop:
                            break
                    n_runs += 1
                    missed_path += out
                    missed_stop += not (res.ci.low <= truth <= res.ci.high)
                    decided += res.decided
                    wrong += res.decided and (res.ci.low > against) != (truth > against)
                    stopped.append(res.n)
        print(f"sequential ({target} target): {n_runs} streams (each model against its two neighbours), look every "
              f"{look} items, stop at +-{half_width} or a verdict: miscoverage of the full-benchmark value at the "
              f"stop {missed_stop / n_runs:.4f}, anywhere on the path {missed_path / n_runs:.4f}; decided "
              f"{decided / n_runs:.3f}, wrong verdicts {wrong / n_runs:.4f}; items at the stop: median "
              f"{int(np.median(stopped))}, mean {np.mean(stopped):.0f} of {n_pop}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    sequential(int(sys.argv[2]) if len(sys.argv) > 2 else 40)
