"""The plug-in sizing kernel (``llm_power._kernel.sizes``) against values computed outside the package.

Oracles: the textbook one-sample normal sample size n = ((z_{1-a/2} + z_{1-b}) sigma / delta)^2 with
scipy's normal quantiles, statsmodels' ``NormalIndPower`` (``ratio=0`` is the one-sample normal test,
whose n solves the same equation; one-sided it is exactly K sigma^2 / delta^2), and the worked example
of SPEC section 5 (b = 3000, c = 2000 of 10,000 items: N* = 385).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import NormalIndPower

from llm_power._kernel import sizes

#: (variance, delta, alpha, power, alternative): a spread of designs, both signs of delta, both tails
DESIGNS = [
    (0.49, 0.1, 0.05, 0.8, "two-sided"),
    (0.3, 0.05, 0.01, 0.9, "greater"),
    (2.0, -0.3, 0.1, 0.7, "two-sided"),
    (0.2, 0.02, 0.05, 0.8, "less"),
    (0.0123, 0.004, 0.2, 0.95, "two-sided"),
]


def _textbook_k(alpha: float, power: float, alternative: str) -> float:
    """(z_{1-alpha/2} + z_{power})^2, z_{1-alpha} one-sided (scipy's normal quantiles)."""
    tail = alpha / 2 if alternative == "two-sided" else alpha
    return (stats.norm.isf(tail) + stats.norm.ppf(power)) ** 2


@pytest.mark.parametrize(("alpha", "power", "alternative", "value"), [
    (0.05, 0.8, "two-sided", 7.848879734349086),  # SPEC section 4: K = 7.84888 at 0.05/0.8
    (0.05, 0.8, "greater", 6.182557),  # (1.644854 + 0.841621)^2
    (0.01, 0.9, "two-sided", 14.879387),  # (2.575829 + 1.281552)^2
])
def test_k_factor_is_the_sum_of_the_two_normal_quantiles_squared(alpha, power, alternative, value):
    assert sizes.k_factor(alpha, power, alternative) == pytest.approx(_textbook_k(alpha, power, alternative), rel=1e-12)
    assert sizes.k_factor(alpha, power, alternative) == pytest.approx(value, rel=1e-6)


@pytest.mark.parametrize(("variance", "delta", "alpha", "power", "alternative"), DESIGNS)
def test_n_star_is_the_textbook_one_sample_normal_size(variance, delta, alpha, power, alternative):
    """N* = K sigma^2 / delta^2: kills delta unsquared (K var / |delta|), a missing K, alpha not halved."""
    expected = _textbook_k(alpha, power, alternative) * variance / delta**2
    got = sizes.n_star_from_variance(variance, delta, alpha=alpha, power=power, alternative=alternative)
    assert got == pytest.approx(expected, rel=1e-12)
    # statsmodels' one-sample normal power solver (ratio=0): the same n (two-sided it also counts the far
    # tail's rejections, a relative difference below 2e-4 at these designs)
    es = abs(delta) / math.sqrt(variance)
    sm_alt = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}[alternative]
    n_sm = NormalIndPower().solve_power(effect_size=-es if sm_alt == "smaller" else es, alpha=alpha, power=power,
                                        ratio=0, alternative=sm_alt)
    assert got == pytest.approx(n_sm, rel=2e-4 if alternative == "two-sided" else 1e-8)


def test_n_star_of_the_spec_worked_example_and_its_limits():
    """SPEC section 5: b = 3000, c = 2000 of n = 10,000: delta = 0.1, p_d = 0.5, sigma_D^2 = p_d - delta^2 = 0.49,
    N* = 7.84888 x 0.49 / 0.01 = 384.6 -> 385 items."""
    raw = sizes.n_star_from_variance(0.5 - 0.1**2, 0.1)
    assert raw == pytest.approx(384.5951, abs=1e-4)
    assert math.ceil(raw) == 385 and sizes.ceil_items(raw) == 385.0
    assert sizes.n_star_from_variance(0.49, 0.0) == math.inf  # no finite benchmark resolves a zero gap
    assert sizes.n_star_from_variance(0.0, 0.1) == 0.0
    # vectorised: element by element the scalar formula
    var, d = np.array([0.49, 0.2, 1.0]), np.array([0.1, -0.05, 0.0])
    out = sizes.n_star_from_variance(var, d)
    assert out[:2] == pytest.approx(_textbook_k(0.05, 0.8, "two-sided") * var[:2] / d[:2] ** 2, rel=1e-12)
    assert out[2] == math.inf


@pytest.mark.parametrize(("variance", "delta", "alpha", "power", "alternative"), DESIGNS)
def test_mde_inverts_n_star_and_equals_statsmodels(variance, delta, alpha, power, alternative):
    """MDE = sqrt(K sigma^2 / N): the effect statsmodels' solver finds for N items, times sigma."""
    n = 437
    mde = sizes.mde_from_variance(n, variance, alpha=alpha, power=power, alternative=alternative)
    assert mde == pytest.approx(math.sqrt(_textbook_k(alpha, power, alternative) * variance / n), rel=1e-12)
    if alternative != "two-sided":  # one-sided statsmodels solves exactly the same equation
        sm_alt = {"greater": "larger", "less": "smaller"}[alternative]
        es = NormalIndPower().solve_power(nobs1=n, alpha=alpha, power=power, ratio=0, alternative=sm_alt)
        assert mde == pytest.approx(abs(es) * math.sqrt(variance), rel=1e-6)
    # N* at the MDE is N again
    assert sizes.n_star_from_variance(variance, mde, alpha=alpha, power=power,
                                      alternative=alternative) == pytest.approx(n, rel=1e-12)


def test_mde_refuses_fewer_than_one_item_and_is_vectorised():
    assert sizes.mde_from_variance(1, 0.25) == pytest.approx(math.sqrt(_textbook_k(0.05, 0.8, "two-sided") * 0.25))
    with pytest.raises(ValueError, match="`n` must be >= 1"):
        sizes.mde_from_variance(0.5, 0.25)
    got = sizes.mde_from_variance(np.array([100, 400]), 0.25)
    assert got == pytest.approx(np.sqrt(_textbook_k(0.05, 0.8, "two-sided") * 0.25 / np.array([100, 400])))


def test_rounding_up_keeps_inf_and_forgives_float_noise():
    assert sizes.ceil_items(384.0000000000001) == 384.0  # 3 * 128.0 computed in floats is not a 385th item
    assert sizes.ceil_items(384.01) == 385.0
    assert sizes.ceil_items(math.inf) == math.inf
    got = sizes.ceil_items_array([384.0000000000001, 384.01, math.inf, math.nan])
    assert got[:3].tolist() == [384.0, 385.0, math.inf] and math.isnan(got[3])


@pytest.mark.parametrize(("alpha", "alternative", "tail"), [(0.05, "two-sided", 0.025), (0.05, "greater", 0.05),
                                                             (0.1, "less", 0.1)])
def test_z_alpha_is_the_upper_quantile_of_the_tail(alpha, alternative, tail):
    assert sizes.z_alpha(alpha, alternative) == pytest.approx(stats.norm.isf(tail), rel=1e-12)
