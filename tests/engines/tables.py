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


def local_matrix(paths, **kwargs):
    """The local path's matrix: ``read_results`` + ``align_results`` (the oracle of every engine)."""
    from llm_power.io import align_results, read_results

    on_missing = kwargs.pop("on_missing", "error")
    return align_results(read_results(paths, **kwargs), on_missing=on_missing)


def same_matrix(a, b) -> None:
    """The same items, models, labels, note, dropped counts and scores bit for bit."""
    assert a.items == b.items and a.models == b.models and a.clusters == b.clusters
    assert a.note == b.note and a.dropped == b.dropped
    assert a.scores.dtype == b.scores.dtype and np.array_equal(a.scores, b.scores)


#: the hostile tables every engine must refuse with the local reader's message
ERROR_CASES = ("duplicate", "lacking", "empty-id", "bad-score", "no-label", "two-labels")


def error_table(folder: Path, case: str) -> Path:
    """A 3-model CSV with one defect (``case`` of :data:`ERROR_CASES`) and a ``topic`` label column."""
    rows = [{"model": f"m{m}", "item": f"q{i}", "score": (i + m) % 2, "topic": f"t{i % 3}"}
            for m in range(3) for i in range(50)]
    if case == "duplicate":
        rows.append({"model": "m1", "item": "q7", "score": 1, "topic": "t1"})
    elif case == "lacking":
        rows = [r for r in rows if not (r["model"] == "m2" and r["item"] in ("q3", "q30"))]
    elif case == "empty-id":
        rows[17]["item"] = " "
    elif case == "bad-score":
        rows[20]["score"] = "n/a"
    elif case == "no-label":
        rows[33]["topic"] = ""
    else:
        rows[40]["topic"] = "other"
    path = folder / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def engine_error(paths, engine: str, **kwargs) -> str:
    """The DataError message of ``engine`` ("local": the local path) on ``paths``."""
    import pytest

    from llm_power._core.errors import DataError
    from llm_power.engines.tables import read_matrix

    with pytest.raises(DataError) as info:
        if engine == "local":
            local_matrix(paths, **kwargs)
        else:
            read_matrix(paths, engine=engine, **kwargs)
    return str(info.value)


def check_error_case(folder: Path, case: str, engine: str) -> None:
    """``engine`` refuses the hostile table of ``case`` with the local reader's one-line message."""
    path = error_table(folder, case)
    local = engine_error([path], "local", cluster="topic")
    got = engine_error([path], engine, cluster="topic")
    assert got == local and "\n" not in got
    assert str(path) in local or case in ("lacking", "two-labels", "no-label")
