r"""Which level to cluster at (a score-variance test) and leave-one-cluster-out stability, per pair.

The score-variance test of the clustering level and the leave-one-cluster-out flips of a gap's sign
and verdict, vectorised over pairs.

**The score-variance test** (MacKinnon, Nielsen & Webb 2023) of the mean of y (the paired
differences D_i of a pair, or one model's scores), i.e. the intercept-only regression, whose score
of item i is its residual u_i = y_i - ybar. H fine clusters h are nested in G coarse clusters g
(items are the finest level: H = N). With the fine score sums s_h = sum_{i in h} u_i and, per
coarse cluster, A_g = sum_{h in g} s_h, B_g = sum_{h in g} s_h^2, C_g = sum_{h in g} s_h^4:

    theta = G/(G-1) sum_g A_g^2 - H/(H-1) sum_g B_g          (coarse minus fine CV1 variance of the score)
    V     = 2 sum_g (B_g^2 - C_g) = 2 sum_g sum_{h != h' in g} s_h^2 s_h'^2
    tau   = theta / sqrt(V)

(their eqs. for k = 1 regressor; the factor (N-1)/(N-k) of CV1 is 1 here). Under H0 "the fine
level is right" the fine sums are independent, theta estimates 0 and tau -> N(0, 1); under the
coarse alternative the within-coarse covariances make theta > 0, so the test is one-sided
(large tau rejects). Three reference distributions:

- ``"asymptotic"``: the paper's normal, p = 1 - Phi(tau). Over-rejects with few coarse clusters
  (its tau is a standardised sum of G chi-square-like terms, skewed to the right: about 6.5% at
  nominal 5% with G = 14).
- ``"bootstrap"``: the paper's restricted wild bootstrap at the fine level: y* = ybar + v_h u_i with
  Rademacher v_h per fine cluster, the mean re-estimated, tau* recomputed;
  p = (1 + #{tau* >= tau}) / (B + 1) (the paper counts #/B; the +1 keeps p off 0).
- ``"chi_square"`` (items as the fine level only, :func:`item_level_test`): the Gaussian limit of
  that bootstrap, Q = sum_g A_g^2 against Box's (1954) scaled chi-square a chi2_nu matched to the
  weighted chi-square sum_j lambda_j Z_j^2, lambda the eigenvalues of K = P diag(B) P',
  P = I - m 1'/N (the coarse sums of residuals lose one degree of freedom to the mean):
  a = tr(K^2)/tr(K), nu = tr(K)^2/tr(K^2) (exactly chi2_{G-1} for equal sizes and variances).
  Closed form from per-cluster power sums, so it runs for leaderboards; it needs many items per
  coarse cluster (each A_g close to normal).

**Leave-one-cluster-out**: for each cluster k, the gap without it, delta_(-k) = (sum_{g != k} S_g) /
(N - m_k), and its CR2 / Imbens-Kolesar cluster t test on the G - 1 remaining clusters
(:func:`llm_power._kernel.variance.mean_variance_from_sums` and
:func:`llm_power._kernel.verdict.t_test`, never re-derived here). A *sign flip* is
sign(delta_(-k)) != sign(delta); a *verdict flip* changes the signed verdict sign(delta) * 1[p <= alpha]
(significant for A, significant for B, not significant).

References
----------
MacKinnon, J. G., Nielsen, M. O. and Webb, M. D. (2023). Testing for the appropriate level of
clustering in linear regression models. *Journal of Econometrics* 235(2), 2027-2056 (the Stata
implementation ``mnwsvt`` by M. D. Webb).
Box, G. E. P. (1954). Some theorems on quadratic forms applied in the study of analysis of variance
problems, I. *Annals of Mathematical Statistics* 25(2), 290-302.
Liu, Y. and Xie, J. (2020). Cauchy combination test: a powerful test with analytic p-value
calculation under arbitrary dependency structures. *JASA* 115(529), 393-402.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy import special

from .._core.clusters import code_labels
from .._core.errors import DegenerateDataWarning, warn
from .._core.validation import as_rng, check_int_at_least, check_open_unit, check_option
from .sufficient import BATCH_ELEMENTS
from .variance import mean_variance_from_sums
from .verdict import rejects, t_test

__all__ = [
    "CLUSTER_LEVEL_METHODS",
    "ITEM_LEVEL_METHODS",
    "FamilyLevel",
    "LeaveOneOut",
    "LevelTest",
    "clustering_level_test",
    "family_level",
    "item_level_test",
    "leave_one_cluster_out",
]

#: reference distributions of :func:`clustering_level_test` (fine clusters of any size)
CLUSTER_LEVEL_METHODS = ("asymptotic", "bootstrap")
#: reference distributions of :func:`item_level_test` (items as the fine level, from power sums)
ITEM_LEVEL_METHODS = ("asymptotic", "chi_square")
#: V <= this share of (sum B)^2 is a zero variance of theta (no coarse cluster with two fine ones
#: that vary): tau is not estimable
_ZERO_VARIANCE = 1e-12
#: bootstrap resamples drawn at once
_RESAMPLE_BLOCK = 128


class LevelTest(NamedTuple):
    """The score-variance test of each pair: ``statistic`` tau and its one-sided ``pvalue`` (NaN:
    not estimable), with the numbers of coarse and fine clusters.
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    n_coarse: int
    n_fine: int


class FamilyLevel(NamedTuple):
    """A family of level tests (one per pair): the share of estimable pairs whose test rejects at
    ``alpha``, the Cauchy-combination p-value of the family, and the numbers of pairs.
    """

    share_rejected: float
    combined_pvalue: float
    n_pairs: int
    n_estimable: int


class LeaveOneOut(NamedTuple):
    """Leave-one-cluster-out stability of each pair (P,): how many clusters, dropped alone, flip
    the sign of the gap and how many flip its verdict (NaN where not estimable); the per-cluster
    flags (G, P) (NaN where not estimable); the gap without each cluster (G, P).
    """

    sign_flips: np.ndarray
    verdict_flips: np.ndarray
    sign_flipped: np.ndarray
    verdict_flipped: np.ndarray
    delta_without: np.ndarray


# =================================================================================================
# The score-variance statistic
# =================================================================================================

def _tau(sum_a2: np.ndarray, sum_b: np.ndarray, sum_b2_minus_c: np.ndarray, g: int, h: int) -> np.ndarray:
    """The statistic theta / sqrt(V) from sum_g A_g^2, sum_g B_g and sum_g (B_g^2 - C_g); NaN where V = 0."""
    theta = g / (g - 1.0) * sum_a2 - h / (h - 1.0) * sum_b
    var = 2.0 * sum_b2_minus_c
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = var > _ZERO_VARIANCE * sum_b * sum_b
        return np.where(ok, theta / np.sqrt(np.where(ok, var, 1.0)), np.nan)


def _coarse_reduce(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums over the fine clusters of each coarse one (rows sorted by coarse cluster)."""
    return np.add.reduceat(x, starts, axis=0)


def _normal_upper(tau: np.ndarray) -> np.ndarray:
    """1 - Phi(tau), NaN kept (not estimable is not p = 1 here: the caller decides)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(tau), np.nan, special.ndtr(-tau))


def _cluster_sizes(sizes: Any, g: int, name: str = "sizes", what: str = "cluster") -> np.ndarray:
    """``sizes`` as floats, one size >= 1 per cluster (``g`` of them), or the one message."""
    m = np.asarray(sizes, dtype=float)
    if m.shape != (g,) or not np.all(np.isfinite(m)) or np.any(m < 1):
        msg = f"`{name}` must hold one size >= 1 per {what} ({g}); got {np.asarray(sizes)!r}."
        raise ValueError(msg)
    return m


def clustering_level_test(fine_sums: Any, fine_sizes: Any, coarse_of_fine: Any, *, method: str = "bootstrap",
                          n_resamples: int = 999, rng: Any = None) -> LevelTest:
    r"""Score-variance test of the clustering level of a mean: H0 the fine clusters are independent
    against H1 the coarse clusters are (MacKinnon, Nielsen & Webb 2023), for each column (pair).

    Parameters
    ----------
    fine_sums : array_like, shape (H,) or (H, P)
        Sum of y over each fine cluster (per pair). Items as the fine level: y itself.
    fine_sizes : array_like, shape (H,)
        Items in each fine cluster (all 1 for items).
    coarse_of_fine : array_like, shape (H,)
        The coarse cluster of each fine cluster (labels; a fine cluster lies in one coarse one).
    method : {"asymptotic", "bootstrap"}
        The reference distribution of tau (see the module docstring).
    n_resamples : int
        Wild-bootstrap resamples (``method="bootstrap"``).
    rng : None, int or numpy.random.Generator
        Seed of the bootstrap's Rademacher draws (the same draws for every pair).

    Returns
    -------
    LevelTest
        ``statistic`` tau and the one-sided ``pvalue`` (small: the coarse level is needed), scalars
        for 1-D input; NaN (with one :class:`~llm_power.DegenerateDataWarning`) where V = 0: no
        coarse cluster holds two fine clusters with non-zero score sums (constant y, every coarse
        cluster a single fine one).

    Notes
    -----
    With ybar = sum_h S_h / N and s_h = S_h - m_h ybar, A_g, B_g, C_g the coarse sums of s_h, s_h^2,
    s_h^4: theta = G/(G-1) sum A_g^2 - H/(H-1) sum B_g, V = 2 sum (B_g^2 - C_g), tau = theta/sqrt(V).
    The bootstrap's fine sums are s*_h = v_h s_h - m_h c, c = sum_h v_h s_h / N, so that its coarse
    sums follow from four (B x H_g) @ (H_g x P) products per coarse cluster (of s, s m, s^3 m, s m^3).

    References
    ----------
    MacKinnon, Nielsen & Webb (2023), J. Econometrics 235(2), 2027-2056.

    Examples
    --------
    Differences of a pair on 8 topics of 30 items, no topic effect: the test does not ask for clusters.

    >>> import numpy as np
    >>> from llm_power._kernel.cluster_level import clustering_level_test
    >>> rng = np.random.default_rng(1)
    >>> d = rng.choice([-1.0, 0.0, 1.0], size=240, p=[0.15, 0.7, 0.15])
    >>> res = clustering_level_test(d, np.ones(240), np.repeat(np.arange(8), 30), rng=2)
    >>> bool(res.pvalue > 0.05)
    True
    """
    method = check_option(method, "method", CLUSTER_LEVEL_METHODS)
    s_fine = np.asarray(fine_sums, dtype=float)
    if s_fine.ndim not in {1, 2}:
        msg = f"`fine_sums` must be 1-D (fine clusters) or 2-D (fine clusters x pairs); got shape {s_fine.shape}."
        raise ValueError(msg)
    n_fine = s_fine.shape[0]
    sizes = _cluster_sizes(fine_sizes, n_fine, "fine_sizes", "fine cluster")
    if not np.all(np.isfinite(s_fine)):
        msg = "`fine_sums` must be finite."
        raise ValueError(msg)
    codes, g = code_labels(coarse_of_fine, n_fine, name="coarse_of_fine", unit="fine cluster")
    if g < 2:
        msg = f"`coarse_of_fine` must name at least 2 coarse clusters; got {g}."
        raise ValueError(msg)
    if method == "bootstrap":
        n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    scalar = s_fine.ndim == 1
    s2d = s_fine[:, None] if scalar else s_fine
    order = np.argsort(codes, kind="stable")
    s2d, sizes, codes = s2d[order], sizes[order], codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1]
    n = float(sizes.sum())
    s = s2d - sizes[:, None] * (s2d.sum(axis=0) / n)  # fine score sums
    s2 = s * s
    sum_a2 = np.sum(_coarse_reduce(s, starts) ** 2, axis=0)
    b = _coarse_reduce(s2, starts)
    c = _coarse_reduce(s2 * s2, starts)
    tau = _tau(sum_a2, b.sum(axis=0), np.sum(b * b - c, axis=0), g, n_fine)
    if method == "asymptotic":
        p = _normal_upper(tau)
    else:
        exceed = _wild_exceedances(s, sizes, starts, tau, g, n_resamples, as_rng(rng))
        p = np.where(np.isnan(tau), np.nan, (1.0 + exceed) / (n_resamples + 1.0))
    if np.any(np.isnan(tau)):
        warn("the clustering-level test is not estimable for some pairs (no coarse cluster holds two fine "
             "clusters whose score sums vary): statistic and p-value are NaN", DegenerateDataWarning)
    if scalar:
        return LevelTest(np.float64(tau[0]), np.float64(p[0]), g, n_fine)
    return LevelTest(tau, p, g, n_fine)


def _wild_exceedances(s: np.ndarray, m: np.ndarray, starts: np.ndarray, tau: np.ndarray, g: int,  # noqa: PLR0917
                      n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """#{tau* >= tau} over Rademacher wild-bootstrap resamples at the fine level (per pair).

    The draws are made resample block by resample block, shared by every pair (so a pair's p-value
    does not depend on which other pairs are tested with it); pairs are processed in blocks whose
    (H, 4 x pairs) products stay bounded.
    """
    n_fine, n_pairs = s.shape
    tol = 1e-9 * np.maximum(1.0, np.abs(np.nan_to_num(tau)))
    step = max(1, BATCH_ELEMENTS // (4 * n_fine))
    exceed = np.zeros(n_pairs)
    done = 0
    while done < n_resamples:
        nb = min(_RESAMPLE_BLOCK, n_resamples - done)
        v = gen.integers(0, 2, size=(nb, n_fine)).astype(float) * 2.0 - 1.0
        for lo in range(0, n_pairs, step):
            sl = slice(lo, min(lo + step, n_pairs))
            tau_star = _wild_tau(v, s[:, sl], m, starts, g)
            exceed[sl] += np.sum(np.where(np.isnan(tau_star), True, tau_star >= tau[sl] - tol[sl]), axis=0)
        done += nb
    return exceed


def _wild_tau(v: np.ndarray, s: np.ndarray, m: np.ndarray, starts: np.ndarray, g: int) -> np.ndarray:
    """tau* (resamples x pairs) of the wild-bootstrap draws ``v`` (resamples x H, +-1) of the fine
    score sums ``s`` (H x pairs, sorted by coarse cluster starting at ``starts``): s*_h = v_h s_h - m_h c,
    c = sum_h v_h s_h / N, expanded so that only v @ [s, s m, s^3 m, s m^3] is formed.
    """
    n_fine, pb = s.shape
    nb = v.shape[0]
    n = float(m.sum())
    ends = np.r_[starts[1:], n_fine]
    mm = m[:, None]
    s2 = s * s
    b0 = _coarse_reduce(s2, starts)
    c0 = _coarse_reduce(s2 * s2, starts)
    s2m2 = _coarse_reduce(s2 * mm**2, starts)
    msum, m2sum, m4sum = (np.add.reduceat(m**k, starts) for k in (1, 2, 4))
    feats = np.concatenate([s, s * mm, s**3 * mm, s * mm**3], axis=1)  # (H, 4 pb)
    prods = [v[:, a:e] @ feats[a:e] for a, e in zip(starts, ends, strict=True)]  # G x (nb, 4 pb)
    cc = sum(p_[:, :pb] for p_ in prods) / n  # (nb, pb): the shift of the re-estimated mean
    sum_a2 = np.zeros((nb, pb))
    sum_b = np.zeros((nb, pb))
    sum_bc = np.zeros((nb, pb))
    for k, p_ in enumerate(prods):
        t1, t2, t3, t4 = (p_[:, j * pb:(j + 1) * pb] for j in range(4))
        a_k = t1 - msum[k] * cc
        b_k = b0[k] - 2.0 * cc * t2 + cc * cc * m2sum[k]
        c_k = c0[k] - 4.0 * cc * t3 + 6.0 * cc * cc * s2m2[k] - 4.0 * cc**3 * t4 + cc**4 * m4sum[k]
        sum_a2 += a_k * a_k
        sum_b += b_k
        sum_bc += b_k * b_k - c_k
    return _tau(sum_a2, sum_b, sum_bc, g, n_fine)


def item_level_test(power_sums: Any, sizes: Any, *, method: str = "chi_square") -> LevelTest:
    r"""Score-variance test of H0 "items are independent" against H1 "clusters are", from per-cluster
    power sums of y (vectorised over pairs; :func:`clustering_level_test` with items as the fine level).

    Parameters
    ----------
    power_sums : array_like, shape (4, G) or (4, G, P)
        sum y, sum y^2, sum y^3, sum y^4 over each cluster's items (per pair). For 0/1 pairs with
        b_g items where A alone is right and c_g where B alone is: (b-c, b+c, b-c, b+c).
    sizes : array_like, shape (G,)
        Items per cluster.
    method : {"asymptotic", "chi_square"}
        The paper's normal reference for tau, or Box's scaled chi-square for Q = sum_g A_g^2 (the
        default: the normal over-rejects with few clusters; see the module docstring).

    Returns
    -------
    LevelTest
        ``statistic`` is the paper's tau for either method; ``pvalue`` one-sided.

    Notes
    -----
    Centred sums come from the power sums by the binomial expansion about ybar (e.g. C_g =
    p4 - 4 ybar p3 + 6 ybar^2 p2 - 4 ybar^3 p1 + m ybar^4): exact for differences of scores in
    [0, 1]; scores with a large common offset should be centred first. For ``"chi_square"``, with
    b = (B_g), K = diag(b) - (m b' + b m')/N + (sum b / N^2) m m':
    tr K = sum b - 2 sum(m b)/N + sum(m^2) sum(b)/N^2 and tr K^2 = ||K||_F^2 in closed form.

    Examples
    --------
    Four topics of 200 items; where A alone is right (b) and where B alone is (c) varies by topic:

    >>> import numpy as np
    >>> from llm_power._kernel.cluster_level import item_level_test
    >>> b = np.array([30., 25, 40, 20]); c = np.array([10., 28, 12, 22])
    >>> res = item_level_test(np.stack([b - c, b + c, b - c, b + c]), np.full(4, 200.0))
    >>> round(float(res.statistic), 2), round(float(res.pvalue), 4)
    (6.1, 0.0012)
    """
    method = check_option(method, "method", ITEM_LEVEL_METHODS)
    ps = np.asarray(power_sums, dtype=float)
    if ps.ndim not in {2, 3} or ps.shape[0] != 4:
        msg = f"`power_sums` must have shape (4, G) or (4, G, P); got {ps.shape}."
        raise ValueError(msg)
    g = ps.shape[1]
    m = _cluster_sizes(sizes, g)
    if g < 2:
        msg = f"`power_sums` must cover at least 2 clusters; got {g}."
        raise ValueError(msg)
    if not np.all(np.isfinite(ps)):
        msg = "`power_sums` must be finite."
        raise ValueError(msg)
    scalar = ps.ndim == 2
    p1, p2, p3, p4 = (x[:, None] if scalar else x for x in ps)
    mm = m[:, None]
    n = float(m.sum())
    ybar = p1.sum(axis=0) / n
    a = p1 - mm * ybar
    b = np.maximum(p2 - 2.0 * ybar * p1 + mm * ybar**2, 0.0)
    c = np.maximum(p4 - 4.0 * ybar * p3 + 6.0 * ybar**2 * p2 - 4.0 * ybar**3 * p1 + mm * ybar**4, 0.0)
    c = np.minimum(c, b * b)  # sum u^4 <= (sum u^2)^2: rounding never makes V negative
    q = np.sum(a * a, axis=0)
    sum_b = b.sum(axis=0)
    tau = _tau(q, sum_b, np.sum(b * b - c, axis=0), g, int(n))
    if method == "asymptotic":
        p = _normal_upper(tau)
    else:
        p = np.where(np.isnan(tau), np.nan, _box_chi_square(q, b, m))
    if np.any(np.isnan(tau)):
        warn("the item-level test is not estimable for some pairs (no cluster holds two items whose "
             "residuals vary): statistic and p-value are NaN", DegenerateDataWarning)
    if scalar:
        return LevelTest(np.float64(tau[0]), np.float64(p[0]), g, int(n))
    return LevelTest(tau, p, g, int(n))


def _box_chi_square(q: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
    """P(a chi2_nu >= Q), the scaled chi-square with the first two moments of sum_g A_g^2 under H0."""
    mm = m[:, None]
    n = float(m.sum())
    sb, smb, smb2, sb2, sm2b = (b.sum(0), (mm * b).sum(0), (mm * b * b).sum(0), (b * b).sum(0),
                                (mm * mm * b).sum(0))
    sm2 = float(np.sum(m * m))
    w = sb / n**2  # K = D - (m b' + b m')/N + w m m'
    tr = sb - 2.0 * smb / n + sm2 * w
    tr2 = (sb2 + (2.0 * sm2 * sb2 + 2.0 * smb**2) / n**2 + w * w * sm2**2
           - 4.0 * smb2 / n + 2.0 * w * sm2b - 4.0 * w * sm2 * smb / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = tr2 / tr
        nu = tr * tr / tr2
        return np.asarray(special.chdtrc(nu, q / scale))


def family_level(pvalues: Any, *, alpha: float = 0.05) -> FamilyLevel:
    r"""A leaderboard's level tests summarised: the share of pairs whose test rejects at ``alpha``
    (descriptive) and one p-value for the family, the Cauchy combination (Liu & Xie 2020)
    T = mean_j tan((1/2 - p_j) pi), p = 1/2 - arctan(T)/pi.

    Why the Cauchy combination: the pairs share their items and models, so their tests are strongly
    and unknownly dependent; its p-value stays (approximately, in the small-alpha tail) valid under
    arbitrary dependence, is exact for independent and for identical p-values, and, unlike
    Bonferroni, is not defeated by bootstrap p-values floored at 1/(B+1) in large families. NaN
    p-values (not estimable pairs) are left out; with none estimable both numbers are NaN.

    Examples
    --------
    >>> from llm_power._kernel.cluster_level import family_level
    >>> fam = family_level([0.001, 0.2, 0.5, 0.9])
    >>> fam.share_rejected, round(fam.combined_pvalue, 4)
    (0.25, 0.004)
    """
    alpha = check_open_unit(alpha, "alpha")
    p = np.asarray(pvalues, dtype=float).ravel()
    if np.any((p < 0) | (p > 1)):
        msg = "`pvalues` must lie in [0, 1] (NaN: not estimable)."
        raise ValueError(msg)
    ok = p[~np.isnan(p)]
    if ok.size == 0:
        return FamilyLevel(float("nan"), float("nan"), int(p.size), 0)
    tiny = ok < 1e-15
    t = np.where(tiny, 1.0 / (np.maximum(ok, 1e-300) * np.pi), np.tan((0.5 - ok) * np.pi))
    stat = float(np.mean(t))
    combined = float(np.arctan2(1.0, stat) / np.pi)  # = 1/2 - arctan(T)/pi, accurate for large T
    return FamilyLevel(float(np.mean(rejects(ok, alpha))), combined, int(p.size), int(ok.size))


# =================================================================================================
# Leave one cluster out
# =================================================================================================

def leave_one_cluster_out(sums: Any, sumsq: Any, sizes: Any, *, alpha: float = 0.05,
                          alternative: str = "two-sided") -> LeaveOneOut:
    r"""For each pair: how many clusters, dropped alone, flip the sign of the gap, and how many flip
    the verdict of its CR2 / Imbens-Kolesar cluster t test at ``alpha``.

    Parameters
    ----------
    sums, sumsq : array_like, shape (G,) or (G, P)
        sum D and sum D^2 over each cluster's items (per pair).
    sizes : array_like, shape (G,)
        Items per cluster.
    alpha : float
        Level of the cluster t test.
    alternative : {"two-sided", "less", "greater"}
        Of the cluster t test.

    Returns
    -------
    LeaveOneOut
        ``sign_flips`` and ``verdict_flips`` per pair (float counts; NaN where not estimable: a zero
        gap has no sign to flip; a verdict needs G >= 3 and a cluster-robust variance > 0 on the
        full data and without every cluster), the per-cluster flags and the gaps without each cluster.

    Notes
    -----
    Sums are centred at the full-data gap delta (r_g = S_g - m_g delta, q_g = sum (D - delta)^2);
    without cluster k the gap moves by e_k = -r_k / (N - m_k) and each remaining cluster's centred
    sums become r_g - m_g e_k and q_g - 2 e_k r_g + m_g e_k^2, which are handed to the one CR2
    estimator (:func:`~llm_power._kernel.variance.mean_variance_from_sums`) and the one t test
    (:func:`~llm_power._kernel.verdict.t_test`). Cost: G calls, each vectorised over pairs.

    Examples
    --------
    One topic of four carries the whole gap: dropping it flips the sign.

    >>> import numpy as np
    >>> from llm_power._kernel.cluster_level import leave_one_cluster_out
    >>> loo = leave_one_cluster_out([40.0, -2.0, -3.0, -1.0], [60.0, 30.0, 28.0, 25.0], [100, 100, 100, 100])
    >>> float(loo.sign_flips), loo.sign_flipped.tolist()
    (1.0, [1.0, 0.0, 0.0, 0.0])
    """
    alpha = check_open_unit(alpha, "alpha")
    alternative = check_option(alternative, "alternative", ("two-sided", "less", "greater"))
    s_raw = np.asarray(sums, dtype=float)
    q_raw = np.asarray(sumsq, dtype=float)
    if s_raw.ndim not in {1, 2} or q_raw.shape != s_raw.shape:
        msg = f"`sums` and `sumsq` must have one shape, (G,) or (G, P); got {s_raw.shape} and {q_raw.shape}."
        raise ValueError(msg)
    g = s_raw.shape[0]
    m = _cluster_sizes(sizes, g)
    if g < 2:
        msg = f"`sums` must cover at least 2 clusters; got {g}."
        raise ValueError(msg)
    if not (np.all(np.isfinite(s_raw)) and np.all(np.isfinite(q_raw))):
        msg = "`sums` and `sumsq` must be finite."
        raise ValueError(msg)
    scalar = s_raw.ndim == 1
    s2d = s_raw[:, None] if scalar else s_raw
    mm = m[:, None]
    n = float(m.sum())
    delta = s2d.sum(axis=0) / n
    r = s2d - mm * delta
    q = np.maximum((q_raw[:, None] if scalar else q_raw) - 2.0 * delta * s2d + mm * delta * delta, 0.0)
    full = _signed_verdict(delta, n, r, q, m, alpha, alternative)
    n_pairs = s2d.shape[1]
    sign_flipped = np.zeros((g, n_pairs))
    verdict_flipped = np.full((g, n_pairs), np.nan)
    delta_without = np.zeros((g, n_pairs))
    keep = np.ones(g, dtype=bool)
    for k in range(g):
        keep[k] = False
        nk = n - m[k]
        e = -r[k] / nk
        dk = delta + e
        delta_without[k] = dk
        sign_flipped[k] = np.sign(dk) != np.sign(delta)
        if g >= 3:
            rk = r[keep] - mm[keep] * e
            qk = np.maximum(q[keep] - 2.0 * e * r[keep] + mm[keep] * e * e, 0.0)
            without = _signed_verdict(dk, nk, rk, qk, m[keep], alpha, alternative)
            verdict_flipped[k] = np.where(np.isnan(full) | np.isnan(without), np.nan, without != full)
        keep[k] = True
    sign_flipped[:, delta == 0] = np.nan
    sign_flips = sign_flipped.sum(axis=0)  # NaN propagates
    verdict_flips = verdict_flipped.sum(axis=0)
    if np.any(np.isnan(sign_flips)) or np.any(np.isnan(verdict_flips)):
        warn("leave-one-cluster-out is not estimable for some pairs (a zero gap has no sign; a verdict needs "
             "3 clusters and a cluster-robust variance > 0 with every cluster left out): counts are NaN",
             DegenerateDataWarning)
    if scalar:
        return LeaveOneOut(sign_flips[0], verdict_flips[0], sign_flipped[:, 0], verdict_flipped[:, 0],
                           delta_without[:, 0])
    return LeaveOneOut(sign_flips, verdict_flips, sign_flipped, verdict_flipped, delta_without)


def _signed_verdict(delta: np.ndarray, n: float, resid: np.ndarray, resid_sq: np.ndarray, sizes: np.ndarray,  # noqa: PLR0917
                    alpha: float, alternative: str) -> np.ndarray:
    """sign(delta) * 1[the CR2 / Imbens-Kolesar t test rejects at alpha]; NaN where its variance is 0."""
    mv = mean_variance_from_sums(int(round(n)), delta, resid_sq.sum(axis=0), sizes, resid, resid_sq, kind="cr2")
    variance = np.where(mv.variance > 0, mv.variance, np.nan)
    _, p = t_test(delta, variance, mv.df, alternative)
    out = np.sign(delta) * rejects(p, alpha)
    return np.where(np.isnan(variance), np.nan, out)
