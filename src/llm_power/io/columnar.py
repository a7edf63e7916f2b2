"""lm-eval samples files read as columns (only the fields needed, by polars or pyarrow).

The fast path of :func:`~llm_power.io.read_results` for ``samples_<task>_<date>.jsonl``: the
per-item metric, doc id, filter, target and cluster label are parsed into arrow columns and the
rest of each line (prompts, responses: most of the bytes) is skipped without building Python
objects. Two parsers, one schema: pyarrow's JSON reader (always installed) over the file mapped in
memory, and polars' NDJSON reader when polars is installed (``pip install llm-power[polars]``: 1.4x
less CPU on real lm-eval lines, benchmarks/README.md). Polars writes any JSON value of a text field
as text (``true``, ``1.5``, ``[1]``), where the line reader writes Python's ``str`` (``True``...):
a file with such a value in a text field is parsed by pyarrow instead, which refuses it.

Whenever the file is anything but clean — a type the schema did not expect, a missing value, a
duplicate doc id, several filters without ``--filter`` — the fast path steps aside (returns None)
and the line-by-line reader reads the file again and reports the exact file, line and field. The
paths give the same table (tested).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["lm_eval_columns"]

#: JSON value types whose string form is the same in Python (str()) and in arrow (cast to string)
_SAME_TEXT = (str, int)


def _first_record(path: Path) -> dict[str, Any] | None:
    from .safe import open_regular

    with open_regular(path) as fh:
        for raw in fh:
            if raw.strip():
                try:
                    rec = json.loads(raw)
                except ValueError:
                    return None
                return rec if isinstance(rec, dict) else None
    return None


def _arrow_type(value: Any, pa: Any) -> Any:
    """The arrow type for a JSON value whose text is the same in both readers, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, str):
        return pa.string()
    return None


def lm_eval_columns(path: Path, *, task: str, model: str, metric: str | None, filter_name: str | None,
                    cluster: str | None, engine: str = "pyarrow") -> dict[str, Any] | None:
    """Columns ``model, item, score, cluster, target, source`` of a clean lm-eval samples file, or
    None when the line-by-line reader must read it (and report what is wrong, if anything).
    ``engine``: ``"pyarrow"``, or ``"polars"`` (pyarrow when polars cannot be sure of a file).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    first = _first_record(path)
    if first is None or "doc_id" not in first:
        return None
    metrics = first.get("metrics")
    name = metric or (metrics[0] if isinstance(metrics, list) and metrics and isinstance(metrics[0], str) else None)
    if name is None or isinstance(first.get(name), bool) or not isinstance(first.get(name), (int, float)):
        return None
    doc_type = _arrow_type(first["doc_id"], pa)
    target_type = _arrow_type(first.get("target"), pa) if first.get("target") is not None else pa.string()
    doc = first.get("doc")
    label_type = _arrow_type(doc.get(cluster), pa) if cluster is not None and isinstance(doc, dict) else None
    if doc_type is None or target_type is None or (cluster is not None and label_type is None):
        return None
    fields = [("doc_id", doc_type), ("filter", pa.string()), (name, pa.float64()), ("target", target_type)]
    if metric is None:
        fields.append(("metrics", pa.list_(pa.string())))
    if cluster is not None:
        fields.append(("doc", pa.struct([(cluster, label_type)])))
    schema = pa.schema(fields)
    table = _read_polars(path, schema) if engine == "polars" else None
    if table is None:
        table = _read_arrow(path, schema)
    if table is None:
        return None
    return _columns(table, pc, task=task, model=model, name=name, metric=metric, filter_name=filter_name,
                    cluster=cluster, source=str(path))


#: pyarrow's JSON reader parses the file in blocks of this many bytes (4 MB: 0.064 CPU-s for a 45 MB
#: file of real lm-eval lines, 0.072 with 1 MB and 0.088 with 16 MB blocks; benchmarks/ingest_peers.py)
BLOCK_SIZE = 1 << 22


def _read_arrow(path: Path, schema: Any) -> Any:
    """The schema's fields of every line by pyarrow's JSON reader, or None when it refuses the file.

    A plain file is mapped in memory (the reader parses the page cache's bytes without copying them
    into buffers of its own) and its text checked to be UTF-8 first: pyarrow does not check the
    fields it skips, the line reader checks every byte. A .gz file is read under the archive limits.
    """
    import mmap

    import pyarrow as pa
    import pyarrow.json as pj

    from .safe import open_bounded, open_regular

    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    read = pj.ReadOptions(use_threads=False, block_size=BLOCK_SIZE)
    try:
        if path.suffix.lower() == ".gz":
            with open_bounded(path) as fh:
                return pj.read_json(fh, parse_options=options, read_options=read)
        with open_regular(path) as fh:  # a regular file only; the map outlives the descriptor
            size = os.fstat(fh.fileno()).st_size
            if not size:
                return None
            data = pa.py_buffer(mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ))
        offsets = pa.py_buffer(np.array([0, size], dtype=np.int64))
        pa.LargeStringArray.from_buffers(1, offsets, data).validate(full=True)  # UTF-8, else ArrowInvalid
        return pj.read_json(pa.BufferReader(data), parse_options=options, read_options=read)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError, ValueError):
        return None


def polars_available() -> bool:
    """Whether polars can be imported (``LLM_POWER_POLARS=0`` says no: the pyarrow parser alone)."""
    import importlib.util

    if os.environ.get("LLM_POWER_POLARS", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    return importlib.util.find_spec("polars") is not None


#: text that polars may have written for a JSON value that was not a string, where the line reader's
#: ``str`` of that value differs: true, false, a number that is not an integer (or is -0), an array, an
#: object (an integer's text is the same in both)
_NOT_FROM_TEXT = r"(?s)^(true|false|[\[{].*|-0|-?[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?|-?[0-9]+[eE][-+]?[0-9]+)$"


def _read_polars(path: Path, schema: Any) -> Any:
    """The schema's fields by polars' NDJSON reader, as an arrow table with the schema's types, or
    None when polars refuses the file or a text field holds text polars may have made from another
    JSON value (pyarrow reads those files). Polars reads the descriptor :func:`open_regular` opened.
    """
    import importlib

    import pyarrow as pa
    import pyarrow.compute as pc

    from .safe import open_regular

    pl: Any = importlib.import_module("polars")  # optional: no stubs needed where it is not installed

    if path.suffix.lower() == ".gz":
        return None
    try:
        with open_regular(path) as fh:
            frame = pl.read_ndjson(fh, schema=_polars_schema(schema, pl))
        table = frame.to_arrow()  # large_string and large_list: the checks below read both kinds
    except (pl.exceptions.PolarsError, pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None
    for name in schema.names:
        column = table.column(name)
        if pa.types.is_struct(column.type):
            column = pc.struct_field(column, [0])
        pattern = _NOT_FROM_TEXT
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            column = pc.list_flatten(column)  # the metric names: an integer is no name either
            pattern = _NOT_FROM_TEXT[:-2] + "|-?[0-9]+)$"
        text = pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        if text and pc.any(pc.match_substring_regex(pc.unique(column), pattern)).as_py():
            return None
    return table


def _polars_schema(schema: Any, pl: Any) -> dict[str, Any]:
    import pyarrow as pa

    def kind(t: Any) -> Any:
        if pa.types.is_struct(t):
            return pl.Struct({t.field(k).name: kind(t.field(k).type) for k in range(t.num_fields)})
        if pa.types.is_list(t):
            return pl.List(kind(t.value_type))
        return {pa.int64(): pl.Int64, pa.float64(): pl.Float64, pa.string(): pl.String}[t]

    return {field.name: kind(field.type) for field in schema}


def _columns(table: Any, pc: Any, *, task: str, model: str, name: str, metric: str | None,  # noqa: PLR0911
             filter_name: str | None, cluster: str | None, source: str) -> dict[str, Any] | None:
    """Check the parsed columns as the line reader would, and form the table's columns: the item,
    target and cluster columns as pandas Categoricals made from arrow's dictionary encoding (no Python
    string per row but the item ids).
    """
    import pyarrow as pa

    if table.num_rows == 0 or table.column("doc_id").null_count or table.column(name).null_count:
        return None
    if metric is None:
        if table.column("metrics").null_count:
            return None
        if pc.list_flatten(table.column("metrics")).null_count:
            return None  # a name that is not text: the line reader says so
        firsts = pc.list_element(table.column("metrics"), 0)
        if firsts.null_count or not pc.all(pc.equal(firsts, name)).as_py():
            return None
    filters = pc.fill_null(table.column("filter"), "none")
    present = sorted(pc.unique(filters).to_pylist())
    ids = pc.cast(table.column("doc_id"), filters.type)  # text (large_string from polars)
    if len(present) == 1:  # one filter: the doc ids alone must be distinct
        unique = pc.count_distinct(ids).as_py() == len(ids)
    else:
        pairs = pc.binary_join_element_wise(filters, ids, pa.scalar("\x00", filters.type))
        unique = pc.count_distinct(pairs).as_py() == len(ids)
    if not unique:
        return None  # a duplicate (filter, doc id): the line reader names it
    if filter_name is not None:
        if filter_name not in present:
            return None
        keep = pc.equal(filters, filter_name)
    elif len(present) > 1:
        return None
    else:
        keep = None

    def kept(column: Any) -> Any:
        return column if keep is None else pc.filter(column, keep)

    score = kept(table.column(name)).to_numpy().astype(float)
    if not np.all(np.isfinite(score)):
        return None
    label = None
    if cluster is not None:
        labels = pc.struct_field(table.column("doc"), [0]) if table.column("doc").null_count == 0 else None
        if labels is None or labels.null_count:
            return None
        label = _dictionary("cluster", kept(labels))
    target = _dictionary("target", kept(table.column("target")), missing="None")
    return {"model": model, "item": _dictionary("item", kept(table.column("doc_id")), prefix=f"{task}:"),
            "score": score, "cluster": label, "target": target, "source": source}


#: per column (item, target, cluster), the arrow values of the last file read and their Categorical:
#: the files of one task hold the same doc ids, targets and labels in the same order, so the next
#: file's column is compared (in C) and the Categorical shared instead of made again (12,032 Python
#: strings, a pandas Index and its hash table per file), and concat_parts maps it once
_LAST: dict[str, tuple[str, str | None, Any, Any]] = {}


def _dictionary(role: str, column: Any, *, prefix: str = "", missing: str | None = None) -> Any:
    """A pandas Categorical of ``prefix + str(value)`` from an arrow column (missing values as
    ``missing``), by dictionary encoding; the last file's when its values were the same.
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    last = _LAST.get(role)
    if last is not None and last[0] == prefix and last[1] == missing and last[2].type == values.type and \
            last[2].equals(values):
        return last[3]
    text = pc.cast(values, pa.large_string()) if values.type != pa.large_string() else values
    if missing is not None:
        text = pc.fill_null(text, missing)
    encoded = text.dictionary_encode()
    categories = pd.Index([prefix + value for value in encoded.dictionary.to_pylist()] if prefix else
                          encoded.dictionary.to_pylist())
    categorical = pd.Categorical.from_codes(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32),
                                            categories=categories)
    _LAST[role] = (prefix, missing, values, categorical)
    return categorical
