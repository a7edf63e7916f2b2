"""All-pairs leaderboard resolution at scale: 100 models x 12,032 items.

The 26 complete MMLU-Pro models (real, ../shared/data/mmlu_pro_tiger) plus 74 models made by
flipping 5% of the items of a random real model; synthetic 0/1 data when ../shared is absent.
Compared with the loop users would write: compare() on every one of the 4,950 pairs.

Run: ``.venv/bin/python benchmarks/diagnose.py``.
"""

from __future__ import annotations

import csv
import gzip
import time
from pathlib import Path

import numpy as np

import llm_power as lp

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"


def load() -> tuple[np.ndarray, np.ndarray, str]:
    rng = np.random.default_rng(0)
    if SHARED.exists():
        with gzip.open(SHARED, "rt") as fh:
            rows = list(csv.reader(fh))
        x = np.array([[np.nan if v == "" else float(v) for v in r[2:]] for r in rows[1:]])
        x = x[:, ~np.isnan(x).any(axis=0)]
        category = np.array([r[1] for r in rows[1:]])
        label = "MMLU-Pro (26 real models + 74 perturbed copies)"
    else:
        x = (rng.random((12_032, 26)) < rng.uniform(0.2, 0.7, size=26)).astype(float)
        category = rng.integers(0, 14, size=12_032)
        label = "synthetic"
    cols = [x[:, k] for k in range(x.shape[1])]
    while len(cols) < 100:
        base = x[:, rng.integers(0, x.shape[1])]
        cols.append(np.where(rng.random(base.size) < 0.05, 1 - base, base))
    return np.column_stack(cols), category, label


def main() -> None:
    x, category, label = load()
    print(f"{label}: {x.shape[0]:,} items x {x.shape[1]} models, {x.shape[1] * (x.shape[1] - 1) // 2:,} pairs")
    for name, kwargs in [
        ("IID only", {}),
        ("+ clusters (14 categories, 1,000 cluster resamples)", {"cluster": category}),
        ("+ clusters, Holm, anytime", {"cluster": category, "correction": "holm", "anytime": True}),
    ]:
        t0 = time.perf_counter()
        res = lp.diagnose(x, pairs="all", rng=0, **kwargs)
        print(f"  diagnose(pairs='all') {name:<52} {time.perf_counter() - t0:7.2f} s   unresolved {res.n_unresolved}")
    order = np.argsort(-x.mean(axis=0), kind="stable")
    pairs = [(i, j) for i in range(100) for j in range(i + 1, 100)]
    t0 = time.perf_counter()
    for i, j in pairs[:200]:
        lp.compare(x[:, order[i]], x[:, order[j]], method="mcnemar_exact")
    per_pair = (time.perf_counter() - t0) / 200
    print(f"  loop of compare() over pairs: {per_pair * 1000:.1f} ms per pair -> {per_pair * len(pairs):.1f} s for all "
          f"{len(pairs):,} (IID only; extrapolated from 200)")


if __name__ == "__main__":
    main()
