"""The public API is pinned (the layering -- what may import what -- is tests/test_layering.py, derived from the tree)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import llm_power

SRC = Path(llm_power.__file__).resolve().parent
EXPECTED_ALL = [
    "ADJUST_METHODS",
    "AgreementResult",
    "ApproximationWarning",
    "ArenaDiagnosis",
    "ArenaFragilityResult",
    "BootstrapResult",
    "BradleyTerryResult",
    "COMPARE_METHODS",
    "CalibrationResult",
    "Comparison",
    "ConfidenceInterval",
    "CountEffectsResult",
    "DataError",
    "DegenerateDataWarning",
    "DesignEffectsResult",
    "DiagnoseOptions",
    "Diagnosis",
    "EffectSizesResult",
    "ErrorRatesResult",
    "FewClustersWarning",
    "FragilityResult",
    "GateResult",
    "ICCResult",
    "INTERVAL_METHODS",
    "InfeasibleDesignWarning",
    "LLMPowerError",
    "LLMPowerWarning",
    "LeaderboardMonitor",
    "LeaderboardMonitorResult",
    "LengthBiasResult",
    "McNemarResult",
    "MonitorResult",
    "NoiseReport",
    "PAIRED_CI_METHODS",
    "PPIResult",
    "PairResolution",
    "PassAtKComparison",
    "PassAtKPlanResult",
    "PassAtKResult",
    "PermutationResult",
    "PowerSimulationResult",
    "RankIntervalsResult",
    "RankReport",
    "RepeatedSamplingPlanResult",
    "RunPlanResult",
    "RunScores",
    "RunVarianceResult",
    "SequentialMonitor",
    "SubsetCompareResult",
    "SubsetEstimateResult",
    "SubsetPlan",
    "SubsetSequence",
    "SubsetSequenceResult",
    "TestResult",
    "TypeSMResult",
    "VarianceComponentsResult",
    "WinRateComparison",
    "WinRateResult",
    "WinnerResult",
    "__version__",
    "adjust_pvalues",
    "align_results",
    "align_runs",
    "anytime_critical_value",
    "arena_diagnose",
    "arena_fragility",
    "bonferroni_factor",
    "bradley_terry",
    "calibrate",
    "cells_from_margins",
    "cluster_robust_se",
    "cochran_q",
    "compare",
    "compare_pass_at_k",
    "compare_win_rates",
    "count_effects",
    "coverage",
    "design_effect",
    "design_effects",
    "diagnose",
    "diagnose_files",
    "discordance_from_baseline",
    "e_bh",
    "effect_sizes",
    "five_by_two_cv",
    "fragility",
    "gate",
    "half_width",
    "icc_anova",
    "judge_agreement",
    "judge_vs_majority",
    "length_bias",
    "maj_at_k",
    "maj_at_k_ci",
    "majority_vote",
    "margins_from_cells",
    "mcnemar",
    "mcnemar_from_counts",
    "mde",
    "n_for_half_width",
    "noise",
    "paired_bootstrap",
    "paired_difference_ci",
    "paired_difference_ci_from_counts",
    "paired_t",
    "paired_variance_components",
    "pairwise_statistics",
    "partial_conjunction",
    "pass_at_k",
    "pass_at_k_ci",
    "pass_at_k_matrix",
    "pass_at_k_mde",
    "pass_at_k_plan",
    "pass_hat_k",
    "permutation_test",
    "plan_runs",
    "power",
    "power_curve",
    "ppi_labels_needed",
    "ppi_mean",
    "ppi_mean_difference",
    "proportion_ci",
    "rank_intervals",
    "rank_report",
    "read_battles",
    "read_results",
    "read_runs",
    "read_subset_plan",
    "repeated_sampling_plan",
    "rho_bounds",
    "rule_of_three",
    "run_variance",
    "sample_size",
    "sample_size_repeated",
    "sample_size_shortcut",
    "shortcut_constant",
    "shortcut_prescreen",
    "sign_test",
    "simulate_error_rates",
    "simulate_pairs",
    "simulated_power",
    "subset_compare",
    "subset_estimate",
    "subset_plan",
    "swap_consistency",
    "to_eee",
    "type_s_m",
    "unpaired_z",
    "variance_components",
    "wilcoxon",
    "win_rate",
    "winners_curse",
    "write_eee",
]


def test_all_is_pinned_and_sorted():
    assert llm_power.__all__ == EXPECTED_ALL
    assert llm_power.__all__ == sorted(llm_power.__all__)
    for name in llm_power.__all__:
        assert hasattr(llm_power, name), name


def test_spec_signatures():
    import inspect

    sig = inspect.signature(llm_power.proportion_ci)
    assert list(sig.parameters)[:2] == ["k", "n"]
    assert sig.parameters["method"].default == "wilson"
    assert sig.parameters["confidence_level"].default == 0.95
    assert sig.parameters["alternative"].default == "two-sided"
    assert all(sig.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY
               for p in ("method", "confidence_level", "alternative"))
    cov = inspect.signature(llm_power.coverage)
    assert cov.parameters["method"].default is inspect.Parameter.empty
    assert inspect.signature(llm_power.rule_of_three).parameters["confidence_level"].default == 0.95


def test_confidence_interval_is_a_namedtuple():
    ci = llm_power.proportion_ci(17, 20)
    assert ci._fields == ("low", "high")
    lo, hi = ci
    assert (lo, hi) == (ci.low, ci.high)


def test_importing_the_package_loads_no_heavy_optional_modules():
    code = "import sys, llm_power; print(sorted(m for m in ('pandas','rich','matplotlib','jinja2','statsmodels') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_py_typed_marker_is_shipped():
    assert (SRC / "py.typed").exists()


def test_renamed_results_keep_their_old_names_one_release():
    import warnings

    import pytest

    for old, new in llm_power._RENAMED.items():
        assert new.endswith("Result") and new in llm_power.__all__ and old not in llm_power.__all__
        with pytest.warns(DeprecationWarning, match=f"renamed `{new}`"):
            assert getattr(llm_power, old) is getattr(llm_power, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            llm_power.NoSuchThing  # noqa: B018
