"""shortcut_ratio (issue 45): the shortcut's exact ratio n_h / N* and Lemma 1's expansion to delta^4.

Expected values come from elsewhere than the function: the package's own sample-size functions (the
shortcut's and the Wald N*), a 60-digit evaluation of the ratio with :mod:`decimal` (mpmath is not in
the test environment; the arcsine is its Taylor series, written out below), the closed form at p = 1/2,
a Richardson extrapolation of the 60-digit ratio for the delta^4 coefficient, and the command line.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, localcontext

import pytest

from llm_power import ShortcutRatioResult, sample_size_shortcut, shortcut_constant, shortcut_ratio
from llm_power.cli.main import main
from llm_power.planning import k_factor, shortcut_raw, unrounded_sample_size

DIGITS = 60
GRID = [(0.9, 0.7, 0.3), (0.55, 0.35, 0.0), (0.65, 0.60, 0.3), (0.85, 0.87, 0.6), (0.12, 0.10, -0.1),
        (0.97, 0.95, 0.5), (0.3, 0.5, 0.6), (0.2, 0.8, -0.5)]
#: (midpoint, rho) at which the expansion is checked; rho inside the margins' range for small gaps
MIDPOINTS = [(0.5, 0.0), (0.5, 0.6), (0.3, 0.0), (0.7, 0.3), (0.85, 0.6), (0.1, -0.1), (0.95, 0.5), (0.62, -0.4)]


# -- a slow, obviously correct 60-digit evaluation ------------------------------------------------

def _asin_series(x: Decimal) -> Decimal:
    """asin(x) = sum_n (2n)! / (4^n (n!)^2 (2n + 1)) x^(2n+1), for 0 <= x <= sqrt(1/2) (terms fall as 2^-n)."""
    total, term, n = Decimal(0), x, 0  # term = (2n)!/(4^n (n!)^2) x^(2n+1)
    eps = Decimal(10) ** -(DIGITS + 5)
    while term > eps:
        total += term / (2 * n + 1)
        term = term * x * x * (2 * n + 1) / (2 * n + 2)
        n += 1
    return total


def _half_pi() -> Decimal:
    return 3 * _asin_series(Decimal(1) / 2)  # asin(1/2) = pi/6


def _arcsine_angle(p: Decimal) -> Decimal:
    """2 asin(sqrt(p)), folded so that the series argument is at most sqrt(1/2)."""
    if p <= Decimal(1) / 2:
        return 2 * _asin_series(p.sqrt())
    return 2 * (_half_pi() - _asin_series((1 - p).sqrt()))


def _ratio_60(p_a: Decimal, p_b: Decimal, rho: Decimal) -> Decimal:
    """(1 - rho) delta^2 / (h^2 Var(D)) in 60-digit arithmetic."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        h = _arcsine_angle(p_a) - _arcsine_angle(p_b)
        u_a, u_b = p_a * (1 - p_a), p_b * (1 - p_b)
        var = u_a + u_b - 2 * rho * (u_a * u_b).sqrt()
        return (1 - rho) * (p_a - p_b) ** 2 / (h * h * var)


def _lemma_one_bracket(p: Decimal, rho: Decimal) -> Decimal:
    """SPEC.md, the shortcut: n_h/N* = 1/2 - (delta^2/2) [bracket] + O(delta^4)."""
    u = p * (1 - p)
    return (1 + rho) * (1 - 2 * p) ** 2 / (16 * (1 - rho) * u * u) - 1 / (6 * u)


# -- validation ------------------------------------------------------------------------------------

def test_validation():
    with pytest.raises(ValueError, match="delta = 0"):
        shortcut_ratio(0.6, 0.6, rho=0.3)
    with pytest.raises(ValueError, match=r"admissible range \[-0.60, 0.90\]"):
        shortcut_ratio(0.65, 0.6, rho=0.95)
    with pytest.raises(ValueError, match=r"`p_a` must be in \(0, 1\)"):
        shortcut_ratio(1.2, 0.6, rho=0.0)
    with pytest.raises(ValueError, match="`p_b`"):
        shortcut_ratio(0.6, 0.0, rho=0.0)
    with pytest.raises(TypeError, match="rho"):
        shortcut_ratio(0.6, 0.5, rho="0.3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rho"):
        shortcut_ratio(0.6, 0.5, rho=float("nan"))
    with pytest.raises(TypeError):
        shortcut_ratio(0.6, 0.5, 0.3)  # type: ignore[misc]  # rho is keyword-only


# -- (a) the exact ratio ---------------------------------------------------------------------------

@pytest.mark.parametrize(("p_a", "p_b", "rho"), GRID)
def test_exact_ratio_is_the_shortcut_over_the_wald_n_star(p_a, p_b, rho):
    res = shortcut_ratio(p_a, p_b, rho=rho)
    for alpha, power in ((0.05, 0.8), (0.01, 0.9), (0.2, 0.5)):  # K cancels
        k = k_factor(alpha, power)
        want = shortcut_raw(p_a, p_b, rho, k) / unrounded_sample_size(p_a, p_b, rho=rho, alpha=alpha, power=power)
        assert res.ratio == pytest.approx(want, rel=1e-13)
    # the rounded sizes the user sees agree to their rounding
    n_h = sample_size_shortcut(p_a, p_b, rho=rho)
    n_star = unrounded_sample_size(p_a, p_b, rho=rho)
    assert n_h - 1 < res.ratio * n_star <= n_h


@pytest.mark.parametrize(("p_a", "p_b", "rho"), GRID)
def test_exact_ratio_against_sixty_digits(p_a, p_b, rho):
    res = shortcut_ratio(p_a, p_b, rho=rho)
    want = _ratio_60(Decimal(p_a), Decimal(p_b), Decimal(rho))  # the doubles' exact values
    assert res.ratio == pytest.approx(float(want), rel=1e-12, abs=0)


def test_the_sixty_digit_arcsine_is_right():
    # reference values: asin(sqrt(1/2)) = pi/4; asin(sqrt(1/4)) = pi/6; pi to 50 digits
    pi50 = Decimal("3.14159265358979323846264338327950288419716939937510")
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        assert abs(2 * _half_pi() - pi50) < Decimal(10) ** -49
        assert abs(_arcsine_angle(Decimal(1) / 2) - pi50 / 2) < Decimal(10) ** -49
        assert abs(_arcsine_angle(Decimal(3) / 4) - 2 * pi50 / 3) < Decimal(10) ** -49
        assert abs(float(_arcsine_angle(Decimal("0.9"))) - 2 * math.asin(math.sqrt(0.9))) < 1e-15


@pytest.mark.parametrize(("delta", "rho"), [(d, r) for d in (0.02, 0.1, 0.3, 0.6) for r in (-0.5, 0.0, 0.2)]
                         + [(0.02, 0.9), (0.1, 0.7)])
def test_closed_form_at_one_half(delta, rho):
    # At p = 1/2: h = 2 asin(delta) and Var(D) = (1 - rho)(1 - delta^2)/2, so
    # n_h/N* = delta^2 / (2 (1 - delta^2) asin(delta)^2) = 1/2 + delta^2/3 + 3 delta^4/10 + ... for every rho.
    res = shortcut_ratio(0.5 + delta / 2, 0.5 - delta / 2, rho=rho)
    d = res.delta
    assert res.ratio == pytest.approx(d * d / (2 * (1 - d * d) * math.asin(d) ** 2), rel=1e-12)
    assert res.delta2_coefficient == pytest.approx(1 / 3, rel=1e-12)
    assert res.delta4_coefficient == pytest.approx(3 / 10, rel=1e-12)


def test_symmetries():
    for p_a, p_b, rho in GRID:
        res = shortcut_ratio(p_a, p_b, rho=rho)
        swapped = shortcut_ratio(p_b, p_a, rho=rho)  # the same pair, named the other way round
        mirrored = shortcut_ratio(1 - p_a, 1 - p_b, rho=rho)  # scoring errors instead of successes
        for other in (swapped, mirrored):
            assert other.ratio == pytest.approx(res.ratio, rel=1e-12)
            assert other.second_order == pytest.approx(res.second_order, rel=1e-12)
            assert other.fourth_order == pytest.approx(res.fourth_order, rel=1e-12)


def test_second_order_is_lemma_one_signed():
    for p_a, p_b, rho in GRID:
        res = shortcut_ratio(p_a, p_b, rho=rho)
        p = (p_a + p_b) / 2
        u = p * (1 - p)
        bracket = (1 + rho) * (1 - 2 * p) ** 2 / (16 * (1 - rho) * u * u) - 1 / (6 * u)  # SPEC.md
        assert res.second_order == pytest.approx(0.5 - (p_a - p_b) ** 2 / 2 * bracket, rel=1e-13)
        assert abs(res.delta2_coefficient) == pytest.approx(shortcut_constant(p, rho), rel=1e-13)
        assert res.second_order_residual == res.ratio - res.second_order
        assert res.fourth_order_residual == res.ratio - res.fourth_order


# -- (b) the delta^4 coefficient against Richardson extrapolation in 60 digits ---------------------

def _richardson_delta4(p: Decimal, rho: Decimal, h: Decimal) -> Decimal:
    """lim_{delta -> 0} (ratio - 1/2 + delta^2/2 bracket) / delta^4, from delta = h, h/2, h/4, h/8.

    g(delta) = c4 + c6 delta^2 + c8 delta^4 + ...; three Romberg steps (factors 4, 16, 64) leave O(h^8).
    """
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        bracket = _lemma_one_bracket(p, rho)

        def g(d: Decimal) -> Decimal:
            r = _ratio_60(p + d / 2, p - d / 2, rho)
            return (r - Decimal(1) / 2 + d * d / 2 * bracket) / d**4

        column = [g(h / 2**j) for j in range(4)]
        for factor in (4, 16, 64):
            column = [(factor * column[j + 1] - column[j]) / (factor - 1) for j in range(len(column) - 1)]
        return column[0]


@pytest.mark.parametrize(("p", "rho"), MIDPOINTS)
def test_delta4_coefficient_against_richardson(p, rho):
    want = _richardson_delta4(Decimal(str(p)), Decimal(str(rho)), Decimal("0.01"))
    got = shortcut_ratio(p + 0.0005, p - 0.0005, rho=rho).delta4_coefficient
    assert got == pytest.approx(float(want), rel=1e-9)


def test_richardson_finds_the_half_closed_form():
    # the extrapolation itself, where the answer is known (3/10 at p = 1/2, above)
    assert float(_richardson_delta4(Decimal("0.5"), Decimal("0.3"), Decimal("0.01"))) == pytest.approx(0.3, rel=1e-12)


# -- (c) the residuals are O(delta^4) and O(delta^6) ----------------------------------------------

@pytest.mark.parametrize(("p", "rho"), MIDPOINTS)
def test_residual_orders(p, rho):
    # midpoint fixed, gap halved: the fourth-order residual falls by ~2^6 = 64, the second-order one by ~16
    # (gaps of 4 and 2 points: small enough for the leading term, large enough that the delta^6 residual,
    # ~1e-9 here, is far above the doubles' rounding)
    r = [shortcut_ratio(p + d / 2, p - d / 2, rho=rho) for d in (0.04, 0.02)]
    assert 58 < r[0].fourth_order_residual / r[1].fourth_order_residual < 70
    assert 14 < r[0].second_order_residual / r[1].second_order_residual < 18
    # and the fourth-order term is most of the second-order residual
    assert abs(r[1].fourth_order_residual) < 0.05 * abs(r[1].second_order_residual)


def test_fourth_order_is_closer_on_the_docs_grid():
    # the table in docs/planning.md: p_A = p_B + gap; the delta^4 term never makes the prediction worse
    for p_b in (0.3, 0.5, 0.7, 0.85):
        for gap in (0.02, 0.05, 0.10, 0.20):
            for rho in (0.0, 0.3, 0.6):
                p_a = p_b + gap
                if p_a >= 1:
                    continue
                try:
                    res = shortcut_ratio(p_a, p_b, rho=rho)
                except ValueError:  # rho outside the margins' range
                    continue
                assert abs(res.fourth_order_residual) <= abs(res.second_order_residual) + 1e-15


# -- the result ------------------------------------------------------------------------------------

def test_result_is_a_frozen_result_with_plain_dict():
    res = shortcut_ratio(0.9, 0.7, rho=0.3)
    assert isinstance(res, ShortcutRatioResult)
    with pytest.raises(AttributeError):
        res.ratio = 0.5  # type: ignore[misc]
    d = res.to_dict()
    assert set(d) == {"p_a", "p_b", "rho", "delta", "p_mid", "ratio", "second_order", "fourth_order",
                      "second_order_residual", "fourth_order_residual", "delta2_coefficient", "delta4_coefficient"}
    assert all(isinstance(v, float) for v in d.values())
    assert repr(res).startswith("ShortcutRatioResult(p_a=0.9, p_b=0.7, rho=0.3, ratio=0.4839")
    assert "\n" not in repr(res)


# -- (d) the command line carries the same numbers --------------------------------------------------

def test_cli_json_and_table_equal_the_api(capsys):
    res = shortcut_ratio(0.9, 0.7, rho=0.3)
    assert main(["plan", "shortcut", "--pa", "0.9", "--pb", "0.7", "--rho", "0.3", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {"shortcut", "n_star", "ratio", "error_constant", "prescreen_delta_at_0_05"} <= set(payload)  # kept
    for key in ("ratio", "second_order", "fourth_order", "second_order_residual"):
        assert payload[key] == getattr(res, key), key
    assert main(["plan", "shortcut", "--pa", "0.9", "--pb", "0.7", "--rho", "0.3"]) == 0
    out = capsys.readouterr().out
    for shown in ("0.4839", "0.4882", "0.4845", "−0.0043", "48.4% of the paired N*"):
        assert shown in out, shown
