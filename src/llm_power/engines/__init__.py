"""Engines that hold items elsewhere and answer the sufficient-statistics questions of a
``ScoreSource``: Dask (:func:`diagnose_files` with ``engine="dask"``); battle logs larger than memory
reduced by DuckDB (:func:`bradley_terry_table`).
"""

from .battles import bradley_terry_table
from .dask import (
    ENGINES,
    diagnose_files,
)

__all__ = [
    "ENGINES",
    "bradley_terry_table",
    "diagnose_files",
]
