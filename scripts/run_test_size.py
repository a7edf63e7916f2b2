"""Size of the run regime's test over a grid of designs: the current kernel against HEAD 7302bb3's.

Two models with equal true scores, every item scored in R runs. Graded scores: y = item (SD 1) + item x
model (SD s_int / sqrt 2 per model) + run x model (SD s_run of each model) + residual (SD 0.5 / sqrt 2);
0/1 scores: 0.5 + item + item x model (SD 2 s_int) + run x model (SD 3 s_run) on the logit scale, then
Bernoulli. Matched runs
(prompt templates shared by both models) add a template shift common to both models, which the matched
test cancels. Each cell reports the share of replications whose two-sided run test rejects at
alpha = 0.05, for the test of the working tree (its df of :func:`llm_power._kernel.crossed.run_test_df`)
and for the one at 7302bb3 (Satterthwaite's df estimated from the observed mean squares), with the
Monte-Carlo SE sqrt(0.05 * 0.95 / reps).

Run from the repository root (needs git for the old kernel):

    .venv/bin/python scripts/run_test_size.py --reps 20000            # the grid of docs/runs.md
    .venv/bin/python scripts/run_test_size.py --reps 4000 --quick     # a smaller grid

Everything goes through the kernel path that compare, diagnose and gate use (crossed mean squares,
the gap's run variance and df); p-values are Student t on those df.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

from llm_power._kernel import crossed
from llm_power._kernel.quantiles import t_pvalue

OLD_COMMIT = "7302bb3"


def old_kernel(commit: str = OLD_COMMIT, path: str = "src/llm_power/_kernel/crossed.py") -> types.ModuleType:
    """The crossed kernel as it was at ``commit``, loaded as a sibling module of the package's kernel (its
    relative imports resolve to the current quantiles)."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True, text=True,
                            check=True).stdout
    name = f"llm_power._kernel._crossed_{commit}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "llm_power._kernel"
    sys.modules[name] = module
    exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)  # noqa: S102 - our own history
    return module


def simulate(rng: np.random.Generator, reps: int, n: int, r: int, *, binary: bool, matched: bool, s_inter: float,
             s_run_a: float, s_run_b: float, common: float = 0.3) -> np.ndarray:
    """(reps, n, R, 2) scores of two models with equal true scores (see the module docstring)."""
    inter, run = (2.0, 3.0) if binary else (1.0 / np.sqrt(2.0), 1.0)  # 0/1: SDs on the logit scale
    latent = (0.5 * binary + rng.normal(0, 1.0, (reps, n, 1, 1)) + rng.normal(0, s_inter * inter, (reps, n, 1, 2))
              + np.concatenate([rng.normal(0, s_run_a * run, (reps, 1, r, 1)),
                                rng.normal(0, s_run_b * run, (reps, 1, r, 1))], axis=3))
    if matched:
        latent = latent + rng.normal(0, common, (reps, 1, r, 1))
    if binary:
        return (rng.random((reps, n, r, 2)) < 1.0 / (1.0 + np.exp(-latent))).astype(float)
    return latent + rng.normal(0, 0.5 / np.sqrt(2.0), (reps, n, r, 2))


def run_pvalues(kernel: types.ModuleType, y: np.ndarray, *, matched: bool) -> np.ndarray:
    """The run test's two-sided p-value of model 0 vs model 1 in each replication, through ``kernel``."""
    reps, n = y.shape[:2]
    blocks = [y[k, :, :, m] for k in range(reps) for m in (0, 1)]
    ms = kernel.crossed_mean_squares(blocks)
    i = np.arange(0, 2 * reps, 2)
    j = i + 1
    d = ms.item_means[:, i] - ms.item_means[:, j]
    s2_d = d.var(axis=0, ddof=1)
    pv = kernel.gap_run_variance(s2_d, n, ms, i, j, blocks if matched else None)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean(axis=0) / np.sqrt(pv.variance)
    return np.asarray(t_pvalue(t, pv.df, "two-sided"))


def grid(quick: bool) -> list[dict[str, object]]:
    """The designs: R, pairing, 0/1 or graded, item x model SD, and the two models' run x model SDs."""
    runs = (2, 3, 5) if quick else (2, 3, 5, 10)
    items = (300,) if quick else (50, 300)
    cells = []
    for n, r, binary, matched, s_inter in itertools.product(items, runs, (False, True), (True, False), (0.1, 0.4)):
        shapes = [(0.0, 0.0), (0.02, 0.02), (0.05, 0.05), (0.15, 0.15)]
        if not matched:  # one model's runs move, the other's do not (0/1: up to a logit SD of 1.5 per run)
            shapes += [(0.1, 0.0), (0.25, 0.0), (0.5 if binary else 1.0, 0.0)]
        cells += [{"n": n, "r": r, "binary": binary, "matched": matched, "s_inter": s_inter, "s_run_a": a,
                   "s_run_b": b} for a, b in shapes]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    old = old_kernel()
    se = np.sqrt(0.05 * 0.95 / args.reps)
    print(f"rejection rate of equal models at alpha = 0.05; {args.reps} replications per cell, MC SE {se:.4f}")
    print(f"{'n':>5} {'R':>3} {'scores':>6} {'runs':>11} {'s_int':>5} {'s_run':>11} {'now':>7} {'7302bb3':>8}")
    worst_now = worst_old = 0.0
    for k, cell in enumerate(grid(args.quick)):
        rng = np.random.default_rng([args.seed, k])
        now = old_rate = 0
        chunk = 2000
        for start in range(0, args.reps, chunk):
            y = simulate(rng, min(chunk, args.reps - start), cell["n"], cell["r"], binary=cell["binary"],
                         matched=cell["matched"], s_inter=cell["s_inter"], s_run_a=cell["s_run_a"],
                         s_run_b=cell["s_run_b"])
            now += int(np.sum(run_pvalues(crossed, y, matched=cell["matched"]) <= 0.05))
            old_rate += int(np.sum(run_pvalues(old, y, matched=cell["matched"]) <= 0.05))
        now_r, old_r = now / args.reps, old_rate / args.reps
        worst_now, worst_old = max(worst_now, now_r), max(worst_old, old_r)
        print(f"{cell['n']:>5} {cell['r']:>3} {'0/1' if cell['binary'] else 'graded':>6} "
              f"{'matched' if cell['matched'] else 'independent':>11} {cell['s_inter']:>5} "
              f"{cell['s_run_a']:>5}/{cell['s_run_b']:<5} {now_r:>7.4f} {old_r:>8.4f}", flush=True)
    print(f"largest rejection rate: now {worst_now:.4f}, at 7302bb3 {worst_old:.4f} (MC SE {se:.4f})")


if __name__ == "__main__":
    main()
