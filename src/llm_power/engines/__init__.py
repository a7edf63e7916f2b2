"""Engines that read results where they live (:mod:`llm_power.engines.contract`): long tables read,
partitioned by item and aligned by DuckDB, Spark or Ray (:func:`read_matrix`, :func:`diagnose_files`
with ``engine="duckdb"|"spark"|"ray"``), result files reduced on a Dask cluster (``engine="dask"``),
battle logs larger than memory reduced by DuckDB (:func:`bradley_terry_table`).
"""

from .battles import bradley_terry_table
from .dask import (
    ENGINES,
    diagnose_files,
)
from .tables import TABLE_ENGINES, read_matrix

__all__ = [
    "ENGINES",
    "TABLE_ENGINES",
    "bradley_terry_table",
    "diagnose_files",
    "read_matrix",
]
