"""Readers only: result files -> the long table (:func:`read_results`, over the ``FORMATS`` registry of
:mod:`llm_power.io.formats`) -> a :class:`~llm_power.matrix.ScoreMatrix` (:func:`align_results`).
Errors name the file, the record and the field.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .align import Aligned, ScoreMatrix, align_results
    from .battles import read_battles
    from .harness import FORMATS, Record, detect_format, iter_records, read_results
    from .plain import ItemScores, read_item_scores, read_wide_matrix
    from .runs import align_runs, read_runs
    from .samples import read_samples, sample_matrices

#: each public name and the module that defines it, imported on first use: ``llm_power.io.formats``
#: (the registry, read by ``--help`` for its choices) loads without numpy or pandas
_LAZY = {"Aligned": "align", "ScoreMatrix": "align", "align_results": "align", "read_battles": "battles",
         "FORMATS": "harness", "Record": "harness", "detect_format": "harness", "iter_records": "harness",
         "read_results": "harness", "ItemScores": "plain", "read_item_scores": "plain", "read_wide_matrix": "plain",
         "align_runs": "runs", "read_runs": "runs", "read_samples": "samples", "sample_matrices": "samples"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


__all__ = [
    "FORMATS",
    "Aligned",
    "ItemScores",
    "Record",
    "ScoreMatrix",
    "align_results",
    "align_runs",
    "detect_format",
    "iter_records",
    "read_battles",
    "read_item_scores",
    "read_results",
    "read_runs",
    "read_samples",
    "read_wide_matrix",
    "sample_matrices",
]
