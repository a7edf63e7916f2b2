"""Leaderboard resolution: :func:`diagnose` (q = N/N* per pair), the ``REGIMES`` registry (IID,
multiplicity-corrected, clustered, anytime-valid, runs: each with its options, flags and sentence),
the options object :class:`DiagnoseOptions`, the columnar :class:`Diagnosis` and :func:`calibrate`.

Each name is imported from its module on first use (``import llm_power.resolution`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._columns import PairColumns, pair_indices
    from ._diagnose import CORRECTIONS, DESIGN_EFFECTS, calibrate, diagnose, diagnose_source, pairwise_statistics
    from ._receipt import ReceiptCheck, receipt, verify_receipt, write_receipt
    from ._receipt_source import ReceiptSource
    from ._regimes import Context, RegimeOutput, tie_groups_and_rank_intervals
    from ._registry import REGIMES, DiagnoseOptions, Option, Regime, headline_key
    from ._results import Diagnosis, Held, PairResolution

#: public name -> the module of this family that defines it
_LAZY = {
    "CORRECTIONS": "._diagnose",
    "Context": "._regimes",
    "DESIGN_EFFECTS": "._diagnose",
    "DiagnoseOptions": "._registry",
    "Diagnosis": "._results",
    "Held": "._results",
    "Option": "._registry",
    "PairColumns": "._columns",
    "PairResolution": "._results",
    "REGIMES": "._registry",
    "Regime": "._registry",
    "ReceiptCheck": "._receipt",
    "ReceiptSource": "._receipt_source",
    "RegimeOutput": "._regimes",
    "calibrate": "._diagnose",
    "diagnose": "._diagnose",
    "diagnose_source": "._diagnose",
    "headline_key": "._registry",
    "pair_indices": "._columns",
    "pairwise_statistics": "._diagnose",
    "receipt": "._receipt",
    "verify_receipt": "._receipt",
    "write_receipt": "._receipt",
    "tie_groups_and_rank_intervals": "._regimes",
}

__all__ = [
    "CORRECTIONS",
    "Context",
    "DESIGN_EFFECTS",
    "DiagnoseOptions",
    "Diagnosis",
    "Held",
    "Option",
    "PairColumns",
    "PairResolution",
    "REGIMES",
    "ReceiptCheck",
    "ReceiptSource",
    "Regime",
    "RegimeOutput",
    "calibrate",
    "diagnose",
    "diagnose_source",
    "headline_key",
    "pair_indices",
    "pairwise_statistics",
    "receipt",
    "tie_groups_and_rank_intervals",
    "verify_receipt",
    "write_receipt",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
