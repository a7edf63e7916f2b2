r"""Cluster-robust variances: the one estimator (the one label coder is
:mod:`llm_power._core.clusters`, re-exported here).

**Means** (diagnose, compare, the gate, win rates, pass@k, the inspect extension, one model's
interval). With G clusters of sizes m_g, N = sum m_g and residual sums r_g = sum_{i in g}(y_i - ybar):

- CR2 (Bell & McCaffrey 2002; the package default, "robust"):
  ``V = sum_g r_g^2 / (1 - m_g/N) / N^2`` with Imbens-Kolesar (2016) degrees of freedom (<= G - 1);
- CR1: ``V = G/(G-1) sum_g r_g^2 / N^2`` with G - 1 degrees of freedom (= CR2 for equal sizes).

**M-estimators** (Bradley-Terry ratings, the length-bias regression): the sandwich
``B^+ M B^+`` with the meat M summed over clusters and the CR1 factor G/(G-1), t quantiles on G - 1
degrees of freedom (:func:`sandwich`). When the clusters cannot estimate what is asked -- G not
larger than the number of free parameters, or a meat that is blind to the direction a contrast
needs -- the variance is *not estimable*: NaN with the reason, never a number.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._core.clusters import FEW_CLUSTERS

__all__ = [
    "DESIGN_EFFECTS",
    "ClusterEffects",
    "DesignEffect",
    "FEW_CLUSTERS",
    "ClusterStructure",
    "Sandwich",
    "cluster_design_effects",
    "cluster_df",
    "cluster_df_from_counts",
    "cluster_structure",
    "mean_variance",
    "mean_variance_from_sums",
    "sandwich",
]

#: above this many clusters the degrees of freedom are G - 1 (t is then practically normal)
_MAX_DF_CLUSTERS = 2000
#: a contrast is estimable when at most this share of its bread-mapped direction lies where the meat is blind
_BLIND_TOL = 1e-6


# =================================================================================================
# Means: CR2 with Imbens-Kolesar degrees of freedom, CR1 with G - 1
# =================================================================================================

@dataclass(frozen=True)
class ClusterStructure:
    """Cluster sizes and the traces behind the Bell-McCaffrey / Imbens-Kolesar degrees of freedom.

    For the mean (intercept-only regression) the CR2 adjustment of cluster g is the scalar
    h_g = 1 / (1 - m_g/N), and with G = [g_1 .. g_G], g_s = sqrt(h_s) (1_s - (m_s/N) 1_N) / N,
    the working covariance Omega = (1 - rho) I + rho blockdiag(1 1') gives
    G' Omega G = (1 - rho) M + rho V with M = G'G and V = sum_h (G' 1_h)(G' 1_h)'.
    """

    n: float
    sizes: np.ndarray
    h: np.ndarray
    traces: tuple[float, float, float, float, float] | None  # tr M, tr V, tr M^2, tr MV, tr V^2


def cluster_structure(sizes: np.ndarray) -> ClusterStructure:
    """The :class:`ClusterStructure` of clusters of these sizes."""
    m = np.asarray(sizes, dtype=float)
    n = float(m.sum())
    g = m.size
    with np.errstate(divide="ignore"):
        h = 1.0 / (1.0 - m / n)
    traces = None
    if g <= _MAX_DF_CLUSTERS:
        c = np.sqrt(h)
        core = np.diag(m) - np.outer(m, m) / n  # [s, t] = delta_st m_s - m_s m_t / N
        mat_m = np.outer(c, c) * core / n**2
        vh = c[:, None] * core / n  # [s, h] = c_s (delta_sh m_h - m_s m_h / N) / N  (core is symmetric)
        mat_v = vh @ vh.T
        traces = (float(np.trace(mat_m)), float(np.trace(mat_v)), float(np.sum(mat_m * mat_m)),
                  float(np.sum(mat_m * mat_v)), float(np.sum(mat_v * mat_v)))
    return ClusterStructure(n=n, sizes=m, h=h, traces=traces)


def cluster_df(structure: ClusterStructure, rho: np.ndarray) -> np.ndarray:
    """Imbens-Kolesar (2016) degrees of freedom of the CR2 t test of a mean, under the working model
    of exchangeable errors with intraclass correlation ``rho`` (G - 1 for equal cluster sizes).
    """
    g = structure.sizes.size
    rho = np.clip(np.nan_to_num(np.asarray(rho, dtype=float), nan=0.0), 0.0, 1.0)
    if structure.traces is None or np.all(structure.sizes == structure.sizes[0]):  # equal sizes: exactly G - 1
        return np.full(rho.shape, float(g - 1))
    return _ik_df(structure.traces, rho, g)


def _ik_df(traces: Any, rho: np.ndarray, g: Any) -> np.ndarray:
    """The Imbens-Kolesar df from the five traces and the working ICC, clipped to [1, G - 1]."""
    tr_m, tr_v, tr_mm, tr_mv, tr_vv = traces
    a = 1.0 - rho
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (a * tr_m + rho * tr_v) ** 2 / (a * a * tr_mm + 2.0 * a * rho * tr_mv + rho * rho * tr_vv)
    g = np.asarray(g, dtype=float)
    return np.asarray(np.clip(np.where(np.isfinite(df), df, g - 1.0), 1.0, g - 1.0))


def cluster_df_from_counts(counts: np.ndarray, sizes: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """:func:`cluster_df` of many designs at once, each made of ``counts[s, j]`` clusters of size
    ``sizes[j]`` (clusters drawn with replacement from a few distinct sizes, as the cluster bootstrap
    of :mod:`.cluster_nstar` draws them); ``rho`` (S,) or (S, P). O(S x J), never an (S, G, G) array.

    M and V of :class:`ClusterStructure` are each a diagonal plus a low-rank matrix,
    ``N^2 M = diag(h m) - u u' / N`` and ``N^2 V = diag(h m^2) + [x u] Q [x u]'`` with
    u = sqrt(h) m, x = sqrt(h) m^2, Q = [[0, -1/N], [-1/N, sum m^2 / N^2]], so the traces of M, V
    and the Frobenius products of M and V are sums over the clusters of the diagonals and the
    2 x 2 Gram matrix of [x u]. The equal-size and > 2,000-cluster rules of :func:`cluster_df` apply.
    """
    c = np.asarray(counts, dtype=float)
    m = np.asarray(sizes, dtype=float)
    g = c.sum(axis=1)
    n = c @ m
    with np.errstate(divide="ignore"):
        h = 1.0 / (1.0 - m[None, :] / n[:, None])  # (S, J)
    h = np.where(c > 0, h, 0.0)  # a size never drawn contributes nothing (and may equal N)
    ch = c * h
    powers = m[:, None] ** np.arange(6)[None, :]  # m^0 .. m^5
    h1 = ch @ powers  # h1[:, j] = sum over the drawn clusters of h m^j
    h2 = (ch * h) @ powers  # h2[:, j] = sum of h^2 m^j
    q = c @ (m * m)
    uu, xu, xx = h1[:, 2], h1[:, 3], h1[:, 4]  # u'u, x'u, x'x
    tr_m = (h1[:, 1] - h1[:, 2] / n) / n**2  # diag(h m) - u u' / N
    tr_v = (h1[:, 2] - 2.0 * h1[:, 3] / n + q * h1[:, 2] / n**2) / n**2  # diag(h m^2) + diag of [x u] Q [x u]'
    tr_mm = (h2[:, 2] - 2.0 * h2[:, 3] / n + (uu / n) ** 2) / n**4
    a_wqw = -2.0 * h2[:, 4] / n + q * h2[:, 3] / n**2  # sum of (h m) (diag of [x u] Q [x u]')
    b_wqw = -2.0 * h2[:, 5] / n + q * h2[:, 4] / n**2  # sum of (h m^2) (the same)
    cross = -(2.0 * xu * uu * (-1.0 / n) + uu * uu * q / n**2) / n  # tr(-1/N (u'W) Q (W'u)), W = [x u]
    tr_mv = (h2[:, 3] + a_wqw - h2[:, 4] / n + cross) / n**4
    # tr(Q W'W Q W'W) with W'W = [[xx, xu], [xu, uu]] and Q = [[0, k], [k, l]]
    k, ll = -1.0 / n, q / n**2
    p00, p01 = k * xu, k * uu  # (Q W'W) row 0
    p10, p11 = k * xx + ll * xu, k * xu + ll * uu  # row 1
    tr_vv = (h2[:, 4] + 2.0 * b_wqw + p00 * p00 + 2.0 * p01 * p10 + p11 * p11) / n**4
    rho = np.clip(np.nan_to_num(np.asarray(rho, dtype=float), nan=0.0), 0.0, 1.0)
    extra = (slice(None),) + (None,) * (rho.ndim - 1)
    traces = tuple(t[extra] for t in (tr_m, tr_v, tr_mm, tr_mv, tr_vv))
    df = _ik_df(traces, rho, g[extra])
    drawn = c > 0
    equal = np.all(~drawn | (m[None, :] == np.max(np.where(drawn, m[None, :], -np.inf), axis=1)[:, None]), axis=1)
    plain = (equal | (g > _MAX_DF_CLUSTERS))[extra]
    return np.asarray(np.where(plain, np.broadcast_to(g[extra] - 1.0, df.shape), df))


def cluster_design_effects(n: Any, g: int, var: np.ndarray, r2: np.ndarray, r2h: np.ndarray,  # noqa: PLR0917
                           r2m: np.ndarray, wm2: Any, ssw: np.ndarray) -> ClusterEffects:
    """The cluster-robust variances and design effects from cluster sums (vectorised over a leading
    resample axis).

    ``var`` the per-unit variance the design effect is relative to, ``r2`` = sum_g r_g^2,
    ``r2h`` = the same weighted by the CR2 factor 1/(1 - m_g/N), ``r2m`` = sum_g r_g^2 / m_g (the
    between sum of squares), ``wm2`` = sum_g m_g^2, ``ssw`` the within sum of squares.
    Returns :class:`ClusterEffects` (v_cr2, v_cr1, icc, de_cr2, de_cr1, de_anova, de_paper).
    """
    n = np.asarray(n, dtype=float)
    nn = n[..., None] if n.ndim else n
    wm2 = np.asarray(wm2, dtype=float)
    w2 = wm2[..., None] if wm2.ndim else wm2
    with np.errstate(divide="ignore", invalid="ignore"):
        v_cr1 = g / (g - 1.0) * r2 / (nn * nn)
        v_cr2 = r2h / (nn * nn)
        de_cr1 = v_cr1 / (var / nn)
        de_cr2 = v_cr2 / (var / nn)
        msb = r2m / (g - 1.0)
        msw = ssw / (nn - g)
        n0 = (nn - w2 / nn) / (g - 1.0)
        icc = (msb - msw) / (msb + (n0 - 1.0) * msw)
    icc = np.clip(np.where(np.isfinite(icc), icc, 0.0), 0.0, 1.0)
    kish = w2 / nn
    de_anova = 1.0 + (kish - 1.0) * icc
    de_paper = 1.0 + (nn / g - 1.0) * icc
    return ClusterEffects(v_cr2, v_cr1, icc, de_cr2, de_cr1, de_anova, de_paper)


class ClusterEffects(NamedTuple):
    """The cluster-robust variances of a mean (or difference) and its four design effects."""

    v_cr2: np.ndarray
    v_cr1: np.ndarray
    icc: np.ndarray
    de_cr2: np.ndarray
    de_cr1: np.ndarray
    de_anova: np.ndarray
    de_paper: np.ndarray


@dataclass(frozen=True)
class DesignEffect:
    """One design-effect model of :data:`DESIGN_EFFECTS`: how a clustered variance is formed from
    :class:`ClusterEffects` and which degrees of freedom its t test uses.
    """

    name: str
    label: str  # how reports name the variance
    effect: Callable[[ClusterEffects], np.ndarray]
    measured: bool  # the variance is the sandwich itself; else the design effect times the IID variance
    imbens_kolesar_df: bool  # Imbens-Kolesar degrees of freedom; else G - 1

    def variance(self, effects: ClusterEffects, var: Any, n: Any) -> np.ndarray:
        """The variance of the mean under this model (``var`` the per-item IID variance, ``n`` items)."""
        if self.measured:
            return effects.v_cr2 if self.imbens_kolesar_df else effects.v_cr1
        return np.asarray(self.effect(effects) * var / n)


#: name -> :class:`DesignEffect`: measured (CR2 with Imbens-Kolesar df, the default "robust"; CR1
#: with G - 1), ANOVA ICC with Kish's cluster size, and the resolution paper's mean-size form
DESIGN_EFFECTS: dict[str, DesignEffect] = {d.name: d for d in (
    DesignEffect("anova", "ANOVA ICC, Kish size", lambda e: e.de_anova, measured=False, imbens_kolesar_df=False),
    DesignEffect("cr1", "CR1", lambda e: e.de_cr1, measured=True, imbens_kolesar_df=False),
    DesignEffect("paper", "ANOVA ICC, mean size", lambda e: e.de_paper, measured=False, imbens_kolesar_df=False),
    DesignEffect("robust", "CR2", lambda e: e.de_cr2, measured=True, imbens_kolesar_df=True),
)}


@dataclass(frozen=True)
class MeanVariance:
    """Cluster-robust variance of column means: ``mean``, ``variance`` of the mean, ``df`` of its t
    quantiles, ``design_effect`` (variance / (s^2 / N), unfloored), ``n_clusters``, ``kind``.
    """

    mean: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    design_effect: np.ndarray
    n_clusters: int
    kind: str


def mean_variance(values: Any, codes: np.ndarray, n_groups: int, *, kind: str = "cr2", ddof: int = 1) -> MeanVariance:
    """Cluster-robust variance of the mean of each column of ``values`` (n,) or (n, P).

    ``kind="cr2"`` (the default everywhere): Bell-McCaffrey CR2 with Imbens-Kolesar degrees of
    freedom; ``"cr1"``: G/(G-1) sandwich with G - 1. ``ddof`` sets the IID variance the design
    effect is relative to (0 for 0/1 scores' plug-in variance, 1 for graded).

    Examples
    --------
    Equal cluster sizes: CR2 = CR1 and the degrees of freedom are G - 1.

    >>> import numpy as np
    >>> from llm_power._kernel.variance import mean_variance
    >>> v = mean_variance(np.array([1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0.]), np.repeat([0, 1, 2], 4), 3)
    >>> round(float(np.sqrt(v.variance[0])), 4), float(v.df[0])
    (0.25, 2.0)
    """
    y = np.asarray(values, dtype=float)
    y2 = y[:, None] if y.ndim == 1 else y
    n = y2.shape[0]
    mean = y2.mean(axis=0)
    resid = y2 - mean
    sizes = np.bincount(codes, minlength=n_groups).astype(float)
    r = np.zeros((n_groups, y2.shape[1]))
    np.add.at(r, codes, resid)
    q = np.zeros((n_groups, y2.shape[1]))
    np.add.at(q, codes, resid * resid)
    return mean_variance_from_sums(n, mean, np.sum(resid * resid, axis=0), sizes, r, q, kind=kind, ddof=ddof)


def mean_variance_from_sums(n: int, mean: np.ndarray, ss: np.ndarray, sizes: np.ndarray, resid: np.ndarray,  # noqa: PLR0917
                            resid_sq: np.ndarray, *, kind: str = "cr2", ddof: int = 1) -> MeanVariance:
    """:func:`mean_variance` from per-cluster sums: ``ss`` the total sum of squared deviations,
    ``resid`` (G, P) the per-cluster sums of deviations from the mean, ``resid_sq`` of their squares.
    """
    g = int(sizes.size)
    structure = cluster_structure(sizes)
    r2 = np.sum(resid**2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2m = np.sum(resid**2 / sizes[:, None], axis=0)
    var = np.asarray(ss, dtype=float) / (n - ddof)
    v_cr2, v_cr1, icc, de_r, de_1, *_ = cluster_design_effects(
        n, g, var, r2, np.sum(resid**2 * structure.h[:, None], axis=0), r2m, float(np.sum(sizes**2)),
        np.sum(resid_sq, axis=0) - r2m)
    if kind == "cr2":
        return MeanVariance(mean, v_cr2, cluster_df(structure, icc), de_r, g, kind)
    return MeanVariance(mean, v_cr1, np.full(v_cr1.shape, g - 1.0), de_1, g, kind)


# =================================================================================================
# M-estimators: the CR1 sandwich and its "not estimable" rule
# =================================================================================================

@dataclass(frozen=True)
class Sandwich:
    """A sandwich covariance ``B^+ M B^+`` (times G/(G-1) with clusters) and what it can estimate.

    ``df``: degrees of freedom of its t quantiles (G - 1 with clusters, inf without);
    ``not_estimable``: why no contrast can be estimated (None: estimable, contrast by contrast);
    ``blind``: an orthonormal basis of the directions the meat does not see (k columns).
    """

    covariance: np.ndarray
    bread: np.ndarray  # the generalised inverse B^+ used
    df: float
    n_clusters: int | None
    not_estimable: str | None
    blind: np.ndarray

    def contrast_variance(self, contrasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Variances of the contrasts (rows of ``contrasts``, P x p) and whether each is estimable
        (NaN where not).
        """
        c = np.atleast_2d(np.asarray(contrasts, dtype=float))
        var = np.einsum("ij,jk,ik->i", c, self.covariance, c)
        if self.not_estimable is not None:
            return np.full(var.shape, np.nan), np.zeros(var.shape, dtype=bool)
        ok = np.ones(var.shape, dtype=bool)
        if self.blind.shape[1]:
            u = c @ self.bread  # the contrast's direction in the score space
            ok = _seen(np.linalg.norm(u @ self.blind, axis=1), np.linalg.norm(u, axis=1))
        return np.where(ok, np.maximum(var, 0.0), np.nan), ok

    def pair_estimable(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Whether each difference of parameters i - j is estimable (memory O(pairs x blind
        directions), never pairs x parameters).
        """
        i, j = np.asarray(i, dtype=np.intp), np.asarray(j, dtype=np.intp)
        if self.not_estimable is not None:
            return np.zeros(i.shape, dtype=bool)
        if not self.blind.shape[1]:
            return np.ones(i.shape, dtype=bool)
        seen_by = self.bread @ self.blind  # row r: parameter r's direction projected on the blind ones
        gram = self.bread @ self.bread.T
        unseen = np.linalg.norm(seen_by[i] - seen_by[j], axis=1)
        size = np.sqrt(np.maximum(gram[i, i] + gram[j, j] - 2.0 * gram[i, j], 0.0))
        return _seen(unseen, size)


def _seen(unseen: np.ndarray, size: np.ndarray) -> np.ndarray:
    """A direction is seen by the meat when at most :data:`_BLIND_TOL` of it lies where the meat is blind."""
    return np.asarray(unseen <= _BLIND_TOL * np.maximum(size, np.finfo(float).tiny))


def sandwich(bread: np.ndarray, meat: np.ndarray, *, n_clusters: int | None = None, n_free: int | None = None,
             constraint: np.ndarray | None = None, what: str = "free parameters") -> Sandwich:
    """The sandwich covariance of an M-estimator with bread ``bread`` (the information, p x p) and
    meat ``meat`` (sum over independent units of the outer products of their score sums, p x p).

    ``constraint``: a p x p matrix added to the bread before inverting (identifies parameters fixed
    by a constraint, e.g. ratings that sum to 0) and projected out again; ``n_free``: the number of
    free parameters. With ``n_clusters`` (the units are clusters) the CR1 factor G/(G-1) is applied,
    the degrees of freedom are G - 1, and the covariance is *not estimable* when G <= n_free.
    """
    p = bread.shape[0]
    extra = np.zeros((p, p)) if constraint is None else constraint
    proj = np.eye(p) - (extra if constraint is not None else 0.0)
    bread_inv = proj @ np.linalg.inv(bread + extra) @ proj
    cov = bread_inv @ meat @ bread_inv
    df = math.inf
    reason = None
    if n_clusters is not None:
        cov = cov * (n_clusters / (n_clusters - 1.0))
        df = float(n_clusters - 1)
        free = p if n_free is None else n_free
        if n_clusters <= free:
            reason = (f"{n_clusters} clusters cannot estimate the covariance of {free} {what} (the cluster-robust "
                      f"covariance needs more clusters than {what})")
    vals, vecs = np.linalg.eigh((meat + meat.T) / 2.0)
    top = float(np.max(np.abs(vals))) if vals.size else 0.0
    blind = vecs[:, np.abs(vals) <= 1e-10 * max(top, np.finfo(float).tiny)]
    return Sandwich(covariance=np.asarray(cov, dtype=float), bread=bread_inv, df=df, n_clusters=n_clusters,
                    not_estimable=reason, blind=blind)
