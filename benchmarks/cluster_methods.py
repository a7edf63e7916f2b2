"""The clustered regime's cost (issue 44): ``diagnose(pairs="all", cluster=...)`` against the IID
all-pairs diagnosis at leaderboard scale, and each ``cluster_method`` on MMLU-Pro's adjacent pairs.

- 1,000 models x 12,032 items (synthetic 0/1 scores, uint8; 14 clusters of MMLU-Pro's category
  sizes scaled to 12,032 items): the IID all-pairs diagnosis, the clustered one with its default
  1,000 cluster resamples (of the adjacent gaps), and without resamples. CPU seconds
  (``time.process_time``), best of ``--repeat``, interleaved in one process.
- MMLU-Pro's top 10 (the demo's data, 14 categories, 9 adjacent pairs): ``diagnose`` with each
  ``cluster_method`` (``wild``: 9,999 Rademacher draws, its p-values and inverted intervals), and the
  coarse-vs-fine test against MMLU-Pro's 91 sources (``cluster_fine``).

Run: ``python benchmarks/cluster_methods.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import md_table  # noqa: E402

import llm_power as lp  # noqa: E402
from llm_power.io.demo import load_mmlu_pro  # noqa: E402

SIZES = np.array([1351, 1081, 1139, 1101, 818, 1645, 1423, 1497, 1083, 924, 1017, 835, 1299, 819])


def cpu(fn) -> float:  # noqa: ANN001
    start = time.process_time()
    fn()
    return time.process_time() - start


def leaderboard(repeat: int) -> list[list[str]]:
    m, n = 1000, 12_032
    rng = np.random.default_rng(0)
    x = (rng.random((n, m), dtype=np.float32) < rng.uniform(0.3, 0.85, m)).astype(np.uint8)
    counts = np.round(SIZES * n / SIZES.sum()).astype(int)
    codes = np.repeat(np.arange(SIZES.size), counts)[:n]
    codes = np.r_[codes, np.full(n - codes.size, SIZES.size - 1)]
    runs = {"IID": lambda: lp.diagnose(x, pairs="all", max_pairs=10**7, rng=0),
            "clustered, 1,000 resamples (default)": lambda: lp.diagnose(x, pairs="all", max_pairs=10**7,
                                                                          cluster=codes, rng=0),
            "clustered, no resamples": lambda: lp.diagnose(x, pairs="all", max_pairs=10**7, cluster=codes,
                                                           cluster_resamples=0, rng=0)}
    best = {name: min(cpu(fn) for _ in range(repeat)) for name, fn in runs.items()}
    return [[name, f"{t:.2f}", f"{t / best['IID']:.1f}x"] for name, t in best.items()]


def mmlu_pro(repeat: int) -> list[list[str]]:
    data = load_mmlu_pro()
    rows = []
    for method in ("cr2", "cv3", "wild"):
        t = min(cpu(lambda method=method: lp.diagnose(data.scores, models=data.models, cluster=data.clusters,
                                                      top=10, cluster_method=method, cluster_resamples=0, rng=0))
                for _ in range(repeat))
        diag = lp.diagnose(data.scores, models=data.models, cluster=data.clusters, top=10, cluster_method=method,
                           cluster_resamples=0, rng=0)
        rows.append([method, f"{t:.2f}", str(diag.n_unresolved["cluster"])])
    src = sources(data.items)
    def fine() -> lp.Diagnosis:
        return lp.diagnose(data.scores, models=data.models, cluster=data.clusters, cluster_fine=src, top=10,
                           cluster_resamples=0, rng=0)

    t = min(cpu(fine) for _ in range(repeat))
    rows.append(["cr2 + coarse vs fine (91 sources, 999 draws)", f"{t:.2f}", str(fine().n_unresolved["cluster"])])
    return rows


def sources(items: list[str]) -> list[str]:
    """MMLU-Pro's `src` of each question (../shared/data/mmlu_pro_tiger/items.csv)."""
    import csv

    path = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "mmlu_pro_tiger", "items.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        src = {row["question_id"]: row["src"] for row in csv.DictReader(fh)}
    return [src[i] for i in items]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print("1,000 models x 12,032 items, all 499,500 pairs, 14 clusters (CPU seconds, best of "
          f"{args.repeat})\n")
    print(md_table(["diagnose", "CPU-s", "/ IID"], leaderboard(args.repeat)))
    print("\nMMLU-Pro's top 10, 14 categories, 9 adjacent pairs, no resamples\n")
    print(md_table(["cluster_method", "CPU-s", "unresolved (of 9)"], mmlu_pro(args.repeat)))


if __name__ == "__main__":
    main()
