"""The bundled demo data: MMLU-Pro per-question correctness of 26 models (see data/README.md)."""

from __future__ import annotations

import csv
import gzip
from importlib import resources

import numpy as np

__all__ = ["load_mmlu_pro"]


def load_mmlu_pro() -> tuple[list[str], list[str], np.ndarray, list[str]]:
    """Return (question ids, model names, (12032, 26) 0/1 matrix, category of each question).

    Examples
    --------
    >>> from llm_power.io.demo import load_mmlu_pro
    >>> items, models, x, category = load_mmlu_pro()
    >>> x.shape, len(set(category))
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
    return items, header[2:], np.asarray(rows, dtype=np.int8).astype(float), category
