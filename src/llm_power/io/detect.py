"""Which reader for which file: format detection, folder expansion and the companion files
that readers open (so that outputs never land on them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from .._core.errors import DataError
from .plain import plain_suffix
from .safe import load_json_file

__all__ = ["companion_files", "detect_format", "expand_paths"]

LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")


def detect_format(path: Path) -> str:
    """Guess the format of one file or run folder."""
    name = path.name
    if path.is_dir():
        if (path / "per_instance_stats.json").exists():
            return "helm"
        msg = "is a folder without per_instance_stats.json (give files, or a folder to search)"
        raise DataError(msg, file=str(path))
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if name == "per_instance_stats.json":
        return "helm"
    if LM_EVAL_SAMPLES.match(name):
        return "lm_eval"
    if suffix == ".parquet":
        return "lighteval" if name.startswith("details_") else "parquet"
    if suffix == ".json" or (suffix == ".gz" and plain_suffix(path) == ".json"):
        data = load_json_file(path)
        head = set(data) if isinstance(data, dict) else set()
        if {"eval", "samples"} <= head or {"version", "eval"} <= head:
            return "inspect"
        if isinstance(data, list):
            return "csv"  # an array of records: a plain table
        msg = (
            "unknown JSON layout (not an inspect_ai log nor an array of records; lm-eval results_*.json hold no "
            "per-item scores -- give the samples_*.jsonl files)"
        )
        raise DataError(msg, file=str(path))
    if suffix in (".csv", ".tsv", ".txt", ".jsonl", ".ndjson") or (
            suffix == ".gz" and plain_suffix(path) in (".csv", ".tsv", ".txt", ".jsonl", ".ndjson")):
        return "csv"
    msg = (
        f"unknown format {suffix or '(no extension)'!r}; known: lm-eval samples_*.jsonl, "
                    "inspect .eval/.json, HELM per_instance_stats.json, lighteval details_*.parquet, "
                    "CSV/TSV/JSONL/Parquet"
    )
    raise DataError(msg, file=str(path))


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files and folders -> the result files inside (sorted, deterministic)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            msg = "file or folder not found"
            raise DataError(msg, file=str(path))
        if path.is_file():
            out.append(path)
            continue
        if (path / "per_instance_stats.json").exists():
            out.append(path)
            continue
        found = sorted(
            p for p in path.rglob("*")
            if p.is_file() and (
                LM_EVAL_SAMPLES.match(p.name) or p.suffix.lower() == ".eval"
                or (p.name.startswith("details_") and p.suffix.lower() == ".parquet")
            )
        )
        found += sorted(p.parent for p in path.rglob("per_instance_stats.json"))
        found += sorted(p for p in path.rglob("*.json") if p.name != "per_instance_stats.json"
                        and not p.name.startswith("results_") and p.parent.name != "_journal"
                        and _is_inspect_json(p))
        if not found:
            msg = (
                "no result files found in this folder (lm-eval samples_*.jsonl, inspect .eval/.json, "
                            "HELM per_instance_stats.json, lighteval details_*.parquet)"
            )
            raise DataError(msg, file=str(path))
        out.extend(found)
    return out


def companion_files(paths: Iterable[Path]) -> list[Path]:
    """Files the readers open besides the result files themselves (model names, run specs): an
    output must never land on one of them.
    """
    out: list[Path] = []
    for path in paths:
        if LM_EVAL_SAMPLES.match(path.name):
            out += sorted(path.parent.glob("results_*.json"))
        elif path.name.startswith("details_") and path.suffix.lower() == ".parquet":
            out += sorted(path.parent.glob("results_*.json")) + sorted(path.parent.parent.glob("results_*.json"))
        elif path.is_dir():
            out += [path / "run_spec.json", path / "per_instance_stats.json"]
        elif path.name == "per_instance_stats.json":
            out.append(path.parent / "run_spec.json")
    return out


def _is_inspect_json(path: Path) -> bool:
    try:
        data = load_json_file(path)
    except DataError:
        return False
    return isinstance(data, dict) and {"eval", "samples"} <= set(data)


# --- lm-evaluation-harness -----------------------------------------------------------------------
