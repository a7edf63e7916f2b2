"""Read pairwise battles: arena logs (CSV / JSONL / JSON / Parquet), MT-Bench ``*_pair.jsonl``
judgments and AlpacaEval ``annotations.json``, into one long table.

Columns of the result (pandas): ``model_a``, ``model_b``, ``winner`` (model_a | model_b | tie),
``question_id``, ``judge``, plus ``g1_winner`` / ``g2_winner`` when every verdict was given in both
presentation orders (MT-Bench), ``turn`` (MT-Bench), ``preference`` (AlpacaEval: in [0, 1], the
share of the win that goes to model_b, the evaluated model; the baseline is model_a) and
``source`` (file). Extra columns of a plain battle log are kept. Errors name the file, the
record and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._core.errors import DataError

__all__ = ["is_battle_file", "is_opencompass_battles", "read_battle_table", "read_opencompass_battles", "where_rows"]

_WINNERS = {"model_a": "model_a", "model_b": "model_b", "tie": "tie", "tie (bothbad)": "tie", "a": "model_a",
            "b": "model_b", "model_1": "model_a", "model_2": "model_b"}
_SWAP = {"model_1": "model_a", "model_2": "model_b", "tie": "tie"}


def _kind(path: Path, first: Any) -> str:  # noqa: D103
    if isinstance(first, dict):
        if {"model_1", "model_2", "g1_winner", "g2_winner"} <= first.keys():
            return "mtbench"
        if {"generator_1", "generator_2", "preference"} <= first.keys():
            return "alpaca_eval"
        if {"model_a", "model_b", "winner"} <= first.keys():
            return "log"
        keys = ", ".join(sorted(map(str, first.keys()))[:12])
        msg = ("not a battle log: expected model_a/model_b/winner (arena log), model_1/model_2/g1_winner/g2_winner "
               f"(MT-Bench *_pair.jsonl) or generator_1/generator_2/preference (AlpacaEval); has {keys}")
        raise DataError(msg, file=str(path))
    msg = "not a battle log (no records)"
    raise DataError(msg, file=str(path))


def table_records(path: Path) -> Iterator[tuple[Any, dict[Any, Any]]]:
    from .plain import plain_suffix
    from .plain import table_records as plain_records

    if plain_suffix(path) == ".parquet":

        from .safe import read_parquet

        frame = read_parquet(path)
        for k, row in enumerate(frame.to_dict(orient="records")):
            yield f"row {k}", row
        return
    yield from plain_records(path)


def _text(value: Any, *, file: str, record: Any, field: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        msg = "is missing"
        raise DataError(msg, file=file, record=record, field=field)
    if isinstance(value, (list, tuple)):  # MT-Bench: judge = [model, prompt name]
        value = value[0] if value else ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        msg = f"must be a name (text or a number); got {type(value).__name__}"
        raise DataError(msg, file=file, record=record, field=field)
    text = str(value).strip()
    if not text:
        msg = "is empty"
        raise DataError(msg, file=file, record=record, field=field)
    return text


def _log_row(rec: dict[str, Any], file: str, record: Any) -> dict[str, Any]:
    row = dict(rec)
    a = _text(rec.get("model_a"), file=file, record=record, field="model_a")
    b = _text(rec.get("model_b"), file=file, record=record, field="model_b")
    raw = _text(rec.get("winner"), file=file, record=record, field="winner")
    winner = _WINNERS.get(raw.lower(), "model_a" if raw == a else "model_b" if raw == b else None)
    if winner is None:
        msg = f"{raw!r} is none of model_a, model_b, tie (or either model's name)"
        raise DataError(msg, file=file, record=record, field="winner")
    row.update(model_a=a, model_b=b, winner=winner)
    for g in ("g1_winner", "g2_winner"):
        if g in rec and rec[g] not in (None, ""):
            value = _WINNERS.get(str(rec[g]).strip().lower())
            if value is None:
                msg = f"{rec[g]!r} is none of model_a, model_b, tie"
                raise DataError(msg, file=file, record=record, field=g)
            row[g] = value
    return row


def _mtbench_row(rec: dict[str, Any], file: str, record: Any) -> dict[str, Any] | None:
    a = _text(rec.get("model_1"), file=file, record=record, field="model_1")
    b = _text(rec.get("model_2"), file=file, record=record, field="model_2")
    g = []
    for field in ("g1_winner", "g2_winner"):
        raw = _text(rec.get(field), file=file, record=record, field=field).lower()
        if raw == "error":
            return None
        if raw not in _SWAP:
            msg = f"{raw!r} is none of model_1, model_2, tie, error"
            raise DataError(msg, file=file, record=record, field=field)
        g.append(_SWAP[raw])
    qid = rec.get("question_id", rec.get("id"))
    return {"model_a": a, "model_b": b, "winner": g[0] if g[0] == g[1] else "tie",
            "question_id": _text(qid, file=file, record=record, field="question_id"),
            "judge": _text(rec.get("judge", "judge"), file=file, record=record, field="judge"),
            "turn": rec.get("turn"), "g1_winner": g[0], "g2_winner": g[1]}


def _alpaca_row(rec: dict[str, Any], file: str, record: Any) -> dict[str, Any] | None:
    a = _text(rec.get("generator_1"), file=file, record=record, field="generator_1")
    b = _text(rec.get("generator_2"), file=file, record=record, field="generator_2")
    raw = rec.get("preference")
    if raw is None or (isinstance(raw, float) and raw != raw):
        return None  # not annotated (AlpacaEval leaves a few null)
    try:
        pref = float(raw)
    except (TypeError, ValueError):
        msg = f"{raw!r} is not a number in [1, 2]"
        raise DataError(msg, file=file, record=record, field="preference") from None
    if not 1.0 <= pref <= 2.0:
        msg = f"{pref!r} is outside [1, 2] (1 = generator_1 preferred, 2 = generator_2, 1.5 = tie)"
        raise DataError(msg, file=file, record=record, field="preference")
    instruction = rec.get("instruction")
    qid = rec.get("question_id", rec.get("instruction_id"))
    if qid is None and instruction is not None:
        qid = hashlib.sha1(str(instruction).encode("utf-8")).hexdigest()  # noqa: S324 - an id, not security
    winner = "model_b" if pref > 1.5 else "model_a" if pref < 1.5 else "tie"
    return {"model_a": a, "model_b": b, "winner": winner, "preference": pref - 1.0,
            "question_id": "" if qid is None else str(qid),
            "judge": str(rec.get("annotator", "judge")), "dataset": rec.get("dataset")}


def _read_slow(path: Path) -> tuple[Any, int]:
    """Record by record (every format; the precise error for a bad record)."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    dropped = 0
    kind = None
    file = str(path)
    for record, rec in table_records(path):
        if kind is None:
            kind = _kind(path, rec)
        where = record if isinstance(record, str) else f"line {record}" if path.suffix != ".json" else record
        if kind == "log":
            row: dict[str, Any] | None = _log_row(rec, file, where)
        elif kind == "mtbench":
            row = _mtbench_row(rec, file, where)
        else:
            row = _alpaca_row(rec, file, where)
        if row is None:
            dropped += 1
            continue
        if row["model_a"] == row["model_b"] and kind != "alpaca_eval":
            msg = f"a model against itself ({row['model_a']!r})"
            raise DataError(msg, file=file, record=where, field="model_b")
        rows.append(row)
    if kind is None:
        msg = "no battles in this file"
        raise DataError(msg, file=file)
    return pd.DataFrame(rows), dropped


def _table(path: Path) -> Any:
    """A plain battle log read by pandas in one go (None: leave it to the record reader)."""
    import pandas as pd

    from .plain import plain_suffix
    from .safe import open_bounded

    suffix = plain_suffix(path)
    try:
        if suffix == ".parquet":
            from .safe import read_parquet

            return read_parquet(path)
        if suffix in (".jsonl", ".ndjson"):
            with open_bounded(path) as fh:
                return pd.read_json(fh, lines=True, dtype=False)
        if suffix == ".csv":
            _check_header(path)
            with open_bounded(path) as fh:
                return pd.read_csv(fh, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig")
    except DataError:  # a compression bomb or an unreadable gzip: one line, now
        raise
    except Exception:  # noqa: BLE001 - any other failure: the record reader finds and names it
        return None
    return None


def _check_header(path: Path) -> None:
    """A CSV header naming a column twice is an error (pandas would rename the second ``winner.1`` and
    read the first: a silent choice).
    """
    import csv
    import io

    from .safe import open_bounded

    with open_bounded(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as fh:
        header = next(csv.reader(fh), [])
    seen: set[str] = set()
    for name in header:
        if name in seen:
            msg = f"the header names column {name!r} twice"
            raise DataError(msg, file=str(path), record="line 1", field=name)
        seen.add(name)


def _normalised_log(frame: Any) -> Any:
    """The log with names stripped and winners mapped, or None when any row is bad (vectorised)."""
    import pandas as pd

    if not {"model_a", "model_b", "winner"} <= set(frame.columns) or frame.empty:
        return None
    out = frame.copy()
    for column in ("model_a", "model_b", "winner"):
        if out[column].isna().any() or out[column].dtype == bool:
            return None
        if out[column].dtype == object and not out[column].map(type).isin((str, int, float)).all():
            return None  # a list, an object or a boolean as a name: the record reader names the record
        out[column] = out[column].astype(str).str.strip()
    a, b, raw = out["model_a"], out["model_b"], out["winner"]
    winner = raw.str.lower().map(_WINNERS)
    named = pd.Series(np.where(raw == a, "model_a", np.where(raw == b, "model_b", "")), index=out.index)
    winner = winner.where(winner.notna(), named.replace("", np.nan))
    if winner.isna().any() or (a == "").any() or (b == "").any() or (a == b).any():
        return None
    out["winner"] = winner
    for g in ("g1_winner", "g2_winner"):
        if g in out.columns:
            present = out[g].notna() & (out[g].astype(str) != "")
            mapped = out[g].astype(str).str.strip().str.lower().map(_WINNERS)
            if (present & mapped.isna()).any():
                return None
            out[g] = mapped.where(present, None)
    return out


#: OpenCompass's pairwise judge prompt: A = answer 1 good / 2 bad, B = 2 good / 1 bad, C both good, D both bad
_OC_CHOICE = {"A": "model_a", "B": "model_b", "C": "tie", "D": "tie"}
#: the longest ``gold`` text parsed (a Python literal of two names and a capability)
_OC_GOLD_MAX = 100_000


def _oc_gold(raw: Any, *, file: str, record: str) -> dict[str, Any]:
    """OpenCompass's ``gold``: a dict, or the repr of one (``ast.literal_eval``: literals only)."""
    import ast

    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and len(raw) <= _OC_GOLD_MAX:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            value = None
        if isinstance(value, dict):
            return value
    msg = "'gold' must be a dict (or its Python repr) naming answer1 and answer2"
    raise DataError(msg, file=file, record=record, field="gold")


def _opencompass(data: Any) -> bool:
    """Whether parsed JSON is an OpenCompass subjective (pairwise) results file."""
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and {"origin_prompt", "prediction", "gold"} <= first.keys() and (
        isinstance(first["gold"], (dict, str)))


def _read_opencompass(path: Path, data: dict[str, Any]) -> tuple[Any, int]:
    """OpenCompass ``results/<model1>_<model2>/<dataset>.json`` of a pairwise subjective eval: per
    question the judge's text (``选择：A`` / ``Choice: A``) and ``gold`` naming the two answers.
    """
    import re

    import pandas as pd

    file = str(path)
    pattern = re.compile(r"(?:选择|Choice)\s*[:：]\s*([ABCD])", re.IGNORECASE)
    rows, dropped = [], 0
    for key, rec in data.items():
        record = f"question {key}"
        if not isinstance(rec, dict):
            msg = "each question must be a JSON object"
            raise DataError(msg, file=file, record=record)
        gold = _oc_gold(rec.get("gold"), file=file, record=record)
        a = _text(gold.get("answer1"), file=file, record=record, field="gold.answer1")
        b = _text(gold.get("answer2"), file=file, record=record, field="gold.answer2")
        if a == b:
            msg = f"a model against itself ({a!r})"
            raise DataError(msg, file=file, record=record, field="gold.answer2")
        match = pattern.search(str(rec.get("prediction", "")))
        if match is None:
            dropped += 1  # the judge gave no choice: not a verdict (counted, as MT-Bench's errors)
            continue
        rows.append({"model_a": a, "model_b": b, "winner": _OC_CHOICE[match.group(1).upper()],
                     "question_id": str(key), "judge": "opencompass", "choice": match.group(1).upper(),
                     "capability": gold.get("capability")})
    if not rows:
        msg = "no judge verdicts (no 'Choice: A/B/C/D' in any prediction)"
        raise DataError(msg, file=file)
    return pd.DataFrame(rows), dropped


#: the names of battle files in a folder (besides OpenCompass's results/<a>_<b>/*.json)
_BATTLE_NAMES = ("_pair.jsonl", "annotations.json")


def is_battle_file(path: Path) -> bool:
    """Whether one file is a battle file by its name or content (an OpenCompass subjective result):
    one a folder search would find, not any table that might hold battles.
    """
    return path.name.endswith(_BATTLE_NAMES) or (path.suffix == ".json" and _is_oc_file(path))


def is_opencompass_battles(path: Path) -> bool:
    """Whether a JSON file is an OpenCompass pairwise subjective result (by its content)."""
    return _is_oc_file(path)


def read_opencompass_battles(path: Path) -> tuple[Any, int]:
    """One OpenCompass pairwise subjective result: its battles and the records dropped."""
    from .safe import load_json_file

    return _read_opencompass(path, load_json_file(path, take=True))


def read_battle_table(path: Path) -> tuple[Any, int]:
    """An arena log (CSV/TSV/JSONL/JSON array/Parquet), MT-Bench ``*_pair.jsonl`` or AlpacaEval
    ``annotations.json``: its battles and the records dropped (the fast table path, else record by
    record).
    """
    frame = _table(path)
    if frame is not None:
        good = _normalised_log(frame)
        if good is not None:
            return good, 0
    return _read_slow(path)


def _is_oc_file(path: Path) -> bool:
    from .safe import peek_json

    return _opencompass(peek_json(path))


def where_rows(frame: Any, conditions: Iterable[str] | None, *, flag: str = "--where") -> Any:
    """The rows of ``frame`` whose columns equal the values of ``COLUMN=VALUE`` conditions (compared
    as text); a condition without ``=`` or naming no column is a DataError naming ``flag``.
    """
    for cond in conditions or []:
        column, sep, value = cond.partition("=")
        if not sep or column not in frame.columns:
            listed = ", ".join(map(str, frame.columns))
            msg = f"{flag} {cond!r}: expected COLUMN=VALUE with a column of the battles ({listed})"
            raise DataError(msg)
        frame = frame[frame[column].astype(str) == value]
    return frame


