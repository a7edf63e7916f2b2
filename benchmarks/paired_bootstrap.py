"""Paired bootstrap: llm-power vs what users would otherwise run.

Cases
-----
1. binary: two models' per-item correctness on MMLU-Pro (12,032 items, real data from
   ../shared/data/mmlu_pro_tiger; synthetic with the same margins when ../shared is absent),
   B = 10,000 resamples of the accuracy difference;
2. graded: WMT20 en-de MQM segment scores of two systems (1,418 segments, real data from
   ../shared/data/wmt20_mqm; synthetic otherwise), B = 10,000 resamples of the mean difference.

Competitors
-----------
- ``scipy.stats.bootstrap((a, b), statistic, paired=True, vectorized=True)``, percentile CI;
- naive item-index resampling, the loop people write: ``for _ in range(B): idx = rng.integers(0, n, n); ...``.

Run: ``.venv/bin/python benchmarks/paired_bootstrap.py`` (prints a table; takes about a minute).
"""

from __future__ import annotations

import csv
import gzip
import time
from pathlib import Path

import numpy as np
from scipy import stats

import llm_power as lp

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
B = 10_000


def load_binary() -> tuple[np.ndarray, np.ndarray, str]:
    path = SHARED / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    if path.exists():
        with gzip.open(path, "rt") as fh:
            rows = list(csv.DictReader(fh))
        a = np.array([float(r["Meta-Llama-3_1-70B-Instruct"]) for r in rows])
        b = np.array([float(r["Meta-Llama-3_1-70B"]) for r in rows])
        return a, b, "MMLU-Pro, Llama-3.1-70B-Instruct vs Llama-3.1-70B base (real)"
    rng = np.random.default_rng(0)
    a = (rng.random(12_032) < 0.66).astype(float)
    b = np.where(rng.random(12_032) < 0.8, a, (rng.random(12_032) < 0.6).astype(float))
    return a, b, "synthetic 0/1, 12,032 items"


def load_graded() -> tuple[np.ndarray, np.ndarray, str]:
    path = SHARED / "wmt20_mqm" / "wmt20_mqm_ende_wide.csv.gz"
    if path.exists():
        with gzip.open(path, "rt") as fh:
            rows = list(csv.DictReader(fh))
        a = np.array([float(r["Tohoku-AIP-NTT.890"]) for r in rows])
        b = np.array([float(r["OPPO.1535"]) for r in rows])
        return a, b, "WMT20 en-de MQM, Tohoku vs OPPO (real, 1,418 segments)"
    rng = np.random.default_rng(1)
    a = -rng.gamma(1.0, 2.0, size=1_418)
    return a, a + rng.normal(0, 1, size=1_418), "synthetic graded, 1,418 items"


def timed(func, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


def mean_diff(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def naive(a, b, seed=0):
    rng = np.random.default_rng(seed)
    n = a.size
    out = np.empty(B)
    for i in range(B):
        idx = rng.integers(0, n, n)
        out[i] = a[idx].mean() - b[idx].mean()
    return np.quantile(out, [0.025, 0.975]), out.std(ddof=1)


def run_case(a, b, label):
    t_lp, res = timed(lambda: lp.paired_bootstrap(a, b, n_resamples=B, rng=0))
    t_sp, sp = timed(lambda: stats.bootstrap((a, b), mean_diff, paired=True, vectorized=True, n_resamples=B,
                                              method="percentile", rng=0), repeat=1)
    t_nv, nv = timed(lambda: naive(a, b), repeat=1)
    ci = res.confidence_interval()
    print(f"\n{label}: n = {a.size:,}, B = {B:,}, delta = {res.estimate:+.4f}")
    print(f"  {'method':<44}{'time (s)':>10}{'ratio':>9}   95% CI                 SE")
    print(f"  {'llm-power paired_bootstrap':<44}{t_lp:>10.4f}{1:>9.0f}x  [{ci.low:+.4f}, {ci.high:+.4f}]  {res.standard_error:.5f}")
    print(f"  {'scipy.stats.bootstrap(paired=True)':<44}{t_sp:>10.4f}{t_sp / t_lp:>9.0f}x  "
          f"[{sp.confidence_interval.low:+.4f}, {sp.confidence_interval.high:+.4f}]  {sp.standard_error:.5f}")
    print(f"  {'naive item-index loop':<44}{t_nv:>10.4f}{t_nv / t_lp:>9.0f}x  [{nv[0][0]:+.4f}, {nv[0][1]:+.4f}]  {nv[1]:.5f}")
    return t_lp, t_sp, t_nv


def main() -> None:
    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}, llm-power {lp.__version__}")
    a, b, label = load_binary()
    run_case(a, b, "binary " + label)
    a, b, label = load_graded()
    run_case(a, b, "graded " + label)


if __name__ == "__main__":
    main()
