"""Clustered items: intraclass correlation, design effect and cluster-robust standard errors.

Benchmark items often come in clusters (MMLU subjects, passages with several questions, prompt
templates). Items in a cluster are correlated, so the benchmark holds less information than its
item count suggests. The design effect DE = 1 + (m - 1) ICC says by how much: N*_cluster = DE N*.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._results import Result
from ._validation import as_float_array
from .errors import DegenerateDataWarning

__all__ = ["ClusterSummary", "cluster_robust_se", "design_effect", "icc_anova"]


def _codes(values: Any, cluster: Any) -> tuple[np.ndarray, np.ndarray, int]:
    y = as_float_array(values, "values")
    if y.ndim != 1:
        raise ValueError(f"`values` must be 1-D (one value per item); got shape {y.shape}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("`values` must not contain NaN or inf.")
    labels = np.asarray(cluster)
    if labels.ndim != 1 or labels.shape[0] != y.shape[0]:
        raise ValueError(f"`cluster` must have one label per item ({y.shape[0]}); got shape {labels.shape}.")
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1)
    return y, codes, int(codes.max() + 1) if codes.size else 0


@dataclass(frozen=True, slots=True, repr=False)
class ClusterSummary(Result):
    """One-way ANOVA summary of per-item values in clusters (see :func:`icc_anova`)."""

    n: int
    n_clusters: int
    mean_cluster_size: float
    icc: float
    icc_raw: float
    design_effect: float
    msb: float
    msw: float

    _repr_fields = ("n", "n_clusters", "icc", "design_effect")


def icc_anova(values: Any, cluster: Any) -> ClusterSummary:
    r"""Intraclass correlation by one-way ANOVA, and the design effect it implies.

    Parameters
    ----------
    values : array_like
        One value per item, e.g. the paired differences D = a - b.
    cluster : array_like
        One cluster label per item.

    Returns
    -------
    ClusterSummary
        ``icc`` (truncated at 0), ``icc_raw`` (the untruncated estimate),
        ``design_effect`` = 1 + (m - 1) icc with m the mean cluster size.

    Notes
    -----
    With G clusters of sizes n_g, N items: MSB = sum n_g (ybar_g - ybar)^2 / (G - 1),
    MSW = sum (y - ybar_g)^2 / (N - G), n_0 = (N - sum n_g^2 / N) / (G - 1) and
    ICC = (MSB - MSW) / (MSB + (n_0 - 1) MSW). With one cluster, or zero within-cluster and
    between-cluster variation, the ICC is undefined: NaN with a warning.

    References
    ----------
    .. [1] Donner, A. (1986). A review of inference procedures for the intraclass correlation
       coefficient in the one-way random effects model. International Statistical Review 54, 67-82.

    Examples
    --------
    >>> from llm_power import icc_anova
    >>> res = icc_anova([1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0], ["a"] * 4 + ["b"] * 4 + ["c"] * 4)
    >>> round(res.icc, 3), round(res.design_effect, 3)
    (0.467, 2.4)
    """
    y, codes, g = _codes(values, cluster)
    n = y.size
    sizes = np.bincount(codes, minlength=g).astype(float)
    m_bar = n / g
    if g < 2 or n - g < 1:
        warnings.warn(f"{g} cluster(s) for {n} items: the ICC is undefined (need >= 2 clusters and "
                      "a cluster with >= 2 items).", DegenerateDataWarning, stacklevel=2)
        return ClusterSummary(n, g, m_bar, math.nan, math.nan, math.nan, math.nan, math.nan)
    sums = np.bincount(codes, weights=y, minlength=g)
    means = sums / sizes
    grand = y.mean()
    msb = float(np.sum(sizes * (means - grand) ** 2) / (g - 1))
    msw = float(np.sum((y - means[codes]) ** 2) / (n - g))
    n0 = (n - np.sum(sizes**2) / n) / (g - 1)
    denom = msb + (n0 - 1) * msw
    if denom <= 0:
        warnings.warn("no variation within or between clusters: the ICC is undefined.",
                      DegenerateDataWarning, stacklevel=2)
        return ClusterSummary(n, g, m_bar, math.nan, math.nan, math.nan, msb, msw)
    raw = float((msb - msw) / denom)
    icc = max(0.0, raw)
    return ClusterSummary(n=n, n_clusters=g, mean_cluster_size=m_bar, icc=icc, icc_raw=raw,
                          design_effect=design_effect(m_bar, icc), msb=msb, msw=msw)


def design_effect(mean_cluster_size: float, icc: float) -> float:
    r"""Design effect :math:`DE = 1 + (\bar m - 1)\,\mathrm{ICC}` (Kish 1965).

    Examples
    --------
    MMLU-Pro has 12,032 items in 14 categories (mean size 859); an ICC of only 0.01 more than
    doubles the items needed:

    >>> from llm_power import design_effect
    >>> round(design_effect(12032 / 14, 0.01), 2)
    9.58
    """
    m = float(mean_cluster_size)
    if not (math.isfinite(m) and m >= 1):
        raise ValueError(f"`mean_cluster_size` must be >= 1; got {mean_cluster_size!r}.")
    icc = float(icc)
    if not -1 <= icc <= 1:
        raise ValueError(f"`icc` must be in [-1, 1]; got {icc!r}.")
    return 1.0 + (m - 1.0) * icc


def cluster_robust_se(values: Any, cluster: Any) -> float:
    r"""Cluster-robust (CR1) standard error of the mean of ``values``.

    :math:`\widehat{SE} = \frac1N\sqrt{\frac{G}{G-1}\sum_g\big(\sum_{i\in g}(y_i-\bar y)\big)^2}`,
    the sandwich estimator for an intercept-only regression with the small-sample factor
    G/(G-1) (the (N-1)/(N-k) factor is 1 for k = 1); equal to statsmodels' OLS with
    ``cov_type="cluster"``.

    Examples
    --------
    >>> from llm_power import cluster_robust_se
    >>> round(cluster_robust_se([1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0], [0] * 4 + [1] * 4 + [2] * 4), 4)
    0.25
    """
    y, codes, g = _codes(values, cluster)
    if g < 2:
        warnings.warn("one cluster: the cluster-robust standard error is undefined.",
                      DegenerateDataWarning, stacklevel=2)
        return math.nan
    resid_sums = np.bincount(codes, weights=y - y.mean(), minlength=g)
    return float(math.sqrt(g / (g - 1) * np.sum(resid_sums**2)) / y.size)
