"""``plan_leaderboard`` at 10, 100 and 1,000 models (issue 45), beside what a user would run without it:
simulate benchmarks of N items drawn from the pilot's items and run ``diagnose`` on each, counting the
resolved adjacent gaps (the exact tests, one N at a time).

- Synthetic 0/1 pilots of 12,032 items (a Rasch-like model: item difficulty shared by every model, so
  the adjacent gaps' statistics correlate negatively as on real boards), adjacent pairs, Holm.
- ``plan_leaderboard``: the curve at the pilot's N and 2, 4, 10 times it, and the items for
  ``at_least`` = k with probability 0.8, k the resolved gaps expected at 4 times the pilot's items
  (a search over N: about 25 evaluations of the curve), 10,000 draws of the normal limit.
- The user's way: 200 benchmarks at one N (the pilot's), each resampled from the pilot's items and
  diagnosed: one point of one curve; the search over N
  would repeat it about 25 times.

- ``--report``: the report's own count (``count="report"``: each simulated benchmark ranked anew) beside
  the pilot's count and resampled diagnoses, and its curve + search for ``at_least`` = k (k the gaps 4
  times the pilot's items resolve).
- ``--fdr``: FDR planning at the same sizes: adjacent gaps below ``--null-below`` (default 0.25 points)
  planned as ties, the items for E[resolved real gaps] = the count 4 times the pilot's items give, by
  simulation under BH, BY and e-BH (``plan_leaderboard(..., null_below=, expected=)``), beside Jung's
  closed form of the same goal (``items_for_discoveries``, no draws).

CPU seconds (``time.process_time``), best of ``--repeat``. Run: ``python benchmarks/plan_leaderboard.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import md_table  # noqa: E402

import llm_power as lp  # noqa: E402

N_ITEMS = 12_032


def pilot(m: int, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    ability, difficulty = np.sort(gen.normal(0, 0.6, m))[::-1], gen.normal(0, 1.5, N_ITEMS)
    p = 1 / (1 + np.exp(-(ability[None, :] - difficulty[:, None])))
    return (gen.random((N_ITEMS, m)) < p).astype(np.uint8)


def cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def by_diagnose(x: np.ndarray, reps: int, seed: int = 1) -> float:
    """The mean resolved adjacent gaps (Holm) over ``reps`` benchmarks resampled from the pilot's items."""
    gen = np.random.default_rng(seed)
    resolved = []
    for _ in range(reps):
        rows = gen.integers(0, x.shape[0], x.shape[0])
        diag = lp.diagnose(x[rows], correction="holm", rng=0)
        resolved.append(len(diag.columns["delta"]) - diag.n_unresolved["corrected"])
    return float(np.mean(resolved))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--fdr", action="store_true", help="the FDR planners instead")
    parser.add_argument("--report", action="store_true", help="the report's own count beside the pilot's")
    parser.add_argument("--null-below", type=float, default=0.0025)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.fdr:
        fdr(args)
        return
    if args.report:
        report(args)
        return
    rows = []
    for m in (10, 100, 1000):
        x = pilot(m)
        curve = lp.plan_leaderboard(x, correction="holm", rng=0).power  # at the pilot's N and 2, 4, 10 times it
        goal = int(np.floor(np.asarray(curve.expected_resolved)[2]))  # about what 4 times the items resolve

        def plan(x: np.ndarray = x, goal: int = goal) -> lp.LeaderboardPlan:
            return lp.plan_leaderboard(x, correction="holm", at_least=goal, probability=0.8, rng=0)

        t_plan = min(cpu(plan) for _ in range(args.repeat))
        result = plan()
        reps = args.reps if m <= 100 else max(args.reps // 10, 5)
        t_user = cpu(lambda x=x, reps=reps: by_diagnose(x, reps)) * args.reps / reps
        expected = float(np.atleast_1d(result.power.expected_resolved)[0])
        rows.append([f"{m:,}", f"{m - 1:,}", str(goal), f"{t_plan:.2f}", f"{result.items.n_items:,}", f"{expected:.2f}",
                     f"{t_user:.1f}" + ("" if reps == args.reps else f" (from {reps})"),
                     f"{by_diagnose(x, min(reps, 50)):.2f}"])
    print(f"CPU seconds; pilot {N_ITEMS:,} items; at_least = k (see above), probability 0.8; Holm\n")
    print(md_table(["models", "adjacent gaps", "k", "plan_leaderboard (curve + search)", "items needed",
                    "E[resolved] at the pilot (normal limit)", f"{args.reps} diagnoses at one N",
                    "E[resolved] by diagnoses (50)"], rows))


def report(args: argparse.Namespace) -> None:
    """The pilot's count and the report's own (``count="report"``) beside resampled diagnoses."""
    rows = []
    for m in (10, 100, 1000):
        x = pilot(m)
        pilot_count = lp.plan_leaderboard(x, correction="holm", n_items=[N_ITEMS], rng=0).power
        goal = int(np.floor(float(np.asarray(lp.plan_leaderboard(x, count="report", n_items=[4 * N_ITEMS], rng=0)
                                             .power.expected_resolved)[0])))

        def plan(x: np.ndarray = x, goal: int = goal) -> lp.LeaderboardPlan:
            return lp.plan_leaderboard(x, count="report", correction="holm", at_least=goal, rng=0)

        t_plan = min(cpu(plan) for _ in range(args.repeat))
        result = plan()
        reps = 50 if m <= 100 else 10
        diag = by_diagnose(x, reps)
        rows.append([f"{m:,}", f"{float(np.asarray(pilot_count.expected_resolved)[0]):.2f}",
                     f"{float(np.asarray(result.power.expected_resolved)[0]):.2f}", f"{diag:.2f} ({reps})",
                     str(goal), f"{t_plan:.2f}", f"{result.items.n_items:,}"])
    print(f"CPU seconds; pilot {N_ITEMS:,} items; Holm; E[resolved] at the pilot's N\n")
    print(md_table(["models", "pilot's gaps (count='pilot')", "report's own (count='report')",
                    "resampled diagnoses (reps)", "k", "count='report' curve + search for k", "items needed"], rows))


def fdr(args: argparse.Namespace) -> None:
    """The FDR planners: simulated (BH, BY, e-BH) and Jung's closed form, at 10, 100 and 1,000 models."""
    from llm_power._kernel.leaderboard_power import items_for_discoveries

    rows = []
    for m in (10, 100, 1000):
        x = pilot(m)
        base = lp.plan_leaderboard(x, correction="bh", null_below=args.null_below, n_items=[4 * N_ITEMS], rng=0)
        real = int(np.count_nonzero(base.delta))
        goal = float(np.floor(float(np.atleast_1d(base.power.expected_resolved)[0])))
        for correction in ("bh", "by", "ebh"):
            def plan(x: np.ndarray = x, goal: float = goal, correction: str = correction) -> lp.LeaderboardPlan:
                return lp.plan_leaderboard(x, correction=correction, null_below=args.null_below, expected=goal,
                                           rng=0)

            t_plan = min(cpu(plan) for _ in range(args.repeat))
            result = plan()
            t_jung = min(cpu(lambda r=result, c=correction, g=goal: items_for_discoveries(
                r.delta, r.sd, discoveries=g, correction=c)) for _ in range(args.repeat))
            fdr_at = float(np.atleast_1d(result.power.fdr)[list(np.atleast_1d(result.power.n_items)).index(
                result.items.n_items)])
            rows.append([f"{m:,}", f"{m - 1 - real:,} of {m - 1:,}", f"{goal:g}", correction, f"{t_plan:.2f}",
                         f"{result.items.n_items:,}", f"{fdr_at:.4f}", f"{t_jung:.4f}",
                         f"{result.discoveries['n_items']:,}" if result.discoveries else "—"])
    print(f"CPU seconds; pilot {N_ITEMS:,} items; adjacent gaps below {100 * args.null_below:g} points as ties\n")
    print(md_table(["models", "ties", "expected real resolved", "correction", "plan_leaderboard (curve + search)",
                    "items needed", "FDR there", "Jung's closed form", "its items"], rows))


if __name__ == "__main__":
    main()
