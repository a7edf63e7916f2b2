"""OpenCompass objective-task results (schema-generated files, tests/fixtures/opencompass/README.md):
both layouts of ``details``, repeats averaged, every model's mean equal to the metric the same file
states, and the errors; the real subjective run stays a battles file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import llm_power as lp
from llm_power import DataError
from llm_power.cli.main import main

ROOT = Path(__file__).parent.parent / "fixtures" / "opencompass" / "outputs" / "default" / "20260301_101500"


@pytest.fixture
def run(tmp_path):
    """The work directory without the model whose details were not dumped."""
    dest = tmp_path / "run"
    shutil.copytree(ROOT, dest)
    shutil.rmtree(dest / "results" / "no-details-model")
    return dest


@pytest.mark.parametrize("model", ["qwen2.5-7b-instruct-hf", "internlm2_5-7b-chat-hf"])
@pytest.mark.parametrize("dataset", ["gsm8k", "ARC-c"])
def test_each_file_reads_back_to_its_own_metric(model, dataset):
    path = ROOT / "results" / model / f"{dataset}.json"
    stated = next(v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if k.startswith("accuracy"))
    frame = lp.read_results(path)
    assert set(frame["model"]) == {model}
    assert frame["score"].mean() * 100 == pytest.approx(stated, abs=1e-4)
    assert frame["item"].str.startswith(f"{dataset}:").all()


def test_repeats_are_averaged_per_example():
    frame = lp.read_results(ROOT / "results" / "internlm2_5-7b-chat-hf" / "gsm8k.json")
    by_item = dict(zip(frame["item"], frame["score"], strict=True))
    # example 0 was right then wrong, example 2 right twice, example 1 wrong twice
    assert by_item["gsm8k:gsm8k_test_0"] == 0.5 and by_item["gsm8k:gsm8k_test_2"] == 1.0
    assert by_item["gsm8k:gsm8k_test_1"] == 0.0 and len(by_item) == 6


def test_a_work_directory_is_a_leaderboard(run, capsys):
    frame = lp.read_results(run)
    assert sorted(set(frame["model"])) == ["internlm2_5-7b-chat-hf", "qwen2.5-7b-instruct-hf"]
    assert frame.groupby("model").size().tolist() == [11, 11]  # 5 ARC-c + 6 gsm8k; predictions are not read
    assert main(["diagnose", str(run), "--format", "json", "--ranks", "off", "--cluster-resamples", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 11


def test_a_run_without_details_is_a_one_line_error():
    with pytest.raises(DataError, match="--dump-eval-details") as err:
        lp.read_results(ROOT)
    assert "no-details-model" in str(err.value) and "\n" not in str(err.value)


def test_metric_reads_another_per_sample_field_and_bad_values_are_named(tmp_path):
    folder = tmp_path / "results" / "m"
    folder.mkdir(parents=True)
    path = folder / "math.json"
    path.write_text(json.dumps({"G-Pass@2_0.5": 50.0, "details": [
        {"example_abbr": "math_0", "correct": [True, False], "G-Pass@2_0.5": 1.0},
        {"example_abbr": "math_1", "correct": [False, False], "G-Pass@2_0.5": 0.0}]}), encoding="utf-8")
    frame = lp.read_results(path, metric="G-Pass@2_0.5")
    assert frame["score"].tolist() == [1.0, 0.0]
    with pytest.raises(DataError, match="no per-sample 'nope'"):
        lp.read_results(path, metric="nope")
    path.write_text(json.dumps({"accuracy": 1.0, "details": {"type": "GEN", "0": {"correct": "maybe"}}}),
                    encoding="utf-8")
    with pytest.raises(DataError, match=r"details\[0\]"):
        lp.read_results(path)


def test_the_real_subjective_run_stays_battles(shared_data):
    run = shared_data / "formats" / "opencompass" / "20231208_194351"
    battles = lp.read_battles(run)
    assert len(battles) == 8
    with pytest.raises(DataError, match="no per-item result files in this folder: it holds pairwise judgements.*llm-power arena"):
        lp.read_results(run)
