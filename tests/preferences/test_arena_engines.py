"""Bradley-Terry on battle files reduced by DuckDB (``llm_power.engines.bradley_terry_table``,
``llm-power arena --engine duckdb``).

Oracle: the in-memory ``bradley_terry`` on the battles the local reader (``read_battles``) reads from
the same files -- its own encoding, cell count and per-battle cluster meat. The bundled MT-Bench swap
battles and the real battles of ../shared/data/preferences (llmfao: crowd and LLM judges; PandaLM's
test set), with and without prompt clusters, ties as half a win and Davidson's; many shards equal one.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from llm_power import DataError, bradley_terry
from llm_power.engines import bradley_terry_table
from llm_power.io import read_battles

pytest.importorskip("duckdb")

with resources.as_file(resources.files("llm_power") / "data" / "mtbench_swap_battles.csv.gz") as _path:
    MTBENCH = _path


def same(a, b, *, rel=1e-10):
    """Ratings, covariance and counts of two fits equal (to ``rel`` of the covariance's scale)."""
    assert a.models == b.models
    assert a.n_battles == b.n_battles and a.n_clusters == b.n_clusters and a.df == b.df
    np.testing.assert_allclose(a.ratings, b.ratings, rtol=rel, atol=rel)
    cov_a, cov_b = np.asarray(a.covariance), np.asarray(b.covariance)
    np.testing.assert_allclose(cov_a, cov_b, rtol=0, atol=rel * np.abs(cov_a).max())
    assert (a.tie_parameter is None) == (b.tie_parameter is None)
    if a.tie_parameter is not None:
        assert a.tie_parameter == pytest.approx(b.tie_parameter, rel=rel)


@pytest.mark.parametrize("ties", ["half", "davidson"])
@pytest.mark.parametrize("cluster", [None, "question_id"])
def test_mtbench_through_duckdb_is_the_in_memory_fit(cluster, ties):
    frame = read_battles([MTBENCH])
    same(bradley_terry_table(MTBENCH, cluster=cluster, ties=ties), bradley_terry(frame, cluster=cluster, ties=ties))


@pytest.mark.filterwarnings("ignore::llm_power.DegenerateDataWarning", "ignore::llm_power.FewClustersWarning")
@pytest.mark.parametrize("name", ["llmfao", "pandalm_testset", "mtbench_ko_en_swap"])
def test_real_arena_battles_through_duckdb(shared_data, name):
    path = shared_data / "preferences" / name / "battles.csv.gz"
    frame = read_battles([path])
    for cluster in (None, "question_id"):
        same(bradley_terry_table(path, cluster=cluster), bradley_terry(frame, cluster=cluster))
    same(bradley_terry_table(path, cluster="question", ties="davidson"),  # "question" finds question_id
         bradley_terry(frame, cluster="question_id", ties="davidson"))


def test_many_shards_equal_one(tmp_path, monkeypatch):
    frame = read_battles([MTBENCH])
    path = tmp_path / "battles.parquet"
    frame[["model_a", "model_b", "winner", "question_id"]].to_parquet(path)
    one = bradley_terry_table(path, cluster="question_id", shard_rows=10**9)
    many = bradley_terry_table(path, cluster="question_id", shard_rows=97)  # 100+ shards
    same(many, one, rel=1e-12)
    monkeypatch.setenv("LLM_POWER_SHARD_ROWS", "1000")
    same(bradley_terry_table(path, cluster="question_id"), one, rel=1e-12)
    same(one, bradley_terry(frame, cluster="question_id"))


def test_formats_and_winner_spellings_read_as_the_local_reader_reads_them(tmp_path):
    rng = np.random.default_rng(3)
    n = 600
    names = np.array(["alpha", " beta", "gamma ", "007"])
    a = rng.integers(0, 4, n)
    b = (a + 1 + rng.integers(0, 3, n)) % 4
    spell = np.array(["model_a", "B", "Tie", "tie (bothbad)", "a", "model_2"])[rng.integers(0, 6, n)]
    by_name = rng.random(n) < 0.3
    winner = np.where(by_name, names[np.where(rng.random(n) < 0.5, a, b)], spell)
    frame = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                          "prompt": rng.integers(0, 60, n).astype(str)})
    frame.iloc[:200].to_csv(tmp_path / "one.csv", index=False)
    frame.iloc[200:400].to_json(tmp_path / "two.jsonl", orient="records", lines=True)
    frame.iloc[400:].to_parquet(tmp_path / "three.parquet")
    files = [tmp_path / "one.csv", tmp_path / "two.jsonl", tmp_path / "three.parquet"]
    local = read_battles(files)
    for cluster in (None, "prompt"):
        same(bradley_terry_table(files, cluster=cluster, shard_rows=50), bradley_terry(local, cluster=cluster))


def test_a_row_the_local_reader_refuses_is_its_error(tmp_path):
    frame = pd.DataFrame({"model_a": ['o"brien', "x", "y"], "model_b": ["x", "y", 'o"brien'],
                          "winner": ["model_a", None, "tie"], "prompt": ["p1", "p2", "p3"]})
    path = tmp_path / "battles.parquet"
    frame.to_parquet(path)
    with pytest.raises(DataError) as local:
        read_battles([path])
    with pytest.raises(DataError) as duck:
        bradley_terry_table(path)
    assert str(duck.value) == str(local.value)
    assert "\n" not in str(duck.value) and "winner" in str(duck.value)
    frame["winner"] = ["model_a", "model_a", "model_a"]  # a quote in a model name is a name like any other
    frame.to_parquet(path)
    same(bradley_terry_table(path), bradley_terry(read_battles([path])))
    frame["prompt"] = ["p1", None, "p3"]
    frame.to_parquet(path)
    with pytest.raises(DataError, match="no cluster label") as missing:
        bradley_terry_table(path, cluster="prompt")
    assert str(path) in str(missing.value) and "\n" not in str(missing.value)
    with pytest.raises(DataError, match="no column 'nope'"):
        bradley_terry_table(path, cluster="nope")
    with pytest.raises(ValueError, match="`engine` must be one of"):
        bradley_terry_table(path, engine="spark")
    with pytest.raises(ValueError, match="`shard_rows`"):
        bradley_terry_table(path, shard_rows=0)


def test_a_hostile_column_name_is_a_name(tmp_path):
    frame = read_battles([MTBENCH])
    path = tmp_path / "battles.parquet"
    frame[["model_a", "model_b", "winner"]].assign(**{'q"id; DROP': frame["question_id"]}).to_parquet(path)
    same(bradley_terry_table(path, cluster='q"id; DROP'), bradley_terry(frame, cluster="question_id"))


def _cli(tmp_path: Path, *args: str) -> bytes:
    from llm_power.cli.main import main

    out = tmp_path / f"{len(list(tmp_path.iterdir()))}.json"
    assert main(["arena", *args, "--json", str(out)]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("extra", [["--cluster", "question_id"], ["--ties", "davidson", "--pairs", "all"]])
def test_cli_report_through_duckdb_is_the_local_report_byte_for_byte(tmp_path, capsys, extra):
    local = _cli(tmp_path, str(MTBENCH), *extra)
    duck = _cli(tmp_path, str(MTBENCH), *extra, "--engine", "duckdb")
    capsys.readouterr()
    assert duck == local
    assert json.loads(duck)["n_battles"] == 14363


@pytest.mark.parametrize(("extra", "message"), [
    (["--engine", "spark"], "invalid choice: 'spark' (choose from 'local', 'duckdb')"),
    (["--engine", "duckdb", "--weights", "w"], "--weights is not available with --engine duckdb"),
    (["--engine", "duckdb", "--monitor", "100"], "--monitor is not available with --engine duckdb"),
])
def test_cli_engine_options_it_does_not_take_are_usage_errors(capsys, extra, message):
    from llm_power.cli.main import main

    try:
        code = main(["arena", str(MTBENCH), *extra])
    except SystemExit as exc:  # argparse's own refusal of a choice
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err
