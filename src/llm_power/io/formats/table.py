"""Plain tables: CSV/TSV/JSONL (``.gz`` too) and Parquet, long (``model, item, score[, cluster]``)
or wide (an item column and one column per model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..._core.labels import missing_label
from ..._core.suggest import no_column
from ..plain import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, id_text, parse_score, plain_suffix, table_records
from ..records import (
    AggregateOptions,
    AggregateReader,
    BattleReader,
    Format,
    ReadOptions,
    Record,
    SampleOptions,
    SampleReader,
)
from ..safe import parquet_columns, peek_json, read_parquet, regular_files


def read_plain(path: Path, *, metric: str | None = None, cluster: str | None = None,
               model_column: str = "model", item_column: str | None = None) -> Iterator[Record]:
    """Plain CSV/TSV/JSONL/Parquet in one of three layouts.

    - long, several models: a ``model`` column, an item id and a score column;
    - one model per file: an item id and a score column named ``score``, ``correct``, ``acc``, ...
      (or ``metric``), other columns ignored; the model is named after the file (its stem);
    - wide: an item id and one column per model (every other column except ``cluster``).
    """
    from ..plain import read_wide_matrix

    if path.suffix.lower() == ".parquet":
        columns = parquet_columns(path)  # the header only, not the table
        rows: Iterable[tuple[Any, dict[str, Any]]] = ()
    else:
        iterator = table_records(path)
        first = next(iterator, None)
        if first is None:
            msg = "no records (empty file)"
            raise DataError(msg, file=str(path))
        columns = list(first[1].keys())
        rows = _chain_first(first, iterator)
    if model_column not in columns and model_column == "model":
        model_column = next((c for c in MODEL_COLUMNS if c in columns), model_column)
    if {"model_a", "model_b"} <= set(columns) and model_column not in columns:
        msg = ("looks like pairwise battles (model_a, model_b, winner), not per-item scores: diagnose and compare "
               "need each model's score on each item (pairwise preferences are not read yet)")
        raise DataError(msg, file=str(path))
    if model_column in columns:
        yield from _read_long(path, rows, columns, metric=metric, cluster=cluster, model_column=model_column,
                              item_column=item_column)
        return
    score_col = metric if metric in columns else (
        next((c for c in SCORE_COLUMNS if c in columns), None) if metric is None else None)
    if metric is not None and score_col is None and path.suffix.lower() != ".parquet":
        raise DataError(no_column("score", metric, columns), file=str(path))
    if score_col is not None and path.suffix.lower() != ".parquet":  # one model per file
        from ..plain import read_item_scores

        one = read_item_scores(path, item_column=item_column, score_column=score_col, cluster_column=cluster,
                               cluster_required=False)
        for i, item in enumerate(one.items):
            name = Path(path.stem).stem if path.suffix.lower() == ".gz" else path.stem  # a.csv.gz -> a
            yield Record(name, item, float(one.scores[i]), None if one.clusters is None else one.clusters[i],
                         None, str(path))
        return
    items, names, values, clusters = read_wide_matrix(path, cluster_column=cluster, item_column=item_column)
    for j, name in enumerate(names):
        for i, item in enumerate(items):
            if math.isnan(values[i, j]):  # an empty cell: the model lacks the item (see on_missing)
                continue
            yield Record(name, item, float(values[i, j]), None if clusters is None else clusters[i], None, str(path))


def _read_long(path: Path, rows: Iterable[tuple[Any, dict[str, Any]]], columns: list[str], *, metric: str | None,
               cluster: str | None, model_column: str, item_column: str | None) -> Iterator[Record]:
    """Records of a long table: a model column, an item id and a score column per row."""
    item_col = item_column if item_column in columns else next((c for c in ITEM_COLUMNS if c in columns), None)
    score_col = metric or next((c for c in SCORE_COLUMNS if c in columns), None)
    listed = ", ".join(map(repr, columns))
    if item_column is not None and item_column not in columns:
        raise DataError(no_column("item id", item_column, columns), file=str(path))
    if item_col is None:
        msg = f"cannot tell which column is the item id; columns are {listed} (choose one with `item_column`)"
        raise DataError(msg, file=str(path))
    if score_col is None or score_col not in columns:
        msg = (no_column("score", metric, columns) if metric else
               f"cannot tell which column is the score; columns are {listed} (choose one with `metric`)")
        raise DataError(msg, file=str(path))
    if cluster is not None and cluster not in columns:  # named, not there: not a missing label on every row
        raise DataError(no_column("cluster", cluster, columns), file=str(path))
    if path.suffix.lower() == ".parquet":
        frame = read_parquet(path)
        rows = ((k, {c: frame[c].iloc[k] for c in frame.columns}) for k in range(len(frame)))
    unit = "row" if path.suffix.lower() == ".parquet" else "line"
    for recno, rec in rows:
        where = f"{unit} {recno}"
        if cluster is not None and missing_label(rec.get(cluster)):
            msg = "missing cluster label"
            raise DataError(msg, file=str(path), record=where, field=cluster)
        for col in (model_column, item_col):
            value = rec.get(col)
            if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
                msg = f"missing or empty {'model name' if col == model_column else 'item id'}"
                raise DataError(msg, file=str(path), record=where, field=col)
        yield Record(id_text(rec[model_column], file=str(path), record=where, field=model_column),
                     id_text(rec[item_col], file=str(path), record=where, field=item_col),
                     parse_score(rec.get(score_col), file=str(path), record=where, field=score_col),
                     None if cluster is None else str(rec[cluster]), None, str(path))


_TEXT_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".ndjson")


def _claims_text(path: Path) -> bool:
    if not path.is_file():
        return False
    suffix = path.suffix.lower()
    if suffix in _TEXT_SUFFIXES or (suffix == ".gz" and plain_suffix(path) in _TEXT_SUFFIXES):
        return True
    if suffix == ".json" or (suffix == ".gz" and plain_suffix(path) == ".json"):
        return isinstance(peek_json(path), list)  # an array of records: a plain table
    return False


def _read(path: Path, o: ReadOptions) -> Iterator[Record]:
    return read_plain(path, metric=o.metric, cluster=o.cluster, item_column=o.item_column)


FORMATS = (
    Format(name="csv", summary="CSV/TSV/JSONL", order=50, read=_read, claims=_claims_text),
    Format(name="parquet", summary="Parquet", order=60, read=_read,
           claims=lambda path: path.is_file() and path.suffix.lower() == ".parquet"),
)


def _chain_first(first: tuple[Any, ...], rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


# ---- repeated samples (passk): a long table ------------------------------------------------------------

def read_long_samples(path: Path, options: SampleOptions) -> Iterator[dict[str, Any]]:
    """A long table with ``model, item, sample, score`` (and the cluster field)."""
    cluster = options.cluster
    needed = ("model", "item", "sample", "score")
    for record, rec in table_records(path):
        where = f"line {record}" if isinstance(record, int) else str(record)
        for field in needed:
            if rec.get(field) in (None, ""):
                msg = "is missing (a long samples table has model, item, sample, score)"
                raise DataError(msg, file=str(path), record=where, field=field)
        label = None
        if cluster is not None:
            label = rec.get(cluster)
            if missing_label(label):
                msg = "is missing"
                raise DataError(msg, file=str(path), record=where, field=cluster)
        model, item, sample = (id_text(rec[f], file=str(path), record=where, field=f) for f in needed[:3])
        yield {"model": model, "item": item, "sample": sample,
               "score": parse_score(rec["score"], file=str(path), record=where, field="score"), "cluster": label}


SAMPLES = (SampleReader("table", "CSV/TSV/JSONL long tables with model, item, sample, score", read_long_samples,
                        lambda path: plain_suffix(path) in (".csv", ".tsv", ".jsonl", ".ndjson"), order=90),)


# ---- aggregate scores (aggregate): leaderboard tables ---------------------------------------------------------

def _read_leaderboards(files: list[Path], options: AggregateOptions) -> list[Any]:
    from ..scores import read_leaderboard_table

    return [s for path in files for s in read_leaderboard_table(path, metric=options.metric, items=options.items)]


def _claims_leaderboard(path: Path) -> bool:
    from ..scores import is_leaderboard_table

    return is_leaderboard_table(path)


AGGREGATES = (AggregateReader("leaderboard", "leaderboard tables (CSV/TSV: a model and a score column)",
                              _read_leaderboards, _claims_leaderboard, order=40),)


# ---- pairwise battles (arena, judges): arena logs, MT-Bench *_pair.jsonl, AlpacaEval annotations.json --------

_BATTLE_NAMES = ("_pair.jsonl", "annotations.json")


def _read_battle_table(path: Path) -> tuple[Any, int]:
    from ..battle_tables import read_battle_table

    return read_battle_table(path)


BATTLES = (BattleReader("table", "arena logs (CSV/TSV/JSONL/JSON/Parquet: model_a, model_b, winner), MT-Bench "
                        "*_pair.jsonl, AlpacaEval annotations.json", _read_battle_table,
                        lambda path: plain_suffix(path) in (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet"),
                        order=90, finds=lambda folder: regular_files(folder, "*",
                                                                     lambda p: p.name.endswith(_BATTLE_NAMES))),)

