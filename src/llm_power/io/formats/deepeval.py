"""DeepEval test runs: ``.deepeval/.latest_test_run.json`` (``{"testRunData": ...}``) and the
unfinished ``.deepeval/.temp_test_run_data.json`` (the same body, unwrapped).

One record per test case (``testCases[].name`` is the item). The default score is the test case's
``success`` (every metric passed: 1, else 0); ``metric="<metric name>"`` takes that metric's
``score`` (``metricsData[].name``, e.g. ``"Answer Relevancy"``), ``"<metric name>.success"`` its
pass. A metric that errored (no ``score``, an ``error``) is missing, never 0: the test case has no
value for it (nor a ``success`` while one of its metrics errored). The file does not name the
model under test: ``hyperparameters.model`` when written, else the folder holding ``.deepeval/``,
else the file's name. Clusters come from ``additionalMetadata``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..._core.labels import missing_label
from ..plain import parse_score, plain_suffix
from ..records import Format, Record, expect
from ..safe import load_json_file, peek_json, regular_files

LATEST, TEMP = ".latest_test_run.json", ".temp_test_run_data.json"


def _body(data: Any) -> dict[str, Any] | None:
    """The test-run body of a parsed file (None when it is not a DeepEval test run)."""
    if isinstance(data, dict) and isinstance(data.get("testRunData"), dict):
        data = data["testRunData"]
    if isinstance(data, dict) and isinstance(data.get("testCases"), list) and "metricsScores" in data:
        return data
    return None


def _model(path: Path, body: dict[str, Any]) -> str:
    hyper = body.get("hyperparameters")
    if isinstance(hyper, dict) and isinstance(hyper.get("model"), str) and hyper["model"].strip():
        return str(hyper["model"])
    if path.parent.name == ".deepeval" and path.parent.parent.name not in ("", "."):
        return path.parent.parent.name
    return path.stem.lstrip(".") or path.name


def _value(case: dict[str, Any], metric: str | None, *, file: str, record: str) -> float | None:
    """The test case's value (None: missing, a metric errored)."""
    data = case.get("metricsData") or []
    expect(data, list, "'metricsData'", file=file, record=record)
    errored = [m for m in data if isinstance(m, dict) and m.get("error") is not None and m.get("score") is None]
    if metric is None or metric == "success":
        if errored:
            return None  # not known whether it would have passed
        value = case.get("success")
        if not isinstance(value, bool):
            msg = "'success' must be true or false"
            raise DataError(msg, file=file, record=record, field="success")
        return 1.0 if value else 0.0
    name, want_pass = (metric[: -len(".success")], True) if metric.endswith(".success") else (metric, False)
    for m in data:
        if isinstance(m, dict) and m.get("name") == name:
            if m.get("score") is None:
                if m.get("error") is not None:
                    return None
                msg = f"metric {name!r} has neither a score nor an error"
                raise DataError(msg, file=file, record=record, field=f"metricsData.{name}")
            if want_pass:
                if not isinstance(m.get("success"), bool):
                    msg = f"metric {name!r}: 'success' must be true or false"
                    raise DataError(msg, file=file, record=record, field=f"metricsData.{name}.success")
                return 1.0 if m["success"] else 0.0
            return parse_score(m["score"], file=file, record=record, field=f"metricsData.{name}.score")
    have = ["success", *(str(m.get("name")) for m in data if isinstance(m, dict))]
    msg = f"no metric {name!r} in this test case; available: {', '.join(map(repr, have))}"
    raise DataError(msg, file=file, record=record, field="metricsData")


def read_deepeval(path: Path, *, metric: str | None = None, cluster: str | None = None) -> Iterator[Record]:
    """Read a DeepEval test-run file: one record per test case with a value."""
    file = str(path)
    body = _body(load_json_file(path, take=True))
    if body is None:
        msg = "not a DeepEval test run (no testRunData.testCases and metricsScores)"
        raise DataError(msg, file=file)
    model = _model(path, body)
    seen: dict[str, int] = {}
    found = 0
    for k, case in enumerate(body["testCases"]):
        record = f"testCases[{k}]"
        expect(case, dict, "each test case", file=file, record=record)
        name = case.get("name")
        if not isinstance(name, str) or not name.strip():
            msg = "a test case needs a non-empty 'name' (the item id)"
            raise DataError(msg, file=file, record=record, field="name")
        if name in seen:
            msg = f"test case {name!r} appears twice (first at testCases[{seen[name]}])"
            raise DataError(msg, file=file, record=record, field="name")
        seen[name] = k
        value = _value(case, metric, file=file, record=record)
        if value is None:
            continue
        label = None
        if cluster is not None:
            extra = case.get("additionalMetadata")
            label = extra.get(cluster) if isinstance(extra, dict) else None
            if missing_label(label):
                msg = (f"no cluster field {cluster!r} in additionalMetadata" if label is None
                       else f"empty cluster label {label!r}")
                raise DataError(msg, file=file, record=record, field=f"additionalMetadata.{cluster}")
            label = label if isinstance(label, str) else json.dumps(label, sort_keys=True)
        expected = case.get("expectedOutput")
        found += 1
        yield Record(model, name, value, label, None if expected is None else str(expected), file)
    if not found:
        msg = ("no test cases" if not body["testCases"]
               else f"no test case has a value for {metric or 'success'!r} (every one errored); "
                    "--metric NAME reads one metric's scores")
        raise DataError(msg, file=file)


def _claims(path: Path) -> bool:
    if not path.is_file() or plain_suffix(path) != ".json":
        return False
    return _body(peek_json(path)) is not None


def _finds(folder: Path) -> list[tuple[int, Path]]:
    out = []
    for p in regular_files(folder, "*.json"):
        if p.name == TEMP and (p.parent / LATEST).is_file():
            continue  # an unfinished run beside the finished one: the finished one counts
        if _claims(p):
            out.append((0, p))
    return out


FORMATS = (Format(
    name="deepeval", summary="DeepEval .deepeval/.latest_test_run.json", order=26,
    read=lambda path, o: read_deepeval(path, metric=o.metric, cluster=o.cluster),
    claims=_claims, finds=_finds, patterns=(".deepeval/.latest_test_run.json",)),)
