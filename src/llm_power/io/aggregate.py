"""Aggregate results -- per task, the metric, its standard error and the number of items -- from
lm-evaluation-harness ``results_*.json`` (written with or without ``--log_samples``) and from Every
Eval Ever aggregate records (``<uuid>.json``: ``score_details.score`` and its ``uncertainty``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .._core.errors import DataError
from .safe import load_json_file

__all__ = ["AggregateScore", "is_eee_record", "read_aggregates", "read_eee_aggregates", "read_lm_eval_aggregates"]

_RESULTS = re.compile(r"^results_.*\.json$")
#: the largest count a float holds exactly
_MAX_COUNT = 2**53


class AggregateScore(NamedTuple):
    """One task's score in one run."""

    model: str
    task: str
    metric: str
    filter: str
    value: float
    stderr: float | None
    n: int
    source: str


def _files(paths: Sequence[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out += sorted(p for p in path.rglob("results_*.json") if p.is_file())
        elif path.is_file():
            out.append(path)
        else:
            msg = "file or folder not found"
            raise DataError(msg, file=str(path))
    if not out:
        msg = "no lm-eval results_*.json found"
        raise DataError(msg, file=", ".join(map(str, paths)))
    return out


def read_lm_eval_aggregates(paths: str | Path | Sequence[str | Path], *, metric: str | None = None,
                            filter: str | None = None) -> list[AggregateScore]:  # noqa: A002 - lm-eval's word
    """Every (task, metric, filter) score of lm-eval ``results_*.json`` files (or folders holding
    them) with its standard error and items (``n-samples``: effective, else original). Tasks
    without an item count (groups) are skipped. ``metric``/``filter`` keep only those.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[AggregateScore] = []
    for path in _files(paths):
        data = load_json_file(path)
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            msg = "not an lm-eval results file (no 'results' object)"
            raise DataError(msg, file=str(path))
        raw_config = data.get("config")
        config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
        name = data.get("model_name") if isinstance(data.get("model_name"), str) else None
        args = config.get("model_args") if isinstance(config.get("model_args"), str) else None
        model = name or args or path.parent.name
        raw_counts = data.get("n-samples")
        counts: dict[str, Any] = raw_counts if isinstance(raw_counts, dict) else {}
        for task, values in data["results"].items():
            if not isinstance(values, dict) or task not in counts:
                continue
            info = counts[task]
            n = info.get("effective", info.get("original")) if isinstance(info, dict) else info
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                continue
            if n > _MAX_COUNT:
                msg = f"{n:.3g} items is more than a count can be exactly (2**53)"
                raise DataError(msg, file=str(path), record=f"task {task}", field="n-samples")
            for key, value in values.items():
                numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
                if "," not in key or "_stderr," in key or not numeric:
                    continue
                name, filt = key.split(",", 1)
                if (metric is not None and name != metric) or (filter is not None and filt != filter):
                    continue
                if not math.isfinite(value):
                    msg = f"score {value!r} is not a finite number"
                    raise DataError(msg, file=str(path), record=f"task {task}", field=key)
                stderr = values.get(f"{name}_stderr,{filt}")
                se = float(stderr) if isinstance(stderr, (int, float)) and not isinstance(stderr, bool) else None
                if se is not None and not math.isfinite(se):  # NaN is lm-eval's "N/A": not available
                    se = None
                if se is not None and se < 0:
                    msg = f"standard error {se!r} is negative"
                    raise DataError(msg, file=str(path), record=f"task {task}", field=f"{name}_stderr,{filt}")
                out.append(AggregateScore(model, str(task), name, filt, float(value), se, int(n), str(path)))
    if not out:
        wanted = f" for metric {metric!r}" if metric else ""
        msg = f"no task scores with an item count (n-samples){wanted}"
        raise DataError(msg, file=str(paths[0]))
    return out


def is_eee_record(data: Any) -> bool:
    """Whether parsed JSON is an Every Eval Ever aggregate record (any schema version)."""
    return isinstance(data, dict) and "schema_version" in data and isinstance(data.get("evaluation_results"), list)


def _eee_parquet(path: Path) -> bool:
    """Whether a file is the datastore's Parquet view of aggregate records (one row per record)."""
    if path.suffix.lower() != ".parquet":
        return False
    try:
        import pyarrow.parquet as pq

        return {"schema_version", "evaluation_results"} <= set(pq.ParquetFile(path).schema_arrow.names)
    except Exception:  # noqa: BLE001 - not a readable Parquet file: not one
        return False


def _eee_records(path: Path) -> list[Any]:
    """The aggregate records of a JSON file (one) or of a Parquet view (one per row)."""
    if path.suffix.lower() == ".parquet":
        from .formats.every_eval_ever import plain_value
        from .safe import read_parquet

        frame = read_parquet(path)
        return [{k: plain_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    return [load_json_file(path)]


def _eee_files(paths: Sequence[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out += sorted(p for p in path.rglob("*.json") if p.is_file() and is_eee_record(_peek(p)))
            out += sorted(p for p in path.rglob("*.parquet") if p.is_file() and _eee_parquet(p))
        elif path.is_file():
            out.append(path)
        else:
            msg = "file or folder not found"
            raise DataError(msg, file=str(path))
    return out


def _peek(path: Path) -> Any:
    try:
        return load_json_file(path)
    except DataError:
        return None


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_eee_aggregates(paths: str | Path | Sequence[str | Path], *, metric: str | None = None) -> list[AggregateScore]:
    """Every result of Every Eval Ever aggregate records (files, or folders holding them) that
    says how many samples it rests on (``uncertainty.num_samples``), with its standard error when
    given. ``task`` is the result's ``evaluation_name``, ``metric`` its ``metric_config.metric_id``
    (else ``"score"``); results without a sample count (most 0.2.x records) are skipped.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[AggregateScore] = []
    for path in _eee_files(paths):
        records = _eee_records(path)
        view = path.suffix.lower() == ".parquet"
        for r, data in enumerate(records):
            out += _eee_scores(path, data, metric, f"row {r}: " if view else "")
    if not out:
        wanted = f" for metric {metric!r}" if metric else ""
        msg = f"no Every Eval Ever results with a sample count (uncertainty.num_samples){wanted}"
        raise DataError(msg, file=", ".join(map(str, paths)))
    return out


def _eee_scores(path: Path, data: Any, metric: str | None, prefix: str) -> list[AggregateScore]:
    """The scores of one aggregate record (``prefix`` names its row in a Parquet view)."""
    out: list[AggregateScore] = []
    if not is_eee_record(data):
        msg = "not an Every Eval Ever aggregate record (no 'schema_version' and 'evaluation_results')"
        raise DataError(msg, file=str(path), record=prefix.rstrip(": ") or None)
    info = _obj(data.get("model_info"))
    model = str(info.get("id") or info.get("name") or path.stem)
    for k, res in enumerate(data["evaluation_results"]):
        record = f"{prefix}evaluation_results[{k}]"
        if not isinstance(res, dict):
            msg = "each result must be a JSON object"
            raise DataError(msg, file=str(path), record=record)
        config = _obj(res.get("metric_config"))
        name = str(config.get("metric_id") or "score")
        if metric is not None and name != metric:
            continue
        details = res.get("score_details")
        if not isinstance(details, dict) or _number(details.get("score")) is None:
            msg = "no numeric score_details.score"
            raise DataError(msg, file=str(path), record=record, field="score_details.score")
        value = float(details["score"])
        if not math.isfinite(value):
            msg = f"score {value!r} is not a finite number"
            raise DataError(msg, file=str(path), record=record, field="score_details.score")
        unc = _obj(details.get("uncertainty"))
        n = unc.get("num_samples")
        if isinstance(n, float) and n.is_integer():  # a Parquet view may store the count as a float
            n = int(n)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            continue
        if n > _MAX_COUNT:
            msg = f"{n:.3g} samples is more than a count can be exactly (2**53)"
            raise DataError(msg, file=str(path), record=record, field="uncertainty.num_samples")
        se_block = _obj(unc.get("standard_error"))
        se = _number(se_block.get("value"))
        if se is not None and not (math.isfinite(se) and se >= 0):
            msg = f"standard error {se!r} is not a finite non-negative number"
            raise DataError(msg, file=str(path), record=record, field="uncertainty.standard_error.value")
        task = str(res.get("evaluation_name") or record)
        out.append(AggregateScore(model, task, name, "", value, se, int(n), str(path)))
    return out


def read_aggregates(paths: str | Path | Sequence[str | Path], *, metric: str | None = None,
                    filter: str | None = None) -> list[AggregateScore]:  # noqa: A002 - lm-eval's word
    """Aggregate scores of lm-eval ``results_*.json`` and Every Eval Ever records, in any mix of
    files and folders (each file by its content; ``filter`` applies to lm-eval's).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    lm_eval: list[Path] = []
    eee: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            lm_eval += sorted(p for p in path.rglob("results_*.json") if p.is_file())
            eee += [p for p in sorted(path.rglob("*.json")) if not _RESULTS.match(p.name) and is_eee_record(_peek(p))]
            eee += [p for p in sorted(path.rglob("*.parquet")) if _eee_parquet(p)]
        elif path.is_file() and (_eee_parquet(path) or is_eee_record(_peek(path))):
            eee.append(path)
        else:
            lm_eval.append(path)
    out = read_lm_eval_aggregates(lm_eval, metric=metric, filter=filter) if lm_eval else []
    if eee:
        out += read_eee_aggregates(eee, metric=metric)
    if not out:
        msg = "no lm-eval results_*.json nor Every Eval Ever records found"
        raise DataError(msg, file=", ".join(map(str, paths)))
    return out
