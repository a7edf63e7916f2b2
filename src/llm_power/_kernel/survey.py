r"""Design-based estimates of a benchmark's mean from a random subset of its items.

The items run are a stratified simple random sample without replacement: ``n_h`` of the ``N_h``
items of each stratum ``h`` (one stratum: a simple random sample of ``n`` of the ``N`` items).
With :math:`W_h = N_h / N` and :math:`f_h = n_h / N_h`:

- the (stratified) subset mean :math:`\sum_h W_h \bar y_h` with
  :math:`\hat V = \sum_h W_h^2 (1 - f_h)\, s_h^2 / n_h`;
- the difference (regression) estimator with control variates ``x`` known on every item (other
  models' results, a cheap judge's predictions): one coefficient vector ``b`` fitted by weighted
  least squares within the strata (the combined regression estimator with stratum intercepts;
  each residual weighted by :math:`W_h^2 (1 - f_h) / (n_h (n_h - 1))`, its weight in the variance
  below, so ``b`` minimises the estimated variance -- ordinary least squares with one stratum), and
  :math:`\hat{\bar Y} = \sum_h W_h [\bar y_h + b^\top(\bar X_h - \bar x_h)]`, whose variance is the
  stratified one of the residuals :math:`e = y - \bar y_h - b^\top(x - \bar x_h)`, each stratum's
  residual variance on :math:`n_h - 1 - L_h` degrees of freedom, :math:`L_h` the fit's leverage
  in the stratum (they add up to p over the sampled strata; a census stratum has none). With one
  stratum: the residual variance on n - p - 1 degrees of freedom, the textbook form. Design-consistent whatever the
  fit's quality: a useless control variate costs p degrees of freedom, not bias (Cochran 1977,
  *Sampling Techniques*, §§5A, 7.10; Särndal, Swensson and Wretman 1992, *Model Assisted Survey
  Sampling*, §§6.5, 7.10).

Degrees of freedom: Satterthwaite's over the strata (n_h - 1 - L_h each; Cochran §5.4); with one
stratum exactly n - p - 1. A stratum run in full (a census, f_h = 1) adds no variance, and a
sampled stratum whose items the fit uses up (n_h - 1 - L_h = 0) leaves the variance unknown (NaN).

Vectorised over leading axes: ``y`` (..., n), ``xs`` (..., n, p), ``xbar`` (..., p) or per
stratum (..., H, p). The strata coding is shared by every leading index.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["stratified_estimate"]


def stratified_estimate(y: np.ndarray, codes: np.ndarray, pop_counts: np.ndarray, xs: np.ndarray | None = None,
                        xbar_strata: np.ndarray | None = None, *,
                        population: bool = False) -> tuple[Any, Any, Any, Any]:
    r"""(estimate, standard error, df, coefficients) of the stratified mean (``xs`` None) or the
    combined difference estimator, for items of strata ``codes`` (0..H-1, every stratum run at
    least once) out of ``pop_counts[h]`` items per stratum; ``xbar_strata`` (H, p): each
    stratum's mean of the control variates over all its items.

    ``population``: the target is the mean of the population the benchmark's N items are a random
    sample of (what a paired test on all N items infers), not the benchmark's own mean: a
    two-phase design (Cochran §12.2), whose variance adds the first phase's :math:`S_y^2 / N` --
    :math:`S_y^2` estimated from the subset, :math:`[\sum_h (N_h - 1) s_{y,h}^2 + \sum_h N_h
    (\bar y_h - \bar y_{st})^2] / (N - 1)`, exact when every item is run -- on Satterthwaite's
    degrees of freedom over the two parts (at most n - 1). With every item run it is the paired t
    test's variance; with one stratum and no control variate exactly :math:`s_y^2 / n`.
    """
    y = np.asarray(y, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    big_n = np.asarray(pop_counts, dtype=float)
    n_strata = big_n.size
    onehot = np.zeros((codes.size, n_strata))
    onehot[np.arange(codes.size), codes] = 1.0
    n_h = onehot.sum(axis=0)
    weight = big_n / big_n.sum()  # W_h
    ybar_h = (y @ onehot) / n_h  # (..., H)
    dy = y - ybar_h @ onehot.T
    coef = np.zeros((*y.shape[:-1], 0))
    lev_h = np.zeros(n_h.shape)
    est = (ybar_h * weight).sum(axis=-1)
    if xs is not None:
        xs = np.asarray(xs, dtype=float)
        xbar_h = np.swapaxes(xs, -1, -2) @ onehot / n_h  # (..., p, H)
        dx = xs - np.swapaxes(xbar_h @ onehot.T, -1, -2)
        # each residual weighted as it enters the variance below, so the fitted b minimises the
        # estimated variance (b = 0 is the plain estimate); a census stratum weighs nothing
        with np.errstate(divide="ignore", invalid="ignore"):
            omega = np.where((n_h >= 2) & (n_h < big_n), weight**2 * (1.0 - n_h / big_n) / (n_h * (n_h - 1.0)), 0.0)
        w = omega[codes]
        gram = np.swapaxes(dx * w[:, None], -1, -2) @ dx
        ginv = np.linalg.pinv(gram)  # rank-deficient x (a constant column): the minimum-norm fit
        cross = np.swapaxes(dx * w[:, None], -1, -2) @ dy[..., None]
        coef = (ginv @ cross)[..., 0]
        dy = dy - (dx @ coef[..., None])[..., 0]
        shift = np.asarray(xbar_strata, dtype=float) - np.swapaxes(xbar_h, -1, -2)  # (..., H, p)
        est = est + ((shift * coef[..., None, :]).sum(axis=-1) * weight).sum(axis=-1)
        # the fit's leverage in each stratum (w_i dx_i' G+ dx_i summed; p in all over the sampled strata)
        lev_h = (w * np.einsum("...ip,...pq,...iq->...i", dx, ginv, dx)) @ onehot
    n = codes.size
    with np.errstate(divide="ignore", invalid="ignore"):
        a_h = weight**2 * (1.0 - n_h / big_n) / n_h
        a_h = np.where(n_h >= big_n, 0.0, a_h)  # a census adds nothing (even a stratum of one item)
        resid_df = n_h - 1.0 - lev_h  # each stratum's residual degrees of freedom, after its share of the fit
        s2_h = ((dy * dy) @ onehot) / resid_df
        spent = (a_h > 0) & (resid_df < 1e-9)  # a sampled stratum the fit uses up: its variance is unknown
        part = np.where(a_h > 0, a_h * s2_h, 0.0)
        var = np.where(spent.any(axis=-1), np.nan, part.sum(axis=-1))
        denom = np.where(a_h > 0, part * part / np.where(spent, 1.0, resid_df), 0.0).sum(axis=-1)
        df = np.where(denom > 0, part.sum(axis=-1) ** 2 / denom, float(max(n - n_strata, 1)))  # Satterthwaite
    df = np.maximum(df, 1.0)
    if population:
        big = big_n.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            y0 = np.asarray(y, dtype=float)
            m_h = (y0 @ onehot) / n_h
            s2y = np.where(n_h > 1, ((y0 - m_h @ onehot.T) ** 2 @ onehot) / np.maximum(n_h - 1.0, 1.0), 0.0)
            mean = (m_h * weight).sum(axis=-1, keepdims=True)
            # S_y^2 over the N items, estimated stratum by stratum (exact when every item is run)
            spread = (((big_n - 1.0) * s2y).sum(axis=-1) + (big_n * (m_h - mean) ** 2).sum(axis=-1)) / (big - 1.0)
            first = spread / big
            # Satterthwaite over the two parts, at most n - 1 (both come from the same items)
            mixed = (first + var) ** 2 / (first * first / max(n - 1, 1) + np.where(var > 0, var * var / df, 0.0))
            df = np.where(var > 0, np.minimum(mixed, float(n - 1)), float(max(n - 1, 1)))
            var = first + var
        df = np.maximum(df, 1.0)
    return est, np.sqrt(var), df, coef


