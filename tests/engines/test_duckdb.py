"""DuckDB engine: long tables read out of core, partitioned by item and aligned shard by shard give the
local engine's report byte for byte, the same matrix, the same notes and the same one-line errors.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("duckdb")

from llm_power._core.errors import DataError  # noqa: E402
from llm_power.engines.tables import read_matrix  # noqa: E402

from .tables import (  # noqa: E402
    ERROR_CASES,
    check_error_case,
    engine_error,
    generated_long,
    local_matrix,
    report,
    same_matrix,
)


def test_mmlu_pro_report_is_the_local_report_byte_for_byte(mmlu, tmp_path, small_shards):
    """312,832 rows in 32 item shards: the JSON report (IID, cluster by subject, every adjacent pair)
    equals the local engine's, byte for byte."""
    extra = ["--cluster", "category", "--seed", "3"]
    local = report([str(mmlu)], "local", tmp_path / "local.json", *extra)
    duck = report([str(mmlu)], "duckdb", tmp_path / "duckdb.json", *extra)
    assert duck == local
    assert b'"n_items": 12032' in local or b"12032" in local


def test_generated_1000_model_board_in_three_files(tmp_path, small_shards):
    """1,000 models x 300 items over three Parquet files, every pair of the top 12 and the anytime
    regime: the same report."""
    board = generated_long(tmp_path, models=1000, items=300)
    extra = ["--cluster", "subject", "--top", "12", "--pairs", "all", "--anytime"]
    files = sorted(str(p) for p in board.iterdir())  # the local reader takes the files, an engine a folder too
    local = report(files, "local", tmp_path / "l.json", *extra)
    assert report(files, "duckdb", tmp_path / "d.json", *extra) == local
    folder = json.loads(report([str(board)], "duckdb", tmp_path / "f.json", *extra))
    assert folder.pop("source") == str(board)
    assert folder == {k: v for k, v in json.loads(local).items() if k != "source"}


def test_matrix_equals_align_results_csv_jsonl_parquet_mixed(tmp_path, small_shards):
    """Files of three formats, numeric and text scores, models lacking items (intersect): the matrix,
    its note and dropped counts equal the local path's."""
    rng = np.random.default_rng(5)
    rows = [(f"m{m}", f"q{i}", float(rng.integers(0, 3)) / 2, f"c{i % 4}") for m in range(4) for i in range(900)
            if not (m == 2 and i % 11 == 0)]
    frame = pd.DataFrame(rows, columns=["model", "item", "score", "topic"])
    thirds = np.array_split(np.arange(len(frame)), 3)
    frame.iloc[thirds[0]].to_parquet(tmp_path / "a.parquet")
    frame.iloc[thirds[1]].to_csv(tmp_path / "b.csv", index=False)
    frame.iloc[thirds[2]].to_json(tmp_path / "c.jsonl", orient="records", lines=True)
    paths = [tmp_path / "a.parquet", tmp_path / "b.csv", tmp_path / "c.jsonl"]
    got = read_matrix(paths, engine="duckdb", cluster="topic", on_missing="intersect")
    same_matrix(got, local_matrix(paths, cluster="topic", on_missing="intersect"))
    assert "intersection of items" in got.note and got.dropped["m2"] == 0 and got.dropped["m0"] == 82


def test_csv_ids_stay_text_as_the_local_reader_reads_them(tmp_path):
    """ "1.0" and "1" are two items (a type sniffer would make both the number 1), and a score "1.50" is
    1.5, in a CSV read by DuckDB as by the local reader."""
    path = tmp_path / "ids.csv"
    path.write_text("model,item,score\na,1.0,1\na,1,0\nb,1.0,0\nb,1,1.50\na,2.5,1\nb,2.5,1\n")
    got = read_matrix([path], engine="duckdb")
    same_matrix(got, local_matrix([path]))
    assert len(got.items) == 3 and "1.0" in got.items and "1" in got.items


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_are_the_local_errors(tmp_path, small_shards, case):
    """Each hostile table gives the local reader's one-line error (file, record and field where it has them)."""
    check_error_case(tmp_path, case, "duckdb")


def test_not_a_long_table_names_the_engines_that_read_it(tmp_path):
    wide = tmp_path / "wide.csv"
    pd.DataFrame({"item": ["q1", "q2"], "a": [1, 0], "b": [0, 1]}).to_csv(wide, index=False)
    with pytest.raises(DataError, match="not a long table"):
        read_matrix([wide], engine="duckdb")
    (tmp_path / "samples_x_2024.jsonl").write_text('{"doc_id": 0, "acc": 1, "resps": []}\n')


def test_a_hostile_column_name_is_quoted(tmp_path):
    """A score column whose name holds a quote and SQL is read as a name, not run."""
    name = 'acc"; DROP TABLE x; --'
    frame = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q1", "q2", "q1", "q2"], name: [1, 0, 0, 1]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    got = read_matrix([path], engine="duckdb", metric=name)
    assert got.scores.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_the_engine_writes_nothing_beside_its_inputs(tmp_path, small_shards):
    board = generated_long(tmp_path, models=20, items=800, files=2)
    before = sorted(p.name for p in board.iterdir())
    read_matrix([board], engine="duckdb", cluster="subject")
    assert sorted(p.name for p in board.iterdir()) == before


@pytest.mark.parametrize("json_text", [False, True], ids=["structs", "json-text"])
def test_every_eval_ever_datastore_views(shared_data, tmp_path, json_text):
    """The datastore's Parquet view of the real EEE records (nested fields as structs or JSON text,
    epochs averaged): DuckDB's matrix is the local reader's, and its report the local report."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = shared_data / "formats" / "every_eval_ever" / "converted_v0.3.0"

    def no_empty(value):  # Parquet cannot store a struct without fields: an empty object becomes null
        if isinstance(value, dict):
            return {k: no_empty(v) for k, v in value.items()} or None
        return [no_empty(v) for v in value] if isinstance(value, list) else value

    lines = [no_empty(json.loads(line)) for p in sorted(src.glob("arc_easy_*_samples.jsonl"))
             for line in p.read_text().splitlines() if line.strip()]
    assert len({r["model_id"] for r in lines}) == 2
    if json_text:
        lines = [{k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()} for r in lines]
    view = tmp_path / "viewer_parquets" / "ai2_arc" / "dataset_samples.parquet"
    view.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(lines), view)
    got = read_matrix([view], engine="duckdb", on_missing="intersect")
    same_matrix(got, local_matrix([view], on_missing="intersect"))
    assert got.n > 0 and len(got.models) == 2
    extra = ["--on-missing", "intersect"]
    assert report([str(view)], "duckdb", tmp_path / "d.json", *extra) == report(
        [str(view)], "local", tmp_path / "l.json", *extra)


def test_every_eval_ever_epochs_labels_metric_and_a_sample_twice(shared_data, tmp_path):
    """Two epochs per sample (scores averaged, 0.5 where they differ), a metadata label as the cluster,
    ``metric="is_correct"`` (booleans), and a sample twice in one epoch: DuckDB as the local reader."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = shared_data / "formats" / "every_eval_ever" / "converted_v0.3.0"
    base = [json.loads(line) for p in sorted(src.glob("arc_easy_*_samples.jsonl"))
            for line in p.read_text().splitlines() if line.strip()]
    lines = []
    for k, rec in enumerate(base):
        for epoch in ("1", "2"):
            r = json.loads(json.dumps(rec))
            r["metadata"] = {"epoch": epoch, "grade": f"g{int(r['sample_id']) % 2}"}
            if epoch == "2" and k % 2:
                r["evaluation"]["score"] = 1.0 - r["evaluation"]["score"]
                r["evaluation"]["is_correct"] = not r["evaluation"]["is_correct"]
            r["answer_attribution"] = None
            lines.append(r)
    view = tmp_path / "a" / "dataset_samples.parquet"
    view.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(lines), view)
    for kwargs in ({"cluster": "grade"}, {"metric": "is_correct"}):
        got = read_matrix([view], engine="duckdb", on_missing="intersect", **kwargs)
        same_matrix(got, local_matrix([view], on_missing="intersect", **kwargs))
        assert 0.5 in got.scores
    twice = tmp_path / "b" / "dataset_samples.parquet"
    twice.parent.mkdir()
    pq.write_table(pa.Table.from_pylist([*lines, lines[3]]), twice)
    local = engine_error([twice], "local")
    assert "appears twice" in local and engine_error([twice], "duckdb") == local


def test_a_url_is_read_through_fsspec(tmp_path):
    """A folder URL (fsspec's in-memory filesystem, the same path as s3:// or hf://: no DuckDB extension
    is downloaded) gives the matrix of the same files on disk."""
    fsspec = pytest.importorskip("fsspec")
    board = generated_long(tmp_path, models=30, items=200, files=3)
    fs = fsspec.filesystem("memory")
    for path in sorted(board.iterdir()):
        fs.pipe(f"/lp-test-board/data/{path.name}", path.read_bytes())
    fs.pipe("/lp-test-board/data/_SUCCESS", b"")
    try:
        got = read_matrix(["memory://lp-test-board/data"], engine="duckdb", cluster="subject")
        same_matrix(got, local_matrix(sorted(board.iterdir()), cluster="subject"))
        with pytest.raises(DataError, match="not found"):
            read_matrix(["memory://lp-test-board/nothing"], engine="duckdb")
    finally:
        fs.rm("/lp-test-board", recursive=True)
