"""Planning an eval: paired sample size N*, minimum detectable effect, exact power.

Before an eval is run: "how many items do I need to detect a 2-point gain with 80% power?";
for an existing benchmark: "which gap can it detect at all?". Paired designs (both models on the
same items) need far fewer items than unpaired ones when per-item correctness is correlated.

- :func:`sample_size`, :func:`mde`, :func:`power`, :func:`power_curve` -- paired (``"wald"``,
  ``"connor"``, ``"exact"``) and unpaired designs;
- :func:`sample_size_shortcut`, :func:`shortcut_constant`, :func:`shortcut_prescreen`,
  :func:`shortcut_ratio` -- the widespread wrong recipe and how far off it is;
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
from typing import Any

import numpy as np
from scipy import stats

from .._core.options import DESIGNS  # one list, shared with the command line
from .._core.params import public
from .._core.validation import (
    check_alpha_power,
    check_alternative,
    check_delta,
    check_open_unit,
    check_option,
    fail,
    scalar_or_array,
)
from .._kernel.exact import (
    EXACT_SCAN_MAX_N,
    check_exact_size,
    exact_power_paired,
    first_n_reaching,
)
from .._kernel.quantiles import z_quantile
from .._kernel.sizes import ceil_items, k_factor, mde_from_variance, n_star_from_variance, z_alpha
from ._designs import (
    cells_from_margins,
    check_prob,
    discordance_from_baseline,
    margins_from_cells,
    paired_parameters,
    rho_bounds,
)
from ._retrodesign import TypeSMResult, type_s_m  # noqa: F401 - re-exported

__all__ = [
    "PAIRED_METHODS",
    "TypeSMResult",
    "UNPAIRED_METHODS",
    "ceil_items",
    "cells_from_margins",
    "discordance_from_baseline",
    "k_factor",
    "margins_from_cells",
    "mde_from_variance",
    "n_star_from_variance",
    "power",
    "power_curve",
    "rho_bounds",
    "sample_size",
    "type_s_m",
    "unrounded_sample_size",
]


# =================================================================================================
# Designs and conversions
# =================================================================================================

PAIRED_METHODS = ("connor", "exact", "wald")
UNPAIRED_METHODS = ("fleiss", "per_arm", "wald")


def check_design(design: str, method: str) -> str:
    design = check_option(design, "design", DESIGNS)
    check_option(method, "method", PAIRED_METHODS if design == "paired" else UNPAIRED_METHODS)
    return design


def check_design_effect(design_effect: Any) -> float:
    if isinstance(design_effect, bool) or not isinstance(design_effect, (int, float, np.number)):
        msg = "design_effect"
        raise fail(msg, "a number >= 1", design_effect, exc=TypeError)
    if not (math.isfinite(design_effect) and design_effect >= 1.0):
        msg = "design_effect"
        raise fail(msg, "a number >= 1", design_effect)
    return float(design_effect)


# =================================================================================================
# Exact power of the exact conditional McNemar test
# =================================================================================================

# =================================================================================================
# Sample size
# =================================================================================================

def raw_paired_n(p_d: float, delta: float, k: float, z_a: float, z_b: float, method: str) -> float:
    if method == "wald":
        return k * (p_d - delta * delta) / (delta * delta)
    # connor
    return (z_a * math.sqrt(p_d) + z_b * math.sqrt(p_d - delta * delta)) ** 2 / (delta * delta)


def raw_unpaired_n(p_a: float, p_b: float, k: float, z_a: float, z_b: float, method: str) -> float:
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
    alpha, power = check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    design = check_design(design, method)
    design_effect = check_design_effect(design_effect)
    z_a, z_b = z_alpha(alpha, alternative), float(z_quantile(power))
    k = (z_a + z_b) ** 2
    if design == "unpaired":
        p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
        check_delta(p_a - p_b)
        _check_direction(p_a - p_b, alternative)
        return design_effect * raw_unpaired_n(p_a, p_b, k, z_a, z_b, method)
    p_d, delta, p10, _ = paired_parameters(p_a, p_b, rho, discordance)
    check_delta(delta)
    _check_direction(delta, alternative)
    if method == "exact":
        return design_effect * _exact_sample_size(p_d, delta, p10, alpha, power, alternative, k, z_a, z_b)
    return design_effect * raw_paired_n(p_d, delta, k, z_a, z_b, method)


def _check_direction(delta: float, alternative: str) -> None:
    if (alternative == "greater" and delta < 0) or (alternative == "less" and delta > 0):
        msg = (
            f"infeasible: alternative={alternative!r} tests the other direction than delta = p_a - p_b = "
            f"{delta:+.4g}; no sample size gives power there."
        )
        raise ValueError(
            msg
        )


def _exact_sample_size(p_d: float, delta: float, p10: float, alpha: float, power: float, alternative: str,  # noqa: PLR0917
                       k: float, z_a: float, z_b: float) -> float:
    """Smallest n whose exact power reaches ``power`` (the first such n; the power is not monotone in n).

    A bisection on a monotone upper bound of the power, then a scan of the about 1.4/|delta|
    values of n between the bound's crossing and the answer: it returns what a scan of every n
    returns (see :func:`llm_power._kernel.exact.first_n_reaching` for the proof), in O(log N*) power
    evaluations instead of O(N*).
    """
    connor = raw_paired_n(p_d, delta, k, z_a, z_b, "connor")
    check_exact_size(connor, what=f"exact N* for a {100 * abs(delta):.3g}-point gap", limit=EXACT_SCAN_MAX_N)
    return float(first_n_reaching(p_d, p10, alpha, power, alternative, connor))


@public
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
        ``"wald"`` (:math:`K\cdot 2\bar p(1-\bar p)/\delta^2`, the resolution paper's convention),
        ``"per_arm"`` (:math:`K(p_Aq_A + p_Bq_B)/\delta^2`), ``"fleiss"`` (pooled variance under
        H0, per-arm under H1; as statsmodels' ``power_proportions_2indep``).
    alternative : {"two-sided", "less", "greater"}
    design_effect : float, default 1.0
        Multiplier for clustered items, DE = 1 + (m - 1) ICC (see :func:`design_effect`).
    discordance : float, optional
        Use the discordance p_d = p10 + p01 and delta = p_a - p_b directly instead of rho (the
        the resolution paper's tables: p_d = 2p(1-p)(1-rho) at a baseline p, :func:`discordance_from_baseline`).

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

    ``"exact"`` does not scan every n: a bisection on a non-decreasing upper bound of the exact
    power (the power with the rejection probability replaced by its running maximum over the
    discordant count) rules out every n below the bound's crossing, and the few n from there to
    the answer are scanned, so the result is the first n reaching ``power`` even where the power
    saw-tooths in n (visibly so at high discordance, p_d >= 0.8); a 0.5-point gap takes under a
    second. It is refused when Connor's N* exceeds 200,000 items, where ``"connor"`` is within a
    fraction of a percent of it.

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

def _normal_power(z_a: float, sd_alt: float, sd_null: float, n: np.ndarray, alternative: str,
                  delta: float) -> np.ndarray:
    """P(reject) of a z test whose statistic has null sd ``sd_null`` and alternative sd ``sd_alt`` per item."""
    root = np.sqrt(n)
    if alternative == "two-sided":
        up = stats.norm.cdf((abs(delta) * root - z_a * sd_null) / sd_alt)
        down = stats.norm.cdf((-abs(delta) * root - z_a * sd_null) / sd_alt)
        return np.asarray(up + down, dtype=float)
    signed = delta if alternative == "greater" else -delta
    return np.asarray(stats.norm.cdf((signed * root - z_a * sd_null) / sd_alt), dtype=float)


@public
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
    p_a, p_b, rho, discordance, alpha, design, alternative
        As in :func:`sample_size`.
    design_effect : float, default 1.0
        Variance inflation for clustered items: the effective number of items is n / design_effect.

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
    design_effect = check_design_effect(design_effect)
    n_arr = np.asarray(n, dtype=float)
    if np.any(~(n_arr >= 1)):
        msg = "n"
        raise fail(msg, ">= 1", n_arr.reshape(-1)[~(n_arr.reshape(-1) >= 1)][0])
    n_eff = n_arr / design_effect
    z_a = z_alpha(alpha, alternative)
    if design == "unpaired":
        p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
        delta = p_a - p_b
        pbar = (p_a + p_b) / 2.0
        pooled = math.sqrt(2 * pbar * (1 - pbar))
        arms = math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
        sd_null, sd_alt = {"normal": (pooled, pooled), "wald": (pooled, pooled),
                           "per_arm": (arms, arms), "fleiss": (pooled, arms)}[method]
        return scalar_or_array(_normal_power(z_a, sd_alt, sd_null, n_eff, alternative, delta))
    p_d, delta, p10, _ = paired_parameters(p_a, p_b, rho, discordance)
    if method == "exact":
        if not np.all(n_eff == np.round(n_eff)):
            msg = "`n` / `design_effect` must be a whole number of items for method='exact'."
            raise ValueError(msg)
        out = exact_power_paired(n_eff.astype(np.int64).reshape(-1), p_d, p10, alpha, alternative)
        return scalar_or_array(out.reshape(n_eff.shape))
    sd_d = math.sqrt(p_d - delta * delta)
    if method in ("wald", "normal"):
        return scalar_or_array(_normal_power(z_a, sd_d, sd_d, n_eff, alternative, delta))
    return scalar_or_array(_normal_power(z_a, sd_d, math.sqrt(p_d), n_eff, alternative, delta))


@public
def power_curve(
    n: Any,
    p_a: float,
    p_b: Any,
    *,
    rho: float = 0.0,
    alpha: float = 0.05,
    design: str = "paired",
    method: str = "normal",
    alternative: str = "two-sided",
    design_effect: float = 1.0,
    discordance: float | None = None,
) -> np.ndarray:
    """Power as a function of n (array ``n``) or of the gap (array ``p_b``), as an array.

    The options are those of :func:`power`, which computes every point.

    Parameters
    ----------
    n : int or array_like of int
        Number of items (paired: total items, each scored by both models; unpaired: items per
        group), each >= 1. An array gives a curve in n; when ``p_b`` is the array, ``n`` must be a
        single number (its first element is used, as an int).
    p_a : float
        Anticipated accuracy of model A, a proportion in (0, 1).
    p_b : float or array_like of float
        Anticipated accuracy of model B, proportions in (0, 1); an array gives a curve in the gap
        p_a - p_b. ``n`` and ``p_b`` cannot both be arrays of more than one element (``ValueError``).
    rho : float, default 0.0
        Phi correlation of the two models' per-item correctness, inside :func:`rho_bounds`
        (paired designs only).
    alpha : float, default 0.05
        Significance level of the test, in (0, 1).
    design : {"paired", "unpaired"}, default "paired"
        As in :func:`sample_size`.
    method : str, default "normal"
        As in :func:`power`: paired ``"normal"`` (= ``"wald"``), ``"connor"`` or ``"exact"``;
        unpaired ``"normal"`` (= ``"wald"``), ``"per_arm"`` or ``"fleiss"``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        Direction of the test; a one-sided alternative must point in the direction of p_a - p_b.
    design_effect : float, default 1.0
        Variance inflation for clustered items (>= 1): the effective number of items is
        n / design_effect.
    discordance : float, optional
        Paired designs: the discordance p_d = p10 + p01 in (0, 1), used instead of ``rho``; it
        must exceed the gap |p_a - p_b|.

    Returns
    -------
    ndarray of float
        The power (a probability in [0, 1]) at each point: the shape of ``n`` when ``n`` is the
        array, ``(len(p_b),)`` when ``p_b`` is, ``(1,)`` when both are single numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import power_curve
    >>> power_curve(np.array([100, 400, 1600]), 0.75, 0.70, rho=0.5).round(2)
    array([0.2 , 0.61, 0.99])
    >>> power_curve(1319, 0.80, np.array([0.79, 0.78, 0.76]), rho=0.5).round(2)
    array([0.15, 0.43, 0.94])
    """
    options: dict[str, Any] = {"rho": rho, "alpha": alpha, "design": design, "method": method,
                               "alternative": alternative, "design_effect": design_effect, "discordance": discordance}
    n_arr = np.atleast_1d(np.asarray(n))
    pb_arr = np.atleast_1d(np.asarray(p_b, dtype=float))
    if n_arr.size > 1 and pb_arr.size > 1:
        msg = "give an array for `n` or for `p_b`, not both."
        raise ValueError(msg)
    if pb_arr.size > 1:
        return np.array([float(power(int(n_arr[0]), p_a, float(pb), **options)) for pb in pb_arr])
    return np.atleast_1d(np.asarray(power(n_arr, p_a, float(pb_arr[0]), **options), dtype=float))


# =================================================================================================
# Minimum detectable effect
# =================================================================================================


