"""EvalPlus (HumanEval+ / MBPP+) ``*_eval_results.json``: several generated solutions per task, each
passing or not -- repeated samples for ``passk`` (no per-item scores of one answer, so no ``FORMATS``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..records import SampleOptions, SampleReader
from ..safe import load_json_file, peek_json, regular_files

__all__ = ["SAMPLES"]

_STATUS = {"pass": 1.0, "fail": 0.0, "timeout": 0.0, "error": 0.0}


def _named(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(("_eval_results.json", ".eval_results.json")) or name == "eval_results.json"


def _claims(path: Path) -> bool:
    if _named(path):
        return True
    if path.suffix.lower() != ".json":
        return False
    data = peek_json(path)
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" not in data


def _status(entry: dict[str, Any], key: str, path: Path, record: str) -> float:
    value = entry.get(f"{key}_status")
    if value is None and isinstance(entry.get(key), list) and entry[key]:  # older EvalPlus: "base": [status, ...]
        value = entry[key][0]
    if value not in _STATUS:
        msg = f"{value!r} is not a status (pass, fail, timeout, error)"
        raise DataError(msg, file=str(path), record=record, field=f"{key}_status")
    return _STATUS[str(value)]



def read_evalplus(path: Path, options: SampleOptions) -> Iterator[dict[str, Any]]:
    """One row per generated solution: 1 when it passes the base and the extra tests (``metric="base"``:
    the base tests only); the model from the file name.
    """
    which = options.metric or "plus"
    if which not in ("plus", "base"):
        msg = f"EvalPlus scores are 'plus' (base and extra tests pass; default) or 'base'; got {which!r}"
        raise DataError(msg, file=str(path), field="metric")
    data = load_json_file(path, take=True)
    tasks = data.get("eval") if isinstance(data, dict) else None
    if not isinstance(tasks, dict) or not tasks:
        msg = "no 'eval' mapping of tasks to samples"
        raise DataError(msg, file=str(path), field="eval")
    model = re.sub(r"[._]eval_results$", "", path.stem) or path.parent.name
    if path.stem == "eval_results":
        model = path.parent.name
    for task, entries in tasks.items():
        if not isinstance(entries, list) or not entries:
            msg = "must be a non-empty list of samples"
            raise DataError(msg, file=str(path), record=f"task {task}", field="eval")
        for s, entry in enumerate(entries):
            record = f"task {task} sample {s}"
            if not isinstance(entry, dict):
                msg = "each sample must be a JSON object"
                raise DataError(msg, file=str(path), record=record)
            base = _status(entry, "base", path, record)
            score = base if which == "base" else base * _status(entry, "plus", path, record)
            yield {"model": model, "item": str(task), "sample": str(s), "score": score, "cluster": None}




SAMPLES = (SampleReader("evalplus", "EvalPlus *_eval_results.json ({'eval': {task: [...]}})", read_evalplus, _claims,
                        order=30, finds=lambda folder: regular_files(folder, "*", _named)),)
