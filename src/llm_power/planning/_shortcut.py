"""The shortcut users get wrong: unpaired Cohen-h sample size times (1 - rho), and how far off it is."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from .._core.params import public
from .._core.results import Result
from .._core.validation import check_alpha_power, check_delta, check_positive, fail
from .._kernel.sizes import ceil_items, k_factor
from ._designs import cells_from_margins, check_prob
from ._sizes import raw_paired_n

__all__ = ["ShortcutRatioResult", "sample_size_shortcut", "shortcut_constant", "shortcut_prescreen", "shortcut_raw",
           "shortcut_ratio"]


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


@dataclass(frozen=True, slots=True, repr=False)
class ShortcutRatioResult(Result):
    """The shortcut's ratio n_h / N* for two accuracies: exact, and Lemma 1's expansion to second and
    fourth order in the gap around their midpoint.

    ``ratio`` is exact; ``second_order`` = 1/2 + ``delta2_coefficient``·delta² (Lemma 1, signed),
    ``fourth_order`` adds ``delta4_coefficient``·delta⁴; each ``*_residual`` is ``ratio`` minus that
    approximation. ``delta`` is p_a - p_b, ``p_mid`` their midpoint.
    """

    p_a: float
    p_b: float
    rho: float
    delta: float
    p_mid: float
    ratio: float
    second_order: float
    fourth_order: float
    second_order_residual: float
    fourth_order_residual: float
    delta2_coefficient: float
    delta4_coefficient: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("p_a", "p_b", "rho", "ratio", "second_order", "fourth_order",
                                               "second_order_residual")
    _title: ClassVar[str | None] = "The shortcut's ratio n_h / N*: exact and Lemma 1's expansion"


def _expansion_coefficients(p: float, rho: float) -> tuple[float, float]:
    """The delta^2 and delta^4 coefficients of n_h/N* around the midpoint ``p`` (rho fixed, rho < 1).

    With u = p(1-p), w2 = (1-2p)^2:  c2 = -B/2, B = (1+rho) w2 / (16 (1-rho) u^2) - 1/(6u) (Lemma 1);
    c4 = (1+rho)(3 rho-1) w2^2 / (512 (1-rho)^2 u^4) - (3+5 rho) w2 / (192 (1-rho) u^3) + 3 / (160 u^2).
    """
    u = p * (1 - p)
    w2 = (1 - 2 * p) ** 2
    one_minus = 1 - rho
    c2 = -0.5 * ((1 + rho) * w2 / (16 * one_minus * u * u) - 1 / (6 * u))
    c4 = ((1 + rho) * (3 * rho - 1) * w2 * w2 / (512 * one_minus * one_minus * u**4)
          - (3 + 5 * rho) * w2 / (192 * one_minus * u**3) + 3 / (160 * u * u))
    return c2, c4


def shortcut_ratio(p_a: float, p_b: float, *, rho: float) -> ShortcutRatioResult:
    r"""How far the shortcut is from half of N*, exactly and by Lemma 1's expansion, for two accuracies.

    The exact ratio of the shortcut's size to the paired N* (Wald), in which K cancels:

    .. math:: \frac{n_h}{N^*} = \frac{(1-\rho)\,\delta^2}{h^2\,\mathrm{Var}(D)},\quad
       \mathrm{Var}(D) = u_A + u_B - 2\rho\sqrt{u_Au_B},\quad
       h = 2\arcsin\sqrt{p_A} - 2\arcsin\sqrt{p_B},

    with :math:`u_X = p_X(1-p_X)` and :math:`\delta = p_A - p_B`; beside it the expansion around the
    midpoint p (u = p(1-p), w = 1-2p, rho fixed), even in delta:

    .. math:: \frac{n_h}{N^*} = \tfrac12 + c_2\delta^2 + c_4\delta^4 + O(\delta^6),\quad
       c_2 = -\tfrac12\Big[\frac{(1+\rho)w^2}{16(1-\rho)u^2} - \frac{1}{6u}\Big],

    .. math:: c_4 = \frac{(1+\rho)(3\rho-1)\,w^4}{512(1-\rho)^2u^4} - \frac{(3+5\rho)\,w^2}{192(1-\rho)u^3}
       + \frac{3}{160\,u^2}.

    :math:`c_2` is Lemma 1 of the resolution paper (:func:`shortcut_constant` is :math:`|c_2|`);
    at p = 1/2, c2 = 1/3 and c4 = 3/10 for every rho.

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

    Returns
    -------
    ShortcutRatioResult
        ``ratio`` (exact n_h / N*), ``second_order`` (1/2 + c2 delta²), ``fourth_order`` (adds
        c4 delta⁴), ``second_order_residual`` and ``fourth_order_residual`` (the exact ratio minus
        each; O(delta⁴) and O(delta⁶)), ``delta2_coefficient`` (c2), ``delta4_coefficient`` (c4),
        and the inputs with ``delta`` = p_a - p_b and ``p_mid``. The ratio does not depend on alpha
        or power (K cancels) nor on the sign of the gap.

    Notes
    -----
    c4 comes from the Taylor series of h in the half-gap x = delta/2,
    :math:`h = \delta u^{-1/2}(1 + a\delta^2 + b\delta^4)` with :math:`a = w^2/(32u^2) + 1/(24u)`,
    :math:`b = 7w^4/(2048u^4) + 3w^2/(256u^3) + 3/(640u^2)`, and of
    :math:`\mathrm{Var}(D) = 2u(1-\rho)(1 + c\delta^2 + e\delta^4)` with
    :math:`c = \rho w^2/(8(1-\rho)u^2) - 1/(4u)`, :math:`e = \rho w^2/(128(1-\rho)u^4)` (using
    :math:`\sqrt{u_Au_B} = (u - x^2)\sqrt{1 - x^2w^2/(u-x^2)^2}`); then
    :math:`c_4 = (P^2 - Q)/2` with :math:`P = 2a + c` and :math:`Q = a^2 + 2b + 2ac + e`. A sympy
    series of the exact ratio gives the same coefficient; the tests hold it against a Richardson
    extrapolation of the exact ratio in 50-digit arithmetic.

    Examples
    --------
    Models at 90% and 70% whose errors correlate with rho = 0.3, a 20-point gap: the shortcut asks
    for 48.4% of N*; Lemma 1's gap² term predicts 48.8%, with the gap⁴ term 48.4%.

    >>> from llm_power import shortcut_ratio
    >>> r = shortcut_ratio(0.9, 0.7, rho=0.3)
    >>> round(r.ratio, 4), round(r.second_order, 4), round(r.fourth_order, 4)
    (0.4839, 0.4882, 0.4845)
    """
    p_a, p_b = check_prob(p_a, "p_a"), check_prob(p_b, "p_b")
    delta = p_a - p_b
    check_delta(delta)
    _, p10, p01, _ = cells_from_margins(p_a, p_b, rho)  # validates rho
    rho = float(rho)
    ratio = shortcut_raw(p_a, p_b, rho, 1.0) / raw_paired_n(p10 + p01, delta, 1.0, 0.0, 0.0, "wald")
    p_mid = (p_a + p_b) / 2
    c2, c4 = _expansion_coefficients(p_mid, rho)
    d2 = delta * delta
    second = 0.5 + c2 * d2
    fourth = second + c4 * d2 * d2
    return ShortcutRatioResult(p_a=p_a, p_b=p_b, rho=rho, delta=delta, p_mid=p_mid, ratio=ratio,
                               second_order=second, fourth_order=fourth, second_order_residual=ratio - second,
                               fourth_order_residual=ratio - fourth, delta2_coefficient=c2, delta4_coefficient=c4)
