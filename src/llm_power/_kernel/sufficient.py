"""Sufficient statistics of pairs of models: the only place they are computed.

For 0/1 scores the 2x2 tables of all pairs come from one matrix product of the 0/1 matrix with
itself (exact integer arithmetic); for graded scores the per-pair differences are formed in
batches of bounded memory and centred before squaring. With clusters: per-cluster sums of
D - delta and of (D - delta)^2 (one Gram matrix per cluster for 0/1 scores). The verdicts of
cluster resamples, which are built on these sums, are in :mod:`.resampled`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core.errors import DataError

__all__ = ["PairSums", "PairwiseStatistics", "binary_cluster_both", "binary_cluster_counts", "binary_pair_sums",
           "both_counts", "discordant_counts", "gram_f32", "merge_pair_sums", "model_cluster_sums",
           "pair_sums", "pair_sums_binary", "pair_sums_graded", "paired_counts", "pairwise_statistics"]

#: float32 sums of 0/1 products are exact integers up to 2**24 terms: the Gram matrix of 0/1
#: scores is formed in float32 (twice BLAS's float64 speed, half its memory) over blocks of rows
F32_EXACT_ROWS = 1 << 24
#: below this many models the Gram matrix is always the cheaper way to the pair counts
DIRECT_MIN_MODELS = 400
#: elements of one batch of per-pair products (bounded memory)
BATCH_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class PairSums:
    """Per-pair statistics of the differences D (columns of an items x pairs matrix).

    ``delta`` mean of D; ``ss`` sum of squared deviations of D from delta; with clusters,
    ``resid`` (G x P) per-cluster sums of D - delta, ``resid_sq`` (G x P) per-cluster sums of
    (D - delta)^2 and ``sizes`` (G,).
    """

    n: int
    delta: np.ndarray
    ss: np.ndarray
    sizes: np.ndarray | None = None
    resid: np.ndarray | None = None
    resid_sq: np.ndarray | None = None

    def clusters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(sizes, resid, resid_sq)``; only for sums computed with cluster labels."""
        if self.sizes is None or self.resid is None or self.resid_sq is None:
            msg = "these pair sums were computed without cluster labels"
            raise ValueError(msg)
        return self.sizes, self.resid, self.resid_sq


def pair_sums(d: np.ndarray, codes: np.ndarray | None = None, n_groups: int = 0) -> PairSums:
    """Centred sums of an (n_items, n_pairs) matrix of differences, overall and per cluster.

    Centring at the mean before squaring keeps graded scores with a large common offset exact
    (no cancellation of x^2 terms); scores so large that their squares overflow are an error.
    """
    n = d.shape[0]
    delta = d.mean(axis=0)
    if not np.all(np.isfinite(delta)):
        msg = (
            "the mean score difference overflows: scores are too large to compare "
                        "(rescale them, e.g. divide by their largest absolute value)"
        )
        raise DataError(msg)
    resid = d - delta
    with np.errstate(over="ignore"):
        sq = resid * resid
        ss = sq.sum(axis=0)
    if not np.all(np.isfinite(ss)):
        msg = (
            "the variance of the score differences overflows: scores are too large "
                        "(rescale them, e.g. divide by their largest absolute value)"
        )
        raise DataError(msg)
    if codes is None:
        return PairSums(n=n, delta=delta, ss=ss)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups).astype(float)
    starts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
    r = np.add.reduceat(resid[order], starts, axis=0)
    q = np.add.reduceat(sq[order], starts, axis=0)
    return PairSums(n=n, delta=delta, ss=ss, sizes=sizes, resid=r, resid_sq=q)


def paired_counts(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int]:
    """The 2x2 table (n11, n10, n01, n00) of two aligned 0/1 arrays (one pair; all pairs: the Gram
    matrix of :func:`pairwise_statistics`).
    """
    a1, b1 = a == 1, b == 1
    n11 = int(np.count_nonzero(a1 & b1))
    n10 = int(np.count_nonzero(a1 & ~b1))
    n01 = int(np.count_nonzero(~a1 & b1))
    return n11, n10, n01, int(a.size - n11 - n10 - n01)


def discordant_counts(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """(b, c) = #(a right, b wrong), #(a wrong, b right) of two aligned 0/1 arrays (checked by the caller)."""
    return int(np.count_nonzero(a > b)), int(np.count_nonzero(a < b))


@dataclass(frozen=True)
class PairwiseStatistics:
    """Sufficient statistics of all pairs of models, from matrix products.

    For model columns i, j: ``n`` items, ``means[i]``, ``mean_diff[i, j]`` = mean(x_i - x_j),
    ``var_diff[i, j]`` = variance of x_i - x_j (ddof = 0), and for 0/1 scores the discordant
    counts ``b[i, j]`` = #(i right, j wrong) (so c = b.T).
    """

    n: int
    means: np.ndarray
    mean_diff: np.ndarray | None
    var_diff: np.ndarray | None
    binary: bool
    b: np.ndarray | None

    def __repr__(self) -> str:  # a data container: its shape, not its matrices (a notebook cell stays short)
        kind = "0/1 scores" if self.binary else "graded scores"
        return f"PairwiseStatistics({len(self.means):,} models, {self.n:,} items, {kind})"


def pairwise_statistics(x: np.ndarray) -> PairwiseStatistics:
    """All-pairs sufficient statistics of an (n_items, n_models) matrix (no missing values).

    Parameters
    ----------
    x : numpy.ndarray, shape (n_items, n_models)
        Per-item scores, one column per model, converted to float: 0/1 correctness or graded
        scores. Not validated here: NaN or inf propagate into the statistics.

    Returns
    -------
    PairwiseStatistics
        ``n`` = n_items; ``means``: shape (n_models,), each model's mean score; ``mean_diff`` and
        ``var_diff``: shape (n_models, n_models), mean and variance (ddof = 0, floored at 0) of
        the per-item difference x_i - x_j, zero on the diagonal; ``binary``: whether every score is
        0 or 1; ``b``: for 0/1 scores, shape (n_models, n_models), float counts of items model i got
        right and model j wrong (the other discordant count is ``b.T``), else None.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.resolution import pairwise_statistics
    >>> x = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]])
    >>> st = pairwise_statistics(x)
    >>> st.b.astype(int).tolist()   # b[i, j] = items model i got right and model j wrong
    [[0, 1, 2], [1, 0, 1], [1, 0, 0]]
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    means = x.mean(axis=0)
    binary = bool(np.all((x == 0) | (x == 1)))
    xc = x - means  # centre first: a large common offset must not cancel in the cross-products
    with np.errstate(over="ignore", invalid="ignore"):
        cov = xc.T @ xc / n
    second = np.diag(cov)
    mean_diff = means[:, None] - means[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        var_diff = np.maximum(second[:, None] + second[None, :] - 2.0 * cov, 0.0)
    b = None
    if binary:
        both = x.T @ x
        b = np.rint(x.sum(axis=0)[:, None] - both)  # i right, j wrong
    return PairwiseStatistics(n=n, means=means, mean_diff=mean_diff, var_diff=var_diff, binary=binary, b=b)


def both_counts(x: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Items both models of each pair (columns i, j of a 0/1 matrix) got right: exact counts.

    Few pairs (adjacent models: P = M - 1) are summed directly, n x P products in bounded
    batches; many pairs (all of them: P = M(M - 1)/2) come from the Gram matrix X'X, formed in
    float32 over blocks of at most 2**24 rows (exact) and accumulated in float64. The cost is
    n P multiply-adds against n M^2 / 2 in BLAS, which is ~100 times faster per operation.
    """
    n, m = x.shape
    if _direct(i.size, m):
        xt = np.ascontiguousarray(x.T)  # models as rows: gathering a model's scores reads contiguous memory
        out = np.empty(i.size)
        step = max(1, BATCH_ELEMENTS // max(n, 1))
        for start in range(0, i.size, step):
            sl = slice(start, start + step)
            out[sl] = np.einsum("ij,ij->i", xt[i[sl]], xt[j[sl]])
        return out
    gram = gram_f32(x)
    return np.asarray(gram[i, j])  # float32 counts are exact integers (below 2**24 items)


def _direct(n_pairs: int, m_models: int) -> bool:
    """Sum per-pair products (transposing the matrix once) rather than form the Gram matrix: for
    few pairs of many models. With a few hundred models the Gram matrix is cheaper either way.
    """
    return m_models > DIRECT_MIN_MODELS and n_pairs * 100 < m_models * m_models


def gram_f32(x: np.ndarray) -> np.ndarray:
    """X'X of a 0/1 matrix, exact: float32 products (exact integers below 2**24 rows), one block
    when the matrix is that short (the result stays float32), else blocks summed in float64.
    """
    n, m = x.shape
    if n <= F32_EXACT_ROWS:
        block = np.asarray(x, dtype=np.float32)
        return np.asarray(block.T @ block)
    gram = np.zeros((m, m))
    for start in range(0, n, F32_EXACT_ROWS):
        block = np.asarray(x[start:start + F32_EXACT_ROWS], dtype=np.float32)
        gram += block.T @ block
    return gram


def pair_sums_graded(x: np.ndarray, i: np.ndarray, j: np.ndarray, codes: np.ndarray | None, n_groups: int) -> PairSums:
    """Per-pair sums of the differences, computed from the differences themselves in batches of pairs."""
    n = x.shape[0]
    step = max(1, 4_000_000 // max(n, 1))
    parts = []
    for start in range(0, i.size, step):
        with np.errstate(over="ignore", invalid="ignore"):
            d = x[:, i[start:start + step]] - x[:, j[start:start + step]]
        if not np.all(np.isfinite(d)):
            msg = "the score differences overflow: scores are too large to compare (rescale them)"
            raise DataError(msg)
        parts.append(pair_sums(d, codes, n_groups))
    if len(parts) == 1:
        return parts[0]
    cat = np.concatenate
    return PairSums(n=n, delta=cat([p.delta for p in parts]), ss=cat([p.ss for p in parts]),
                    sizes=parts[0].sizes,
                    resid=None if codes is None else cat([p.resid for p in parts], axis=1),
                    resid_sq=None if codes is None else cat([p.resid_sq for p in parts], axis=1))


def pair_sums_binary(x: np.ndarray, i: np.ndarray, j: np.ndarray, codes: np.ndarray | None, n_groups: int,  # noqa: PLR0913, PLR0917
                      b: np.ndarray, c: np.ndarray,
                      counts: tuple[np.ndarray, np.ndarray] | None = None) -> PairSums:
    """:func:`pair_sums_graded` for 0/1 scores from counts: the discordant counts overall (b, c) and per
    cluster (one Gram matrix per cluster; ``counts``: those of :func:`binary_cluster_both`, already
    formed), exact in integer arithmetic.
    """
    n = x.shape[0]
    if codes is None:
        return binary_pair_sums(n, b, c)
    col, disc = (binary_cluster_counts(x, i, j, codes, n_groups) if counts is None else counts)
    sizes = np.bincount(codes, minlength=n_groups).astype(float)
    return binary_pair_sums(n, b, c, sizes=sizes, s_g=col[:, i] - col[:, j], disc=disc)


def binary_cluster_counts(x: np.ndarray, i: np.ndarray, j: np.ndarray, codes: np.ndarray,
                          n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster: correct answers of each model (G x models) and discordant items of each pair
    (G x pairs). Integer-valued, so the counts of disjoint sets of items add up exactly (the
    partial statistics of :mod:`llm_power.engines.dask`).
    """
    col, disc, _ = binary_cluster_both(x, i, j, codes, n_groups)
    return col, disc


def binary_cluster_both(x: np.ndarray, i: np.ndarray, j: np.ndarray, codes: np.ndarray,
                        n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`binary_cluster_counts` and the items both models of each pair got right over all
    clusters (:func:`both_counts`' numbers), the sum of the clusters' counts: with many pairs the
    per-cluster Gram matrices add up to X'X, so that one is not formed a second time.
    """
    n = x.shape[0]
    onehot = np.zeros((n, n_groups))
    onehot[np.arange(n), codes] = 1.0
    disc = np.empty((n_groups, i.size))
    total = np.zeros(i.size)
    m_models = x.shape[1]
    if _direct(i.size, m_models):  # few pairs of many models: per-pair products summed within clusters
        xt = np.ascontiguousarray(x.T)  # models as rows (no copy when x is already a transposed view)
        col = (xt @ onehot).T  # (G, models): correct answers per cluster, one matrix product
        step = max(1, BATCH_ELEMENTS // max(n, 1))
        for start in range(0, i.size, step):
            sl = slice(start, start + step)
            both = (xt[i[sl]] * xt[j[sl]]) @ onehot  # (batch, G)
            disc[:, sl] = col[:, i[sl]] + col[:, j[sl]] - 2.0 * both.T
            total[sl] = both.sum(axis=1)
    else:  # many pairs: one Gram matrix per cluster (few), not a loop over items or pairs; the rows of
        # each cluster are gathered from x as it is (no transposed copy of the matrix)
        col = np.asarray(onehot.T @ x, dtype=float)  # (G, models): correct answers per cluster
        for g in range(n_groups):
            both_g = np.asarray(gram_f32(x[codes == g])[i, j], dtype=float)
            disc[g] = col[g, i] + col[g, j] - 2.0 * both_g  # discordant items of the pair in cluster g
            total += both_g  # integers below 2**53: exact in any order
    return col, disc, total


def binary_pair_sums(n: int, b: np.ndarray, c: np.ndarray, *, sizes: np.ndarray | None = None,
                     s_g: np.ndarray | None = None, disc: np.ndarray | None = None) -> PairSums:
    """The pair sums of 0/1 scores from counts: overall discordant counts (b, c), and with clusters
    their sizes, per-cluster sums of the differences ``s_g`` and discordant items ``disc`` (G x P).
    """
    delta = (b - c) / n
    ss = (b + c) - n * delta * delta  # sum (D - delta)^2 = sum D^2 - n delta^2, D^2 = |D|
    if sizes is None or s_g is None or disc is None:
        return PairSums(n=n, delta=delta, ss=ss)
    resid = s_g - sizes[:, None] * delta
    resid_sq = disc - 2.0 * delta * s_g + sizes[:, None] * delta * delta
    return PairSums(n=n, delta=delta, ss=ss, sizes=sizes, resid=resid, resid_sq=np.maximum(resid_sq, 0.0))


def merge_pair_sums(parts: list[PairSums]) -> PairSums:
    """The pair sums of the union of disjoint sets of items from the sums of each set (each centred
    at its own mean): sums of squares are shifted to the common mean (Chan, Golub and LeVeque's
    pairwise update), never formed from raw squares, so no precision is lost to cancellation.
    """
    parts = [p for p in parts if p.n > 0]
    n = sum(p.n for p in parts)
    delta = np.sum([p.n * p.delta for p in parts], axis=0) / n
    ss = np.sum([p.ss + p.n * (p.delta - delta) ** 2 for p in parts], axis=0)
    if parts[0].sizes is None:
        return PairSums(n=n, delta=delta, ss=ss)
    sizes = np.sum([p.clusters()[0] for p in parts], axis=0)
    resid = np.zeros_like(parts[0].clusters()[1])
    resid_sq = np.zeros_like(resid)
    for p in parts:
        m, r, q = p.clusters()
        shift = p.delta - delta  # per pair: the part's mean minus the common mean
        resid_sq += q + 2.0 * shift * r + m[:, None] * shift * shift
        resid += r + m[:, None] * shift
    return PairSums(n=n, delta=delta, ss=ss, sizes=sizes, resid=resid, resid_sq=resid_sq)


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
