"""Ray engine: long tables read by Ray Data, keyed by item shard, grouped and aligned on the workers,
give the local engine's report byte for byte, the same matrix, the same notes and the same one-line
errors. One local Ray (two CPUs, no dashboard, no usage statistics) serves the module; the CLI and
``read_matrix`` reuse it, and it is shut down at the end.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.xdist_group("ray")  # one session per test run (make test: --dist loadgroup)

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from llm_power._core.errors import DataError  # noqa: E402
from llm_power.engines.tables import read_matrix  # noqa: E402

from .tables import (  # noqa: E402
    ERROR_CASES,
    check_error_case,
    generated_long,
    local_matrix,
    report,
    same_matrix,
)


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory):
    """One local Ray for the module (its session files under /tmp/ray, none in the repository)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():  # pragma: no cover - another module's Ray
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    yield
    ray.shutdown()
    mp.undo()


@pytest.mark.slow
def test_mmlu_pro_report_is_the_local_report_byte_for_byte(mmlu, tmp_path, small_shards):
    """312,832 rows in 32 item shards aligned on the Ray workers: the JSON report (IID, cluster by
    subject, every adjacent pair) equals the local engine's, byte for byte; the CLI used the running Ray."""
    extra = ["--cluster", "category", "--seed", "3"]
    local = report([str(mmlu)], "local", tmp_path / "local.json", *extra)
    assert report([str(mmlu)], "ray", tmp_path / "ray.json", *extra) == local
    assert ray.is_initialized()


@pytest.mark.slow
def test_generated_1000_model_board_in_three_files(tmp_path, small_shards):
    """1,000 models x 300 items over three Parquet files, every pair of the top 12 and the anytime
    regime: the same report (the files named, or their folder)."""
    board = generated_long(tmp_path, models=1000, items=300)
    extra = ["--cluster", "subject", "--top", "12", "--pairs", "all", "--anytime"]
    files = sorted(str(p) for p in board.iterdir())
    local = report(files, "local", tmp_path / "l.json", *extra)
    assert report(files, "ray", tmp_path / "r.json", *extra) == local
    folder = json.loads(report([str(board)], "ray", tmp_path / "f.json", *extra))
    assert folder.pop("source") == str(board)
    assert folder == {k: v for k, v in json.loads(local).items() if k != "source"}


def test_matrix_equals_align_results_csv_jsonl_parquet_mixed(tmp_path, monkeypatch):
    """Files of three formats, numeric and text scores, ids that look like numbers ("007"), models
    lacking items (intersect), cut into several item shards: the matrix, its note and dropped counts
    equal the local path's; the running Ray is reused and left running."""
    monkeypatch.setenv("LLM_POWER_SHARD_ROWS", "700")
    rng = np.random.default_rng(5)
    rows = [(f"m{m}", f"{i:03d}" if i % 5 else f"q{i}", float(rng.integers(0, 3)) / 2, f"c{i % 4}")
            for m in range(4) for i in range(900) if not (m == 2 and i % 11 == 0)]
    frame = pd.DataFrame(rows, columns=["model", "item", "score", "topic"])
    thirds = np.array_split(np.arange(len(frame)), 3)
    frame.iloc[thirds[0]].to_parquet(tmp_path / "a.parquet")
    frame.iloc[thirds[1]].to_csv(tmp_path / "b.csv", index=False)
    frame.iloc[thirds[2]].to_json(tmp_path / "c.jsonl", orient="records", lines=True)
    paths = [tmp_path / "a.parquet", tmp_path / "b.csv", tmp_path / "c.jsonl"]
    got = read_matrix(paths, engine="ray", cluster="topic", on_missing="intersect")
    same_matrix(got, local_matrix(paths, cluster="topic", on_missing="intersect"))
    assert "intersection of items" in got.note and got.dropped["m2"] == 0 and got.dropped["m0"] == 82
    assert "007" in got.items and ray.is_initialized()


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_are_the_local_errors(tmp_path, case):
    """Each hostile table gives the local reader's one-line error (file, record and field where it has
    them), whether the worker's alignment or the driver's check of the values found it."""
    check_error_case(tmp_path, case, "ray")


def test_not_a_long_table_and_a_hostile_column_name(tmp_path):
    wide = tmp_path / "wide.csv"
    pd.DataFrame({"item": ["q1", "q2"], "a": [1, 0], "b": [0, 1]}).to_csv(wide, index=False)
    with pytest.raises(DataError, match="not a long table"):
        read_matrix([wide], engine="ray")
    name = 'acc"; DROP TABLE x; --'
    frame = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q1", "q2", "q1", "q2"], name: [1, 0, 0, 1]})
    frame.to_parquet(tmp_path / "t.parquet")
    got = read_matrix([tmp_path / "t.parquet"], engine="ray", metric=name)
    assert got.scores.tolist() == [[1.0, 0.0], [0.0, 1.0]]
