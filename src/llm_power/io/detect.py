"""Which reader for which file: format detection, folder expansion and the companion files
that readers open (so that outputs never land on them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .._core.errors import DataError
from .formats import by_order
from .formats.lm_eval import LM_EVAL_SAMPLES
from .plain import plain_suffix
from .records import no_files
from .safe import is_regular, parse_once

__all__ = ["LM_EVAL_SAMPLES", "companion_files", "detect_format", "expand_paths"]


def _other_reader(folder: Path) -> str:
    """For a folder no per-item reader takes: the command that reads what it holds, if one does."""
    from .aggregate import aggregate_files
    from .battles import battle_files

    if battle_files(folder):
        return ("it holds pairwise judgements (battles: OpenCompass subjective results, MT-Bench or AlpacaEval "
                "annotations), which llm-power arena (or judges) reads")
    if aggregate_files(folder):
        return ("it holds aggregate scores (lm-eval results_*.json, Every Eval Ever records or Hugging Face "
                "eval results), which llm-power aggregate reads")
    return ""


@parse_once()
def detect_format(path: Path) -> str:
    """Guess the format of one file or run folder: the first format of the registry (in its
    detection order) that claims it.
    """
    for fmt in by_order():
        if fmt.claims(path):
            return fmt.name
    if path.is_dir():
        msg = "is a folder without per_instance_stats.json (give files, or a folder to search)"
        raise DataError(msg, file=str(path))
    suffix = path.suffix.lower()
    if suffix == ".json" or (suffix == ".gz" and plain_suffix(path) == ".json"):
        msg = (
            "unknown JSON layout (not an inspect_ai log, a promptfoo results file nor an array of records; lm-eval "
            "results_*.json and Every Eval Ever records hold no per-item scores -- give the samples files, or "
            "use llm-power aggregate)"
        )
        from .battles import is_battle_file

        if is_battle_file(path):
            msg = ("holds pairwise judgements (battles), not per-item scores of each model: "
                   "llm-power arena (or judges) reads it")
        raise DataError(msg, file=str(path))
    known = ", ".join(fmt.summary for fmt in by_order())
    msg = f"unknown format {suffix or '(no extension)'!r}; known: {known}"
    raise DataError(msg, file=str(path))


@parse_once()
def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files and folders -> the result files inside (sorted, deterministic): every format of the
    registry says which files of a folder are its own.
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if any(fmt.remote and fmt.claims(path) for fmt in by_order()):  # mlflow://RUN_ID
            out.append(path)
            continue
        if not path.exists():
            msg = "file or folder not found"
            raise DataError(msg, file=str(path))
        if is_regular(path) or (path / "per_instance_stats.json").exists():  # a FIFO or a device: an error
            out.append(path)
            continue
        found = sorted({hit for fmt in by_order() for hit in fmt.finds(path)})
        if not found:
            known = ", ".join(fmt.summary for fmt in by_order() if fmt.finds is not no_files)
            other = _other_reader(path)
            msg = (f"no per-item result files in this folder: {other} (per-item formats: {known})" if other
                   else f"no result files found in this folder ({known})")
            raise DataError(msg, file=str(path))
        out.extend(p for _, p in found)
    return out


def companion_files(paths: Iterable[Path]) -> list[Path]:
    """Files the readers open besides the result files themselves (model names, run specs): an
    output must never land on one of them.
    """
    return [extra for path in paths for fmt in by_order() for extra in fmt.companions(path)]
