"""Every pair of a resolution report as a Parquet table: the output for millions of pairs.

One row per pair, one column per field of :attr:`Diagnosis.columns` (the JSON report's names),
model names and the few distinct strings (test, regime) dictionary-encoded; the column labels
shown in the other media, the settings, the unresolved counts and the package version are in the
file's metadata (``llm_power.*`` keys, JSON).
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

import numpy as np

from .._core.results import to_plain
from .._version import __version__
from ..resolution import Diagnosis

__all__ = ["write_pairs"]


def pairs_table(diag: Diagnosis, *, labels: dict[str, str] | None = None) -> Any:
    """The pairs as a ``pyarrow.Table``."""
    import pyarrow as pa

    cols = diag.columns
    names = pa.array([str(m) for m in diag.models], type=pa.string())
    arrays, fields = [], []
    for key, values in cols.items():
        if key in ("model_a", "model_b"):
            ranks = np.asarray(cols["rank_a" if key == "model_a" else "rank_b"], dtype=np.int32) - 1
            array = pa.DictionaryArray.from_arrays(pa.array(ranks), names)
        elif values.dtype == object:
            array = pa.array([None if v is None else str(v) for v in values.tolist()]).dictionary_encode()
        else:
            array = pa.array(np.asarray(values))
        arrays.append(array)
        fields.append(key)
    metadata = {"llm_power.version": __version__, "llm_power.n_items": str(diag.n),
                "llm_power.labels": json.dumps(labels or {}), "llm_power.settings": json.dumps(to_plain(diag.settings)),
                "llm_power.n_unresolved": json.dumps(diag.n_unresolved)}
    return pa.Table.from_arrays(arrays, names=fields).replace_schema_metadata(metadata)


def write_pairs(diag: Diagnosis, fh: BinaryIO, *, labels: dict[str, str] | None = None) -> None:
    """Write the pairs table to a binary file object as Parquet (zstd-compressed)."""
    import pyarrow.parquet as pq

    pq.write_table(pairs_table(diag, labels=labels), fh, compression="zstd")
