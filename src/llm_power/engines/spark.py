"""Spark as the engine of long tables on a cluster (``engine="spark"``, ``--engine spark``).

The inputs are read by Spark where they live: Parquet, CSV/TSV (header row, every value as text, as the
local reader reads it) and JSONL files or folders, tables of the session's catalog (``db.results``) and
Delta tables (a folder with ``_delta_log``, when the session has delta-spark configured). Only the long
table's columns (model, item, score[, cluster]) and each row's file are kept; the models are listed and
the rows counted by one aggregation, and the rows are grouped into item shards by
``pmod(hash(item), K)``. Each shard is aligned **on the executors** by
:func:`llm_power.engines.contract.align_block` (``groupBy("shard").applyInArrow``) and comes back as plain
rows (:func:`~llm_power.engines.contract.block_rows`: Arrow metadata does not survive Spark); the driver
assembles the blocks into the score matrix the local path builds (see :mod:`llm_power.engines.contract`).

Session: the active one (a notebook's, a job's) when there is one and ``master`` names no other, else a
quiet loopback-only ``local[n_workers or *]`` session (or ``master``) started for the call and stopped after
it. Settings: ``LLM_POWER_SHARD_ROWS`` (rows per item shard, default 2,000,000), ``LLM_POWER_SPARK_DRIVER_MEMORY``
(the driver memory of a session llm-power starts, default 4g: the blocks come back to it). Install: ``pip install
'llm-power[spark]'`` (Java 17+).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .._core.errors import DataError, LLMPowerError
from ._tables import refuse, table_files
from .contract import BLOCK_ROWS_DDL, SHARD_ROWS, Block, LongColumns, blocks_from_rows, shard_count, shard_rows

__all__ = ["spark_blocks"]

#: the long table's columns under the names the shards are aligned with (a user's column of the same
#: name is only ever read through its resolved, escaped name)
_NAMES = ("model", "item", "score", "cluster")


def _pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError as exc:
        msg = "engine='spark' (--engine spark) needs the spark extra: pip install 'llm-power[spark]'"
        raise LLMPowerError(msg) from exc
    return pyspark.sql


def start_session(master: str | None = None, n_workers: int | None = None) -> tuple[Any, bool]:
    """The Spark session the engine uses and whether it was started here (then the caller stops it): the
    active session when ``master`` is None or its own master, else a quiet loopback-only local session.
    """
    sql = _pyspark()
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        if master is None or active.sparkContext.master == master:
            return active, False
        msg = (f"a Spark session with master {active.sparkContext.master!r} is active in this process; "
               f"master={master!r} cannot start another (leave --master out to use it)")
        raise LLMPowerError(msg)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors' Python: this one (local masters)
    url = master or f"local[{n_workers or '*'}]"
    if url.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # the loopback, not the host's first interface
    log4j = Path(__file__).with_name("log4j2-spark.properties")  # errors only: no start-up chatter on stderr
    folder = Path(tempfile.mkdtemp(prefix="llm-power-spark-"))
    builder = (sql.SparkSession.builder.master(url).appName("llm-power")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j.as_uri()}")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", str(max(2, 2 * (n_workers or os.cpu_count() or 1))))
               .config("spark.sql.session.timeZone", "UTC")
               # the blocks come back to this driver: room for the score matrix (items x models x 8 bytes)
               .config("spark.driver.memory", os.environ.get("LLM_POWER_SPARK_DRIVER_MEMORY", "4g"))
               .config("spark.driver.maxResultSize", "0")
               # its own warehouse folder, never ./spark-warehouse beside the user's files
               .config("spark.sql.warehouse.dir", (folder / "warehouse").as_uri())
               )
    # the JVM writes its start-up notes straight to the stderr it inherits: it inherits a log file instead
    log = folder / "spark.log"
    saved = os.dup(2)
    try:
        with open(log, "ab") as sink:  # noqa: PTH123 - a descriptor to hand down, not a text file
            os.dup2(sink.fileno(), 2)
            spark = builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def _stop(spark: Any) -> None:
    """Stop a session llm-power started and remove its temporary folder (warehouse, JVM log)."""
    import shutil

    warehouse = spark.conf.get("spark.sql.warehouse.dir", "")
    spark.stop()
    if warehouse.startswith("file:") and "llm-power-spark-" in warehouse:
        from urllib.parse import unquote, urlparse

        shutil.rmtree(Path(unquote(urlparse(warehouse).path)).parent, ignore_errors=True)


def _escaped(name: str) -> Any:
    """A column by its name, whatever the text (backticks doubled; never parsed as an expression)."""
    from pyspark.sql import functions as F  # noqa: N812

    return F.col("`" + name.replace("`", "``") + "`")


def _file_source(df: Any) -> Any:
    """The file of each row (a URI, mapped back to the given path on the executors)."""
    from pyspark.sql import functions as F  # noqa: N812

    if "_metadata" in df.columns:  # pragma: no cover - a user's column hides Spark's metadata
        return F.input_file_name()
    return df["_metadata.file_path"]


def _parts(spark: Any, paths: Sequence[str | Path], read: dict[str, Any]) -> tuple[list[tuple[Any, Any]], list[str]]:
    """Per input, a Spark DataFrame and its ``source`` column; the local files as given (by the local
    reader's names of them).
    """
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F  # noqa: N812

    files: list[str | Path] = []
    parts: list[tuple[Any, Any]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and (path / "_delta_log").is_dir():
            try:
                df = spark.read.format("delta").load(str(path))
            except (PySparkException, Py4JJavaError):  # no "delta" data source in this session
                msg = ("is a Delta table: engine 'spark' reads Delta with a session that has delta-spark configured "
                       "(spark.sql.extensions io.delta.sql.DeltaSparkSessionExtension); start one, or read the "
                       "table's Parquet files with --engine duckdb")
                raise DataError(msg, file=str(raw)) from None
            parts.append((df, F.lit(str(raw))))
        elif not path.exists() and _is_table(spark, str(raw)):
            parts.append((spark.table(str(raw)), F.lit(str(raw))))
        else:
            files.append(raw)
    local: list[str] = []
    if files:
        found = table_files(files, engine="spark", format=read.get("format") or "auto")
        local = list(found.all)
        if found.parquet:  # (spark.read is a new reader each time: options do not leak from one to the next)
            df = spark.read.option("mergeSchema", "true").parquet(*found.parquet)
            parts.append((df, _file_source(df)))
        for csv in found.csv:  # one by one: each file's header names its own columns
            sep = "\t" if csv.lower().endswith((".tsv", ".tsv.gz")) else ","
            df = (spark.read.option("header", "true").option("sep", sep).option("quote", '"').option("escape", '"')
                  .option("multiLine", "true").option("inferSchema", "false").csv(csv))
            parts.append((df, _file_source(df)))
        if found.jsonl:
            df = spark.read.option("mode", "PERMISSIVE").json(list(found.jsonl))
            parts.append((df, _file_source(df)))
    return parts, local


def _is_table(spark: Any, name: str) -> bool:
    from pyspark.errors import PySparkException

    try:
        return bool(spark.catalog.tableExists(name))
    except PySparkException:  # not a table name (Spark cannot parse it)
        return False


def _long(parts: list[tuple[Any, Any]], read: dict[str, Any], first: str) -> tuple[Any, LongColumns]:
    """One DataFrame of every part's long-table columns (``model, item, score[, cluster], source``)
    and the resolved columns. A column of text in one part and numbers in another is carried as two
    columns, its text and (name + ``_value``) its values, put back together on the executors (a cast of
    a double to text by Spark is not Python's text of it, and may not even be the same number).
    """
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import NullType, StringType

    names: list[str] = []
    for df, _ in parts:
        names += [c for c in df.columns if c not in names]
    columns = LongColumns.resolve(names, source=first, metric=read.get("metric"), cluster=read.get("cluster"),
                                  item_column=read.get("item_column"))
    named = {"model": columns.model, "item": columns.item, "score": columns.score, "cluster": columns.cluster}
    chosen = {k: name for k, name in named.items() if name is not None}
    picked = []
    for df, source in parts:
        cols = [(_escaped(chosen[k]) if chosen[k] in df.columns else F.lit(None)).alias(k)
                for k in _NAMES if k in chosen]
        picked.append(df.select(*cols, source.alias("source")))
    for k in chosen:
        types = {p.schema[k].dataType for p in picked} - {NullType()}
        if len(types) > 1:
            picked = [p.withColumn(f"{k}_value", F.lit(None) if isinstance(p.schema[k].dataType, StringType)
                                   else F.col(k)).withColumn(k, F.col(k) if isinstance(p.schema[k].dataType, StringType)
                                                             else F.lit(None).cast(StringType()))
                      for p in picked]
    df = picked[0]
    for other in picked[1:]:
        df = df.unionByName(other)
    return df, columns


def _given(local: list[str]) -> dict[str, str]:
    """The given name of each local file by its resolved path (how a Spark file URI is mapped back)."""
    return {os.path.realpath(p): p for p in local}


def _source_text(uri: str, given: dict[str, str]) -> str:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return uri
    return given.get(os.path.realpath(unquote(parsed.path)), uri)


def _joined(table: Any) -> Any:
    """A shard's rows (a pyarrow Table) with each column carried as text and values put back together
    (a pandas DataFrame then: the text where there is one, else the value, as the local reader has it).
    """
    split = [name for name in _NAMES if f"{name}_value" in table.column_names]
    if not split:
        return table
    import numpy as np
    import pandas as pd

    frame = table.to_pandas()
    for name in split:
        text, value = frame.pop(name), frame.pop(f"{name}_value").to_numpy(dtype=object)
        frame[name] = pd.Series(np.where(text.isna().to_numpy(), value, text.to_numpy(dtype=object)), dtype=object)
    return frame


def spark_blocks(paths: Sequence[str | Path], read: dict[str, Any], *, master: str | None = None,
                 n_workers: int | None = None) -> tuple[list[Any], Iterator[Block]]:
    """The table's models (sorted as text) and its aligned item shards, aligned on Spark's executors."""
    with warnings.catch_warnings():  # pyspark's note on its pandas support is not the user's concern
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support", category=FutureWarning)
        spark, started = start_session(master, n_workers)
        try:
            models, blocks = _blocks(spark, paths, read)
        finally:
            if started:
                _stop(spark)
    return models, iter(blocks)


def _blocks(spark: Any, paths: Sequence[str | Path], read: dict[str, Any]) -> tuple[list[Any], list[Block]]:
    from pyspark.sql import functions as F  # noqa: N812

    from ..io.plain import id_text

    parts, local = _parts(spark, paths, read)
    df, columns = _long(parts, read, first=str(paths[0]))
    given = _given(local)
    local_error = refuse(read)
    found = df.groupBy("model").agg(F.min("source").alias("source"), F.count(F.lit(1)).alias("rows")).collect()
    texts = {}
    for row in found:
        source = _source_text(row["source"], given)
        if row["model"] is None:
            local_error(source, columns.model)
        try:
            texts[row["model"]] = id_text(row["model"], file=source, record="", field=columns.model)
        except DataError:
            local_error(source, columns.model)
        if texts[row["model"]].strip() == "":
            local_error(source, columns.model)
    models = sorted(set(texts.values()), key=str)
    rows = sum(int(row["rows"]) for row in found)
    k = shard_count(rows, shard_rows=int(os.environ.get("LLM_POWER_SHARD_ROWS", SHARD_ROWS)))
    block_columns = LongColumns(model="model", item="item", score="score",
                                cluster=None if columns.cluster is None else "cluster")
    field_names = {"model": columns.model, "item": columns.item, "score": columns.score,
                   "cluster": columns.cluster or "cluster"}

    def align(key: Any, table: Any) -> Any:  # on an executor: one shard's rows -> its block as rows
        import pyarrow as pa

        shard = int(key[0].as_py())
        sources = [_source_text(s, given) for s in table.column("source").to_pylist()]
        table = table.drop(["shard"])
        table = _joined(table.set_column(table.schema.get_field_index("source"), "source",
                                         pa.array(sources, type=pa.string())))
        error = refuse(read)

        def named_error(file: str, name: str) -> Any:
            return error(file, field_names.get(name, name))

        return shard_rows(table, models, shard=shard, columns=block_columns, local_error=named_error)

    sharded = df.withColumn("shard", F.pmod(F.hash(F.col("item")), F.lit(k)))
    out = sharded.groupBy("shard").applyInArrow(align, BLOCK_ROWS_DDL)
    return models, blocks_from_rows(_collect(out))


def _collect(frame: Any) -> Any:
    """The blocks' rows on the driver (an Arrow table); a failure of the Spark job is one line."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        return frame.toArrow()
    except (PySparkException, Py4JJavaError) as exc:
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        msg = (f"the Spark job failed: {first[:300]} (the session's spark.driver.memory and "
               "spark.driver.maxResultSize must hold the score matrix: items x models x 8 bytes; the JVM's "
               "log of a session llm-power started is spark.log in its llm-power-spark-* temporary folder)")
        raise LLMPowerError(msg) from None
