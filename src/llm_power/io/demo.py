"""The bundled demo data (see data/README.md): MMLU-Pro per-question correctness of 26 models, and
repeated runs of two models on the same items (LLM stability).
"""

from __future__ import annotations

import csv
import gzip
from importlib import resources

import numpy as np

from ..matrix import RunScores, ScoreMatrix

__all__ = ["load_mmlu_pro", "load_reruns", "mmlu_pro_path", "reruns_path"]


def load_mmlu_pro() -> ScoreMatrix:
    """The bundled MMLU-Pro data as a :class:`~llm_power.matrix.ScoreMatrix`: 12,032 question ids,
    26 model names, the 0/1 matrix and each question's category as its cluster label.

    Examples
    --------
    >>> from llm_power.io.demo import load_mmlu_pro
    >>> data = load_mmlu_pro()
    >>> data.scores.shape, len(set(data.clusters))
    ((12032, 26), 14)
    """
    path = resources.files("llm_power") / "data" / "mmlu_pro_correct.csv.gz"
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        items, category, rows = [], [], []
        for row in reader:
            items.append(row[0])
            category.append(row[1])
            rows.append(row[2:])
    return ScoreMatrix(items=items, models=header[2:], scores=np.asarray(rows, dtype=np.int8).astype(float),
                       clusters=category)


def mmlu_pro_path() -> str:
    """The path of the bundled MMLU-Pro correctness table (what ``llm-power demo`` reads; its receipts
    record this file's SHA-256).
    """
    return str(resources.files("llm_power") / "data" / "mmlu_pro_correct.csv.gz")


def reruns_path() -> str:
    """The path of the bundled reruns table (``model,run,item,score,cluster``), for the readers."""
    return str(resources.files("llm_power") / "data" / "llm_stability_long.csv.gz")


def load_reruns(*, on_missing: str = "intersect") -> RunScores:
    """The bundled reruns (gpt-3.5-turbo 10 runs, gpt-4o 5 runs) as :class:`~llm_power.matrix.RunScores`:
    by default on the 500 items both models ran, with the task as each item's cluster.

    Examples
    --------
    >>> from llm_power.io.demo import load_reruns
    >>> rs = load_reruns()
    >>> rs.models, rs.n, rs.runs.tolist()
    (['gpt-3.5-turbo', 'gpt-4o'], 500, [10, 5])
    """
    from .runs import read_runs

    return read_runs(reruns_path(), run="run", cluster="cluster", on_missing=on_missing)
