"""``noise`` at leaderboard size (issue 43, part 4): the new implementation against the old one (kept as
the reference in tests/runs/test_noise_reference.py) and one ``run_variance``, in CPU seconds
(``time.process_time``; the machine is shared, so wall time is not measured), interleaved in one process.

- **Runs as seeds**, 300 models x 10 runs x 12,032 items, synthetic 0/1 scores (a Rasch-like model):
  old ``noise`` (once: it holds an items x pairs array of 540 million numbers, 4.3 GB), new ``noise`` and
  one ``run_variance`` (best of 3). Acceptance: new ``noise`` at most 3x one ``run_variance``.
- **Templates**, 20 models x 10 templates x 12,032 items, 1,000 resamples (the items bootstrap of the
  Kendall tau interval): old and new ``noise`` (best of 2), and new ``noise`` at 100 models (the old one
  would need an items x templates x pairs array of 4,950 pairs, 4.8 GB).

Each comparison checks that the two reports are equal (floats to 1e-12).

Run: ``python benchmarks/noise.py [--models 300] [--items 12032]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "runs"))
from _common import machine, md_table, peak_rss_mb  # noqa: E402


def run_scores(m: int, n: int, r: int, *, templates: bool, seed: int = 0) -> Any:
    from llm_power.matrix import RunScores

    gen = np.random.default_rng(seed)
    ability, difficulty = gen.normal(0, 0.5, m), gen.normal(0, 1.5, n)
    shift = gen.normal(0, 0.2, (r, m)) if templates else np.zeros((r, m))
    blocks = []
    for k in range(m):
        p = 1.0 / (1.0 + np.exp(-(ability[k] - difficulty[:, None] + shift[None, :, k])))
        blocks.append((gen.random((n, r)) < p).astype(float))
    return RunScores(items=list(range(n)), models=[f"m{k}" for k in range(m)], blocks=blocks,
                     run_labels=[[f"t{t}" for t in range(r)] for _ in range(m)],
                     runs_by="template" if templates else "seed")


def cpu_interleaved(jobs: dict[str, tuple[Callable[[], Any], int]]) -> tuple[dict[str, float], dict[str, Any]]:
    """Each job its number of times, round-robin: the best CPU time of each and its last result."""
    times = {name: float("inf") for name in jobs}
    results: dict[str, Any] = {}
    for rep in range(max(k for _, k in jobs.values())):
        for name, (fn, k) in jobs.items():
            if rep < k:
                start = time.process_time()
                results[name] = fn()
                times[name] = min(times[name], time.process_time() - start)
    return times, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--items", type=int, default=12_032)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from test_noise_reference import _same_report, old_noise

    import llm_power as lp

    print(f"Machine: {machine()}\n")
    rs = run_scores(args.models, args.items, 10, templates=False)
    lp.run_variance(rs)  # imports, caches
    times, res = cpu_interleaved({"run_variance": (lambda: lp.run_variance(rs), 3),
                                  "noise (new)": (lambda: lp.noise(rs, rng=0), 3),
                                  "noise (old)": (lambda: old_noise(rs, rng=0), 1)})
    _same_report(res["noise (new)"], res["noise (old)"])
    base = times["run_variance"]
    print(f"### Runs as seeds, {args.models} models x 10 runs x {args.items:,} items, 0/1 scores\n")
    print(md_table(["call", "CPU-s", "/ run_variance"],
                   [[name, f"{t:.2f}", f"{t / base:.1f}x"] for name, t in times.items()]))
    print(f"\nEqual reports (1e-12). Peak RSS {peak_rss_mb():,.0f} MB (the old noise's items x pairs array).\n")

    small = run_scores(20, args.items, 10, templates=True)
    wide = run_scores(100, args.items, 10, templates=True)
    times, res = cpu_interleaved({"noise (new), 20 models": (lambda: lp.noise(small, rng=0), 2),
                                  "noise (old), 20 models": (lambda: old_noise(small, rng=0), 2),
                                  "noise (new), 100 models": (lambda: lp.noise(wide, rng=0), 1)})
    _same_report(res["noise (new), 20 models"], res["noise (old), 20 models"])
    print(f"### Templates, 10 templates x {args.items:,} items, 1,000 resamples\n")
    print(md_table(["call", "CPU-s"], [[name, f"{t:.2f}"] for name, t in times.items()]))
    print("\nEqual reports at 20 models (1e-12).")


if __name__ == "__main__":
    main()
