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
from typing import Any

from .._core.errors import DataError, LLMPowerError  # noqa: F401
from ._tables import TableFiles, refuse
from .contract import SHARD_ROWS, Block, LongColumns, align_block, shard_count

__all__ = ["connect", "duckdb_blocks", "quote"]


def connect(tmp: str, *, stored: bool = True) -> Any:
    """A DuckDB connection with the table engines' settings: memory limit ``LLM_POWER_DUCKDB_MEMORY``
    (default 1GB), spilling to ``tmp``, no extension downloads, no progress bar. ``stored``: a database
    file in ``tmp`` (its tables are stored compressed, and DuckDB's buffer pool keeps what is in memory
    within the limit), else an in-memory database.
    """
    try:
        import duckdb
    except ImportError as exc:
        msg = "engine='duckdb' (--engine duckdb) needs the duckdb extra: pip install 'llm-power[duckdb]'"
        raise LLMPowerError(msg) from exc
    memory = os.environ.get("LLM_POWER_DUCKDB_MEMORY", "1GB")
    con = duckdb.connect(os.path.join(tmp, "rows.duckdb") if stored else ":memory:", config={
        "memory_limit": memory, "temp_directory": tmp, "threads": os.cpu_count() or 1,
        "preserve_insertion_order": False, "enable_external_access": True,
        "autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute("SET enable_progress_bar = false")
    return con


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
            parts.append(con.read_csv(list(files.csv), filename=True, union_by_name=True, header=True,
                                      all_varchar=True))  # text, as the local reader reads a CSV ("007" stays "007")
        if files.jsonl:
            parts.append(con.read_json(list(files.jsonl), format="newline_delimited", filename=True))
    except Exception as exc:  # noqa: BLE001 - duckdb's errors name the file in their text
        raise DataError(" ".join(f"cannot read: {exc}".split())[:300], file=files.all[0]) from None
    rel = parts[0]
    for other in parts[1:]:
        rel = rel.union(other) if rel.columns == other.columns else _union_by_name(con, rel, other)
    return rel


def _register_filesystems(con: Any, names: tuple[str, ...]) -> None:
    """URLs are read through fsspec (its filesystem of each protocol registered with DuckDB): no DuckDB
    extension is downloaded, and the credentials are fsspec's (``AWS_*``, ``HF_TOKEN``, ...).
    """
    protocols = sorted({name.split("://", 1)[0] for name in names if "://" in name})
    if not protocols:
        return
    import fsspec

    for protocol in protocols:
        if not con.filesystem_is_registered(protocol):
            con.register_filesystem(fsspec.filesystem(protocol))


def _union_by_name(con: Any, a: Any, b: Any) -> Any:
    a.create_view("_lp_a", replace=True)
    b.create_view("_lp_b", replace=True)
    return con.sql("SELECT * FROM _lp_a UNION ALL BY NAME SELECT * FROM _lp_b")


def duckdb_blocks(files: TableFiles, read: dict[str, Any]) -> tuple[list[Any], Iterator[Block]]:
    """The table's models (sorted as text) and its aligned item shards, one at a time.

    One pass of SQL codes the rows: the distinct models, items, cluster labels, files (and text
    scores) become small dictionaries checked here by the local reader's rules, and the rows a table
    of integer codes (DuckDB spills it to disk past its memory limit). Each item shard is then one
    query of integers, aligned by :func:`~llm_power.engines.contract.align_block`.
    """
    import numpy as np

    tmp = tempfile.mkdtemp(prefix="llm-power-duckdb-")
    try:
        con = connect(tmp)
    except BaseException:
        _close(None, tmp)
        raise
    try:
        local_error = refuse(read)
        _register_filesystems(con, files.all)
        views = []
        if files.parquet or files.csv or files.jsonl:
            columns = _plain_view(con, files, read)
            views.append("_lp_plain")
        if files.eee:
            eee = _eee_view(con, files.eee, metric=read.get("metric"), cluster=read.get("cluster"),
                            local_error=local_error)
            columns = columns if views else eee
            views.append("_lp_eee")
        fields = {"model": columns.model, "item": columns.item, "score": columns.score}
        if columns.cluster is not None:
            fields["cluster"] = columns.cluster
        con.execute("CREATE VIEW _lp_long AS " + " UNION ALL BY NAME ".join(f"SELECT * FROM {v}" for v in views))
        for name, field in fields.items():  # a null: the local reader names its file, row and field
            hit = con.sql(f"SELECT source FROM _lp_long WHERE {name} IS NULL LIMIT 1").fetchall()  # noqa: S608
            if hit:
                local_error(hit[0][0], field)
        text_scores = not _numeric(con.sql("SELECT score FROM _lp_long LIMIT 0").types[0])
        coded = ["model", "item", "source"] + (["cluster"] if columns.cluster is not None else []) + (
            ["score"] if text_scores else [])
        values = {name: _dictionary(con, name) for name in coded}
        texts = {name: _checked(con, name, values[name], fields.get(name, name), local_error)
                 for name in coded if name != "source"}
        models = sorted(set(texts["model"][1].tolist()), key=str)
        ((rows,),) = con.sql("SELECT count(*) FROM _lp_long").fetchall()  # Parquet: from the footers
        k = shard_count(int(rows), shard_rows=int(os.environ.get("LLM_POWER_SHARD_ROWS", SHARD_ROWS)))
        joins = " ".join(f"JOIN _lp_d_{name} d_{name} ON l.{name} = d_{name}.raw" for name in coded)
        score = "d_score.code AS s" if text_scores else "CAST(l.score AS DOUBLE) AS s"
        cols = ", ".join([f"d_{name}.code AS {name}" for name in coded if name != "score"] + [score])
        # the rows as integer codes, stored in shard order: a shard's query reads only its own row groups
        con.execute(f"CREATE TABLE _lp_coded AS SELECT {cols}, CAST(d_item.code % {int(k)} AS INTEGER) AS shard "  # noqa: S608
                    f"FROM _lp_long l {joins} ORDER BY shard")
        if not text_scores:
            hit = con.sql("SELECT source FROM _lp_coded WHERE NOT isfinite(s) LIMIT 1").fetchall()
            if hit:
                local_error(values["source"][hit[0][0]], columns.score)
    except BaseException:
        _close(con, tmp)
        raise
    block_columns = LongColumns(model="model", item="item", score="score",
                                cluster=None if columns.cluster is None else "cluster")
    sources = np.asarray(values["source"], dtype=object)

    def named_error(file: str, name: str) -> Any:
        return local_error(file, fields.get(name, name))

    def shards() -> Iterator[Block]:
        import pandas as pd

        try:
            for part in range(k):
                got = con.sql(f"SELECT * EXCLUDE (shard) FROM _lp_coded WHERE shard = {part}").fetchnumpy()  # noqa: S608
                frame = pd.DataFrame({name: _categorical(got[name], *texts[name])
                                      for name in ("model", "item", "cluster") if name in texts})
                frame["score"] = texts["score"][2][got["s"]] if text_scores else got["s"]
                frame["source"] = pd.Categorical.from_codes(np.asarray(got["source"], dtype=np.int64),
                                                            categories=pd.Index(sources))
                del got
                yield align_block(frame, models, columns=block_columns, local_error=named_error)
        finally:
            _close(con, tmp)

    return models, shards()


def _plain_view(con: Any, files: TableFiles, read: dict[str, Any]) -> LongColumns:
    """The long tables as the view ``_lp_plain`` (model, item, score[, cluster], source), their columns
    found by the local reader's rules.
    """
    rel = _relation(con, files)
    columns = LongColumns.resolve(rel.columns, source=files.all[0], metric=read.get("metric"),
                                  cluster=read.get("cluster"), item_column=read.get("item_column"))
    picked = [f"{quote(columns.model)} AS model", f"{quote(columns.item)} AS item",
              f"{quote(columns.score)} AS score", "filename AS source"]
    if columns.cluster is not None:
        picked.insert(3, f"{quote(columns.cluster)} AS cluster")
    rel.create_view("_lp_rows", replace=True)
    con.execute(f"CREATE VIEW _lp_plain AS SELECT {', '.join(picked)} FROM _lp_rows")  # noqa: S608 - quoted
    return columns


def _eee_view(con: Any, paths: tuple[str, ...], *, metric: str | None, cluster: str | None,
              local_error: Any) -> LongColumns:
    """The Every Eval Ever datastore's Parquet views as the view ``_lp_eee`` (model, item, score[, cluster],
    source) by the local reader's rules: the model is ``model_id``, the item ``<evaluation_name>:<sample_id>``,
    the score ``evaluation.<metric>`` (``score`` by default; a struct or JSON text), averaged over a sample's
    epochs (``metadata.epoch``) within a file; a sample twice for one epoch, or a missing score or label, is
    the local reader's error for that file. Items whose reference (``input.reference``) differs between
    models are an error, as on the local path.
    """
    from ..io.align import targets_differ

    rel = con.read_parquet(list(paths), filename=True, union_by_name=True)
    rel.create_view("_lp_eee_raw", replace=True)
    kinds = dict(zip(rel.columns, rel.types, strict=True))

    def nested(column: str, key: str) -> str:
        """``column.key`` of a struct, or the key of JSON text, as text (NULL when absent)."""
        kind = kinds.get(column)
        if kind is None:
            return "NULL"
        if kind.id == "struct":
            if key not in [name for name, _ in kind.children]:
                return "NULL"
            return f"CAST(struct_extract({quote(column)}, {_literal(key)}) AS VARCHAR)"
        return f"json_extract_string({quote(column)}, {_literal('$.' + _json_key(key))})"

    text = nested("evaluation", metric or "score")  # booleans as 1 and 0, numbers as themselves
    score = (f"CASE lower({text}) WHEN 'true' THEN 1.0 WHEN 'false' THEN 0.0 "
             f"ELSE TRY_CAST({text} AS DOUBLE) END")
    epoch = f"coalesce({nested('metadata', 'epoch')}, '1')"
    label = f", {nested('metadata', cluster)} AS cluster" if cluster is not None else ""
    reference = nested("input", "reference")
    con.execute(f"CREATE VIEW _lp_eee_rows AS SELECT CAST(model_id AS VARCHAR) AS model, "  # noqa: S608
                f"CAST(evaluation_name AS VARCHAR) || ':' || CAST(sample_id AS VARCHAR) AS item, {epoch} AS epoch, "
                f"{score} AS score{label}, {reference} AS target, filename AS source FROM _lp_eee_raw")
    bad = con.sql("SELECT source FROM _lp_eee_rows WHERE model IS NULL OR trim(model) IN ('', 'None') OR item IS NULL "
                  "OR score IS NULL" + (" OR cluster IS NULL OR trim(cluster) = ''" if cluster else "")
                  + " LIMIT 1").fetchall()
    twice = con.sql("SELECT source FROM _lp_eee_rows GROUP BY source, model, item, epoch HAVING count(*) > 1 "
                    "LIMIT 1").fetchall()
    for hit in (bad, twice):
        if hit:
            local_error(hit[0][0], "sample_id")
    conflict = con.sql("SELECT item, count(*) OVER () FROM _lp_eee_rows WHERE target IS NOT NULL GROUP BY item "
                       "HAVING count(DISTINCT target) > 1 ORDER BY item LIMIT 1").fetchall()
    if conflict:
        item, count = conflict[0]
        rows = con.execute("SELECT model, min(target) FROM _lp_eee_rows WHERE item = $1 AND target IS NOT NULL "
                           "GROUP BY model ORDER BY model", [item]).fetchall()
        seen: dict[str, str] = {}
        for model, target in rows:
            seen.setdefault(target, model)
        raise targets_differ(int(count), item, "; ".join(f"{m}: {t[:30]!r}" for t, m in seen.items()))
    con.execute("CREATE VIEW _lp_eee AS SELECT model, item, sum(score) / count(*) AS score"  # noqa: S608
                + (", min(cluster) AS cluster" if cluster else "") + ", source FROM _lp_eee_rows "
                "GROUP BY source, model, item")
    return LongColumns(model="model_id", item="sample_id", score=f"evaluation.{metric or 'score'}",
                       cluster=None if cluster is None else f"metadata.{cluster}")


def _literal(text: str) -> str:
    """A SQL string literal of any text."""
    return "'" + text.replace("'", "''") + "'"


def _json_key(key: str) -> str:
    """A key of a JSON path, quoted."""
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _close(con: Any, tmp: str) -> None:
    import shutil

    if con is not None:
        con.close()
    shutil.rmtree(tmp, ignore_errors=True)


def _numeric(kind: Any) -> bool:
    """Whether a DuckDB column type is read as a number by the local reader (integers, floats,
    decimals, booleans), not parsed as text.
    """
    name = str(kind).upper()
    return name == "BOOLEAN" or any(name.startswith(t) for t in (
        "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
        "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL"))


def _dictionary(con: Any, name: str) -> list[Any]:
    """The distinct values of a column as a temporary table ``_lp_d_<name>(raw, code)``; the values by code."""
    con.execute(f"CREATE TABLE _lp_d_{name} AS SELECT raw, CAST(row_number() OVER () - 1 AS INTEGER) AS code "  # noqa: S608
                f"FROM (SELECT DISTINCT {name} AS raw FROM _lp_long)")
    return [v for (v,) in con.sql(f"SELECT raw FROM _lp_d_{name} ORDER BY code").fetchall()]  # noqa: S608


def _checked(con: Any, name: str, values: list[Any], field: str, local_error: Any) -> tuple[Any, Any, Any]:
    """A dictionary checked by the local reader's rules: ``(codes of its texts, the texts, scores)``; a
    value the reader refuses is its one-line error for the first file that has it.
    """
    import numpy as np

    from ..io.long_columns import id_texts, label_texts, score_values

    array = np.empty(len(values), dtype=object)
    array[:] = values
    scores = None
    if name == "score":
        scores, bad = score_values(array, field)
        return np.arange(len(values)), np.asarray(values, dtype=object), scores if not bad.any() else _refused(
            con, name, values, bad, field, local_error)
    cat, bad = label_texts(array) if name == "cluster" else id_texts(array, field)
    if bad.any():
        _refused(con, name, values, bad, field, local_error)
    return np.asarray(cat.codes, dtype=np.int64), np.asarray(cat.categories, dtype=object), None


def _refused(con: Any, name: str, values: list[Any], bad: Any, field: str, local_error: Any) -> Any:
    import numpy as np

    value = values[int(np.argmax(bad))]
    (file,) = con.execute(f"SELECT min(source) FROM _lp_long WHERE {name} = $1", [value]).fetchall()[0]  # noqa: S608
    return local_error(file, field)


def _categorical(codes: Any, text_codes: Any, texts: Any, _scores: Any = None) -> Any:
    """Codes of a dictionary as a Categorical of its texts (two raw values with one text share a code)."""
    import numpy as np
    import pandas as pd

    return pd.Categorical.from_codes(text_codes[np.asarray(codes, dtype=np.int64)], categories=pd.Index(texts))
