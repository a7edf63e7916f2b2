"""MLflow evaluation runs, ``mlflow://RUN_ID``: the per-row results of one run are one model's scores
(the run's name is the model's). Two kinds of runs hold per-row results:

- ``mlflow.genai.evaluate`` runs: one trace per row, the row's inputs in the trace's request and each
  scorer's judgement as a *feedback* assessment on the trace (``True``/``False``, a number, or
  ``"yes"``/``"no"``); the score is the feedback named ``metric`` (the only one when there is one);
- ``mlflow.evaluate`` runs (and any run with a table logged by ``mlflow.log_table``): the table
  ``eval_results_table.json``, one row per item; the score is the column ``metric`` (else the one
  ``*/score`` column, else a usual score column: score, correct, acc, ...).

The item id is the ``item_column`` field of a row's inputs (else a usual id field: item, id, doc_id,
question_id, ...; else the inputs themselves, as canonical JSON), so runs of several models on the
same rows align. The tracking server is MLflow's own choice: ``MLFLOW_TRACKING_URI``, or
``mlflow.set_tracking_uri`` (``--mlflow-tracking-uri`` on the command line). Needs the ``mlflow``
extra (``mlflow-skinny`` is enough).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..._core.optional import require
from ..plain import ITEM_COLUMNS, SCORE_COLUMNS
from ..records import Format, ReadOptions, Record

__all__ = ["EVAL_TABLE", "FORMATS", "SCHEME", "mlflow_records", "run_id_of"]

#: the URI scheme of an MLflow run given where a file goes (``mlflow://RUN_ID``)
SCHEME = "mlflow"
#: the per-row table ``mlflow.evaluate`` logs
EVAL_TABLE = "eval_results_table.json"
#: tables that llm-power itself logs (never read back as scores)
OWN_TABLES = ("llm_power/pairs.json",)
#: judgements written as words, and their scores
_WORDS = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "pass": 1.0, "fail": 0.0, "correct": 1.0,
          "incorrect": 0.0}


def run_id_of(path: str | Path) -> str | None:
    """The run id of ``mlflow://RUN_ID`` (also as a ``Path``, which folds ``//``), else None."""
    text = str(path)
    if not text.startswith(f"{SCHEME}:"):
        return None
    run_id = text[len(SCHEME) + 1:].strip("/")
    return run_id or None


def _claims(path: Path) -> bool:
    """``mlflow://RUN_ID`` -- unless a file of that name exists (a file is read as a file)."""
    return run_id_of(path) is not None and not path.exists()


def _client(tracking_uri: str | None) -> Any:
    tracking = require("mlflow.tracking", "mlflow", "reading MLflow runs (mlflow://RUN_ID)")
    return tracking.MlflowClient(tracking_uri=tracking_uri)


def mlflow_records(run_id: str, *, metric: str | None = None, item_column: str | None = None,
                   cluster: str | None = None, tracking_uri: str | None = None) -> Iterator[Record]:
    """The per-row scores of one MLflow run as records (model: the run's name): its evaluation traces'
    feedback (``mlflow.genai.evaluate``) when it has any, else its ``eval_results_table.json``
    (``mlflow.evaluate``) or its one logged table.
    """
    where = f"{SCHEME}://{run_id}"
    client = _client(tracking_uri)
    exceptions = require("mlflow.exceptions", "mlflow", "reading MLflow runs (mlflow://RUN_ID)")
    try:
        run = client.get_run(run_id)
    except exceptions.MlflowException as exc:
        msg = f"no such MLflow run at {client.tracking_uri} ({str(exc).splitlines()[0]:.200})"
        raise DataError(msg, file=where) from exc
    model = run.info.run_name or run_id
    traces = _traces(client, run)
    if traces:
        yield from _trace_records(traces, model, where, metric=metric, item_column=item_column, cluster=cluster)
        return
    yield from _table_records(client, run, model, where, metric=metric, item_column=item_column, cluster=cluster)


# --- mlflow.genai.evaluate: traces with feedback ------------------------------------------------------

def _traces(client: Any, run: Any) -> list[Any]:
    """Every trace of the run (all pages)."""
    out: list[Any] = []
    token = None
    while True:
        page = client.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id, page_token=token,
                                    include_spans=True, max_results=500)
        out.extend(page)
        token = page.token
        if not token:
            return out


def _inputs(trace: Any) -> Any:
    text = trace.data.request if trace.data is not None else None
    text = text if text is not None else trace.info.request_preview
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


def _item_id(inputs: Any, item_column: str | None, where: str, record: str) -> str:
    """A row's item id: its ``item_column`` (or a usual id field) when the inputs are a mapping, else
    the inputs themselves as canonical JSON.
    """
    if isinstance(inputs, dict):
        if item_column is not None:
            if item_column not in inputs:
                msg = f"no field {item_column!r} in the inputs (fields: {', '.join(sorted(map(str, inputs)))})"
                raise DataError(msg, file=where, record=record, field=item_column)
            return str(inputs[item_column])
        for name in ITEM_COLUMNS:
            if name in inputs:
                return str(inputs[name])
    return json.dumps(inputs, sort_keys=True, default=str)


def _score(value: Any, where: str, record: str, field: str) -> float:
    """A judgement as a number: booleans 1/0, numbers, and yes/no, pass/fail, correct/incorrect."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in _WORDS:
        return _WORDS[value.strip().lower()]
    msg = f"score {value!r:.60} is not a number, a boolean nor yes/no"
    raise DataError(msg, file=where, record=record, field=field)


def _trace_records(traces: list[Any], model: str, where: str, *, metric: str | None, item_column: str | None,
                   cluster: str | None) -> Iterator[Record]:
    names = sorted({a.name for t in traces for a in t.search_assessments(type="feedback")})
    if metric is None:
        if len(names) != 1:
            msg = (f"the run's traces carry {len(names)} feedback names ({', '.join(names) or 'none'}): "
                   "name the score with metric= (--metric)")
            raise DataError(msg, file=where)
        metric = names[0]
    elif metric not in names:
        msg = f"no feedback named {metric!r} on the run's traces (feedback: {', '.join(names) or 'none'})"
        raise DataError(msg, file=where, field=metric)
    for trace in traces:
        record = trace.info.trace_id
        found = trace.search_assessments(name=metric, type="feedback")
        if not found:
            msg = f"no feedback {metric!r} on this trace"
            raise DataError(msg, file=where, record=record, field=metric)
        feedback = found[-1]
        if feedback.value is None and getattr(feedback, "error", None) is not None:
            msg = f"the scorer failed on this row ({feedback.error_message or feedback.error_code})"
            raise DataError(msg, file=where, record=record, field=metric)
        inputs = _inputs(trace)
        label = None
        if cluster is not None:
            label = inputs.get(cluster) if isinstance(inputs, dict) else None
            label = label if label is not None else trace.info.tags.get(cluster)
        yield Record(model=model, item=_item_id(inputs, item_column, where, record),
                     score=_score(feedback.value, where, record, metric),
                     cluster=None if label is None else str(label), source=where)


# --- mlflow.evaluate: the per-row table -----------------------------------------------------------------

def _table_name(client: Any, run: Any, where: str) -> str:
    logged = run.data.tags.get("mlflow.loggedArtifacts")
    tables = [a.get("path") for a in json.loads(logged) if a.get("type") == "table"] if logged else []
    tables = [t for t in tables if t not in OWN_TABLES]
    if EVAL_TABLE in tables or not tables and any(f.path == EVAL_TABLE for f in client.list_artifacts(
            run.info.run_id)):
        return EVAL_TABLE
    if len(tables) == 1:
        return str(tables[0])
    msg = (f"no per-row results: neither evaluation traces nor {EVAL_TABLE}" if not tables
           else f"several logged tables ({', '.join(map(str, tables))}) and no {EVAL_TABLE}")
    raise DataError(msg, file=where)


def _pick(columns: list[str], wanted: str | None, usual: tuple[str, ...], what: str, where: str,
          option: str) -> str:
    if wanted is not None:
        if wanted not in columns:
            msg = f"no column {wanted!r} (columns: {', '.join(columns)})"
            raise DataError(msg, file=where, field=wanted)
        return wanted
    if what == "score":
        scored = [c for c in columns if c.endswith("/score")]
        if len(scored) == 1:
            return scored[0]
        if len(scored) > 1:
            msg = f"several score columns ({', '.join(scored)}): name one with {option}"
            raise DataError(msg, file=where)
    found = next((c for c in usual if c in columns), None)
    if found is None:
        msg = f"no {what} column (columns: {', '.join(columns)}): name one with {option}"
        raise DataError(msg, file=where)
    return found


@contextlib.contextmanager
def _no_progress_bar() -> Iterator[None]:
    """MLflow's artifact progress bar off for one download (our own progress reports the step)."""
    key = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
    old = os.environ.get(key)
    os.environ[key] = "false"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def _table_records(client: Any, run: Any, model: str, where: str, *, metric: str | None, item_column: str | None,
                   cluster: str | None) -> Iterator[Record]:
    name = _table_name(client, run, where)
    with tempfile.TemporaryDirectory(prefix="llm-power-mlflow-") as tmp, _no_progress_bar():
        local = client.download_artifacts(run.info.run_id, name, tmp)
        try:
            table = json.loads(Path(local).read_text("utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            msg = f"the table {name} is not JSON ({exc})"
            raise DataError(msg, file=where) from exc
    if not isinstance(table, dict) or not isinstance(table.get("columns"), list) or not isinstance(
            table.get("data"), list):
        msg = f"the table {name} has no columns/data (not a table logged by mlflow.log_table)"
        raise DataError(msg, file=where)
    columns = [str(c) for c in table["columns"]]
    score_at = columns.index(_pick(columns, metric, SCORE_COLUMNS, "score", where, "metric= (--metric)"))
    id_name = _pick(columns, item_column, (*ITEM_COLUMNS, "inputs", "request"), "item id", where,
                    "item_column= (--id-column)")
    id_at = columns.index(id_name)
    cluster_at = columns.index(_pick(columns, cluster, (), "cluster", where, "--cluster")) if cluster else None
    for k, row in enumerate(table["data"]):
        record = f"{name} row {k}"
        if not isinstance(row, list) or len(row) != len(columns):
            msg = f"a row of {len(row) if isinstance(row, list) else '?'} cells for {len(columns)} columns"
            raise DataError(msg, file=where, record=record)
        raw_id = row[id_at]
        item = _item_id(raw_id, None, where, record) if isinstance(raw_id, dict) else str(raw_id)
        label = None if cluster_at is None or row[cluster_at] is None else str(row[cluster_at])
        yield Record(model=model, item=item, score=_score(row[score_at], where, record, columns[score_at]),
                     cluster=label, source=where)


def read_mlflow_run(path: Path, options: ReadOptions) -> Iterator[Record]:
    """The records of ``mlflow://RUN_ID`` (the registry's reader: the tracking server is MLflow's
    current one).
    """
    run_id = run_id_of(path)
    if run_id is None:
        msg = "not an MLflow run (mlflow://RUN_ID)"
        raise DataError(msg, file=str(path))
    return mlflow_records(run_id, metric=options.metric, item_column=options.item_column, cluster=options.cluster)


FORMATS = (Format("mlflow", "MLflow evaluation runs mlflow://RUN_ID", read_mlflow_run, _claims, order=95,
                  remote=True),)
