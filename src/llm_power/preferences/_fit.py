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

__all__ = ["Cells", "battle_meat", "battle_scores", "bootstrap_cells", "cells_sandwich", "cluster_meat", "count_cells",
           "fit_cells", "ratings_sandwich"]


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
    if tau is None:  # log(1 + e^d) = log(1 + e^-d) + d: one logaddexp per pair
        return float(-np.sum((won + lost + tied) * np.logaddexp(0.0, -d) + (lost + 0.5 * tied) * d))
    log_den = np.logaddexp(np.logaddexp(d / 2.0, -d / 2.0), tau)
    return float(np.sum(won * d / 2.0 - lost * d / 2.0 + tied * tau - (won + lost + tied) * log_den))


def _laplacian(m: int, pi: np.ndarray, pj: np.ndarray, wgt: np.ndarray) -> np.ndarray:
    """The sum over pairs of wgt (e_pi - e_pj)(e_pi - e_pj)' (m x m), by one bincount over the m x m grid."""
    flat = np.bincount(pi * m + pj, weights=wgt, minlength=m * m).reshape(m, m)
    out: np.ndarray = -(flat + flat.T)
    out[np.diag_indices(m)] = np.bincount(pi, weights=wgt, minlength=m) + np.bincount(pj, weights=wgt, minlength=m)
    return out


def _information(cells: Cells, d: np.ndarray, tau: float | None) -> np.ndarray:
    """Fisher information of (theta, [tau]) summed over battles (observed = expected here)."""
    m = cells.m
    size = m + (tau is not None)
    _, _, info = _score_terms(d, tau)
    n = cells.counts.sum(axis=1)
    h = np.zeros((size, size))
    h[:m, :m] = _laplacian(m, cells.pi, cells.pj, n * info[:, 0])
    if tau is not None:
        cross = n * info[:, 1]
        h[m, :m] = np.bincount(cells.pi, weights=cross, minlength=m) - np.bincount(cells.pj, weights=cross,
                                                                                   minlength=m)
        h[:m, m] = h[m, :m]
        h[m, m] = float(np.sum(n * info[:, 2]))
    return h


def _newton_direction(information: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Solve (information + pin) x = grad: a Cholesky solve (the pinned information is positive definite
    for connected battles), least squares when rounding makes it indefinite.
    """
    from scipy import linalg

    try:
        return np.asarray(linalg.cho_solve(linalg.cho_factor(information, check_finite=False), grad,
                                           check_finite=False))
    except linalg.LinAlgError:
        return np.asarray(np.linalg.lstsq(information, grad, rcond=None)[0])


def fit_cells(cells: Cells, *, davidson: bool, tol: float = 1e-10, max_iter: int = 200,  # noqa: PLR0913
              start: tuple[np.ndarray, float | None] | None = None) -> tuple[np.ndarray, float | None]:
    """The MLE (theta centred, log nu or None) by damped Newton steps on the sum-zero subspace, from 0
    (or from ``start``, e.g. the full-data fit for a bootstrap refit).

    Raises DataError when the MLE does not exist (a model that never wins or never loses, or a
    comparison graph in pieces).
    """
    m = cells.m
    if start is None:
        theta, tau = np.zeros(m), (math.log(max(cells.counts[:, 2].sum(), 0.5) / max(cells.counts.sum(), 1.0))
                                   if davidson else None)
    else:
        theta, tau = start[0].copy(), start[1]
    size_p = m + davidson
    pin = np.zeros((size_p, size_p))
    pin[:m, :m] = 1.0 / m  # fixes the free constant of theta
    proj = np.eye(size_p)
    proj[:m, :m] -= 1.0 / m
    current = _loglik(cells, theta, tau)
    for _ in range(max_iter):
        d = theta[cells.pi] - theta[cells.pj]
        s_d, s_t, _ = _score_terms(d, tau)
        g_pair = np.sum(cells.counts * s_d, axis=1)
        grad = np.bincount(cells.pi, weights=g_pair, minlength=m) - np.bincount(cells.pj, weights=g_pair, minlength=m)
        if s_t is not None:
            grad = np.append(grad, np.sum(cells.counts * s_t))
        step = proj @ _newton_direction(_information(cells, d, tau) + pin, grad)
        size = 1.0
        while True:  # halve the step until the log-likelihood does not fall (at most down to 2^-27)
            new_tau = None if tau is None else tau + size * float(step[m])
            value = _loglik(cells, theta + size * step[:m], new_tau)
            if value >= current - 1e-12 * abs(current) or size <= 1e-8:
                break
            size /= 2.0
        current = value
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


def cells_sandwich(enc: Battles, cells: Cells, theta: np.ndarray, tau: float | None,  # noqa: PLR0913
                   groups: np.ndarray | None,
                   cells_at: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> Sandwich:
    """The sandwich of the ratings (and Davidson's tau) from the kernel: meat summed per battle, or per
    cluster (CR1, G/(G-1), t on G - 1 df, not estimable with no more clusters than free parameters).
    """
    m = cells.m
    if groups is None:  # one cluster per battle: sum over cells of count x s s' (a Laplacian in theta)
        return ratings_sandwich(cells, theta, tau, battle_meat(cells, theta, tau), None)
    n_rows = int(groups.max()) + 1
    if cells_at is None:
        sd, st = battle_scores(cells, theta, tau, enc.ia, enc.ib, enc.outcome)
    else:  # each battle's cell is known: look the scores up per cell, then per battle
        uniq, _, inv = cells_at
        sd, st = battle_scores(cells, theta, tau, uniq // 3 // m, uniq // 3 % m, uniq % 3)
        sd, st = sd[inv], None if st is None else st[inv]
    meat = cluster_meat(m, groups, n_rows, enc.ia, enc.ib, (sd, st))
    return ratings_sandwich(cells, theta, tau, meat, n_rows)


def battle_meat(cells: Cells, theta: np.ndarray, tau: float | None) -> np.ndarray:
    """The meat with one unit per battle: the sum over cells of count x s s' (a Laplacian in theta,
    with Davidson's tau row).
    """
    m = cells.m
    size = m + (tau is not None)
    d = theta[cells.pi] - theta[cells.pj]
    s_d, s_t, _ = _score_terms(d, tau)
    meat = np.zeros((size, size))
    meat[:m, :m] = _laplacian(m, cells.pi, cells.pj, np.sum(cells.counts * s_d * s_d, axis=1))
    if s_t is not None:
        cross = np.sum(cells.counts * s_d * s_t, axis=1)
        meat[m, :m] = np.bincount(cells.pi, weights=cross, minlength=m) - np.bincount(cells.pj, weights=cross,
                                                                                      minlength=m)
        meat[:m, m] = meat[m, :m]
        meat[m, m] = float(np.sum(cells.counts * s_t * s_t))
    return meat


def battle_scores(cells: Cells, theta: np.ndarray, tau: float | None, ia: np.ndarray, ib: np.ndarray,  # noqa: PLR0913
                  outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Each battle's score in theta_a (minus it in theta_b) and in Davidson's tau (or None), looked up
    in its cell (every battle's pair must be among the cells, which are sorted by pair).
    """
    m = cells.m
    d = theta[cells.pi] - theta[cells.pj]
    s_d, s_t, _ = _score_terms(d, tau)
    key = cells.pi * m + cells.pj
    if m * m <= 1 << 24:  # a table of the M^2 pairs: one gather per battle
        row_of = np.zeros(m * m, dtype=np.intp)
        row_of[key] = np.arange(key.size)
        row = row_of[ia * m + ib]
    else:
        row = np.searchsorted(key, ia * m + ib)
    return s_d[row, outcome], None if s_t is None else s_t[row, outcome]


def cluster_meat(m: int, groups: np.ndarray, n_groups: int, ia: np.ndarray, ib: np.ndarray,  # noqa: PLR0913
                 scores: tuple[np.ndarray, np.ndarray | None], *, count: np.ndarray | None = None) -> np.ndarray:
    """The meat summed per cluster: sum over clusters g of s_g s_g', s_g the sum of its battles' scores
    (times ``count`` when a row stands for that many identical battles). Sparse: a cluster touches few
    models, so the clusters x parameters score matrix is never dense; the result is dense (p x p).
    """
    from scipy import sparse

    sd, st = scores
    if count is not None:
        sd = sd * count
        st = None if st is None else st * count
    parts = [(groups, ia, sd), (groups, ib, -sd)]
    if st is not None:
        parts.append((groups, np.full(groups.size, m), st))
    r, c, v = (np.concatenate(x) for x in zip(*parts, strict=True))
    by_cluster = sparse.csr_matrix((v, (r, c)), shape=(n_groups, m + (st is not None)))  # duplicates are summed
    return np.asarray((by_cluster.T @ by_cluster).toarray())


def ratings_sandwich(cells: Cells, theta: np.ndarray, tau: float | None, meat: np.ndarray,
                     n_clusters: int | None) -> Sandwich:
    """The kernel's sandwich of the ratings (and tau) at the fit, given the meat (per battle, or summed
    over ``n_clusters`` clusters: CR1 and G - 1 df).
    """
    m = cells.m
    size = m + (tau is not None)
    d = theta[cells.pi] - theta[cells.pj]
    pin = np.zeros((size, size))
    pin[:m, :m] = 1.0 / m  # the projection onto the constant the ratings are free of
    return sandwich(_information(cells, d, tau), meat, n_clusters=n_clusters, n_free=size - 1, constraint=pin,
                    what="free ratings")


def count_cells(enc: Battles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (model_a, model_b, outcome) cells of the battles in one pass: sorted cell ids
    ((a * M + b) * 3 + outcome), their counts, and each battle's position among them.

    One ``np.bincount`` over the 3 M^2 cells when that grid is small (up to 2^24 cells, about 2,400
    models), a sort otherwise.
    """
    m = len(enc.models)
    cell_id = (enc.ia * m + enc.ib) * 3 + enc.outcome
    if 3 * m * m <= 1 << 24:
        grid = np.bincount(cell_id, minlength=3 * m * m)
        uniq = np.flatnonzero(grid)
        position = np.cumsum(grid > 0) - 1
        return uniq, grid[uniq].astype(float), position[cell_id]
    uniq, inv, counts = np.unique(cell_id, return_inverse=True, return_counts=True)
    return uniq, counts.astype(float), inv


def _resample_table(m: int, uniq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fixed layout of the cells for refits: pairs (pi, pj) and each cell's (pair row, outcome)."""
    pair = uniq // 3
    pairs, row = np.unique(pair, return_inverse=True)
    return pairs // m, pairs % m, row, uniq % 3


def bootstrap_cells(enc: Battles, cells_at: tuple[np.ndarray, np.ndarray, np.ndarray],  # noqa: PLR0913
                    groups: np.ndarray | None, n_resamples: int, gen: np.random.Generator, *, davidson: bool,
                    start: tuple[np.ndarray, float | None]) -> np.ndarray:
    """Refits on resampled battles (or whole clusters): rows of centred ratings (NaN: no finite MLE).

    A resample is a multinomial draw of cell counts (of clusters, summed into cells through the
    clusters' cell counts), never a re-reading of battles; each refit starts at the full-data fit
    ``start``. A resample in which a model never wins (or never loses; ties count as both) has no
    finite MLE and gives a NaN row without a fit.
    """
    from scipy import sparse

    m = len(enc.models)
    uniq, counts, inv = cells_at
    pi, pj, row, outcome = _resample_table(m, uniq)
    out = np.full((n_resamples, m), np.nan)
    if groups is None:
        freq = counts / counts.sum()
    else:
        g = int(groups.max()) + 1
        by_group = sparse.csr_matrix((np.ones(enc.n), (groups, inv)), shape=(g, uniq.size)).T.tocsr()
    table = np.zeros((pi.size, 3))
    for r in range(n_resamples):  # one resample at a time: memory O(cells), not O(resamples x cells)
        if groups is None:
            draw = gen.multinomial(enc.n, freq).astype(float)
        else:
            draw = by_group @ gen.multinomial(g, np.full(g, 1.0 / g)).astype(float)
        table[row, outcome] = draw
        won, lost, tied = table[:, 0], table[:, 1], table[:, 2]
        wins = np.bincount(pi, weights=won + tied, minlength=m) + np.bincount(pj, weights=lost + tied, minlength=m)
        losses = np.bincount(pi, weights=lost + tied, minlength=m) + np.bincount(pj, weights=won + tied, minlength=m)
        if not (np.all(wins > 0) and np.all(losses > 0)):
            continue
        try:
            theta, _ = fit_cells(Cells(m=m, pi=pi, pj=pj, counts=table), davidson=davidson, max_iter=100,
                                 start=start)
        except (DataError, np.linalg.LinAlgError):
            continue
        out[r] = theta
    return out
