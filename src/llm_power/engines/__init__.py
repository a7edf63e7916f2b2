"""Engines that hold items elsewhere and answer the sufficient-statistics questions of a
``ScoreSource``: Dask (:func:`diagnose_files` with ``engine="dask"``).
"""

from .dask import (
    ENGINES,
    diagnose_files,
)

__all__ = [
    "ENGINES",
    "diagnose_files",
]
