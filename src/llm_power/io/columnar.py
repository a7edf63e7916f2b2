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
from typing import Any, cast

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


def _kind(value: Any) -> str | None:
    """The kind of a JSON value whose text is the same in both readers (``"int"``, ``"text"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "text"
    return None


#: a field of the columns read: its name and kind (``"int"``, ``"float"``, ``"text"``, ``"texts"``: a list of
#: text, or ``(key, kind)``: an object of which one key is read)
Field = tuple[str, Any]


def lm_eval_columns(path: Path, *, task: str, model: str, metric: str | None, filter_name: str | None,
                    cluster: str | None, engine: str = "pyarrow") -> dict[str, Any] | None:
    """Columns ``model, item, score, cluster, target, source`` of a clean lm-eval samples file, or
    None when the line-by-line reader must read it (and report what is wrong, if anything).
    ``engine``: ``"pyarrow"``, or ``"polars"`` (pyarrow when polars cannot be sure of a file).
    """
    first = _first_record(path)
    if first is None or "doc_id" not in first:
        return None
    metrics = first.get("metrics")
    name = metric or (metrics[0] if isinstance(metrics, list) and metrics and isinstance(metrics[0], str) else None)
    if name is None or isinstance(first.get(name), bool) or not isinstance(first.get(name), (int, float)):
        return None
    doc_kind = _kind(first["doc_id"])
    target_kind = _kind(first.get("target")) if first.get("target") is not None else "text"
    doc = first.get("doc")
    label_kind = _kind(doc.get(cluster)) if cluster is not None and isinstance(doc, dict) else None
    if doc_kind is None or target_kind is None or (cluster is not None and label_kind is None):
        return None
    fields: list[Field] = [("doc_id", doc_kind), ("filter", "text"), (name, "float"), ("target", target_kind),
                           ("metrics", "texts")]  # with a metric too: the line reader checks every line's names
    if cluster is not None:
        fields.append(("doc", (cluster, label_kind)))
    position = {key: k for k, key in enumerate(first)}  # the parsers look the keys up a little faster in
    fields.sort(key=lambda field: position.get(field[0], len(position)))  # the order of the lines
    options: dict[str, Any] = dict(task=task, model=model, name=name, metric=metric, filter_name=filter_name,
                                   cluster=cluster, source=str(path))
    if engine == "polars":
        columns = _polars_columns(path, fields, **options)
        if columns is not _UNSURE:
            return cast("dict[str, Any] | None", columns)
    import pyarrow.compute as pc

    table = _read_arrow(path, _arrow_schema(fields))
    if table is None:
        return None
    return _columns(table, pc, **options)


def _arrow_schema(fields: list[Field]) -> Any:
    import pyarrow as pa

    def kind(k: Any) -> Any:
        if isinstance(k, tuple):
            return pa.struct([(k[0], kind(k[1]))])
        return {"int": pa.int64(), "float": pa.float64(), "text": pa.string(), "texts": pa.list_(pa.string())}[k]

    return pa.schema([(name, kind(k)) for name, k in fields])


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


#: what the polars engine answers when it cannot be sure of a file: pyarrow reads it instead
_UNSURE: Any = object()

#: the last file the polars engine took: what it was read with, its checked columns but the scores and
#: the metric names (doc id, filter, target, doc), what came of them (the filters, the kept rows, the
#: Categoricals). The files of one task hold the same columns, which passed the same checks: only the
#: next file's scores and metric names are checked when its columns equal these (compared in Rust).
_CLEAN: dict[str, Any] = {}


def _polars_columns(path: Path, fields: list[Field], *, task: str, model: str, name: str,  # noqa: PLR0911
                    metric: str | None, filter_name: str | None, cluster: str | None, source: str) -> Any:
    """:func:`_columns` by polars, from its own columns: the fields parsed by polars' NDJSON reader from
    the descriptor :func:`open_regular` opened, checked in one polars query and coded straight into
    numpy and pandas (no arrow table). :data:`_UNSURE` when polars refuses the file or a text field
    holds text polars may have made from another JSON value (pyarrow reads those files).
    """
    import importlib

    from .safe import open_regular

    pl: Any = importlib.import_module("polars")  # optional: no stubs needed where it is not installed

    if path.suffix.lower() == ".gz":
        return _UNSURE
    try:
        with open_regular(path) as fh:
            frame = pl.read_ndjson(fh, schema=_polars_schema(fields, pl))
    except (pl.exceptions.PolarsError, OSError):
        return _UNSURE
    n = frame.height
    key = (tuple(fields), task, name, metric, filter_name, cluster, n)
    same = _CLEAN.get("key") == key and all(frame.get_column(c).equals(v, check_dtypes=True)
                                            for c, v in _CLEAN["columns"].items())
    filters = pl.col("filter").fill_null("none")
    checks = _polars_checks(fields, pl, filters, name=name, metric=metric, cluster=cluster, same=same)
    got = frame.select(**checks).row(0, named=True)
    if any(got[k] for k in checks if k.startswith("text")) or got["names"]:
        return _UNSURE
    if not n or got["score"] or got["names_null"] or (metric is None and not got["first"]):
        return None
    score = frame.get_column(name)
    if same:
        keep, item, target, labels = _CLEAN["keep"], _CLEAN["item"], _CLEAN["target"], _CLEAN["cluster"]
    else:
        shared = _polars_shared(frame, got, pl, filters, task=task, filter_name=filter_name, cluster=cluster)
        if shared is None:
            return None
        keep, item, target, labels = shared
        _CLEAN.clear()  # the columns of the next file are compared with these, once they are known clean
    scores = np.array(score.to_numpy() if keep is None else score.filter(keep).to_numpy(), dtype=float)
    if not np.all(np.isfinite(scores)):
        return None
    if not same:
        compared = ["doc_id", "filter", "target"] + (["doc"] if cluster is not None else [])
        _CLEAN.update(key=key, columns={c: frame.get_column(c) for c in compared}, keep=keep, item=item,
                      target=target, cluster=labels)
    return {"model": model, "item": item, "score": scores, "cluster": labels, "target": target, "source": source}


def _polars_checks(fields: list[Field], pl: Any, filters: Any, *, name: str, metric: str | None,
                   cluster: str | None, same: bool) -> dict[str, Any]:
    """The checks of one polars query: the scores and metric names always, the other columns unless
    they are the last clean file's (``same``).
    """
    names = pl.col("metrics").explode()  # null for a null list (a null name, too)
    checks = {"score": pl.col(name).null_count(), "names_null": names.null_count() - pl.col("metrics").null_count(),
              "names": names.unique().str.contains(_NOT_FROM_TEXT[:-2] + "|-?[0-9]+)$").any()}  # no name is a number
    if metric is None:  # every line's first name is the metric's
        checks["first"] = (pl.col("metrics").list.first() == name).fill_null(False).all()  # noqa: FBT003
    if same:
        return checks
    label = pl.col("doc").struct.field(cluster) if cluster is not None else None
    texts = [pl.col(c) for c, k in fields if k == "text"]  # filter, target when text
    if label is not None and dict(fields)["doc"][1] == "text":
        texts.append(label)
    checks |= {f"text{k}": e.unique().str.contains(_NOT_FROM_TEXT).any() for k, e in enumerate(texts)}
    checks |= {"doc_id": pl.col("doc_id").null_count(), "filters": filters.unique().sort().implode(),
               "ids": pl.col("doc_id").n_unique()}
    if label is not None:
        checks["label"] = pl.col("doc").null_count() + label.null_count()
    return checks


def _polars_shared(frame: Any, got: dict[str, Any], pl: Any, filters: Any, *, task: str,  # noqa: PLR0911
                   filter_name: str | None, cluster: str | None) -> tuple[Any, Any, Any, Any] | None:
    """The rows kept and the item, target and cluster Categoricals of a file whose checks (``got``) the
    doc ids, filters and labels passed; None when the line reader must read it.
    """
    n = frame.height
    if got["doc_id"] or got.get("label"):
        return None
    present = got["filters"]
    if len(present) > 1:  # several filters: the (filter, doc id) pairs must be distinct
        got["ids"] = frame.select(pl.struct(filters, pl.col("doc_id")).n_unique()).item()
    if got["ids"] != n:
        return None  # a duplicate (filter, doc id): the line reader names it
    keep = None
    if filter_name is not None:
        if filter_name not in present:
            return None
        keep = frame.select(filters == filter_name).to_series().to_numpy()
    elif len(present) > 1:
        return None

    def kept(column: Any) -> Any:
        return column if keep is None else column.filter(keep)

    labels = None
    if cluster is not None:
        labels = _dictionary("cluster", kept(frame.get_column("doc").struct.field(cluster)))
        if labels is None:
            return None
    target = _dictionary("target", kept(frame.get_column("target")), missing="None")
    item = _dictionary("item", kept(frame.get_column("doc_id")), prefix=f"{task}:")
    return keep, item, target, labels


def _polars_schema(fields: list[Field], pl: Any) -> dict[str, Any]:
    def kind(k: Any) -> Any:
        if isinstance(k, tuple):
            return pl.Struct({k[0]: kind(k[1])})
        return {"int": pl.Int64, "float": pl.Float64, "text": pl.String, "texts": pl.List(pl.String)}[k]

    return {name: kind(k) for name, k in fields}


def _columns(table: Any, pc: Any, *, task: str, model: str, name: str, metric: str | None,  # noqa: PLR0911
             filter_name: str | None, cluster: str | None, source: str) -> dict[str, Any] | None:
    """Check the parsed columns as the line reader would, and form the table's columns: the item,
    target and cluster columns as pandas Categoricals made from arrow's dictionary encoding (no Python
    string per row but the item ids).
    """
    import pyarrow as pa

    if table.num_rows == 0 or table.column("doc_id").null_count or table.column(name).null_count:
        return None
    if not _arrow_names(table.column("metrics"), pc, name=name, metric=metric):
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
        if label is None:
            return None
    target = _dictionary("target", kept(table.column("target")), missing="None")
    return {"model": model, "item": _dictionary("item", kept(table.column("doc_id")), prefix=f"{task}:"),
            "score": score, "cluster": label, "target": target, "source": source}


def _arrow_names(names: Any, pc: Any, *, name: str, metric: str | None) -> bool:
    """Whether every line's metric names are text (with a metric too: the line reader checks them) and,
    without a metric, the first of them is ``name`` (an empty list: the line reader looks for acc...).
    """
    if pc.list_flatten(names).null_count:
        return False
    if metric is not None:
        return True
    if names.null_count or pc.min(pc.list_value_length(names)).as_py() == 0:
        return False
    firsts = pc.list_element(names, 0)
    return not firsts.null_count and bool(pc.all(pc.equal(firsts, name)).as_py())


#: per column (item, target, cluster), the values of the last file read (an arrow array or a polars
#: Series) and their Categorical: the files of one task hold the same doc ids, targets and labels in
#: the same order, so the next file's column is compared (in C or Rust) and the Categorical shared
#: instead of made again (12,032 Python strings, a pandas Index and its hash table per file), and
#: concat_parts maps it once
_LAST: dict[str, tuple[str, str | None, Any, Any]] = {}


def _dictionary(role: str, column: Any, *, prefix: str = "", missing: str | None = None) -> Any:
    """A pandas Categorical of ``prefix + str(value)`` from an arrow column or a polars Series (missing
    values as ``missing``), in the order values first appear; the last file's when its values were the
    same. None for cluster labels of which one is blank (the line reader says so).
    """
    import pandas as pd

    from .._core.labels import missing_label

    polars = type(column).__module__.startswith("polars")
    values = column
    if not polars:
        import pyarrow as pa

        values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    last = _LAST.get(role)
    if last is not None and last[0] == prefix and last[1] == missing and _same(last[2], values):
        return last[3]
    if polars:
        text = values.cast(str)
        if missing is not None:
            text = text.fill_null(missing)
        codes, uniques = pd.factorize(text.to_numpy(), sort=False)
        distinct = uniques.tolist()
    else:
        import pyarrow as pa
        import pyarrow.compute as pc

        text = pc.cast(values, pa.large_string()) if values.type != pa.large_string() else values
        if missing is not None:
            text = pc.fill_null(text, missing)
        encoded = text.dictionary_encode()
        codes, distinct = encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()
    if role == "cluster" and any(missing_label(value) for value in distinct):
        return None
    categories = pd.Index([prefix + value for value in distinct] if prefix else distinct)
    categorical = pd.Categorical.from_codes(codes.astype(np.int32), categories=categories)
    _LAST[role] = (prefix, missing, values, categorical)
    return categorical


def _same(a: Any, b: Any) -> bool:
    """Whether two columns (both arrow arrays or both polars Series) hold the same values of one type."""
    if type(a) is not type(b):
        return False
    if type(a).__module__.startswith("polars"):
        return bool(a.dtype == b.dtype and a.equals(b, check_dtypes=True))
    return bool(a.type == b.type and a.equals(b))
