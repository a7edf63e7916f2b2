"""Planning an eval: paired sample size N*, minimum detectable effect, exact power.

Before an eval is run: "how many items do I need to detect a 2-point gain with 80% power?";
for an existing benchmark: "which gap can it detect at all?". Paired designs (both models on the
same items) need far fewer items than unpaired ones when per-item correctness is correlated.

- :func:`sample_size`, :func:`mde`, :func:`power`, :func:`power_curve` -- paired (``"wald"``,
  ``"connor"``, ``"exact"``) and unpaired designs;
- :func:`sample_size_shortcut`, :func:`shortcut_constant`, :func:`shortcut_prescreen` -- the
  widespread wrong recipe and how far off it is;
- conversions between (p_A, p_B, rho), cell probabilities and (p_d, delta);
- :func:`bonferroni_factor` -- N* under multiplicity; :func:`type_s_m` -- Gelman & Carlin (2014).

The plug-in core shared with :func:`llm_power.compare`: for a paired difference with per-item
variance sigma_D^2,

    K     = (z_{1-alpha/2} + z_{1-beta})^2          (z_{1-alpha} one-sided; 7.84888 at 0.05/0.8)
    N*    = K * sigma_D^2 / delta^2                 (items needed to detect delta)
    MDE   = sqrt(K * sigma_D^2 / N)                 (gap detectable with N items)
    q     = N / N* = T^2 / K,  T = sqrt(N) delta / sigma_D

q >= 1 means the benchmark resolves the observed gap at (alpha, power); q is not "observed
power" (see the docs).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, optimize, special, stats

from ._results import Result
from ._validation import check_alternative, check_open_unit, check_option, check_positive, fail, scalar_or_array
from .errors import InfeasibleDesignWarning

__all__ = [
    "PAIRED_METHODS",
    "UNPAIRED_METHODS",
    "TypeSMResult",
    "bonferroni_factor",
    "cells_from_margins",
    "discordance_from_baseline",
    "k_factor",
    "margins_from_cells",
    "mde",
    "mde_from_variance",
    "n_star_from_variance",
    "power",
    "power_curve",
    "resolution_ratio",
    "rho_bounds",
    "sample_size",
    "sample_size_shortcut",
    "shortcut_constant",
    "shortcut_prescreen",
    "type_s_m",
    "unrounded_sample_size",
]


def _check_alpha_power(alpha: float, power: float) -> tuple[float, float]:
    alpha = check_open_unit(alpha, "alpha")
    power = check_open_unit(power, "power")
    if power <= alpha:
        raise fail("power", f"greater than `alpha` ({alpha:g})", power)
    return alpha, power


def k_factor(alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided") -> float:
    r"""The constant :math:`K = (z_{1-\alpha/2} + z_{1-\beta})^2` of the sample-size formulas.

    One-sided alternatives use :math:`z_{1-\alpha}`.

    Examples
    --------
    >>> from llm_power.planning import k_factor
    >>> round(k_factor(), 5)
    7.84888
    """
    alpha, power = _check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    tail = alpha / 2.0 if alternative == "two-sided" else alpha
    return float((-special.ndtri(tail) + special.ndtri(power)) ** 2)


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
        raise ValueError(f"`n` must be >= 1; got {n!r}.")
    return scalar_or_array(np.sqrt(k * np.asarray(variance, dtype=float) / n_arr))


def resolution_ratio(n: Any, n_star: Any) -> Any:
    """q = N / N* (0 when N* is infinite, inf when N* is 0)."""
    n_arr = np.asarray(n, dtype=float)
    ns = np.asarray(n_star, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.isinf(ns), 0.0, np.where(ns == 0, np.inf, n_arr / ns))
    return scalar_or_array(out)


def ceil_items(value: float) -> float:
    """Round an unrounded N* up to whole items, keeping inf (and tolerating float noise)."""
    if not math.isfinite(value):
        return value
    return float(math.ceil(value - 1e-9))


# =================================================================================================
# Designs and conversions
# =================================================================================================

PAIRED_METHODS = ("connor", "exact", "wald")
UNPAIRED_METHODS = ("fleiss", "per_arm", "wald")
DESIGNS = ("paired", "unpaired")


def _check_prob(value: Any, name: str) -> float:
    value = check_open_unit(value, name)
    return value


def rho_bounds(p_a: float, p_b: float) -> tuple[float, float]:
    r"""Admissible range of the phi correlation rho for two 0/1 margins (Frechet-Hoeffding).

    p11 must lie in [max(0, p_A + p_B - 1), min(p_A, p_B)], so
    :math:`\rho \in [(\max(0,p_A+p_B-1) - p_Ap_B)/s, (\min(p_A,p_B) - p_Ap_B)/s]` with
    :math:`s = \sqrt{p_A q_A p_B q_B}`.

    Examples
    --------
    >>> from llm_power import rho_bounds
    >>> lo, hi = rho_bounds(0.65, 0.60)
    >>> round(lo, 2), round(hi, 2)
    (-0.6, 0.9)
    """
    p_a, p_b = _check_prob(p_a, "p_a"), _check_prob(p_b, "p_b")
    s = math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    return (max(0.0, p_a + p_b - 1.0) - p_a * p_b) / s, (min(p_a, p_b) - p_a * p_b) / s


def cells_from_margins(p_a: float, p_b: float, rho: float = 0.0) -> tuple[float, float, float, float]:
    r"""Cell probabilities (p11, p10, p01, p00) of the paired 2x2 table from margins and rho.

    :math:`p_{11} = p_Ap_B + \rho\sqrt{p_Aq_Ap_Bq_B}`, :math:`p_{10} = p_A - p_{11}`,
    :math:`p_{01} = p_B - p_{11}`.

    Raises
    ------
    ValueError
        When rho is outside :func:`rho_bounds` (the message states the admissible range).

    Examples
    --------
    >>> from llm_power import cells_from_margins
    >>> [round(x, 4) for x in cells_from_margins(0.65, 0.60, 0.30)]
    [0.4601, 0.1899, 0.1399, 0.2101]
    """
    p_a, p_b = _check_prob(p_a, "p_a"), _check_prob(p_b, "p_b")
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.floating, np.integer)) or not math.isfinite(rho):
        raise fail("rho", "a finite number", rho, exc=TypeError if not isinstance(rho, (int, float)) else ValueError)
    lo, hi = rho_bounds(p_a, p_b)
    if not lo - 1e-12 <= rho <= hi + 1e-12:
        raise ValueError(
            f"rho={rho:g} is outside the admissible range [{lo:.2f}, {hi:.2f}] for p_a={p_a:g}, p_b={p_b:g} "
            "(two 0/1 variables with these accuracies cannot be more (anti-)correlated)."
        )
    p11 = p_a * p_b + rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    p11 = min(max(p11, max(0.0, p_a + p_b - 1.0)), min(p_a, p_b))
    # at a Frechet bound a cell is 0 exactly; rounding must not make it -1e-16
    return p11, max(p_a - p11, 0.0), max(p_b - p11, 0.0), max(1.0 - p_a - p_b + p11, 0.0)


def margins_from_cells(p11: float, p10: float, p01: float, p00: float) -> tuple[float, float, float]:
    """(p_A, p_B, rho) from the four cell probabilities (they must sum to 1).

    Examples
    --------
    >>> from llm_power import margins_from_cells
    >>> [round(x, 4) for x in margins_from_cells(0.4601, 0.1899, 0.1399, 0.2101)]
    [0.65, 0.6, 0.3]
    """
    cells = [float(x) for x in (p11, p10, p01, p00)]
    if any(c < 0 or not math.isfinite(c) for c in cells):
        raise ValueError(f"cell probabilities must be non-negative; got {cells}.")
    if abs(sum(cells) - 1.0) > 1e-9:
        raise ValueError(f"cell probabilities must sum to 1; got {sum(cells):.6g}.")
    p_a, p_b = cells[0] + cells[1], cells[0] + cells[2]
    s = math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    rho = (cells[0] - p_a * p_b) / s if s > 0 else math.nan
    return p_a, p_b, rho


def discordance_from_baseline(p: float, rho: float = 0.0) -> float:
    r"""Discordance :math:`p_d = 2p(1-p)(1-\rho)` of two models near a common accuracy p.

    The seeds' tables parametrise paired designs by a baseline accuracy p (the midpoint of the
    two models) and rho instead of two margins.

    Examples
    --------
    >>> from llm_power import discordance_from_baseline
    >>> round(discordance_from_baseline(0.8, 0.3), 3)
    0.224

    Raises
    ------
    ValueError
        When rho is outside the Frechet-Hoeffding range of two 0/1 variables with accuracy p,
        [1 - 1/max(p, 1 - p), 1) (two models at 80% cannot disagree on more than 40% of items).
    """
    p = _check_prob(p, "p")
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.floating, np.integer)) or not math.isfinite(rho):
        raise fail("rho", "a finite number", rho)
    lo = 1.0 - 1.0 / max(p, 1.0 - p)
    if not (lo - 1e-12 <= float(rho) < 1.0):
        raise ValueError(
            f"rho={float(rho):g} is outside the admissible range [{lo:.2f}, 1) for two models at p={p:g} "
            "(two 0/1 variables with these accuracies cannot be more (anti-)correlated)."
        )
    return min(2.0 * p * (1.0 - p) * (1.0 - float(rho)), 2.0 * min(p, 1.0 - p))


def _paired_parameters(p_a: float, p_b: float, rho: float, discordance: float | None) -> tuple[float, float, float, float]:
    """(p_d, delta, p10, p01) of a paired design, validated."""
    p_a, p_b = _check_prob(p_a, "p_a"), _check_prob(p_b, "p_b")
    delta = p_a - p_b
    if discordance is None:
        _, p10, p01, _ = cells_from_margins(p_a, p_b, rho)
        p_d = p10 + p01
    else:
        p_d = check_open_unit(discordance, "discordance")
        if delta * delta >= p_d or abs(delta) > p_d:
            raise ValueError(
                f"infeasible design: |delta| = {abs(delta):.4g} needs discordance > |delta| "
                f"(the two models must disagree on at least |delta| of the items); got discordance = {p_d:.4g}."
            )
        upper = min(p_a + p_b, 2.0 - p_a - p_b)
        if p_d > upper + 1e-12:
            raise ValueError(
                f"infeasible design: discordance = {p_d:.4g} is above {upper:.4g}, the most two models at "
                f"p_a={p_a:g} and p_b={p_b:g} can disagree (Frechet-Hoeffding bound: p_d <= min(p_a + p_b, "
                "2 - p_a - p_b))."
            )
        p10, p01 = (p_d + delta) / 2.0, (p_d - delta) / 2.0
    return p_d, delta, p10, p01


def _check_delta(delta: float) -> None:
    if delta == 0:
        raise ValueError("`p_a` and `p_b` are equal (delta = 0): no sample size detects a zero gap.")


def _z_alpha(alpha: float, alternative: str) -> float:
    return float(-special.ndtri(alpha / 2.0 if alternative == "two-sided" else alpha))


def _check_design(design: str, method: str) -> str:
    design = check_option(design, "design", DESIGNS)
    check_option(method, "method", PAIRED_METHODS if design == "paired" else UNPAIRED_METHODS)
    return design


def _check_design_effect(design_effect: Any) -> float:
    if isinstance(design_effect, bool) or not isinstance(design_effect, (int, float, np.number)):
        raise fail("design_effect", "a number >= 1", design_effect, exc=TypeError)
    if not (math.isfinite(design_effect) and design_effect >= 1.0):
        raise fail("design_effect", "a number >= 1", design_effect)
    return float(design_effect)


# =================================================================================================
# Exact power of the exact conditional McNemar test
# =================================================================================================

def _rejection_probability(m: np.ndarray, pi: float, alpha: float, alternative: str) -> np.ndarray:
    """P(exact McNemar rejects | m discordant items, each favouring A with probability pi)."""
    m = np.asarray(m, dtype=np.int64)
    half = 0.5
    if alternative == "two-sided":
        level = alpha / 2.0
    else:
        level = alpha
    # largest c with P(X <= c | m, 1/2) <= level  (c = -1: nothing rejects in that tail)
    c = stats.binom.ppf(level, m, half).astype(np.int64)
    c = np.where(stats.binom.cdf(c, m, half) <= level * (1 + 1e-12), c, c - 1)
    lower = np.where(c >= 0, stats.binom.cdf(c, m, pi), 0.0)  # B favoured: b small
    upper = np.where(c >= 0, stats.binom.sf(m - c - 1, m, pi), 0.0)  # A favoured: b >= m - c
    if alternative == "two-sided":
        return lower + upper
    if alternative == "greater":
        return upper
    return lower


#: the exact methods sum over every count up to n (power: about 7 s at 10^6) and the exact N* scans
#: every n (about 6 s at 5*10^4, growing with the square): beyond these they are refused -- the
#: normal approximations are then within a fraction of a percent of the exact answers
EXACT_POWER_MAX_N = 1_000_000
EXACT_SCAN_MAX_N = 50_000


def _check_exact_size(n: float, *, what: str, limit: int = EXACT_POWER_MAX_N) -> None:
    if not n <= limit:
        raise ValueError(f"{what} needs n ≈ {n:.3g} items, beyond the {limit:,} the exact method computes "
                         "in bounded time and memory; use method='connor' (sample size, MDE) or method='normal' "
                         "(power), which agree with the exact answer to well under 1% at this size")


def _exact_power_paired(n: np.ndarray, p_d: float, p10: float, alpha: float, alternative: str) -> np.ndarray:
    """Exact power for each n: sum over m ~ Binomial(n, p_d) of P(reject | m)."""
    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    n_max = int(n.max())
    _check_exact_size(n_max, what="the exact power")
    m = np.arange(n_max + 1)
    reject = _rejection_probability(m, p10 / p_d, alpha, alternative)
    out = np.empty(n.shape, dtype=float)
    step = max(1, 4_000_000 // (n_max + 1))
    for start in range(0, n.size, step):
        block = n[start:start + step]
        pmf = stats.binom.pmf(m[None, :], block[:, None], p_d)
        out[start:start + step] = pmf @ reject
    return out


# =================================================================================================
# Sample size
# =================================================================================================

def _raw_paired(p_d: float, delta: float, k: float, z_a: float, z_b: float, method: str) -> float:
    if method == "wald":
        return k * (p_d - delta * delta) / (delta * delta)
    # connor
    return (z_a * math.sqrt(p_d) + z_b * math.sqrt(p_d - delta * delta)) ** 2 / (delta * delta)


def _raw_unpaired(p_a: float, p_b: float, k: float, z_a: float, z_b: float, method: str) -> float:
    delta = p_a - p_b
    pbar = (p_a + p_b) / 2.0
    if method == "wald":
        return k * 2.0 * pbar * (1 - pbar) / (delta * delta)
    arms = p_a * (1 - p_a) + p_b * (1 - p_b)
    if method == "per_arm":
        return k * arms / (delta * delta)
    # fleiss: pooled variance under H0, per-arm variance under H1
    return (z_a * math.sqrt(2.0 * pbar * (1 - pbar)) + z_b * math.sqrt(arms)) ** 2 / (delta * delta)


def unrounded_sample_size(
    p_a: float,
    p_b: float,
    *,
    rho: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    design: str = "paired",
    method: str = "wald",
    alternative: str = "two-sided",
    design_effect: float = 1.0,
    discordance: float | None = None,
) -> float:
    """:func:`sample_size` before rounding up (the exact method is integer-valued already).

    Examples
    --------
    >>> from llm_power.planning import unrounded_sample_size
    >>> round(unrounded_sample_size(0.65, 0.60, rho=0.30, method="connor"), 2)
    1033.06
    """
    alpha, power = _check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    design = _check_design(design, method)
    design_effect = _check_design_effect(design_effect)
    z_a, z_b = _z_alpha(alpha, alternative), float(special.ndtri(power))
    k = (z_a + z_b) ** 2
    if design == "unpaired":
        p_a, p_b = _check_prob(p_a, "p_a"), _check_prob(p_b, "p_b")
        _check_delta(p_a - p_b)
        _check_direction(p_a - p_b, alternative)
        return design_effect * _raw_unpaired(p_a, p_b, k, z_a, z_b, method)
    p_d, delta, p10, _ = _paired_parameters(p_a, p_b, rho, discordance)
    _check_delta(delta)
    _check_direction(delta, alternative)
    if method == "exact":
        return design_effect * _exact_sample_size(p_d, delta, p10, alpha, power, alternative, k, z_a, z_b)
    return design_effect * _raw_paired(p_d, delta, k, z_a, z_b, method)


def _check_direction(delta: float, alternative: str) -> None:
    if (alternative == "greater" and delta < 0) or (alternative == "less" and delta > 0):
        raise ValueError(
            f"infeasible: alternative={alternative!r} tests the other direction than delta = p_a - p_b = "
            f"{delta:+.4g}; no sample size gives power there."
        )


def _exact_sample_size(p_d: float, delta: float, p10: float, alpha: float, power: float, alternative: str,
                       k: float, z_a: float, z_b: float) -> float:
    """Smallest n whose exact power reaches ``power``.

    Scans every n upward from half the Connor size (where the power is far below any target
    above 1/2), updating the distribution of the discordant count m ~ Binomial(n, p_d) from n to
    n + 1 by one convolution step, so each n costs O(n) vector work.
    """
    connor = _raw_paired(p_d, delta, k, z_a, z_b, "connor")
    _check_exact_size(connor, what=f"exact N* for a {100 * abs(delta):.3g}-point gap", limit=EXACT_SCAN_MAX_N)
    start = max(1, int(0.5 * connor))
    size = 4 * start + 64
    reject = _rejection_probability(np.arange(size), p10 / p_d, alpha, alternative)
    pmf = np.zeros(size)
    pmf[: start + 1] = stats.binom.pmf(np.arange(start + 1), start, p_d)
    n = start
    while True:
        if float(pmf[: n + 1] @ reject[: n + 1]) >= power:
            return float(n)
        n += 1
        if n + 1 >= size:  # grow the buffers
            size *= 2
            reject = _rejection_probability(np.arange(size), p10 / p_d, alpha, alternative)
            pmf = np.concatenate([pmf, np.zeros(size - pmf.size)])
        shifted = pmf[:n] * p_d
        pmf[: n + 1] *= 1.0 - p_d
        pmf[1 : n + 1] += shifted


def sample_size(
    p_a: float,
    p_b: float,
    *,
    rho: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    design: str = "paired",
    method: str = "wald",
    alternative: str = "two-sided",
    design_effect: float = 1.0,
    discordance: float | None = None,
) -> int:
    r"""Items needed to detect the gap p_a - p_b with the given power.

    Parameters
    ----------
    p_a, p_b : float
        Anticipated accuracies of model A and model B, in (0, 1).
    rho : float, default 0.0
        Phi correlation of the two models' per-item correctness; it must lie in
        :func:`rho_bounds`. LLMs on the same benchmark typically have rho of 0.3-0.7.
    alpha, power : float, default 0.05 and 0.8
    design : {"paired", "unpaired"}, default "paired"
        ``"paired"``: both models on the same items, result = total items. ``"unpaired"``: two
        independent item sets, result = items *per group*.
    method : str, default "wald"
        Paired: ``"wald"`` (the resolution paper's :math:`N^* = K\sigma_D^2/\delta^2`),
        ``"connor"`` (Connor 1987:
        :math:`[z_{1-\alpha/2}\sqrt{p_d} + z_{1-\beta}\sqrt{p_d-\delta^2}]^2/\delta^2`), ``"exact"``
        (the smallest n whose exact power of the exact conditional McNemar test reaches
        ``power``, computed by summing over the distribution of the discordant count; the exact
        power is not monotone in n, and this is the first n that reaches it). Unpaired:
        ``"wald"`` (:math:`K\cdot 2\bar p(1-\bar p)/\delta^2`, the seeds' convention),
        ``"per_arm"`` (:math:`K(p_Aq_A + p_Bq_B)/\delta^2`), ``"fleiss"`` (pooled variance under
        H0, per-arm under H1; as statsmodels' ``power_proportions_2indep``).
    alternative : {"two-sided", "less", "greater"}
    design_effect : float, default 1.0
        Multiplier for clustered items, DE = 1 + (m - 1) ICC (see :func:`design_effect`).
    discordance : float, optional
        Use the discordance p_d = p10 + p01 and delta = p_a - p_b directly instead of rho (the
        seeds' tables: p_d = 2p(1-p)(1-rho) at a baseline p, :func:`discordance_from_baseline`).

    Returns
    -------
    int
        Rounded up.

    Raises
    ------
    ValueError
        p outside (0, 1), p_a == p_b, power <= alpha, rho outside its admissible range,
        an infeasible discordance (|delta| >= p_d).

    Notes
    -----
    :math:`K = (z_{1-\alpha/2} + z_{1-\beta})^2` (:math:`z_{1-\alpha}` one-sided),
    :math:`\sigma_D^2 = p_Aq_A + p_Bq_B - 2\rho\sqrt{p_Aq_Ap_Bq_B} = p_d - \delta^2`.

    References
    ----------
    .. [1] Connor, R. J. (1987). Sample size for testing differences in proportions for the
       paired-sample design. Biometrics 43(1), 207-211.

    Examples
    --------
    A 65% vs 60% with per-item correlation 0.3:

    >>> from llm_power import sample_size, sample_size_shortcut
    >>> sample_size(0.65, 0.60, rho=0.30)
    1028
    >>> sample_size(0.65, 0.60, rho=0.30, method="connor")
    1034
    >>> sample_size_shortcut(0.65, 0.60, rho=0.30)   # the popular recipe: half of what is needed
    515
    """
    raw = unrounded_sample_size(p_a, p_b, rho=rho, alpha=alpha, power=power, design=design, method=method,
                                alternative=alternative, design_effect=design_effect, discordance=discordance)
    return max(1, int(ceil_items(raw)))


# =================================================================================================
# Power
# =================================================================================================

POWER_METHODS = ("connor", "exact", "fleiss", "normal", "per_arm", "wald")


def _normal_power(shift: float, z_a: float, sd_alt: float, sd_null: float, n: np.ndarray, alternative: str,
                  delta: float) -> np.ndarray:
    """P(reject) of a z test whose statistic has null sd ``sd_null`` and alternative sd ``sd_alt`` per item."""
    root = np.sqrt(n)
    if alternative == "two-sided":
        up = stats.norm.cdf((abs(delta) * root - z_a * sd_null) / sd_alt)
        down = stats.norm.cdf((-abs(delta) * root - z_a * sd_null) / sd_alt)
        return up + down
    signed = delta if alternative == "greater" else -delta
    return stats.norm.cdf((signed * root - z_a * sd_null) / sd_alt)


def power(
    n: Any,
    p_a: float,
    p_b: float,
    *,
    rho: float = 0.0,
    alpha: float = 0.05,
    design: str = "paired",
    method: str = "normal",
    alternative: str = "two-sided",
    design_effect: float = 1.0,
    discordance: float | None = None,
) -> Any:
    r"""Power to detect p_a - p_b with n items (paired: total; unpaired: per group).

    Parameters
    ----------
    n : int or array_like of int
        Vectorised: an array gives a power curve in n.
    method : str, default "normal"
        Paired: ``"normal"`` = ``"wald"`` (:math:`\Phi(\sqrt n|\delta|/\sigma_D - z)`, the model of
        the default ``"wald"`` sample size, so ``power(sample_size(...)) >= power`` at the
        defaults), ``"connor"`` (normal approximation to McNemar's test, null variance p_d: the
        model of the ``"connor"`` sample size), ``"exact"`` (exact power of the exact conditional McNemar test: the sum
        over m ~ Binomial(n, p_d) of the rejection probability given m discordant items; no
        simulation). Unpaired: ``"normal"`` = ``"wald"`` (pooled variance, as statsmodels'
        ``NormalIndPower`` with effect size :math:`\delta/\sqrt{\bar p\bar q}`),
        ``"per_arm"``, ``"fleiss"`` (as ``power_proportions_2indep``).
    Other parameters as :func:`sample_size`; with ``design_effect`` the effective number of
    items is n / design_effect.

    Returns
    -------
    float or ndarray
        Two-sided power includes the (tiny) probability of rejecting in the wrong direction.

    Examples
    --------
    >>> from llm_power import power
    >>> round(power(400, 0.75, 0.70, rho=0.0), 3)
    0.354
    >>> round(power(400, 0.75, 0.70, rho=0.0, method="connor"), 3)
    0.352
    >>> round(power(400, 0.75, 0.70, rho=0.0, method="exact"), 3)
    0.324
    """
    alpha = check_open_unit(alpha, "alpha")
    alternative = check_alternative(alternative)
    design = check_option(design, "design", DESIGNS)
    valid = ("connor", "exact", "normal", "wald") if design == "paired" else ("fleiss", "normal", "per_arm", "wald")
    method = check_option(method, "method", valid)
    design_effect = _check_design_effect(design_effect)
    n_arr = np.asarray(n, dtype=float)
    if np.any(~(n_arr >= 1)):
        raise ValueError(f"`n` must be >= 1; got {n!r}.")
    n_eff = n_arr / design_effect
    z_a = _z_alpha(alpha, alternative)
    if design == "unpaired":
        p_a, p_b = _check_prob(p_a, "p_a"), _check_prob(p_b, "p_b")
        delta = p_a - p_b
        pbar = (p_a + p_b) / 2.0
        pooled = math.sqrt(2 * pbar * (1 - pbar))
        arms = math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
        sd_null, sd_alt = {"normal": (pooled, pooled), "wald": (pooled, pooled),
                           "per_arm": (arms, arms), "fleiss": (pooled, arms)}[method]
        return scalar_or_array(_normal_power(0.0, z_a, sd_alt, sd_null, n_eff, alternative, delta))
    p_d, delta, p10, _ = _paired_parameters(p_a, p_b, rho, discordance)
    if method == "exact":
        if not np.all(n_eff == np.round(n_eff)):
            raise ValueError("`n` / `design_effect` must be a whole number of items for method='exact'.")
        out = _exact_power_paired(n_eff.astype(np.int64).reshape(-1), p_d, p10, alpha, alternative)
        return scalar_or_array(out.reshape(n_eff.shape))
    sd_d = math.sqrt(p_d - delta * delta)
    if method in ("wald", "normal"):
        return scalar_or_array(_normal_power(0.0, z_a, sd_d, sd_d, n_eff, alternative, delta))
    return scalar_or_array(_normal_power(0.0, z_a, sd_d, math.sqrt(p_d), n_eff, alternative, delta))


def power_curve(
    n: Any = None,
    p_a: float | None = None,
    p_b: Any = None,
    **kwargs: Any,
) -> np.ndarray:
    """Power as a function of n (array ``n``) or of the gap (array ``p_b``), as an array.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import power_curve
    >>> power_curve(np.array([100, 400, 1600]), 0.75, 0.70, rho=0.5).round(2)
    array([0.2 , 0.61, 0.99])
    >>> power_curve(1319, 0.80, np.array([0.79, 0.78, 0.76]), rho=0.5).round(2)
    array([0.15, 0.43, 0.94])
    """
    if n is None or p_a is None or p_b is None:
        raise TypeError("power_curve needs n, p_a and p_b (one of n or p_b an array).")
    n_arr = np.atleast_1d(np.asarray(n))
    pb_arr = np.atleast_1d(np.asarray(p_b, dtype=float))
    if n_arr.size > 1 and pb_arr.size > 1:
        raise ValueError("give an array for `n` or for `p_b`, not both.")
    if pb_arr.size > 1:
        return np.array([float(power(int(n_arr[0]) if n_arr.size == 1 else n_arr, p_a, float(pb), **kwargs))
                         for pb in pb_arr])
    return np.atleast_1d(np.asarray(power(n_arr, p_a, float(pb_arr[0]), **kwargs), dtype=float))


# =================================================================================================
# Minimum detectable effect
# =================================================================================================

def mde(
    n: Any,
    *,
    p: float,
    rho: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    design: str = "paired",
    method: str = "wald",
    alternative: str = "two-sided",
    design_effect: float = 1.0,
    discordance: float | None = None,
) -> float:
    r"""Minimum detectable effect (as a proportion) of a benchmark with n items at accuracy p.

    The smallest gap delta (models at p + delta/2 and p - delta/2) that the design detects with
    the given power. Paired designs use the discordance :math:`p_d = 2p(1-p)(1-\rho)` (or
    ``discordance``), held fixed as delta varies (the seeds' convention).

    Notes
    -----
    Closed forms: paired ``"wald"`` :math:`\delta = \sqrt{Kp_d/(n + K)}`; unpaired ``"wald"``
    :math:`\delta = \sqrt{2Kp(1-p)/n}`; unpaired ``"per_arm"``
    :math:`\delta = \sqrt{2Kp(1-p)/(n + K/2)}`. ``"connor"``, ``"fleiss"`` and ``"exact"`` are
    solved by root-finding (``"exact"``: the smallest delta whose exact power reaches ``power``).

    Examples
    --------
    What gap can GSM8K's 1,319 test items detect for models near 80%?

    >>> from llm_power import mde
    >>> round(100 * mde(1319, p=0.8, design="unpaired"), 2)
    4.36
    >>> round(100 * mde(1319, p=0.8, rho=0.7, method="connor"), 2)
    2.39
    """
    alpha, power_ = _check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    design = _check_design(design, method)
    design_effect = _check_design_effect(design_effect)
    p = _check_prob(p, "p")
    n_arr = np.asarray(n, dtype=float)
    if n_arr.ndim != 0:
        return np.array([mde(float(x), p=p, rho=rho, alpha=alpha, power=power_, design=design, method=method,
                             alternative=alternative, design_effect=design_effect, discordance=discordance)
                         for x in n_arr.reshape(-1)]).reshape(n_arr.shape)
    if not n_arr >= 1:
        raise ValueError(f"`n` must be >= 1; got {n!r}.")
    n_eff = float(n_arr) / design_effect
    z_a, z_b = _z_alpha(alpha, alternative), float(special.ndtri(power_))
    k = (z_a + z_b) ** 2
    if design == "unpaired":
        limit = 2.0 * min(p, 1.0 - p)  # both accuracies p +- delta/2 must stay in [0, 1]
        q = 2 * p * (1 - p)
        if method == "wald":
            return _feasible(math.sqrt(k * q / n_eff), limit, "unpaired", p, n)
        if method == "per_arm":
            return _feasible(math.sqrt(k * q / (n_eff + k / 2)), limit, "unpaired", p, n)

        def excess(d: float) -> float:
            return _raw_unpaired(min(p + d / 2, 1 - 1e-12), max(p - d / 2, 1e-12), k, z_a, z_b, method) - n_eff

        return _feasible_root(excess, limit - 1e-9, "unpaired", p, n)
    if discordance is None:
        p_d = discordance_from_baseline(p, rho)
    else:
        p_d = check_open_unit(discordance, "discordance")
        if p_d > 2.0 * min(p, 1.0 - p) + 1e-12:
            raise ValueError(
                f"infeasible design: discordance = {p_d:.4g} is above {2 * min(p, 1 - p):.4g}, the most two models "
                f"near p={p:g} can disagree (Frechet-Hoeffding bound: p_d <= 2 min(p, 1 - p))."
            )
    # a gap can be at most the discordance: the two models differ only on the items they disagree on
    if method == "wald":
        return _feasible(math.sqrt(k * p_d / (n_eff + k)), p_d, "paired", p, n)
    if method == "connor":
        return _feasible_root(lambda d: _raw_paired(p_d, d, k, z_a, z_b, "connor") - n_eff, p_d - 1e-12, "paired",
                              p, n)
    n_int = int(round(n_eff))
    _check_exact_size(n_int, what="the exact MDE", limit=EXACT_SCAN_MAX_N)

    def shortfall(d: float) -> float:
        p10 = (p_d + d) / 2.0
        return power_ - float(_exact_power_paired(np.array([n_int]), p_d, p10, alpha, alternative)[0])

    return _feasible_root(shortfall, p_d - 1e-12, "paired", p, n)


def _feasible(delta: float, limit: float, design: str, p: float, n: Any) -> float:
    """delta when the design can have it, else NaN with an :class:`InfeasibleDesignWarning`."""
    if delta <= limit + 1e-12:
        return delta
    _warn_infeasible(limit, design, p, n)
    return math.nan


def _feasible_root(excess: Any, hi: float, design: str, p: float, n: Any) -> float:
    if excess(hi) > 0:
        _warn_infeasible(hi, design, p, n)
        return math.nan
    return float(optimize.brentq(excess, 1e-9, hi, xtol=1e-12, rtol=1e-12))


def _warn_infeasible(limit: float, design: str, p: float, n: Any) -> None:
    what = ("the discordance p_d (two models can differ only on the items they disagree on)" if design == "paired"
            else "2 min(p, 1 - p) (both accuracies must stay in [0, 1])")
    warnings.warn(f"no feasible gap is detectable with n = {n} at p = {p:g}: the detectable gap would exceed "
                  f"{limit:.4g}, the largest possible, {what}; MDE = NaN. Increase n, lower the power, or "
                  "use a design with more disagreement.", InfeasibleDesignWarning, stacklevel=4)



# =================================================================================================
# The shortcut (what not to do) and its error
# =================================================================================================

def sample_size_shortcut(p_a: float, p_b: float, *, rho: float, alpha: float = 0.05, power: float = 0.8) -> int:
    r"""The widespread wrong recipe for a paired N: unpaired Cohen-h size times (1 - rho).

    :math:`h = 2\arcsin\sqrt{p_A} - 2\arcsin\sqrt{p_B}`, :math:`n_h = (1-\rho)K/h^2`. For small
    gaps :math:`n_h/N^* \to 1/2`: the recipe under-estimates the paired N* by about half (see
    :func:`shortcut_constant`). Provided to show users how far off it is.

    Examples
    --------
    >>> from llm_power import sample_size, sample_size_shortcut
    >>> sample_size_shortcut(0.6, 0.5, rho=0.6), sample_size(0.6, 0.5, rho=0.6)
    (78, 154)
    """
    alpha, power = _check_alpha_power(alpha, power)
    p_a, p_b = _check_prob(p_a, "p_a"), _check_prob(p_b, "p_b")
    _check_delta(p_a - p_b)
    cells_from_margins(p_a, p_b, rho)  # validates rho
    return max(1, int(ceil_items(_shortcut_raw(p_a, p_b, rho, k_factor(alpha, power)))))


def _shortcut_raw(p_a: float, p_b: float, rho: float, k: float) -> float:
    h = 2 * math.asin(math.sqrt(p_a)) - 2 * math.asin(math.sqrt(p_b))
    return (1 - rho) * k / (h * h)


def shortcut_constant(p: float, rho: float) -> float:
    r"""Lemma-1 constant C(p, rho) of the shortcut's error.

    With models at p +- delta/2 (midpoint p, u = p(1-p)):
    :math:`n_h/N^* = 1/2 - (\delta^2/2)\,[(1+\rho)(1-2p)^2/(16(1-\rho)u^2) - 1/(6u)] + O(\delta^4)`,
    and :math:`C(p,\rho) = \tfrac12|\cdot|` of the bracket, so
    :math:`|n_h/N^* - 1/2| \approx C\delta^2`.

    Examples
    --------
    >>> from llm_power import shortcut_constant
    >>> shortcut_constant(0.5, 0.3)   # 1/3 for every rho at p = 0.5
    0.3333333333333333
    """
    p = _check_prob(p, "p")
    if not -1.0 < float(rho) < 1.0:
        raise fail("rho", "in (-1, 1)", rho)
    u = p * (1 - p)
    bracket = (1 + rho) * (1 - 2 * p) ** 2 / (16 * (1 - rho) * u * u) - 1 / (6 * u)
    return 0.5 * abs(bracket)


def shortcut_prescreen(epsilon: float, p: float, rho: float) -> float:
    r"""Largest gap for which the shortcut ratio stays within ``epsilon`` of 1/2:
    :math:`\delta^* = \sqrt{\varepsilon / C(p, \rho)}` (inf when C = 0).

    Examples
    --------
    >>> from llm_power import shortcut_prescreen
    >>> round(shortcut_prescreen(0.01, 0.5, 0.3), 4)
    0.1732
    """
    epsilon = float(check_positive(epsilon, "epsilon"))
    c = shortcut_constant(p, rho)
    return math.inf if c == 0 else math.sqrt(epsilon / c)


# =================================================================================================
# Multiplicity and Type S / Type M
# =================================================================================================

def bonferroni_factor(m: int, *, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided") -> float:
    r"""Factor by which N* grows when alpha is split over m tests (Bonferroni alpha/m).

    :math:`((z_{1-\alpha/(2m)} + z_{1-\beta}) / (z_{1-\alpha/2} + z_{1-\beta}))^2`.

    Examples
    --------
    >>> from llm_power import bonferroni_factor
    >>> round(bonferroni_factor(40), 3)
    2.109
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise fail("m", "a positive integer (the number of tests)", m)
    return k_factor(alpha / m, power, alternative) / k_factor(alpha, power, alternative)


@dataclass(frozen=True, slots=True, repr=False)
class TypeSMResult(Result):
    """Power, Type S error rate and exaggeration ratio (Gelman & Carlin 2014)."""

    effect: float
    standard_error: float
    power: float
    type_s: float
    exaggeration: float

    _repr_fields = ("power", "type_s", "exaggeration")


def type_s_m(effect: float, standard_error: float, *, alpha: float = 0.05, df: float | None = None) -> TypeSMResult:
    r"""Type S (sign) and Type M (magnitude) errors of a design (Gelman & Carlin 2014).

    For a true effect A estimated with standard error s: the power, the probability that a
    significant estimate has the wrong sign, and the expected exaggeration
    E(|estimate| / A | significant). Computed exactly (normal; or t with ``df`` by numerical
    integration), not by simulation.

    Parameters
    ----------
    effect : float
        The true effect A (e.g. a planned gap of 0.02), non-zero.
    standard_error : float
        Its standard error s (for a paired design: sigma_D / sqrt(n)).
    alpha : float, default 0.05
    df : float, optional
        Degrees of freedom of a t reference distribution; None for normal.

    References
    ----------
    .. [1] Gelman, A. & Carlin, J. (2014). Beyond power calculations: assessing Type S (sign)
       and Type M (magnitude) errors. Perspectives on Psychological Science 9(6), 641-651.

    Examples
    --------
    A 1-point true gap measured with a 1-point standard error:

    >>> from llm_power import type_s_m
    >>> res = type_s_m(0.01, 0.01)
    >>> round(res.power, 3), round(res.type_s, 4), round(res.exaggeration, 2)
    (0.17, 0.009, 2.49)
    """
    alpha = check_open_unit(alpha, "alpha")
    a = float(effect)
    s = float(check_positive(standard_error, "standard_error"))
    if a == 0 or not math.isfinite(a):
        raise fail("effect", "a finite non-zero true effect", effect)
    dist = stats.norm if df is None else stats.t(float(check_positive(df, "df")))
    z = float(dist.ppf(1 - alpha / 2))
    lam = abs(a) / s
    p_hi = float(dist.sf(z - lam))
    p_lo = float(dist.cdf(-z - lam))
    pw = p_hi + p_lo
    if df is None:
        # E[|X| 1{|X| > z}] for X ~ N(lam, 1), in units of s
        upper = lam * stats.norm.sf(z - lam) + stats.norm.pdf(z - lam)
        lower = -lam * stats.norm.cdf(-z - lam) + stats.norm.pdf(-z - lam)
        e_abs = upper + lower
    else:
        f = dist.pdf
        e_abs = (integrate.quad(lambda t: (lam + t) * f(t), z - lam, np.inf)[0]
                 + integrate.quad(lambda t: -(lam + t) * f(t), -np.inf, -z - lam)[0])
    return TypeSMResult(effect=a, standard_error=s, power=pw, type_s=p_lo / pw,
                        exaggeration=float(e_abs / pw / lam))
