"""Readers only: result files -> the long table (:func:`read_results`, over the ``FORMATS`` registry of
:mod:`llm_power.io.formats`) -> a :class:`~llm_power.matrix.ScoreMatrix` (:func:`align_results`).
Errors name the file, the record and the field.
"""

from .align import Aligned, ScoreMatrix, align_results
from .battles import read_battles
from .harness import FORMATS, Record, detect_format, iter_records, read_results
from .plain import ItemScores, read_item_scores, read_wide_matrix
from .runs import align_runs, read_runs
from .samples import read_samples, sample_matrices

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
