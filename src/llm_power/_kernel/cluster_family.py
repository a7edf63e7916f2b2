r"""A family of paired gaps on clustered items: CR2 covariance, design effects, per-item SDs.

What the leaderboard planner needs for a benchmark drawn as clusters like a pilot's (issue 45).

A pilot items x models matrix x with G clusters of sizes m_g (N = sum m_g) and a family of pairs
(i_k, j_k), k = 1..K. Pair k's statistic is the gap :math:`\hat\delta_k = \bar x_{i_k} - \bar x_{j_k}`,
its cluster sums :math:`S_{gk} = \sum_{i \in g} D_{ik}` with :math:`D_{ik} = x_{i i_k} - x_{i j_k}`.
The cluster-robust covariance of the gaps is the package's CR2 estimator
(:mod:`llm_power._kernel.variance`, Bell & McCaffrey 2002) -- the variance ``diagnose(cluster=...)``
judges each gap with -- extended to the covariance of two gaps::

    h_g     = 1 / (1 - m_g / N)                                        (the CR2 weight of a mean)
    V_kl    = sum_g h_g (S_gk - m_g delta_k)(S_gl - m_g delta_l) / N^2   (V_kk: the CR2 variance)
    R_kl    = V_kl / sqrt(V_kk V_ll)                                   (the statistics' correlation)

It is formed from the models' residual sums :math:`r_{gm} = \sum_{i \in g} (x_{im} - \bar x_m)` as
the CR2 covariance of the models' means :math:`C = \sum_g h_g r_g r_g^\top / N^2` (one G x models
matrix product) and :math:`V_{kl} = C[i_k,i_l] - C[i_k,j_l] - C[j_k,i_l] + C[j_k,j_l]` (the map
from models to pairs is linear, so this is the sum above), never a clusters x pairs array.

The per-item-equivalent SD of each gap -- the SD that gives the gap's clustered variance as
sigma^2 / N, so that a benchmark of N items drawn as clusters like the pilot's has
Var(delta-hat) ~ sd_effective^2 / N -- with the design effect floored at 1 as the verdict floors it
(``max(DE, 1)`` in :func:`llm_power._kernel.verdict.cluster_verdict_from_variance`; a stress test
only tightens)::

    sd_k^2            = sum_i (D_ik - delta_k)^2 / (N - ddof)       (the IID variance of the verdict)
    DE_k              = V_kk / (sd_k^2 / N)                          (unfloored, as diagnose reports it)
    sd_effective_k^2  = max(DE_k, 1) sd_k^2 = max(N V_kk, sd_k^2)    (never below the IID SD)

The correlation is the CR2 one, unfloored (the floor scales a statistic, it does not change how
two statistics move together); a pair whose clustered variance is 0 (identical models, or
differences that cancel inside every cluster) has NaN correlations and one
:class:`~llm_power.DegenerateDataWarning`. ``df`` are the pilot's Imbens-Kolesar degrees of freedom
of each pair's test (:func:`llm_power._kernel.variance.cluster_df` with the ANOVA ICC of the
differences), as ``diagnose`` reports them. With one item per cluster h_g = N / (N - 1), V is the sample
covariance (ddof 1) of the differences over N, R is the IID correlation of
:func:`llm_power._kernel.family.family_correlation`, and DE = N / (N - 1) relative to the ddof-0 SD
(exactly 1 relative to the ddof-1 one).

In the normal limit the planner then judges Z ~ N(delta sqrt(N) / sd_effective, R) with normal
quantiles (:mod:`llm_power._kernel.leaderboard_power`), where the clustered verdict uses Student t
on the Imbens-Kolesar df (at most G - 1, and far fewer when cluster sizes are unequal: about 0.1 G
on MMLU-Pro's sources, 0.3-0.5 G in the synthetic designs). The limit is then the verdict's with
normal quantiles, and over-states the clustered verdict's E[R] by about 1-3% of the pairs and P(all)
by up to 0.06 at 40-150 df (tests/kernel/test_cluster_family.py measures it).

References
----------
Bell, R. M. and McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
with multi-stage samples. Survey Methodology 28, 169-181.
Imbens, G. W. and Kolesar, M. (2016). Robust standard errors in small samples: some practical
advice. Review of Economics and Statistics 98, 701-712.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.clusters import code_labels, require_clusters
from .family import FamilyCorrelation, check_family_input, correlation_from_covariance, pair_covariance
from .sufficient import model_cluster_sums
from .variance import cluster_design_effects, cluster_df, cluster_structure

__all__ = ["MAX_CLUSTER_CELLS", "MAX_FAMILY_PAIRS", "ClusterFamily", "cluster_family"]

#: the models' cluster sums (clusters x models the pairs use) are formed up to this many cells (160 MB)
MAX_CLUSTER_CELLS = 20_000_000
#: the pairs x pairs covariance is formed up to this many pairs (200 MB)
MAX_FAMILY_PAIRS = 5_000


@dataclass(frozen=True, slots=True)
class ClusterFamily:
    """A family of gaps measured on a clustered pilot (:func:`cluster_family`); arrays per pair.

    ``delta``: the pilot's gaps (x_i - x_j); ``sd``: the IID SD of each pair's differences (ddof as
    asked); ``design_effect``: V_CR2 / (sd^2 / N), unfloored (NaN for a pair without variation);
    ``sd_effective``: sqrt(max(N V_CR2, sd^2)), the per-item SD of a clustered benchmark, never below
    ``sd``; ``covariance``: the CR2 covariance of the gaps (pairs x pairs); ``dependence``: its
    correlation and the sign summary (:class:`~llm_power._kernel.family.FamilyCorrelation`);
    ``df``: the Imbens-Kolesar degrees of freedom of each pair's clustered t test on the pilot (as
    ``diagnose`` reports them; about proportional to the clusters when more are drawn like these);
    ``n_items``, ``n_clusters``, ``ddof``.
    """

    delta: np.ndarray
    sd: np.ndarray
    sd_effective: np.ndarray
    design_effect: np.ndarray
    covariance: np.ndarray
    dependence: FamilyCorrelation
    df: np.ndarray
    n_items: int
    n_clusters: int
    ddof: int

    @property
    def corr(self) -> np.ndarray:
        """The correlation of the pairs' statistics (``dependence.corr``)."""
        return self.dependence.corr

    @property
    def mean_cluster_size(self) -> float:
        """N / G: a benchmark of n items drawn like the pilot has about n / mean_cluster_size clusters."""
        return self.n_items / self.n_clusters

    def __repr__(self) -> str:
        return (f"ClusterFamily(pairs={self.delta.size}, n_items={self.n_items}, n_clusters={self.n_clusters}, "
                f"design_effect=[{np.nanmin(self.design_effect):.3g}, {np.nanmax(self.design_effect):.3g}])"
                if np.any(np.isfinite(self.design_effect)) else
                f"ClusterFamily(pairs={self.delta.size}, n_items={self.n_items}, n_clusters={self.n_clusters})")


def cluster_family(x: Any, cluster: Any, i: Any, j: Any, *, ddof: int | None = None) -> ClusterFamily:
    r"""The gaps, clustered SDs, design effects and CR2 correlation of a family of pairs.

    Parameters
    ----------
    x : array, items x models
        The pilot's scores (0/1 or graded), no missing values.
    cluster : array_like
        One cluster label per item (coded by :func:`llm_power._core.clusters.code_labels`: missing
        labels are a :class:`~llm_power.DataError`; at least 2 clusters, a warning below 30).
    i, j : int arrays
        The family's pairs, gap x_i - x_j (:func:`llm_power._kernel.family.family_pairs`).
    ddof : {0, 1}, optional
        The IID variance the design effect is relative to and ``sd_effective`` is floored at: 0 (the
        plug-in variance of 0/1 pairs, as ``diagnose`` and the planner), 1 (the sample variance of
        graded pairs, as ``diagnose``). Default: 0 for 0/1 scores, 1 otherwise.

    Returns
    -------
    ClusterFamily

    Notes
    -----
    See the module docstring: V_kl = sum_g h_g (S_gk - m_g delta_k)(S_gl - m_g delta_l) / N^2 with the
    CR2 weight h_g = 1 / (1 - m_g / N); DE_k = V_kk / (sd_k^2 / N); sd_effective_k^2 = max(DE_k, 1) sd_k^2.

    Examples
    --------
    Two adjacent gaps of three models on 60 clusters of 20 items that share a per-cluster effect of
    the middle model: the gaps' statistics correlate negatively and are inflated by clustering.

    >>> import numpy as np
    >>> from llm_power._kernel.cluster_family import cluster_family
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(60), 20)
    >>> effect = rng.normal(0, 0.8, (60, 3))[g]
    >>> x = (rng.normal(size=(1200, 3)) + effect < [0.6, 0.4, 0.2]).astype(float)
    >>> fam = cluster_family(x, g, [0, 1], [1, 2])
    >>> np.round(fam.design_effect, 1).tolist(), round(float(fam.corr[0, 1]), 2), fam.df.tolist()
    ([5.6, 5.1], -0.56, [59.0, 59.0])
    >>> bool(np.all(fam.sd_effective >= fam.sd))
    True
    """
    arr, i_arr, j_arr = check_family_input(x, i, j)
    n = arr.shape[0]
    if ddof is None:
        ddof = 0 if bool(np.all((arr == 0) | (arr == 1))) else 1
    elif isinstance(ddof, bool) or ddof not in {0, 1}:
        msg = f"`ddof` must be 0 or 1; got {ddof!r}."
        raise ValueError(msg)
    codes, g = code_labels(cluster, n)
    require_clusters(g)
    used, inv = np.unique(np.concatenate([i_arr, j_arr]), return_inverse=True)
    if i_arr.size > MAX_FAMILY_PAIRS:
        msg = (f"the family has {i_arr.size:,} pairs, more than {MAX_FAMILY_PAIRS:,} (a pairs x pairs covariance): "
               "plan for fewer pairs (the adjacent ones, or the top models)")
        raise ValueError(msg)
    if g * used.size > MAX_CLUSTER_CELLS:
        msg = (f"{g:,} clusters x {used.size:,} models is more than {MAX_CLUSTER_CELLS:,} cluster sums: plan for "
               "fewer models, or with coarser clusters")
        raise ValueError(msg)
    a, b = inv[: i_arr.size], inv[i_arr.size:]
    sub = arr[:, used]
    means = sub.mean(axis=0)
    sizes, resid, _ = model_cluster_sums(sub, codes, g, means)
    h = 1.0 / (1.0 - sizes / n)  # the CR2 weight of each cluster (finite: G >= 2 non-empty clusters)
    cov_models = (resid * h[:, None]).T @ resid / (n * n)  # CR2 covariance of the models' means
    cov = pair_covariance(cov_models, a, b)
    v = np.maximum(np.diag(cov), 0.0)
    centred = sub - means
    ss = _pair_ss(centred, a, b)
    sd2 = ss / (n - ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        de = np.where(sd2 > 0, n * v / sd2, np.nan)
    sd_eff = np.sqrt(np.maximum(n * v, sd2))
    dependence = correlation_from_covariance(cov_models, a, b)
    # the pilot's Imbens-Kolesar df: the ANOVA ICC from the between sum of squares sum_g r_gk^2 / m_g
    r2 = np.diag(pair_covariance(resid.T @ resid, a, b))
    between = np.diag(pair_covariance((resid / sizes[:, None]).T @ resid, a, b))
    icc = cluster_design_effects(n, g, sd2, r2, n * n * v, between, float(np.sum(sizes**2)), ss - between).icc
    df = cluster_df(cluster_structure(sizes), icc)
    return ClusterFamily(delta=means[a] - means[b], sd=np.sqrt(sd2), sd_effective=sd_eff, design_effect=de,
                         covariance=cov, dependence=dependence, df=df, n_items=n, n_clusters=g, ddof=int(ddof))


def _pair_ss(centred: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum_i (D_ik - delta_k)^2 of every pair from the models' centred scores (the items covariance)."""
    gram = centred.T @ centred
    return np.asarray(np.maximum(gram[a, a] + gram[b, b] - 2.0 * gram[a, b], 0.0), dtype=float)

