r"""Every pair of models at once, from cross-products: the variance of each pair's per-item difference and
the mean squares of each matched pair's per-run difference, without a rows x pairs array.

For P = M (M - 1)/2 pairs of M models the direct computation builds each pair's difference (items x pairs,
or items x runs x pairs), P n (R) numbers: 540 million at 300 models x 12,032 items, and more with runs.
Both quantities are quadratic forms of differences of columns, so one Gram matrix of the centred columns
(an n x M by M x n product) gives all of them:

    sum_i ((x_ia - xbar_a) - (x_ib - xbar_b))^2 = G_aa + G_bb - 2 G_ab,   G = C'C,  C the centred columns.

The subtraction loses digits when the difference is small beside the two columns' own sums of squares
(two nearly identical models); those pairs (below :data:`GRAM_CANCEL` of G_aa + G_bb) are recomputed
directly, so every pair agrees with the direct computation to about 1e-13 relative (the direct one is
itself rounded at that order) and a pair of identical columns gives exactly 0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GRAM_CANCEL", "matched_pair_mean_squares", "pair_difference_variance"]

#: a pair whose sum of squares from the Gram matrix is below this share of its two columns' own is
#: recomputed directly (the subtraction would have lost more than 2 of its 16 digits)
GRAM_CANCEL = 1e-2
#: numbers per chunk of a direct recomputation or of the stacked residuals (bounded memory)
_CHUNK = 1 << 22


def _gram_pairs(gram: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """G_ii + G_jj - 2 G_ij per pair (clipped at 0) and the pairs that cancelled (indices into i, j)."""
    diag = np.diag(gram)
    own = diag[i] + diag[j]
    ss = np.maximum(own - 2.0 * gram[i, j], 0.0)
    return ss, np.flatnonzero(ss <= GRAM_CANCEL * own)


def pair_difference_variance(x: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair, the sample variance (ddof 1) over the rows of ``x[:, i] - x[:, j]`` (x: rows x columns)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    c = x - x.mean(axis=0)
    ss, redo = _gram_pairs(c.T @ c, i, j)
    out = ss / (n - 1.0)
    step = max(1, _CHUNK // max(n, 1))
    for start in range(0, redo.size, step):
        sel = redo[start:start + step]
        out[sel] = (x[:, i[sel]] - x[:, j[sel]]).var(axis=0, ddof=1)
    return np.asarray(out)


def _direct_matched(blocks: list[np.ndarray], a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean squares of the per-run differences of the pairs (a, b), from the differences themselves."""
    d = (np.stack([np.asarray(blocks[k], dtype=float) for k in a.tolist()])
         - np.stack([np.asarray(blocks[k], dtype=float) for k in b.tolist()]))  # (pairs, n, R)
    n, r = d.shape[1], d.shape[2]
    im, rm = d.mean(axis=2), d.mean(axis=1)
    g = im.mean(axis=1)
    ms_run = n * np.sum((rm - g[:, None]) ** 2, axis=1) / (r - 1.0)
    resid = d - im[:, :, None] - rm[:, None, :] + g[:, None, None]
    return ms_run, np.sum(resid * resid, axis=(1, 2)) / ((n - 1.0) * (r - 1.0))


def matched_pair_mean_squares(blocks: list[np.ndarray], i: np.ndarray,
                              j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (i, j) of models with matched runs (every block n x R, the same R), MS_run and MS_res of
    the two-way layout of the per-item, per-run difference D = y_i - y_j: the run means of D are the
    differences of the run means, and its residuals the differences of the models' residuals, so MS_res
    comes from the Gram matrix of the models' residuals (n R x M, accumulated over chunks of items); pairs
    whose run deviations or residuals nearly cancel are recomputed from their differences.
    """
    m = len(blocks)
    n, r = (int(s) for s in np.shape(blocks[0]))
    run_dev = np.empty((r, m))
    im = np.empty((n, m))
    rm = np.empty((r, m))
    g = np.empty(m)
    for k, blk in enumerate(blocks):
        y = np.asarray(blk, dtype=float)
        im[:, k], rm[:, k] = y.mean(axis=1), y.mean(axis=0)
        g[k] = im[:, k].mean()
        run_dev[:, k] = rm[:, k] - g[k]
    dev = run_dev[:, i] - run_dev[:, j]
    ms_run = n * np.sum(dev * dev, axis=0) / (r - 1.0)
    gram = np.zeros((m, m))
    rows = max(1, _CHUNK // max(r * m, 1))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        e = np.stack([np.asarray(blk[start:stop], dtype=float) for blk in blocks], axis=2)  # items x R x M
        e -= im[start:stop, None, :]
        e -= rm[None, :, :]
        e += g
        flat = e.reshape(-1, m)
        gram += flat.T @ flat
    ss, redo = _gram_pairs(gram, i, j)
    ms_res = ss / ((n - 1.0) * (r - 1.0))
    own_run = np.sum(run_dev * run_dev, axis=0)
    redo = np.union1d(redo, np.flatnonzero(np.sum(dev * dev, axis=0) <= GRAM_CANCEL * (own_run[i] + own_run[j])))
    step = max(1, _CHUNK // max(n * r, 1))
    for start in range(0, redo.size, step):
        sel = redo[start:start + step]
        ms_run[sel], ms_res[sel] = _direct_matched(blocks, i[sel], j[sel])
    return ms_run, ms_res
