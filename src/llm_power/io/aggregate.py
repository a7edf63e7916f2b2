"""lm-evaluation-harness aggregate results (``results_*.json``, written with or without
``--log_samples``): per task, the metric, its standard error and the number of items.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .._core.errors import DataError
from .safe import load_json_file

__all__ = ["AggregateScore", "read_lm_eval_aggregates"]

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
