"""The verdict kernel: N*, q, MDE and "resolved" of paired gaps, IID and clustered.

This is the only implementation of the resolution verdict; :func:`llm_power.compare` (one pair)
and :func:`llm_power.diagnose` (every pair of a leaderboard) both call it, so the same pair gets
the same answer through every entry point. Everything is vectorised over pairs.

What "resolved" means (stated once, here and in ``docs/resolution.md``)
----------------------------------------------------------------------
A gap is *resolved* when both hold:

1. the benchmark is big enough for a gap of the observed size: ``q = N / N* >= 1``, N* the items
   needed to detect that gap with probability ``power`` at level ``alpha`` in the tested
   direction; and
2. the test reported beside it rejects at the same ``alpha`` in the tested direction.

With enough discordant items (1) implies (2); they can disagree at the margins (few discordant
items, the exact test's discreteness, t against z quantiles), and then the verdict is "not
resolved". A gap in the wrong direction for a one-sided alternative has N* = inf, q = 0.

How N* is computed
------------------
* IID, plug-in (the resolution paper): ``N* = K sigma_D^2 / delta^2``,
  ``K = (z_{1-alpha/2} + z_{1-beta})^2``, ``q = T^2 / K``, ``MDE = sqrt(K sigma_D^2 / N)``.
* IID, 0/1 scores with few discordant items (the exact McNemar regime, b + c < 25) or with a
  degenerate plug-in variance (perfect separation): the exact conditional McNemar test at the
  observed cells. The test conditions on the m = b + c discordant items, each favouring A with
  probability pi = b/m; ``m*`` is the smallest number of discordant items whose exact
  conditional power reaches ``power``, ``N* = m* N / m`` (the items that carry m* discordant
  items at the observed discordance), ``q = m / m*``, and the MDE is the smallest gap
  ``(2 pi - 1) m / N`` whose exact conditional power at the observed m reaches ``power``
  (``inf`` when none does).
* Clustered (G clusters): the cluster-robust (CR1) variance of delta-hat
  ``V_CR = G/(G-1) sum_g (S_g - m_g delta)^2 / N^2``, the measured design effect
  ``DE = V_CR / (sigma_D^2 / N)`` (or the ANOVA/Kish or the paper's model-based one), Student-t
  quantiles with G - 1 degrees of freedom, ``K_G = (t_{G-1,1-alpha/2} + t_{G-1,1-beta})^2`` and
  ``N*_cluster = max(DE, 1) K_G sigma_D^2 / delta^2``; the cluster test is
  ``T = delta / sqrt(V)`` against t_{G-1}.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from .._core.clusters import FEW_CLUSTERS, code_labels
from .._core.errors import DegenerateDataWarning, warn
from .._core.options import CLUSTER_METHODS as _CLUSTER_METHODS
from . import quantiles as _q
from .sufficient import PairSums
from .variance import DESIGN_EFFECTS, cluster_design_effects, cluster_df, cluster_structure
from .wild_decision import WILD_RESAMPLES, check_wild_work, wild_decision

__all__ = [
    "CLUSTER_METHODS",
    "EXACT_MAX_DISCORDANT",
    "FEW_CLUSTERS",
    "PVALUE_FLOOR",
    "check_cluster_labels",
]

#: binary pairs with fewer discordant items than this are judged by the exact McNemar test
EXACT_MAX_DISCORDANT = 25
#: p-values are never reported below the smallest normal double (underflow is not "p = 0")
PVALUE_FLOOR = float(np.finfo(float).tiny)
#: largest number of discordant items scanned for the exact conditional N*
_MAX_SCAN = 50_000_000


# =================================================================================================
# Quantiles and the constant K
# =================================================================================================

def tail_level(alpha: float, alternative: str) -> float:
    """Alpha / 2 two-sided, alpha one-sided (:func:`llm_power._kernel.quantiles.tail_level`)."""
    return float(_q.tail_level(alpha, alternative))


def critical_values(alpha: float, power: float, alternative: str, df: float | None = None) -> tuple[float, float]:
    """(z_{1-alpha/2}, z_{1-beta}) -- or Student-t quantiles with ``df`` degrees of freedom."""
    a, b = _q.critical_values(alpha, power, alternative, df)
    return float(a), float(b)


def k_constant(alpha: float, power: float, alternative: str, df: float | None = None) -> float:
    """K = (c_{1-alpha/2} + c_{power})^2 (:func:`llm_power._kernel.quantiles.k_constant`)."""
    return float(_q.k_constant(alpha, power, alternative, df))


def in_direction(delta: np.ndarray, alternative: str) -> np.ndarray:
    """True where the observed gap points the way the alternative tests (any non-zero gap if two-sided)."""
    if alternative == "greater":
        return np.asarray(delta > 0)
    if alternative == "less":
        return np.asarray(delta < 0)
    return np.asarray(delta != 0)


def floor_pvalue(p: Any) -> Any:
    """Never report an underflowed p-value as exactly 0."""
    return np.maximum(p, PVALUE_FLOOR)


# =================================================================================================
# The verdict rule: written here once
# =================================================================================================

def big_enough(q: Any) -> np.ndarray:
    """Whether the benchmark is big enough for the observed gap: ``q = N / N* >= 1`` (elementwise).

    The first half of the verdict (:func:`resolved`); a view that explains *why* a gap is not
    resolved asks this, never ``q`` itself.
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(np.asarray(q, dtype=float) >= 1.0)


def rejects(pvalue: Any, alpha: Any) -> np.ndarray:
    """Whether a test rejects: ``p <= alpha`` (elementwise; ``alpha`` may be one level per pair)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(np.asarray(pvalue, dtype=float) <= np.asarray(alpha, dtype=float))


def resolved(q: Any, n_star: Any = None, *, pvalue: Any = None, alpha: Any = None, rejected: Any = None,
             out: np.ndarray | None = None) -> np.ndarray:
    """The verdict of a gap -- the only place its rule is written.

    A gap is *resolved* when the benchmark is big enough for a gap of its size (``q >= 1``), the
    test reported beside it rejects at the same level (``pvalue <= alpha``) and N* is finite.
    Every regime (IID, multiplicity, clusters, anytime, runs), every wing (compare, diagnose, the
    arena, the cluster resamples) and every entry point calls this; a regime that is stricter than
    IID ANDs its own result with the IID one, never restates the rule.

    Parameters
    ----------
    q, n_star : array_like
        Per gap (``n_star`` None: its finiteness is implied by ``q >= 1``, as for the resampled
        gaps whose N* is not formed).
    pvalue, alpha : array_like, optional
        The reported test's p-value and the level it is judged at (per gap or one level).
    rejected : array_like of bool, optional
        Instead of ``pvalue``/``alpha``: the test's rejection already decided by its critical value
        (``|t| >= t_crit``, the same event as ``p <= alpha``), for resampled statistics whose
        p-values are never formed.
    out : numpy.ndarray of bool, optional
        Written in place (blocks of millions of pairs).
    """
    if rejected is None:
        if pvalue is None or alpha is None:
            msg = "the verdict needs the test's `pvalue` and `alpha`, or its decision `rejected`"
            raise TypeError(msg)
        rejected = rejects(pvalue, alpha)
    flags = np.logical_and(big_enough(q), np.asarray(rejected, dtype=bool), out=out)
    if n_star is not None:
        flags &= np.isfinite(np.asarray(n_star, dtype=float))
    return np.asarray(flags)


#: why a gap is (not) resolved: the part of the rule that decides it
REASONS = {"resolved": "resolved: q >= 1 and the test rejects at alpha",
           "too_small": "the benchmark is too small to tell: q < 1",
           "no_rejection": "q >= 1 but the test does not reject at alpha",
           "unreachable": "N* is infinite: no number of items like these resolves it (no gap in the tested "
                          "direction, or noise that more items do not remove)",
           "undefined": "N* is undefined (the differences have no variance)",
           "iid_unresolved": "this regime's rule holds, but the IID verdict does not (a stress test only tightens)"}


def verdict_reason(q: float, n_star: float, *, pvalue: float, alpha: float, iid_resolved: bool = True) -> str:
    """The key of :data:`REASONS` for one gap: which part of :func:`resolved` decides it
    (``iid_resolved``: the IID verdict a stricter regime also needs).
    """
    if bool(resolved(q, n_star, pvalue=pvalue, alpha=alpha)):
        return "resolved" if iid_resolved else "iid_unresolved"
    if math.isnan(float(q)) or math.isnan(float(n_star)):
        return "undefined"
    if not bool(big_enough(q)):
        return "too_small" if math.isfinite(float(n_star)) else "unreachable"
    return "no_rejection"


# =================================================================================================
# Cluster labels
# =================================================================================================

def check_cluster_labels(cluster: Any, n: int, *, name: str = "cluster") -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 for per-item cluster labels (:func:`llm_power._kernel.variance.code_labels`)."""
    return code_labels(cluster, n, name=name, unit="item")


# =================================================================================================
# The IID verdict
# =================================================================================================

@dataclass(frozen=True)
class Verdict:
    """Per-pair verdict arrays (all of shape (P,))."""

    n_star: np.ndarray  # unrounded
    q: np.ndarray
    mde: np.ndarray
    resolved: np.ndarray
    regime: np.ndarray  # "plug-in", "exact", "degenerate"


def plugin_verdict(delta: np.ndarray, var: np.ndarray, n: Any, k: Any,
                   alternative: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N*, q and MDE from the plug-in variance (vectorised; ``n`` and ``k`` may be arrays)."""
    delta = np.asarray(delta, dtype=float)
    var = np.asarray(var, dtype=float)
    n = np.asarray(n, dtype=float)
    ok = in_direction(delta, alternative)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        n_star = np.where(ok & (var > 0), k * var / (delta * delta), np.where(ok & (var == 0), np.nan, np.inf))
        q = np.where(ok & (var > 0), n * delta * delta / (var * k), np.where(ok & (var == 0), np.nan, 0.0))
        mde = np.where(var > 0, np.sqrt(k * var / n), np.nan)
    return n_star, q, mde


def exact_discordant_needed(b: int, c: int, *, alpha: float, power: float, alternative: str) -> float:
    """Smallest number of discordant items m* whose exact conditional McNemar power at pi = b/(b+c)
    reaches ``power`` (inf when the observed gap is zero or in the untested direction).
    """
    from .exact import rejection_probability

    m = b + c
    if m == 0 or b == c or not in_direction(np.array(b - c), alternative):
        return math.inf
    pi = b / m
    if alternative == "two-sided":
        pi = max(pi, 1.0 - pi)  # the two-sided test is symmetric
    elif alternative == "less":
        pi = 1.0 - pi  # mirror onto the upper tail
    alt = "two-sided" if alternative == "two-sided" else "greater"
    effect = 2.0 * pi - 1.0
    guess = k_constant(alpha, power, alternative) * (1.0 - effect * effect) / (effect * effect)
    size = int(min(max(64.0, 4.0 * guess + 64.0), _MAX_SCAN))
    start = 1
    while True:
        ms = np.arange(start, size + 1)
        reach = np.nonzero(rejection_probability(ms, pi, alpha, alt) >= power)[0]
        if reach.size:
            return float(ms[reach[0]])
        if size >= _MAX_SCAN:
            return math.inf
        start, size = size + 1, min(size * 4, _MAX_SCAN)


def exact_mde(m: int, n: int, *, alpha: float, power: float, alternative: str) -> float:
    """Smallest gap (2 pi - 1) m / n whose exact conditional power at m discordant items reaches
    ``power``; inf when even a gap on every discordant item (pi = 1) is not detected.
    """
    from .exact import rejection_probability

    alt = "two-sided" if alternative == "two-sided" else "greater"
    if m == 0:
        return math.inf

    def shortfall(pi: float) -> float:
        return float(rejection_probability(np.array([m]), pi, alpha, alt)[0]) - power

    if shortfall(1.0) < 0:
        return math.inf
    pi = optimize.brentq(shortfall, 0.5, 1.0, xtol=1e-12)
    return (2.0 * pi - 1.0) * m / n


#: the IID verdict's regime of a pair: the plug-in N*, the exact conditional one, or a degenerate variance
REGIME_NAMES = np.array(["plug-in", "exact", "degenerate"], dtype=object)

#: pairs per block of the per-pair arithmetic: a long chain of elementwise operations on arrays of
#: this length stays in the CPU cache (7x faster than whole 10-million-pair arrays, measured on
#: Newcombe's interval)
PAIR_BLOCK = 1 << 16


def by_blocks(fn: Callable[..., Any], size: int, *args: Any, progress: str | None = None, **kwargs: Any) -> Any:
    """``fn`` on blocks of :data:`PAIR_BLOCK` pairs, the results joined: arguments that are arrays
    of length ``size`` are sliced, everything else is passed as is; results may be arrays, tuples,
    dicts or dataclasses of arrays. ``progress`` names the task reported before the first block and after each one.
    """
    if size <= PAIR_BLOCK:
        return fn(*args, **kwargs)

    def cut(value: Any, sl: slice) -> Any:
        return value[sl] if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == size else value

    from .._core.progress import advance

    out: Any = None
    if progress is not None:
        advance(progress, 0, size)
    for start in range(0, size, PAIR_BLOCK):
        sl = slice(start, start + PAIR_BLOCK)
        part = fn(*(cut(a, sl) for a in args), **{k: cut(v, sl) for k, v in kwargs.items()})
        out = _allocate(part, size) if out is None else out
        _place(out, part, sl)
        if progress is not None:
            advance(progress, min(start + PAIR_BLOCK, size), size)
    return out


def _allocate(part: Any, size: int) -> Any:
    """Empty results shaped like one block's, for all ``size`` pairs (filled block by block)."""
    if isinstance(part, np.ndarray):
        return np.empty((size, *part.shape[1:]), dtype=part.dtype)
    if isinstance(part, tuple):
        return tuple(_allocate(v, size) for v in part)
    if isinstance(part, dict):
        return {k: _allocate(v, size) for k, v in part.items()}
    if dataclasses.is_dataclass(part) and not isinstance(part, type):
        return dataclasses.replace(part, **{f.name: _allocate(getattr(part, f.name), size)
                                            for f in dataclasses.fields(part)})
    return part


def _place(out: Any, part: Any, sl: slice) -> None:
    """Write one block's results into the full results."""
    if isinstance(out, np.ndarray):
        out[sl] = part
    elif isinstance(out, tuple):
        for o, p in zip(out, part, strict=True):
            _place(o, p, sl)
    elif isinstance(out, dict):
        for k in out:
            _place(out[k], part[k], sl)
    elif dataclasses.is_dataclass(out) and not isinstance(out, type):
        for f in dataclasses.fields(out):
            _place(getattr(out, f.name), getattr(part, f.name), sl)


def iid_verdict(delta: np.ndarray, var: np.ndarray, n: int, pvalue: np.ndarray, *, alpha: Any, power: float,
                alternative: str, b: np.ndarray | None = None, c: np.ndarray | None = None) -> Verdict:
    """The IID verdict of each pair: plug-in N*, or the exact conditional one for 0/1 pairs with few
    discordant items or a degenerate plug-in variance. ``alpha`` may be one level per pair (the
    per-pair levels of a multiplicity correction).
    """
    delta = np.asarray(delta, dtype=float)
    verdict: Verdict = by_blocks(iid_verdict_block, delta.size, delta, np.asarray(var, dtype=float), n,
                                 np.asarray(pvalue),
                     alpha=np.broadcast_to(np.asarray(alpha, dtype=float), delta.shape).copy(), power=power,
                     alternative=alternative, b=b, c=c, progress="pairs: N* and q")
    return dataclasses.replace(verdict, regime=REGIME_NAMES[verdict.regime])


def iid_verdict_block(delta: np.ndarray, var: np.ndarray, n: int, pvalue: np.ndarray, *, alpha: np.ndarray,
                      power: float, alternative: str, b: np.ndarray | None, c: np.ndarray | None) -> Verdict:
    """:func:`iid_verdict` of one block of pairs (per-pair ``alpha``; regimes as codes)."""
    alpha_arr = np.broadcast_to(np.asarray(alpha, dtype=float), delta.shape)
    k = _q.k_constant(alpha_arr, power, alternative)
    n_star, q, mde = plugin_verdict(delta, var, n, k, alternative)
    regime = np.zeros(delta.shape, dtype=np.int8)  # codes into REGIME_NAMES (object arrays are slow to fill)
    if b is not None and c is not None:
        exact = ((b + c) < EXACT_MAX_DISCORDANT) | (np.asarray(var) <= 0)
        for p in np.nonzero(exact)[0]:
            bb, cc, a_p = int(b[p]), int(c[p]), float(alpha_arr[p])
            m = bb + cc
            m_star = exact_discordant_needed(bb, cc, alpha=a_p, power=power, alternative=alternative)
            n_star[p] = math.inf if (m == 0 or math.isinf(m_star)) else m_star * n / m
            q[p] = 0.0 if math.isinf(m_star) else m / m_star
            mde[p] = exact_mde(m, n, alpha=a_p, power=power, alternative=alternative)
            regime[p] = 1
    else:
        regime[np.asarray(var) <= 0] = 2
    return Verdict(n_star=n_star, q=q, mde=mde, resolved=resolved(q, n_star, pvalue=pvalue, alpha=alpha_arr),
                   regime=regime)


#: a variance of the differences at or below (ROUNDING x the scores' size)^2 is rounding, not spread:
#: scores stored as doubles carry 52 bits, and 12 are left for the sums (a constant shift such as
#: ``a + 0.1`` vs ``a`` has a variance near 1e-34, which would make N* 1e-30 items and q 1e32)
ROUNDING = 2.0 ** -40


def spread(var: Any, scale: Any) -> np.ndarray:
    """The variance of graded differences with rounding set to 0 (``scale``: the size of the two
    models' scores, e.g. the sum of their root mean squares); what every graded verdict uses.
    """
    var = np.asarray(var, dtype=float)
    return np.where(var > (ROUNDING * np.asarray(scale, dtype=float)) ** 2, var, np.where(np.isnan(var), var, 0.0))


def warn_degenerate(var: np.ndarray, delta: np.ndarray, binary: bool) -> None:
    if binary:
        return  # 0/1 pairs: the McNemar tests say it (no discordant items)
    if np.any((var <= 0) & (delta != 0)):
        warn("a pair differs by the same amount on every item (zero variance of the differences): "
                      "N*, q, the MDE and the interval are undefined (NaN) and the pair is not reported as resolved.",
                      DegenerateDataWarning)
    if np.any((var <= 0) & (delta == 0)):
        warn("two models score the same on every item: there is no gap to test (p = 1; N*, q and the "
             "interval are undefined)", DegenerateDataWarning)


# =================================================================================================
# The clustered verdict
# =================================================================================================

@dataclass(frozen=True)
class ClusterVerdict:
    """Per-pair cluster arrays (shape (P,)) for one design-effect model."""

    n_clusters: int
    design_effect: np.ndarray  # of the chosen model, unfloored
    design_effect_robust: np.ndarray  # CR2 (= CR1 for equal cluster sizes)
    design_effect_cr1: np.ndarray
    design_effect_anova: np.ndarray
    design_effect_paper: np.ndarray
    icc: np.ndarray  # ANOVA ICC of D, truncated to [0, 1]
    variance: np.ndarray  # variance of delta-hat used by the cluster test
    df: np.ndarray  # degrees of freedom of the cluster t test
    statistic: np.ndarray
    pvalue: np.ndarray
    n_star: np.ndarray
    q: np.ndarray
    mde: np.ndarray
    resolved: np.ndarray
    method: str = "cr2"  # the clustered test: CLUSTER_METHODS
    ci_low: np.ndarray | None = None  # the test's own interval (cluster_verdict with confidence_level)
    ci_high: np.ndarray | None = None
    seed: int | None = None  # "wild": the seed of its draws (the same draws give the interval at any level)
    se_test: np.ndarray | None = None  # "wild": the CR1 standard error that studentises its test


#: the clustered test of a gap (or one model's mean): "cr2" the t test on the design-effect model's
#: variance (CR2 with Imbens-Kolesar df by default), "cv3" the cluster jackknife's variance on G - 1
#: df, "wild" the restricted wild cluster bootstrap (CR1-studentised, Webb weights up to 11 clusters)
#: and its inverted interval (:mod:`llm_power._kernel.wild_cluster`)
CLUSTER_METHODS = _CLUSTER_METHODS
def cluster_verdict(sums: PairSums, var: np.ndarray, iid_resolved: np.ndarray, *, alpha: float, power: float,  # noqa: PLR0913
                    alternative: str, design_effect: str, method: str = "cr2", confidence_level: float | None = None,
                    seed: int | None = None, n_resamples: int = WILD_RESAMPLES) -> ClusterVerdict:
    """Cluster test, design effect and N*/q/MDE of each pair of means (see the module docstring):
    the variance of the chosen design-effect model, then :func:`cluster_verdict_from_variance`.

    ``method`` (:data:`CLUSTER_METHODS`) chooses the test and the interval (with ``confidence_level``)
    that decide, and N*, q and the MDE follow the same variance: "cr2" the design-effect model's (its
    df); "cv3" the jackknife's (its DE = V_CV3 / (sigma^2 / N), G - 1 df); "wild" the bootstrap's p-value
    and its inverted interval, with N*, q and the MDE of the design-effect model (the analytic
    approximation of the test's power; the wild test is two-sided only and needs ``seed``, from
    :func:`.wild_decision.wild_seed` of the caller's generator, so that every entry point draws the same weights).
    """
    sizes, resid, resid_sq = sums.clusters()
    g = int(sizes.size)
    n = sums.n
    structure = cluster_structure(sizes)
    r2 = np.sum(resid**2, axis=0)
    r2h = np.sum(resid**2 * structure.h[:, None], axis=0)
    r2m = np.sum(resid**2 / sizes[:, None], axis=0)
    ssw = np.sum(resid_sq, axis=0) - r2m
    effects = cluster_design_effects(n, g, var, r2, r2h, r2m, float(np.sum(sizes**2)), ssw)
    model = DESIGN_EFFECTS[design_effect]
    de, variance, icc = model.effect(effects), model.variance(effects, var, n), effects.icc
    df = cluster_df(structure, icc) if model.imbens_kolesar_df else np.full(icc.shape, g - 1.0)
    if method == "cv3":
        from .wild_cluster import cv3_variance

        variance = np.asarray(cv3_variance(resid + sizes[:, None] * sums.delta, sizes), dtype=float).reshape(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            de = np.where(var > 0, variance * n / var, np.nan)
        df = np.full(icc.shape, g - 1.0)
    out = cluster_verdict_from_variance(sums.delta, var, n, variance, de, df, iid_resolved, n_clusters=g, alpha=alpha,
                                        power=power, alternative=alternative)
    out = dataclasses.replace(out, design_effect_robust=effects.de_cr2, design_effect_cr1=effects.de_cr1,
                              design_effect_anova=effects.de_anova, design_effect_paper=effects.de_paper, icc=icc,
                              method=method)
    if method == "wild":
        return _wild_verdict(out, sums, iid_resolved, alpha=alpha, alternative=alternative,
                             confidence_level=confidence_level, seed=seed, n_resamples=n_resamples)
    if confidence_level is not None:
        lo, hi = t_interval(sums.delta, variance, df, confidence_level, alternative)
        out = dataclasses.replace(out, ci_low=lo, ci_high=hi)
    return out


def _wild_verdict(out: ClusterVerdict, sums: PairSums, iid_resolved: np.ndarray, *, alpha: float,  # noqa: PLR0913
                  alternative: str, confidence_level: float | None, seed: int | None,
                  n_resamples: int) -> ClusterVerdict:
    """The wild cluster bootstrap's p-value (and interval) decide: the same draws for the test and
    the interval, so the interval at 1 - alpha excludes 0 exactly when the test rejects.
    """
    if alternative != "two-sided":
        msg = "the wild cluster bootstrap is two-sided; use cluster_method='cr2' or 'cv3' for a one-sided test"
        raise ValueError(msg)
    if seed is None:
        msg = "the wild cluster bootstrap needs a seed (wild_seed of the caller's generator)"
        raise ValueError(msg)
    sizes, resid, _ = sums.clusters()
    check_wild_work(resid.shape[1], sizes.size, "pairs", n_resamples)
    wild = wild_decision(sums, seed=seed, n_resamples=n_resamples, confidence_level=confidence_level)
    flags = resolved(out.q, out.n_star, pvalue=wild.pvalue, alpha=alpha) & np.asarray(iid_resolved, dtype=bool)
    flags &= np.isfinite(np.asarray(out.variance, dtype=float)) & wild.estimable
    out = dataclasses.replace(out, statistic=wild.statistic, pvalue=wild.pvalue, resolved=flags, seed=seed,
                              se_test=wild.standard_error)
    if confidence_level is not None:
        out = dataclasses.replace(out, ci_low=wild.ci_low, ci_high=wild.ci_high)
    return out


def cluster_verdict_from_variance(delta: np.ndarray, var: np.ndarray, n: Any, variance: np.ndarray,  # noqa: PLR0917
                                  de: np.ndarray, df: np.ndarray, iid_resolved: np.ndarray, *, n_clusters: int,
                                  alpha: float, power: float, alternative: str) -> ClusterVerdict:
    """The cluster regime's decision from a cluster-robust ``variance`` of each estimate (a pair of
    means, a Bradley-Terry rating gap): the t test on ``df`` degrees of freedom, N* =
    max(DE, 1) K_df sigma^2 / delta^2, and "resolved" only where the IID verdict holds too. A NaN
    variance (not estimable) gives NaN numbers and never "resolved".
    """
    statistic, pvalue, n_star, q, mde, flags = _cluster_decision(np.asarray(delta, dtype=float), var, n, variance,
                                                                 de, df, alpha=alpha, power=power,
                                                                 alternative=alternative)
    flags &= np.asarray(iid_resolved, dtype=bool) & np.isfinite(np.asarray(variance, dtype=float))
    nan = np.full(np.shape(delta), np.nan)
    return ClusterVerdict(n_clusters=n_clusters, design_effect=de, design_effect_robust=nan, design_effect_cr1=nan,
                          design_effect_anova=nan, design_effect_paper=nan, icc=nan, variance=variance, df=df,
                          statistic=statistic, pvalue=pvalue, n_star=n_star, q=q, mde=mde, resolved=flags)


def _cluster_decision(delta: np.ndarray, var: np.ndarray, n: Any, variance: np.ndarray, de: np.ndarray,  # noqa: PLR0917
                      df: np.ndarray, *, alpha: float, power: float, alternative: str) -> tuple[np.ndarray, ...]:
    """Cluster t test, then N* = max(DE, 1) K_df sigma^2 / delta^2 with Student-t quantiles."""
    statistic, pvalue = t_test(delta, variance, df, alternative)
    k_df = _q.k_constant(alpha, power, alternative, df)
    de_floor = np.maximum(np.where(np.isfinite(de), de, np.nan), 1.0)
    n_star, q, mde = plugin_verdict(delta, de_floor * var, n, k_df, alternative)
    return statistic, pvalue, n_star, q, mde, resolved(q, n_star, pvalue=pvalue, alpha=alpha)


@dataclass(frozen=True)
class RunVerdict:
    """Per-pair arrays of the run regime (items crossed with runs: :mod:`llm_power._kernel.crossed`)."""

    variance: np.ndarray  # of delta-hat over items and runs: item_part + run_part
    df: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    n_star: np.ndarray  # items needed at the current runs (inf: run noise alone exceeds delta^2 / K)
    q: np.ndarray
    mde: np.ndarray
    resolved: np.ndarray


def run_verdict(delta: np.ndarray, item_var: np.ndarray, run_part: np.ndarray, n: Any, df: np.ndarray,  # noqa: PLR0913, PLR0917
                iid_resolved: np.ndarray, *, alpha: float, power: float, alternative: str) -> RunVerdict:
    """The run regime's decision. ``item_var`` is the per-item variance sigma_D^2 of the run-averaged
    gap (its item part of Var(delta-hat) is sigma_D^2 / n) and ``run_part`` the part no number of
    items removes (sum over the two models of s2_run / R). The t test on ``df`` degrees of freedom uses
    V = sigma_D^2/n + run_part; at the current runs

        N*_run = K_df sigma_D^2 / (delta^2 - K_df run_part)   (inf when delta^2 <= K_df run_part),
        q_run = N / N*_run,  MDE_run = sqrt(K_df V),

    so q_run >= 1 exactly when |delta| >= MDE_run. "Resolved" needs the IID verdict too, so the run
    regime is never less strict than IID; with run_part = 0 its N*, q and MDE are the plug-in ones.
    """
    delta = np.asarray(delta, dtype=float)
    item_var, run_part = np.asarray(item_var, dtype=float), np.asarray(run_part, dtype=float)
    n = np.asarray(n, dtype=float)
    variance = item_var / n + run_part
    statistic, pvalue = t_test(delta, variance, df, alternative)
    k = np.asarray(_q.k_constant(alpha, power, alternative, df), dtype=float)
    ok = in_direction(delta, alternative)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = delta * delta - k * run_part
        degenerate = ok & (item_var == 0) & (run_part == 0)  # no variance at all: undefined, as plug-in
        items_free = ok & (item_var == 0) & (run_part > 0)  # items add nothing: the runs alone decide
        n_star = np.where(ok & (item_var > 0) & (room > 0), k * item_var / room,
                          np.where(degenerate, np.nan, np.where(items_free & (room > 0), 0.0, np.inf)))
        q = np.where(ok & (item_var > 0), np.maximum(n * room / (k * item_var), 0.0),
                     np.where(degenerate, np.nan, np.where(items_free & (room > 0), np.inf, 0.0)))
        mde = np.where(variance > 0, np.sqrt(k * variance), np.nan)
    flags = resolved(q, n_star, pvalue=pvalue, alpha=alpha) & np.isfinite(variance)
    flags &= np.asarray(iid_resolved, dtype=bool)
    return RunVerdict(variance=variance, df=np.asarray(df, dtype=float), statistic=statistic, pvalue=pvalue,
                      n_star=n_star, q=q, mde=mde, resolved=flags)


def t_test(delta: np.ndarray, variance: np.ndarray, df: Any, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """T statistic and p-value of delta with standard error sqrt(variance) on ``df`` degrees of freedom
    (NaN variance: NaN statistic, p = 1 -- not estimable is no evidence).
    """
    delta = np.asarray(delta, dtype=float)
    variance = np.asarray(variance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(variance > 0, delta / np.sqrt(variance),
                     np.where(np.isnan(variance), np.nan, np.where(delta == 0, 0.0, np.sign(delta) * np.inf)))
    return t, floor_pvalue(_q.t_pvalue(t, df, alternative))


def t_interval(delta: Any, variance: Any, df: Any, level: float, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval (one-sided per ``alternative``) for delta with the given variance."""
    delta = np.asarray(delta, dtype=float)
    half = _q.interval_half_width(np.sqrt(np.asarray(variance, dtype=float)), level, alternative, df)
    if alternative == "two-sided":
        return delta - half, delta + half
    if alternative == "greater":
        return delta - half, np.full_like(delta, np.inf)
    return np.full_like(delta, -np.inf), delta + half


# =================================================================================================
# The reported IID test and interval of each pair (the Dror et al. tree, shared by compare/diagnose)
# =================================================================================================

#: graded scores: below this many items the test checks normality instead of relying on the CLT
CLT_MIN_ITEMS = 30


def choose_iid_test(binary: bool, n: int, m: int | None, d: np.ndarray | None) -> tuple[str, str]:
    """(test, reason) of the decision tree for one pair without clusters."""
    if binary and m is not None:
        if m < EXACT_MAX_DISCORDANT:
            return "mcnemar_exact", f"0/1 scores, b + c = {m} < {EXACT_MAX_DISCORDANT} discordant items"
        return "mcnemar_asymptotic", f"0/1 scores, b + c = {m} >= {EXACT_MAX_DISCORDANT} discordant items"
    if n >= CLT_MIN_ITEMS:
        return "paired_t", f"graded scores, mean difference over n = {n} >= {CLT_MIN_ITEMS} items (CLT)"
    if n >= 3 and d is not None and np.ptp(d) > 0:
        from scipy import stats  # only here: importing scipy.stats costs a start-up ~0.3 s

        p_norm = float(stats.shapiro(d).pvalue)
        if p_norm >= 0.05:
            return "paired_t", (f"graded scores, n = {n} < {CLT_MIN_ITEMS}, differences look normal "
                                f"(Shapiro-Wilk p = {p_norm:.2f})")
        return "permutation", (f"graded scores, n = {n} < {CLT_MIN_ITEMS}, differences not normal "
                               f"(Shapiro-Wilk p = {p_norm:.2g})")
    return "permutation", f"graded scores, n = {n}: too few items to check normality"


def mcnemar_test(b: np.ndarray, c: np.ndarray, variant: str, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """McNemar statistic and p-value (floored) of arrays of discordant counts."""
    from .pvalues import mcnemar_pvalue

    def block(b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        statistic, p = mcnemar_pvalue(b, c, method=variant.removeprefix("mcnemar_"), alternative=alternative)
        return statistic, floor_pvalue(p)

    b, c = np.atleast_1d(np.asarray(b, dtype=float)), np.atleast_1d(np.asarray(c, dtype=float))
    out: tuple[np.ndarray, np.ndarray] = by_blocks(block, b.size, b, c)
    return out


def paired_t_test(delta: np.ndarray, var: np.ndarray, n: int, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """Paired t from the mean difference and the sample variance (ddof 1) of D."""
    return t_test(delta, np.asarray(var, dtype=float) / n, n - 1, alternative)


def paired_t_interval(delta: Any, var: Any, n: int, level: float, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """The paired t interval from the sample variance (ddof 1) of D, with NaN bounds where the variance
    is 0: the items show no spread to estimate a width from (never a zero-width interval).
    """
    var = np.asarray(var, dtype=float)
    return t_interval(delta, np.where(var > 0, var, np.nan) / n, n - 1, level, alternative)


