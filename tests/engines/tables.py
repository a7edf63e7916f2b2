"""Long tables for the table engines' tests (DuckDB, Spark, Ray): the bundled MMLU-Pro results and a
generated 1,000-model board as long Parquet, and the local report every engine must reproduce.

The oracle of every engine test is the local engine (``read_results`` + ``align_results`` +
``diagnose`` in this process), which shares none of the engines' code: the item shards, the hash
partition, the per-shard alignment and the assembly are on the engines' side only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from llm_power.cli.main import main


def mmlu_long(folder: Path) -> Path:
    """The bundled MMLU-Pro correctness (12,032 items x 26 models) as one long Parquet file with the
    subject as a column (312,832 rows), models in a shuffled row order.
    """
    from llm_power.io.demo import mmlu_pro_path

    wide = pd.read_csv(mmlu_pro_path())
    long = wide.melt(id_vars=["question_id", "category"], var_name="model", value_name="correct")
    long = long.sample(frac=1.0, random_state=7).reset_index(drop=True)
    path = folder / "mmlu_pro_long.parquet"
    long[["model", "question_id", "correct", "category"]].to_parquet(path, row_group_size=50_000)
    return path


def generated_long(folder: Path, *, models: int = 1000, items: int = 300, seed: int = 0, files: int = 3,
                   clusters: int = 12) -> Path:
    """A 1,000-model board (abilities spread over 30 points, 0/1 scores, ``subject`` clusters) as long
    Parquet split over ``files`` files of a folder (rows of a model in several files, items in any order).
    """
    rng = np.random.default_rng(seed)
    ability = np.linspace(0.35, 0.65, models)
    difficulty = rng.normal(0.0, 0.15, items)
    x = (rng.random((items, models)) < np.clip(ability[None, :] - difficulty[:, None], 0.02, 0.98)).astype(np.int8)
    names = np.array([f"model-{k:04d}" for k in range(models)])
    ids = np.array([f"item-{i}" for i in range(items)])
    subject = np.array([f"s{i % clusters}" for i in range(items)])
    frame = pd.DataFrame({"model": np.repeat(names, items), "item": np.tile(ids, models),
                          "score": x.T.reshape(-1), "subject": np.tile(subject, models)})
    frame = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    out = folder / "board"
    out.mkdir(parents=True, exist_ok=True)
    for k, part in enumerate(np.array_split(np.arange(len(frame)), files)):
        frame.iloc[part].to_parquet(out / f"part-{k}.parquet")
    return out


def report(paths: list[str], engine: str, out: Path, *extra: str) -> bytes:
    """The JSON report of ``llm-power diagnose`` through ``engine`` (bytes of the file it writes)."""
    assert main(["diagnose", *paths, "--json", str(out), "--quiet", "--engine", engine, *extra]) == 0
    data = out.read_bytes()
    json.loads(data)
    return data
