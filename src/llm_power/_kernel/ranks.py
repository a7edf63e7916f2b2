r"""Rankings: the max-t bootstrap of all pairwise differences, Gaussian max-t quantiles, the exact
number of items whose removal flips a gap, and inference on a selected winner: the only copy.

- :func:`bootstrap_max_deviation`: the largest studentised deviation over all pairs of models for
  each resample of the items (or of whole clusters), for the simultaneous rank intervals of
  Mogstad, Romano, Shaikh and Wilhelm (2024). A resample is a vector of counts, so the resampled
  means of every model are one matrix product.
- :func:`gaussian_max_abs` : the same maximum under N(0, Sigma) (or a multivariate t, or each
  contrast over its own chi-square scale), for contrasts given as pairs or single coordinates.
- :func:`max_t_critical_value`: the critical value of the simultaneous pairwise intervals, by
  either, studentised by each pair's own (with clusters, cluster-robust) standard error.
- :func:`rank_order`: the models best first by mean score (ties in column order): the ranking of
  every report.
- :func:`items_to_flip`: the fewest items whose removal makes a paired mean difference <= 0 --
  exact, because removing k items lowers the sum of the differences by at most the sum of the k
  largest.
- :func:`selection_bounds`, :func:`truncated_normal_cdf`, :func:`invert_selection`: the conditional
  and hybrid inference on a target chosen by the data (Andrews, Kitagawa and McCloskey 2024,
  "Inference on Winners", QJE). With X ~ N(mu, Sigma), a target Y = eta'X and a selection event
  {A X <= 0}, write X = c Y + Z with c = Sigma eta / (eta' Sigma eta); Z is independent of Y and
  the event is {L(Z) <= Y <= U(Z)}, so given the selection and Z, Y is a normal truncated to
  [L, U]. Inverting its CDF in mu gives the conditional interval and the median-unbiased estimate;
  the hybrid also truncates to the projection interval Y +- c_beta sd and works at level
  (alpha - beta) / (1 - beta).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.progress import advance
from .quantiles import level_quantile

__all__ = [
    "binary_gap_items_to_flip",
    "binary_items_to_flip",
    "bootstrap_max_deviation",
    "centred",
    "gaussian_max_abs",
    "invert_selection",
    "items_to_flip",
    "linear_removals_to_flip",
    "max_studentised_gap",
    "max_t_critical_value",
    "mean_covariance",
    "pair_se",
    "rank_order",
    "score_step",
    "selected_inference",
    "selection_bounds",
    "truncated_normal_cdf",
    "winner_from_covariance",
]

#: elements of the largest temporary of a block (counts, or resamples x pairs)
BLOCK_ELEMENTS = 4_000_000
#: the names of the max-t loops in progress reports
RESAMPLES, DRAWS = "max-t: resamples", "max-t: normal draws"


def bootstrap_max_deviation(x: np.ndarray, i: np.ndarray, j: np.ndarray, delta: np.ndarray,  # noqa: PLR0917
                            se: np.ndarray, n_resamples: int, gen: np.random.Generator, *,
                            codes: np.ndarray | None = None, n_groups: int = 0) -> np.ndarray:
    """The max over pairs |(D*_ij - D_ij) / se_ij| for each of ``n_resamples`` resamples of the items.

    Items are drawn with replacement (``gen.integers(0, n, (b, n))`` per block), or with ``codes``
    whole clusters (``gen.integers(0, G, (b, G))``; the resampled mean of a model is its resampled
    sum over the resampled number of items). A pair without spread (se 0) contributes 0.
    """
    n, m = x.shape
    xf = np.asarray(x, dtype=float)
    if codes is not None and n_groups:
        units = n_groups
        sums = np.zeros((n_groups, m))
        np.add.at(sums, codes, xf)
        sizes = np.bincount(codes, minlength=n_groups).astype(float)
    else:
        units, sums, sizes = n, xf, None
    inv_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    out = np.empty(n_resamples)
    step = max(1, BLOCK_ELEMENTS // max(units, i.size, 1))
    advance(RESAMPLES, 0, n_resamples)
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        picks = gen.integers(0, units, size=(b, units))
        counts = np.bincount((picks + (np.arange(b) * units)[:, None]).ravel(),
                             minlength=b * units).reshape(b, units).astype(float)
        total = counts @ sums
        boot = total / n if sizes is None else total / (counts @ sizes)[:, None]
        dev = np.abs((boot[:, i] - boot[:, j] - delta) * inv_se)
        out[start:start + b] = dev.max(axis=1) if i.size else 0.0
        advance(RESAMPLES, start + b, n_resamples)
    return out


def gaussian_max_abs(cov: np.ndarray, i: np.ndarray, j: np.ndarray | None, se: np.ndarray, level: float,
                     gen: np.random.Generator, *, n_draws: int = 20000, df: Any = math.inf) -> float:
    """The ``level`` quantile of max_k |xi_{i_k} - xi_{j_k}| / se_k for xi ~ N(0, cov) (a
    multivariate t on ``df`` degrees of freedom when finite); ``j`` None: single coordinates
    |xi_{i_k}| / se_k. A contrast with se 0 is left out. Draws: ``n_draws`` up to 4e8 / contrasts,
    at least 2,000. Pairs beyond 4e6 / M: the exact maximum of each draw from a Cholesky factor of
    ``cov`` without forming every pair (:func:`max_studentised_gap`: a few M-vectors per draw,
    memory M x M); else every contrast, in blocks of about 4e6 values.

    ``df`` an array (one per contrast): each contrast is divided by its own, independent
    sqrt(chi2_{df_k} / df_k) -- the maximum of the contrasts' own t statistics when each is
    studentised by a separately estimated standard error (see :func:`max_t_critical_value`).
    """
    df_k = np.asarray(df, dtype=float)
    if df_k.ndim:  # one chi-square per contrast: the gathered path below, which keeps every column
        return _max_abs_own_t(cov, i, j, se, level, gen, n_draws, np.broadcast_to(df_k, np.shape(i)))
    inv_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    m = cov.shape[0]
    size = max(i.size, 1)
    load = pairwise = None
    n_draws = int(max(2000, min(n_draws, 400_000_000 // size)))
    if m * size > BLOCK_ELEMENTS and j is not None:
        # many pairs: the exact maximum of each draw without forming every pair (max_studentised_gap),
        # draws N(0, cov) from a Cholesky factor, in blocks of about 4e6 values
        pairwise = np.zeros((m, m))
        pairwise[i, j] = pairwise[j, i] = inv_se
        root = _factor(cov)
        block = max(1, BLOCK_ELEMENTS // (4 * m))
    else:
        vals, vecs = np.linalg.eigh(np.nan_to_num(cov, nan=0.0))
        root = vecs * np.sqrt(np.maximum(vals, 0.0))
        block = max(1, BLOCK_ELEMENTS // size)
    if m * size <= BLOCK_ELEMENTS:  # the studentised contrasts as columns: one product per block
        weights = np.zeros((m, i.size))
        weights[i, np.arange(i.size)] = inv_se
        if j is not None:
            weights[j, np.arange(i.size)] -= inv_se
        load = root.T @ weights  # z = g @ root.T, so z @ weights = g @ (root.T @ weights)
    out = []
    advance(DRAWS, 0, n_draws)
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        g = gen.standard_normal((rows, m))
        if load is not None:
            stat = np.abs(g @ load).max(axis=1)
        elif pairwise is not None:
            stat = max_studentised_gap(g @ root.T, pairwise)
        else:  # many single coordinates: gathered per block (memory rows x contrasts, bounded)
            z = g @ root.T
            stat = np.abs(z[:, i] * inv_se).max(axis=1)
        if math.isfinite(df):  # multivariate t: one chi-square scale per draw
            stat = stat / np.sqrt(gen.chisquare(df, rows) / df)
        out.append(stat)
        advance(DRAWS, start + rows, n_draws)
    return float(np.quantile(np.concatenate(out), level))


def _factor(cov: np.ndarray) -> np.ndarray:
    """A factor L with L L' = cov: Cholesky (M^3 / 3 flops), or the eigen-decomposition's root when
    cov is singular (a constant model, two identical models).
    """
    clean = np.nan_to_num(cov, nan=0.0)
    try:
        return np.asarray(np.linalg.cholesky(clean), dtype=float)
    except np.linalg.LinAlgError:
        vals, vecs = np.linalg.eigh(clean)
        return np.asarray(vecs * np.sqrt(np.maximum(vals, 0.0)), dtype=float)


def max_studentised_gap(z: np.ndarray, inv_se: np.ndarray) -> np.ndarray:
    """Per row of ``z`` (draws x models): max over pairs |z_a - z_b| * ``inv_se[a, b]`` (a symmetric
    matrix, 0 for a pair left out), exactly, without forming every pair.

    For z_a >= z_b the pair's value is at most up_a = (z_a - min z) * max_b inv_se[a, b] and at most
    down_b = (max z - z_b) * max_a inv_se[a, b] (both factors are larger, also after rounding). A
    lower bound L of the maximum is the largest pair of the draw's highest or lowest model (2M
    values); every pair whose higher model has up < L or whose lower model has down < L is below
    the maximum, so it is the larger of L and the maximum over the models left on each side (a few
    per cent of the pairs for models of similar spread; every pair at worst, in blocks of about
    4e6 values).
    """
    rows, m = z.shape
    cap = inv_se.max(axis=1)
    at = np.arange(rows)
    top, bottom = z.argmax(axis=1), z.argmin(axis=1)
    zmax, zmin = z[at, top], z[at, bottom]
    lower = np.maximum(((zmax[:, None] - z) * inv_se[top]).max(axis=1),
                       ((z - zmin[:, None]) * inv_se[bottom]).max(axis=1))
    up, down = (z - zmin[:, None]) * cap, (zmax[:, None] - z) * cap
    n_hi, n_lo = (up >= lower[:, None]).sum(axis=1), (down >= lower[:, None]).sum(axis=1)
    out = lower.copy()
    few = np.flatnonzero(np.maximum(n_hi, n_lo) <= _FEW)
    k = int(max(n_hi[few].max(initial=1), n_lo[few].max(initial=1)))
    for start in range(0, few.size, max(1, BLOCK_ELEMENTS // (k * k))):
        # most draws: the k largest up and down of each (a superset of its candidates), together
        r = few[start:start + max(1, BLOCK_ELEMENTS // (k * k))]
        hi = np.argsort(-up[r], axis=1)[:, :k] if k >= m else np.argpartition(-up[r], k - 1, axis=1)[:, :k]
        lo = np.argsort(-down[r], axis=1)[:, :k] if k >= m else np.argpartition(-down[r], k - 1, axis=1)[:, :k]
        zr = z[r]
        rr = np.arange(r.size)[:, None]
        gap = (zr[rr, hi][:, :, None] - zr[rr, lo][:, None, :]) * inv_se[hi[:, :, None], lo[:, None, :]]
        out[r] = np.maximum(lower[r], gap.reshape(r.size, -1).max(axis=1))
    for r_ in np.flatnonzero(np.maximum(n_hi, n_lo) > _FEW):  # the rest one by one, in blocks of ~4e6 pairs
        hi_r, lo_r = np.flatnonzero(up[r_] >= lower[r_]), np.flatnonzero(down[r_] >= lower[r_])
        zlo = z[r_, lo_r]
        step = max(1, BLOCK_ELEMENTS // lo_r.size)
        for s in range(0, hi_r.size, step):
            h = hi_r[s:s + step]
            out[r_] = max(out[r_], float(((z[r_, h, None] - zlo) * inv_se[np.ix_(h, lo_r)]).max()))
    return np.asarray(out, dtype=float)


#: draws whose candidates on each side are at most this many are evaluated together
_FEW = 32


def _max_abs_own_t(cov: np.ndarray, i: np.ndarray, j: np.ndarray | None, se: np.ndarray, level: float,  # noqa: PLR0913, PLR0917
                   gen: np.random.Generator, n_draws: int, df: np.ndarray) -> float:
    """:func:`gaussian_max_abs` with an independent chi-square scale per contrast (``df`` per
    contrast; inf: no scale); at most 5e7 contrast-draws (at least 2,000 draws).
    """
    inv_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    vals, vecs = np.linalg.eigh(np.nan_to_num(cov, nan=0.0))
    root = vecs * np.sqrt(np.maximum(vals, 0.0))
    m, size = cov.shape[0], max(i.size, 1)
    finite = np.isfinite(df) & (df > 0)
    n_draws = int(max(2000, min(n_draws, 50_000_000 // size)))
    block = max(1, BLOCK_ELEMENTS // max(size, m))
    out = []
    advance(DRAWS, 0, n_draws)
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        z = gen.standard_normal((rows, m)) @ root.T
        stat = np.abs((z[:, i] if j is None else z[:, i] - z[:, j]) * inv_se)
        if finite.any():
            scale = gen.chisquare(np.where(finite, df, 1.0), (rows, size)) / np.where(finite, df, 1.0)
            stat = np.where(finite, stat / np.sqrt(scale), stat)
        out.append(stat.max(axis=1))
        advance(DRAWS, start + rows, n_draws)
    return float(np.quantile(np.concatenate(out), level))


def pair_se(cov: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The standard errors of the differences mean_i - mean_j from the means' covariance: with the
    CR2 covariance of :func:`mean_covariance`, each pair's own CR2 standard error (the sandwich is
    linear in the cluster residual sums, so the difference's CR2 variance is
    cov_ii + cov_jj - 2 cov_ij).
    """
    return np.asarray(np.sqrt(np.maximum(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 0.0)), dtype=float)


_NEEDS_SCORES = "the max-t bootstrap needs the scores in memory (item shards: the 'gaussian' method)"


def max_t_critical_value(method: str, x: np.ndarray | None, i: np.ndarray, j: np.ndarray,  # noqa: PLR0913, PLR0917
                         delta: np.ndarray, se: np.ndarray, cov: np.ndarray, level: float, n_resamples: int,
                         gen: np.random.Generator, *, codes: np.ndarray | None = None, n_groups: int = 0,
                         df: Any = None, n_draws: int = 20000) -> tuple[float, np.ndarray]:
    r"""The critical value c of the simultaneous intervals delta_k +- c se_k of every pair, and the
    standard errors se_k they use (Mogstad, Romano, Shaikh and Wilhelm 2024).

    Without clusters: ``se`` (each pair's paired IID standard error), and c the ``level`` quantile
    of max_k |D*_k - D_k| / se_k over ``n_resamples`` resamples of the items (``method``
    "bootstrap", :func:`bootstrap_max_deviation`), or of its normal limit drawn with the means'
    covariance ``cov`` (``"gaussian"``, :func:`gaussian_max_abs`).

    With clusters (``n_groups``; ``cov`` the CR2 covariance of the means, :func:`mean_covariance`):
    each pair is studentised by **its own cluster-robust (CR2) standard error** (:func:`pair_se`),
    and referred to its own cluster test: ``"gaussian"`` draws each studentised gap as
    N(0, cov)-contrast / se_k over an independent sqrt(chi2_{nu_k} / nu_k), nu_k the pair's
    degrees of freedom ``df`` (Imbens-Kolesar, as diagnose's cluster column; G - 1 when None), so
    every pair alone is exactly its cluster t test and the maximum allows for G clusters estimating
    each standard error (independent scales are the conservative choice: the pairs' estimates share
    the clusters and move together, which only raises the joint coverage). ``"bootstrap"`` resamples
    whole clusters (the same studentisation) and takes the **larger** of its quantile and that t
    reference: a percentile cluster bootstrap treats the standard errors as known, which with few
    clusters they are not (8 equal clusters: simultaneous coverage 0.91 with the IID studentisation,
    about 0.64 with the CR2 one, 0.943 with the t reference, and 0.94-1.00 over 8-30 equal and
    unequal clusters; ``scripts/rank_cluster_coverage.py``, docs/rankings.md);
    with many clusters the two agree and the bootstrap keeps the data's shape. ``n_draws``: the
    normal draws of the reference (:func:`gaussian_max_abs`).
    """
    if not n_groups:
        if method == "bootstrap":
            if x is None:
                raise ValueError(_NEEDS_SCORES)
            return float(np.quantile(bootstrap_max_deviation(x, i, j, delta, se, n_resamples, gen), level)), se
        return gaussian_max_abs(cov, i, j, se, level, gen, n_draws=n_draws), se
    own = pair_se(cov, i, j)
    nu = np.full(i.shape, float(n_groups - 1)) if df is None else np.broadcast_to(
        np.asarray(df, dtype=float), i.shape)
    crit = gaussian_max_abs(cov, i, j, own, level, gen, df=nu, n_draws=n_draws)
    if method == "bootstrap":
        if x is None:
            raise ValueError(_NEEDS_SCORES)
        largest = bootstrap_max_deviation(x, i, j, delta, own, n_resamples, gen, codes=codes, n_groups=n_groups)
        crit = max(crit, float(np.quantile(largest, level)))
    return crit, own


def items_to_flip(d: np.ndarray) -> np.ndarray:
    """For each column of paired differences d (n_items x pairs), the fewest items whose removal
    makes the mean difference <= 0 (0 when it already is; ``inf`` when no removal that keeps an
    item can: every difference > 0).

    Exact: the sum after removing k items is at least S - (sum of the k largest differences), which
    removing the k largest attains, so k* is the first k with S - top_k <= 0, if k* < n.
    """
    d = np.asarray(d, dtype=float)
    d = d[:, None] if d.ndim == 1 else d
    n = d.shape[0]
    if n == 0:
        return np.zeros(d.shape[1])
    total = d.sum(axis=0)
    top = np.cumsum(-np.sort(-d, axis=0), axis=0)  # sums of the k largest, k = 1..n
    # a sum within rounding of 0 counts as 0 (a tie): sums of graded scores such as thirds are not
    # exact in floats
    tol = 1e-12 * np.maximum(1.0, np.abs(d).sum(axis=0))
    reached = (total[None, :] - top) <= tol
    reached[-1] = False  # removing every item leaves no mean
    first = np.where(reached.any(axis=0), reached.argmax(axis=0) + 1.0, math.inf)
    return np.where(total <= tol, 0.0, first) if n else np.zeros(d.shape[1])


def linear_removals_to_flip(gap: float, drop: np.ndarray) -> tuple[float, np.ndarray]:
    """The fewest observations whose removal brings ``gap`` to <= 0 when removing observation b
    lowers it by ``drop[b]`` (a linear approximation: the approximate maximum influence
    perturbation of Broderick, Giordano and Meager 2023), and the observations in removal order.
    ``inf`` (and every observation) when removing all with a positive drop is not enough.
    """
    tol = 1e-12 * max(1.0, abs(gap))
    if gap <= tol:  # tied (to rounding) or reversed already: nothing to remove
        return 0.0, np.zeros(0, dtype=np.int64)
    order = np.argsort(-drop, kind="stable")
    cum = np.cumsum(drop[order])
    hit = np.flatnonzero(gap - cum <= tol)
    if hit.size == 0:
        return math.inf, order
    return float(hit[0] + 1), order


def binary_items_to_flip(b: Any, c: Any, n: int) -> np.ndarray:
    """The same for 0/1 pairs from the discordant counts (b: A right and B wrong, c: the reverse):
    removing b - c of the b items where A alone is right ties the pair, if an item is left.
    """
    return binary_gap_items_to_flip(np.asarray(b, dtype=float) - np.asarray(c, dtype=float), n)


def binary_gap_items_to_flip(gap: Any, n: int) -> np.ndarray:
    """:func:`binary_items_to_flip` from the gap in correct answers, b - c = S_A - S_B (the
    difference of the two models' column sums: the items both got right or both wrong cancel), so
    the pairs of 0/1 scores need no discordant counts: 0 when the gap is <= 0, ``inf`` when it is
    every item (A alone right on all of them: no item would be left).
    """
    k = np.maximum(np.asarray(gap, dtype=float), 0.0)
    return np.where((k > 0) & (k >= n), math.inf, k)


def rank_order(means: Any) -> np.ndarray:
    """The columns best first by mean score, ties in column order (a stable sort): the ranking of
    :func:`~llm_power.diagnose` and of everything computed from it.
    """
    return np.argsort(-np.asarray(means, dtype=float), kind="stable")


# ------------------------------------------------------------------------------------------------
# Inference on a selected target (Andrews, Kitagawa and McCloskey 2024)
# ------------------------------------------------------------------------------------------------

def selection_bounds(x: np.ndarray, cov: np.ndarray, eta: np.ndarray, rows: np.ndarray,
                     slack: Any = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Y = eta'x, its sd, and the truncation [L, U] of Y given the event {rows @ x <= slack} and Z.

    Vectorised over a leading axis: x (R, M), cov (R, M, M), eta (R, M), rows (R, K, M), slack
    a scalar or (R,). Returns y, sd, lower, upper, each (R,). A row with rows @ c = 0 does not
    involve Y (it holds for the observed x and constrains Z only).

    ``slack`` is the continuity correction of scores on a grid: mean scores of 0/1 items move in
    steps of 1/n, so "A beats or ties B" (x_B - x_A <= 0) is, for the normal approximation, the
    event x_B - x_A <= 1/(2n). Without it a tie at the top puts the estimate on the edge of its
    truncation, where the conditional distribution has no mass.
    """
    y = np.einsum("rm,rm->r", eta, x)
    s_eta = np.einsum("rmk,rk->rm", cov, eta)
    var = np.einsum("rm,rm->r", eta, s_eta)
    sd = np.sqrt(np.maximum(var, 0.0))
    c = s_eta / np.where(var > 0, var, 1.0)[:, None]
    z = x - c * y[:, None]
    ac = np.einsum("rkm,rm->rk", rows, c)
    az = np.einsum("rkm,rm->rk", rows, z) - np.reshape(np.asarray(slack, dtype=float), (-1, 1))
    tol = 1e-12 * np.maximum(1.0, np.abs(az))
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = -az / ac
    upper = np.min(np.where(ac > tol, bound, np.inf), axis=1, initial=np.inf)
    lower = np.max(np.where(ac < -tol, bound, -np.inf), axis=1, initial=-np.inf)
    return y, sd, np.minimum(lower, y), np.maximum(upper, y)


def truncated_normal_cdf(y: np.ndarray, mu: np.ndarray, sd: np.ndarray, lower: np.ndarray,
                         upper: np.ndarray) -> np.ndarray:
    """P(Y <= y) for Y ~ N(mu, sd^2) truncated to [lower, upper], computed in the tail where the
    mass is (log-space differences), so that it stays exact for truncation points far in a tail.
    """
    from scipy import special

    a, b, z = (lower - mu) / sd, (upper - mu) / sd, (y - mu) / sd
    z = np.clip(z, a, b)
    right = a > 0  # all the mass in the right tail: work with survival functions Phi(-t)
    sa, sb, sz = (special.log_ndtr(-t) for t in (a, b, z))
    la, lb, lz = (special.log_ndtr(t) for t in (a, b, z))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # right tail: (S(a) - S(z)) / (S(a) - S(b)); otherwise (Phi(z) - Phi(a)) / (Phi(b) - Phi(a))
        f_right = -np.expm1(sz - sa) / -np.expm1(sb - sa)
        f_left = (np.exp(lz - lb) - np.exp(la - lb)) / -np.expm1(la - lb)
    out = np.where(right, f_right, f_left)
    return np.asarray(np.clip(np.nan_to_num(out, nan=0.5), 0.0, 1.0), dtype=float)


#: the conditional intervals are searched in y +- this many standard errors
CONDITIONAL_RANGE = 200.0


def invert_selection(y: np.ndarray, sd: np.ndarray, lower: np.ndarray, upper: np.ndarray, prob: Any, *,
                     c_proj: Any = None, iterations: int = 64) -> np.ndarray:
    """The mu at which the (conditional, or with ``c_proj`` hybrid) CDF of the truncated normal at
    y equals ``prob`` (vectorised bisection, ``prob`` and ``c_proj`` broadcast; the CDF decreases in mu).

    Conditional (``c_proj`` None or inf): searched in y +- 200 sd, whose end is returned when the
    CDF does not reach ``prob`` there. Hybrid: the truncation is also mu +- c_proj sd, and mu is
    searched inside the projection interval y +- c_proj sd (its end returned likewise).
    """
    y, given = np.asarray(y, dtype=float), np.asarray(sd, dtype=float)
    sd = np.where(given > 0, given, 1.0)  # no spread: the estimate itself (below); 1 keeps the loop finite
    proj = np.broadcast_to(np.inf if c_proj is None else np.asarray(c_proj, dtype=float), y.shape)
    width = np.minimum(proj, CONDITIONAL_RANGE)
    lo, hi = y - width * sd, y + width * sd
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        a, b = np.maximum(lower, mid - proj * sd), np.minimum(upper, mid + proj * sd)
        above = truncated_normal_cdf(y, mid, sd, a, b) > prob  # mu too small
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(given > 0, 0.5 * (lo + hi), y)


def mean_covariance(x: np.ndarray, binary: bool, codes: np.ndarray | None = None, n_groups: int = 0) -> np.ndarray:
    """The covariance of the models' mean scores: the items' covariance / n (plug-in for 0/1, as
    the paired variance of the report; ddof 1 for graded), or with clusters the bias-reduced
    cluster-robust one (CR2 of a mean: sum_g r_g r_g' / (1 - m_g/n) / n^2, whose diagonal is the
    variance of the report's per-model cluster intervals).
    """
    n = x.shape[0]
    xc = np.asarray(x, dtype=float) - x.mean(axis=0)
    if codes is not None and n_groups > 1:
        r = np.zeros((n_groups, x.shape[1]))
        np.add.at(r, codes, xc)
        sizes = np.bincount(codes, minlength=n_groups).astype(float)
        w = 1.0 / np.maximum(1.0 - sizes / n, 1e-12)
        return np.asarray((r.T * w) @ r / n**2, dtype=float)
    return np.asarray((xc.T @ xc) / (n if binary else n - 1) / n, dtype=float)


def score_step(x: np.ndarray, *, max_values: int = 1000) -> float:
    """The step of the grid the scores lie on (1 for 0/1 scores, 0.25 for quarters; 0 when there
    are more than ``max_values`` distinct values: continuous scores).
    """
    u = np.unique(x if x.size <= 10_000_000 else x.ravel()[:: max(1, x.size // 10_000_000)])
    if u.size < 2 or u.size > max_values:
        return 0.0
    return float(np.min(np.diff(u)))


def centred(values: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values and their covariance centred on their mean (C v, C Sigma C with C = I - 11'/M): the
    scale of ratings identified only up to a constant (Elo with mean 1000).
    """
    m = values.size
    c = np.eye(m) - 1.0 / m
    return c @ values, c @ cov @ c


def winner_from_covariance(means: np.ndarray, cov: np.ndarray, names: list[Any], level: float,  # noqa: PLR0913, PLR0917
                           gen: np.random.Generator, *, n_groups: int = 0, n_items: int = 0, slack: float = 0.0,
                           extra_var: Any = None, beta: float | None = None, target: str = "winner",
                           new: int | None = None, n_draws: int = 20000) -> dict[str, Any]:
    """Inference on a selected target from the means and their covariance (``n_groups`` clusters: t on
    G - 1 degrees of freedom, as a normal with a larger variance; else ``n_items`` items: t on
    n - 1, as the models table's intervals, so that a handful of items never gets a corrected
    interval narrower than the naive one beside it; ``extra_var``: each model's variance raised to
    at least it).
    """
    df = n_groups - 1 if n_groups > 1 else n_items - 1 if n_items > 1 else 0
    if df > 0:
        z_level = float(level_quantile(level, "two-sided"))
        cov = cov * (float(level_quantile(level, "two-sided", df)) / z_level) ** 2
    if extra_var is not None:  # e.g. run-to-run noise: each model's variance raised to the report's own
        cov = cov + np.diag(np.maximum(np.asarray(extra_var, dtype=float) - np.diag(cov), 0.0))
    return selected_inference(means, cov, names, level, gen, slack=slack, beta=beta, target=target, new=new,
                              n_draws=n_draws)


def selected_inference(means: np.ndarray, cov: np.ndarray, names: list[Any], level: float,  # noqa: PLR0913, PLR0917
                       gen: np.random.Generator, *, slack: float = 0.0, beta: float | None = None,
                       target: str = "winner", new: int | None = None, n_draws: int = 20000) -> dict[str, Any]:
    """Inference on a target chosen by the data (Andrews, Kitagawa and McCloskey 2024) from estimates
    ``means`` ~ N(mu, ``cov``) (mean scores, or Bradley-Terry ratings with their covariance): the naive
    estimate and interval, the conditional median-unbiased estimate and interval, the hybrid estimate
    and interval, the projection interval, beta and the selected models. ``target``: "winner" (the top
    model's score), "top_gap" (the top model minus the second), or "new" (model ``new`` minus the best
    of the others); ``slack`` the continuity correction of the selection event.
    """
    m = means.size
    alpha = 1.0 - level
    beta = alpha / 10.0 if beta is None else beta
    order = np.argsort(-means, kind="stable")
    eta = np.zeros(m)
    if target == "winner":
        first = int(order[0])
        eta[first] = 1.0
        rows = np.zeros((m - 1, m))
        others = [k for k in range(m) if k != first]
        rows[np.arange(m - 1), others] = 1.0
        rows[:, first] = -1.0  # x_k - x_first <= 0
        selected = [names[first]]
        fam_i, fam_j = np.arange(m), None
    elif target == "top_gap":
        first, second = int(order[0]), int(order[1])
        eta[first], eta[second] = 1.0, -1.0
        rest = [k for k in range(m) if k not in (first, second)]
        rows = np.zeros((len(rest) + 1, m))
        rows[np.arange(len(rest)), rest] = 1.0
        rows[: len(rest), second] = -1.0  # x_k - x_second <= 0
        rows[-1, second], rows[-1, first] = 1.0, -1.0  # x_second - x_first <= 0
        selected = [names[first], names[second]]
        fam_i, fam_j = np.triu_indices(m, 1)
    else:
        if new is None:
            msg = 'target="new" needs the index of the new model'
            raise ValueError(msg)
        existing = [k for k in range(m) if k != new]
        best = max(existing, key=lambda k: (means[k], -k))
        eta[new], eta[best] = 1.0, -1.0
        rest = [k for k in existing if k != best]
        rows = np.zeros((max(len(rest), 1), m))
        if rest:
            rows[np.arange(len(rest)), rest] = 1.0
            rows[:, best] = -1.0  # x_k - x_best <= 0 for the other existing models
        selected = [names[new], names[best]]
        fam_i, fam_j = np.full(len(existing), new), np.asarray(existing)
    y, sd, lower, upper = selection_bounds(means[None], cov[None], eta[None], rows[None], slack)
    fam_var = np.diag(cov)[fam_i] if fam_j is None else (np.diag(cov)[fam_i] + np.diag(cov)[fam_j]
                                                          - 2 * cov[fam_i, fam_j])
    fam_se = np.sqrt(np.maximum(fam_var, 0.0))
    c_proj = gaussian_max_abs(cov, fam_i, fam_j, fam_se, 1.0 - beta, gen, n_draws=n_draws)
    z = float(level_quantile(level, "two-sided"))
    a_h = (alpha - beta) / (1.0 - beta)
    # the median and both ends, conditional and hybrid, in one vectorised bisection
    probs = np.array([0.5, 1 - alpha / 2, alpha / 2, 0.5, 1 - a_h / 2, a_h / 2])
    proj = np.array([np.inf, np.inf, np.inf, c_proj, c_proj, c_proj])
    mu = invert_selection(np.repeat(y, 6), np.repeat(sd, 6), np.repeat(lower, 6), np.repeat(upper, 6), probs,
                          c_proj=proj)
    out = {
        "target": target, "selected": selected, "estimate": float(y[0]), "se": float(sd[0]),
        "naive_ci": (float(y[0] - z * sd[0]), float(y[0] + z * sd[0])),
        "median_unbiased": float(mu[0]), "conditional_ci": (float(mu[1]), float(mu[2])),
        "hybrid_estimate": float(mu[3]), "hybrid_ci": (float(mu[4]), float(mu[5])),
        "projection_ci": (float(y[0] - c_proj * sd[0]), float(y[0] + c_proj * sd[0])),
        "beta": beta, "critical_value_projection": c_proj, "confidence_level": level,
        "truncation": (float(lower[0]), float(upper[0])), "continuity_correction": float(slack),
    }
    if not math.isfinite(float(y[0])):
        msg = "the selected target has no finite estimate"
        raise ValueError(msg)
    return out
