"""diagnose by leaderboard size: time and peak memory for M models x N items, and the ratio of
the all-pairs run to the float32 GEMM (X'X) measured in the same process.

Each case runs in a fresh interpreter (peak RSS is per process). Synthetic 0/1 scores (each model
its own accuracy), 14 clusters for the "every regime" runs (Holm, clusters with 200 cluster
resamples, anytime). Cases whose score matrix would exceed ~1.2 GB (float64) are skipped. All
pairs: diagnose and the GEMM alternate three times in one process and the best time of each is
reported (on a VM, memory a process touches for the first time costs about 1 ms per MB: the
first run of either pays for it).

Run: ``.venv/bin/python benchmarks/scale.py`` (about 10 minutes); it prints the Markdown table
of benchmarks/README.md.
"""

from __future__ import annotations

import json
import subprocess
import sys

CASE = r"""
import json, resource, sys, time, warnings
import numpy as np
import llm_power as lp
warnings.simplefilter("ignore")
m, n, pairs, regimes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "all"
rng = np.random.default_rng(0)
x = (rng.random((n, m)) < rng.uniform(0.2, 0.8, m)).astype(np.float64)
cl = rng.integers(0, 14, n)
lp.diagnose(x[:200, :10])  # imports and BLAS warm-up
extra = dict(correction="holm", cluster=cl, cluster_resamples=200, anytime=True) if regimes else {}
elapsed, gemm = [], []
for _ in range(3 if pairs == "all" else 1):  # all pairs: best of 3 of each, alternating (same memory state)
    start = time.perf_counter()
    d = lp.diagnose(x, pairs=pairs, max_pairs=20_000_000, rng=0, **extra)
    elapsed.append(time.perf_counter() - start)
    n_pairs = int(len(d.columns["delta"]))
    del d
    if pairs == "all":
        start = time.perf_counter()
        xf = x.astype(np.float32)
        g = xf.T @ xf
        gemm.append(time.perf_counter() - start)
        del xf, g
elapsed, gemm = min(elapsed), (min(gemm) if gemm else None)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "gemm": gemm, "rss_mb": rss, "pairs": n_pairs}))
"""

SIZES = [(10, 1_000), (10, 100_000), (100, 1_000), (100, 12_032), (100, 100_000), (1_000, 12_032),
         (1_000, 100_000), (4_500, 12_032)]
MAX_CELLS = 150_000_000  # 1.2 GB of float64 scores


def run(m: int, n: int, pairs: str, regimes: str) -> dict[str, float]:
    """One case in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CASE, str(m), str(n), pairs, regimes], capture_output=True,
                         text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    """Print the table (Markdown)."""
    print("| models × items | pairs | adjacent, IID | adjacent, every regime | all pairs, IID | float32 GEMM | "
          "all / GEMM | peak RSS (all pairs) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for m, n in SIZES:
        if m * n > MAX_CELLS:
            continue
        adj = run(m, n, "adjacent", "iid")
        adj_all = run(m, n, "adjacent", "all")
        full = run(m, n, "all", "iid")
        print(f"| {m:,} × {n:,} | {full['pairs']:,} | {adj['seconds']:.2f} s | {adj_all['seconds']:.2f} s | "
              f"{full['seconds']:.2f} s | {full['gemm']:.2f} s | {full['seconds'] / full['gemm']:.1f}× | "
              f"{full['rss_mb']:,.0f} MB |", flush=True)


if __name__ == "__main__":
    main()
