"""Readers only: result files -> the long table (:func:`read_results`, over the ``FORMATS`` registry of
:mod:`llm_power.io.formats`) -> a :class:`~llm_power.matrix.ScoreMatrix` (:func:`align_results`).
Errors name the file, the record and the field.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from .align import Aligned, ScoreMatrix, align_results
    from .battles import read_battles
    from .harness import FORMATS, Record, detect_format, iter_records, read_results
    from .plain import ItemScores, read_item_scores, read_wide_matrix
    from .runs import align_runs, read_runs
    from .samples import read_samples, sample_matrices

#: each public name and the module that defines it, imported on first use: ``llm_power.io.formats``
#: (the registry, read by ``--help`` for its choices) loads without numpy or pandas
_LAZY = {"Aligned": ".align", "ScoreMatrix": ".align", "align_results": ".align", "read_battles": ".battles",
         "FORMATS": ".harness", "Record": ".harness", "detect_format": ".harness", "iter_records": ".harness",
         "read_results": ".harness", "ItemScores": ".plain", "read_item_scores": ".plain", "read_wide_matrix": ".plain",
         "align_runs": ".runs", "read_runs": ".runs", "read_samples": ".samples", "sample_matrices": ".samples"}


__all__ = [
    "Aligned",
    "FORMATS",
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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
