"""Plain per-item result files: CSV / TSV / JSONL (one record per item).

Long form, one file per model::

    item,score[,cluster]
    q1,1
    q2,0

Wide form, one file, one column per model::

    item,model_a,model_b[,cluster]

Column names are chosen with ``item_column`` / ``score_column`` / ``cluster_column``; by default
the item column is the first of ``item, item_id, id, doc_id, question_id, sample_id`` present and
the score column the first of ``score, correct, acc, accuracy, exact_match, pass, value``.
Booleans (true/false, yes/no) are read as 1/0.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.errors import DataError, warn
from .._core.files import CSV_FIELD_LIMIT as _CSV_FIELD_LIMIT
from .._core.files import allow_long_csv_fields, csv_error_text
from .._core.labels import missing_label
from .._core.suggest import no_column

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ItemScores", "read_item_scores", "read_wide_matrix"]

ITEM_COLUMNS = ("item", "item_id", "id", "doc_id", "question_id", "sample_id", "seg_id", "segment_id")
SCORE_COLUMNS = ("score", "correct", "acc", "accuracy", "exact_match", "pass", "value")
#: the model column of a long table: "model", else these (WMT's MQM files name it "system")
MODEL_COLUMNS = ("model", "model_name", "system")
_TRUE = {"true", "yes", "t", "y", "correct", "c"}
_FALSE = {"false", "no", "f", "n", "incorrect", "i"}


@dataclass(frozen=True)
class ItemScores:
    """Per-item scores read from one source."""

    source: str
    items: list[str]
    scores: np.ndarray
    clusters: list[str] | None = None


def table_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (record number, record) from CSV/TSV (header row) or JSONL, optionally gzipped (.gz);
    numbers are 1-based lines.
    """
    suffix = plain_suffix(path)
    if not path.exists():
        msg = "file not found"
        raise DataError(msg, file=str(path))
    if path.is_dir():
        msg = "is a folder; give a per-item results file (CSV, TSV or JSONL)"
        raise DataError(msg, file=str(path))
    if suffix in (".jsonl", ".ndjson"):
        with _open_binary(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                rec = _json_line(raw, path, lineno)
                if not isinstance(rec, dict):
                    msg = "each line must be a JSON object"
                    raise DataError(msg, file=str(path), record=f"line {lineno}")
                yield lineno, rec
    elif suffix in (".csv", ".tsv", ".txt"):
        yield from _csv_records(path, suffix)
    elif suffix == ".json":  # one JSON array of records (pandas' to_json(orient="records"))
        from .safe import load_json_file

        data = load_json_file(path, take=True)
        if not isinstance(data, list):
            msg = "a JSON results file must be an array of records (objects)"
            raise DataError(msg, file=str(path))
        for k, rec in enumerate(data, start=1):
            if not isinstance(rec, dict):
                msg = "each element of the array must be a JSON object"
                raise DataError(msg, file=str(path), record=f"record {k}")
            yield k, rec
    else:
        msg = f"unknown file type {suffix or '(none)'!r}; expected .csv, .tsv or .jsonl"
        raise DataError(msg, file=str(path))


#: largest CSV field read (a logged prompt can be long; the csv module's default is 131,072)
CSV_FIELD_LIMIT = _CSV_FIELD_LIMIT


def plain_suffix(path: Path) -> str:
    """The format suffix of a plain file, looking through a final ``.gz`` (``scores.csv.gz`` -> ``.csv``)."""
    suffixes = [x.lower() for x in path.suffixes]
    if suffixes[-1:] == [".gz"] and len(suffixes) >= 2:
        return suffixes[-2]
    return path.suffix.lower()


def _open_binary(path: Path) -> Any:
    """The file's bytes, decompressed when it ends in .gz (streamed, as plain files are, under the
    archive limits of docs/security.md).
    """
    from .safe import open_bounded

    return open_bounded(path)


def _json_line(raw: Any, path: Path, lineno: int) -> Any:
    from .safe import parse_json

    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
        return parse_json(text, file=str(path), record=f"line {lineno}")  # a key twice: an error
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start} of the line)"
        raise DataError(msg, file=str(path), record=f"line {lineno}") from None
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON ({exc.msg}); truncated line?"
        raise DataError(msg, file=str(path), record=f"line {lineno}") from None
    except RecursionError:
        msg = "JSON nested too deeply to read"
        raise DataError(msg, file=str(path), record=f"line {lineno}") from None
    except ValueError as exc:  # an integer with more digits than Python converts
        msg = f"unreadable JSON value ({str(exc)[:80]})"
        raise DataError(msg, file=str(path), record=f"line {lineno}") from None


def _csv_records(path: Path, suffix: str) -> Iterator[tuple[int, dict[str, Any]]]:
    allow_long_csv_fields()
    line = 0
    try:
        with io.TextIOWrapper(_open_binary(path), encoding="utf-8-sig", newline="") as fh:  # -sig: Excel's BOM
            sample = fh.read(4096)
            fh.seek(0)
            first = sample.split("\n", 1)[0]
            if "\t" in first or (suffix == ".tsv" and " " not in first.strip()):
                delimiter = "\t"
            elif "," in first or suffix not in (".tsv", ".txt") or " " not in first.strip():
                delimiter = ","
            else:  # a .tsv/.txt whose header has spaces and no tab: separated by runs of spaces (WMT MQM files)
                delimiter = " "
            reader = csv.reader(fh, delimiter=delimiter, skipinitialspace=delimiter == " ")
            header = next(reader, None)
            if header is None:
                msg = "the file is empty (no header row)"
                raise DataError(msg, file=str(path))
            blank = [k for k, name in enumerate(header) if name.strip() == ""]
            if blank:
                msg = f"column {blank[0] + 1} of the header has no name"
                raise DataError(msg, file=str(path), record="line 1")
            dup = next((name for k, name in enumerate(header) if name in header[:k]), None)
            if dup is not None:
                msg = f"column {dup!r} appears twice in the header (which one is the model?)"
                raise DataError(msg,
                                file=str(path), record="line 1")
            for row in reader:
                line = reader.line_num
                if not row:
                    continue
                if len(row) > len(header):
                    msg = f"has more fields than the header ({len(header)})"
                    raise DataError(msg, file=str(path),
                                    record=f"line {line}")
                yield line, dict(zip(header, row + [None] * (len(header) - len(row)), strict=False))
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start} near line {line + 1}); save the file as UTF-8"
        raise DataError(msg,
                        file=str(path)) from None
    except csv.Error as exc:
        raise DataError(csv_error_text(exc), file=str(path), record=f"line {line + 1}") from None


def _pick(columns: Sequence[str], wanted: str | None, defaults: Sequence[str], what: str, path: Path) -> str:
    if wanted is not None:
        if wanted not in columns:
            raise DataError(no_column(what, wanted, columns), file=str(path))
        return wanted
    for name in defaults:
        if name in columns:
            return name
    msg = (
        f"cannot tell which column is the {what}; columns are {', '.join(map(repr, columns))} "
        f"(choose one with --{'id' if what == 'item id' else 'score'}-column)"
    )
    raise DataError(
        msg,
        file=str(path),
    )


_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


#: the hint added to "is not a number": the column may be a label, not a score
NOT_A_NUMBER_HINT = ("; a label column (subject, category) goes to --cluster, and --score-column names the "
                     "score column")


def id_text(value: Any, *, file: str, record: Any, field: str) -> str:
    """A model name, item id, sample or label read from a record: text or a number, as text; a list,
    object or other structure is one DataError naming the field (never its repr taken as an id).
    """
    if isinstance(value, (list, tuple, dict, set, bytes, bytearray)) or (
            hasattr(value, "__len__") and not isinstance(value, str)):
        kind = {"list": "a list", "tuple": "a list", "dict": "an object", "ndarray": "a list"}.get(
            type(value).__name__, f"a {type(value).__name__}")
        msg = f"is {kind}; an id must be text or a number"
        raise DataError(msg, file=file, record=record, field=field)
    return str(value)


def parse_score(value: Any, *, file: str, record: Any, field: str, missing_ok: bool = False) -> float:
    """A finite float from a number, boolean or numeric string; DataError otherwise.

    Strings must look like a plain decimal number: Python's ``float`` would also take ``"1_0"``
    (as 10), ``"٣"`` or ``"infinity"``, none of which is a score an eval harness writes. With
    ``missing_ok`` an empty cell or null is a missing result (NaN: the model lacks the item).
    """
    if missing_ok and (value is None or (isinstance(value, str) and value.strip() == "")
                       or (isinstance(value, float) and math.isnan(value))):
        return math.nan
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")):
        return 1.0 if value else 0.0
    if isinstance(value, numbers.Real):  # int, float and numpy's numbers (Parquet columns)
        try:
            out = float(value)
        except OverflowError:
            msg = f"score {str(value)[:40]} is too large"
            raise DataError(msg, file=file, record=record, field=field) from None
    elif isinstance(value, str):
        text = value.strip()
        low = text.lower()
        if low in _TRUE:
            return 1.0
        if low in _FALSE:
            return 0.0
        if text == "":
            msg = "empty score (missing result?)"
            raise DataError(msg, file=file, record=record, field=field)
        if not _NUMBER.fullmatch(text):
            msg = f"score {text[:40]!r} is not a number{NOT_A_NUMBER_HINT}"
            raise DataError(msg, file=file, record=record, field=field)
        out = float(text)
    elif value is None:
        msg = "missing score (null)"
        raise DataError(msg, file=file, record=record, field=field)
    else:
        msg = f"score {value!r} is not a number"
        raise DataError(msg, file=file, record=record, field=field)
    if not math.isfinite(out):
        msg = f"score {value!r} is not finite"
        raise DataError(msg, file=file, record=record, field=field)
    return out


def _labels_stay_text(rec: dict[str, Any], labels: Sequence[str], first: dict[str, Any], first_line: str,
                      path: Path) -> None:
    """A label column (text in its first cell) with a score further down is a model whose first
    score is malformed: the error names that first cell.
    """
    for c in labels:
        if is_score_like(rec.get(c)):
            parse_score(first[c], file=str(path), record=first_line, field=c)  # raises: it is text


def _read_table(path: Path, item_column: str | None, value_columns: Sequence[str] | None,
                score_column: str | None, cluster_column: str | None,
                cluster_required: bool = True, *, labels: Sequence[str] = ()) -> tuple[list[str], np.ndarray,
                                                                                      list[str] | None]:
    """``labels``: columns whose first cell is text, read as labels; each must be text in every row
    (a column with a number further down is a model whose first score is malformed: DataError).
    """
    import numpy as np

    items: list[str] = []
    seen: dict[str, Any] = {}
    values: list[list[float]] = []
    clusters: list[str] = []
    item_col = None
    cols: list[str] = []
    first_record: dict[str, Any] | None = None
    first_line = ""
    for recno, rec in table_records(path):
        if item_col is None:
            columns = list(rec.keys())
            item_col = _pick(columns, item_column, ITEM_COLUMNS, "item id", path)
            if value_columns is None:
                cols = [_pick(columns, score_column, SCORE_COLUMNS, "score", path)]
            else:
                missing = [c for c in value_columns if c not in columns]
                if missing:
                    raise DataError(no_column("model", missing[0], columns), file=str(path))
                cols = list(value_columns)
            if cluster_column is not None and cluster_column not in columns and not cluster_required:
                cluster_column = None
            if cluster_column is not None and cluster_column not in columns:
                raise DataError(no_column("cluster", cluster_column, columns), file=str(path))
        record = f"line {recno}"
        if item_col not in rec or rec[item_col] is None or str(rec[item_col]).strip() == "":
            msg = "missing or empty item id"
            raise DataError(msg, file=str(path), record=record, field=item_col)
        item = id_text(rec[item_col], file=str(path), record=record, field=item_col)
        if item in seen:
            msg = f"duplicate item {item!r} (first at {seen[item]})"
            raise DataError(msg, file=str(path),
                            record=record, field=item_col)
        seen[item] = record
        items.append(item)
        if first_record is not None:
            _labels_stay_text(rec, labels, first_record, first_line, path)
        else:
            first_record, first_line = rec, record
        # wide tables: an empty cell is a result the model lacks (handled by --on-missing)
        values.append([parse_score(rec.get(c), file=str(path), record=record, field=c,
                                   missing_ok=value_columns is not None) for c in cols])
        if cluster_column is not None:
            label = rec.get(cluster_column)
            if missing_label(label):
                msg = "missing cluster label"
                raise DataError(msg, file=str(path), record=record, field=cluster_column)
            clusters.append(str(label))
    if not items:
        msg = "no records (empty file)"
        raise DataError(msg, file=str(path))
    return items, np.asarray(values, dtype=float), (clusters if cluster_column is not None else None)


def read_item_scores(path: str | Path, *, item_column: str | None = None, score_column: str | None = None,
                     cluster_column: str | None = None, cluster_required: bool = True) -> ItemScores:
    """Read one model's per-item scores from a long CSV/TSV/JSONL file.

    With ``cluster_required=False`` a missing cluster column is allowed (clusters are then None).
    """
    path = Path(path)
    items, values, clusters = _read_table(path, item_column, None, score_column, cluster_column,
                                          cluster_required)
    return ItemScores(str(path), items, values[:, 0], clusters)


def read_wide_matrix(
    path: str | Path,
    *,
    item_column: str | None = None,
    cluster_column: str | None = None,
    models: Sequence[str] | None = None,
) -> tuple[list[str], list[str], np.ndarray, list[str] | None]:
    """Read a wide per-item file (CSV/TSV/JSONL/Parquet): one row per item, one column per model.

    Every column other than the item id and the cluster column is a model, unless ``models``
    names them. Returns (items, model names, (n_items, n_models) matrix, cluster labels).
    """
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        return _read_wide_parquet(path, item_column, cluster_column, models)
    columns = _header(path)
    item_col = _pick(columns, item_column, ITEM_COLUMNS, "item id", path)
    if cluster_column is not None and cluster_column not in columns:
        raise DataError(no_column("cluster", cluster_column, columns), file=str(path))
    names = list(models) if models else [c for c in columns if c not in (item_col, cluster_column)]
    labels: list[str] = []
    if not models:  # a column of text (subject, category) is a label, never a model
        first = next(table_records(path))[1]
        labels = [c for c in names if is_text(first.get(c))]
        names = [c for c in names if c not in labels]
    if not names:
        msg = "no model columns besides the item id, cluster and label columns"
        raise DataError(msg, file=str(path))
    items, values, clusters = _read_table(path, item_col, names, None, cluster_column, labels=labels)
    label_columns_note(labels, [first.get(c) for c in labels])
    return items, names, values, clusters


def is_text(value: Any) -> bool:
    """A cell that is a label, never a score: non-empty text that is not a number or a boolean word."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return bool(text) and not _NUMBER.fullmatch(text) and text.lower() not in _TRUE | _FALSE


def is_score_like(value: Any) -> bool:
    """A cell that shows a text column is really a score column: a number, a boolean, a numeric
    string or a boolean word of more than one letter (a label column may well hold "y" or "c";
    blanks are neither).
    """
    if isinstance(value, (bool, numbers.Real)) and not (isinstance(value, float) and math.isnan(value)):
        return True
    if isinstance(value, str):
        text = value.strip()
        return bool(_NUMBER.fullmatch(text)) or (len(text) > 1 and text.lower() in _TRUE | _FALSE)
    return False


def label_columns_note(labels: Sequence[str], examples: Sequence[Any]) -> None:
    """One note for the text columns of a wide table: labels, not models (and how to cluster by one)."""
    if not labels:
        return

    from .._core.errors import LLMPowerWarning

    shown = ", ".join(f"{name!r} (e.g. {str(example)[:30]!r})" for name, example in zip(labels, examples, strict=True))
    plural = len(labels) > 1
    warn(f"column{'s' if plural else ''} {shown} hold{'' if plural else 's'} text: read as "
                  f"label{'s' if plural else ''}, not as model scores (`cluster`={labels[0]!r} clusters by "
                  f"{'one' if plural else 'it'})", LLMPowerWarning)


def _header(path: Path) -> list[str]:
    for _, rec in table_records(path):
        return list(rec.keys())
    msg = "no records (empty file)"
    raise DataError(msg, file=str(path))


def _read_wide_parquet(path: Path, item_column: str | None, cluster_column: str | None,
                       models: Sequence[str] | None) -> tuple[list[str], list[str], np.ndarray, list[str] | None]:
    import numpy as np
    import pandas as pd

    from .safe import read_parquet

    frame = read_parquet(path)
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    item_col = _pick(columns, item_column, ITEM_COLUMNS, "item id", path)
    if cluster_column is not None and cluster_column not in columns:
        raise DataError(no_column("cluster", cluster_column, columns), file=str(path))
    names = list(models) if models else [c for c in columns if c not in (item_col, cluster_column)]
    if not models:  # a text column (subject, category) is a label, never a model
        types = pd.api.types
        labels = [c for c in names if not (types.is_numeric_dtype(frame[c]) or types.is_bool_dtype(frame[c]))]
        # text in every non-empty cell; a number among them makes it a model with malformed scores
        labels = [c for c in labels if frame[c].map(is_text).any() and not frame[c].map(is_score_like).any()]
        names = [c for c in names if c not in labels]
        label_columns_note(labels, [frame[c][frame[c].map(is_text)].iloc[0] for c in labels])
    if not names:
        msg = "no model columns besides the item id, cluster and label columns"
        raise DataError(msg, file=str(path))
    missing = [c for c in names if c not in columns]
    if missing:
        raise DataError(no_column("model", missing[0], columns), file=str(path))
    if frame[item_col].dtype == object:  # a list or struct column: not ids
        nested = frame[item_col].map(lambda v: isinstance(v, (list, tuple, dict, np.ndarray))).to_numpy(dtype=bool)
        if nested.any():
            row = int(np.flatnonzero(nested)[0])
            id_text(frame[item_col].iloc[row], file=str(path), record=f"row {row}", field=item_col)
    empty = frame[item_col].isna() | (frame[item_col].astype(str).str.strip() == "")
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0])
        msg = "missing or empty item id"
        raise DataError(msg, file=str(path), record=f"row {row}", field=item_col)
    items = frame[item_col].astype(str).tolist()
    dup = frame[item_col].duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        msg = f"duplicate item {items[row]!r}"
        raise DataError(msg, file=str(path), record=f"row {row}", field=item_col)
    values = np.empty((len(items), len(names)))
    for j, name in enumerate(names):
        col = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(col) & ~frame[name].isna().to_numpy()  # a null cell is a missing result
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            value = frame[name].iloc[row]
            shown = value.tolist() if isinstance(value, np.ndarray) else value.item() if isinstance(value, np.generic) \
                else value
            msg = f"score {shown!r:.60} is not a finite number"
            raise DataError(msg, file=str(path),
                            record=f"row {row}", field=name)
        values[:, j] = col
    clusters = None
    if cluster_column is not None:  # the package's missing-label rule: None, NaN, NA, blank are errors
        labels = frame[cluster_column]
        bad = (labels.isna() | (labels.astype(str).str.strip() == "")).to_numpy()
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            msg = f"missing cluster label ({labels.iloc[row]!r})"
            raise DataError(msg, file=str(path), record=f"row {row}", field=cluster_column)
        clusters = labels.astype(str).tolist()
    return items, names, values, clusters


def plain_value(value: Any) -> Any:
    """A value of a Parquet row as JSON would give it: arrays as lists, NaN as None (recursively)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return [plain_value(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value.item() if isinstance(value, np.generic) else value
