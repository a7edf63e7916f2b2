"""The plug-in kernel: K, N*, MDE and rounding -- vectorised, the only copy.

For a paired difference with per-item variance sigma_D^2::

    K     = (z_{1-alpha/2} + z_{1-beta})^2          (z_{1-alpha} one-sided; 7.84888 at 0.05/0.8)
    N*    = K * sigma_D^2 / delta^2                 (items needed to detect delta)
    MDE   = sqrt(K * sigma_D^2 / N)                 (gap detectable with N items)
    q     = N / N* = T^2 / K,  T = sqrt(N) delta / sigma_D

Quantiles come from :mod:`llm_power._kernel.quantiles` (the only place they are computed).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.validation import check_alpha_power, check_alternative, scalar_or_array
from . import quantiles as _q

__all__ = ["ceil_items", "k_factor", "mde_from_variance", "n_star_from_variance"]


def k_factor(alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided") -> float:
    r"""The constant :math:`K = (z_{1-\alpha/2} + z_{1-\beta})^2` of the sample-size formulas.

    One-sided alternatives use :math:`z_{1-\alpha}`.

    Examples
    --------
    >>> from llm_power.planning import k_factor
    >>> round(k_factor(), 5)
    7.84888
    """
    alpha, power = check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    return float(_q.k_constant(alpha, power, alternative))


def n_star_from_variance(
    variance: Any, delta: Any, *, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided"
) -> Any:
    r"""Unrounded paired sample size :math:`N^* = K\sigma_D^2/\delta^2`.

    ``delta = 0`` gives ``inf`` (no finite benchmark resolves a zero gap); ``variance = 0`` with a
    non-zero delta gives 0. Vectorised; round up with ``math.ceil`` for a number of items.

    Examples
    --------
    From counts b = 3000, c = 2000 on n = 10,000 items (SPEC §5): delta = 0.1, sigma_D^2 = 0.49.

    >>> from llm_power.planning import n_star_from_variance
    >>> import math
    >>> math.ceil(n_star_from_variance(0.5 - 0.1**2, 0.1))
    385
    """
    k = k_factor(alpha, power, alternative)
    var = np.asarray(variance, dtype=float)
    d = np.asarray(delta, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(d == 0, np.inf, k * var / (d * d))
    return scalar_or_array(out)


def mde_from_variance(
    n: Any, variance: Any, *, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided"
) -> Any:
    r"""Minimum detectable effect :math:`\sqrt{K\sigma_D^2/N}` of a paired design with N items.

    Examples
    --------
    >>> from llm_power.planning import mde_from_variance
    >>> round(mde_from_variance(10_000, 0.49), 7)
    0.0196111
    """
    k = k_factor(alpha, power, alternative)
    n_arr = np.asarray(n, dtype=float)
    if np.any(~(n_arr >= 1)):
        msg = f"`n` must be >= 1; got {n!r}."
        raise ValueError(msg)
    return scalar_or_array(np.sqrt(k * np.asarray(variance, dtype=float) / n_arr))


def ceil_items(value: float) -> float:
    """Round an unrounded N* up to whole items, keeping inf (and tolerating float noise); a positive
    N* is at least one item.
    """
    if not math.isfinite(value):
        return value
    return float(max(math.ceil(value - 1e-9), 1)) if value > 0 else float(math.ceil(value))


def ceil_items_array(values: Any) -> np.ndarray:
    """:func:`ceil_items` on an array (inf and NaN kept)."""
    values = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):
        out: np.ndarray = np.where(np.isfinite(values),
                                   np.where(values > 0, np.maximum(np.ceil(values - 1e-9), 1.0), np.ceil(values)),
                                   values)
    return out


def z_alpha(alpha: float, alternative: str) -> float:
    """The one-sided critical value of a test at `alpha` for `alternative`."""
    return float(_q.upper_quantile(_q.tail_level(alpha, alternative)))
