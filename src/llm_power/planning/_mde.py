"""The minimum detectable effect: the smallest gap n items detect with the given power, paired or
unpaired, normal or exact (the inverse of :func:`~llm_power.sample_size`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from .._core.errors import InfeasibleDesignWarning, warn
from .._core.params import public
from .._core.validation import (
    check_alpha_power,
    check_alternative,
    check_open_unit,
    fail,
)
from .._kernel.exact import (
    EXACT_SCAN_MAX_N,
    PowerInGap,
    check_exact_size,
)
from .._kernel.quantiles import z_quantile
from .._kernel.sizes import z_alpha
from ._designs import (
    check_prob,
    discordance_from_baseline,
)
from ._sizes import check_design, check_design_effect, raw_paired_n, raw_unpaired_n

__all__ = ["mde"]


@public
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
) -> Any:
    r"""Minimum detectable effect (as a proportion) of a benchmark with n items at accuracy p.

    The smallest gap delta (models at p + delta/2 and p - delta/2) that the design detects with
    the given power. Paired designs use the discordance :math:`p_d = 2p(1-p)(1-\rho)` (or
    ``discordance``), held fixed as delta varies (the resolution paper's convention).

    Parameters
    ----------
    n : float or array_like
        Number of items (paired: total items, each scored by both models; unpaired: items per
        group), >= 1. An array gives one MDE per element, in the same shape. For ``"exact"``,
        n / design_effect is rounded to whole items and may not exceed 200,000.
    p : float
        Baseline accuracy (the midpoint of the two models), a proportion strictly inside (0, 1).
    rho : float, default 0.0
        Paired designs: phi correlation of the two models' per-item correctness, in
        [1 - 1/max(p, 1 - p), 1) (see :func:`discordance_from_baseline`); ignored when
        ``discordance`` is given and by unpaired designs.
    alpha : float, default 0.05
        Significance level, in (0, 1).
    power : float, default 0.8
        Target power, in (0, 1) and above ``alpha``.
    design : {"paired", "unpaired"}, default "paired"
        ``"paired"``: both models on the same n items; ``"unpaired"``: two independent sets of n
        items each.
    method : str, default "wald"
        Paired: ``"wald"``, ``"connor"`` or ``"exact"``; unpaired: ``"wald"``, ``"per_arm"`` or
        ``"fleiss"`` (the models of :func:`sample_size`; see Notes).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        One-sided alternatives use :math:`z_{1-\alpha}` and give a smaller MDE.
    design_effect : float, default 1.0
        Variance inflation for clustered items (>= 1): the effective number of items is
        n / design_effect.
    discordance : float, optional
        Paired designs: the discordance p_d in (0, 1) to use instead of rho; at most
        2 min(p, 1 - p) (``ValueError`` otherwise).

    Returns
    -------
    float or ndarray
        The smallest detectable gap |p_a - p_b| as a proportion (0.0436 is 4.36 points): a float
        for a scalar ``n``, an array of the shape of ``n`` otherwise. NaN, with an
        :class:`~llm_power.InfeasibleDesignWarning`, where no feasible gap is detectable (paired: it
        would exceed the discordance p_d; unpaired: 2 min(p, 1 - p)).

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
    alpha, power_ = check_alpha_power(alpha, power)
    alternative = check_alternative(alternative)
    design = check_design(design, method)
    design_effect = check_design_effect(design_effect)
    p = check_prob(p, "p")
    n_arr = np.asarray(n, dtype=float)
    if n_arr.ndim != 0:
        return np.array([mde(float(x), p=p, rho=rho, alpha=alpha, power=power_, design=design, method=method,
                             alternative=alternative, design_effect=design_effect, discordance=discordance)
                         for x in n_arr.reshape(-1)]).reshape(n_arr.shape)
    if not n_arr >= 1:
        msg = "n"
        raise fail(msg, ">= 1", float(n_arr))
    n_eff = float(n_arr) / design_effect
    z_a, z_b = z_alpha(alpha, alternative), float(z_quantile(power_))
    k = (z_a + z_b) ** 2
    if design == "unpaired":
        limit = 2.0 * min(p, 1.0 - p)  # both accuracies p +- delta/2 must stay in [0, 1]
        q = 2 * p * (1 - p)
        if method == "wald":
            return _feasible(math.sqrt(k * q / n_eff), limit, "unpaired", p, n)
        if method == "per_arm":
            return _feasible(math.sqrt(k * q / (n_eff + k / 2)), limit, "unpaired", p, n)

        def excess(d: float) -> float:
            return raw_unpaired_n(min(p + d / 2, 1 - 1e-12), max(p - d / 2, 1e-12), k, z_a, z_b, method) - n_eff

        return _feasible_root(excess, limit - 1e-9, "unpaired", p, n)
    if discordance is None:
        p_d = discordance_from_baseline(p, rho)
    else:
        p_d = check_open_unit(discordance, "discordance")
        if p_d > 2.0 * min(p, 1.0 - p) + 1e-12:
            msg = (
                f"infeasible design: discordance = {p_d:.4g} is above {2 * min(p, 1 - p):.4g}, the most two models "
                f"near p={p:g} can disagree (Frechet-Hoeffding bound: p_d <= 2 min(p, 1 - p))."
            )
            raise ValueError(
                msg
            )
    # a gap can be at most the discordance: the two models differ only on the items they disagree on
    if method == "wald":
        return _feasible(math.sqrt(k * p_d / (n_eff + k)), p_d, "paired", p, n)
    if method == "connor":
        return _feasible_root(lambda d: raw_paired_n(p_d, d, k, z_a, z_b, "connor") - n_eff, p_d - 1e-12, "paired",
                              p, n)
    n_int = int(round(n_eff))
    check_exact_size(n_int, what="the exact MDE", limit=EXACT_SCAN_MAX_N)
    exact_power = PowerInGap(n_int, p_d, alpha, alternative)  # the parts that do not depend on the gap, once

    def shortfall(d: float) -> float:
        return power_ - exact_power((p_d + d) / 2.0)

    return _feasible_root(shortfall, p_d - 1e-12, "paired", p, n)


def _feasible(delta: float, limit: float, design: str, p: float, n: Any) -> float:
    """Delta when the design can have it, else NaN with an :class:`InfeasibleDesignWarning`."""
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
    warn(f"no feasible gap is detectable with n = {n} at p = {p:g}: the detectable gap would exceed "
                  f"{limit:.4g}, the largest possible, {what}; MDE = NaN. Increase n, lower the power, or "
                  "use a design with more disagreement.", InfeasibleDesignWarning)
