"""What people see (issue 24, item 3): wide tables with label columns, one-model outputs, dead
ends, units and wording. Oracles are the library's own entry points on the same numbers read
independently (pandas) -- the point here is that every entry point reads the same data the same way.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import llm_power as lp
from llm_power.cli.main import main

A, B = "Meta-Llama-3-70B", "Meta-Llama-3_1-70B"


@pytest.fixture
def mmlu(shared_data):
    path = shared_data / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    frame = pd.read_csv(path)
    assert not pd.api.types.is_numeric_dtype(frame["category"])  # the precondition: a text label column in a wide file
    return path, frame


def _one_note(err: str, command: str) -> None:
    notes = [line for line in err.splitlines() if "holds text" in line]
    assert len(notes) == 1 and notes[0].startswith(f"llm-power {command}: note: column 'category'"), err
    assert "--cluster='category'" in notes[0]  # the CLI names its flag, not the Python parameter


def test_compare_models_on_a_wide_file_with_a_label_column(mmlu, capsys):
    path, frame = mmlu
    assert main(["compare", str(path), "--models", A, B, "--format", "json"]) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    ref = lp.compare(frame[A].to_numpy(float), frame[B].to_numpy(float))
    assert got["pvalue"] == ref.pvalue and got["delta"] == ref.delta
    _one_note(captured.err, "compare")
    # the label column is usable as the cluster
    assert main(["compare", str(path), "--models", A, B, "--cluster", "category", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = lp.compare(frame[A].to_numpy(float), frame[B].to_numpy(float), cluster=frame["category"].to_numpy())
    assert got["n_clusters"] == 14 and got["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)


def test_gate_data_on_a_wide_file_with_a_label_column(mmlu, capsys):
    path, frame = mmlu
    code = main(["gate", A, B, "--data", str(path), "--format", "json"])
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    ref = lp.gate(frame[A].to_numpy(float), frame[B].to_numpy(float))
    assert code == {"PASS": 0, "INCONCLUSIVE": 3, "FAIL": 4}[ref.verdict]
    assert got["verdict"] == ref.verdict
    assert got["pvalue_noninferiority"] == pytest.approx(ref.pvalue_noninferiority, rel=1e-12)
    _one_note(captured.err, "gate")


def test_diagnose_a_wide_dataframe_with_a_label_column(mmlu):
    _, frame = mmlu
    sub = frame[["question_id", "category", A, B, "Yi-34B"]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = sub.llm_power.diagnose()
    assert sum("holds text" in str(w.message) for w in caught) == 1
    ref = lp.diagnose(sub[[A, B, "Yi-34B"]].to_numpy(float), models=[A, B, "Yi-34B"])
    assert got.models == ref.models and got.n == ref.n == 12_032
    np.testing.assert_array_equal(got.columns["pvalue"], ref.columns["pvalue"])
    clustered = sub.llm_power.diagnose(cluster="category")
    assert clustered.settings["n_clusters"] == 14
    assert sub.llm_power.compare("Yi-34B", A).pvalue == lp.compare(sub["Yi-34B"].to_numpy(float),
                                                                     sub[A].to_numpy(float)).pvalue


def test_a_wide_parquet_text_column_is_a_label(tmp_path, capsys):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"item": [f"q{i}" for i in range(300)], "subject": [f"s{i % 7}" for i in range(300)],
                          "m1": (rng.random(300) < 0.7).astype(int), "m2": (rng.random(300) < 0.6).astype(int)})
    frame.to_parquet(tmp_path / "wide.parquet")
    assert main(["diagnose", str(tmp_path / "wide.parquet"), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert set(json.loads(captured.out)["models"]) == {"m1", "m2"}
    assert "column 'subject' (e.g. 's0') holds text" in captured.err


def test_a_model_column_with_a_malformed_first_score_is_not_a_label(tmp_path, capsys):
    # text in the first row but numbers below: a model whose first score is malformed, named as such
    (tmp_path / "w.csv").write_text("item,a,b,subject\nq1,n/a,0,x\nq2,1,1,y\nq3,0,1,\n")
    assert main(["diagnose", str(tmp_path / "w.csv")]) == 1
    err = capsys.readouterr().err
    assert "record line 2, field 'a': score 'n/a' is not a number" in err  # line 1 is the header
    # a label column with a blank cell is still a label (the blank is not a score)
    (tmp_path / "w2.csv").write_text("item,a,b,subject\nq1,1,0,x\nq2,1,1,y\nq3,0,1,\n")
    assert main(["diagnose", str(tmp_path / "w2.csv"), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert set(json.loads(captured.out)["models"]) == {"a", "b"} and "column 'subject'" in captured.err
