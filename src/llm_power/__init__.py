"""llm-power: statistically honest numbers for LLM evaluations.

- one score's uncertainty: :func:`proportion_ci`, :func:`coverage`, :func:`rule_of_three`,
  :func:`half_width`, :func:`n_for_half_width`;
- two models on the same items: :func:`compare` (one line), the paired tests :func:`mcnemar`,
  :func:`paired_bootstrap`, :func:`permutation_test`, :func:`sign_test`, :func:`wilcoxon`,
  :func:`paired_t`, :func:`cochran_q`, :func:`five_by_two_cv` (and :func:`unpaired_z` for
  contrast), :func:`paired_difference_ci` and :func:`effect_sizes`;
- planning: :func:`sample_size`, :func:`mde`, :func:`power`, :func:`power_curve`,
  :func:`sample_size_shortcut` (the wrong recipe), :func:`bonferroni_factor`, :func:`type_s_m`,
  :func:`simulated_power`; clustering (:func:`icc_anova`, :func:`design_effect`,
  :func:`cluster_robust_se`); several samples per item (:func:`variance_components`,
  :func:`repeated_sampling_plan`);
- many comparisons: :func:`adjust_pvalues`, :func:`partial_conjunction`, :func:`count_effects`,
  :func:`simulate_error_rates`;
- leaderboard resolution: :func:`diagnose` (q = N/N* per pair under IID, multiplicity,
  clustering and anytime-valid regimes), :func:`calibrate`, and the streaming
  :class:`SequentialMonitor`.

>>> import llm_power as lp
>>> lo, hi = lp.proportion_ci(17, 20)
>>> print(f"85% on 20 items: [{lo:.1%}, {hi:.1%}]")
85% on 20 items: [64.0%, 94.8%]
"""

from typing import TYPE_CHECKING, Any

from ._core.lazy import lazy_names
from ._core.renderer import use_renderer
from ._version import __version__


def _report_layer() -> Any:
    """The report layer that renders results (``Result._repr_html_``, ``to_html``, ...), installed
    in the core below: the core is given it and never imports it.
    """
    from .report import notebook

    return notebook


use_renderer(_report_layer)


if TYPE_CHECKING:  # the names, for type checkers and documentation tools; at run time see __getattr__
    from ._core.results import ConfidenceInterval
    from .clustering import DesignEffectsResult, ICCResult, cluster_robust_se, design_effect, design_effects, icc_anova
    from .engines import bradley_terry_table, diagnose_files, read_matrix
    from .errors import (
        ApproximationWarning,
        DataError,
        DegenerateDataWarning,
        FewClustersWarning,
        InfeasibleDesignWarning,
        LLMPowerError,
        LLMPowerWarning,
    )
    from .gating import GateResult, gate
    from .integrations.mlflow import log_mlflow, read_mlflow
    from .integrations.otel import otel_events
    from .integrations.receipts import ReceiptCheck, receipt, verify_receipt, write_receipt
    from .integrations.wandb import log_wandb
    from .intervals import INTERVAL_METHODS, coverage, half_width, n_for_half_width, proportion_ci, rule_of_three
    from .io import align_results, align_runs, read_battles, read_results, read_runs
    from .matrix import RunScores, ScoreMatrix
    from .multiplicity import (
        ADJUST_METHODS,
        CountEffectsResult,
        ErrorRatesResult,
        adjust_pvalues,
        bonferroni_factor,
        count_effects,
        e_bh,
        partial_conjunction,
        simulate_error_rates,
    )
    from .paired import (
        COMPARE_METHODS,
        PAIRED_CI_METHODS,
        BootstrapResult,
        Comparison,
        EffectSizesResult,
        McNemarResult,
        PermutationResult,
        TestResult,
        cochran_q,
        compare,
        effect_sizes,
        five_by_two_cv,
        mcnemar,
        mcnemar_from_counts,
        paired_bootstrap,
        paired_difference_ci,
        paired_difference_ci_from_counts,
        paired_t,
        permutation_test,
        sign_test,
        unpaired_z,
        wilcoxon,
    )
    from .planning import (
        CalibrationResult,
        LeaderboardPlan,
        PowerSimulationResult,
        ShortcutRatioResult,
        TypeSMResult,
        cells_from_margins,
        discordance_from_baseline,
        margins_from_cells,
        mde,
        plan_leaderboard,
        power,
        power_curve,
        rho_bounds,
        sample_size,
        sample_size_shortcut,
        shortcut_constant,
        shortcut_prescreen,
        shortcut_ratio,
        simulate_pairs,
        simulated_power,
        type_s_m,
    )
    from .preferences import (
        AgreementResult,
        ArenaDiagnosis,
        ArenaFragilityResult,
        ArenaMonitor,
        ArenaMonitorResult,
        BradleyTerryResult,
        LengthBiasResult,
        PPIResult,
        WinRateComparison,
        WinRateResult,
        arena_diagnose,
        arena_fragility,
        bradley_terry,
        bradley_terry_shards,
        compare_win_rates,
        judge_agreement,
        judge_vs_majority,
        length_bias,
        majority_vote,
        monitor_battles,
        ppi_labels_needed,
        ppi_mean,
        ppi_mean_difference,
        swap_consistency,
        win_rate,
    )
    from .rankings import (
        FragilityResult,
        RankIntervalsResult,
        RankReport,
        WinnerResult,
        fragility,
        rank_intervals,
        rank_report,
        winners_curse,
    )
    from .report.eee import to_eee, write_eee
    from .report.schema import json_schema
    from .resolution import DiagnoseOptions, Diagnosis, PairResolution, calibrate, diagnose, pairwise_statistics
    from .runs import NoiseReport, RunPlanResult, RunVarianceResult, noise, plan_runs, run_variance
    from .samples import (
        PassAtKComparison,
        PassAtKPlanResult,
        PassAtKResult,
        RepeatedSamplingPlanResult,
        VarianceComponentsResult,
        compare_pass_at_k,
        maj_at_k,
        maj_at_k_ci,
        paired_variance_components,
        pass_at_k,
        pass_at_k_ci,
        pass_at_k_matrix,
        pass_at_k_mde,
        pass_at_k_plan,
        pass_hat_k,
        repeated_sampling_plan,
        sample_size_repeated,
        variance_components,
    )
    from .sequential import (
        LeaderboardMonitor,
        LeaderboardMonitorResult,
        MonitorResult,
        SequentialMonitor,
        anytime_critical_value,
    )
    from .subsets import (
        SubsetCompareResult,
        SubsetEstimateResult,
        SubsetPlan,
        SubsetSequence,
        SubsetSequenceResult,
        read_subset_plan,
        subset_compare,
        subset_estimate,
        subset_plan,
    )

#: public name -> the submodule that defines it; imported on first use, so that `import llm_power`
#: (and the CLI's --help) does not pay for scipy.stats, pandas or matplotlib until they are needed
_LAZY = {
    "ADJUST_METHODS": ".multiplicity",
    "adjust_pvalues": ".multiplicity",
    "e_bh": ".multiplicity",
    "align_results": ".io",
    "align_runs": ".io",
    "read_runs": ".io",
    "RunScores": ".matrix",
    "ScoreMatrix": ".matrix",
    "RankIntervalsResult": ".rankings",
    "rank_intervals": ".rankings",
    "RankReport": ".rankings",
    "rank_report": ".rankings",
    "FragilityResult": ".rankings",
    "WinnerResult": ".rankings",
    "fragility": ".rankings",
    "winners_curse": ".rankings",
    "to_eee": ".report.eee",
    "json_schema": ".report.schema",
    "read_mlflow": ".integrations.mlflow",
    "log_mlflow": ".integrations.mlflow",
    "log_wandb": ".integrations.wandb",
    "otel_events": ".integrations.otel",
    "SubsetCompareResult": ".subsets",
    "SubsetEstimateResult": ".subsets",
    "SubsetPlan": ".subsets",
    "SubsetSequence": ".subsets",
    "SubsetSequenceResult": ".subsets",
    "read_subset_plan": ".subsets",
    "subset_compare": ".subsets",
    "subset_estimate": ".subsets",
    "subset_plan": ".subsets",
    "write_eee": ".report.eee",
    "NoiseReport": ".runs",
    "RunPlanResult": ".runs",
    "RunVarianceResult": ".runs",
    "noise": ".runs",
    "plan_runs": ".runs",
    "run_variance": ".runs",
    "anytime_critical_value": ".sequential",
    "ApproximationWarning": ".errors",
    "bonferroni_factor": ".multiplicity",
    "BootstrapResult": ".paired",
    "bradley_terry": ".preferences",
    "bradley_terry_shards": ".preferences",
    "AgreementResult": ".preferences",
    "judge_agreement": ".preferences",
    "judge_vs_majority": ".preferences",
    "length_bias": ".preferences",
    "LengthBiasResult": ".preferences",
    "majority_vote": ".preferences",
    "swap_consistency": ".preferences",
    "ArenaDiagnosis": ".preferences",
    "ArenaMonitor": ".preferences",
    "ArenaMonitorResult": ".preferences",
    "monitor_battles": ".preferences",
    "arena_diagnose": ".preferences",
    "arena_fragility": ".preferences",
    "ArenaFragilityResult": ".preferences",
    "read_battles": ".io",
    "PPIResult": ".preferences",
    "PassAtKComparison": ".samples",
    "PassAtKResult": ".samples",
    "compare_pass_at_k": ".samples",
    "maj_at_k": ".samples",
    "maj_at_k_ci": ".samples",
    "pass_at_k": ".samples",
    "pass_at_k_ci": ".samples",
    "pass_at_k_matrix": ".samples",
    "pass_hat_k": ".samples",
    "PassAtKPlanResult": ".samples",
    "pass_at_k_plan": ".samples",
    "pass_at_k_mde": ".samples",
    "ppi_labels_needed": ".preferences",
    "ppi_mean": ".preferences",
    "ppi_mean_difference": ".preferences",
    "WinRateComparison": ".preferences",
    "WinRateResult": ".preferences",
    "compare_win_rates": ".preferences",
    "win_rate": ".preferences",
    "BradleyTerryResult": ".preferences",
    "calibrate": ".resolution",
    "CalibrationResult": ".planning",
    "cells_from_margins": ".planning",
    "cluster_robust_se": ".clustering",
    "cochran_q": ".paired",
    "compare": ".paired",
    "COMPARE_METHODS": ".paired",
    "Comparison": ".paired",
    "ConfidenceInterval": "._core.results",
    "count_effects": ".multiplicity",
    "CountEffectsResult": ".multiplicity",
    "coverage": ".intervals",
    "DataError": ".errors",
    "DegenerateDataWarning": ".errors",
    "design_effect": ".clustering",
    "design_effects": ".clustering",
    "DesignEffectsResult": ".clustering",
    "diagnose": ".resolution",
    "receipt": ".integrations.receipts",
    "ReceiptCheck": ".integrations.receipts",
    "verify_receipt": ".integrations.receipts",
    "write_receipt": ".integrations.receipts",
    "diagnose_files": ".engines",
    "read_matrix": ".engines",
    "bradley_terry_table": ".engines",
    "Diagnosis": ".resolution",
    "DiagnoseOptions": ".resolution",
    "discordance_from_baseline": ".planning",
    "effect_sizes": ".paired",
    "EffectSizesResult": ".paired",
    "ErrorRatesResult": ".multiplicity",
    "FewClustersWarning": ".errors",
    "five_by_two_cv": ".paired",
    "gate": ".gating",
    "GateResult": ".gating",
    "half_width": ".intervals",
    "icc_anova": ".clustering",
    "ICCResult": ".clustering",
    "InfeasibleDesignWarning": ".errors",
    "INTERVAL_METHODS": ".intervals",
    "LeaderboardMonitor": ".sequential",
    "LeaderboardMonitorResult": ".sequential",
    "LeaderboardPlan": ".planning",
    "LLMPowerError": ".errors",
    "LLMPowerWarning": ".errors",
    "margins_from_cells": ".planning",
    "mcnemar": ".paired",
    "mcnemar_from_counts": ".paired",
    "McNemarResult": ".paired",
    "mde": ".planning",
    "MonitorResult": ".sequential",
    "n_for_half_width": ".intervals",
    "paired_bootstrap": ".paired",
    "PAIRED_CI_METHODS": ".paired",
    "paired_difference_ci": ".paired",
    "paired_difference_ci_from_counts": ".paired",
    "paired_t": ".paired",
    "paired_variance_components": ".samples",
    "PairResolution": ".resolution",
    "pairwise_statistics": ".resolution",
    "partial_conjunction": ".multiplicity",
    "permutation_test": ".paired",
    "plan_leaderboard": ".planning",
    "PermutationResult": ".paired",
    "power": ".planning",
    "power_curve": ".planning",
    "PowerSimulationResult": ".planning",
    "proportion_ci": ".intervals",
    "read_results": ".io",
    "repeated_sampling_plan": ".samples",
    "RepeatedSamplingPlanResult": ".samples",
    "rho_bounds": ".planning",
    "rule_of_three": ".intervals",
    "sample_size": ".planning",
    "sample_size_repeated": ".samples",
    "sample_size_shortcut": ".planning",
    "SequentialMonitor": ".sequential",
    "shortcut_constant": ".planning",
    "shortcut_prescreen": ".planning",
    "shortcut_ratio": ".planning",
    "ShortcutRatioResult": ".planning",
    "sign_test": ".paired",
    "simulate_error_rates": ".multiplicity",
    "simulate_pairs": ".planning",
    "simulated_power": ".planning",
    "TestResult": ".paired",
    "type_s_m": ".planning",
    "TypeSMResult": ".planning",
    "unpaired_z": ".paired",
    "variance_components": ".samples",
    "VarianceComponentsResult": ".samples",
    "wilcoxon": ".paired",
}

__all__ = [
    "ADJUST_METHODS",
    "AgreementResult",
    "ApproximationWarning",
    "ArenaDiagnosis",
    "ArenaFragilityResult",
    "ArenaMonitor",
    "ArenaMonitorResult",
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
    "LeaderboardPlan",
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
    "ReceiptCheck",
    "RepeatedSamplingPlanResult",
    "RunPlanResult",
    "RunScores",
    "RunVarianceResult",
    "ScoreMatrix",
    "SequentialMonitor",
    "ShortcutRatioResult",
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
    "bradley_terry_shards",
    "bradley_terry_table",
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
    "json_schema",
    "judge_agreement",
    "judge_vs_majority",
    "length_bias",
    "log_mlflow",
    "log_wandb",
    "maj_at_k",
    "maj_at_k_ci",
    "majority_vote",
    "margins_from_cells",
    "mcnemar",
    "mcnemar_from_counts",
    "mde",
    "monitor_battles",
    "n_for_half_width",
    "noise",
    "otel_events",
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
    "plan_leaderboard",
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
    "read_matrix",
    "read_mlflow",
    "read_results",
    "read_runs",
    "read_subset_plan",
    "receipt",
    "repeated_sampling_plan",
    "rho_bounds",
    "rule_of_three",
    "run_variance",
    "sample_size",
    "sample_size_repeated",
    "sample_size_shortcut",
    "shortcut_constant",
    "shortcut_prescreen",
    "shortcut_ratio",
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
    "verify_receipt",
    "wilcoxon",
    "win_rate",
    "winners_curse",
    "write_eee",
    "write_receipt",
]


#: results renamed to <Noun>Result (issue 11); the old names stay one release, with a warning
_RENAMED = {
    "PowerSimulation": "PowerSimulationResult",
    "EffectSizes": "EffectSizesResult",
    "ClusterSummary": "ICCResult",
    "DesignEffects": "DesignEffectsResult",
    "VarianceComponents": "VarianceComponentsResult",
    "RepeatedSamplingPlan": "RepeatedSamplingPlanResult",
    "MonitorState": "MonitorResult",
    "LeaderboardState": "LeaderboardMonitorResult",
    "ErrorRates": "ErrorRatesResult",
}


_public, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())


def __getattr__(name: str) -> object:
    """Public names, imported from their submodule on first use; deprecated names of renamed
    results (one release).
    """
    if name in _LAZY:
        return _public(name)
    if name in _RENAMED:
        from ._core.errors import warn

        warn(f"`llm_power.{name}` was renamed `{_RENAMED[name]}`; the old name will be removed in the next "
                      "release.", DeprecationWarning)
        return __getattr__(_RENAMED[name])
    msg = f"module 'llm_power' has no attribute {name!r}"
    raise AttributeError(msg)



# --- the pandas accessor (``df.llm_power``): registered when pandas is loaded, never loading it ---

class _AfterPandas:
    """A ``sys.meta_path`` finder that registers the accessor right after pandas is first imported."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:  # noqa: ARG002 - the protocol's
        if fullname != "pandas":
            return None
        import importlib.machinery
        import sys

        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module: Any) -> None:
            exec_module(module)
            from .integrations.pandas import register

            register()

        spec.loader.exec_module = exec_and_register  # type: ignore[method-assign]
        return spec


def _install_accessor() -> None:
    import sys

    if "pandas" in sys.modules:
        from .integrations.pandas import register

        register()
    elif not any(isinstance(f, _AfterPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterPandas())


_install_accessor()
