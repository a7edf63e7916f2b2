"""OpenCompass objective-task results with per-sample details: ``results/<model>/<dataset>.json``
of a work directory (``outputs/<config>/<timestamp>/``), written by ``OpenICLEvalTask`` when
details are dumped (``--dump-eval-details``, the default since April 2025).

Two layouts of ``details`` exist (opencompass/tasks/openicl_eval.py):

- a **list**, one entry per example, with ``example_abbr`` (``<subdivision>_<idx>``) and every
  field a list over the ``n`` repeats (``"correct": [true, false]``; since March 2025);
- a **dict** keyed ``"0"``, ``"1"``, ... (and ``"type": "GEN" | "PPL"``), each entry with a scalar
  ``correct`` (before 2025, and at HEAD when the evaluator returns no details of its own).

The model is the folder (``results/<model>/``), the item ``<dataset>:<example>`` (the file's stem
and the example's id), the score the per-sample ``correct`` (else ``is_correct``, else
``cascade_correct``; a bool, or the mean of its repeats) or ``metric=`` another per-sample numeric
field (``"G-Pass@4_0.5"``). ``predictions/<model>/<dataset>.json`` hold no per-sample score and are
not read; subjective (pairwise) results are battles (:func:`llm_power.read_battles`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..plain import parse_score, plain_suffix
from ..records import BattleReader, Format, Record
from ..safe import load_json_file, peek_json, regular_files

#: the per-sample correctness fields OpenCompass evaluators write, in the order the G-Pass code tries them
CORRECT_FIELDS = ("correct", "is_correct", "cascade_correct")


def _details(data: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """(example id, entry) of a parsed results file, or None when it has no per-sample details."""
    if not isinstance(data, dict) or "details" not in data:
        return None
    details = data["details"]
    if isinstance(details, list) and all(isinstance(e, dict) for e in details):
        return [(str(e.get("example_abbr", k)), e) for k, e in enumerate(details)]
    if isinstance(details, dict):
        entries = [(str(k), e) for k, e in details.items() if k != "type"]
        if all(isinstance(e, dict) for _, e in entries):
            return entries
    return None


def _claims(path: Path) -> bool:
    if not path.is_file() or plain_suffix(path) != ".json" or path.parent.parent.name != "results":
        return False
    data = peek_json(path)
    if not isinstance(data, dict) or all(str(k).isdigit() for k in data):  # a subjective judge file: battles
        return False
    # a metric beside the details -- or alone, when details were not dumped (read: an error that says so)
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values())


def _value(entry: dict[str, Any], metric: str | None, *, file: str, record: str) -> float | None:
    """The example's score: its correctness (a bool or a list of bools over repeats), or a field."""
    fields = (metric,) if metric is not None else CORRECT_FIELDS
    for name in fields:
        if name not in entry:
            continue
        raw = entry[name]
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            msg = f"{name!r} is an empty list"
            raise DataError(msg, file=file, record=record, field=name)
        scores = []
        for v in values:
            if isinstance(v, bool):
                scores.append(1.0 if v else 0.0)
            elif v is None:
                return None
            else:
                scores.append(parse_score(v, file=file, record=record, field=name))
        return float(math.fsum(scores) / len(scores))
    have = sorted(k for k, v in entry.items() if isinstance(v, (bool, int, float, list)))
    wanted = repr(metric) if metric is not None else " / ".join(map(repr, CORRECT_FIELDS))
    msg = (f"no per-sample {wanted} (this evaluator wrote none); fields: {', '.join(map(repr, have)) or 'none'}; "
           "--metric NAME reads another")
    raise DataError(msg, file=file, record=record, field=metric or "correct")


def read_opencompass(path: Path, *, metric: str | None = None) -> Iterator[Record]:
    """Read an OpenCompass ``results/<model>/<dataset>.json``: one record per example."""
    file = str(path)
    data = load_json_file(path, take=True)
    entries = _details(data)
    if entries is None:
        msg = ("no per-sample 'details' (OpenCompass writes them with --dump-eval-details); without them only "
               "the aggregate score is known")
        raise DataError(msg, file=file, field="details")
    model, dataset = path.parent.name, path.stem
    seen: set[str] = set()
    for example, entry in entries:
        record = f"details[{example}]"
        if example in seen:
            msg = f"example {example!r} appears twice"
            raise DataError(msg, file=file, record=record, field="example_abbr")
        seen.add(example)
        value = _value(entry, metric, file=file, record=record)
        if value is not None:
            yield Record(model, f"{dataset}:{example}", value, None, None, file)
    if not entries:
        msg = "'details' is empty"
        raise DataError(msg, file=file, field="details")


def _finds(folder: Path) -> list[tuple[int, Path]]:
    return [(0, p) for p in regular_files(folder, "*.json") if _claims(p)]


FORMATS = (Format(
    name="opencompass", summary="OpenCompass results/<model>/<dataset>.json with details", order=27,
    read=lambda path, o: read_opencompass(path, metric=o.metric), claims=_claims, finds=_finds,
    patterns=("results/*/*.json",)),)


# ---- pairwise battles (arena, judges): subjective results/<model1>_<model2>/<dataset>.json --------------------

def _read_battles(path: Path) -> tuple[Any, int]:
    from ..battle_tables import read_opencompass_battles

    return read_opencompass_battles(path)


def _claims_battles(path: Path) -> bool:
    from ..battle_tables import is_opencompass_battles

    return path.suffix.lower() == ".json" and is_opencompass_battles(path)


def _find_battles(folder: Path) -> list[Path]:
    found = regular_files(folder, "*", lambda p: p.suffix == ".json" and p.parent.parent.name == "results")
    return [p for p in found if _claims_battles(p)]


BATTLES = (BattleReader("opencompass", "OpenCompass subjective results/<model1>_<model2>/<dataset>.json",
                        _read_battles, _claims_battles, order=10, finds=_find_battles),)

