r"""Design-based estimates of a benchmark's mean from a random subset of its items.

The items run are a simple random sample without replacement of ``n`` of the benchmark's ``N``
items. Two estimators of the full-benchmark mean, each with its design-based variance:

- the subset mean, :math:`\bar y_S`, with :math:`\hat V = (1 - n/N)\, s_y^2 / n` (Student t on
  n - 1 degrees of freedom);
- the difference (regression) estimator with control variates ``x`` known on every item (other
  models' results, a cheap judge's predictions): an ordinary least-squares fit of y on x (with an
  intercept) on the subset, and
  :math:`\hat{\bar Y} = \bar y_S + \hat b^\top(\bar x_U - \bar x_S)` with
  :math:`\hat V = (1 - n/N)\, s_e^2 / n`, :math:`s_e^2` the residual variance on n - p - 1
  degrees of freedom (t on those). Design-consistent whatever the fit's quality (a useless
  control variate costs p degrees of freedom, not bias): Cochran 1977, *Sampling Techniques*,
  ch. 7; Särndal, Swensson and Wretman 1992, *Model Assisted Survey Sampling*, §6.5.

Vectorised over leading axes: ``y`` (..., n), ``xs`` (..., n, p), ``xbar`` (..., p).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["difference_estimate", "subset_mean"]


def subset_mean(y: np.ndarray, n_pop: int) -> tuple[Any, Any, int]:
    """(estimate, standard error, df) of the subset mean under simple random sampling."""
    n = y.shape[-1]
    fpc = 1.0 - n / n_pop
    var = y.var(axis=-1, ddof=1) if n > 1 else np.full(y.shape[:-1], np.nan)
    return y.mean(axis=-1), np.sqrt(fpc * var / n), n - 1


def difference_estimate(y: np.ndarray, xs: np.ndarray, xbar: np.ndarray, n_pop: int) -> tuple[Any, Any, int, Any]:
    """(estimate, standard error, df, coefficients) of the difference estimator."""
    n, p = xs.shape[-2], xs.shape[-1]
    ym = y.mean(axis=-1, keepdims=True)
    xm = xs.mean(axis=-2, keepdims=True)
    dx, dy = xs - xm, y - ym
    gram = np.swapaxes(dx, -1, -2) @ dx
    cross = np.swapaxes(dx, -1, -2) @ dy[..., None]
    coef = (np.linalg.pinv(gram) @ cross)[..., 0]  # rank-deficient x (a constant column): the minimum-norm fit
    resid = dy - (dx @ coef[..., None])[..., 0]
    df = n - p - 1
    s2 = (resid * resid).sum(axis=-1) / df if df > 0 else np.full(y.shape[:-1], np.nan)
    est = ym[..., 0] + ((xbar - xm[..., 0, :]) * coef).sum(axis=-1)
    return est, np.sqrt((1.0 - n / n_pop) * s2 / n), df, coef
