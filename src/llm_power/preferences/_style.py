r"""Bradley-Terry with battle covariates (style control) and sampling weights: the fit (issue 46, part 2-3).

Battle i between models a_i and b_i, with outcome y_i (1: a won, 0: b won, 1/2: a tie, as
``ties="half"``), covariates x_i (differences a - b of answer length, markdown counts, ...) and a
weight w_i (inverse sampling probability; 1 by default):

.. math:: \Pr(a_i \text{ beats } b_i) = \sigma(\theta_{a_i} - \theta_{b_i} + x_i^\top\beta),

fitted by maximising :math:`\sum_i w_i [y_i \log p_i + (1 - y_i)\log(1 - p_i)]` (a logistic regression
with a row +1/-1 per battle's two models; ratings identified by :math:`\sum\theta = 0`) with damped
Newton steps. The information :math:`Z^\top W Z` is formed without the battles x models design: its
ratings block is the Laplacian of the per-pair weights, the cross block per-model sums of
:math:`w p(1-p) x`, and :math:`X^\top W X`. The covariance is the kernel's sandwich
(:func:`llm_power._kernel.variance.sandwich`) with the meat summed per battle or per cluster (prompt),
each unit's score :math:`\sum w_i (y_i - p_i) z_i`; CR1 on G - 1 df for clusters.

The style-controlled ratings are :math:`\theta`; the raw ones are the fit without covariates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .._core.errors import DataError
from .._kernel.variance import Sandwich, sandwich

__all__ = ["StyleFit", "battle_columns", "fit_style"]


@dataclass(frozen=True)
class StyleFit:
    """The ratings (mean 0) and covariate coefficients of a Bradley-Terry fit with covariates, their
    sandwich covariance ((m + p) x (m + p): ratings first), and the fit's bookkeeping.
    """

    ratings: np.ndarray
    coefficients: np.ndarray
    covariance: np.ndarray
    df: float
    n_clusters: int | None
    not_estimable: str | None
    iterations: int
    log_likelihood: float
    parts: Sandwich | None = None  # the kernel's sandwich ((m + p) parameters): which contrasts it sees


def _linear(theta: np.ndarray, beta: np.ndarray, ia: np.ndarray, ib: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.asarray(theta[ia] - theta[ib] + (x @ beta if beta.size else 0.0), dtype=float)


def _loglik(eta: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    # y log p + (1 - y) log(1 - p) = y eta - log(1 + e^eta)
    return float(np.sum(w * (y * eta - np.logaddexp(0.0, eta))))


def _information(m: int, ia: np.ndarray, ib: np.ndarray, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Z' diag(v) Z for Z = [e_a - e_b, x], without forming Z."""
    p = x.shape[1]
    info = np.zeros((m + p, m + p))
    lap: np.ndarray
    if m * m <= _GRID_CELLS:  # one bincount over the m x m grid of ordered pairs
        lap = -np.bincount(ia * m + ib, weights=v, minlength=m * m).reshape(m, m)
    else:  # a sort over the pairs that occur (memory O(battles), not m^2 cells)
        codes, inv = np.unique(ia.astype(np.int64) * m + ib, return_inverse=True)
        lap = np.zeros((m, m))
        lap[codes // m, codes % m] = -np.bincount(inv, weights=v, minlength=codes.size)
    lap = lap + lap.T
    lap[np.diag_indices(m)] = -lap.sum(axis=1)
    info[:m, :m] = lap
    if p:
        vx = v[:, None] * x
        for k in range(p):
            info[:m, m + k] = np.bincount(ia, weights=vx[:, k], minlength=m) - np.bincount(ib, weights=vx[:, k],
                                                                                          minlength=m)
        info[m:, :m] = info[:m, m:].T
        info[m:, m:] = x.T @ vx
    return info


#: the information's ratings block is summed on the m x m grid up to this many cells (2,000 models)
_GRID_CELLS = 4_000_000


def _gradient(m: int, ia: np.ndarray, ib: np.ndarray, x: np.ndarray, r: np.ndarray) -> np.ndarray:
    g = np.bincount(ia, weights=r, minlength=m) - np.bincount(ib, weights=r, minlength=m)
    return np.concatenate([g, x.T @ r]) if x.shape[1] else g


def fit_style(ia: Any, ib: Any, y: Any, m: int, *, covariates: Any = None, weights: Any = None,  # noqa: PLR0913
              frequency: Any = None, groups: Any = None, tol: float = 1e-10, max_iter: int = 200) -> StyleFit:
    """Bradley-Terry with battle covariates and weights (module docstring).

    Parameters
    ----------
    ia, ib : int arrays (n,)
        The two models of each battle (codes in [0, m)).
    y : float array (n,)
        1 when the first model won, 0 when the second did, 1/2 for a tie.
    m : int
        The number of models.
    covariates : float array (n, p), optional
        Per battle, the covariates (differences first minus second model).
    weights : float array (n,), optional
        Per battle, a positive weight (an inverse sampling probability).
    frequency : float array (n,), optional
        Per row, how many identical battles it stands for (a count, > 0): the row enters the
        likelihood and the information ``frequency`` times, and the meat per battle as ``frequency``
        battles, f (w (y - p))^2 -- not as one battle of weight f, (f w (y - p))^2. Per cluster, the
        row adds f w (y - p) to its cluster's score. Equal to the fit of the expanded battles.
    groups : int array (n,), optional
        Cluster codes (prompts) for the cluster-robust sandwich; default one unit per battle.
    tol, max_iter
        Newton's stopping rule (largest step) and its most iterations.

    Returns
    -------
    StyleFit
    """
    ia, ib = np.asarray(ia, dtype=np.intp), np.asarray(ib, dtype=np.intp)
    y = np.asarray(y, dtype=float)
    n = y.size
    x = np.zeros((n, 0)) if covariates is None else np.asarray(covariates, dtype=float).reshape(n, -1)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    f = np.ones(n) if frequency is None else np.asarray(frequency, dtype=float)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(w)) and np.all(w > 0) and np.all(np.isfinite(f))
            and np.all(f > 0)):
        msg = "covariates must be finite, and weights and frequencies finite and positive"
        raise DataError(msg)
    w_sample, w = w, w * f  # the likelihood's weight of a row: its battles' weight times their number
    p = x.shape[1]
    theta, beta = np.zeros(m), np.zeros(p)
    pin = np.zeros((m + p, m + p))
    pin[:m, :m] = 1.0 / m  # the ratings' constant, fixed by sum(theta) = 0
    eta = _linear(theta, beta, ia, ib, x)
    ll = _loglik(eta, y, w)
    iterations = 0
    while True:
        iterations += 1
        if iterations > max_iter:
            msg = f"the Bradley-Terry fit with covariates did not converge in {max_iter} Newton steps"
            raise DataError(msg)
        prob = special.expit(eta)
        grad = _gradient(m, ia, ib, x, w * (y - prob))
        info = _information(m, ia, ib, x, w * prob * (1.0 - prob))
        step = np.linalg.solve(info + pin, grad)
        step[:m] -= step[:m].mean()
        scale = 1.0
        while True:  # damped: halve until the log-likelihood does not fall
            t_new, b_new = theta + scale * step[:m], beta + scale * step[m:]
            eta_new = _linear(t_new, b_new, ia, ib, x)
            ll_new = _loglik(eta_new, y, w)
            if ll_new >= ll - 1e-12 * abs(ll) or scale < 1e-8:
                break
            scale /= 2.0
        theta, beta, eta, ll = t_new, b_new, eta_new, ll_new
        if float(np.max(np.abs(scale * step))) < tol:
            break
    if not (np.all(np.isfinite(theta)) and np.max(np.abs(theta)) < 30):
        msg = ("Bradley-Terry has no finite estimate: some model never wins or never loses, or the models do not "
               "all connect through battles")
        raise DataError(msg)
    prob = special.expit(eta)
    r = w_sample * (y - prob)  # one battle's score factor
    info = _information(m, ia, ib, x, w * prob * (1.0 - prob))
    meat, n_clusters = _meat(m, ia, ib, x, r, groups, f=f)
    sw: Sandwich = sandwich(info, meat, n_clusters=n_clusters, n_free=m - 1 + p, constraint=pin,
                            what="free ratings and coefficients")
    return StyleFit(ratings=theta - theta.mean(), coefficients=beta, covariance=sw.covariance, df=sw.df,
                    n_clusters=n_clusters, not_estimable=sw.not_estimable, iterations=iterations, log_likelihood=ll,
                    parts=sw)


def _meat(m: int, ia: np.ndarray, ib: np.ndarray, x: np.ndarray, r: np.ndarray,  # noqa: PLR0913
          groups: Any, *, f: np.ndarray) -> tuple[np.ndarray, int | None]:
    """Sum over units (battles, or clusters) of the outer product of their score sums (a row of
    frequency f is f battles: f r^2 per battle, f r into its cluster's sum).
    """
    p = x.shape[1]
    if groups is None:
        return _information(m, ia, ib, x, f * r * r), None
    r = f * r
    from scipy import sparse

    uniq, g = np.unique(np.asarray(groups), return_inverse=True)  # compact codes: G = the clusters present
    g = g.astype(np.intp)
    rows = int(uniq.size)
    parts = [(g, ia, r), (g, ib, -r)] + [(g, np.full(g.size, m + k), r * x[:, k]) for k in range(p)]
    rr, cc, vv = (np.concatenate(v) for v in zip(*parts, strict=True))
    scores = sparse.csr_matrix((vv, (rr, cc)), shape=(rows, m + p))
    return np.asarray((scores.T @ scores).toarray()), rows


def battle_columns(battles: Any, columns: Any, n: int, what: str) -> tuple[np.ndarray | None, list[str] | None]:
    """Numeric per-battle columns: names of ``battles``' columns, or an array (n,) / (n, p); (values n x p,
    names), (None, None) for None. Weights (``what="weights"``) must be positive.
    """
    if columns is None:
        return None, None
    if isinstance(columns, str):
        columns = [columns]
    arr = np.asarray(columns, dtype=object)
    if arr.ndim == 1 and all(isinstance(c, str) for c in arr.tolist()):
        names = [str(c) for c in arr.tolist()]
        cols = []
        for name in names:
            try:
                col = battles[name]
            except (KeyError, TypeError, IndexError, ValueError):
                msg = f"{what}: battles have no column {name!r}"
                raise DataError(msg) from None
            try:
                values = np.asarray(col, dtype=float)
            except (TypeError, ValueError):
                msg = f"{what}: column {name!r} is not numeric"
                raise DataError(msg) from None
            cols.append(values)
        values = np.column_stack(cols)
    else:
        try:
            values = np.asarray(columns, dtype=float).reshape(n, -1)
        except (TypeError, ValueError):
            msg = f"{what}: an array of {n} numbers per column (one per battle) is needed"
            raise DataError(msg) from None
        names = [f"x{k}" for k in range(values.shape[1])]
    if values.shape[0] != n:
        msg = f"{what}: {values.shape[0]} values for {n} battles"
        raise DataError(msg)
    bad = ~np.isfinite(values) | ((values <= 0) if what == "weights" else False)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        need = "a positive finite weight" if what == "weights" else "a finite number"
        msg = f"battle {row}: {what} {names[col]!r} is {float(values[row, col]):g}, not {need}"
        raise DataError(msg)
    return values, names
