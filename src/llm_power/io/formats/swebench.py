"""SWE-bench run reports ``<model>.<run>.json`` (``resolved_ids``): one 0/1 per instance per run --
repeated samples for ``passk`` when a model has several runs (no ``FORMATS``: a report is not a table of
per-item scores of one answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..records import SampleOptions, SampleReader
from ..safe import load_json_file, peek_json

__all__ = ["SAMPLES"]


def _claims(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    data = peek_json(path)
    return isinstance(data, dict) and "resolved_ids" in data


def read_swebench(path: Path, options: SampleOptions) -> Iterator[dict[str, Any]]:
    """One row per instance per run, 1 if resolved; several runs of a model are its samples."""
    instances = options.instances
    data = load_json_file(path, take=True)
    resolved = data.get("resolved_ids")
    if not isinstance(resolved, list):
        msg = "resolved_ids must be a list of instance ids"
        raise DataError(msg, file=str(path), field="resolved_ids")
    known = set()
    for key in ("resolved_ids", "unresolved_ids", "submitted_ids", "completed_ids", "error_ids", "empty_patch_ids",
                "incomplete_ids"):
        ids = data.get(key)
        if not isinstance(ids, list):
            continue
        bad = next((k for k, v in enumerate(ids) if not isinstance(v, str) or not v.strip()), None)
        if bad is not None:
            msg = f"entry #{bad} ({ids[bad]!r:.40}) is not an instance id (a non-empty string)"
            raise DataError(msg, file=str(path), field=key)
        known |= set(ids)
    if instances is None:
        total = data.get("total_instances")
        if isinstance(total, int) and total > len(known):
            msg = (f"the report covers {len(known)} of total_instances = {total}; the other instances count as "
                   "failures only if named: give the instance list (--instances FILE)")
            raise DataError(msg, file=str(path), field="total_instances")
        universe = sorted(known)
    else:
        missing = sorted(set(map(str, resolved)) - set(instances))
        if missing:
            msg = f"resolved instance {missing[0]!r} is not in the instance list"
            raise DataError(msg, file=str(path), field="resolved_ids")
        universe = instances
    parts = path.name[: -len(".json")].split(".")
    model = parts[0] if len(parts) > 1 else path.parent.name
    run = ".".join(parts[1:]) if len(parts) > 1 else path.stem
    hit = set(map(str, resolved))
    for item in universe:
        yield {"model": model, "item": item, "sample": run, "score": 1.0 if item in hit else 0.0, "cluster": None}




SAMPLES = (SampleReader("swebench", "SWE-bench run reports <model>.<run>.json (resolved_ids)", read_swebench, _claims,
                        order=35),)
