"""Hugging Face Hub eval results: ``.eval_results/*.yaml`` and model cards' ``model-index`` -- a score
per benchmark and nothing else, read by ``aggregate`` (``--items`` gives the benchmark's size).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import AggregateOptions, AggregateReader

__all__ = ["AGGREGATES"]


def _read(files: list[Path], options: AggregateOptions) -> list[Any]:
    from ..scores import read_hf_eval_results

    return [s for s in read_hf_eval_results(files, items=options.items)
            if options.metric is None or s.metric == options.metric]


def _claims(path: Path) -> bool:
    from ..scores import is_hf_eval_results

    return is_hf_eval_results(path)


def _finds(folder: Path) -> list[Path]:
    from ..scores import hf_eval_results_files

    return hf_eval_results_files(folder)


AGGREGATES = (AggregateReader("hf_eval_results", "Hugging Face .eval_results/*.yaml and model cards' model-index",
                              _read, _claims, order=30, finds=_finds),)
