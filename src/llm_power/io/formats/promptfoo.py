"""promptfoo eval output (``promptfoo eval -o results.json`` and ``promptfoo export``; results
version 3): ``results.results[]`` holds one row per (test case, prompt x provider).

The model is the row's ``provider.label``, else its ``provider.id`` (with the prompt's label when one
provider runs several prompts: each (prompt, provider) pair is a column of promptfoo's table; with
the column's index when names still collide), the item ``test<testIdx>``,
the score the row's ``score`` (the mean of its assertions' scores); ``metric="success"`` takes the
row's pass/fail, ``metric="<assertion type>"`` (``llm-rubric``, ``contains``, ...) that assertion's
pass, and a key of ``namedScores`` that named score. Rows of one test for one column are repeats
(``--repeat``; ``repeatIndex`` when written): averaged. A row that errored (``failureReason`` 2:
the provider failed, so the row has no score) is left out, and alignment reports it as missing.
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

#: promptfoo's ResultFailureReason: 0 none, 1 an assertion failed, 2 the provider or the eval errored
_ERROR = 2


def _columns(prompts: list[Any], rows: list[Any]) -> dict[int, str]:
    """The model name of each promptIdx (a column of promptfoo's table): the provider's label, else
    its id; with the prompt's label when one provider runs several prompts; with the column's index
    when that still leaves two columns one name (never two columns averaged into one model).
    """
    providers: dict[int, str] = {}
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("promptIdx"), int):
            prov = row.get("provider")
            pid = (prov.get("label") or prov.get("id")) if isinstance(prov, dict) else prov
            providers.setdefault(row["promptIdx"], str(pid))
    for k, prompt in enumerate(prompts):
        if isinstance(prompt, dict) and k not in providers and prompt.get("provider"):
            providers[k] = str(prompt["provider"])

    def counts(names: dict[int, str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for name in names.values():
            out[name] = out.get(name, 0) + 1
        return out

    seen = counts(providers)
    named = {}
    for k, name in providers.items():
        if seen[name] > 1:
            label = prompts[k].get("label") if k < len(prompts) and isinstance(prompts[k], dict) else None
            name = f"{name} [{label or f'prompt {k}'}]"
        named[k] = name
    again = counts(named)
    return {k: f"{name} [column {k}]" if again[name] > 1 else name for k, name in named.items()}


def _score(row: dict[str, Any], metric: str | None, *, file: str, record: str) -> float:
    if metric is None or metric == "score":
        return parse_score(row.get("score"), file=file, record=record, field="score")
    if metric == "success":
        value = row.get("success")
        if not isinstance(value, bool):
            msg = "'success' must be true or false"
            raise DataError(msg, file=file, record=record, field="success")
        return 1.0 if value else 0.0
    named = row.get("namedScores")
    if isinstance(named, dict) and metric in named:
        return parse_score(named[metric], file=file, record=record, field=f"namedScores.{metric}")
    grading = row.get("gradingResult")
    parts = grading.get("componentResults") if isinstance(grading, dict) else None
    types = []
    for part in parts if isinstance(parts, list) else []:
        assertion = part.get("assertion") if isinstance(part, dict) else None
        kind = assertion.get("type") if isinstance(assertion, dict) else None
        types.append(str(kind))
        if kind == metric:
            value = part.get("pass")
            if not isinstance(value, bool):
                msg = f"the {metric!r} assertion's 'pass' must be true or false"
                raise DataError(msg, file=file, record=record, field="gradingResult.componentResults")
            return 1.0 if value else 0.0
    have = ["score", "success", *sorted(named or {}), *dict.fromkeys(types)]
    msg = f"no metric {metric!r} in this row; available: {', '.join(map(repr, have))}"
    raise DataError(msg, file=file, record=record, field=metric)


def read_promptfoo(path: Path, *, metric: str | None = None, cluster: str | None = None) -> Iterator[Record]:
    """Read a promptfoo ``results.json``: one record per (column, test), repeats averaged."""
    file = str(path)
    data = expect(load_json_file(path, take=True), dict, "a promptfoo output file", file=file)
    results = expect(data.get("results"), dict, "'results'", file=file)
    rows = expect(results.get("results"), list, "'results.results'", file=file)
    prompts = results.get("prompts") if isinstance(results.get("prompts"), list) else []
    names = _columns(prompts, rows)
    values: dict[tuple[str, str], list[float]] = {}
    labels: dict[tuple[str, str], str | None] = {}
    seen: dict[tuple[str, int, Any], int] = {}
    for k, row in enumerate(rows):
        record = f"results.results[{k}]"
        expect(row, dict, "each row", file=file, record=record)
        test, col = row.get("testIdx"), row.get("promptIdx")
        if not isinstance(test, int) or isinstance(test, bool) or not isinstance(col, int) or isinstance(col, bool):
            msg = "a row needs integer 'testIdx' and 'promptIdx'"
            raise DataError(msg, file=file, record=record, field="testIdx")
        if "repeatIndex" in row:
            key = (names.get(col, str(col)), test, row["repeatIndex"])
            if key in seen:
                msg = (f"test {test} of {key[0]!r} appears twice for repeat {row['repeatIndex']!r} "
                       f"(first at row {seen[key]})")
                raise DataError(msg, file=file, record=record, field="repeatIndex")
            seen[key] = k
        if row.get("failureReason") == _ERROR:
            continue  # the provider failed: no score for this test (alignment reports it missing)
        model, item = names.get(col, f"prompt {col}"), f"test{test}"
        values.setdefault((model, item), []).append(_score(row, metric, file=file, record=record))
        label = None
        if cluster is not None:
            test_case = row.get("testCase") if isinstance(row.get("testCase"), dict) else {}
            sources = [row.get("vars"), test_case.get("metadata")]
            label = next((s[cluster] for s in sources if isinstance(s, dict) and cluster in s), None)
            if missing_label(label):
                msg = (f"no cluster field {cluster!r} in the row's vars or the test's metadata" if label is None
                       else f"empty cluster label {label!r}")
                raise DataError(msg, file=file, record=record, field=f"vars.{cluster}")
            label = label if isinstance(label, str) else json.dumps(label)
        labels[(model, item)] = label
    if not values:
        msg = "no scored rows (every row errored, or the file is empty)" if rows else "no rows (empty eval)"
        raise DataError(msg, file=file)
    for (model, item), vals in values.items():
        yield Record(model, item, sum(vals) / len(vals), labels[(model, item)], None, file)


def _is_promptfoo(data: Any) -> bool:
    results = data.get("results") if isinstance(data, dict) else None
    return (isinstance(results, dict) and isinstance(results.get("results"), list) and "version" in results
            and ("evalId" in data or "prompts" in results))


def _claims(path: Path) -> bool:
    if not path.is_file() or plain_suffix(path) != ".json":
        return False
    return _is_promptfoo(peek_json(path))


FORMATS = (Format(
    name="promptfoo", summary="promptfoo results.json", order=25,
    read=lambda path, o: read_promptfoo(path, metric=o.metric, cluster=o.cluster),
    claims=_claims,
    finds=lambda folder: [(0, p) for p in regular_files(folder, "*.json") if _claims(p)]),)
