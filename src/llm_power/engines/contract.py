"""The engine contract: what an engine hands the driver, per item shard, and how the driver merges it.

Evaluation results at scale are long tables — one row per (model, item) — in Parquet, CSV or JSONL
files, a Spark table or a Ray dataset. Items are independent of each other, so the rows can be cut
into **item shards** (every row of an item in the same shard, by a hash of the item id) and each
shard aligned apart: an item's alignment — whether every model has it, its cluster label, whether a
model has it twice — depends on its own rows only. Every engine is a *producer* of the same thing:

1. **Read and partition** (the engine's own work, where the rows live): the long table's columns
   (model, item, score[, cluster], source file) are read out of core and partitioned by
   ``hash(item) mod K`` — DuckDB by SQL into spilled Parquet partitions, Spark by ``groupBy`` on its
   executors, Ray by ``groupby`` of a Ray dataset, Dask by its workers.
2. **Align one shard** (:func:`align_block`, the same Python wherever it runs — on the driver for
   DuckDB, on the executors for Spark and Ray, on the workers for Dask): the rows are checked like
   :func:`llm_power.io.align_results` checks them and become a :class:`Block` — the shard's aligned
   items x models matrix (natural item order), its cluster labels and a summary: per model how many
   items it has (and the first it lacks), how many items there are, conflicting targets. A block
   travels as one Arrow table (:func:`block_to_arrow` / :func:`block_from_arrow`): an ``item`` and a
   ``cluster`` column, the scores as a list column, the summary in the schema's metadata.
3. **Merge** (:func:`merge_summaries`, exact: counts are integers): the shards' summaries give the
   same errors and notes as the local path (models that lack items, disjoint item sets,
   ``on_missing="intersect"``), and :func:`assemble` concatenates the blocks into the
   :class:`~llm_power.ScoreMatrix` the local path builds — the same items in the same natural order,
   the same models, the same float scores bit for bit. The statistics are then formed on the driver
   (the pairs' 2x2 tables by one matrix product: faster than SQL for every pair, measured in
   benchmarks/README.md), so every engine's report is the local report, byte for byte.

The Dask engine keeps its blocks on the workers instead and asks them for the sufficient statistics
(:mod:`llm_power.engines.dask`): integer counts merged exactly, graded sums by Chan's update.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.errors import DataError

__all__ = [
    "SHARD_ROWS",
    "Block",
    "LongColumns",
    "align_block",
    "assemble",
    "block_from_arrow",
    "block_rows",
    "block_to_arrow",
    "blocks_from_rows",
    "merge_summaries",
    "shard_count",
    "shard_rows",
]

#: rows per item shard the engines aim at (a shard's rows are one pandas frame while it is aligned)
SHARD_ROWS = 2_000_000

#: the schema metadata key of a block's summary
_META = b"llm_power.block"


def shard_count(rows: int, *, shard_rows: int = SHARD_ROWS) -> int:
    """How many item shards ``rows`` rows are cut into (at least one)."""
    return max(1, math.ceil(rows / max(1, shard_rows)))


@dataclass(frozen=True)
class LongColumns:
    """The columns of a long table an engine reads: model, item id, score, and optionally the cluster
    label, resolved from the table's column names by the rules of the local reader (the ``model``,
    item id and score names it knows, ``metric`` and ``item_column`` to choose).
    """

    model: str
    item: str
    score: str
    cluster: str | None = None

    @classmethod
    def resolve(cls, columns: Sequence[str], *, source: str, metric: str | None = None,
                cluster: str | None = None, item_column: str | None = None) -> LongColumns:
        """The columns of a long table with these column names; DataError naming ``source`` otherwise."""
        from .._core.suggest import no_column
        from ..io.plain import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS

        columns = [c for c in columns if c not in ("filename",)]
        listed = ", ".join(map(repr, columns))
        model = next((c for c in ("model", *MODEL_COLUMNS) if c in columns), None)
        if model is None:
            if {"model_a", "model_b"} <= set(columns):
                msg = "looks like pairwise battles (model_a, model_b, winner), not per-item scores"
            else:
                msg = (f"not a long table (model, item, score): columns are {listed}; the engines read long tables "
                       "(a wide table or a harness folder is read by --engine local or dask)")
            raise DataError(msg, file=source)
        if item_column is not None and item_column not in columns:
            raise DataError(no_column("item id", item_column, columns), file=source)
        item = item_column or next((c for c in ITEM_COLUMNS if c in columns), None)
        if item is None:
            msg = f"cannot tell which column is the item id; columns are {listed} (choose one with `item_column`)"
            raise DataError(msg, file=source)
        score = metric or next((c for c in SCORE_COLUMNS if c in columns), None)
        if score is None or score not in columns:
            msg = (no_column("score", metric, columns) if metric else
                   f"cannot tell which column is the score; columns are {listed} (choose one with `metric`)")
            raise DataError(msg, file=source)
        if cluster is not None and cluster not in columns:
            raise DataError(no_column("cluster", cluster, columns), file=source)
        return cls(model=model, item=item, score=score, cluster=cluster)


# =================================================================================================
# One shard: rows -> an aligned block
# =================================================================================================

@dataclass
class Block:
    """One item shard, aligned: ``x`` (items x models, natural item order), the item ids, the cluster
    labels (text, or None) and the summary :func:`merge_summaries` merges.
    """

    x: np.ndarray
    items: list[Any]
    labels: list[str] | None
    summary: dict[str, Any] = field(default_factory=dict)


def align_block(rows: Any, models: Sequence[Any], *, columns: LongColumns, local_error: Any) -> Block:
    """Align one item shard's rows (a pyarrow Table or pandas DataFrame with the table's columns and
    ``source``, the file of each row) over ``models`` (every model of the table, sorted as text).

    The checks are the local path's (:func:`llm_power.io.align_results`), on this shard's items: a
    model with an item twice, conflicting cluster labels, an item without a label. A value the
    local reader would refuse (a null id, an empty score, a list for an id) is reported by
    ``local_error(file, field)``, which reads that file with the local reader to name the record.
    """
    import pandas as pd

    from ..io.align import align_common, check_duplicates
    from ..io.long_columns import id_texts, label_texts, score_values

    frame = rows.to_pandas() if hasattr(rows, "to_pandas") and not isinstance(rows, pd.DataFrame) else rows
    sources = frame["source"]  # a row's file, looked up only for an error
    model, bad_model = id_texts(frame[columns.model], columns.model)
    item, bad_item = id_texts(frame[columns.item], columns.item)
    score, bad_score = score_values(frame[columns.score], columns.score)
    for bad, name in ((bad_model, columns.model), (bad_item, columns.item), (bad_score, columns.score)):
        if bad.any():
            local_error(str(sources.iloc[int(np.argmax(bad))]), name)
    long = pd.DataFrame({"model": model, "item": item, "score": score})
    if columns.cluster is not None:
        labels, bad = label_texts(frame[columns.cluster])
        if bad.any():
            local_error(str(sources.iloc[int(np.argmax(bad))]), columns.cluster)
        long["cluster"] = labels
    long["source"] = sources.array if isinstance(sources.dtype, pd.CategoricalDtype) else pd.Categorical(sources)
    unknown = set(long["model"].cat.categories) - set(models)
    if unknown:  # pragma: no cover - the engines list the models from the same rows
        msg = f"model {sorted(unknown)[0]!r} of an item shard is not among the table's models"
        raise DataError(msg)
    if not len(long):
        return empty_block(models, with_clusters=columns.cluster is not None)
    check_duplicates(long)
    aligned, lacking, n_all = align_common(long, list(models))
    per_model = np.bincount(pd.Categorical(long["model"], categories=list(models)).codes, minlength=len(models))
    summary = {"models": list(models), "n": len(aligned.items), "n_all": n_all, "per_model": per_model.tolist(),
               "lacking": {m: [count, item] for m, (count, item) in lacking.items()}}
    labels = None if aligned.clusters is None else [str(v) for v in aligned.clusters]
    return Block(x=np.ascontiguousarray(aligned.scores), items=list(aligned.items), labels=labels, summary=summary)


def empty_block(models: Sequence[Any], *, with_clusters: bool) -> Block:
    """A shard without rows (a hash bucket no item fell in)."""
    return Block(x=np.zeros((0, len(models))), items=[], labels=[] if with_clusters else None,
                 summary={"models": list(models), "n": 0, "n_all": 0, "per_model": [0] * len(models), "lacking": {}})


# =================================================================================================
# A block as one Arrow table (how Spark executors and Ray workers hand it back)
# =================================================================================================

def block_to_arrow(block: Block) -> Any:
    """The block as a pyarrow Table: ``item`` (text), ``cluster`` (text or null), ``scores`` (a list of
    one float per model); the summary as JSON in the schema's metadata under ``llm_power.block``.
    """
    import pyarrow as pa

    m = block.x.shape[1]
    flat = pa.array(np.ascontiguousarray(block.x, dtype=np.float64).reshape(-1), type=pa.float64())
    scores = pa.FixedSizeListArray.from_arrays(flat, m) if m else pa.array([[]] * len(block.items),
                                                                            type=pa.list_(pa.float64(), 0))
    labels = pa.array(block.labels if block.labels is not None else [None] * len(block.items), type=pa.string())
    table = pa.table({"item": pa.array([str(i) for i in block.items], type=pa.string()), "cluster": labels,
                      "scores": scores})
    summary = dict(block.summary, with_clusters=block.labels is not None)
    return table.replace_schema_metadata({_META: json.dumps(summary).encode()})


def block_from_arrow(table: Any) -> Block:
    """The block of :func:`block_to_arrow` (a table of several record batches of one block too)."""
    meta = (table.schema.metadata or {}).get(_META)
    if meta is None:
        msg = "an engine returned a table that is not an aligned block (no llm_power.block metadata)"
        raise DataError(msg)
    summary = json.loads(meta)
    with_clusters = summary.pop("with_clusters")
    m = len(summary["models"])
    column = table.column("scores").combine_chunks()
    values = column.flatten().to_numpy(zero_copy_only=False) if len(column) else np.zeros(0)
    x = np.asarray(values, dtype=np.float64).reshape(len(table), m)
    labels = table.column("cluster").to_pylist() if with_clusters else None
    return Block(x=x, items=table.column("item").to_pylist(), labels=labels, summary=summary)


# =================================================================================================
# Blocks as plain rows (for engines whose tables lose Arrow metadata: Spark's applyInArrow)
# =================================================================================================

#: the columns of :func:`block_rows`, as a Spark DDL schema (the Arrow types are the same)
BLOCK_ROWS_DDL = "shard long, item string, cluster string, scores array<double>, summary string"


def shard_rows(rows: Any, models: Sequence[Any], *, shard: int, columns: LongColumns, local_error: Any) -> Any:
    """:func:`align_block` of one shard's rows, as :func:`block_rows`; a :class:`DataError` it raises is
    returned as the shard's one row (so that it crosses an engine as data, not as a worker's traceback).
    """
    try:
        block = align_block(rows, models, columns=columns, local_error=local_error)
    except DataError as exc:
        error = {"message": exc.message, "file": exc.file, "record": exc.record, "field": exc.field}
        return _rows_table([shard], [None], [None], [None], [json.dumps({"error": error})])
    return block_rows(block, shard)


def _rows_table(shard: list[int], item: list[Any], cluster: list[Any], scores: Any, summary: list[Any]) -> Any:
    import pyarrow as pa

    if not isinstance(scores, pa.Array):
        scores = pa.array(scores, type=pa.list_(pa.float64()))
    return pa.table({"shard": pa.array(shard, type=pa.int64()), "item": pa.array(item, type=pa.string()),
                     "cluster": pa.array(cluster, type=pa.string()), "scores": scores,
                     "summary": pa.array(summary, type=pa.string())})


def block_rows(block: Block, shard: int) -> Any:
    """The block as a pyarrow Table of plain rows, no metadata: ``shard``, ``item``, ``cluster``, ``scores``
    (a list of one float per model) and ``summary``; the first row is the header (the summary as JSON,
    no item), the others the items (no summary). A shard without items is its header alone.
    """
    import pyarrow as pa

    n, m = block.x.shape
    flat = pa.array(np.ascontiguousarray(block.x, dtype=np.float64).reshape(-1), type=pa.float64())
    offsets = pa.array(np.concatenate([[0], np.arange(n + 1) * m]), type=pa.int32())  # the header's list: null
    scores = pa.ListArray.from_arrays(offsets, flat, mask=pa.array([True] + [False] * n))
    header = json.dumps(dict(block.summary, with_clusters=block.labels is not None))
    labels = block.labels if block.labels is not None else [None] * n
    return _rows_table([shard] * (n + 1), [None, *(str(i) for i in block.items)], [None, *labels], scores,
                       [header] + [None] * n)


def blocks_from_rows(table: Any) -> list[Block]:
    """The blocks of :func:`block_rows` tables (any row order, shards mixed), by shard; the first
    shard's error, as the :class:`DataError` :func:`align_block` raised, if a shard failed.
    """
    import pyarrow.compute as pc

    header = table.filter(pc.is_valid(table.column("summary")))
    summaries = {int(k): json.loads(s) for k, s in zip(header.column("shard").to_pylist(),
                                                       header.column("summary").to_pylist(), strict=True)}
    items = table.filter(pc.is_null(table.column("summary")))
    for k in sorted(summaries):
        error = summaries[k].get("error")
        if error is not None:
            raise DataError(error["message"], file=error["file"], record=error["record"], field=error["field"])
    out = []
    for k in sorted(summaries):
        summary = summaries[k]
        with_clusters = summary.pop("with_clusters")
        rows = items.filter(pc.equal(items.column("shard"), k))
        m = len(summary["models"])
        column = rows.column("scores").combine_chunks()
        values = column.flatten().to_numpy(zero_copy_only=False) if len(column) else np.zeros(0)
        x = np.asarray(values, dtype=np.float64).reshape(len(rows), m)
        labels = rows.column("cluster").to_pylist() if with_clusters else None
        out.append(Block(x=x, items=rows.column("item").to_pylist(), labels=labels, summary=summary))
    return out


# =================================================================================================
# The driver: summaries merged, blocks assembled
# =================================================================================================

def merge_summaries(summaries: Sequence[dict[str, Any]], on_missing: str) -> tuple[int, dict[Any, int], str]:
    """The shards' summaries checked as :func:`llm_power.io.align_results` checks a whole table: the
    items kept, per model how many of its items were dropped, and the note (what
    ``on_missing="intersect"`` dropped); the local path's errors otherwise.
    """
    from .._core.order import natural_key
    from ..io.align import disjoint, intersection_note, not_aligned

    models = summaries[0]["models"]
    n_all = sum(s["n_all"] for s in summaries)
    n = sum(s["n"] for s in summaries)
    lacking: dict[Any, tuple[int, Any]] = {}
    for s in summaries:
        for model, (count, item) in s["lacking"].items():
            if model in lacking:
                total, first = lacking[model]
                lacking[model] = (total + count, min(first, item, key=natural_key))
            else:
                lacking[model] = (count, item)
    lacking = {m: lacking[m] for m in models if m in lacking}
    per_model = np.sum([s["per_model"] for s in summaries], axis=0)
    dropped = {m: int(per_model[k]) - n for k, m in enumerate(models)}
    note = ""
    if lacking:
        if n == 0:  # not missing items: different tasks (--on-missing cannot help)
            counts = {m: int(per_model[k]) for k, m in enumerate(models[:8])}
            raise disjoint("; ".join(f"{m}: {c:,} item{'s' if c != 1 else ''}" for m, c in counts.items()))
        if on_missing == "error":
            raise not_aligned(lacking, n_all)
        note = intersection_note(n, n_all, {m: k for m, (k, _) in lacking.items()})
    return n, dropped, note


def _compact(block: Block) -> Block:
    """The block with 0/1 scores held as bytes (exact; 8x less memory until the matrix is filled)."""
    x = block.x
    if x.size and x.dtype != np.uint8 and np.all((x == 0) | (x == 1)):
        block.x = x.astype(np.uint8)
    return block


def assemble(blocks: Iterable[Block], models: Sequence[Any], *, on_missing: str) -> Any:
    """The :class:`~llm_power.ScoreMatrix` of the blocks: items in natural order (as the local path
    orders them), models as given (sorted as text), the note and the dropped counts merged.
    """
    import dataclasses

    from .._core.order import natural_order
    from ..io.align import too_few_models
    from ..matrix import ScoreMatrix

    blocks = [_compact(b) for b in blocks]  # 0/1 shards kept as bytes while the others arrive
    if not blocks:
        raise too_few_models(list(models))
    if len(models) < 2:
        raise too_few_models(list(models))
    _, dropped, note = merge_summaries([b.summary for b in blocks], on_missing)
    live = [b for b in blocks if b.items]
    items = [it for b in live for it in b.items]
    order = np.asarray(natural_order(items), dtype=np.intp)
    where = np.empty(order.size, dtype=np.intp)
    where[order] = np.arange(order.size)  # the row of the matrix of each block row, in block order
    x = np.empty((order.size, len(models)))
    start = 0
    for b in live:  # filled block by block (never two copies of the whole matrix)
        x[where[start:start + len(b.items)]] = b.x
        start += len(b.items)
        b.x = b.x[:0]
    with_clusters = blocks[0].labels is not None
    clusters = None
    if with_clusters:
        labels = np.asarray([lab for b in live for lab in (b.labels or [])], dtype=object)
        clusters = list(labels[order])
    matrix = ScoreMatrix(items=[items[k] for k in order], models=list(models), scores=x,
                         clusters=clusters, dropped=dropped)
    return dataclasses.replace(matrix, note=note)
