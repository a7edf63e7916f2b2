"""Sign-flip permutation test on 0/1 data: the binomial shortcut vs flipping items.

Cases
-----
1. binary: two pairs of models' per-item correctness on MMLU-Pro (12,032 items, real data from
   ../shared/data/mmlu_pro_tiger; synthetic when ../shared is absent), one clearly separated and
   one close pair, Monte Carlo with B = 10,000 and 100,000 random sign patterns;
2. binary with few differing items (m = 18 of 200): the exact test (2^18 patterns);
3. graded (continuous scores, 1,418 items, synthetic): no shortcut, the item-level path, for scale.

Competitors
-----------
- "item flips": the path every call took before issue 13, still the path for graded data --
  a (B x m) matrix of random signs times the m differing items' differences (exact: all 2^m
  sign patterns enumerated);
- the exact McNemar p-value (``mcnemar(method="exact")``), which the exact sign-flip p-value of
  0/1 data equals, for reference.

Run: ``.venv/bin/python benchmarks/permutation.py`` (under a minute).
"""

from __future__ import annotations

import csv
import gzip
import time
from pathlib import Path

import numpy as np

import llm_power as lp
from llm_power.paired._permutation import _flip_null_exact, _flip_null_random
from llm_power.paired._resampling import pvalue_from_null

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def load_binary() -> list[tuple[np.ndarray, np.ndarray, str]]:
    """A clearly separated and a close pair of models."""
    path = SHARED / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    if path.exists():
        with gzip.open(path, "rt") as fh:
            rows = list(csv.DictReader(fh))

        def column(name: str) -> np.ndarray:
            return np.array([float(r[name]) for r in rows])

        return [(column("Meta-Llama-3_1-70B-Instruct"), column("Meta-Llama-3_1-70B"),
                 "MMLU-Pro, Llama-3.1-70B-Instruct vs Llama-3.1-70B (real)"),
                (column("Meta-Llama-3_1-70B"), column("Meta-Llama-3-70B"),
                 "MMLU-Pro, Llama-3.1-70B vs Llama-3-70B (real, close)")]
    rng = np.random.default_rng(0)
    a = (rng.random(12_032) < 0.66).astype(float)
    b = np.where(rng.random(12_032) < 0.8, a, (rng.random(12_032) < 0.6).astype(float))
    c = np.where(rng.random(12_032) < 0.8, a, (rng.random(12_032) < 0.66).astype(float))
    return [(a, b, "synthetic 0/1, 12,032 items"), (a, c, "synthetic 0/1, 12,032 items, close")]


def item_flips(a: np.ndarray, b: np.ndarray, n_resamples: int | None, seed: int = 0) -> float:
    """The item-level sign-flip p-value (exact when n_resamples is None)."""
    n, idx = a.size, np.flatnonzero(a != b)
    observed = float((a - b).mean())
    if n_resamples is None:
        return pvalue_from_null(_flip_null_exact(None, a, b, idx, n), observed, "two-sided", add_one=False)
    null = _flip_null_random(None, a, b, idx, n, n_resamples, np.random.default_rng(seed))
    return pvalue_from_null(null, observed, "two-sided", add_one=True)


def timed(func, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


def row(label: str, a: np.ndarray, b: np.ndarray, n_resamples: int | None) -> None:
    t_new, res = timed(lambda: lp.permutation_test(a, b, n_resamples=n_resamples, rng=0))
    t_old, p_old = timed(lambda: item_flips(a, b, None if res.exact else n_resamples), repeat=1)
    mc = lp.mcnemar(a, b, method="exact").pvalue if np.all((a == 0) | (a == 1)) else float("nan")
    what = "exact" if res.exact else f"B = {res.n_resamples:,}"
    print(f"  {label:<34}{what:>13}{t_new:>11.5f}{t_old:>11.4f}{t_old / t_new:>9.0f}x"
          f"{res.pvalue:>11.4g}{p_old:>11.4g}{mc:>11.4g}")


def main() -> None:
    print(f"numpy {np.__version__}, llm-power {lp.__version__}; new: best of 3, item flips: 1 run; two-sided")
    print(f"  {'case':<34}{'resamples':>13}{'new (s)':>11}{'flips (s)':>11}{'speed-up':>10}"
          f"{'p new':>11}{'p flips':>11}{'p McNemar':>11}")
    for a, b, label in load_binary():
        print(f"binary: {label}, n = {a.size:,}, m = {int(np.sum(a != b)):,} differing items")
        row("Monte Carlo", a, b, 10_000)
        row("Monte Carlo", a, b, 100_000)
    rng = np.random.default_rng(2)
    small_a = (rng.random(200) < 0.7).astype(float)
    small_b = small_a.copy()
    differ = rng.choice(200, size=18, replace=False)
    small_a[differ], small_b[differ] = 1.0, 0.0  # 18 differing items: 12 favour A, 6 favour B
    small_a[differ[:6]], small_b[differ[:6]] = 0.0, 1.0
    print(f"binary, few differing items: n = 200, m = {int(np.sum(small_a != small_b))}")
    row("exact (all sign patterns)", small_a, small_b, None)
    g = np.random.default_rng(1)
    ga = -g.gamma(1.0, 2.0, size=1_418)
    gb = ga + g.normal(0, 1, size=1_418)
    print("graded: synthetic, n = 1,418 (no shortcut: both columns flip items)")
    row("Monte Carlo", ga, gb, 10_000)


if __name__ == "__main__":
    main()
