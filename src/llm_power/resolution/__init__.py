"""Leaderboard resolution: :func:`diagnose` (q = N/N* per pair), the ``REGIMES`` registry (IID,
multiplicity-corrected, clustered, anytime-valid), the columnar :class:`Diagnosis` and
:func:`calibrate`.
"""

from ._columns import (
    PairColumns,
    pair_indices,
)
from ._diagnose import (
    CORRECTIONS,
    calibrate,
    diagnose,
    diagnose_options,
    diagnose_source,
    pairwise_statistics,
)
from ._regimes import (
    REGIMES,
    Context,
    Regime,
    RegimeOutput,
    tie_groups_and_rank_intervals,
)
from ._results import (
    Diagnosis,
    PairResolution,
)

__all__ = [
    "CORRECTIONS",
    "Context",
    "Diagnosis",
    "PairColumns",
    "PairResolution",
    "REGIMES",
    "Regime",
    "RegimeOutput",
    "calibrate",
    "diagnose",
    "diagnose_options",
    "diagnose_source",
    "pair_indices",
    "pairwise_statistics",
    "tie_groups_and_rank_intervals",
]
