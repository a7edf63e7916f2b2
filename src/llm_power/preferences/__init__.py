"""Pairwise preferences: Bradley-Terry (and Davidson) fits with sandwich or bootstrap errors, the
arena's resolution report (through the resolution ``REGIMES``), win rates, LLM-judge agreement and
prediction-powered inference (PPI).

Each name is imported from its module on first use (``import llm_power.preferences`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._arena import ArenaDiagnosis, arena_diagnose
    from ._battles import MAX_MODELS, Battles, check_model_count, encode_battles
    from ._bradley_terry import bradley_terry
    from ._fit import Cells, fit_cells
    from ._fragility import ArenaFragilityResult, arena_fragility
    from ._judges import (
        AgreementResult,
        LengthBiasResult,
        judge_agreement,
        judge_vs_majority,
        length_bias,
        majority_vote,
        swap_consistency,
    )
    from ._monitor import ArenaMonitor, ArenaMonitorResult, monitor_battles
    from ._ppi import PPIResult, labels_only_interval, ppi_labels_needed, ppi_mean, ppi_mean_difference
    from ._ratings import BradleyTerryResult
    from ._sharded import bradley_terry_shards
    from ._winrates import WinRateComparison, WinRateResult, compare_win_rates, win_rate

#: public name -> the module of this family that defines it
_LAZY = {
    "AgreementResult": "._judges",
    "ArenaDiagnosis": "._arena",
    "ArenaFragilityResult": "._fragility",
    "ArenaMonitor": "._monitor",
    "ArenaMonitorResult": "._monitor",
    "monitor_battles": "._monitor",
    "arena_fragility": "._fragility",
    "Battles": "._battles",
    "BradleyTerryResult": "._ratings",
    "Cells": "._fit",
    "LengthBiasResult": "._judges",
    "MAX_MODELS": "._battles",
    "PPIResult": "._ppi",
    "WinRateComparison": "._winrates",
    "WinRateResult": "._winrates",
    "arena_diagnose": "._arena",
    "bradley_terry": "._bradley_terry",
    "bradley_terry_shards": "._sharded",
    "check_model_count": "._battles",
    "compare_win_rates": "._winrates",
    "encode_battles": "._battles",
    "fit_cells": "._fit",
    "judge_agreement": "._judges",
    "judge_vs_majority": "._judges",
    "labels_only_interval": "._ppi",
    "length_bias": "._judges",
    "majority_vote": "._judges",
    "ppi_labels_needed": "._ppi",
    "ppi_mean": "._ppi",
    "ppi_mean_difference": "._ppi",
    "swap_consistency": "._judges",
    "win_rate": "._winrates",
}

__all__ = [
    "AgreementResult",
    "ArenaDiagnosis",
    "ArenaFragilityResult",
    "ArenaMonitor",
    "ArenaMonitorResult",
    "Battles",
    "BradleyTerryResult",
    "Cells",
    "LengthBiasResult",
    "MAX_MODELS",
    "PPIResult",
    "WinRateComparison",
    "WinRateResult",
    "arena_diagnose",
    "arena_fragility",
    "bradley_terry",
    "bradley_terry_shards",
    "check_model_count",
    "compare_win_rates",
    "encode_battles",
    "fit_cells",
    "judge_agreement",
    "judge_vs_majority",
    "labels_only_interval",
    "length_bias",
    "majority_vote",
    "monitor_battles",
    "ppi_labels_needed",
    "ppi_mean",
    "ppi_mean_difference",
    "swap_consistency",
    "win_rate",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
