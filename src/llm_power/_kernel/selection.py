r"""Selecting the best model: the probability of correct selection and the items it needs (issue 45).

The best model b is *selected* when its observed mean is above every other model's. With
:math:`D_k = \bar x_b - \bar x_k` over N paired items (k the other models), the vector of
:math:`Z_k = (D_k - \delta_k)\sqrt N / \sigma_k` tends to :math:`N(0, R)`, R the correlation of the
many-to-one family with b as control (:mod:`.family`; positive, about 1/2 for independent models of
equal variance), so

.. math:: P(CS) = P(D_k > 0 \ \forall k) = P(Z_k > -\mu_k \ \forall k), \qquad \mu_k = \delta_k \sqrt N / \sigma_k,

a multivariate normal orthant probability (Genz's integration, seeded: the same call gives the same
number). In Bechhofer's (1954) indifference-zone design -- k independent arms of equal variance
:math:`\sigma^2`, the best ahead of every other by exactly :math:`\delta^*` (the least favourable
configuration) -- :math:`\mu_k = \tau/\sqrt2` with :math:`\tau = \delta^*\sqrt N/\sigma` and R has
1/2 off the diagonal, and P(CS) is Bechhofer's
:math:`\int \Phi(z + \tau)^{k-1}\varphi(z)\,dz` (his tables give the tau for P* = 0.90, 0.95, ...).
Paired items change only R and :math:`\sigma_k` (the SD of the paired differences); ties between
observed means (0/1 scores at small N) are not in the limit.

It is the dual of the best set that ``rank`` reports: the items after which the best is, with
probability P*, the one observed best.

References
----------
Bechhofer, R. E. (1954). A single-sample multiple decision procedure for ranking means of normal
populations with known variances. Annals of Mathematical Statistics 25, 16-39.
Gibbons, J. D., Olkin, I. and Sobel, M. (1977). Selecting and Ordering Populations. Wiley (Table A.1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .._core.validation import check_open_unit
from .family import check_gaps, orthant_below, smallest_items

__all__ = ["items_for_selection", "selection_probability"]


def selection_probability(delta: Any, sd: Any, corr: Any, n_items: Any) -> Any:
    r"""P(correct selection) of the best model at ``n_items`` paired items (scalar or array of N).

    Parameters
    ----------
    delta : array_like, shape (k,)
        The best model's lead over each other model (best minus model; > 0 where it leads).
    sd : array_like, shape (k,)
        Per-item SD of each paired difference.
    corr : array_like, shape (k, k)
        Correlation of the k differences (:func:`.family.family_correlation` of the many-to-one family).
    n_items : float or array_like
        Numbers of items.

    Examples
    --------
    Bechhofer's table: three independent arms of equal variance, tau = 2.7101 gives P(CS) = 0.95.

    >>> import numpy as np
    >>> r = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> round(float(selection_probability([2.7101, 2.7101], [np.sqrt(2.0)] * 2, r, 1.0)), 4)
    0.95
    """
    d, s, r = check_gaps(delta, sd, corr, "sd")
    n = np.asarray(n_items, dtype=float)
    if np.any(~np.isfinite(n) | (n <= 0)):
        msg = f"`n_items` must be finite and > 0; got {n.tolist()!r}."
        raise ValueError(msg)
    out = np.array([orthant_below(0.0, -math.sqrt(float(v)) * d / s, r) for v in n.ravel()]).reshape(n.shape)
    return out[()] if out.ndim == 0 else out


def items_for_selection(delta: Any, sd: Any, corr: Any, *, probability: float = 0.95) -> float:
    r"""The smallest number of paired items N with P(correct selection) >= ``probability``.

    P(CS) rises with N (an orthant probability rises with every mean), so the answer is found by
    bisection over integers between a lower bound -- each comparison alone,
    :math:`\max_k \lceil (z_{P^*}\sigma_k/\delta_k)^2 \rceil`, since P(CS) <= min_k Phi(mu_k) -- and an
    upper bound from Bonferroni's inequality, each comparison at :math:`1 - (1 - P^*)/k`. A lead of
    0 or less (the "best" is not ahead of every model) gives ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> items_for_selection([0.02, 0.03], [0.4, 0.45], r, probability=0.9)
    785.0
    """
    d, s, r = check_gaps(delta, sd, corr, "sd")
    p = check_open_unit(probability, "probability")
    if np.any(d <= 0):
        return math.inf
    k = d.size
    ratio = d / s

    def ok(n: int) -> bool:
        return float(selection_probability(d, s, r, float(n))) >= p

    lo_n = max(int(np.ceil(np.max((special.ndtri(p) / ratio) ** 2) - 1e-9)), 1)
    hi_n = max(int(np.ceil(np.max((special.ndtri(1 - (1 - p) / k) / ratio) ** 2))), lo_n)
    return float(smallest_items(ok, lo_n, hi_n))
