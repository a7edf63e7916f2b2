"""The bundled demo data: MMLU-Pro per-question correctness of 26 models (see data/README.md)."""

from __future__ import annotations

import csv
import gzip
from importlib import resources

import numpy as np

from ..matrix import ScoreMatrix

__all__ = ["load_mmlu_pro"]


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
