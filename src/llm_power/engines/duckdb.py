"""DuckDB as the engine of long tables larger than memory (``engine="duckdb"``, ``--engine duckdb``).

DuckDB reads the Parquet, CSV/TSV and JSONL files in process and out of core: only the columns of the
long table (model, item, score[, cluster]) are read, the models listed and the rows counted by SQL,
and the rows partitioned into item shards by ``hash(item) mod K`` into Parquet files of a temporary
folder (DuckDB spills to disk past its memory limit). Each shard is then read back and aligned by
:func:`llm_power.engines.contract.align_block`; the blocks are assembled into the score matrix the
local path builds (see :mod:`llm_power.engines.contract`). Memory on this machine is one shard's rows
plus the matrix (items x models), never the rows of the whole table.

Settings: ``LLM_POWER_DUCKDB_MEMORY`` (DuckDB's ``memory_limit``, default ``"1GB"``) and
``LLM_POWER_SHARD_ROWS`` (rows per item shard, default 2,000,000). Install: ``pip install
'llm-power[duckdb]'``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._core.errors import DataError, LLMPowerError
from ._tables import TableFiles, refuse
from .contract import SHARD_ROWS, Block, LongColumns, align_block, shard_count

__all__ = ["duckdb_blocks"]


def _connect(tmp: str) -> Any:
    try:
        import duckdb
    except ImportError as exc:
        msg = "engine='duckdb' (--engine duckdb) needs the duckdb extra: pip install 'llm-power[duckdb]'"
        raise LLMPowerError(msg) from exc
    memory = os.environ.get("LLM_POWER_DUCKDB_MEMORY", "1GB")
    return duckdb.connect(config={"memory_limit": memory, "temp_directory": tmp, "threads": os.cpu_count() or 1,
                                  "preserve_insertion_order": False, "enable_external_access": True,
                                  "autoinstall_known_extensions": False, "autoload_known_extensions": False})


def quote(name: str) -> str:
    """A column name as a SQL identifier (any text: a quote in it doubled)."""
    return '"' + name.replace('"', '""') + '"'


def _relation(con: Any, files: TableFiles) -> Any:
    """One relation over every input file (columns unified by name, ``filename`` the file of a row)."""
    parts = []
    try:
        if files.parquet:
            parts.append(con.read_parquet(list(files.parquet), filename=True, union_by_name=True))
        if files.csv:
            parts.append(con.read_csv(list(files.csv), filename=True, union_by_name=True, header=True))
        if files.jsonl:
            parts.append(con.read_json(list(files.jsonl), format="newline_delimited", filename=True))
    except Exception as exc:  # noqa: BLE001 - duckdb's errors name the file in their text
        raise DataError(" ".join(f"cannot read: {exc}".split())[:300], file=files.all[0]) from None
    rel = parts[0]
    for other in parts[1:]:
        rel = rel.union(other) if rel.columns == other.columns else _union_by_name(con, rel, other)
    return rel


def _union_by_name(con: Any, a: Any, b: Any) -> Any:
    a.create_view("_lp_a", replace=True)
    b.create_view("_lp_b", replace=True)
    return con.sql("SELECT * FROM _lp_a UNION ALL BY NAME SELECT * FROM _lp_b")


def duckdb_blocks(files: TableFiles, read: dict[str, Any]) -> tuple[list[Any], Iterator[Block]]:
    """The table's models (sorted as text) and its aligned item shards, one at a time."""
    from ..io.plain import id_text

    tmp = tempfile.mkdtemp(prefix="llm-power-duckdb-")
    con = _connect(tmp)
    local_error = refuse(read)
    rel = _relation(con, files)
    columns = LongColumns.resolve(rel.columns, source=files.all[0], metric=read.get("metric"),
                                  cluster=read.get("cluster"), item_column=read.get("item_column"))
    picked = [f"{quote(columns.model)} AS model", f"{quote(columns.item)} AS item",
              f"{quote(columns.score)} AS score", "filename AS source"]
    if columns.cluster is not None:
        picked.insert(3, f"{quote(columns.cluster)} AS cluster")
    rel.create_view("_lp_rows", replace=True)
    con.execute(f"CREATE VIEW _lp_long AS SELECT {', '.join(picked)} FROM _lp_rows")  # noqa: S608 - quoted names
    found = con.sql("SELECT model, min(source) FROM _lp_long GROUP BY model").fetchall()
    models_raw = [m for m, _ in found]
    if any(m is None for m in models_raw):
        local_error(next(s for m, s in found if m is None), columns.model)
    texts = {}
    for value, source in found:
        try:
            texts[value] = id_text(value, file=source, record="", field=columns.model)
        except DataError:
            local_error(source, columns.model)
        if texts[value].strip() == "":
            local_error(source, columns.model)
    models = sorted(set(texts.values()), key=str)
    ((rows,),) = con.sql("SELECT count(*) FROM _lp_long").fetchall()
    k = shard_count(int(rows), shard_rows=int(os.environ.get("LLM_POWER_SHARD_ROWS", SHARD_ROWS)))
    block_columns = LongColumns(model="model", item="item", score="score",
                                cluster=None if columns.cluster is None else "cluster")
    field_names = {"model": columns.model, "item": columns.item, "score": columns.score,
                   "cluster": columns.cluster or "cluster"}

    def named_error(file: str, name: str) -> Any:
        return local_error(file, field_names.get(name, name))

    def shards() -> Iterator[Block]:
        import shutil

        import pyarrow.parquet as pq

        try:
            if k == 1:
                yield align_block(con.sql("SELECT * FROM _lp_long").to_arrow_table(), models, columns=block_columns,
                                  local_error=named_error)
                return
            out = Path(tmp) / "shards"
            con.execute(f"COPY (SELECT *, hash(item) % {int(k)} AS shard FROM _lp_long) TO '{out}' "  # noqa: S608
                        "(FORMAT parquet, PARTITION_BY (shard))")
            for part in range(k):
                folder = out / f"shard={part}"
                table = pq.read_table(folder, read_dictionary=["model", "item", "source"]) if folder.exists() else None
                if table is None:
                    continue
                if "shard" in table.column_names:
                    table = table.drop(["shard"])
                yield align_block(table, models, columns=block_columns, local_error=named_error)
                del table
        finally:
            con.close()
            shutil.rmtree(tmp, ignore_errors=True)

    return models, shards()
