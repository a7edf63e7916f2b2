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


# ---- K on Student-t degrees of freedom (the run and cluster regimes' K_df), vectorised -------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("df", [2.0, 7.5, 40.0])
def test_k_constant_on_t_df_is_the_sum_of_the_two_t_quantiles_squared(df, alternative):
    """K_df = (t_{df, 1-alpha/2} + t_{df, power})^2 (t_{df, 1-alpha} one-sided), scipy's t quantiles. Sized for the
    power's quantile taken from the normal while alpha's is t (at 7.5 df, 0.8: t 0.896 vs z 0.842, K 3% off),
    alpha halved one-sided, and the quantiles' order swapped."""
    from llm_power._kernel.quantiles import k_constant

    tail = 0.05 / 2 if alternative == "two-sided" else 0.05
    want = (stats.t.isf(tail, df) + stats.t.ppf(0.8, df)) ** 2
    assert k_constant(0.05, 0.8, alternative, df) == pytest.approx(want, rel=1e-10)
    # vectorised over per-pair levels and df (inf: the normal)
    alphas, dfs = np.array([0.01, 0.05, 0.2]), np.array([3.0, 12.0, np.inf])
    got = k_constant(alphas, 0.9, alternative, dfs)
    half = 2.0 if alternative == "two-sided" else 1.0
    want = [(stats.norm.isf(a / half) + stats.norm.ppf(0.9)) ** 2 if math.isinf(d)
            else (stats.t.isf(a / half, d) + stats.t.ppf(0.9, d)) ** 2 for a, d in zip(alphas, dfs, strict=True)]
    assert np.asarray(got) == pytest.approx(want, rel=1e-10)


# ---- planning: N*, power and MDE against the textbook formulas, written out with scipy ------------------
#
# Paired 0/1 design from (p_a, p_b, rho): p11 = p_a p_b + rho sqrt(p_a q_a p_b q_b), p10 = p_a - p11,
# p01 = p_b - p11, p_d = p10 + p01, delta = p_a - p_b, sigma_D^2 = p_d - delta^2 (SPEC section 4).


def _paired(p_a: float, p_b: float, rho: float) -> tuple[float, float]:
    """(p_d, delta) of the 2x2 table with these margins and phi correlation (SPEC section 4)."""
    p11 = p_a * p_b + rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    return (p_a - p11) + (p_b - p11), p_a - p_b


def _z(alpha: float, alternative: str) -> float:
    return stats.norm.isf(alpha / 2 if alternative == "two-sided" else alpha)


PAIRED = [(0.65, 0.60, 0.3, 0.05, 0.8, "two-sided", 1.0), (0.81, 0.79, 0.5, 0.1, 0.9, "greater", 1.7),
          (0.3, 0.42, -0.1, 0.01, 0.8, "less", 2.5), (0.55, 0.45, 0.6, 0.05, 0.85, "two-sided", 1.3)]


@pytest.mark.parametrize(("p_a", "p_b", "rho", "alpha", "pw", "alternative", "de"), PAIRED)
def test_paired_sample_size_is_the_textbook_formula(p_a, p_b, rho, alpha, pw, alternative, de):
    """"wald": N* = DE K (p_d - delta^2) / delta^2; "connor" (Connor 1987): DE [z_a sqrt(p_d) + z_b sqrt(p_d -
    delta^2)]^2 / delta^2; sample_size rounds up. Sized for: sigma_D^2 = p_d (delta^2 dropped, 1-4% here), the
    alternative's sd in Connor's second term replaced by the null's, the design effect dropped, the sign of rho in
    p11, truncation instead of rounding up."""
    from llm_power.planning import sample_size, unrounded_sample_size

    p_d, delta = _paired(p_a, p_b, rho)
    z_a, z_b = _z(alpha, alternative), stats.norm.ppf(pw)
    wald = de * (z_a + z_b) ** 2 * (p_d - delta**2) / delta**2
    connor = de * (z_a * math.sqrt(p_d) + z_b * math.sqrt(p_d - delta**2)) ** 2 / delta**2
    opts = {"rho": rho, "alpha": alpha, "power": pw, "alternative": alternative, "design_effect": de}
    assert unrounded_sample_size(p_a, p_b, method="wald", **opts) == pytest.approx(wald, rel=1e-10)
    assert unrounded_sample_size(p_a, p_b, method="connor", **opts) == pytest.approx(connor, rel=1e-10)
    assert sample_size(p_a, p_b, method="wald", **opts) == math.ceil(wald)
    assert sample_size(p_a, p_b, method="connor", **opts) == math.ceil(connor)
    # the same design from its discordance (the seeds' parametrisation): the same numbers
    assert unrounded_sample_size(p_a, p_b, discordance=p_d, method="connor", alpha=alpha, power=pw,
                                 alternative=alternative, design_effect=de) == pytest.approx(connor, rel=1e-10)


@pytest.mark.parametrize(("p_a", "p_b", "alpha", "pw", "alternative", "de"), [
    (0.65, 0.60, 0.05, 0.8, "two-sided", 1.0), (0.3, 0.2, 0.1, 0.9, "greater", 2.0),
    (0.85, 0.9, 0.01, 0.8, "less", 1.4)])
def test_unpaired_sample_size_is_the_textbook_formula(p_a, p_b, alpha, pw, alternative, de):
    """Per group: "wald" DE K 2 pbar qbar / delta^2; "per_arm" DE K (p_a q_a + p_b q_b) / delta^2; "fleiss" DE
    [z_a sqrt(2 pbar qbar) + z_b sqrt(p_a q_a + p_b q_b)]^2 / delta^2. Sized for: one arm's q used for the other,
    the pooled variance without its factor 2, the design effect dropped."""
    from llm_power.planning import unrounded_sample_size

    z_a, z_b = _z(alpha, alternative), stats.norm.ppf(pw)
    k, delta, pbar = (z_a + z_b) ** 2, p_a - p_b, (p_a + p_b) / 2
    arms = p_a * (1 - p_a) + p_b * (1 - p_b)
    want = {"wald": de * k * 2 * pbar * (1 - pbar) / delta**2, "per_arm": de * k * arms / delta**2,
            "fleiss": de * (z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(arms)) ** 2 / delta**2}
    for method, value in want.items():
        got = unrounded_sample_size(p_a, p_b, design="unpaired", method=method, alpha=alpha, power=pw,
                                    alternative=alternative, design_effect=de)
        assert got == pytest.approx(value, rel=1e-10), method


@pytest.mark.parametrize(("p_a", "p_b", "rho", "alpha", "pw", "alternative", "de"), PAIRED)
def test_paired_and_unpaired_power_are_the_textbook_normal_powers(p_a, p_b, rho, alpha, pw, alternative, de):
    """Paired "wald": Phi((sqrt(n/DE)|delta| - z sigma_D)/sigma_D) (+ the far tail two-sided); "connor": the null sd
    sqrt(p_d) in the critical value, the alternative's sigma_D in the spread; unpaired "fleiss": pooled null sd
    sqrt(2 pbar qbar), per-arm alternative sd. Sized for: the design effect multiplying n, the far tail dropped,
    Connor's two sds swapped, sigma_D = sqrt(p_d), the fleiss sds swapped."""
    from llm_power.planning import power

    p_d, delta = _paired(p_a, p_b, rho)
    sd = math.sqrt(p_d - delta**2)
    z = _z(alpha, alternative)
    ns = np.array([40, 300, 2500])
    root = np.sqrt(ns / de)

    def normal_power(sd_null: float, sd_alt: float, d: float) -> np.ndarray:
        if alternative == "two-sided":
            return (stats.norm.cdf((abs(d) * root - z * sd_null) / sd_alt)
                    + stats.norm.cdf((-abs(d) * root - z * sd_null) / sd_alt))
        signed = d if alternative == "greater" else -d
        return stats.norm.cdf((signed * root - z * sd_null) / sd_alt)

    opts = {"alpha": alpha, "alternative": alternative, "design_effect": de}
    assert power(ns, p_a, p_b, rho=rho, method="wald", **opts) == pytest.approx(normal_power(sd, sd, delta), rel=1e-9)
    assert power(ns, p_a, p_b, rho=rho, method="connor", **opts) == pytest.approx(
        normal_power(math.sqrt(p_d), sd, delta), rel=1e-9)
    pbar = (p_a + p_b) / 2
    pooled, arms = math.sqrt(2 * pbar * (1 - pbar)), math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
    for method, (sd_null, sd_alt) in {"wald": (pooled, pooled), "per_arm": (arms, arms),
                                      "fleiss": (pooled, arms)}.items():
        got = power(ns, p_a, p_b, design="unpaired", method=method, **opts)
        assert got == pytest.approx(normal_power(sd_null, sd_alt, delta), rel=1e-9), method
    # a two-sided paired design whose far tail is visible: about 2.3e-4 of the 0.05 at a tiny gap
    if alternative == "two-sided":
        tiny = power(30, 0.5005, 0.4995, rho=0.0, alpha=alpha, design_effect=de)
        sd0 = math.sqrt(0.5 - 0.001**2)
        far = stats.norm.cdf((-0.001 * math.sqrt(30 / de) - z * sd0) / sd0)
        near = stats.norm.cdf((0.001 * math.sqrt(30 / de) - z * sd0) / sd0)
        assert tiny == pytest.approx(near + far, rel=1e-9) and far > 0.4 * near


@pytest.mark.parametrize(("p", "rho", "alpha", "pw", "alternative", "de"), [
    (0.8, 0.0, 0.05, 0.8, "two-sided", 1.0), (0.7, 0.4, 0.1, 0.9, "greater", 1.5), (0.35, -0.2, 0.01, 0.8, "less", 2.0)])
def test_mde_solves_the_textbook_sample_size_equation(p, rho, alpha, pw, alternative, de):
    """The MDE at n items is the gap delta whose textbook N* (models at p +- delta/2; paired: p_d = 2p(1-p)(1-rho)
    held fixed) equals n / DE -- found here by scipy's brentq on the formulas written out, not on the package's.
    Sized for: paired "wald" without the +K of sigma_D^2 = p_d - delta^2, "per_arm" with K instead of K/2, the
    unpaired variance without its 2, the design effect multiplying n, p_d with (1 + rho)."""
    from scipy import optimize

    from llm_power.planning import mde

    z_a, z_b = _z(alpha, alternative), stats.norm.ppf(pw)
    k = (z_a + z_b) ** 2
    p_d = 2 * p * (1 - p) * (1 - rho)

    def arms(d: float) -> float:
        return (p + d / 2) * (1 - p - d / 2) + (p - d / 2) * (1 - p + d / 2)

    sizes_of = {
        ("paired", "wald"): lambda d: k * (p_d - d * d) / (d * d),
        ("paired", "connor"): lambda d: (z_a * math.sqrt(p_d) + z_b * math.sqrt(p_d - d * d)) ** 2 / (d * d),
        ("unpaired", "wald"): lambda d: k * 2 * p * (1 - p) / (d * d),
        ("unpaired", "per_arm"): lambda d: k * arms(d) / (d * d),
        ("unpaired", "fleiss"): lambda d: (z_a * math.sqrt(2 * p * (1 - p)) + z_b * math.sqrt(arms(d))) ** 2 / (d * d),
    }
    for n in (60, 900):
        for (design, method), size in sizes_of.items():
            top = p_d if design == "paired" else 2 * min(p, 1 - p)
            want = optimize.brentq(lambda d, size=size, n=n: size(d) - n / de, 1e-6, top - 1e-9, xtol=1e-14)
            got = mde(n, p=p, rho=rho, alpha=alpha, power=pw, design=design, method=method, alternative=alternative,
                      design_effect=de)
            assert got == pytest.approx(want, rel=1e-8), (design, method, n)


def test_unpaired_mde_is_nan_beyond_what_two_accuracies_can_differ():
    """Two accuracies p +- delta/2 in [0, 1] differ by at most 2 min(p, 1 - p): 0.2 at p = 0.1. Sized for the limit
    min(p, 1 - p) (half of it): at 60 items the "wald" MDE, sqrt(K 2 p q / n) = 0.1518 (scipy), lies between."""
    import warnings

    from llm_power.planning import mde

    k = (stats.norm.isf(0.025) + stats.norm.ppf(0.8)) ** 2
    want = math.sqrt(k * 2 * 0.1 * 0.9 / 60)
    assert 0.1 < want < 0.2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # feasible: no warning
        assert mde(60, p=0.1, design="unpaired") == pytest.approx(want, rel=1e-12)


def test_discordance_cells_and_rho_bounds_by_hand():
    """p_d = 2p(1-p)(1-rho) (SPEC section 4); the 2x2 cells from the margins and rho, and back; the Frechet-Hoeffding
    range of rho by a scan of every admissible p11 (max(0, p_a + p_b - 1) <= p11 <= min(p_a, p_b)). Sized for: (1 +
    rho), the sign of rho in p11, max for min in the upper bound of rho, p_b read from the A-only cell."""
    from llm_power.planning import cells_from_margins, discordance_from_baseline, margins_from_cells, rho_bounds

    assert discordance_from_baseline(0.8, 0.3) == pytest.approx(2 * 0.8 * 0.2 * 0.7, rel=1e-14)
    assert discordance_from_baseline(0.35, -0.2) == pytest.approx(2 * 0.35 * 0.65 * 1.2, rel=1e-14)
    p_a, p_b = 0.7, 0.45
    s = math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    p11 = np.linspace(max(0.0, p_a + p_b - 1), min(p_a, p_b), 10_001)
    phi = (p11 - p_a * p_b) / s
    assert rho_bounds(p_a, p_b) == pytest.approx((phi.min(), phi.max()), rel=1e-12)
    cells = cells_from_margins(p_a, p_b, 0.25)
    want11 = p_a * p_b + 0.25 * s
    assert cells == pytest.approx((want11, p_a - want11, p_b - want11, 1 - p_a - p_b + want11), rel=1e-12)
    assert margins_from_cells(0.3, 0.25, 0.1, 0.35) == pytest.approx(
        (0.55, 0.4, (0.3 - 0.55 * 0.4) / math.sqrt(0.55 * 0.45 * 0.4 * 0.6)), rel=1e-12)


def test_discordance_design_one_sided_exact_power_is_the_enumerated_mcnemar_power():
    """From (p_a, p_b, discordance): p10 = (p_d + delta)/2 (A right only), p01 = (p_d - delta)/2. The exact power
    of the one-sided exact McNemar test, enumerated here: m ~ Binomial(n, p_d) discordant items, b | m ~
    Binomial(m, p10/p_d), reject "greater" when P(B >= b | m, 1/2) <= alpha (scipy). Sized for p10 and p01 swapped
    (power 0.77 becomes about 0.0002)."""
    from llm_power.planning import power

    n, p_a, p_b, p_d, alpha = 120, 0.62, 0.5, 0.3, 0.05
    p10 = (p_d + (p_a - p_b)) / 2
    total = 0.0
    for m in range(n + 1):
        b = np.arange(m + 1)
        reject = stats.binom.sf(b - 1, m, 0.5) <= alpha
        total += stats.binom.pmf(m, n, p_d) * float(np.sum(stats.binom.pmf(b, m, p10 / p_d) * reject))
    got = power(n, p_a, p_b, discordance=p_d, method="exact", alternative="greater")
    assert got == pytest.approx(total, abs=1e-12) and 0.5 < total < 0.99


def test_shortcut_by_hand():
    """The recipe n_h = (1 - rho) K / h^2, h = 2 asin sqrt(p_a) - 2 asin sqrt(p_b); its constant C(p, rho) =
    |(1 + rho)(1 - 2p)^2 / (16 (1 - rho) u^2) - 1/(6u)| / 2 (u = p(1 - p); SPEC section 4). Sized for (1 + rho) in
    either, and 1/(3u) for 1/(6u)."""
    from llm_power.planning import sample_size_shortcut, shortcut_constant

    k = (stats.norm.isf(0.025) + stats.norm.ppf(0.8)) ** 2
    for p_a, p_b, rho in [(0.65, 0.6, 0.3), (0.9, 0.8, 0.6), (0.3, 0.2, -0.1)]:
        h = 2 * math.asin(math.sqrt(p_a)) - 2 * math.asin(math.sqrt(p_b))
        assert sample_size_shortcut(p_a, p_b, rho=rho) == math.ceil((1 - rho) * k / h**2)
    for p, rho in [(0.8, 0.5), (0.3, 0.1), (0.6, -0.4)]:
        u = p * (1 - p)
        want = abs((1 + rho) * (1 - 2 * p) ** 2 / (16 * (1 - rho) * u * u) - 1 / (6 * u)) / 2
        assert shortcut_constant(p, rho) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("p_a", "p_b", "n"), [(0.62, 0.60, 1000), (0.7, 0.55, 150), (0.3, 0.34, 2000)])
def test_paired_bounds_by_hand(p_a, p_b, n):
    """Over the Frechet range of the discordance [|delta|, min(p_a + p_b, 2 - p_a - p_b)]: McNemar's continuity-
    corrected z = (n|delta| - 1)/sqrt(n pi) (two-sided normal p, scipy) and N* = K (pi - delta^2)/delta^2. Sized for
    the continuity correction dropped and N* without - delta^2."""
    from llm_power.planning import paired_bounds

    delta = p_a - p_b
    lo, hi = abs(delta), min(p_a + p_b, 2 - p_a - p_b)
    k = (stats.norm.isf(0.025) + stats.norm.ppf(0.8)) ** 2
    r = paired_bounds(p_a, p_b, n)
    assert (r.discordance_low, r.discordance_high) == pytest.approx((lo, hi), rel=1e-12)
    for pi, pv, ns in ((lo, r.pvalue_low, r.n_star_low), (hi, r.pvalue_high, r.n_star_high)):
        assert pv == pytest.approx(2 * stats.norm.sf(max(n * abs(delta) - 1, 0) / math.sqrt(n * pi)), rel=1e-9,
                                   abs=1e-300)
        assert ns == pytest.approx(k * (pi - delta**2) / delta**2, rel=1e-10, abs=1e-12)


def test_aggregate_interval_from_a_standard_error_is_two_sided():
    """A score that is no count of 0/1 items, with its standard error: value +- z_{1-(1-level)/2} SE (scipy). Sized
    for a one-sided quantile."""
    from llm_power.planning import aggregate_interval

    lo, hi, kind = aggregate_interval(0.4237, 100, 0.05, 0.9)
    z = stats.norm.isf(0.05)
    assert kind == "normal" and (lo, hi) == pytest.approx((0.4237 - z * 0.05, 0.4237 + z * 0.05), rel=1e-12)


def test_calibrate_sizes_with_the_plug_in_variance_of_each_kind():
    """calibrate's default n is N* = ceil(K var / delta^2): for 0/1 scores the plug-in (b + c)/N - ((b - c)/N)^2
    (SPEC section 4: ddof 0), for graded scores the sample variance (ddof 1). Sized for either ddof swapped (the
    numbers below differ by 4 and 2 items)."""
    from llm_power import calibrate

    k = (stats.norm.isf(0.025) + stats.norm.ppf(0.8)) ** 2
    b, c, n = 12, 4, 40  # 0/1: 12 A-only, 4 B-only of 40 items
    x = np.r_[np.ones(b), np.zeros(c), np.ones(10), np.zeros(n - b - c - 10)]
    y = np.r_[np.zeros(b), np.ones(c), np.ones(10), np.zeros(n - b - c - 10)]
    var = (b + c) / n - ((b - c) / n) ** 2
    want = math.ceil(k * var / ((b - c) / n) ** 2)
    assert math.ceil(k * np.var(x - y, ddof=1) / ((b - c) / n) ** 2) != want
    assert calibrate(x, y, n_sims=20, rng=0).n == want
    rng = np.random.default_rng(3)
    g = rng.normal(0.3, 1.0, 30)
    h = np.zeros(30)
    want = math.ceil(k * np.var(g, ddof=1) / g.mean() ** 2)
    assert math.ceil(k * np.var(g) / g.mean() ** 2) != want
    assert calibrate(g, h, n_sims=20, rng=0).n == want


@pytest.mark.parametrize(("p_a", "p_b"), [(0.3, 0.2), (0.8, 0.75)])
def test_a_discordance_beyond_the_frechet_bound_is_refused(p_a, p_b):
    """Two 0/1 margins disagree on at most max over admissible p11 of p_a + p_b - 2 p11 (p11 >= max(0, p_a + p_b -
    1)): 0.5 at (0.3, 0.2), 0.45 at (0.8, 0.75) -- found here by a scan of p11. Just below it a design is sized,
    just above it refused. Sized for max for min in the bound (which would admit 1.5 and 1.55)."""
    from llm_power.planning import sample_size

    p11 = np.linspace(max(0.0, p_a + p_b - 1), min(p_a, p_b), 100_001)
    most = float(np.max(p_a + p_b - 2 * p11))
    assert sample_size(p_a, p_b, discordance=most - 1e-6, method="connor") >= 1
    with pytest.raises(ValueError, match="infeasible design: discordance"):
        sample_size(p_a, p_b, discordance=min(most + 0.05, 0.99), method="connor")


def test_simulated_pairs_have_the_cells_of_their_margins_and_rho():
    """simulate_pairs draws items from the 2x2 cells p11 = p_a p_b + rho sqrt(p_a q_a p_b q_b), p10 = p_a - p11,
    p01 = p_b - p11 (written out): over 100,000 simulated items each cell's share is within 5 SE (SE <= 0.0016).
    Sized for model B read from the wrong cells (its accuracy p11 + p00 = 0.67 instead of 0.60)."""
    from llm_power.planning import simulate_pairs

    p_a, p_b, rho = 0.65, 0.6, 0.3
    p11 = p_a * p_b + rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    want = {(1, 1): p11, (1, 0): p_a - p11, (0, 1): p_b - p11, (0, 0): 1 - p_a - p_b + p11}
    a, b = simulate_pairs(2000, p_a, p_b, rho=rho, n_sims=50, rng=4)
    total = a.size
    for (x, y), p in want.items():
        share = np.mean((a == x) & (b == y))
        assert abs(share - p) < 5 * math.sqrt(p * (1 - p) / total), ((x, y), share, p)


def test_calibrate_power_is_the_enumerated_power_of_its_test():
    """calibrate resamples a 0/1 pair through its 2x2 table (30% A only, 10% B only): at n = 40 items its empirical
    power (20,000 resamples, SE 0.0035) equals the exact power of its test, enumerated here over every (b, c) of the
    trinomial (scipy): the plug-in z test, z = (b - c)/n / sqrt(((b + c)/n - ((b - c)/n)^2)/n) against
    z_{0.975}; and the exact McNemar test, two-sided binomial p = min(1, 2 min(P(B <= b), P(B >= b))), B ~
    Binomial(b + c, 1/2). Sized for the plug-in variance without - delta^2 (power 0.56 -> 0.52)."""
    from llm_power import calibrate

    n, p10, p01 = 40, 0.3, 0.1
    x = np.r_[np.ones(30), np.zeros(10), np.ones(35), np.zeros(25)]
    y = np.r_[np.zeros(30), np.ones(10), np.ones(35), np.zeros(25)]
    z_crit = stats.norm.isf(0.025)
    power_z = power_exact = 0.0
    for b in range(n + 1):
        c = np.arange(n - b + 1)
        prob = stats.multinomial.pmf(np.c_[np.full(c.size, b), c, n - b - c], n, [p10, p01, 1 - p10 - p01])
        mean, v = (b - c) / n, (b + c) / n - ((b - c) / n) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(v > 0, mean / np.sqrt(v / n), 0.0)
        power_z += float(np.sum(prob * (np.abs(z) > z_crit)))
        m = b + c
        p = np.minimum(1.0, 2 * np.minimum(stats.binom.cdf(b, m, 0.5), stats.binom.sf(b - 1, m, 0.5)))
        power_exact += float(np.sum(prob * (p <= 0.05)))
    for method, want in (("z", power_z), ("mcnemar_exact", power_exact)):
        res = calibrate(x, y, n=n, n_sims=20_000, method=method, rng=5)
        assert abs(res.empirical_power - want) < 4 * math.sqrt(want * (1 - want) / 20_000), (method, res, want)
