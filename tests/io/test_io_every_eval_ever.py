"""The Every Eval Ever instance-level reader on the real files of ../shared/data/formats/every_eval_ever
(oracle values from its README: the per-sample scores and means there, taken from the files by
their curators), and on hostile variants written here from the schema."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import llm_power as lp
from llm_power.errors import DataError
from llm_power.io.detect import detect_format, expand_paths


def _eee(shared: Path) -> Path:
    return shared / "formats" / "every_eval_ever"


@pytest.mark.parametrize(("name", "model", "n", "mean"), [
    ("converted_v0.3.0/arc_easy_qwen2.5-0.5b_samples.jsonl", "ollama/qwen2.5-0.5b", 3, 1 / 3),
    ("converted_v0.3.0/arc_easy_claude-sonnet-4_samples.jsonl", "anthropic/claude-sonnet-4-20250514", 5, 1.0),
    ("converted_v0.3.0/lm_eval_math_perturbed_full_samples.jsonl",
     "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1", 10, 0.0),
    ("upstream_v0.2/helm_mmlu_philosophy_gpt2_samples_v0.2.1.jsonl", "openai/gpt2", 10, 0.1),
])
def test_real_files(shared_data, name, model, n, mean):
    path = _eee(shared_data) / name
    assert detect_format(path) == "every_eval_ever"
    frame = lp.read_results([path])
    assert frame["model"].unique().tolist() == [model]
    assert len(frame) == n and frame["score"].mean() == pytest.approx(mean, abs=1e-12)
    assert frame["item"].is_unique


def test_the_two_arc_models_pair_on_their_shared_samples(shared_data):
    folder = _eee(shared_data) / "converted_v0.3.0"
    files = [folder / "arc_easy_qwen2.5-0.5b_samples.jsonl", folder / "arc_easy_claude-sonnet-4_samples.jsonl"]
    aligned = lp.align_results(lp.read_results(files), on_missing="intersect")
    assert aligned.models == ["anthropic/claude-sonnet-4-20250514", "ollama/qwen2.5-0.5b"]
    assert list(aligned.items) == ["arc_easy:1", "arc_easy:2", "arc_easy:3"]
    np.testing.assert_array_equal(aligned.scores, [[1, 1], [1, 0], [1, 0]])  # README: qwen 1, 0, 0; sonnet all 1
    helm = lp.read_results([_eee(shared_data) / "upstream_v0.2/helm_mmlu_philosophy_gpt2_samples_v0.2.1.jsonl"])
    assert helm.loc[helm["score"] == 1, "item"].tolist() == ["mmlu:id222"]  # README: only id222 correct
    bools = lp.read_results([files[1]], metric="is_correct")
    assert bools["score"].tolist() == [1.0] * 5
    # a folder is searched for EEE files too (aggregate records beside them are not per-item results)
    found = {p.name for p in expand_paths([folder])}
    assert {f.name for f in files} <= found and not any(p.suffix == ".json" for p in map(Path, found))


def _line(**over):
    rec = {"schema_version": "0.3.0", "evaluation_id": "e/1", "model_id": "org/m", "evaluation_name": "bench",
           "sample_id": "1", "interaction_type": "single_turn", "input": {"raw": "q", "reference": ["A"]},
           "answer_attribution": [], "evaluation": {"score": 1.0, "is_correct": True}, "metadata": {"epoch": "1"}}
    rec.update(over)
    return json.dumps(rec)


def test_epochs_are_averaged_and_clusters_come_from_metadata(tmp_path):
    path = tmp_path / "x_samples.jsonl"
    lines = [_line(sample_id="1", evaluation={"score": 1.0}, metadata={"epoch": "1", "subject": "bio"}),
             _line(sample_id="1", evaluation={"score": 0.0}, metadata={"epoch": "2", "subject": "bio"}),
             _line(sample_id="2", evaluation={"score": 0.25}, metadata={"epoch": "1", "subject": "law"}),
             _line(sample_id="2", model_id="org/other", evaluation={"score": 0.5}, metadata={"subject": "law"})]
    path.write_text("\n".join(lines) + "\n")
    frame = lp.read_results([path], cluster="subject")
    got = {(r.model, r.item): (r.score, r.cluster) for r in frame.itertuples()}
    assert got == {("org/m", "bench:1"): (0.5, "bio"), ("org/m", "bench:2"): (0.25, "law"),
                   ("org/other", "bench:2"): (0.5, "law")}


@pytest.mark.parametrize(("lines", "match"), [
    ([_line(), _line()], r"line 2.*appears twice for model 'org/m', epoch 1 \(first at line 1\)"),
    ([_line(evaluation={"score": "high"})], r"line 1.*evaluation.score"),
    ([_line(evaluation={"is_correct": True})], r"no per-sample value 'score'.*available: 'is_correct'"),
    ([_line(evaluation=[1])], r"'evaluation' must be a JSON object"),
    ([_line(sample_id="")], r"empty sample_id"),
    ([_line(), "{not json"], r"line 2.*not valid JSON"),
    ([_line(metadata={"epoch": "1"})], r"no cluster field 'subject'"),
])
def test_bad_records_are_one_line_naming_file_record_and_field(tmp_path, lines, match):
    path = tmp_path / "bad_samples.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=match) as err:
        lp.read_results([path], format="every_eval_ever", cluster="subject" if "cluster" in match else None)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_line_without_the_keys_is_not_claimed_and_is_an_error_when_forced(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"item": "a", "model": "m", "score": 1}) + "\n")
    assert detect_format(path) == "csv"  # the generic JSONL reader keeps it
    with pytest.raises(DataError, match=r"not an Every Eval Ever instance record \(no 'evaluation'"):
        lp.read_results([path], format="every_eval_ever")
    empty = tmp_path / "empty_samples.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataError, match="no records"):
        lp.read_results([empty], format="every_eval_ever")


# --- aggregate records ---------------------------------------------------------------------------

def test_aggregate_records_give_the_readme_scores_and_uncertainty(shared_data):
    from llm_power.io.aggregate import read_aggregates, read_eee_aggregates

    got = {s.model: s for s in read_eee_aggregates(_eee(shared_data))}
    # README: qwen 0.3333 with SE 0.33333333333333337 over 3 samples; sonnet 1.0, no SE, 5 samples;
    # the lm-eval run 0.0 with SE 0.0 over 5,000 (the full run); the 0.2.x records have no sample
    # count and are left out
    assert set(got) == {"ollama/qwen2.5-0.5b", "anthropic/claude-sonnet-4-20250514",
                        "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"}
    qwen = got["ollama/qwen2.5-0.5b"]
    assert (qwen.value, qwen.stderr, qwen.n) == (0.3333333333333333, 0.33333333333333337, 3)
    assert qwen.task == "accuracy on arc_easy for scorer choice"
    sonnet = got["anthropic/claude-sonnet-4-20250514"]
    assert (sonnet.value, sonnet.stderr, sonnet.n) == (1.0, None, 5)
    lm = got["RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"]
    assert (lm.value, lm.stderr, lm.n, lm.task) == (0.0, 0.0, 5000, "math_perturbed_full")
    # a mix of lm-eval results and EEE records in one call: each file by its content
    mixed = read_aggregates([shared_data / "formats" / "lm_eval", _eee(shared_data) / "converted_v0.3.0"])
    assert sum(s.filter == "none" for s in mixed) == 2 and sum(s.filter == "" for s in mixed) == 3
    with pytest.raises(DataError, match=r"no Every Eval Ever results with a sample count"):
        read_eee_aggregates(_eee(shared_data) / "upstream_v0.2" / "mmlu_pro_yi-1.5-34b-chat_676f4465.json")


def test_aggregate_command_reads_eee_records(shared_data, capsys):
    from llm_power.cli.main import main

    folder = _eee(shared_data) / "converted_v0.3.0"
    assert main(["aggregate", str(folder / "arc_easy_qwen2.5-0.5b.json"), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["scores"]
    ci = lp.proportion_ci(1, 3)
    assert row["interval"] == "wilson" and (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))


@pytest.mark.parametrize(("result", "match"), [
    ({"score_details": {"score": "high"}}, r"evaluation_results\[0\].*no numeric score_details.score"),
    ({"score_details": {"score": 0.5, "uncertainty": {"num_samples": 10, "standard_error": {"value": -1}}}},
     r"standard error -1.0 is not a finite non-negative number"),
    ({"score_details": {"score": float("inf"), "uncertainty": {"num_samples": 10}}}, r"is not a finite number"),
])
def test_bad_aggregate_records(tmp_path, result, match):
    from llm_power.io.aggregate import read_eee_aggregates

    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": "0.3.0", "model_info": {"id": "m"},
                                "evaluation_results": [{"evaluation_name": "b", **result}]}).replace("Infinity", "1e999"))
    with pytest.raises(DataError, match=match) as err:
        read_eee_aggregates(path)
    assert str(path) in str(err.value)


# --- the datastore's Parquet views ----------------------------------------------------------------
# No real view file is at hand (the datastore, evaleval/EEE_datastore on the Hugging Face hub, is not
# reachable here): the local copy is built from the real records above in the layout upstream's
# reader queries (helpers/eee_stats.py @ 9bce4136: viewer_parquets/**/dataset.parquet, one nested
# aggregate record per row; dataset_samples.parquet, the instance fields as columns, the nested
# ones as structs or as JSON text).

def _views(shared_data: Path, root: Path, *, json_text: bool) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = _eee(shared_data) / "converted_v0.3.0"
    folder = root / "viewer_parquets" / "ai2_arc"
    folder.mkdir(parents=True)
    def no_empty(value):  # Parquet cannot store a struct without fields: an empty object becomes null
        if isinstance(value, dict):
            return {k: no_empty(v) for k, v in value.items()} or None
        return [no_empty(v) for v in value] if isinstance(value, list) else value

    records = [no_empty(json.loads(p.read_text())) for p in sorted(src.glob("*.json"))]
    pq.write_table(pa.Table.from_pylist(records), folder / "dataset.parquet")
    lines = [no_empty(json.loads(line)) for p in sorted(src.glob("*_samples.jsonl"))
             for line in p.read_text().splitlines() if line.strip()]
    if json_text:
        nested = ("evaluation", "metadata", "input", "output", "token_usage", "performance", "messages",
                  "answer_attribution")
        lines = [{k: json.dumps(v) if k in nested else v for k, v in rec.items()} for rec in lines]
    pq.write_table(pa.Table.from_pylist(lines), folder / "dataset_samples.parquet")
    return root


@pytest.mark.parametrize("json_text", [False, True], ids=["structs", "json-text"])
def test_datastore_views_read_as_the_records_they_hold(shared_data, tmp_path, json_text):
    from llm_power.io.aggregate import read_aggregates, read_eee_aggregates

    root = _views(shared_data, tmp_path, json_text=json_text)
    samples = root / "viewer_parquets" / "ai2_arc" / "dataset_samples.parquet"
    assert detect_format(samples) == "every_eval_ever"
    src = _eee(shared_data) / "converted_v0.3.0"
    want = lp.read_results(sorted(src.glob("*_samples.jsonl")))
    got = lp.read_results([root])  # the folder: the samples view is found
    key = ["model", "item"]
    assert (got.sort_values(key)[["model", "item", "score"]].reset_index(drop=True)
            .equals(want.sort_values(key)[["model", "item", "score"]].reset_index(drop=True)))
    views = {(s.model, s.task): (s.value, s.stderr, s.n) for s in read_eee_aggregates(root)}
    files = {(s.model, s.task): (s.value, s.stderr, s.n) for s in read_eee_aggregates(src)}
    assert views == files and len(views) == 3
    assert {s.source for s in read_aggregates([root])} == {str(root / "viewer_parquets" / "ai2_arc" / "dataset.parquet")}
