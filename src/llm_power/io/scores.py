"""The aggregate readers -- per task, the metric, its standard error and the number of items -- from
lm-evaluation-harness ``results_*.json`` (written with or without ``--log_samples``), from Every
Eval Ever aggregate records (``<uuid>.json``: ``score_details.score`` and its ``uncertainty``) and
from Hugging Face Hub eval results (``.eval_results/*.yaml``, model cards' ``model-index``: a score
alone, the item count given by the caller).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .._core.errors import DataError
from .._core.files import MB, limit
from .._core.suggest import no_column
from .safe import is_regular, load_json_file, peek_json, read_regular_bytes, regular_files

__all__ = ["AggregateScore", "eee_aggregate_files", "hf_eval_results_files", "is_eee_aggregate_file", "is_eee_record",
           "is_hf_eval_results", "is_leaderboard_table", "read_eee_aggregates", "read_hf_eval_results",
           "read_leaderboard_table", "read_lm_eval_aggregates"]

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


def _files(paths: Sequence[str | Path], in_folder: Callable[[Path], list[Path]], none: str | None) -> list[Path]:
    """The files given, and those ``in_folder`` finds in each folder given; ``none``: the error when
    there are none (None: an empty list is fine).
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out += in_folder(path)
        elif is_regular(path):
            out.append(path)
        else:
            msg = "file or folder not found"
            raise DataError(msg, file=str(path))
    if not out and none is not None:
        raise DataError(none, file=", ".join(map(str, paths)))
    return out


def _lm_eval_in(folder: Path) -> list[Path]:
    return regular_files(folder, "results_*.json")


def read_lm_eval_aggregates(paths: str | Path | Sequence[str | Path], *, metric: str | None = None,
                            filter: str | None = None) -> list[AggregateScore]:  # noqa: A002 - lm-eval's word
    """Every (task, metric, filter) score of lm-eval ``results_*.json`` files (or folders holding
    them) with its standard error and items (``n-samples``: effective, else original). Tasks
    without an item count (groups) are skipped. ``metric``/``filter`` keep only those.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[AggregateScore] = []
    for path in _files(paths, _lm_eval_in, "no lm-eval results_*.json found"):
        data = load_json_file(path, take=True)
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
    from .safe import parquet_columns

    try:
        return {"schema_version", "evaluation_results"} <= set(parquet_columns(path))
    except (DataError, ImportError):  # not a readable Parquet file: not one
        return False


def _eee_records(path: Path) -> list[Any]:
    """The aggregate records of a JSON file (one) or of a Parquet view (one per row)."""
    if path.suffix.lower() == ".parquet":
        from .plain import plain_value
        from .safe import read_parquet

        frame = read_parquet(path)
        return [{k: plain_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    return [load_json_file(path, take=True)]


def is_eee_aggregate_file(path: Path) -> bool:
    """Whether a file is an Every Eval Ever aggregate record (JSON) or the datastore's Parquet view."""
    return is_regular(path) and (_eee_parquet(path) or (not _RESULTS.match(path.name) and is_eee_record(_peek(path))))


def eee_aggregate_files(folder: Path) -> list[Path]:
    """The Every Eval Ever aggregate records (and Parquet views) in a folder."""
    return _eee_in(folder)


def hf_eval_results_files(folder: Path) -> list[Path]:
    """The Hugging Face eval results (``.eval_results/*.yaml``, model cards) in a folder."""
    return _hf_in(folder)


def _eee_in(folder: Path) -> list[Path]:
    return ([p for p in regular_files(folder, "*.json") if is_eee_record(_peek(p))]
            + [p for p in regular_files(folder, "*.parquet") if _eee_parquet(p)])


def _peek(path: Path) -> Any:
    return peek_json(path)  # None for a file that is not JSON; a hostile one is an error


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_eee_aggregates(paths: str | Path | Sequence[str | Path], *, metric: str | None = None,
                        items: int | dict[str, int] | None = None) -> list[AggregateScore]:
    """Every result of Every Eval Ever aggregate records (files, or folders holding them) with the
    number of samples it rests on, and its standard error when given. ``task`` is the result's
    ``evaluation_name``, ``metric`` its ``metric_config.metric_id`` (else ``"score"``). The count
    is ``uncertainty.num_samples``; most 0.2.x records (the Open LLM Leaderboard's) do not say it, and
    ``items`` -- the benchmark's size, one number or ``evaluation_name`` -> number -- gives it; a
    result with neither is skipped (an error when that leaves nothing, naming the tasks).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[AggregateScore] = []
    lacking: list[str] = []
    for path in _files(paths, _eee_in, None):
        records = _eee_records(path)
        view = path.suffix.lower() == ".parquet"
        for r, data in enumerate(records):
            out += _eee_scores(path, data, metric, f"row {r}: " if view else "", items=items, lacking=lacking)
    if not out:
        wanted = f" for metric {metric!r}" if metric else ""
        msg = f"no Every Eval Ever results with a sample count (uncertainty.num_samples){wanted}"
        if lacking:
            tasks = ", ".join(dict.fromkeys(lacking))
            msg += (f"; these records give a score without it: give each benchmark's number of items "
                    f"(--items {lacking[0]}=N, or --items N for all; tasks: {tasks})")
        raise DataError(msg, file=", ".join(map(str, paths)))
    return out


def _on_unit_scale(value: float, se: float | None, config: dict[str, Any], *, file: str,
                   record: str) -> tuple[float, float | None]:
    """A score and its standard error on [0, 1] when the record declares another finite range
    (``metric_config.min_score`` / ``max_score``, e.g. 0-100): (value - min) / (max - min), the standard
    error over (max - min). A score outside its declared range is an error naming the field.
    """
    low, high = _number(config.get("min_score")), _number(config.get("max_score"))
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high) and high > low):
        return value, se
    if not low <= value <= high:
        msg = f"score {value!r} is outside the record's range [{low:g}, {high:g}] (metric_config)"
        raise DataError(msg, file=file, record=record, field="score_details.score")
    if (low, high) == (0.0, 1.0):
        return value, se
    width = high - low
    return (value - low) / width, None if se is None else se / width


def _eee_scores(path: Path, data: Any, metric: str | None, prefix: str, *, items: int | dict[str, int] | None = None,
                lacking: list[str] | None = None) -> list[AggregateScore]:
    """The scores of one aggregate record (``prefix`` names its row in a Parquet view; ``items``: the
    count of a result that does not record one; ``lacking`` collects the tasks with neither).
    """
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
        task = str(res.get("evaluation_name") or record)
        if n is None and items is not None:  # the record does not say: the benchmark's size given
            n = items if isinstance(items, int) else items.get(task)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            if n is None and lacking is not None:
                lacking.append(task)
            continue
        if n > _MAX_COUNT:
            msg = f"{n:.3g} samples is more than a count can be exactly (2**53)"
            raise DataError(msg, file=str(path), record=record, field="uncertainty.num_samples")
        se_block = _obj(unc.get("standard_error"))
        se = _number(se_block.get("value"))
        if se is not None and not (math.isfinite(se) and se >= 0):
            msg = f"standard error {se!r} is not a finite non-negative number"
            raise DataError(msg, file=str(path), record=record, field="uncertainty.standard_error.value")
        value, se = _on_unit_scale(value, se, config, file=str(path), record=record)
        out.append(AggregateScore(model, task, name, "", value, se, int(n), str(path)))
    return out


# =================================================================================================
# Leaderboard tables: one row per model (AlpacaEval's leaderboard CSVs, exported leaderboards)
# =================================================================================================

#: the columns a leaderboard table's parts are found in, in order of preference (case-insensitive)
_TABLE_MODEL = ("model", "model_name", "name", "")  # "" : pandas' unnamed index column (AlpacaEval's CSVs)
_TABLE_SCORE = ("score", "accuracy", "acc", "win_rate", "lb_win_rate", "value")
_TABLE_SE = ("standard_error", "stderr", "se", "lb_standard_error")
_TABLE_N = ("n_total", "n_items", "num_samples", "n", "items", "lb_n_total")
_TABLE_TASK = ("task", "benchmark", "dataset")


def _column(header: Sequence[str], wanted: Sequence[str]) -> str | None:
    lower = {h.strip().lower(): h for h in header}
    return next((lower[w] for w in wanted if w in lower), None)


def is_leaderboard_table(path: Path) -> bool:
    """Whether a file is a leaderboard table this reader takes: CSV/TSV (``.gz`` too) whose header has a
    model column and a score column (by the names of ``_TABLE_MODEL`` and ``_TABLE_SCORE``).
    """
    from .plain import plain_suffix

    if plain_suffix(path) not in (".csv", ".tsv"):
        return False
    header, _ = _table_rows(path, header_only=True)
    return _column(header, _TABLE_MODEL) is not None and _column(header, _TABLE_SCORE) is not None


def _table_rows(path: Path, *, header_only: bool = False) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """A CSV/TSV leaderboard's header and rows, (line, row) -- read here rather than by the per-item
    reader, which refuses an unnamed column: AlpacaEval's CSVs name their models in one.
    """
    import csv

    from .._core.files import allow_long_csv_fields, csv_error_text
    from .plain import plain_suffix
    from .safe import open_bounded

    allow_long_csv_fields()
    cap = limit("LLM_POWER_MAX_TEXT_MB") * MB
    with open_bounded(path) as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        msg = f"more than the {cap // MB:,} MB limit (LLM_POWER_MAX_TEXT_MB)"
        raise DataError(msg, file=str(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start})"
        raise DataError(msg, file=str(path)) from None
    reader = csv.reader(text.splitlines(), delimiter="\t" if plain_suffix(path) == ".tsv" else ",")
    try:
        header = [h.strip() for h in next(reader, [])]
        named = [h for h in header if h]
        if len(set(named)) != len(named) or header.count("") > 1:
            msg = "a column name appears twice in the header (or two columns have none)"
            raise DataError(msg, file=str(path), record="line 1")
        if header_only:
            return header, []
        rows = [(reader.line_num, dict(zip(header, row, strict=False))) for row in reader
                if any(c.strip() for c in row)]
    except csv.Error as exc:
        raise DataError(csv_error_text(exc), file=str(path), record=f"line {reader.line_num}") from None
    return header, rows


def read_leaderboard_table(path: str | Path, *, metric: str | None = None,
                           items: int | dict[str, int] | None = None) -> list[AggregateScore]:
    """Scores of a leaderboard table, one row per model (and task): the model (``model``, ``name``, or
    the unnamed first column of AlpacaEval's leaderboard CSVs), the score (``metric`` names its column;
    else ``score``, ``accuracy``, ``win_rate``, ...), its standard error (``<metric>_standard_error``,
    ``standard_error``, ``stderr``, ...) and the count (``n_total``, ``n_items``, ``num_samples``, ...;
    else ``items``). Scores in percent (any above 1) are read as fractions, their standard errors too.
    """
    path = Path(path)
    header, rows = _table_rows(path)
    if not rows:
        msg = "the leaderboard table has no rows"
        raise DataError(msg, file=str(path))
    model_col = _column(header, _TABLE_MODEL)
    score_col = metric if metric is not None and metric in header else _column(header, _TABLE_SCORE)
    if model_col is None or score_col is None:
        msg = (no_column("score", metric, header) if metric is not None and model_col is not None else
               f"no {'model' if model_col is None else 'score'} column; columns are {', '.join(map(repr, header))}")
        raise DataError(msg, file=str(path))
    se_col = _column(header, [f"{score_col}_standard_error", f"{score_col}_stderr", f"{score_col}_se",
                              *(["lc_standard_error"] if "length_controlled" in score_col else []), *_TABLE_SE])
    n_col, task_col = _column(header, _TABLE_N), _column(header, _TABLE_TASK)
    parsed = []
    for line, row in rows:
        record = f"line {line}"
        model = str(row.get(model_col) or "").strip()
        if not model:
            msg = "a row without a model name"
            raise DataError(msg, file=str(path), record=record, field=model_col or "(first column)")
        value = _table_number(row.get(score_col), path, record, score_col)
        if value is None:
            continue  # no score in this row (a leaderboard's blank cell)
        se = _table_number(row.get(se_col), path, record, se_col) if se_col else None
        task = str(row.get(task_col) or "").strip() if task_col else ""
        task = task or path.stem
        count = _table_number(row.get(n_col), path, record, n_col) if n_col else None
        if count is None and items is not None:
            count = items if isinstance(items, int) else items.get(task)
        if count is None or not float(count).is_integer() or not 1 <= count <= _MAX_COUNT:
            if count is None:
                msg = (f"no item count for {model!r}: the table has no count column "
                       f"({', '.join(_TABLE_N)}); give the benchmark's size (--items N)")
            else:
                msg = f"item count {count!r} is not a whole number from 1 to 2**53"
            raise DataError(msg, file=str(path), record=record, field=n_col)
        parsed.append((model, task, value, se, int(count)))
    percent = any(v > 1.0 for _, _, v, _, _ in parsed)
    out = []
    for model, task, value, se, count in parsed:
        if percent:
            value, se = value / 100.0, None if se is None else se / 100.0
        if not 0.0 <= value <= 1.0:
            msg = f"score {value!r} of {model!r} is outside [0, 1] (or [0, 100] for percentages)"
            raise DataError(msg, file=str(path), field=score_col)
        out.append(AggregateScore(model, task, score_col, "", value, se, count, str(path)))
    if not out:
        msg = f"no scores in column {score_col!r}"
        raise DataError(msg, file=str(path))
    return out


def _table_number(text: Any, path: Path, record: str, field: str | None) -> float | None:
    if text is None or (isinstance(text, str) and text.strip() == ""):
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        msg = f"{str(text)[:40]!r} is not a number"
        raise DataError(msg, file=str(path), record=record, field=field) from None
    if not math.isfinite(value) or value < 0:
        msg = f"{value!r} is not a finite non-negative number"
        raise DataError(msg, file=str(path), record=record, field=field)
    return value


# =================================================================================================
# Hugging Face Hub eval results: .eval_results/*.yaml and model cards' model-index
# =================================================================================================


def _yaml(text: str, *, file: str, what: str) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: F401 - present, or a clear message
    except ImportError:
        msg = "reading Hugging Face eval results needs PyYAML: pip install 'llm-power[hf]'"
        raise DataError(msg, file=file) from None
    from .safe import load_yaml

    return load_yaml(text, file=file, what=what)


def _read_text(path: Path) -> str:
    # an eval-results file holds a few kB; LLM_POWER_MAX_YAML_MB (8 MB) bounds the largest read
    data = read_regular_bytes(path, limit("LLM_POWER_MAX_YAML_MB") * MB, limit_name="LLM_POWER_MAX_YAML_MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"cannot read it as UTF-8 text ({type(exc).__name__})"
        raise DataError(msg, file=str(path)) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text's universal newlines


def _hf_in(folder: Path) -> list[Path]:
    """The ``.eval_results/*.yaml`` files under a folder (a model repository, or a folder of them)."""
    return regular_files(folder, "*", lambda p: p.parent.name == ".eval_results"
                         and p.suffix.lower() in (".yaml", ".yml"))


def _hf_model(path: Path) -> str:
    """The repository a file belongs to: the folder holding ``.eval_results/``, or the card's folder."""
    folder = path.parent.parent if path.parent.name == ".eval_results" else path.parent
    return folder.resolve().name or str(path)


def _fraction(value: Any, *, file: str, record: str, field: str) -> float:
    """A score as a fraction: values in [0, 1] as given, in (1, 100] as percentages."""
    percent = False
    if isinstance(value, str):  # a quoted number ("0.412", "41.2%": a percentage whatever its size)
        text = value.strip()
        percent = text.endswith("%")
        try:
            value = float(text.removesuffix("%")) if text.removesuffix("%") else value
        except ValueError:
            percent = False
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(float(value)):
        msg = f"{field} must be a number; got {value!r}" + (" (an unfilled template placeholder?)"
                                                            if isinstance(value, (dict, str)) else "")
        raise DataError(msg, file=file, record=record, field=field)
    v = float(value)
    if not 0.0 <= v <= 100.0:
        msg = f"score {v!r} is neither a fraction in [0, 1] nor a percentage in [0, 100]"
        raise DataError(msg, file=file, record=record, field=field)
    return v / 100.0 if v > 1.0 or percent else v


def _text(value: Any, *, file: str, record: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        hint = " (an unfilled template placeholder?)" if isinstance(value, dict) else ""
        msg = f"{field} must be non-empty text; got {value!r}{hint}"
        raise DataError(msg, file=file, record=record, field=field)
    return value


def _hf_entries(path: Path) -> list[tuple[str, str, str, float]]:
    """(model, task, metric, fraction) of one ``.eval_results`` YAML file or model card."""
    file = str(path)
    text = _read_text(path)
    if path.suffix.lower() == ".md":
        parts = text.split("\n---", 1) if text.startswith("---") else []
        if len(parts) < 2:
            msg = "a model card without YAML front matter (between '---' lines)"
            raise DataError(msg, file=file)
        meta = _yaml(parts[0][3:], file=file, what="front matter")
        index = meta.get("model-index") if isinstance(meta, dict) else None
        if not isinstance(index, list):
            msg = "the model card has no 'model-index' list"
            raise DataError(msg, file=file, field="model-index")
        out = []
        for i, model in enumerate(index):
            rec = f"model-index[{i}]"
            if not isinstance(model, dict):
                msg = "each model-index entry must be a mapping"
                raise DataError(msg, file=file, record=rec)
            name = _text(model.get("name"), file=file, record=rec, field="name")
            for j, res in enumerate(model.get("results") or []):
                r = f"{rec}.results[{j}]"
                data = _obj(res.get("dataset")) if isinstance(res, dict) else {}
                task = _text(data.get("type"), file=file, record=r, field="dataset.type")
                if isinstance(data.get("config"), str) and data["config"].strip():
                    task += f":{data['config']}"
                for k, met in enumerate(_obj(res).get("metrics") or []):
                    m = f"{r}.metrics[{k}]"
                    kind = _text(_obj(met).get("type"), file=file, record=m, field="type")
                    out.append((name, task, kind, _fraction(_obj(met).get("value"), file=file, record=m,
                                                            field="value")))
        return out
    data = _yaml(text, file=file, what="eval results")
    if not isinstance(data, list):
        msg = "a .eval_results file is a YAML list of results (dataset, value)"
        raise DataError(msg, file=file)
    model = _hf_model(path)
    out = []
    for i, entry in enumerate(data):
        rec = f"entry {i}"
        if not isinstance(entry, dict):
            msg = "each entry must be a mapping with 'dataset' and 'value'"
            raise DataError(msg, file=file, record=rec)
        dataset = entry.get("dataset")
        if not isinstance(dataset, dict):
            msg = "no 'dataset' mapping (id, task_id)"
            raise DataError(msg, file=file, record=rec, field="dataset")
        _text(dataset.get("id"), file=file, record=rec, field="dataset.id")
        task = _text(dataset.get("task_id"), file=file, record=rec, field="dataset.task_id")
        out.append((model, task, "value", _fraction(entry.get("value"), file=file, record=rec, field="value")))
    return out


def read_hf_eval_results(paths: str | Path | Sequence[str | Path], *,
                         items: int | dict[str, int] | None = None) -> list[AggregateScore]:
    """Scores of Hugging Face Hub eval results: ``.eval_results/*.yaml`` files (a list of
    ``{dataset: {id, task_id}, value}``; the model is the repository holding ``.eval_results/``)
    and model cards' ``model-index`` (``README.md`` front matter; the model is its ``name``).
    Files, or folders searched for ``.eval_results/*.yaml``. They give a score and nothing else --
    no item count, no standard error -- so ``items``, the benchmark's size (one number, or
    task id -> number), is needed for an interval; a value above 1 is read as a percentage.
    Needs PyYAML (``pip install 'llm-power[hf]'``).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = _files(paths, _hf_in, "no .eval_results/*.yaml found")
    out, lacking = [], []
    for path in files:
        for model, task, metric, value in _hf_entries(path):
            n = items if isinstance(items, int) else (items or {}).get(task)
            if n is None:
                lacking.append(task)
                continue
            out.append(AggregateScore(model, task, metric, "", value, None, int(n), str(path)))
    if lacking:
        tasks = ", ".join(dict.fromkeys(lacking))
        msg = (f"Hugging Face eval results give a score but no item count nor standard error: give each task's "
               f"number of items (--items {lacking[0]}=N; tasks: {tasks})")
        raise DataError(msg, file=", ".join(map(str, files)))
    return out


def is_hf_eval_results(path: Path) -> bool:
    """Whether a file is one Hugging Face's eval results are read from (by its name and place)."""
    return (path.suffix.lower() in (".yaml", ".yml") or
            (path.suffix.lower() == ".md" and path.name.lower() in ("readme.md", "modelcard.md")))
