"""A registry is the only list: each family of variants (paired tests, design effects, formats,
regimes) is a registry the code iterates; the plain option tuples that keep ``--help`` light
(``llm_power._core.options``) are checked equal to the registries' keys here.
"""

from __future__ import annotations

import numpy as np
import pytest

import llm_power as lp
from llm_power._core.options import COMPARE_METHOD_NAMES
from llm_power._kernel.variance import DESIGN_EFFECTS
from llm_power.cli._types import COMPARE_METHODS as CLI_METHODS
from llm_power.cli._types import DESIGN_EFFECTS as CLI_DESIGN_EFFECTS
from llm_power.cli._types import INPUT_FORMATS
from llm_power.paired._registry import SIMULATION_TESTS, TESTS
from llm_power.resolution import REGIMES


def test_option_tuples_equal_the_registries():
    assert set(lp.COMPARE_METHODS) == {"auto", *TESTS}
    assert tuple(CLI_METHODS) == (*lp.COMPARE_METHODS, "cluster_t")
    # every test but the generic "mcnemar" (exact or asymptotic by the count) has a simulation recipe
    assert set(SIMULATION_TESTS) == set(TESTS) - {"mcnemar"}
    assert tuple(CLI_DESIGN_EFFECTS) == tuple(DESIGN_EFFECTS)
    assert COMPARE_METHOD_NAMES == lp.COMPARE_METHODS
    assert tuple(INPUT_FORMATS) == tuple(lp.io.FORMATS)  # "auto" first, then the registry's formats
    assert [r.key for r in REGIMES] == ["iid", "corrected", "cluster", "anytime", "runs"]


@pytest.mark.parametrize("name", sorted(TESTS))
def test_compare_runs_every_registered_test_and_reports_it(name):
    rng = np.random.default_rng(3)
    a = (rng.random(120) < 0.7).astype(float)
    b = np.where(rng.random(120) < 0.3, 1.0 - a, a)
    res = lp.compare(a, b, method=name, n_resamples=400, rng=0)
    assert res.method.startswith(name)  # "mcnemar" reports the variant it ran
    lo, hi = res.confidence_interval()
    assert lo <= res.delta <= hi


def test_a_test_that_needs_0_1_scores_refuses_graded_ones():
    needs_binary = sorted(name for name, t in TESTS.items() if t.binary_only)
    assert needs_binary == ["mcnemar", "mcnemar_asymptotic", "mcnemar_exact", "mcnemar_mid_p"]
    for name in needs_binary:
        with pytest.raises(ValueError, match="needs 0/1 scores"):
            lp.compare([0.5, 0.2, 0.9], [0.1, 0.3, 0.4], method=name)


def test_design_effect_models_pick_their_variance():
    rng = np.random.default_rng(1)
    cluster = np.repeat(np.arange(40), 25)
    bump = rng.normal(0, 0.4, 40)[cluster]
    a = (rng.random(1000) < 1 / (1 + np.exp(-(0.8 + bump)))).astype(float)
    b = (rng.random(1000) < 1 / (1 + np.exp(-(0.6 + bump)))).astype(float)
    seen = {}
    for name in DESIGN_EFFECTS:
        res = lp.compare(a, b, cluster=cluster, design_effect=name)
        seen[name] = res.design_effect
        assert res.design_effect_method == name
    # equal cluster sizes: CR2 = CR1, and the ANOVA (Kish) and mean-size forms coincide
    assert seen["robust"] == pytest.approx(seen["cr1"])
    assert seen["anova"] == pytest.approx(seen["paper"])


@pytest.mark.parametrize("name", sorted(SIMULATION_TESTS))
def test_simulated_power_runs_every_test_of_the_registry(name):
    res = lp.simulated_power(60, 0.7, 0.6, rho=0.3, method=name, n_sims=40, n_resamples=99, rng=1)
    assert res.test == name and 0.0 <= res.power <= 1.0
