"""Aggregate results -- per task, the metric, its standard error and the number of items: what
``llm-power aggregate`` reads, through the aggregate readers of the registry (each format module's
``AGGREGATES``: lm-eval ``results_*.json``, Every Eval Ever records, Hugging Face eval results,
leaderboard tables). The readers themselves are in :mod:`llm_power.io.scores`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._core.errors import DataError
from .safe import is_regular, parse_once
from .scores import (
    AggregateScore,
    eee_aggregate_files,
    hf_eval_results_files,
    is_eee_aggregate_file,
    is_eee_record,
    is_hf_eval_results,
    is_leaderboard_table,
    read_eee_aggregates,
    read_hf_eval_results,
    read_leaderboard_table,
    read_lm_eval_aggregates,
)

__all__ = ["AggregateScore", "aggregate_files", "eee_aggregate_files", "hf_eval_results_files",
           "is_eee_aggregate_file", "is_eee_record", "is_hf_eval_results", "is_leaderboard_table", "read_aggregates",
           "read_eee_aggregates", "read_hf_eval_results", "read_leaderboard_table", "read_lm_eval_aggregates"]


def aggregate_files(folder: Path) -> list[Path]:
    """The aggregate files in a folder: what every aggregate reader of the registry finds there
    (what :func:`read_aggregates` would read).
    """
    from .formats import aggregates_by_order

    return [p for reader in aggregates_by_order() for p in reader.finds(folder)]


@parse_once()
def read_aggregates(paths: str | Path | Sequence[str | Path], *, metric: str | None = None,
                    filter: str | None = None,  # noqa: A002 - lm-eval's word
                    items: int | dict[str, int] | None = None) -> list[AggregateScore]:
    """Aggregate scores of lm-eval ``results_*.json``, Every Eval Ever records and Hugging Face
    eval results, in any mix of files and folders (each file by its content; ``filter`` applies to
    lm-eval's, ``items`` -- the benchmark's size -- to Hugging Face's and to Every Eval Ever results
    that do not say it).
    """
    from .formats import aggregates_by_order
    from .records import AggregateOptions

    if isinstance(paths, (str, Path)):
        paths = [paths]
    readers = aggregates_by_order()
    by_reader: dict[str, list[Path]] = {r.name: [] for r in readers}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for reader in readers:
                by_reader[reader.name] += reader.finds(path)
            continue
        if not path.exists():
            msg = "file or folder not found"
            raise DataError(msg, file=str(path))
        claimed = next((r for r in readers if is_regular(path) and r.claims(path)), None)
        if claimed is None:
            known = "; ".join(r.summary for r in readers)
            msg = f"not an aggregate results file (known: {known})"
            raise DataError(msg, file=str(path))
        by_reader[claimed.name].append(path)
    options = AggregateOptions(metric=metric, filter=filter, items=items)
    out: list[AggregateScore] = []
    for reader in readers:
        if by_reader[reader.name]:
            out += reader.read(list(dict.fromkeys(by_reader[reader.name])), options)
    if not out:
        known = "; ".join(r.summary for r in readers)
        msg = f"no aggregate results found ({known})"
        raise DataError(msg, file=", ".join(map(str, paths)))
    return out
