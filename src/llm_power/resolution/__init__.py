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
    from ._receipt import (
        RECEIPT_KIND,
        RECEIPT_VERSION,
        ReceiptCheck,
        dump_receipt,
        receipt_content,
        receipt_digest,
        recompute_receipt,
    )
    from ._receipt_source import ReceiptSource, field_error, get_field, list_field
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
    "RECEIPT_KIND": "._receipt",
    "RECEIPT_VERSION": "._receipt",
    "ReceiptCheck": "._receipt",
    "ReceiptSource": "._receipt_source",
    "RegimeOutput": "._regimes",
    "calibrate": "._diagnose",
    "diagnose": "._diagnose",
    "diagnose_source": "._diagnose",
    "headline_key": "._registry",
    "pair_indices": "._columns",
    "pairwise_statistics": "._diagnose",
    "dump_receipt": "._receipt",
    "field_error": "._receipt_source",
    "get_field": "._receipt_source",
    "list_field": "._receipt_source",
    "receipt_content": "._receipt",
    "receipt_digest": "._receipt",
    "recompute_receipt": "._receipt",
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
    "RECEIPT_KIND",
    "RECEIPT_VERSION",
    "REGIMES",
    "ReceiptCheck",
    "ReceiptSource",
    "Regime",
    "RegimeOutput",
    "calibrate",
    "diagnose",
    "diagnose_source",
    "dump_receipt",
    "field_error",
    "get_field",
    "headline_key",
    "list_field",
    "pair_indices",
    "pairwise_statistics",
    "receipt_content",
    "receipt_digest",
    "recompute_receipt",
    "tie_groups_and_rank_intervals",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
