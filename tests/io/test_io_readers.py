"""Readers of harness outputs and the alignment policy: real example files and repo fixtures."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from llm_power import DataError, read_results
from llm_power.io import align_results
from llm_power.io.detect import expand_paths

FIX = Path(__file__).resolve().parents[1] / "fixtures"
TRUTH = json.loads((FIX / "truth.json").read_text())


# --- real example files of ../shared/data/formats ----------------------------------------------

def test_inspect_json_log_real(shared_data):
    # formats/README: data_arc_qwen.json has 3 samples scored C, I, I -> mean 1/3
    df = read_results(shared_data / "formats" / "inspect_ai" / "data_arc_qwen.json")
    assert len(df) == 3 and df["model"].unique().tolist() == ["ollama/qwen2.5:0.5b"]
    assert df["score"].tolist() == [1.0, 0.0, 0.0]
    assert df["score"].mean() == pytest.approx(1 / 3)


def test_inspect_eval_zip_real(shared_data):
    df = read_results(shared_data / "formats" / "inspect_ai" / "mmlu-summary-choices.eval", cluster="subject")
    assert len(df) == 1 and df["model"][0] == "openai/gpt-4o"
    assert df["score"][0] == 0.0  # scored "I"
    assert df["cluster"][0] == "college_physics"


def test_helm_run_real_test_split_only(shared_data):
    run = shared_data / "formats" / "helm" / "mmlu_philosophy_openai_gpt2"
    df = read_results(run)
    # 10 instances, one of them on the valid split: 9 test items; stats.json: exact_match mean 0.111
    assert len(df) == 9 and df["model"].unique().tolist() == ["openai/gpt2"]
    stats = json.loads((run / "stats.json").read_text())
    agg = next(s for s in stats if s["name"]["name"] == "exact_match" and s["name"].get("split") == "test"
               and "perturbation" not in s["name"])
    assert df["score"].mean() == pytest.approx(agg["mean"], abs=1e-3)
    assert len(read_results(run, split="valid")) == 1


def test_lm_eval_samples_real(shared_data):
    path = shared_data / "formats" / "lm_eval" / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl"
    df = read_results(path)
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert len(df) == len(lines) == 10
    assert df["score"].tolist() == [float(x["exact_match"]) for x in lines]
    assert df["model"][0] == "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
    assert df["item"][0] == "math_perturbed_full:0"
    with pytest.raises(DataError, match=r"no metric 'acc'; available per-item metrics: 'exact_match'"):
        read_results(path, metric="acc")


def test_lighteval_details_real(shared_data):
    path = shared_data / "formats" / "lighteval" / "details_anli_r1_0_2026-08-10T17-22-11.385681.parquet"
    df = read_results(path)
    assert len(df) == 2 and df["model"][0] == "eee-smoke/dummy-model" and df["score"].tolist() == [0.0, 0.0]


def test_whole_formats_folder_real(shared_data):
    # the unfinished DeepEval run has no test case with a value (its metrics timed out): an error
    # naming it, not a silent zero
    with pytest.raises(DataError, match=r"temp_test_run_data_beeai_cfbc9c3.json: no test case has a value"):
        read_results(shared_data / "formats")
    files = [p for p in expand_paths([shared_data / "formats"]) if not p.name.startswith("temp_test_run")]
    df = read_results(files)
    # the READMEs' models: lm-eval, HELM, lighteval and inspect's, Every Eval Ever's (the lm-eval
    # and HELM runs again, Claude only there, and qwen under EEE's sanitised id), promptfoo's and DeepEval's (named
    # after its file: a DeepEval run does not name the model)
    assert set(df["model"]) == {
        "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1", "openai/gpt2",
        "eee-smoke/dummy-model", "ollama/qwen2.5:0.5b", "openai/gpt-4o", "anthropic/claude-sonnet-4-20250514",
        "ollama/qwen2.5-0.5b", "openai:gpt-5", "openai:gpt-5-mini", "latest_test_run_beeai_f8b9dba"}


# --- repo fixtures: every format gives the encoded truth ---------------------------------------------

@pytest.mark.parametrize("path", ["lm_eval", "inspect", "lighteval", "long.csv", "wide.csv", "wide.parquet"])
def test_fixture_scores_equal_truth(path):
    df = read_results(FIX / path, cluster="subject")
    aligned = align_results(df)
    assert aligned.scores.shape == (40, 2)
    for j, model in enumerate(aligned.models):
        key = "model-a" if "model-a" in model else "model-b"
        order = np.argsort([int(str(i).split(":")[-1].lstrip("q")) for i in aligned.items])
        assert aligned.scores[order, j].tolist() == [float(v) for v in TRUTH[key]]
    assert len(set(aligned.clusters)) == 4


def test_helm_fixture_excludes_valid_split_and_perturbations():
    df = read_results(FIX / "helm")
    assert df.groupby("model").size().tolist() == [39, 39]
    truth = np.array(TRUTH["model-a"][1:], dtype=float)
    a = df[df["model"] == "org/model-a"].sort_values("item", key=lambda s: s.str.extract(r"id(\d+)")[0].astype(int))
    assert a["score"].tolist() == truth.tolist()


def test_lm_eval_filters_are_not_mixed():
    folder = FIX / "lm_eval_two_filters"
    with pytest.raises(DataError, match=r"2 filters per doc \('flexible-extract', 'strict-match'\); choose one with --filter"):
        read_results(folder)
    assert read_results(folder, filter="strict-match")["score"].tolist() == [0, 1, 0, 1, 0, 1]
    with pytest.raises(DataError, match=r"no filter 'none'"):
        read_results(folder, filter="none")


# --- alignment policy ----------------------------------------------------------------------------------

def test_missing_items_error_or_intersect(tmp_path):
    long = (FIX / "long.csv").read_text().splitlines()
    kept = [long[0]] + [line for line in long[1:] if not (line.startswith("model-b,q3,") or line.startswith("model-b,q7,"))]
    path = tmp_path / "partial.csv"
    path.write_text("\n".join(kept) + "\n")
    df = read_results(path)
    with pytest.raises(DataError, match=r"not run on the same items \(model-b lacks 2 of 40 items, first 'q3'\).*`on_missing`='intersect'"):
        align_results(df)
    aligned = align_results(df, on_missing="intersect")
    assert aligned.scores.shape == (38, 2)
    assert aligned.dropped == {"model-a": 2, "model-b": 0}
    assert "38 of 40 kept" in aligned.note


def test_duplicates_conflicting_targets_and_disjoint_items(tmp_path):
    dup = tmp_path / "dup.csv"
    dup.write_text("model,item,score\nA,q1,1\nA,q1,0\nB,q1,1\n")
    with pytest.raises(DataError, match=r"model 'A' has item 'q1' more than once"):
        align_results(read_results(dup))
    # two lm-eval runs with different targets for the same doc id
    for name, target in (("m1", "3"), ("m2", "4")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "samples_t_2026-01-01T00-00-00.000000.jsonl").write_text(
            json.dumps({"doc_id": 0, "target": target, "filter": "none", "metrics": ["acc"], "acc": 1.0}) + "\n")
    with pytest.raises(DataError, match=r"item 't:0' has different targets across models"):
        align_results(read_results([tmp_path / "m1", tmp_path / "m2"]))
    disjoint = tmp_path / "disjoint.csv"
    disjoint.write_text("model,item,score\nA,q1,1\nB,q2,1\n")
    with pytest.raises(DataError, match=r"no item is shared by all models"):
        align_results(read_results(disjoint), on_missing="intersect")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("samples_x_2026-01-01T00-00-00.000000.jsonl", '{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n{"doc_id": 1, "metr',
         r"record line 2: not valid JSON .*truncated line\?"),
        ("empty.csv", "", r"empty.csv: the file is empty|no records"),
        ("data.xyz", "hello", r"data.xyz: unknown format '.xyz'"),
        ("log.json", '{"a": 1}', r"log.json: unknown JSON layout"),
    ],
)
def test_bad_files_name_file_and_record(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        read_results(path)


def test_zip_that_is_not_an_inspect_log(tmp_path):
    path = tmp_path / "fake.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("other.txt", "x")
    with pytest.raises(DataError, match=r"fake.eval: not an inspect .eval log \(no header.json"):
        read_results(path)
    bad = tmp_path / "bad.eval"
    bad.write_text("not a zip")
    with pytest.raises(DataError, match=r"bad.eval: not an inspect .eval log \(not a zip archive\)"):
        read_results(bad)


def test_unknown_metric_lists_available():
    with pytest.raises(DataError, match=r"no scorer 'f1'; available: 'choice'"):
        read_results(FIX / "inspect", metric="f1")
    with pytest.raises(DataError, match=r"no metric 'f1' on split 'test'; available: 'exact_match', 'num_references'"):
        read_results(FIX / "helm", metric="f1")
    with pytest.raises(DataError, match=r"no metric 'em'; available: 'acc'"):
        read_results(FIX / "lighteval", metric="em")


def test_streaming_reader_memory_is_flat(tmp_path):
    """A lm-eval samples file is read line by line: peak memory grows with the number of records
    kept (a few floats each), not with the size of the lines (prompts, responses)."""
    import tracemalloc

    from llm_power.io.formats.lm_eval import read_lm_eval

    path = tmp_path / "samples_big_2026-01-01T00-00-00.000000.jsonl"
    blob = "x" * 20_000
    with open(path, "w") as fh:
        for i in range(2000):
            fh.write(json.dumps({"doc_id": i, "doc": {"q": blob}, "resps": [[blob]], "target": "1",
                                 "filter": "none", "metrics": ["acc"], "acc": 1.0}) + "\n")
    assert path.stat().st_size > 80_000_000
    tracemalloc.start()
    records = list(read_lm_eval(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(records) == 2000
    assert peak < 10_000_000  # 80 MB file, < 10 MB peak


def test_gzipped_tables_seg_id_and_id_column(tmp_path, capsys):
    import gzip

    from llm_power.cli.main import main

    rows = "seg_id,sys-a,sys-b\n" + "".join(f"{i},{-(i % 3) / 2},{-(i % 4) / 2}\n" for i in range(40))
    with gzip.open(tmp_path / "mqm_wide.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write(rows)
    frame = read_results(tmp_path / "mqm_wide.csv.gz")  # seg_id is an item id; .gz read transparently
    assert sorted(frame["model"].unique()) == ["sys-a", "sys-b"] and len(frame) == 80
    (tmp_path / "custom.csv").write_text(rows.replace("seg_id", "key"))
    assert main(["diagnose", str(tmp_path / "custom.csv"), "--id-column", "key", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n"] == 40 and sorted(payload["models"]) == ["sys-a", "sys-b"]
    # the same numbers as the uncompressed file
    (tmp_path / "plain.csv").write_text(rows)
    assert main(["diagnose", str(tmp_path / "plain.csv"), "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["diagnose", str(tmp_path / "mqm_wide.csv.gz"), "--format", "json"]) == 0
    gz = json.loads(capsys.readouterr().out)
    assert gz["pairs"] == plain["pairs"]


def test_model_folders_that_are_links_are_read(tmp_path):
    """A results folder of symbolic links to each model's run folder (runs kept elsewhere) is read as the
    folders themselves: the links were skipped ("no result files found"). A link back to an ancestor is
    walked once, not forever; a FIFO behind a link is still an error naming it.
    """
    import os
    import shutil

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"
    runs, board = tmp_path / "runs", tmp_path / "board"
    shutil.copytree(fixtures, runs)
    board.mkdir()
    for model in ("model-a", "model-b"):
        (board / model).symlink_to(runs / model, target_is_directory=True)
    (board / "again").symlink_to(board, target_is_directory=True)  # a loop
    direct = read_results(runs)
    linked = read_results(board)
    assert sorted(set(linked["model"])) == sorted(set(direct["model"]))
    assert len(linked) == len(direct) and linked["score"].sum() == direct["score"].sum()
    assert all("/board/" in str(p) and "/again/" not in str(p) for p in expand_paths([board]))
    os.mkfifo(runs / "model-a" / "samples_fifo_2026-01-21T03-44-18.458309.jsonl")
    with pytest.raises(DataError, match="samples_fifo"):
        expand_paths([board])
