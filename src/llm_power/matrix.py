"""Where diagnose's sufficient statistics come from: a score matrix in memory, or (in
:mod:`llm_power.engines.dask`) item shards held by the workers of a cluster.

A source answers the few questions diagnose asks of the data — per-model moments, the pairs'
discordant counts or sums of differences, per cluster when there are clusters — so that the
statistics, tests, verdicts and regimes are one code path whatever holds the items.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ._core.validation import all_rows
from ._kernel.sufficient import both_counts, pair_sums_binary, pair_sums_graded
from ._kernel.verdict import PairSums

__all__ = ["MatrixSource", "ScoreSource"]


class ScoreSource(Protocol):
    """The questions diagnose asks of the scores (columns are models in the source's order)."""

    n: int  # items
    n_models: int
    n_groups: int  # clusters (0: none)
    binary: bool

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per model: the mean score and the sum of squared deviations from it."""
        ...

    def select(self, keep: np.ndarray) -> ScoreSource:
        """The same items with only the columns ``keep``."""
        ...

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """0/1 scores: items both columns of each pair got right."""
        ...

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> PairSums:
        """0/1 scores: the pairs' sums from their discordant counts (and per cluster)."""
        ...

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> PairSums:
        """Graded scores: centred sums of the pairs' differences (and per cluster)."""
        ...

    def matrix(self) -> np.ndarray:
        """The items x models matrix itself (small benchmarks only: the per-pair choice of test
        for fewer than 30 graded items looks at the differences).
        """
        ...

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """With clusters: per cluster its size, and per model the sums of (x - mean) and (x - mean)^2
        (G,), (G, M), (G, M): what each model's cluster-robust interval needs.
        """
        ...


class MatrixSource:
    """A score matrix in memory (items x models, no missing values) and optional cluster codes."""

    def __init__(self, x: np.ndarray, codes: np.ndarray | None = None, n_groups: int = 0) -> None:
        self.x = x
        self.codes = codes
        self.n_groups = n_groups
        self.n, self.n_models = x.shape
        self.binary = all_rows(x, lambda block: (block == 0) | (block == 1))

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        means = self.x.mean(axis=0)
        if self.binary:  # sum (x - mean)^2 = n p (1 - p) for 0/1 scores: no pass over the matrix
            return means, self.n * means * (1.0 - means)
        m2 = np.empty(self.n_models)
        step = max(1, (1 << 22) // max(self.n, 1))  # centred squares of a few columns at a time
        for start in range(0, self.n_models, step):
            resid = self.x[:, start:start + step] - means[start:start + step]
            m2[start:start + step] = np.einsum("ij,ij->j", resid, resid)
        return means, m2

    def select(self, keep: np.ndarray) -> MatrixSource:
        return MatrixSource(self.x[:, keep], self.codes, self.n_groups)

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return both_counts(self.x, i, j)

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> PairSums:
        return pair_sums_binary(self.x, i, j, self.codes, self.n_groups, b, c)

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> PairSums:
        return pair_sums_graded(self.x, i, j, self.codes, self.n_groups)

    def matrix(self) -> np.ndarray:
        return self.x

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return model_cluster_sums(self.x, self.codes, self.n_groups, means)


def model_cluster_sums(x: np.ndarray, codes: np.ndarray | None, n_groups: int,
                       means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cluster sizes and per-model sums of centred scores and their squares, a few columns at a time."""
    if codes is None:
        msg = "no cluster labels"
        raise ValueError(msg)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups).astype(float)
    present = sizes > 0
    starts = np.r_[0, np.cumsum(sizes[present])[:-1]].astype(np.int64)
    r = np.zeros((n_groups, x.shape[1]))
    q = np.zeros((n_groups, x.shape[1]))
    step = max(1, (1 << 22) // max(x.shape[0], 1))
    for k in range(0, x.shape[1], step):
        block = x[order, k:k + step] - means[k:k + step]
        r[present, k:k + step] = np.add.reduceat(block, starts, axis=0)
        q[present, k:k + step] = np.add.reduceat(block * block, starts, axis=0)
    return sizes, r, q

