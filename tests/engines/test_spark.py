"""Spark engine: long tables read by a (local) Spark session, partitioned by item and aligned shard by
shard on the executors, give the local engine's report byte for byte, the same matrix, the same notes and
the same one-line errors; catalog tables are inputs too.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.xdist_group("spark")  # one session per test run (make test: --dist loadgroup)

pytest.importorskip("pyspark")

from llm_power._core.errors import DataError  # noqa: E402
from llm_power.engines.contract import Block, block_rows, blocks_from_rows, shard_rows  # noqa: E402
from llm_power.engines.contract import LongColumns  # noqa: E402
from llm_power.engines.tables import read_matrix  # noqa: E402

from .tables import (  # noqa: E402
    ERROR_CASES,
    check_error_case,
    generated_long,
    local_matrix,
    report,
    same_matrix,
)

MASTER = "local[2]"


@pytest.fixture(scope="module")
def spark():
    """One local Spark session for the module (the engine and the CLI reuse it: same master)."""
    from llm_power.engines.spark import start_session

    session, started = start_session(MASTER)
    yield session
    if started:
        session.stop()


def test_block_rows_round_trip_and_errors():
    """Blocks as plain rows (no Arrow metadata): shards mixed and shuffled come back by shard, an empty
    shard is its header alone, and a shard's DataError comes back as that error."""
    import pyarrow as pa

    a = Block(x=np.array([[1.0, 0.5], [0.0, 1.0]]), items=["q1", "q2"], labels=["s", "t"],
              summary={"models": ["a", "b"], "n": 2})
    empty = Block(x=np.zeros((0, 2)), items=[], labels=[], summary={"models": ["a", "b"], "n": 0})
    table = pa.concat_tables([block_rows(empty, 4), block_rows(a, 1)]).take([2, 0, 3, 1])
    first, second = blocks_from_rows(table)
    assert (first.items, first.labels, first.x.tolist(), first.summary) == (a.items, a.labels, a.x.tolist(), a.summary)
    assert second.items == [] and second.labels == [] and second.x.shape == (0, 2)
    rows = pd.DataFrame({"model": ["a", "a"], "item": ["q1", "q1"], "score": [1, 0], "source": ["f.csv"] * 2})
    failed = shard_rows(rows, ["a"], shard=0, columns=LongColumns("model", "item", "score"), local_error=None)
    with pytest.raises(DataError, match=r"^model 'a' has item 'q1' more than once \(in f.csv\)"):
        blocks_from_rows(pa.concat_tables([table, failed]))


@pytest.mark.slow  # about 25 s alone on 2 cores (minutes when the machine is shared)
def test_mmlu_pro_report_is_the_local_report_byte_for_byte(spark, mmlu, tmp_path, small_shards):
    """312,832 rows in 32 item shards aligned on the executors: the CLI's JSON report (--engine spark
    --master local[2], the module's session) equals the local engine's, byte for byte."""
    extra = ["--cluster", "category", "--seed", "3"]
    local = report([str(mmlu)], "local", tmp_path / "local.json", *extra)
    assert report([str(mmlu)], "spark", tmp_path / "spark.json", "--master", MASTER, *extra) == local
    assert not spark.sparkContext._jsc.sc().isStopped()  # reused, not started and stopped


@pytest.mark.slow  # a minute on 2 cores: a Spark job per input (the DuckDB module runs this board in the fast tier)
def test_generated_1000_model_board_in_three_files(spark, tmp_path, small_shards):
    board = generated_long(tmp_path, models=1000, items=300)
    extra = ["--cluster", "subject", "--top", "12", "--pairs", "all", "--anytime"]
    files = sorted(str(p) for p in board.iterdir())
    local = report(files, "local", tmp_path / "l.json", *extra)
    assert report(files, "spark", tmp_path / "s.json", *extra) == local
    folder = json.loads(report([str(board)], "spark", tmp_path / "f.json", *extra))
    assert folder.pop("source") == str(board)
    assert folder == {k: v for k, v in json.loads(local).items() if k != "source"}


def test_a_catalog_table_is_an_input(spark, tmp_path):
    board = generated_long(tmp_path, models=30, items=200, files=2)
    spark.read.parquet(str(board)).createOrReplaceTempView("lp_board")
    same_matrix(read_matrix(["lp_board"], engine="spark", cluster="subject"),
                 read_matrix([board], engine="spark", cluster="subject"))
    same_matrix(read_matrix(["lp_board"], engine="spark", cluster="subject"),
                 local_matrix(sorted(board.iterdir()), cluster="subject"))


def test_matrix_equals_align_results_csv_jsonl_parquet_mixed(spark, tmp_path, small_shards, monkeypatch):
    """Three formats, numeric and text scores (Parquet doubles, CSV text), models lacking items."""
    monkeypatch.setenv("LLM_POWER_SHARD_ROWS", "1000")
    rng = np.random.default_rng(5)
    rows = [(f"m{m}", f"q{i}", float(rng.integers(0, 3)) / 2 + 1e-17 * i, f"c{i % 4}") for m in range(4)
            for i in range(900) if not (m == 2 and i % 11 == 0)]
    frame = pd.DataFrame(rows, columns=["model", "item", "score", "topic"])
    frame.loc[::7, "score"] = 0.1 + 0.2  # a double Spark would print as text differently from Python
    thirds = np.array_split(np.arange(len(frame)), 3)
    frame.iloc[thirds[0]].to_parquet(tmp_path / "a.parquet")
    frame.iloc[thirds[1]].to_csv(tmp_path / "b.csv", index=False)
    frame.iloc[thirds[2]].to_json(tmp_path / "c.jsonl", orient="records", lines=True, double_precision=15)
    paths = [tmp_path / "a.parquet", tmp_path / "b.csv", tmp_path / "c.jsonl"]
    got = read_matrix(paths, engine="spark", cluster="topic", on_missing="intersect")
    same_matrix(got, local_matrix(paths, cluster="topic", on_missing="intersect"))
    assert "intersection of items" in got.note and got.dropped["m2"] == 0 and got.dropped["m0"] == 82




@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_are_the_local_errors(spark, tmp_path, case):
    """Each hostile table gives the local reader's one-line error (file, record and field where it has them)."""
    check_error_case(tmp_path, case, "spark")


def test_a_delta_folder_needs_a_delta_session(spark, tmp_path):
    folder = tmp_path / "results"
    (folder / "_delta_log").mkdir(parents=True)
    pd.DataFrame({"model": ["a", "b"], "item": ["q1", "q1"], "score": [1, 0]}).to_parquet(folder / "part-0.parquet")
    with pytest.raises(DataError, match=r"results: is a Delta table: .*delta-spark configured") as info:
        read_matrix([folder], engine="spark")
    assert "\n" not in str(info.value)


def test_a_hostile_column_name_is_a_name(spark, tmp_path):
    name = "acc`) AS x, `a.b"
    frame = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q1", "q2", "q1", "q2"], name: [1, 0, 0, 1]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    assert read_matrix([path], engine="spark", metric=name).scores.tolist() == [[1.0, 0.0], [0.0, 1.0]]
