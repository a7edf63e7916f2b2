"""Every Eval Ever (EEE, EvalEval Coalition) instance-level files: ``<uuid>_samples.jsonl``, one
JSON object per sample (schema ``instance_level_eval.schema.json``, versions 0.2.x and 0.3.x), and
the datastore's Parquet view of them (``viewer_parquets/**/dataset_samples.parquet`` of the
``evaleval/EEE_datastore`` dataset: the same fields as columns, the nested ones as structs or as
JSON text).

Per line: ``model_id``, ``evaluation_name`` (the benchmark), ``sample_id``, and the score in
``evaluation.score`` (``evaluation.is_correct`` with ``metric="is_correct"``); repeats are
``metadata.epoch`` (averaged, as inspect's default reducer does); ``metadata`` holds the free-form
fields a cluster can be named from. The item is ``<evaluation_name>:<sample_id>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..._core.labels import missing_label
from ..plain import parse_score, plain_suffix, plain_value, table_records
from ..records import AggregateOptions, AggregateReader, Format, Record, expect
from ..safe import open_bounded, regular_files

#: the keys that make a JSONL line an EEE instance record (required by the schema, 0.2.1 on)
EEE_KEYS = frozenset({"schema_version", "sample_id", "model_id", "evaluation_name", "evaluation"})


def _eee_score(rec: dict[str, Any], metric: str | None, *, file: str, record: str) -> float:
    evaluation = expect(rec.get("evaluation"), dict, "'evaluation'", file=file, record=record)
    name = metric or "score"
    if name not in evaluation or evaluation[name] is None:
        have = [k for k, v in evaluation.items() if isinstance(v, (int, float, bool)) and v is not None]
        msg = f"no per-sample value {name!r} in 'evaluation'; available: {', '.join(map(repr, have)) or 'none'}"
        raise DataError(msg, file=file, record=record, field=f"evaluation.{name}")
    value = evaluation[name]
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return parse_score(value, file=file, record=record, field=f"evaluation.{name}")


#: the nested fields of an instance record (a struct, or JSON text, in the datastore's Parquet view)
_NESTED = ("evaluation", "metadata", "input", "output", "token_usage", "performance")



def parquet_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(row label, record) of a Parquet view, nested JSON text parsed."""
    from ..safe import load_json_bytes, read_parquet

    frame = read_parquet(path)
    for k, row in enumerate(frame.to_dict(orient="records")):
        rec = {key: plain_value(v) for key, v in row.items()}
        for key in _NESTED:
            if isinstance(rec.get(key), str):
                rec[key] = load_json_bytes(rec[key].encode("utf-8"), file=str(path), record=f"row {k}")
        yield f"row {k}", rec


def _rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    if plain_suffix(path) == ".parquet":
        yield from parquet_rows(path)
        return
    for lineno, rec in table_records(path):
        yield f"line {lineno}", rec


def read_every_eval_ever(path: Path, *, metric: str | None = None, cluster: str | None = None) -> Iterator[Record]:
    """EEE ``*_samples.jsonl`` (streamed) or its Parquet view; a sample seen twice for one epoch is an error."""
    values: dict[tuple[str, str], list[float]] = {}
    meta: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    seen: dict[tuple[str, str, str, str], str] = {}
    file = str(path)
    for record, rec in _rows(path):
        missing = sorted(EEE_KEYS - set(rec))
        if missing:
            msg = f"not an Every Eval Ever instance record (no {', '.join(map(repr, missing))})"
            raise DataError(msg, file=file, record=record, field=missing[0])
        model, bench, sample = (str(rec[k]) for k in ("model_id", "evaluation_name", "sample_id"))
        for value, field in ((model, "model_id"), (sample, "sample_id")):
            if value.strip() in ("", "None"):
                msg = f"empty {field}"
                raise DataError(msg, file=file, record=record, field=field)
        extra = rec.get("metadata") or {}
        expect(extra, dict, "'metadata'", file=file, record=record)
        epoch = str(extra.get("epoch", 1))
        key = (model, bench, sample, epoch)
        if key in seen:
            msg = (f"sample {sample!r} of {bench!r} appears twice for model {model!r}, epoch {epoch} "
                   f"(first at {seen[key]})")
            raise DataError(msg, file=file, record=record, field="sample_id")
        seen[key] = record
        score = _eee_score(rec, metric, file=file, record=record)
        key2 = (model, f"{bench}:{sample}")
        values.setdefault(key2, []).append(score)
        label = None
        if cluster is not None:
            label = extra.get(cluster)
            if missing_label(label):
                msg = (f"no cluster field {cluster!r} in the sample's metadata" if label is None
                       else f"empty cluster label {label!r}")
                raise DataError(msg, file=file, record=record, field=f"metadata.{cluster}")
        reference = (rec.get("input") or {}).get("reference") if isinstance(rec.get("input"), dict) else None
        meta[key2] = (None if label is None else str(label), None if reference is None else json.dumps(reference))
    if not values:
        msg = "no records (empty file)"
        raise DataError(msg, file=file)
    for (model, item), vals in values.items():
        yield Record(model, item, sum(vals) / len(vals), meta[model, item][0], meta[model, item][1], file)


def _first_line_keys(path: Path) -> set[str] | None:
    """The keys of the first JSON object line (None when the file does not start with one)."""
    try:
        with open_bounded(path) as fh:
            for raw in fh:
                if raw.strip():
                    data = json.loads(raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw)
                    return set(data) if isinstance(data, dict) else None
    except (DataError, OSError, ValueError, RecursionError):
        return None
    return None


def _parquet_columns(path: Path) -> set[str] | None:
    from ..safe import parquet_columns

    try:
        return set(parquet_columns(path))
    except (DataError, ImportError):  # not a readable Parquet file: not ours
        return None


def _claims(path: Path) -> bool:
    if not path.is_file():
        return False
    suffix = plain_suffix(path)
    if suffix == ".parquet" and path.suffix.lower() == ".parquet":
        cols = _parquet_columns(path)
        return cols is not None and EEE_KEYS <= cols
    if suffix not in (".jsonl", ".ndjson"):
        return False
    keys = _first_line_keys(path)
    return keys is not None and EEE_KEYS <= keys


def _finds(folder: Path) -> list[tuple[int, Path]]:
    found = [p for pattern in ("*.jsonl", "*.parquet") for p in regular_files(folder, pattern)]
    return [(0, p) for p in found if _claims(p)]


FORMATS = (Format(
    name="every_eval_ever", summary="Every Eval Ever *_samples.jsonl / dataset_samples.parquet", order=15,
    read=lambda path, o: read_every_eval_ever(path, metric=o.metric, cluster=o.cluster),
    claims=_claims, finds=_finds, patterns=("*_samples.jsonl", "*_samples.parquet")),)


# ---- aggregate scores (aggregate): the aggregate records ----------------------------------------------------

def _read_aggregates(files: list[Path], options: AggregateOptions) -> list[Any]:
    from ..scores import read_eee_aggregates

    return read_eee_aggregates(files, metric=options.metric, items=options.items)


def _claims_records(path: Path) -> bool:
    from ..scores import is_eee_aggregate_file

    return is_eee_aggregate_file(path)


def _find_records(folder: Path) -> list[Path]:
    from ..scores import eee_aggregate_files

    return eee_aggregate_files(folder)


AGGREGATES = (AggregateReader("every_eval_ever", "Every Eval Ever aggregate records (<uuid>.json, dataset.parquet)",
                              _read_aggregates, _claims_records, order=20, finds=_find_records),)
