"""read_battles: arena logs (CSV, JSONL, JSON, Parquet), MT-Bench *_pair.jsonl and AlpacaEval
annotations.json into one table; every bad input one line naming file, record and field."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from llm_power import bradley_terry, read_battles, swap_consistency, win_rate
from llm_power._core.errors import DataError


@pytest.fixture
def mtbench(shared_data):
    return pd.read_csv(shared_data / "preferences" / "mtbench_ko_en_swap" / "battles.csv.gz")


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".jsonl", ".json", ".parquet"])
def test_arena_logs_in_every_container_read_the_same(mtbench, tmp_path, suffix):
    path = tmp_path / f"battles{suffix}"
    if suffix.startswith(".csv"):
        mtbench.to_csv(path, index=False)
    elif suffix == ".jsonl":
        mtbench.to_json(path, orient="records", lines=True)
    elif suffix == ".json":
        mtbench.to_json(path, orient="records")
    else:
        mtbench.to_parquet(path)
    frame = read_battles(path)
    assert len(frame) == len(mtbench)
    for column in ("model_a", "model_b", "winner", "g1_winner", "g2_winner", "lang"):
        assert frame[column].astype(str).tolist() == mtbench[column].astype(str).tolist()
    assert frame["question_id"].tolist() == mtbench["question_id"].astype(str).tolist()
    # what the analyses see is what the source table says
    pd.testing.assert_frame_equal(swap_consistency(frame, by="judge"), swap_consistency(mtbench, by="judge"))


def test_mtbench_pair_files(tmp_path):
    rows = [("model_1", "model_1"), ("model_2", "model_2"), ("model_1", "model_2"), ("tie", "model_1"),
            ("error", "model_1"), ("tie", "tie")]
    path = tmp_path / "gpt-4_pair.jsonl"
    path.write_text("".join(json.dumps({"question_id": 81 + k, "model_1": "vicuna", "model_2": "llama", "g1_winner": g1,
                                        "g2_winner": g2, "judge": ["gpt-4", "pair-v2"], "turn": 1}) + "\n"
                            for k, (g1, g2) in enumerate(rows)), encoding="utf-8")
    frame = read_battles(tmp_path)  # a folder: finds *_pair.jsonl
    assert frame.attrs["n_dropped"] == 1
    # FastChat: a verdict that flips with the order is a tie
    assert frame["winner"].tolist() == ["model_a", "model_b", "tie", "tie", "tie"]
    assert frame["g1_winner"].tolist() == ["model_a", "model_b", "model_a", "tie", "tie"]
    assert frame["g2_winner"].tolist() == ["model_a", "model_b", "model_b", "model_a", "tie"]
    assert set(frame["judge"]) == {"gpt-4"} and frame["model_a"].eq("vicuna").all()


def test_alpaca_eval_annotations(tmp_path):
    prefs = [1.0, 2.0, 1.5, 1.9999, None, 1.25]
    records = [{"instruction": f"task {k}", "output_1": "a", "generator_1": "gpt4_1106_preview", "output_2": "b",
                "generator_2": "my-model", "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": p,
                "dataset": "helpful_base"} for k, p in enumerate(prefs)]
    folder = tmp_path / "results" / "my-model" / "weighted_alpaca_eval_gpt4_turbo"
    folder.mkdir(parents=True)
    (folder / "annotations.json").write_text(json.dumps(records), encoding="utf-8")
    frame = read_battles(tmp_path / "results")
    assert frame.attrs["n_dropped"] == 1
    np.testing.assert_allclose(frame["preference"], [0.0, 1.0, 0.5, 0.9999, 0.25])
    assert frame["winner"].tolist() == ["model_a", "model_b", "tie", "model_b", "model_a"]
    assert frame["question_id"][0] == hashlib.sha1(b"task 0").hexdigest()
    assert win_rate(frame["preference"]).estimate == pytest.approx(np.mean([0.0, 1.0, 0.5, 0.9999, 0.25]))


def test_lmsys_style_logs_and_winner_names(tmp_path):
    path = tmp_path / "arena.jsonl"
    rows = [{"model_a": "x", "model_b": "y", "winner": w, "question_id": str(k), "judge": "u1"}
            for k, w in enumerate(["model_a", "tie (bothbad)", "y", "x", "model_b", "tie"])]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    frame = read_battles(path)
    assert frame["winner"].tolist() == ["model_a", "tie", "model_b", "model_a", "model_b", "tie"]
    assert bradley_terry(frame).n_battles == 6


@pytest.mark.parametrize(("content", "match"), [
    ("model_a,model_b,winner\nx,y,model_a\nx,y,left\n", r"b\.csv, record line 3, field 'winner': 'left' is none"),
    ("model_a,model_b,winner\nx,,model_a\n", r"record line 2, field 'model_b': is empty"),
    ("model_a,model_b,winner\nx,x,tie\n", r"a model against itself"),
    ("a,b,c\n1,2,3\n", r"not a battle log: expected model_a/model_b/winner"),
    ("model_a,model_b,winner\n", r"no battles in this file"),
])
def test_bad_logs_are_one_line_errors(tmp_path, content, match):
    path = tmp_path / "b.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=match) as info:
        read_battles(path)
    assert "\n" not in str(info.value)


def test_bad_files_and_folders(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_battles(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="no battle files in this folder"):
        read_battles(tmp_path)
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(DataError, match=r"x\.parquet: not readable as Parquet"):
        read_battles(bad)
    pair = tmp_path / "j_pair.jsonl"
    pair.write_text(json.dumps({"question_id": 1, "model_1": "a", "model_2": "b", "g1_winner": "A",
                                "g2_winner": "tie"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"record line 1, field 'g1_winner': 'a' is none of model_1"):
        read_battles(pair)
    ann = tmp_path / "annotations.json"
    ann.write_text(json.dumps([{"generator_1": "a", "generator_2": "b", "preference": 3}]), encoding="utf-8")
    with pytest.raises(DataError, match="field 'preference': 3.0 is outside"):
        read_battles(ann)


# --- OpenCompass subjective (pairwise) results ----------------------------------------------------

def test_opencompass_pairwise_results_real(shared_data):
    """README: 8 CoreV2 questions, answer 1 always baichuan2-7b-chat-hf, the judge (qwen-7b-chat
    itself) chose A -- answer 1 -- for all 8; two questions per capability."""
    from collections import Counter

    from llm_power.io import read_battles

    run = shared_data / "formats" / "opencompass" / "20231208_194351"
    frame = read_battles(run)  # the folder: results/<model1>_<model2>/*.json are found
    assert len(frame) == 8 and frame.attrs["n_dropped"] == 0
    assert set(frame["model_a"]) == {"baichuan2-7b-chat-hf"} and set(frame["model_b"]) == {"qwen-7b-chat-hf"}
    assert frame["winner"].tolist() == ["model_a"] * 8 and frame["choice"].tolist() == ["A"] * 8
    assert frame["question_id"].tolist() == [str(k) for k in range(8)]
    assert Counter(frame["capability"]) == {"知识-社会常识": 2, "推理-逻辑推理能力": 2, "对齐-指令跟随性": 2, "对齐-安全": 2}


def test_opencompass_choices_and_hostile_gold(tmp_path):
    import json as _json

    from llm_power.io import read_battles

    gold = "{'answer1': 'm1', 'answer2': 'm2', 'capability': 'c'}"
    data = {"0": {"prediction": "选择：B\n原因：...", "gold": gold}, "1": {"prediction": "Choice: c\nReason", "gold": gold},
            "2": {"prediction": "选择:D", "gold": {"answer1": "m1", "answer2": "m2"}},
            "3": {"prediction": "no verdict here", "gold": gold}}
    data = {k: {"origin_prompt": "p", **v} for k, v in data.items()}
    path = tmp_path / "results" / "m1_m2" / "set.json"
    path.parent.mkdir(parents=True)
    path.write_text(_json.dumps(data, ensure_ascii=False))
    frame = read_battles(tmp_path)
    assert frame["winner"].tolist() == ["model_b", "tie", "tie"] and frame.attrs["n_dropped"] == 1
    for bad, match in (("__import__('os').system('echo x')", "'gold' must be a dict"),
                       ("{'answer1': 'm1', 'answer2': 'm1'}", "a model against itself")):
        path.write_text(_json.dumps({"0": {"origin_prompt": "p", "prediction": "Choice: A", "gold": bad}}))
        with pytest.raises(DataError, match=match) as err:
            read_battles(path)
        assert "question 0" in str(err.value) and str(path) in str(err.value)
