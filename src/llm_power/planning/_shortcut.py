"""The shortcut users get wrong: unpaired Cohen-h sample size times (1 - rho), and how far off it is."""

from __future__ import annotations

import math

from .._core.params import public
from .._core.validation import check_alpha_power, check_delta, check_positive, fail
from .._kernel.sizes import ceil_items, k_factor
from ._designs import cells_from_margins, check_prob

__all__ = ["sample_size_shortcut", "shortcut_constant", "shortcut_prescreen", "shortcut_raw"]


@public
def sample_size_shortcut(p_a: float, p_b: float, *, rho: float, alpha: float = 0.05, power: float = 0.8) -> int:
    r"""The widespread wrong recipe for a paired N: unpaired Cohen-h size times (1 - rho).

    :math:`h = 2\arcsin\sqrt{p_A} - 2\arcsin\sqrt{p_B}`, :math:`n_h = (1-\rho)K/h^2`. For small
    gaps :math:`n_h/N^* \to 1/2`: the recipe under-estimates the paired N* by about half (see
    :func:`shortcut_constant`). Provided to show users how far off it is.

    Parameters
    ----------
    p_a : float
        Anticipated accuracy of model A, a proportion strictly inside (0, 1).
    p_b : float
        Anticipated accuracy of model B, a proportion strictly inside (0, 1) and different from
        ``p_a`` (a zero gap is a ``ValueError``).
    rho : float
        Phi correlation of the two models' per-item correctness (keyword-only, required); it must
        lie inside :func:`rho_bounds` of the margins.
    alpha : float, default 0.05
        Two-sided significance level, in (0, 1).
    power : float, default 0.8
        Target power, in (0, 1) and above ``alpha``.

    Returns
    -------
    int
        The recipe's total number of items, (1 - rho) K / h^2 rounded up (at least 1). It is not a
        valid paired sample size: compare it with :func:`llm_power.sample_size`.

    Examples
    --------
    >>> from llm_power import sample_size, sample_size_shortcut
    >>> sample_size_shortcut(0.6, 0.5, rho=0.6), sample_size(0.6, 0.5, rho=0.6)
    (78, 154)
    """
    alpha, power = check_alpha_power(alpha, power)
    p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
    check_delta(p_a - p_b)
    cells_from_margins(p_a, p_b, rho)  # validates rho
    return max(1, int(ceil_items(shortcut_raw(p_a, p_b, rho, k_factor(alpha, power)))))


def shortcut_raw(p_a: float, p_b: float, rho: float, k: float) -> float:
    h = 2 * math.asin(math.sqrt(p_a)) - 2 * math.asin(math.sqrt(p_b))
    return (1 - rho) * k / (h * h)


def shortcut_constant(p: float, rho: float) -> float:
    r"""Error constant C(p, rho) of the shortcut: its ratio to N* is about 1/2 +- C delta^2.

    With models at p +- delta/2 (midpoint p, u = p(1-p)):
    :math:`n_h/N^* = 1/2 - (\delta^2/2)\,[(1+\rho)(1-2p)^2/(16(1-\rho)u^2) - 1/(6u)] + O(\delta^4)`,
    and :math:`C(p,\rho) = \tfrac12|\cdot|` of the bracket, so
    :math:`|n_h/N^* - 1/2| \approx C\delta^2`.

    Parameters
    ----------
    p : float
        Baseline accuracy (the midpoint of the two models), a proportion strictly inside (0, 1).
    rho : float
        Phi correlation of the two models' per-item correctness, strictly inside (-1, 1) (the
        Frechet-Hoeffding bounds of :func:`rho_bounds` are not checked here).

    Returns
    -------
    float
        C(p, rho) >= 0, per squared gap (delta as a proportion); 0 where the bracket vanishes, and
        large near p = 0 or 1, or as rho approaches 1 away from p = 0.5.

    Examples
    --------
    >>> from llm_power import shortcut_constant
    >>> shortcut_constant(0.5, 0.3)   # 1/3 for every rho at p = 0.5
    0.3333333333333333
    """
    p = check_prob(p, "p")
    if not -1.0 < float(rho) < 1.0:
        msg = "rho"
        raise fail(msg, "in (-1, 1)", rho)
    u = p * (1 - p)
    bracket = (1 + rho) * (1 - 2 * p) ** 2 / (16 * (1 - rho) * u * u) - 1 / (6 * u)
    return 0.5 * abs(bracket)


def shortcut_prescreen(epsilon: float, p: float, rho: float) -> float:
    r"""Largest gap for which the shortcut ratio stays within ``epsilon`` of 1/2:
    :math:`\delta^* = \sqrt{\varepsilon / C(p, \rho)}` (inf when C = 0).

    Parameters
    ----------
    epsilon : float
        Tolerated deviation of the ratio n_h / N* from 1/2 (a ratio, e.g. 0.01), positive and finite.
    p : float
        Baseline accuracy (the midpoint of the two models), a proportion strictly inside (0, 1).
    rho : float
        Phi correlation of the two models' per-item correctness, strictly inside (-1, 1).

    Returns
    -------
    float
        The largest gap delta* (a proportion: 0.1732 is 17.3 points) for which, to second order in
        delta, the shortcut is off from half of N* by at most ``epsilon``; ``inf`` when
        C(p, rho) = 0.

    Examples
    --------
    >>> from llm_power import shortcut_prescreen
    >>> round(shortcut_prescreen(0.01, 0.5, 0.3), 4)
    0.1732
    """
    epsilon = float(check_positive(epsilon, "epsilon"))
    c = shortcut_constant(p, rho)
    return math.inf if c == 0 else math.sqrt(epsilon / c)
