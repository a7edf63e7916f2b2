"""Pairwise preferences: Bradley-Terry (and Davidson) fits with sandwich or bootstrap errors, the
arena's resolution report (through the resolution ``REGIMES``), win rates, LLM-judge agreement and
prediction-powered inference (PPI).
"""

from ._arena import (
    ArenaDiagnosis,
    arena_diagnose,
)
from ._battles import (
    MAX_MODELS,
    Battles,
    check_model_count,
    encode_battles,
)
from ._bradley_terry import (
    BradleyTerryResult,
    bradley_terry,
)
from ._fit import (
    Cells,
    fit_cells,
)
from ._judges import (
    AgreementResult,
    LengthBiasResult,
    judge_agreement,
    judge_vs_majority,
    length_bias,
    majority_vote,
    swap_consistency,
)
from ._ppi import (
    PPIResult,
    labels_only_interval,
    ppi_labels_needed,
    ppi_mean,
    ppi_mean_difference,
)
from ._winrates import (
    WinRateComparison,
    WinRateResult,
    compare_win_rates,
    win_rate,
)

__all__ = [
    "AgreementResult",
    "ArenaDiagnosis",
    "Battles",
    "BradleyTerryResult",
    "Cells",
    "LengthBiasResult",
    "MAX_MODELS",
    "PPIResult",
    "WinRateComparison",
    "WinRateResult",
    "arena_diagnose",
    "bradley_terry",
    "check_model_count",
    "compare_win_rates",
    "encode_battles",
    "fit_cells",
    "judge_agreement",
    "judge_vs_majority",
    "labels_only_interval",
    "length_bias",
    "majority_vote",
    "ppi_labels_needed",
    "ppi_mean",
    "ppi_mean_difference",
    "swap_consistency",
    "win_rate",
]
