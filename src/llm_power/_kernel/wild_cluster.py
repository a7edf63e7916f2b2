r"""Few-cluster inference on a mean or paired gap: the wild cluster bootstrap and the CV3 jackknife.

The model is the intercept-only regression ``y_i = mu + u_i`` with items in G clusters of sizes
m_g, N = sum m_g; everything here works from each pair's per-cluster sums ``S_g = sum_{i in g} y_i``
(paired differences D_i or one model's scores) and the sizes, vectorised over many pairs at once
(columns of a (G, P) array, the layout of :class:`.sufficient.PairSums`). Nothing else is needed:
the estimate is ``mu_hat = sum S_g / N`` and the residual cluster sums are ``R_g = S_g - m_g mu_hat``.

**Cluster-robust variances** of mu_hat, all of the form ``V = sum_g c_g r_g^2 / N^2`` with a
per-cluster weight c_g (:func:`studentising_weights`), h_g = m_g / N:

- CR1: ``c_g = G / (G - 1)`` (statsmodels' and wildboottest's small-sample factor
  G/(G-1) (N-1)/(N-k) with k = 1 regressor), t on G - 1 df;
- CR2 (Bell & McCaffrey 2002): ``c_g = 1 / (1 - h_g)``, Imbens-Kolesar df (the package default,
  :mod:`.variance`);
- CV3 (the cluster jackknife, MacKinnon, Nielsen & Webb 2023): ``V = (G-1)/G sum_g (mu_(g) - mu_hat)^2``
  with the leave-one-cluster-out means ``mu_(g) = (S - S_g) / (N - m_g)``; since
  ``mu_(g) - mu_hat = -R_g / (N - m_g)`` this is ``c_g = (G-1)/G / (1 - h_g)^2``; t on G - 1 df.
  :func:`cv3_variance` also gives the variant centred at the jackknife mean (CV3J).

**Wild cluster bootstrap** (Cameron, Gelbach & Miller 2008; Roodman, MacKinnon, Nielsen & Webb
2019). The bootstrap data are ``y*_i = mu_tilde + v_g u_tilde_i`` with one weight v_g per cluster:
restricted (WCR, the null mu = mu0 imposed: ``mu_tilde = mu0``, cluster residual sums
``U_g = S_g - m_g mu0``) for p-values, unrestricted (WCU, ``mu_tilde = mu_hat``, ``U_g = R_g``) for the
bootstrap-t interval. Each draw is O(G) from the cluster sums: ``mu* - mu_tilde = sum_g v_g U_g / N``
and the bootstrap residual cluster sums are ``r*_g = v_g U_g - m_g (mu* - mu_tilde)``, so
``t* = (mu* - mu_tilde) / sqrt(sum_g c_g r*_g^2 / N^2)`` for all pairs x all draws is a few
(pairs x G) @ (G x B) matrix products. Writing d = mu_hat - mu0, the numerator is ``a_b + b_b d`` and
the bootstrap variance a quadratic ``(ee_b + 2 d ef_b + d^2 ff_b) / N^2`` in d, so once the five
coefficient arrays are formed the p-value at any mu0 costs O(pairs x B): the WCR interval (the set
of mu0 not rejected) is found by bisection on them, vectorised over pairs.

P-values, as wildboottest computes them: symmetric ``p = #{|t*_b| > |t|} / B``, equal-tailed
``p = 2 min(#{t*_b > t}, #{t*_b < t}) / B`` (strict inequalities; a draw whose t* equals t up to
rounding -- the constant sign vectors, for which t* = +-t exactly -- is a tie and does not count).

References
----------
Bell, R. M. and McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
with multi-stage samples. Survey Methodology 28(2), 169-181.
Cameron, A. C., Gelbach, J. B. and Miller, D. L. (2008). Bootstrap-based improvements for
inference with clustered errors. Review of Economics and Statistics 90(3), 414-427.
MacKinnon, J. G., Nielsen, M. O. and Webb, M. D. (2023). Cluster-robust inference: a guide to
empirical practice. Journal of Econometrics 232(2), 272-299.
Roodman, D., MacKinnon, J. G., Nielsen, M. O. and Webb, M. D. (2019). Fast and wild: bootstrap
inference in Stata using boottest. The Stata Journal 19(1), 4-60.
Webb, M. D. (2023). Reworking wild bootstrap-based inference for clustered errors. Canadian
Journal of Economics 56(3), 839-858.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import DegenerateDataWarning, warn
from .._core.validation import as_rng, check_confidence_level, check_int_at_least, check_option
from .variance import cluster_structure

__all__ = [
    "as_cluster_sums",
    "CV3_CENTERS",
    "TAILS",
    "VARIANCES",
    "WEBB_MAX_CLUSTERS",
    "WEIGHTS",
    "WildClusterInterval",
    "WildClusterTest",
    "cv3_variance",
    "studentising_weights",
    "wild_cluster_interval",
    "wild_cluster_test",
    "wild_weights",
]

#: elements of the largest (pairs x draws) temporary of a block
BLOCK_ELEMENTS = 4_000_000
#: weight distributions of the bootstrap ("auto": Webb's six points for few clusters, else Rademacher)
WEIGHTS = ("auto", "rademacher", "webb")
#: the variances a t statistic (original and bootstrap) can be studentised by
VARIANCES = ("cr1", "cr2", "cv3")
#: symmetric (|t*| against |t|) or equal-tailed p-values and intervals
TAILS = ("equal_tailed", "symmetric")
#: where CV3 is centred: the full-sample estimate (CV3) or the mean of the jackknife estimates (CV3J)
CV3_CENTERS = ("estimate", "jackknife_mean")
#: with at most this many clusters ``weights="auto"`` draws Webb's six-point weights: 2^G sign vectors
#: give only 2^(G-1) distinct |t*| (p-values on a grid of 2^(1-G)), Webb (2023); on paired 0/1 items at
#: G = 8-10 Webb's weights kept 5% +- 3 MC SE where Rademacher reached 8.2% (scripts/cluster_validity.py)
WEBB_MAX_CLUSTERS = 11
#: the interval methods: invert the restricted bootstrap test, or the unrestricted bootstrap-t
INTERVAL_METHODS = ("restricted", "unrestricted")
#: a bootstrap t within this relative distance of the original t is a tie (the constant sign vectors)
TIE_RTOL = 1e-9
#: Webb's six-point distribution: +-sqrt(1/2), +-1, +-sqrt(3/2), each with probability 1/6
WEBB_POINTS = np.concatenate([-np.sqrt(np.array([3.0, 2.0, 1.0]) / 2.0), np.sqrt(np.array([1.0, 2.0, 3.0]) / 2.0)])


# =================================================================================================
# Variances from cluster sums
# =================================================================================================

def _as_sums(sums: Any, sizes: Any, name: str = "sums") -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """(S as (G, P), sizes as (G,), the trailing shape of the input) with the package's checks
    (``name``: what the caller calls ``sums``).
    """
    s = np.asarray(sums, dtype=float)
    m = np.asarray(sizes, dtype=float)
    if m.ndim != 1 or m.size < 2:
        msg = f"`sizes` must be one size per cluster, at least 2 clusters; got shape {m.shape}."
        raise ValueError(msg)
    if not np.all(np.isfinite(m) & (m > 0)):
        msg = "`sizes` must be positive and finite (a cluster has at least one item)."
        raise ValueError(msg)
    if s.ndim == 0 or s.shape[0] != m.size:
        msg = f"`{name}` must have one row per cluster ({m.size}); got shape {s.shape}."
        raise ValueError(msg)
    if not np.all(np.isfinite(s)):
        msg = f"`{name}` must be finite."
        raise ValueError(msg)
    return s.reshape(m.size, -1), m, s.shape[1:]


def studentising_weights(sizes: np.ndarray, variance: str) -> np.ndarray:
    r"""Per-cluster weights c_g with ``V = sum_g c_g r_g^2 / N^2`` for the variance ``variance``.

    ``"cr1"``: G/(G-1); ``"cr2"``: 1/(1 - m_g/N) (the CR2 factor of :func:`.variance.cluster_structure`);
    ``"cv3"``: (G-1)/G / (1 - m_g/N)^2 (the jackknife centred at the estimate).
    """
    m = np.asarray(sizes, dtype=float)
    g = m.size
    if variance == "cr1":
        return np.full(g, g / (g - 1.0))
    h = cluster_structure(m).h  # 1 / (1 - m_g / N)
    if variance == "cr2":
        return np.asarray(h, dtype=float)
    return np.asarray((g - 1.0) / g * h * h, dtype=float)


def cv3_variance(sums: Any, sizes: Any, *, center: str = "estimate") -> np.ndarray:
    r"""The cluster-jackknife (CV3) variance of the mean of each column of ``sums``, on G - 1 df.

    Parameters
    ----------
    sums : array_like, shape (G,) or (G, P)
        Per-cluster sums S_g of the item values (paired differences, or one model's scores).
    sizes : array_like, shape (G,)
        Items per cluster, m_g > 0.
    center : {"estimate", "jackknife_mean"}
        ``"estimate"`` (CV3 of MacKinnon, Nielsen & Webb 2023, as wildboottest and fwildclusterboot
        compute it): ``V = (G-1)/G sum_g (mu_(g) - mu_hat)^2``; ``"jackknife_mean"`` (CV3J):
        ``V = (G-1)/G sum_g (mu_(g) - mu_bar)^2`` with mu_bar the mean of the G leave-one-out means
        (never larger than CV3).

    Returns
    -------
    numpy.ndarray
        Shape ``sums.shape[1:]``: the variance of mu_hat = sum S_g / N.

    Notes
    -----
    The leave-one-cluster-out means are ``mu_(g) = (S - S_g) / (N - m_g)``, so
    ``mu_(g) - mu_hat = -R_g / (N - m_g)`` with R_g = S_g - m_g mu_hat: O(G) per column. A t test
    with this variance is referred to t on G - 1 degrees of freedom.

    References
    ----------
    MacKinnon, J. G., Nielsen, M. O. and Webb, M. D. (2023). Cluster-robust inference: a guide to
    empirical practice. Journal of Econometrics 232(2), 272-299 (section 3.3).

    Examples
    --------
    Three subjects of an exam, 4 + 4 + 2 items; the gap's per-subject sums:

    >>> from llm_power._kernel.wild_cluster import cv3_variance
    >>> round(float(cv3_variance([3.0, 1.0, 0.0], [4, 4, 2])), 5)
    0.04963
    """
    check_option(center, "center", CV3_CENTERS)
    s, m, shape = _as_sums(sums, sizes)
    g = m.size
    n = m.sum()
    jack = (s.sum(axis=0) - s) / (n - m)[:, None]  # (G, P) leave-one-cluster-out means
    mid = s.sum(axis=0) / n if center == "estimate" else jack.mean(axis=0)
    return np.asarray((g - 1.0) / g * np.sum((jack - mid) ** 2, axis=0)).reshape(shape)


# =================================================================================================
# Bootstrap weights
# =================================================================================================

def wild_weights(n_clusters: int, n_resamples: int, weights: str,
                 rng: np.random.Generator) -> tuple[np.ndarray, str, bool]:
    """The (G, B) weight matrix: (weights, the distribution used, whether it is the full enumeration).

    Rademacher with 2^G <= ``n_resamples``: all 2^G sign vectors (exact; B = 2^G, in
    ``itertools.product`` order, as wildboottest enumerates them; it does so only when
    2^G < B). Otherwise G * B draws, ``rng.choice(points, G * B).reshape(G, B)`` -- the stream
    wildboottest draws, so the same seed gives the same weights. ``"auto"``: Webb's six points when
    G <= :data:`WEBB_MAX_CLUSTERS`, else Rademacher.
    """
    kind = weights
    if kind == "auto":
        kind = "webb" if n_clusters <= WEBB_MAX_CLUSTERS else "rademacher"
    if kind == "rademacher" and n_clusters < 63 and 2**n_clusters <= n_resamples:
        v = np.array(list(itertools.product([-1.0, 1.0], repeat=n_clusters))).T
        return v, kind, True
    points = np.array([-1.0, 1.0]) if kind == "rademacher" else WEBB_POINTS
    v = rng.choice(points, size=n_clusters * n_resamples, replace=True).reshape(n_clusters, n_resamples)
    return np.asarray(v, dtype=float), kind, False


# =================================================================================================
# The bootstrap t statistics of a block of pairs, as polynomials in d = mu_hat - mu0
# =================================================================================================

@dataclass(frozen=True)
class _Coefficients:
    """t*_b(d) = (a + b d) / sqrt((ee + 2 d ef + d^2 ff) / N^2) of a block of pairs (P_b x B arrays;
    b and ff are the same for every pair), and t(d) = d / se.
    """

    a: np.ndarray
    b: np.ndarray
    ee: np.ndarray
    ef: np.ndarray
    ff: np.ndarray
    se: np.ndarray
    n: float

    def t_star(self, d: np.ndarray) -> np.ndarray:
        """The bootstrap t statistics at d (one per pair): (P_b, B)."""
        dd = d[:, None]
        q = np.maximum(self.ee + 2.0 * dd * self.ef + dd * dd * self.ff, 0.0)
        num = (self.a + self.b * dd) * self.n
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(num / np.sqrt(q))

    def pvalue(self, d: np.ndarray, tails: str) -> np.ndarray:
        """The bootstrap p-value of H0: mu = mu_hat - d for each pair (ties do not count)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            t = d / self.se
        ts = self.t_star(d)
        tol = TIE_RTOL * np.abs(t)[:, None]
        if tails == "symmetric":
            return np.asarray(np.mean(np.abs(ts) > np.abs(t)[:, None] + tol, axis=1))
        upper = np.mean(ts > t[:, None] + tol, axis=1)
        lower = np.mean(ts < t[:, None] - tol, axis=1)
        return np.asarray(2.0 * np.minimum(upper, lower))


def _coefficients(resid: np.ndarray, m: np.ndarray, v: np.ndarray, c: np.ndarray) -> _Coefficients:
    """The coefficients of the bootstrap t of the pairs whose residual cluster sums are the rows of
    ``resid`` (P_b, G), with weights ``v`` (G, B) and studentising weights ``c`` (G,).

    With e_g = v_g R_g - m_g a_b and f_g = m_g (v_g - b_b): ``ee = sum c e^2``, ``ef = sum c e f``,
    ``ff = sum c f^2`` -- four (P_b x G) @ (G x B) products (two with Rademacher weights, v^2 = 1).
    """
    n = float(m.sum())
    cm, cmm = c * m, float(np.sum(c * m * m))
    a = resid @ v / n
    b = m @ v / n
    r_cmv = resid @ (cm[:, None] * v)
    if np.all(np.abs(v) == 1.0):
        ee_1, ef_1 = (resid * resid) @ c, resid @ cm
        ee = ee_1[:, None] - 2.0 * a * r_cmv + a * a * cmm
        ef = ef_1[:, None] - b * r_cmv - a * ((cm * m) @ v) + a * b * cmm
    else:
        v2 = v * v
        ee = (resid * resid) @ (c[:, None] * v2) - 2.0 * a * r_cmv + a * a * cmm
        ef = resid @ (cm[:, None] * v2) - b * r_cmv - a * ((cm * m) @ v) + a * b * cmm
    ff = np.sum(c[:, None] * (m[:, None] * (v - b)) ** 2, axis=0)
    se = np.sqrt((resid * resid) @ c) / n
    return _Coefficients(a=a, b=b, ee=ee, ef=ef, ff=ff, se=se, n=n)


def _blocks(n_pairs: int, n_draws: int) -> range:
    """Starts of the blocks of pairs whose (pairs x draws) arrays hold about :data:`BLOCK_ELEMENTS` values."""
    return range(0, n_pairs, _step(n_draws))


def _step(n_draws: int) -> int:
    return max(1, BLOCK_ELEMENTS // max(n_draws, 1))


def _prepare(sums: Any, sizes: Any, *, weights: str, n_resamples: int, variance: str, tails: str,
             rng: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], np.ndarray, np.ndarray, str, bool]:
    """Validated inputs: (residual sums (P, G), sizes, trailing shape, estimates, weights (G, B), kind, enumerated)."""
    check_option(weights, "weights", WEIGHTS)
    check_option(variance, "variance", VARIANCES)
    check_option(tails, "tails", TAILS)
    check_int_at_least(n_resamples, "n_resamples", 1)
    gen = as_rng(rng)
    s, m, shape = _as_sums(sums, sizes)
    est = s.sum(axis=0) / m.sum()
    resid = np.ascontiguousarray((s - m[:, None] * est).T)  # (P, G): R_g = S_g - m_g mu_hat
    v, kind, enumerated = wild_weights(m.size, n_resamples, weights, gen)
    return resid, m, shape, est, v, kind, enumerated


def _degenerate(se: np.ndarray, what: str) -> None:
    if np.any(se == 0):
        warn(f"{int(np.sum(se == 0)):,} of {se.size:,} columns have every cluster residual sum equal to 0 "
             f"(no variation between clusters): their {what} is NaN.", DegenerateDataWarning)


@dataclass(frozen=True)
class WildClusterTest:
    """The restricted wild cluster bootstrap test of H0: mu = mu0 (arrays: one value per column of ``sums``).

    ``estimate`` mu_hat; ``standard_error`` its cluster-robust se (``variance``); ``statistic`` the
    t statistic (mu_hat - mu0) / se; ``pvalue`` the bootstrap p-value (``tails``), on a grid of 1/B;
    ``n_resamples`` B (2^G under full enumeration); ``weights`` the distribution drawn;
    ``enumerated`` whether all 2^G Rademacher sign vectors were used.
    """

    estimate: Any
    standard_error: Any
    statistic: Any
    pvalue: Any
    n_resamples: int
    weights: str
    enumerated: bool
    variance: str
    tails: str


def wild_cluster_test(sums: Any, sizes: Any, mu0: Any = 0.0, *, weights: str = "auto", n_resamples: int = 9999,
                      variance: str = "cr1", tails: str = "symmetric", rng: Any) -> WildClusterTest:
    r"""The restricted wild cluster bootstrap (WCR) p-value of H0: mu = mu0, for many columns at once.

    Parameters
    ----------
    sums : array_like, shape (G,) or (G, P)
        Per-cluster sums S_g of the item values, one column per pair (or model).
    sizes : array_like, shape (G,)
        Items per cluster m_g (at least 2 clusters).
    mu0 : float or array_like, shape (P,)
        The null value of the mean (0: no gap).
    weights : {"auto", "rademacher", "webb"}
        The distribution of the cluster weights v_g: Rademacher (+-1), fully enumerated when
        2^G <= ``n_resamples``; Webb's six points +-sqrt(1/2), +-1, +-sqrt(3/2); ``"auto"``: Webb
        with G <= :data:`WEBB_MAX_CLUSTERS` clusters, else Rademacher.
    n_resamples : int
        Bootstrap draws B (ignored under full enumeration, which uses all 2^G).
    variance : {"cr1", "cr2", "cv3"}
        The cluster-robust variance that studentises both the original and every bootstrap t.
    tails : {"symmetric", "equal_tailed"}
        ``p = #{|t*| > |t|} / B`` or ``p = 2 min(#{t* > t}, #{t* < t}) / B`` (wildboottest's
        ``"two-tailed"`` and ``"equal-tailed"``).
    rng : int, numpy.random.Generator or numpy.random.SeedSequence
        The source of the weights (required: the same seed gives the same p-values).

    Returns
    -------
    WildClusterTest

    Notes
    -----
    The bootstrap data impose the null: ``y*_i = mu0 + v_g (y_i - mu0)``, so with U_g = S_g - m_g mu0
    each draw's ``mu* - mu0 = sum_g v_g U_g / N`` and residual cluster sums
    ``r*_g = v_g U_g - m_g (mu* - mu0)``, and ``t* = (mu* - mu0) / sqrt(sum_g c_g r*_g^2 / N^2)`` with
    the weights c_g of ``variance`` (:func:`studentising_weights`). The p-value has resolution 1/B;
    under full enumeration v and -v give the same |t*|, so the symmetric p-value lies on a grid of
    2^(1-G) (1/16 with 5 clusters: a 5% test then rejects only when |t| is the largest of the 16
    distinct values, i.e. at level 6.25%) -- Webb's six-point weights (6^G distinct draws) avoid
    this with few clusters (Webb 2023; MacKinnon, Nielsen & Webb 2023, section 3.4). The draws'
    constant sign vectors give t* = +-t exactly; they are ties and never count. Cost: four
    (P x G) @ (G x B) products, in blocks of about 4 million (pairs x draws) values.

    References
    ----------
    Cameron, Gelbach & Miller (2008); Roodman, MacKinnon, Nielsen & Webb (2019); Webb (2023);
    MacKinnon, Nielsen & Webb (2023) -- see the module docstring.

    Examples
    --------
    Model A beats model B by 4.4 points on 430 questions in 8 subjects; the per-subject sums of
    the paired differences (all 2^8 = 256 sign vectors are enumerated, so the p-value is exact):

    >>> import numpy as np
    >>> from llm_power._kernel.wild_cluster import wild_cluster_test
    >>> s = np.array([4.0, 1.0, 6.0, -2.0, 5.0, 2.0, 0.0, 3.0])
    >>> m = np.array([50, 80, 30, 60, 45, 70, 40, 55])
    >>> res = wild_cluster_test(s, m, weights="rademacher", rng=0)
    >>> round(float(res.statistic), 3), float(res.pvalue), res.n_resamples
    (2.174, 0.03125, 256)
    """
    resid, m, shape, est, v, kind, enumerated = _prepare(sums, sizes, weights=weights, n_resamples=n_resamples,
                                                         variance=variance, tails=tails, rng=rng)
    c = studentising_weights(m, variance)
    d = est - np.broadcast_to(np.asarray(mu0, dtype=float), shape).reshape(-1)
    n_pairs = resid.shape[0]
    pvalue, se = np.empty(n_pairs), np.empty(n_pairs)
    step = _step(v.shape[1])
    for start in _blocks(n_pairs, v.shape[1]):
        sl = slice(start, start + step)
        coef = _coefficients(resid[sl], m, v, c)
        se[sl] = coef.se
        pvalue[sl] = coef.pvalue(d[sl], tails)
    _degenerate(se, "p-value")
    pvalue = np.where(se > 0, pvalue, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, d / se, np.nan)
    return WildClusterTest(estimate=est.reshape(shape)[()], standard_error=se.reshape(shape)[()],
                           statistic=t.reshape(shape)[()], pvalue=pvalue.reshape(shape)[()],
                           n_resamples=int(v.shape[1]), weights=kind, enumerated=enumerated,
                           variance=variance, tails=tails)


@dataclass(frozen=True)
class WildClusterInterval:
    """A wild cluster bootstrap confidence interval (arrays: one value per column of ``sums``).

    ``low``, ``high`` its bounds (``-inf``/``inf`` when the restricted test never rejects on that
    side); ``estimate``, ``standard_error`` as in :class:`WildClusterTest`; ``method``
    ``"restricted"`` (the set of mu0 the WCR test does not reject) or ``"unrestricted"`` (WCU
    bootstrap-t).
    """

    low: Any
    high: Any
    estimate: Any
    standard_error: Any
    confidence_level: float
    method: str
    n_resamples: int
    weights: str
    enumerated: bool
    variance: str
    tails: str


def wild_cluster_interval(sums: Any, sizes: Any, *, confidence_level: float = 0.95, method: str = "restricted",  # noqa: PLR0913
                          weights: str = "auto", n_resamples: int = 9999, variance: str = "cr1",
                          tails: str = "symmetric", rng: Any, xtol: float = 1e-6) -> WildClusterInterval:
    r"""A wild cluster bootstrap confidence interval for the mean of each column of ``sums``.

    Parameters
    ----------
    sums, sizes, weights, n_resamples, variance, tails, rng
        As in :func:`wild_cluster_test`.
    confidence_level : float
        In (0, 1).
    method : {"restricted", "unrestricted"}
        ``"restricted"``: invert the WCR test -- the set of mu0 with ``p(mu0) > 1 - confidence_level``,
        the same draws for every mu0 (MacKinnon, Nielsen & Webb 2023 recommend WCR for tests and
        its inversion for intervals). ``"unrestricted"``: the WCU bootstrap-t interval from the
        draws ``t*_b = (mu*_b - mu_hat) / se*_b`` of ``y* = mu_hat + v_g (y_i - mu_hat)``:
        symmetric ``mu_hat +- c*_{1-alpha} se`` with c* the (1 - alpha)(B + 1)-th order statistic of
        |t*|, or equal-tailed ``[mu_hat - c*_{1-alpha/2} se, mu_hat - c*_{alpha/2} se]`` from t*.
    xtol : float
        Bisection tolerance of the restricted bounds, in units of the standard error.

    Returns
    -------
    WildClusterInterval

    Notes
    -----
    With d = mu_hat - mu0 every restricted draw is ``t*_b(d) = (a_b + b_b d) / sqrt(Q_b(d) / N^2)``
    with a_b = sum v_g R_g / N, b_b = sum v_g m_g / N and Q_b a quadratic in d, and ``t(d) = d / se``:
    the coefficients are formed once (four matrix products) and each p-value costs O(P x B). Each
    bound is found by doubling from 4 se until the test rejects, then bisection between the last
    point not rejected and the first rejected (so when the non-rejection set is not an interval,
    the bound is a crossing of its boundary between those points); a side on which the test
    rejects nowhere up to 2^40 se is infinite.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power._kernel.wild_cluster import wild_cluster_interval
    >>> s = np.array([4.0, 1.0, 6.0, -2.0, 5.0, 2.0, 0.0, 3.0])
    >>> m = np.array([50, 80, 30, 60, 45, 70, 40, 55])
    >>> ci = wild_cluster_interval(s, m, weights="rademacher", rng=0)
    >>> round(float(ci.low), 4), round(float(ci.high), 4)
    (0.0011, 0.0981)
    >>> ci = wild_cluster_interval(s, m, method="unrestricted", weights="rademacher", rng=0)
    >>> round(float(ci.low), 4), round(float(ci.high), 4)
    (-0.0052, 0.0936)
    """
    level = check_confidence_level(confidence_level)
    check_option(method, "method", INTERVAL_METHODS)
    resid, m, shape, est, v, kind, enumerated = _prepare(sums, sizes, weights=weights, n_resamples=n_resamples,
                                                         variance=variance, tails=tails, rng=rng)
    c = studentising_weights(m, variance)
    alpha = 1.0 - level
    n_pairs = resid.shape[0]
    low, high, se = np.empty(n_pairs), np.empty(n_pairs), np.empty(n_pairs)
    step = _step(v.shape[1])
    for start in _blocks(n_pairs, v.shape[1]):
        sl = slice(start, start + step)
        coef = _coefficients(resid[sl], m, v, c)
        se[sl] = coef.se
        if method == "unrestricted":
            lo_t, hi_t = _bootstrap_t_quantiles(coef.t_star(np.zeros(coef.se.size)), alpha, tails)
            low[sl], high[sl] = est[sl] - hi_t * coef.se, est[sl] - lo_t * coef.se
        else:
            low[sl] = est[sl] - _bound(coef, alpha, tails, 1.0, xtol) * coef.se
            high[sl] = est[sl] + _bound(coef, alpha, tails, -1.0, xtol) * coef.se
    _degenerate(se, "interval")
    low, high = np.where(se > 0, low, np.nan), np.where(se > 0, high, np.nan)
    return WildClusterInterval(low=low.reshape(shape)[()], high=high.reshape(shape)[()],
                               estimate=est.reshape(shape)[()], standard_error=se.reshape(shape)[()],
                               confidence_level=level, method=method, n_resamples=int(v.shape[1]), weights=kind,
                               enumerated=enumerated, variance=variance, tails=tails)


def _order_statistic(x: np.ndarray, p: float) -> np.ndarray:
    """The ceil(p (B + 1))-th smallest value of each row (clipped to 1..B): MacKinnon's bootstrap quantile."""
    b = x.shape[1]
    k = int(np.clip(np.ceil(p * (b + 1) - 1e-9), 1, b)) - 1
    return np.asarray(np.partition(x, k, axis=1)[:, k])


def _bootstrap_t_quantiles(t_star: np.ndarray, alpha: float, tails: str) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) critical values of the bootstrap-t interval: +-c*_{1-alpha} of |t*| (symmetric)
    or c*_{alpha/2}, c*_{1-alpha/2} of t* (equal-tailed).
    """
    if tails == "symmetric":
        q = _order_statistic(np.abs(t_star), 1.0 - alpha)
        return -q, q
    return _order_statistic(t_star, alpha / 2.0), _order_statistic(t_star, 1.0 - alpha / 2.0)


def _bound(coef: _Coefficients, alpha: float, tails: str, side: float, xtol: float) -> np.ndarray:
    """The distance (in standard errors) from the estimate to the bound of the restricted interval on one
    side (side +1: the lower bound, mu0 = mu_hat - s se; -1: the upper), vectorised over the block's pairs.
    """
    def rejected(s: np.ndarray) -> np.ndarray:
        return np.asarray(coef.pvalue(side * s * coef.se, tails) <= alpha)

    size = coef.se.size
    lo, hi = np.zeros(size), np.full(size, 4.0)
    open_ = ~rejected(hi)
    for _ in range(40):  # double until rejected (4 * 2^40 se: "nowhere")
        if not np.any(open_):
            break
        lo = np.where(open_, hi, lo)
        hi = np.where(open_, 2.0 * hi, hi)
        open_ &= ~rejected(hi)
    while np.any(hi - lo > xtol):
        mid = 0.5 * (lo + hi)
        rej = rejected(mid)
        hi, lo = np.where(rej, mid, hi), np.where(rej, lo, mid)
    return np.where(open_, np.inf, 0.5 * (lo + hi))


#: the checks of per-cluster sums and sizes, shared with :mod:`.cluster_nstar`
as_cluster_sums = _as_sums
