"""The public API is pinned, and the statistics core stays free of I/O, pandas and the CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import llm_power

SRC = Path(llm_power.__file__).resolve().parent
# the protocol layer (diagnose) may use pandas lazily for to_frame(), but never io/report/cli
PROTOCOL = ["resolution.py", "preferences.py", "judges.py", "arena.py", "passk.py", "passk_plan.py"]
# the statistics core: every top-level module but the protocol and the package plumbing (derived,
# so a new module is covered without editing this list)
CORE = sorted(p.name for p in SRC.glob("*.py")
              if p.name not in {"__init__.py", "__main__.py", "_version.py", *PROTOCOL})
#: what a renderer may import from the package: result types and formatting, no statistics
RENDERER_ALLOWED = {"..resolution", "..arena", ".._format", ".._results", "..", ".terminal", ".files", ".markdown", ".html",
                    ".terminal_report", ".view", ".arena"}

EXPECTED_ALL = [
    "ADJUST_METHODS",
    "AgreementResult",
    "ApproximationWarning",
    "ArenaDiagnosis",
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
    "Diagnosis",
    "EffectSizesResult",
    "ErrorRatesResult",
    "FewClustersWarning",
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
    "PAIRED_CI_METHODS",
    "PPIResult",
    "PairResolution",
    "PassAtKComparison",
    "PassAtKPlanResult",
    "PassAtKResult",
    "PermutationResult",
    "PowerSimulationResult",
    "RepeatedSamplingPlanResult",
    "SequentialMonitor",
    "TestResult",
    "TypeSMResult",
    "VarianceComponentsResult",
    "WinRateComparison",
    "WinRateResult",
    "__version__",
    "adjust_pvalues",
    "align_results",
    "anytime_critical_value",
    "arena_diagnose",
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
    "effect_sizes",
    "five_by_two_cv",
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
    "power",
    "power_curve",
    "ppi_labels_needed",
    "ppi_mean",
    "ppi_mean_difference",
    "proportion_ci",
    "read_battles",
    "read_results",
    "repeated_sampling_plan",
    "rho_bounds",
    "rule_of_three",
    "sample_size",
    "sample_size_repeated",
    "sample_size_shortcut",
    "shortcut_constant",
    "shortcut_prescreen",
    "sign_test",
    "simulate_error_rates",
    "simulate_pairs",
    "simulated_power",
    "swap_consistency",
    "type_s_m",
    "unpaired_z",
    "variance_components",
    "wilcoxon",
    "win_rate",
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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
    return names


def test_core_imports_no_io_report_cli_or_pandas():
    forbidden = ("pandas", "pyarrow", "rich", "matplotlib", "jinja2", ".io", ".report", ".cli", "..io")
    for name in CORE:
        for imported in _imports(SRC / name):
            assert not any(imported == f or imported.startswith(f + ".") for f in forbidden), (name, imported)


def test_protocol_imports_no_io_report_or_cli():
    for name in PROTOCOL:
        for imported in _imports(SRC / name):
            assert not any(imported.startswith(f) for f in (".io", ".report", ".cli")), (name, imported)


def test_core_list_is_derived_and_complete():
    assert {"planning.py", "_verdict.py", "_kernels.py", "_sufficient.py", "designs.py"} <= set(CORE)


def test_renderers_import_no_statistics():
    # renderers format results; a renderer that imports a statistics function recomputes something
    # the result should carry
    for path in sorted((SRC / "report").glob("*.py")):
        for imported in _imports(path):
            if imported.startswith("."):
                assert imported in RENDERER_ALLOWED, (path.name, imported)


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
