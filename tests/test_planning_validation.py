"""Bad input to the planning functions: clear errors, infeasible requests explained."""

from __future__ import annotations

import numpy as np
import pytest

from llm_power import (
    InfeasibleDesignWarning,
    bonferroni_factor,
    cells_from_margins,
    design_effect,
    mde,
    power,
    rho_bounds,
    repeated_sampling_plan,
    sample_size,
    sample_size_repeated,
    sample_size_shortcut,
    simulated_power,
    type_s_m,
)


def test_rho_outside_admissible_range_states_the_range():
    with pytest.raises(ValueError, match=r"rho=0\.95 is outside the admissible range \[-0\.60, 0\.90\] for p_a=0\.65, p_b=0\.6"):
        sample_size(0.65, 0.60, rho=0.95)
    with pytest.raises(ValueError, match=r"admissible range"):
        cells_from_margins(0.9, 0.2, rho=0.5)
    with pytest.raises(ValueError, match=r"admissible range"):
        sample_size_shortcut(0.65, 0.60, rho=-0.9)


def test_zero_gap():
    with pytest.raises(ValueError, match=r"`p_a` and `p_b` are equal \(delta = 0\)"):
        sample_size(0.7, 0.7, rho=0.3)
    with pytest.raises(ValueError, match=r"delta = 0"):
        sample_size(0.7, 0.7, design="unpaired")


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.2, -0.1])
def test_p_outside_open_unit_interval(bad):
    with pytest.raises(ValueError, match=r"`p_a` must be in \(0, 1\)"):
        sample_size(bad, 0.5)
    with pytest.raises(ValueError, match=r"`p` must be in \(0, 1\)"):
        mde(100, p=bad)


def test_power_not_above_alpha():
    with pytest.raises(ValueError, match=r"`power` must be greater than `alpha` \(0\.05\); got 0\.05"):
        sample_size(0.7, 0.6, power=0.05)
    with pytest.raises(ValueError, match=r"`power` must be greater than `alpha`"):
        mde(100, p=0.7, power=0.01)


def test_n_below_one():
    with pytest.raises(ValueError, match=r"`n` must be >= 1; got 0"):
        power(0, 0.7, 0.6)
    with pytest.raises(ValueError, match=r"`n` must be >= 1; got 0"):
        mde(0, p=0.7)


def test_infeasible_discordance_explains_why():
    with pytest.raises(ValueError, match=r"infeasible design: \|delta\| = 0\.1 needs discordance > \|delta\|"):
        sample_size(0.7, 0.6, discordance=0.05)


def test_wrong_direction_for_one_sided_alternative():
    with pytest.raises(ValueError, match=r"infeasible: alternative='greater' tests the other direction"):
        sample_size(0.6, 0.7, alternative="greater")


def test_unknown_design_and_method():
    with pytest.raises(ValueError, match=r"`design` must be one of 'paired', 'unpaired'; got 'independent'"):
        sample_size(0.7, 0.6, design="independent")
    with pytest.raises(ValueError, match=r"`method` must be one of 'connor', 'exact', 'wald'; got 'fleiss'"):
        sample_size(0.7, 0.6, method="fleiss")
    with pytest.raises(ValueError, match=r"`method` must be one of 'fleiss', 'per_arm', 'wald'; got 'connor'"):
        sample_size(0.7, 0.6, design="unpaired", method="connor")


def test_other_validation():
    with pytest.raises(ValueError, match=r"`design_effect` must be a number >= 1; got 0\.5"):
        sample_size(0.7, 0.6, design_effect=0.5)
    with pytest.raises(ValueError, match=r"`m` must be a positive integer"):
        bonferroni_factor(0)
    with pytest.raises(ValueError, match=r"`effect` must be a finite non-zero true effect"):
        type_s_m(0.0, 1.0)
    with pytest.raises(ValueError, match=r"`standard_error` must be positive"):
        type_s_m(1.0, 0.0)
    with pytest.raises(ValueError, match=r"`icc` must be in \[-1, 1\]"):
        design_effect(10, 2.0)
    with pytest.raises(ValueError, match=r"`samples_per_item` must be a positive integer"):
        sample_size_repeated(0.02, between=0.1, within=0.1, samples_per_item=0)
    with pytest.raises(ValueError, match=r"`between` must be a non-negative variance"):
        repeated_sampling_plan(0.02, between=-1, within=0.1)
    with pytest.raises(ValueError, match=r"`method` must be one of .*'wilcoxon'; got 'z'"):
        simulated_power(100, 0.7, 0.6, method="z")
    with pytest.raises(TypeError, match=r"give `p_a` and `p_b`"):
        simulated_power(100)
    with pytest.warns(InfeasibleDesignWarning, match=r"no feasible gap is detectable with n = 3"):
        assert np.isnan(mde(3, p=0.5, rho=0.9, method="connor"))


def test_power_at_the_default_sample_size_reaches_the_target():
    # issue 11: sample_size and power share one default model (the Wald model of the paper's N*);
    # power(sample_size(x)) was 0.798 < 0.8 when power defaulted to Connor's null variance.
    # Oracle: the closed form Phi(sqrt(n) |delta| / sigma_D - z_{1-alpha/2}) with scipy.
    from scipy import stats

    rng = np.random.default_rng(5)
    for _ in range(200):
        p_a, p_b = rng.uniform(0.05, 0.95, size=2)
        if abs(p_a - p_b) < 0.01:
            continue
        lo, hi = rho_bounds(p_a, p_b)
        rho = float(rng.uniform(max(lo, -0.5), min(hi, 0.9)))
        n = sample_size(p_a, p_b, rho=rho)
        got = power(n, p_a, p_b, rho=rho)
        assert got >= 0.8 - 1e-12
        p11 = p_a * p_b + rho * np.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
        sd = np.sqrt((p_a - p11) + (p_b - p11) - (p_a - p_b) ** 2)
        z = abs(p_a - p_b) * np.sqrt(n) / sd
        assert got == pytest.approx(stats.norm.cdf(z - stats.norm.ppf(0.975)) + stats.norm.cdf(-z - stats.norm.ppf(0.975)),
                                    rel=1e-9)


def test_power_curve_has_powers_signature_and_equals_power_pointwise():
    import inspect

    from llm_power import power_curve

    params = inspect.signature(power_curve).parameters
    assert list(params)[:3] == ["n", "p_a", "p_b"] and "kwargs" not in params
    assert {k: params[k].default for k in ("rho", "alpha", "method")} == {"rho": 0.0, "alpha": 0.05, "method": "normal"}
    ns = np.array([50, 200, 800])
    curve = power_curve(ns, 0.7, 0.65, rho=0.4, method="connor")
    assert curve.tolist() == [power(int(k), 0.7, 0.65, rho=0.4, method="connor") for k in ns]
    with pytest.raises(TypeError):
        power_curve(100, 0.7)  # p_b is required
