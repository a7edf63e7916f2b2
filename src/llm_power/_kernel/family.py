r"""The dependence inside a family of paired comparisons, and many-to-one (Dunnett) power: the only copy.

A family is a list of pairs (i_k, j_k) of the columns of an items x models matrix x (0/1 or graded):
adjacent pairs of a ranking, all pairs, or one model against each of the others. Pair k's statistic
is the mean paired difference :math:`\bar D_k = \overline{x_{i_k} - x_{j_k}}`. From the models'
covariance matrix C (over items, or the covariance of the means -- the correlation is the same)::

    cov(D_k, D_l) = C[i_k, i_l] - C[i_k, j_l] - C[j_k, i_l] + C[j_k, j_l]
    corr(D_k, D_l) = cov(D_k, D_l) / sqrt(cov(D_k, D_k) cov(D_l, D_l))

formed pair by pair, never as an items x pairs array. As the items grow, the vector of z statistics
:math:`Z_k = \bar D_k / \widehat{se}_k` tends to a joint normal with this correlation matrix R and
mean :math:`\mu_k = \delta_k / se_k`, which is what the many-to-one test below uses.

Measured on the bundled MMLU-Pro top 10 (issue 45): adjacent pairs that share a model correlate
-0.57 ... -0.39 (a model's good items raise one gap and lower the next); one model against each of
the other nine +0.42 ... +0.69; about a third of all 45 pairs' correlations are negative.

**Dunnett's many-to-one test** (Dunnett 1955): with R the correlation of the k statistics, the
one-sided critical value c solves :math:`P(\max_k Z_k \le c) = 1 - \alpha` for
:math:`Z \sim N(0, R)`, the two-sided one :math:`P(\max_k |Z_k| \le c) = 1 - \alpha`; comparison k
is rejected when :math:`Z_k > c` ("greater"), :math:`Z_k < -c` ("less"), or :math:`|Z_k| > c` in
the direction of its true gap (two-sided; a rejection in the wrong direction, probability below
alpha / 2, is not counted as power, as in the kernel's single-pair power). With
:math:`s_k = \pm 1` that direction,

    P(all k rejected)  = P(s_k Z_k > c for every k)     (a multivariate normal orthant probability)
    P(k rejected)      = Phi(s_k mu_k - c)
    E(number rejected) = sum_k Phi(s_k mu_k - c)

The orthant probabilities come from :meth:`scipy.stats.multivariate_normal.cdf` (Genz's
quasi-Monte Carlo integration, seeded here so that every call gives the same number).

References
----------
Dunnett, C. W. (1955). A multiple comparison procedure for comparing several treatments with a
control. JASA 50, 1096-1121.
Benjamini, Y. and Yekutieli, D. (2001). The control of the false discovery rate in multiple testing
under dependency. Annals of Statistics 29, 1165-1188.
Genz, A. (1992). Numerical computation of multivariate normal probabilities. J. Comput. Graph.
Stat. 1, 141-149.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from .._core.errors import DegenerateDataWarning
from .._core.validation import check_alpha_power, check_alternative, check_open_unit

__all__ = [
    "FAMILIES",
    "DunnettPower",
    "FamilyCorrelation",
    "check_correlation",
    "check_family_input",
    "check_gaps",
    "check_pairs",
    "check_vector",
    "correlation_from_covariance",
    "dunnett_critical_value",
    "dunnett_power",
    "family_correlation",
    "family_pairs",
    "items_for_dunnett",
    "orthant_below",
    "pair_covariance",
    "smallest_items",
]

#: the families of comparisons a leaderboard plans for: adjacent pairs of a ranking, all pairs, and
#: one model against each of the others
FAMILIES = ("adjacent", "all_pairs", "many_to_one")

#: Genz's integration: absolute error target, points and seed (a fixed seed: the same call gives the
#: same number, so a search over N is deterministic)
_ABSEPS, _MAXPTS_PER_DIM, _SEED = 1e-6, 200_000, 20_250_401
#: a standardized mean beyond this is certain rejection (Phi(-40) = 4e-350)
_MU_CAP = 40.0


# ----------------------------------------------------------------------------------------------
# the correlation of a family


def family_pairs(order: Any, family: str, *, control: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j) of a family over the models in ``order`` (column indices, best first).

    ``"adjacent"``: (order[k], order[k+1]); ``"all_pairs"``: every (order[a], order[b]) with a < b;
    ``"many_to_one"``: (control, m) for every other model m in ``order`` -- the control first, so
    every statistic is control minus model and the family's correlations are positive.

    Examples
    --------
    >>> i, j = family_pairs([2, 0, 1], "adjacent")
    >>> i.tolist(), j.tolist()
    ([2, 0], [0, 1])
    >>> i, j = family_pairs([2, 0, 1], "many_to_one", control=1)
    >>> i.tolist(), j.tolist()
    ([1, 1], [2, 0])
    """
    if family not in FAMILIES:
        msg = f"`family` must be one of {sorted(FAMILIES)}; got {family!r}."
        raise ValueError(msg)
    o = np.asarray(order, dtype=np.intp).ravel()
    if family == "adjacent":
        return o[:-1].copy(), o[1:].copy()
    if family == "all_pairs":
        a, b = np.triu_indices(o.size, 1)
        return o[a], o[b]
    if control is None or int(control) not in set(o.tolist()):
        msg = f"`control` must be one of the models in `order`; got {control!r}."
        raise ValueError(msg)
    others = o[o != int(control)]
    return np.full(others.size, int(control), dtype=np.intp), others


def pair_covariance(cov: np.ndarray, i: Any, j: Any) -> np.ndarray:
    """The covariance matrix of the differences x_{i_k} - x_{j_k}, k = 1..K, from the models'
    covariance ``cov``: C[i_k, i_l] - C[i_k, j_l] - C[j_k, i_l] + C[j_k, j_l] (K x K; no items x
    pairs array is formed).
    """
    i = np.asarray(i, dtype=np.intp)
    j = np.asarray(j, dtype=np.intp)
    out = cov[np.ix_(i, i)] - cov[np.ix_(i, j)] - cov[np.ix_(j, i)] + cov[np.ix_(j, j)]
    return np.asarray(out, dtype=float)


@dataclass(frozen=True, slots=True)
class FamilyCorrelation:
    """The correlation matrix of a family's paired statistics and its sign structure.

    ``minimum``, ``median``, ``maximum`` and ``share_negative`` are over the off-diagonal entries
    (NaN, and share 0, for a family of one pair). ``prds_plausible``: every off-diagonal entry is
    >= 0 (see :func:`family_correlation` for what this checks).
    """

    corr: np.ndarray
    minimum: float
    median: float
    maximum: float
    share_negative: float
    prds_plausible: bool

    def __repr__(self) -> str:
        return (f"FamilyCorrelation(pairs={self.corr.shape[0]}, minimum={self.minimum:.3g}, "
                f"median={self.median:.3g}, maximum={self.maximum:.3g}, "
                f"share_negative={self.share_negative:.3g}, prds_plausible={self.prds_plausible})")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (NaN as None)."""
        def num(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None
        return {"corr": [[num(v) for v in row] for row in self.corr.tolist()], "minimum": num(self.minimum),
                "median": num(self.median), "maximum": num(self.maximum),
                "share_negative": float(self.share_negative), "prds_plausible": bool(self.prds_plausible)}


def correlation_from_covariance(cov: np.ndarray, i: Any, j: Any) -> FamilyCorrelation:
    """:func:`family_correlation` from the models' covariance matrix (of the items, or of the means:
    with clusters, the cluster-robust covariance of the means gives the cluster-robust correlation).

    A pair whose difference has zero variance (two identical models) has NaN correlations and one
    :class:`DegenerateDataWarning`; the summary is over the finite entries, and ``prds_plausible``
    is False when any entry is NaN (the dependence cannot be judged).
    """
    c = np.asarray(cov, dtype=float)
    v = pair_covariance(c, i, j)
    scale = float(np.max(np.abs(np.diag(c)))) if c.size else 0.0
    # a difference whose variance is rounding noise of the models' (identical models) counts as 0
    sd = np.where(np.diag(v) > 1e-12 * scale, np.sqrt(np.maximum(np.diag(v), 0.0)), 0.0)
    if np.any(sd == 0):
        warnings.warn(f"{int(np.sum(sd == 0))} pair(s) of the family have a zero-variance difference "
                      "(identical models): their correlations are NaN", DegenerateDataWarning, stacklevel=3)
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = v / np.outer(sd, sd)
    flat = sd == 0
    corr = np.clip(corr, -1.0, 1.0)
    corr[flat, :] = np.nan
    corr[:, flat] = np.nan
    k = corr.shape[0]
    np.fill_diagonal(corr, np.where(sd > 0, 1.0, np.nan))
    off = corr[~np.eye(k, dtype=bool)]
    finite = off[np.isfinite(off)]
    if finite.size == 0:
        lo = med = hi = math.nan
        share = 0.0
    else:
        lo, med, hi = float(finite.min()), float(np.median(finite)), float(finite.max())
        share = float(np.mean(finite < 0))
    prds = bool(finite.size == off.size and np.all(finite >= 0))
    return FamilyCorrelation(corr=corr, minimum=lo, median=med, maximum=hi, share_negative=share,
                             prds_plausible=prds)


def family_correlation(x: Any, i: Any, j: Any) -> FamilyCorrelation:
    r"""The correlation matrix of the paired statistics :math:`\bar D_k = \overline{x_{i_k} - x_{j_k}}`.

    Parameters
    ----------
    x : array, items x models
        Scores (0/1 or graded), no missing values.
    i, j : int arrays
        The family's pairs (see :func:`family_pairs`).

    Returns
    -------
    FamilyCorrelation
        ``corr`` (pairs x pairs) and its off-diagonal summary.

    Notes
    -----
    :math:`\mathrm{corr}(\bar D_k, \bar D_l) = \mathrm{corr}(D_k, D_l)` over items, from the models'
    covariance C: cov(D_k, D_l) = C[i_k,i_l] - C[i_k,j_l] - C[j_k,i_l] + C[j_k,j_l].

    ``prds_plausible`` checks that every off-diagonal correlation is >= 0. Benjamini & Yekutieli
    (2001, Case 1 of Section 3.1) show that one-sided p-values of a multivariate normal vector with
    non-negative correlations are PRDS, so BH controls the FDR for one-sided tests of such a family
    (e.g. many-to-one, oriented control minus model). For two-sided p-values no sign condition on
    the correlations is known to be sufficient in general, so for two-sided tests the flag is a
    necessary-looking heuristic, not a proof; a negative correlation (adjacent pairs sharing a
    model) puts BH outside its guarantee either way, and BY holds under any dependence. The sign
    of an entry depends on how the pairs are oriented (reversing pair k flips row and column k):
    orient the pairs as they are tested.

    References
    ----------
    Benjamini & Yekutieli (2001), Ann. Statist. 29, 1165-1188.

    Examples
    --------
    Three models; the two adjacent pairs share the middle one and correlate negatively.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((2000, 3)) < [0.7, 0.6, 0.5]).astype(float)
    >>> res = family_correlation(x, [0, 1], [1, 2])
    >>> round(res.minimum, 1), res.prds_plausible
    (-0.5, False)
    """
    arr, i_arr, j_arr = check_family_input(x, i, j)
    used, inv = np.unique(np.concatenate([i_arr, j_arr]), return_inverse=True)
    sub = arr[:, used]
    xc = sub - sub.mean(axis=0)
    cov = (xc.T @ xc) / (arr.shape[0] - 1)
    return correlation_from_covariance(cov, inv[: i_arr.size], inv[i_arr.size:])


def check_family_input(x: Any, i: Any, j: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An items x models matrix of finite scores (at least 2 items) and its family's pairs, checked."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2:
        msg = f"`x` must be an items x models matrix with at least 2 items; got shape {arr.shape}."
        raise ValueError(msg)
    if not np.all(np.isfinite(arr)):
        msg = "`x` must have no missing or infinite scores."
        raise ValueError(msg)
    i_arr, j_arr = check_pairs(i, j, arr.shape[1])
    return arr, i_arr, j_arr


def check_pairs(i: Any, j: Any, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """A family's pairs as model-index arrays (i, j), checked: non-empty, in range, equal lengths, i != j."""
    i_arr = np.atleast_1d(np.asarray(i))
    j_arr = np.atleast_1d(np.asarray(j))
    for name, a in (("i", i_arr), ("j", j_arr)):
        if a.ndim != 1 or a.size == 0 or not np.issubdtype(a.dtype, np.integer):
            msg = f"`{name}` must be a non-empty 1-d array of model indices; got {a!r}."
            raise ValueError(msg)
        if np.any((a < 0) | (a >= n_models)):
            msg = f"`{name}` must hold model indices in [0, {n_models - 1}]; got {a.tolist()!r}."
            raise ValueError(msg)
    if i_arr.size != j_arr.size:
        msg = f"`i` and `j` must have the same length; got {i_arr.size} and {j_arr.size}."
        raise ValueError(msg)
    if np.any(i_arr == j_arr):
        msg = "`i` and `j` must differ in every pair (a model against itself has no gap)."
        raise ValueError(msg)
    return i_arr.astype(np.intp), j_arr.astype(np.intp)


# ----------------------------------------------------------------------------------------------
# many-to-one (Dunnett) power


def check_correlation(corr: Any) -> np.ndarray:
    """A finite, symmetric, unit-diagonal, positive semi-definite correlation matrix (or a helpful error)."""
    r = np.atleast_2d(np.asarray(corr, dtype=float))
    if r.ndim != 2 or r.shape[0] != r.shape[1] or not np.all(np.isfinite(r)):
        msg = f"`corr` must be a finite square correlation matrix; got shape {r.shape}."
        raise ValueError(msg)
    if not np.allclose(np.diag(r), 1.0) or not np.allclose(r, r.T):
        msg = "`corr` must be symmetric with a unit diagonal."
        raise ValueError(msg)
    if np.linalg.eigvalsh(r).min() < -1e-8:
        msg = "`corr` must be positive semi-definite."
        raise ValueError(msg)
    return r


def orthant_below(upper: float, mean: np.ndarray, corr: np.ndarray, lower: float | None = None) -> float:
    """P(lower < W_k <= upper for every k), W ~ N(mean, corr): Genz's integration, seeded."""
    k = mean.size
    if k == 1:
        hi = float(special.ndtr(upper - mean[0]))
        return hi - (float(special.ndtr(lower - mean[0])) if lower is not None else 0.0)
    lim = None if lower is None else np.full(k, lower)
    return float(stats.multivariate_normal.cdf(np.full(k, upper), mean=mean, cov=corr, allow_singular=True,
                                               maxpts=_MAXPTS_PER_DIM * k, abseps=_ABSEPS, releps=0.0,
                                               lower_limit=lim, rng=np.random.default_rng(_SEED)))


def dunnett_critical_value(corr: Any, alpha: float = 0.05, alternative: str = "greater") -> float:
    r"""The simultaneous critical value c of k z tests whose statistics have correlation ``corr``.

    One-sided (``"greater"`` or ``"less"``): :math:`P(\max_k Z_k \le c) = 1 - \alpha`; two-sided:
    :math:`P(\max_k |Z_k| \le c) = 1 - \alpha`, for :math:`Z \sim N(0, R)` (Dunnett 1955 with
    infinite degrees of freedom). For k = 1 it is :math:`z_{1-\alpha}` (:math:`z_{1-\alpha/2}`).

    Examples
    --------
    Dunnett's table (1955, infinite df): 3 treatments against a control with equal sizes,
    correlation 1/2, one-sided 5%:

    >>> import numpy as np
    >>> r = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    >>> round(dunnett_critical_value(r, 0.05, "greater"), 2)
    2.06
    """
    r = check_correlation(corr)
    alpha = check_open_unit(alpha, "alpha")
    alternative = check_alternative(alternative)
    key = (r.tobytes(), r.shape[0], alpha, alternative)
    kept = _C_MEMO.get(key)
    if kept is None:
        if len(_C_MEMO) >= 64:
            _C_MEMO.pop(next(iter(_C_MEMO)))
        kept = _C_MEMO[key] = _critical_value(r, alpha, alternative)
    return kept


#: critical values kept for the next call with the same correlation, level and alternative (a search
#: over N, or a power curve, asks for the same one many times)
_C_MEMO: dict[tuple[bytes, int, float, str], float] = {}


def _critical_value(r: np.ndarray, alpha: float, alternative: str) -> float:
    two = alternative == "two-sided"
    k = r.shape[0]
    zero = np.zeros(k)

    def excess(c: float) -> float:
        return orthant_below(c, zero, r, -c if two else None) - (1.0 - alpha)

    tail = alpha / 2 if two else alpha
    lo = float(-special.ndtri(tail))  # the unadjusted value: c is at least this
    hi = float(-special.ndtri(tail / k))  # Bonferroni: c is at most this
    if k == 1 or hi - lo < 1e-12:
        return lo
    return float(optimize.brentq(excess, lo - 1e-6, hi + 1e-6, xtol=1e-7))


@dataclass(frozen=True, slots=True)
class DunnettPower:
    """The power of a many-to-one simultaneous test: the critical value, P(every comparison
    rejected), P(at least one), each comparison's own probability and the expected number rejected.
    """

    critical_value: float
    all_rejected: float
    any_rejected: float
    each_rejected: np.ndarray
    expected_rejected: float

    def __repr__(self) -> str:
        return (f"DunnettPower(k={self.each_rejected.size}, critical_value={self.critical_value:.4g}, "
                f"all_rejected={self.all_rejected:.4g}, expected_rejected={self.expected_rejected:.4g})")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {"critical_value": self.critical_value, "all_rejected": self.all_rejected,
                "any_rejected": self.any_rejected, "each_rejected": [float(v) for v in self.each_rejected],
                "expected_rejected": self.expected_rejected}


def _directions(delta: np.ndarray, alternative: str) -> np.ndarray:
    if alternative == "greater":
        return np.ones_like(delta)
    if alternative == "less":
        return -np.ones_like(delta)
    return np.where(delta < 0, -1.0, 1.0)


def _power_at(mu: np.ndarray, r: np.ndarray, c: float, s: np.ndarray) -> DunnettPower:
    """Power of the test with critical value c, standardized means mu and directions s."""
    smu = np.clip(s * mu, -_MU_CAP, _MU_CAP)
    rs = r * np.outer(s, s)
    each = np.asarray(special.ndtr(smu - c), dtype=float)
    # all rejected: P(s Z > c for all k) = P(-s Z < -c), -s Z ~ N(-s mu, S R S)
    p_all = min(max(orthant_below(-c, -smu, rs), 0.0), float(each.min()))
    # none rejected in the tested direction: P(s Z <= c for all k)
    p_none = min(max(orthant_below(c, smu, rs), 0.0), 1.0 - float(each.max()))
    return DunnettPower(critical_value=c, all_rejected=p_all, any_rejected=1.0 - p_none, each_rejected=each,
                        expected_rejected=float(each.sum()))


def check_vector(value: Any, name: str, k: int) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (k,)) if np.ndim(value) == 0 else \
        np.asarray(value, dtype=float).ravel()
    if arr.size != k or not np.all(np.isfinite(arr)):
        msg = f"`{name}` must hold {k} finite values (one per comparison); got {value!r}."
        raise ValueError(msg)
    return arr


def dunnett_power(delta: Any, se: Any, corr: Any, *, alpha: float = 0.05,
                  alternative: str = "greater") -> DunnettPower:
    r"""The power of Dunnett's many-to-one test of k comparisons.

    Parameters
    ----------
    delta : array of k floats
        The true gaps (new model minus each board model).
    se : array of k positive floats
        Their standard errors (:math:`\sigma_{D_k}/\sqrt N` for N paired items).
    corr : k x k array
        The correlation of the k statistics (:func:`family_correlation`).
    alpha : float
        Family-wise error rate.
    alternative : {"greater", "less", "two-sided"}
        Two-sided power counts rejections in the direction of each true gap.

    Returns
    -------
    DunnettPower
        ``all_rejected`` :math:`P(s_k Z_k > c\ \forall k)`, ``each_rejected``
        :math:`\Phi(s_k\mu_k - c)`, their sum ``expected_rejected``, and ``any_rejected``, for
        :math:`Z \sim N(\mu, R)`, :math:`\mu = \delta/se`, c = :func:`dunnett_critical_value`.

    Examples
    --------
    A new model 3 points above each of three board models, standard error 1.2 points each,
    correlation 0.5:

    >>> import numpy as np
    >>> r = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    >>> res = dunnett_power([0.03] * 3, [0.012] * 3, r)
    >>> round(res.critical_value, 2), round(res.all_rejected, 2), round(res.expected_rejected, 2)
    (2.06, 0.43, 2.01)
    """
    alternative = check_alternative(alternative)
    d, s_e, r = check_gaps(delta, se, corr, "se")
    c = dunnett_critical_value(r, alpha, alternative)
    return _power_at(d / s_e, r, c, _directions(d, alternative))


def items_for_dunnett(delta: Any, sd: Any, corr: Any, *, alpha: float = 0.05, power: float = 0.8,
                      alternative: str = "greater") -> float:
    r"""The smallest number of paired items N with P(every comparison rejected) >= ``power``.

    Each comparison's standard error is :math:`\sigma_k/\sqrt N` (``sd`` = :math:`\sigma_k`, the
    per-item standard deviation of :math:`D_k`); the correlation ``corr`` does not change with N.

    Notes
    -----
    P(all rejected) rises with N (an orthant probability rises with every mean), so the answer is
    found by bisection over integers between a lower bound -- each comparison alone at the joint
    critical value, :math:`\max_k \lceil((c + z_{power})\sigma_k/\delta_k)^2\rceil`, since
    P(all) <= min_k P(k) -- and an upper bound from Bonferroni's inequality
    :math:`P(\text{all}) \ge 1 - \sum_k (1 - P(k))`, each comparison at power
    :math:`1 - (1 - power)/k`. A gap of 0 or against the alternative gives ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    >>> items_for_dunnett([0.03] * 3, [0.4] * 3, r)
    2057.0
    """
    alpha, power = check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    d, sd_k, r = check_gaps(delta, sd, corr, "sd")
    k = r.shape[0]
    s = _directions(d, alternative)
    if np.any(s * d <= 0):
        return math.inf
    c = dunnett_critical_value(r, alpha, alternative)
    ratio = np.abs(d) / sd_k

    def ok(n: int) -> bool:
        return _power_at(math.sqrt(n) * d / sd_k, r, c, s).all_rejected >= power

    lo_n = max(int(np.ceil(np.max(((c + special.ndtri(power)) / ratio) ** 2) - 1e-9)), 1)
    hi_n = max(int(np.ceil(np.max(((c + special.ndtri(1 - (1 - power) / k)) / ratio) ** 2))), lo_n)
    return float(smallest_items(ok, lo_n, hi_n))


def check_gaps(delta: Any, spread: Any, corr: Any, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A family's gaps, their spreads (``name``: "sd" per item, "se" of the estimates; all > 0) and
    correlation, checked together: (delta, spread, corr) as arrays, or a helpful error.
    """
    r = check_correlation(corr)
    k = r.shape[0]
    d = check_vector(delta, "delta", k)
    s = check_vector(spread, name, k)
    if np.any(s <= 0):
        msg = f"`{name}` must be > 0; got {s.tolist()!r}."
        raise ValueError(msg)
    return d, s, r


def smallest_items(ok: Any, lo_n: int, hi_n: int) -> int:
    """The smallest integer N >= ``lo_n`` with ``ok(N)``, for a criterion that rises with N, from a
    lower bound ``lo_n`` and an upper bound ``hi_n`` (doubled until ``ok``: integration noise at a
    bound), by bisection over integers.
    """
    while not ok(hi_n):
        hi_n *= 2
    if ok(lo_n):
        return lo_n
    while hi_n - lo_n > 1:  # invariant: not ok(lo_n), ok(hi_n)
        mid = (lo_n + hi_n) // 2
        if ok(mid):
            hi_n = mid
        else:
            lo_n = mid
    return hi_n
