"""Paired designs: the 2x2 table of two models from margins and rho, and back; Frechet bounds.

Two 0/1 variables with accuracies p_A, p_B and phi correlation rho have
p11 = p_A p_B + rho sqrt(p_A q_A p_B q_B), p10 = p_A - p11, p01 = p_B - p11; rho must lie inside
the Frechet-Hoeffding bounds of the margins (:func:`rho_bounds`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.validation import check_open_unit, fail

__all__ = ["cells_from_margins", "discordance_from_baseline", "margins_from_cells", "rho_bounds"]


def check_prob(value: Any, name: str) -> float:
    return check_open_unit(value, name)


def rho_bounds(p_a: float, p_b: float) -> tuple[float, float]:
    r"""Admissible range of the phi correlation rho for two 0/1 margins (Frechet-Hoeffding).

    p11 must lie in [max(0, p_A + p_B - 1), min(p_A, p_B)], so
    :math:`\rho \in [(\max(0,p_A+p_B-1) - p_Ap_B)/s, (\min(p_A,p_B) - p_Ap_B)/s]` with
    :math:`s = \sqrt{p_A q_A p_B q_B}`.

    Parameters
    ----------
    p_a : float
        Accuracy of model A (share of items it gets right, a proportion: 0.65 for 65%), strictly
        inside (0, 1); 0, 1 or a value outside raise ``ValueError``, a non-number ``TypeError``.
    p_b : float
        Accuracy of model B, likewise in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``: the smallest and largest phi correlation two 0/1 variables with these
        margins can have, with -1 <= low <= 0 <= high <= 1. high = 1 only when p_a == p_b and
        low = -1 only when p_a + p_b == 1; any rho in [low, high] is admissible in
        :func:`cells_from_margins` and :func:`llm_power.sample_size`.

    Examples
    --------
    >>> from llm_power import rho_bounds
    >>> lo, hi = rho_bounds(0.65, 0.60)
    >>> round(lo, 2), round(hi, 2)
    (-0.6, 0.9)
    """
    p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
    s = math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    return (max(0.0, p_a + p_b - 1.0) - p_a * p_b) / s, (min(p_a, p_b) - p_a * p_b) / s


def cells_from_margins(p_a: float, p_b: float, rho: float = 0.0) -> tuple[float, float, float, float]:
    r"""Cell probabilities (p11, p10, p01, p00) of the paired 2x2 table from margins and rho.

    :math:`p_{11} = p_Ap_B + \rho\sqrt{p_Aq_Ap_Bq_B}`, :math:`p_{10} = p_A - p_{11}`,
    :math:`p_{01} = p_B - p_{11}`.

    Parameters
    ----------
    p_a : float
        Accuracy of model A, a proportion strictly inside (0, 1) (0.65 for 65%).
    p_b : float
        Accuracy of model B, a proportion strictly inside (0, 1).
    rho : float, default 0.0
        Phi correlation of the two models' per-item correctness (0: independent errors). A finite
        number inside :func:`rho_bounds` of the margins (a tolerance of 1e-12 is allowed at the
        bounds); NaN, inf or a non-number are refused.

    Returns
    -------
    tuple of float
        ``(p11, p10, p01, p00)``: probabilities that an item is answered right by both models, by A
        only, by B only, by neither. They are non-negative and sum to 1, with p11 + p10 = p_a and
        p11 + p01 = p_b; p10 + p01 is the discordance p_d and p10 - p01 the gap p_a - p_b. At a
        Frechet-Hoeffding bound of rho one cell is exactly 0.

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
    p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.floating, np.integer)) or not math.isfinite(rho):
        msg = "rho"
        raise fail(msg, "a finite number", rho, exc=TypeError if not isinstance(rho, (int, float)) else ValueError)
    lo, hi = rho_bounds(p_a, p_b)
    if not lo - 1e-12 <= rho <= hi + 1e-12:
        msg = (
            f"rho={rho:g} is outside the admissible range [{lo:.2f}, {hi:.2f}] for p_a={p_a:g}, p_b={p_b:g} "
            "(two 0/1 variables with these accuracies cannot be more (anti-)correlated)."
        )
        raise ValueError(
            msg
        )
    p11 = p_a * p_b + rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    p11 = min(max(p11, max(0.0, p_a + p_b - 1.0)), min(p_a, p_b))
    # at a Frechet bound a cell is 0 exactly; rounding must not make it -1e-16
    return p11, max(p_a - p11, 0.0), max(p_b - p11, 0.0), max(1.0 - p_a - p_b + p11, 0.0)


def margins_from_cells(p11: float, p10: float, p01: float, p00: float) -> tuple[float, float, float]:
    """(p_A, p_B, rho) from the four cell probabilities (they must sum to 1).

    Parameters
    ----------
    p11 : float
        Probability (share of items) that both models are right; e.g. a cell count of a pilot 2x2
        table divided by its number of items (the inverse of :func:`cells_from_margins`).
    p10 : float
        Probability that model A is right and model B wrong.
    p01 : float
        Probability that model A is wrong and model B right.
    p00 : float
        Probability that both models are wrong. The four cells must be finite, non-negative and
        sum to 1 within 1e-9 (``ValueError`` otherwise).

    Returns
    -------
    tuple of float
        ``(p_a, p_b, rho)``: the accuracies p_a = p11 + p10 and p_b = p11 + p01 (proportions in
        [0, 1]) and the phi correlation rho = (p11 - p_a p_b) / sqrt(p_a q_a p_b q_b) in [-1, 1];
        rho is NaN when either accuracy is 0 or 1 (a constant model has no correlation).

    Examples
    --------
    >>> from llm_power import margins_from_cells
    >>> [round(x, 4) for x in margins_from_cells(0.4601, 0.1899, 0.1399, 0.2101)]
    [0.65, 0.6, 0.3]
    """
    cells = [float(x) for x in (p11, p10, p01, p00)]
    if any(c < 0 or not math.isfinite(c) for c in cells):
        msg = f"cell probabilities must be non-negative; got {cells}."
        raise ValueError(msg)
    if abs(sum(cells) - 1.0) > 1e-9:
        msg = f"cell probabilities must sum to 1; got {sum(cells):.6g}."
        raise ValueError(msg)
    p_a, p_b = cells[0] + cells[1], cells[0] + cells[2]
    s = math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    rho = (cells[0] - p_a * p_b) / s if s > 0 else math.nan
    return p_a, p_b, rho


def discordance_from_baseline(p: float, rho: float = 0.0) -> float:
    r"""Discordance :math:`p_d = 2p(1-p)(1-\rho)` of two models near a common accuracy p.

    The resolution paper's tables parametrise paired designs by a baseline accuracy p (the midpoint of the
    two models) and rho instead of two margins.

    Parameters
    ----------
    p : float
        Baseline accuracy of the two models (their midpoint), a proportion strictly inside (0, 1).
    rho : float, default 0.0
        Phi correlation of the two models' per-item correctness: a finite number in
        [1 - 1/max(p, 1 - p), 1). rho = 1 (identical models, no discordance) is excluded; at the
        lower bound the discordance reaches its maximum 2 min(p, 1 - p).

    Returns
    -------
    float
        The discordance p_d: the share of items on which the two models disagree (one right, the
        other wrong), a proportion in (0, 2 min(p, 1 - p)]; at a zero gap p10 = p01 = p_d / 2.

    Raises
    ------
    ValueError
        When rho is outside the Frechet-Hoeffding range of two 0/1 variables with accuracy p,
        [1 - 1/max(p, 1 - p), 1) (two models at 80% cannot disagree on more than 40% of items).

    Examples
    --------
    >>> from llm_power import discordance_from_baseline
    >>> round(discordance_from_baseline(0.8, 0.3), 3)
    0.224
    """
    p = check_prob(p, "p")
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.floating, np.integer)) or not math.isfinite(rho):
        msg = "rho"
        raise fail(msg, "a finite number", rho)
    lo = 1.0 - 1.0 / max(p, 1.0 - p)
    if not (lo - 1e-12 <= float(rho) < 1.0):
        msg = (
            f"rho={float(rho):g} is outside the admissible range [{lo:.2f}, 1) for two models at p={p:g} "
            "(two 0/1 variables with these accuracies cannot be more (anti-)correlated)."
        )
        raise ValueError(
            msg
        )
    return min(2.0 * p * (1.0 - p) * (1.0 - float(rho)), 2.0 * min(p, 1.0 - p))


def paired_parameters(p_a: float, p_b: float, rho: float,
                       discordance: float | None) -> tuple[float, float, float, float]:
    """(p_d, delta, p10, p01) of a paired design, validated."""
    p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
    delta = p_a - p_b
    if discordance is None:
        _, p10, p01, _ = cells_from_margins(p_a, p_b, rho)
        p_d = p10 + p01
    else:
        p_d = check_open_unit(discordance, "discordance")
        if delta * delta >= p_d or abs(delta) > p_d:
            msg = (
                f"infeasible design: |delta| = {abs(delta):.4g} needs discordance > |delta| "
                f"(the two models must disagree on at least |delta| of the items); got discordance = {p_d:.4g}."
            )
            raise ValueError(
                msg
            )
        upper = min(p_a + p_b, 2.0 - p_a - p_b)
        if p_d > upper + 1e-12:
            msg = (
                f"infeasible design: discordance = {p_d:.4g} is above {upper:.4g}, the most two models at "
                f"p_a={p_a:g} and p_b={p_b:g} can disagree (Frechet-Hoeffding bound: p_d <= min(p_a + p_b, "
                "2 - p_a - p_b))."
            )
            raise ValueError(
                msg
            )
        p10, p01 = (p_d + delta) / 2.0, (p_d - delta) / 2.0
    return p_d, delta, p10, p01
