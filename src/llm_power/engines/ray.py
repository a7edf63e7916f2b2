"""Ray as the engine of long tables on a cluster (``engine="ray"``, ``--engine ray``).

Ray Data reads the Parquet, CSV/TSV and JSONL files on the cluster's workers (CSV values as text, as
the local reader takes them; each row's file as ``source``, named as the caller named it). Each block
of rows keeps the long table's columns only (model, item, score[, cluster]), read by the local
reader's rules (:mod:`llm_power.io.long_columns`): a value it would refuse is the local reader's own
error for that file. The models and the row count are one pass; the rows are then keyed by
``hash(item) mod K`` and grouped by that key (``groupby("shard").map_groups``), and each item shard is
aligned on a worker by :func:`llm_power.engines.contract.align_block`. A worker hands its block back
as one row: the Arrow IPC bytes of :func:`~llm_power.engines.contract.block_to_arrow` (the summary
travels in the stream's own schema metadata, which Ray Data's tables do not keep). The driver
decodes the blocks and assembles the score matrix the local path builds (see
:mod:`llm_power.engines.contract`).

Ray: the running Ray of the process if there is one (``ray.init`` was called), else the cluster at
``address`` (``--scheduler ray://host:10001``), else a local Ray with ``n_workers`` CPUs (no dashboard,
no usage statistics), shut down at the end. The workers must be able to import llm-power and read
the files (a shared file system or object store). Settings: ``LLM_POWER_SHARD_ROWS`` (rows per item
shard, default 2,000,000). Install: ``pip install 'llm-power[ray]'``.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import os
from collections.abc import Iterator
from typing import Any, NoReturn

from .._core.errors import DataError, LLMPowerError
from ._tables import TableFiles, refuse
from .contract import SHARD_ROWS, Block, LongColumns, align_block, block_from_arrow, block_to_arrow, shard_count

__all__ = ["ray_blocks"]

_INSTALL = "engine='ray' (--engine ray) needs the ray extra: pip install 'llm-power[ray]'"

#: the columns every block of rows has once read (the long table's, by the contract's names)
_ROWS = ("model", "item", "score", "cluster", "source")


def _import_ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401 - the ray[data] extra
    except ImportError as exc:
        raise LLMPowerError(_INSTALL) from exc
    return ray


def _start(ray: Any, address: str | None, n_workers: int | None) -> bool:
    """Ray for this call: the process's running Ray, the cluster at ``address`` or a local Ray.
    Whether this call started it (and so shuts it down).
    """
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False,
                              "ignore_reinit_error": True}
    if address:
        kwargs["address"] = address
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        kwargs["num_cpus"] = n_workers or os.cpu_count() or 1
    logging.getLogger("ray").setLevel(logging.ERROR)  # its start-up notes are not the user's news
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError, OSError) as exc:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        msg = " ".join(f"cannot start {where}: {exc}".split())[:300]
        raise LLMPowerError(msg) from None
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # quiet, as the other engines are
    return True


# =================================================================================================
# Reading: files -> blocks of (model, item, score[, cluster], source), read by the local rules
# =================================================================================================

def _first_line(path: str) -> str:
    opener: Any = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
        return str(fh.readline())


def _csv_datasets(ray: Any, paths: tuple[str, ...]) -> tuple[list[Any], list[str]]:
    """CSV/TSV files as datasets with every column as text (the local reader reads text and applies
    its own rules to it), one dataset per delimiter (a tab in the header line, as the local reader
    decides); and the column names of their header lines.
    """
    import pyarrow as pa
    from pyarrow import csv as pacsv

    by_delimiter: dict[str, list[str]] = {}
    names: dict[str, list[str]] = {}
    for path in paths:
        first = _first_line(path)
        delimiter = "\t" if "\t" in first else ","
        by_delimiter.setdefault(delimiter, []).append(path)
        header = next(csv.reader([first], delimiter=delimiter), [])
        names.setdefault(delimiter, [])
        names[delimiter] += [h for h in header if h not in names[delimiter]]
    out = []
    for delimiter, files in by_delimiter.items():
        convert = pacsv.ConvertOptions(column_types=dict.fromkeys(names[delimiter], pa.string()),
                                       strings_can_be_null=False, quoted_strings_can_be_null=False)
        out.append(ray.data.read_csv(list(files), include_paths=True, partitioning=None, file_extensions=None,
                                     parse_options=pacsv.ParseOptions(delimiter=delimiter), convert_options=convert))
    return out, [n for group in names.values() for n in group]


def _datasets(ray: Any, files: TableFiles) -> tuple[list[Any], list[str]]:
    """One Ray dataset per kind of file (``path`` the file of a row) and the column names of the
    files, read on this machine from the Parquet footers and the first line of each CSV and JSONL file.
    """
    import pyarrow.parquet as pq
    from ray.data.context import ShuffleStrategy

    names: list[str] = []
    out = []
    try:
        if files.parquet:
            for path in files.parquet:
                names += pq.read_schema(path).names
            out.append(ray.data.read_parquet(list(files.parquet), include_paths=True, partitioning=None,
                                             file_extensions=None))
        if files.csv:
            parts, header = _csv_datasets(ray, files.csv)
            out += parts
            names += header
        if files.jsonl:
            for path in files.jsonl:
                first = _first_line(path)
                names += list(json.loads(first)) if first.strip().startswith("{") else []
            # pyarrow's reader of newline-delimited JSON (lines=True would read with pandas, which
            # turns the text "001" into the number 1)
            out.append(ray.data.read_json(list(files.jsonl), include_paths=True, partitioning=None,
                                          file_extensions=None))
    except (OSError, UnicodeDecodeError, EOFError, ValueError) as exc:
        raise DataError(" ".join(f"cannot read: {exc}".split())[:300], file=files.all[0]) from None
    for dataset in out:  # this call's datasets only: quiet, and the task-based sort shuffle (no actors to start)
        dataset.context.enable_progress_bars = False
        dataset.context.shuffle_strategy = ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    return out, list(dict.fromkeys(names))


def _source_names(files: TableFiles) -> dict[str, str]:
    """Ray's path of a file (absolute, no scheme) -> the path as the caller gave it."""
    out = {}
    for path in files.all:
        out[path] = path
        out[os.path.abspath(path)] = path
        out[os.path.realpath(path)] = path
    return out


def _long_rows(batch: Any, *, columns: LongColumns, sources: dict[str, str]) -> Any:
    """One block of read rows as the long table's columns, read by the local reader's rules (ids and
    labels as text, scores as floats); ``refused`` names the field of a value it would refuse (the
    driver then asks the local reader for its error on that row's file).
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from ..io.long_columns import id_texts, label_texts, score_values

    n = len(batch)
    paths = batch["path"].to_numpy(dtype=object) if "path" in batch else np.full(n, "", dtype=object)
    source = np.asarray([sources.get(p, p) for p in paths], dtype=object)
    refused = np.full(n, None, dtype=object)

    def column(name: str) -> Any:
        return batch[name] if name in batch else pd.Series([None] * n, dtype=object)

    def mark(bad: np.ndarray, name: str) -> None:
        refused[bad & pd.isna(refused)] = name

    model, bad = id_texts(column(columns.model), columns.model)
    mark(bad, columns.model)
    item, bad = id_texts(column(columns.item), columns.item)
    mark(bad, columns.item)
    score, bad = score_values(column(columns.score), columns.score)
    mark(bad, columns.score)
    table = {"model": _texts(model), "item": _texts(item),
             "score": pa.array(np.asarray(score, dtype=np.float64), type=pa.float64())}
    if columns.cluster is not None:
        labels, bad = label_texts(column(columns.cluster))
        mark(bad, columns.cluster)
        table["cluster"] = _texts(labels)
    table["source"] = pa.array(source, type=pa.string())
    table["refused"] = pa.array(refused, type=pa.string())
    return pa.table(table)


def _texts(values: Any) -> Any:
    """A Categorical of texts as an Arrow string array (a refused value null)."""
    import pyarrow as pa

    return pa.array(values).cast(pa.string())


def _model_counts(batch: Any) -> Any:
    """The models of a block of rows and how many rows each has (the driver sums them), and the file
    and field of each value the local reader would refuse (``model`` null on those rows).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    refused = batch.column("refused")
    clean = batch.filter(pc.is_null(refused))
    counts = pc.value_counts(clean.column("model").combine_chunks()) if len(clean) else None
    models = counts.field("values") if counts is not None else pa.array([], type=pa.string())
    rows = counts.field("counts") if counts is not None else pa.array([], type=pa.int64())
    bad = batch.filter(pc.is_valid(refused)).group_by(["source", "refused"]).aggregate([]) if refused.null_count \
        < len(batch) else None
    n_bad = 0 if bad is None else len(bad)
    return pa.table({"model": pa.concat_arrays([models.cast(pa.string()), pa.nulls(n_bad, pa.string())]),
                     "rows": pa.concat_arrays([rows.cast(pa.int64()), pa.nulls(n_bad, pa.int64())]),
                     "source": pa.concat_arrays([pa.nulls(len(models), pa.string()),
                                                 *([] if bad is None else [bad.column("source").combine_chunks()])]),
                     "field": pa.concat_arrays([pa.nulls(len(models), pa.string()),
                                                *([] if bad is None else [bad.column("refused").combine_chunks()])])})


def _with_shard(batch: Any, *, k: int) -> Any:
    """The rows keyed by item shard: ``hash(item) mod k`` (every row of an item in one shard)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    items = batch.column("item").to_numpy(zero_copy_only=False).astype(object)
    key = pd.util.hash_array(items) % np.uint64(k) if len(items) else np.zeros(0, dtype=np.uint64)
    return batch.drop_columns(["refused"]).append_column("shard", pa.array(key.astype(np.int64), type=pa.int64()))


def _aligned(rows: Any, *, models: list[str], columns: LongColumns, fields: dict[str, str]) -> Any:
    """One item shard aligned on a worker: one row, its shard and its block as Arrow IPC bytes (or the
    DataError alignment raised, as JSON: Ray's wrappers would not keep it).
    """
    import pyarrow as pa

    shard = int(rows.column("shard")[0].as_py())

    def local_error(file: str, name: str) -> NoReturn:  # pragma: no cover - the driver saw every refused value
        msg = "a value the local reader refuses (null, empty or not a number)"
        raise DataError(msg, file=file, field=fields.get(name, name))

    payload, error = b"", None
    try:
        block = align_block(rows.drop_columns(["shard"]), models, columns=columns, local_error=local_error)
    except DataError as exc:
        error = json.dumps({"message": exc.message, "file": exc.file, "record": exc.record, "field": exc.field})
    else:
        table = block_to_arrow(block)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        payload = sink.getvalue().to_pybytes()
    return pa.table({"shard": pa.array([shard], type=pa.int64()), "block": pa.array([payload], type=pa.large_binary()),
                     "error": pa.array([error], type=pa.string())})


def _decoded(payload: bytes) -> Block:
    import pyarrow as pa

    return block_from_arrow(pa.ipc.open_stream(payload).read_all())


# =================================================================================================
# Errors: Ray's own, one line (the package's errors travel as data, see _aligned)
# =================================================================================================

def _failed(exc: BaseException) -> NoReturn:
    """A Ray error as one line (the first line of its message: the traceback stays in Ray's logs)."""
    first = next((line for line in str(exc).splitlines() if line.strip()), "")
    msg = " ".join(f"the Ray engine failed: {type(exc).__name__}: {first}".split())[:300]
    raise LLMPowerError(msg) from None


def _raise_error(text: str) -> NoReturn:
    fields = json.loads(text)
    raise DataError(fields["message"], file=fields["file"], record=fields["record"], field=fields["field"])


# =================================================================================================
# The producer
# =================================================================================================

def ray_blocks(files: TableFiles, read: dict[str, Any], *, address: str | None = None,
               n_workers: int | None = None) -> tuple[list[str], Iterator[Block]]:
    """The table's models (sorted as text) and its aligned item shards, one at a time."""
    ray = _import_ray()
    started = _start(ray, address, n_workers)
    try:
        models, blocks = _plan(ray, files, read)
    except BaseException:
        if started:
            ray.shutdown()
        raise

    def shards() -> Iterator[Block]:
        try:
            yield from blocks
        finally:
            if started:
                ray.shutdown()

    return models, shards()


def _plan(ray: Any, files: TableFiles, read: dict[str, Any]) -> tuple[list[str], Iterator[Block]]:
    from ray.exceptions import RayError

    local_error = refuse(read)
    parts, names = _datasets(ray, files)
    columns = LongColumns.resolve(names, source=files.all[0], metric=read.get("metric"),
                                  cluster=read.get("cluster"), item_column=read.get("item_column"))
    sources = _source_names(files)
    long = [part.map_batches(_long_rows, batch_size=None, batch_format="pandas",
                             fn_kwargs={"columns": columns, "sources": sources}) for part in parts]
    rows = long[0].union(*long[1:]) if len(long) > 1 else long[0]
    counts: dict[str, int] = {}
    refused: set[tuple[str, str]] = set()
    try:
        for batch in rows.map_batches(_model_counts, batch_size=None, batch_format="pyarrow").iter_batches(
                batch_format="pyarrow", batch_size=None):
            for model, n, source, field in zip(*(batch.column(c).to_pylist() for c in ("model", "rows", "source",
                                                                                          "field")), strict=True):
                if model is None:
                    refused.add((source, field))
                else:
                    counts[model] = counts.get(model, 0) + int(n)
    except RayError as exc:
        _failed(exc)
    if refused:  # the local reader's error on the first such file (in the order the local reader reads them)
        order = {path: k for k, path in enumerate(files.all)}
        local_error(*min(refused, key=lambda sf: (order.get(sf[0], len(order)), sf[0], sf[1])))
    models = sorted(counts, key=str)
    k = shard_count(sum(counts.values()), shard_rows=int(os.environ.get("LLM_POWER_SHARD_ROWS", SHARD_ROWS)))
    block_columns = LongColumns(model="model", item="item", score="score",
                                cluster=None if columns.cluster is None else "cluster")
    fields = {"model": columns.model, "item": columns.item, "score": columns.score,
              "cluster": columns.cluster or "cluster"}
    aligned = (rows.map_batches(_with_shard, batch_size=None, batch_format="pyarrow", fn_kwargs={"k": k})
               .groupby("shard", num_partitions=k)
               .map_groups(_aligned, batch_format="pyarrow",
                           fn_kwargs={"models": models, "columns": block_columns, "fields": fields}))

    def blocks() -> Iterator[Block]:
        errors = []
        try:
            for batch in aligned.iter_batches(batch_format="pyarrow", batch_size=None):
                for payload, error in zip(batch.column("block").to_pylist(), batch.column("error").to_pylist(),
                                          strict=True):
                    if error is not None:
                        errors.append(error)
                    elif not errors:
                        yield _decoded(payload)
        except RayError as exc:
            _failed(exc)
        if errors:  # the first shard's in a fixed order (the same error whichever worker finished first)
            _raise_error(min(errors))

    return models, blocks()
