"""Planning: SPEC §5 reference values and statsmodels where the formulas coincide."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import power_proportions_2indep, samplesize_proportions_2indep_onetail

from llm_power import (
    bonferroni_factor,
    discordance_from_baseline,
    mde,
    power,
    sample_size,
    sample_size_shortcut,
    shortcut_constant,
)
from llm_power.planning import k_factor, unrounded_sample_size


def test_spec_k_factor():
    assert round(k_factor(), 5) == 7.84888  # SPEC §4: K = 7.84888 at 0.05/0.8 two-sided


def test_spec_paper_n_star_and_shortcut():
    # SPEC §5: (0.65, 0.60, 0.30): wald 1028; shortcut 515; connor 1034 (raw 1033.06)
    assert sample_size(0.65, 0.60, rho=0.30) == 1028
    assert sample_size_shortcut(0.65, 0.60, rho=0.30) == 515
    assert sample_size(0.65, 0.60, rho=0.30, method="connor") == 1034
    assert round(unrounded_sample_size(0.65, 0.60, rho=0.30, method="connor"), 2) == 1033.06
    # SPEC §5: (0.6, 0.5, rho=0) / (0.6, 0.5, rho=0.6): 385 / 154; shortcut at rho=0.6: 78
    assert sample_size(0.6, 0.5, rho=0.0) == 385
    assert sample_size(0.6, 0.5, rho=0.6) == 154
    assert sample_size_shortcut(0.6, 0.5, rho=0.6) == 78


def test_spec_connor_examples():
    # SPEC §5: Connor p10 = 0.05, p01 = 0.45 -> n = 23 (raw 22.01): p_d = 0.5, delta = -0.4
    assert sample_size(0.5, 0.9, discordance=0.5, method="connor") == 23
    assert round(unrounded_sample_size(0.5, 0.9, discordance=0.5, method="connor"), 2) == 22.01
    # SPEC §5: Connor p_d = 0.45, delta = 0.15 -> n = 155 (raw 154.60)
    assert sample_size(0.6, 0.45, discordance=0.45, method="connor") == 155
    assert round(unrounded_sample_size(0.6, 0.45, discordance=0.45, method="connor"), 2) == 154.60


@pytest.mark.parametrize(
    ("rho", "n", "raw"),
    [(0.0, 6277, 6276.7), (0.3, 4394, 4393.0), (0.5, 3138, None), (0.7, 1882, None), (0.9, 626, None)],
)
def test_spec_seed_table_n_by_rho(rho, n, raw):
    # SPEC §5: p = 0.8, delta = 0.02, connor, p_d = 2p(1-p)(1-rho)
    pd = discordance_from_baseline(0.8, rho)
    assert sample_size(0.81, 0.79, discordance=pd, method="connor") == n
    if raw is not None:
        assert round(unrounded_sample_size(0.81, 0.79, discordance=pd, method="connor"), 1) == raw


def test_spec_seed_table_unpaired():
    # SPEC §5: unpaired 6280 (raw 6279.1) per group
    assert sample_size(0.81, 0.79, design="unpaired") == 6280
    assert round(unrounded_sample_size(0.81, 0.79, design="unpaired"), 1) == 6279.1


MDE_TABLE = [  # SPEC §5: MDE at p = 0.8 in points: unpaired / paired connor rho=0 / rho=0.7
    (80, 17.72, 17.46, 9.56),
    (164, 12.38, 12.29, 6.73),
    (198, 11.26, 11.20, 6.13),
    (1319, 4.36, 4.36, 2.39),
    (14000, 1.34, 1.34, 0.73),
]


@pytest.mark.parametrize(("n", "unpaired", "rho0", "rho07"), MDE_TABLE)
def test_spec_mde_table(n, unpaired, rho0, rho07):
    assert round(100 * mde(n, p=0.8, design="unpaired"), 2) == unpaired
    assert round(100 * mde(n, p=0.8, rho=0.0, method="connor"), 2) == rho0
    assert round(100 * mde(n, p=0.8, rho=0.7, method="connor"), 2) == rho07


def test_spec_bonferroni_factor_and_lemma_constant():
    assert round(bonferroni_factor(40), 3) == 2.109  # SPEC §5
    for rho in (-0.5, 0.0, 0.3, 0.6, 0.9):
        assert shortcut_constant(0.5, rho) == pytest.approx(1 / 3, abs=1e-15)  # SPEC §5: C(0.5, rho) = 1/3


def test_bonferroni_factor_equals_n_star_ratio():
    for m in (2, 5, 40, 100):
        ratio = unrounded_sample_size(0.65, 0.6, rho=0.3, alpha=0.05 / m) / unrounded_sample_size(0.65, 0.6, rho=0.3)
        assert ratio == pytest.approx(bonferroni_factor(m), rel=1e-12)


def test_mde_inverts_sample_size():
    for method in ("wald", "connor"):
        for n in (50, 500, 5000):
            d = mde(n, p=0.7, rho=0.4, method=method)
            pd = discordance_from_baseline(0.7, 0.4)
            assert unrounded_sample_size(0.7 + d / 2, 0.7 - d / 2, discordance=pd, method=method) == pytest.approx(n, rel=1e-8)
    for method in ("wald", "per_arm", "fleiss"):
        d = mde(700, p=0.6, design="unpaired", method=method)
        assert unrounded_sample_size(0.6 + d / 2, 0.6 - d / 2, design="unpaired", method=method) == pytest.approx(700, rel=1e-8)


# --- statsmodels, where the formulas coincide ------------------------------------------------------

@pytest.mark.parametrize(("p_a", "p_b"), [(0.65, 0.6), (0.8, 0.78), (0.3, 0.2), (0.9, 0.95)])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_unpaired_power_equals_statsmodels_normal_ind_power(p_a, p_b, alternative):
    # Our unpaired "wald"/"normal" power uses the pooled variance 2 pbar qbar for both hypotheses:
    # statsmodels' NormalIndPower with effect size delta / sqrt(pbar qbar) and ratio 1.
    pbar = (p_a + p_b) / 2
    es = (p_a - p_b) / math.sqrt(pbar * (1 - pbar))
    sm_alt = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}[alternative]
    for n in (50, 400, 3000):
        ours = power(n, p_a, p_b, design="unpaired", alternative=alternative)
        ref = NormalIndPower().power(es, nobs1=n, alpha=0.05, ratio=1, alternative=sm_alt)
        assert ours == pytest.approx(ref, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize(("p_a", "p_b"), [(0.65, 0.6), (0.8, 0.78), (0.3, 0.2)])
def test_unpaired_sample_size_matches_statsmodels_solver(p_a, p_b):
    pbar = (p_a + p_b) / 2
    es = abs(p_a - p_b) / math.sqrt(pbar * (1 - pbar))
    ref = NormalIndPower().solve_power(es, nobs1=None, alpha=0.05, power=0.8, ratio=1)
    ours = unrounded_sample_size(p_a, p_b, design="unpaired")
    # statsmodels also counts the (tiny) rejection probability in the wrong tail, so its n is
    # at most marginally smaller (and its root-finder stops at ~1e-6 relative precision); the
    # one-sided formulas coincide exactly.
    assert ref <= ours + 1e-9 and ours == pytest.approx(ref, rel=2e-5)
    one = NormalIndPower().solve_power(es, nobs1=None, alpha=0.05, power=0.8, ratio=1, alternative="larger")
    ours_one = unrounded_sample_size(max(p_a, p_b), min(p_a, p_b), design="unpaired", alternative="greater")
    assert ours_one == pytest.approx(one, rel=2e-5)


@pytest.mark.parametrize(("p_a", "p_b"), [(0.65, 0.6), (0.8, 0.78), (0.3, 0.2), (0.5, 0.4)])
def test_unpaired_fleiss_power_equals_statsmodels_power_proportions_2indep(p_a, p_b):
    for n in (60, 500, 4000):
        ours = power(n, p_a, p_b, design="unpaired", method="fleiss")
        ref = power_proportions_2indep(p_a - p_b, p_b, n, ratio=1, alpha=0.05, alternative="two-sided").power
        assert ours == pytest.approx(ref, rel=1e-9)


def test_unpaired_fleiss_sample_size_equals_statsmodels_onetail():
    for p_a, p_b in [(0.65, 0.6), (0.8, 0.75), (0.3, 0.2)]:
        ref = samplesize_proportions_2indep_onetail(p_a - p_b, p_b, power=0.8, ratio=1, alpha=0.05,
                                                    alternative="two-sided")
        ours = unrounded_sample_size(p_a, p_b, design="unpaired", method="fleiss")
        assert ours == pytest.approx(ref, rel=1e-9)
