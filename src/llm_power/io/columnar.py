"""lm-eval samples files read as columns (pyarrow's JSON reader, only the fields needed).

The fast path of :func:`~llm_power.io.read_results` for ``samples_<task>_<date>.jsonl``: the
per-item metric, doc id, filter, target and cluster label are parsed into arrow columns and the
rest of each line (prompts, responses: most of the bytes) is skipped without building Python
objects. Whenever the file is anything but clean — a type the schema did not expect, a missing
value, a duplicate doc id, several filters without ``--filter`` — the fast path steps aside
(returns None) and the line-by-line reader reads the file again and reports the exact file,
line and field. The two paths give the same table (tested).
"""

from __future__ import annotations

import json
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
                    cluster: str | None) -> dict[str, Any] | None:
    """Columns ``model, item, score, cluster, target, source`` of a clean lm-eval samples file, or
    None when the line-by-line reader must read it (and report what is wrong, if anything).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

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
    options = pj.ParseOptions(explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore")
    from .safe import open_bounded

    try:
        with open_bounded(path) as fh:  # a .gz file under the archive limits
            table = pj.read_json(fh, parse_options=options, read_options=pj.ReadOptions(use_threads=False,
                                                                                         block_size=1 << 24))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None
    return _columns(table, pc, task=task, model=model, name=name, metric=metric, filter_name=filter_name,
                    cluster=cluster, source=str(path))


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
        firsts = pc.list_element(table.column("metrics"), 0)
        if firsts.null_count or not pc.all(pc.equal(firsts, name)).as_py():
            return None
    filters = pc.fill_null(table.column("filter"), "none")
    present = sorted(pc.unique(filters).to_pylist())
    ids = pc.cast(table.column("doc_id"), "string")
    if len(present) == 1:  # one filter: the doc ids alone must be distinct
        unique = pc.count_distinct(ids).as_py() == len(ids)
    else:
        unique = pc.count_distinct(pc.binary_join_element_wise(filters, ids, "\x00")).as_py() == len(ids)
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
        label = _dictionary(kept(pc.cast(labels, "string")))
    target = _dictionary(kept(pc.fill_null(pc.cast(table.column("target"), "string"), "None")))
    items = kept(pc.binary_join_element_wise(pa.scalar(f"{task}:"), ids, ""))
    return {"model": model, "item": _dictionary(items), "score": score, "cluster": label, "target": target,
            "source": source}


def _dictionary(column: Any) -> Any:
    """A pandas Categorical (object categories) from an arrow string column, by dictionary encoding."""
    import pandas as pd
    import pyarrow as pa

    encoded = pa.chunked_array(column).combine_chunks().dictionary_encode() if isinstance(
        column, pa.ChunkedArray) else column.dictionary_encode()
    categories = pd.Index(encoded.dictionary.to_pylist())
    return pd.Categorical.from_codes(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32),
                                     categories=categories)
