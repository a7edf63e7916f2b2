"""The Bradley-Terry (and Davidson) fit on per-pair outcome counts: Newton on the cells, the sandwich
(per battle cell or per cluster) and the bootstrap of cells or clusters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._core.errors import DataError
from .._kernel.variance import Sandwich, sandwich
from ._battles import Battles

__all__ = ["Cells", "fit_cells"]


@dataclass
class Cells:
    """Deduplicated outcome counts: per ordered pair (pi, pj), wins of pi, wins of pj, ties."""

    m: int
    pi: np.ndarray
    pj: np.ndarray
    counts: np.ndarray  # (pairs, 3)

    @classmethod
    def from_cell_counts(cls, m: int, cell_ids: np.ndarray, counts: np.ndarray) -> Cells:
        """From per-cell counts (cell id = (pi * m + pj) * 3 + outcome)."""
        pair = cell_ids // 3
        uniq, inv = np.unique(pair, return_inverse=True)
        table = np.zeros((uniq.size, 3))
        np.add.at(table, (inv, cell_ids % 3), counts)
        return cls(m=m, pi=uniq // m, pj=uniq % m, counts=table)


def _score_terms(d: np.ndarray, tau: float | None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Per pair: scores in d per outcome (pairs x 3), scores in tau per outcome (or None), and the
    information blocks (pairs x 3: dd, d-tau, tau-tau) per battle.
    """
    if tau is None:  # ties = half a win: y in {1, 0, 1/2}
        p = special.expit(d)
        s_d = np.stack([1.0 - p, -p, 0.5 - p], axis=1)
        info = np.stack([p * (1.0 - p), np.zeros_like(p), np.zeros_like(p)], axis=1)
        return s_d, None, info
    nu = math.exp(tau)
    sh, ch = np.sinh(d / 2.0), np.cosh(d / 2.0)
    den = 2.0 * ch + nu
    base = sh / den
    s_d = np.stack([0.5 - base, -0.5 - base, -base], axis=1)
    s_t = np.stack([-nu / den, -nu / den, 1.0 - nu / den], axis=1)
    info = np.stack([(0.5 * ch * den - sh * sh) / den**2, -sh * nu / den**2, nu * (den - nu) / den**2], axis=1)
    return s_d, s_t, info


def _loglik(cells: Cells, theta: np.ndarray, tau: float | None) -> float:
    d = theta[cells.pi] - theta[cells.pj]
    won, lost, tied = cells.counts.T
    if tau is None:
        return float(np.sum((won + 0.5 * tied) * -np.logaddexp(0.0, -d) + (lost + 0.5 * tied) * -np.logaddexp(0.0, d)))
    log_den = np.logaddexp(np.logaddexp(d / 2.0, -d / 2.0), tau)
    return float(np.sum(won * d / 2.0 - lost * d / 2.0 + tied * tau - (won + lost + tied) * log_den))


def _information(cells: Cells, d: np.ndarray, tau: float | None) -> np.ndarray:
    """Fisher information of (theta, [tau]) summed over battles (observed = expected here)."""
    m = cells.m
    size = m + (tau is not None)
    _, _, info = _score_terms(d, tau)
    n = cells.counts.sum(axis=1)
    h = np.zeros((size, size))
    wgt = n * info[:, 0]
    np.add.at(h, (cells.pi, cells.pi), wgt)
    np.add.at(h, (cells.pj, cells.pj), wgt)
    np.add.at(h, (cells.pi, cells.pj), -wgt)
    np.add.at(h, (cells.pj, cells.pi), -wgt)
    if tau is not None:
        cross = n * info[:, 1]
        h[m, :m] = np.bincount(cells.pi, weights=cross, minlength=m) - np.bincount(cells.pj, weights=cross,
                                                                                   minlength=m)
        h[:m, m] = h[m, :m]
        h[m, m] = float(np.sum(n * info[:, 2]))
    return h


def fit_cells(cells: Cells, *, davidson: bool, tol: float = 1e-10, max_iter: int = 200) -> tuple[np.ndarray,
                                                                                                  float | None]:
    """The MLE (theta centred, log nu or None) by damped Newton steps on the sum-zero subspace.

    Raises DataError when the MLE does not exist (a model that never wins or never loses, or a
    comparison graph in pieces).
    """
    m = cells.m
    theta, tau = np.zeros(m), (math.log(max(cells.counts[:, 2].sum(), 0.5) / max(cells.counts.sum(), 1.0))
                               if davidson else None)
    size_p = m + davidson
    pin = np.zeros((size_p, size_p))
    pin[:m, :m] = 1.0 / m  # fixes the free constant of theta
    proj = np.eye(size_p)
    proj[:m, :m] -= 1.0 / m
    for _ in range(max_iter):
        d = theta[cells.pi] - theta[cells.pj]
        s_d, s_t, _ = _score_terms(d, tau)
        g_pair = np.sum(cells.counts * s_d, axis=1)
        grad = np.bincount(cells.pi, weights=g_pair, minlength=m) - np.bincount(cells.pj, weights=g_pair, minlength=m)
        if s_t is not None:
            grad = np.append(grad, np.sum(cells.counts * s_t))
        step = proj @ np.linalg.lstsq(_information(cells, d, tau) + pin, grad, rcond=None)[0]
        current = _loglik(cells, theta, tau)
        size = 1.0
        while size > 1e-8:
            new_tau = None if tau is None else tau + size * float(step[m])
            if _loglik(cells, theta + size * step[:m], new_tau) >= current - 1e-12 * abs(current):
                break
            size /= 2.0
        theta = theta + size * step[:m]
        if tau is not None:
            tau += size * float(step[m])
        if float(np.max(np.abs(size * step))) < tol:
            break
    else:
        msg = ("Bradley-Terry did not converge: some model never wins or never loses, or the models do not "
               "all connect through battles")
        raise DataError(msg)
    if not (np.all(np.isfinite(theta)) and np.max(np.abs(theta)) < 30):
        msg = ("Bradley-Terry has no finite estimate: some model never wins or never loses, or the models do not "
               "all connect through battles")
        raise DataError(msg)
    return theta - theta.mean(), tau


def cells_sandwich(enc: Battles, cells: Cells, theta: np.ndarray, tau: float | None,
              groups: np.ndarray | None) -> Sandwich:
    """The sandwich of the ratings (and Davidson's tau) from the kernel: meat summed per battle, or per
    cluster (CR1, G/(G-1), t on G - 1 df, not estimable with no more clusters than free parameters).
    """
    m = cells.m
    size = m + (tau is not None)
    d = theta[cells.pi] - theta[cells.pj]
    s_d, s_t, _ = _score_terms(d, tau)
    from scipy import sparse

    if groups is None:  # one cluster per battle: sum over cells of count x s s'
        root = np.sqrt(cells.counts.ravel())
        rows = np.arange(root.size)
        pi, pj = np.repeat(cells.pi, 3), np.repeat(cells.pj, 3)
        parts = [(rows, pi, root * s_d.ravel()), (rows, pj, -root * s_d.ravel())]
        if s_t is not None:
            parts.append((rows, np.full(rows.size, m), root * s_t.ravel()))
        n_rows = rows.size
    else:  # per cluster: the sum of its battles' scores (sparse: a cluster touches few models)
        n_rows = int(groups.max()) + 1
        pair_row = np.searchsorted(cells.pi * m + cells.pj, enc.ia * m + enc.ib)  # cells are sorted by pair
        sd = s_d[pair_row, enc.outcome]
        parts = [(groups, enc.ia, sd), (groups, enc.ib, -sd)]
        if s_t is not None:
            parts.append((groups, np.full(groups.size, m), s_t[pair_row, enc.outcome]))
    r, c, v = (np.concatenate(x) for x in zip(*parts, strict=True))
    scores = sparse.csr_matrix((v, (r, c)), shape=(n_rows, size))  # duplicates are summed
    meat = np.asarray((scores.T @ scores).toarray())
    pin = np.zeros((size, size))
    pin[:m, :m] = 1.0 / m  # the projection onto the constant the ratings are free of
    return sandwich(_information(cells, d, tau), meat, n_clusters=None if groups is None else n_rows,
                    n_free=size - 1, constraint=pin, what="free ratings")


def bootstrap_cells(enc: Battles, cell_id: np.ndarray, groups: np.ndarray | None, n_resamples: int,
               gen: np.random.Generator, *, davidson: bool) -> np.ndarray:
    """Refits on resampled battles (or whole clusters): rows of centred ratings (NaN: no finite MLE)."""
    from scipy import sparse

    m = len(enc.models)
    uniq, inv = np.unique(cell_id, return_inverse=True)
    out = np.full((n_resamples, m), np.nan)
    if groups is None:
        freq = np.bincount(inv).astype(float)
        freq /= freq.sum()
    else:
        g = int(groups.max()) + 1
        by_group = sparse.csr_matrix((np.ones(enc.n), (groups, inv)), shape=(g, uniq.size)).T.tocsr()
    for r in range(n_resamples):  # one resample at a time: memory O(cells), not O(resamples x cells)
        if groups is None:
            draw = gen.multinomial(enc.n, freq).astype(float)
        else:
            draw = by_group @ gen.multinomial(g, np.full(g, 1.0 / g)).astype(float)
        keep = draw > 0
        try:
            theta, _ = fit_cells(Cells.from_cell_counts(m, uniq[keep], draw[keep]), davidson=davidson, max_iter=100)
        except (DataError, np.linalg.LinAlgError):
            continue
        out[r] = theta
    return out
