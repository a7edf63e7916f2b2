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
    assert "(--cluster category clusters by it)" in notes[0]  # the CLI names its flag, not the Python parameter


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


def test_one_model_writes_the_files_it_was_asked_for(tmp_path, capsys):
    from statsmodels.stats.proportion import proportion_confint

    name = "<img src=x onerror=alert(1)>@org/team"
    rng = np.random.default_rng(5)
    x = (rng.random(200) < 0.63).astype(int)
    pd.DataFrame({"item": [f"q{i}" for i in range(200)], name: x}).to_csv(tmp_path / "one.csv", index=False)
    out = {k: tmp_path / f"r.{k}" for k in ("json", "md", "html")}
    assert main(["diagnose", str(tmp_path / "one.csv"), "--json", str(out["json"]), "--markdown", str(out["md"]),
                 "--html", str(out["html"])]) == 0
    capsys.readouterr()
    got = json.loads(out["json"].read_text())
    low, high = proportion_confint(int(x.sum()), 200, alpha=0.05, method="wilson")
    assert got["model"] == name and got["n"] == 200 and got["mean"] == x.mean()
    assert got["low"] == pytest.approx(low, rel=1e-12) and got["high"] == pytest.approx(high, rel=1e-12)
    html = out["html"].read_text()
    assert "<img" not in html and "&lt;img src=x" in html and "<script" not in html
    assert f"{100 * low:.1f} – {100 * high:.1f}%" in html
    md = out["md"].read_text()
    assert "\\<img" in md and "<img" not in md.replace("\\<img", "")  # escaped: shown as text
    assert f"{100 * low:.1f} – {100 * high:.1f}%" in md
    assert "@org/team" not in md  # the mention is made inert
    # --parquet holds pairs: a usage error, and nothing is written
    assert main(["diagnose", str(tmp_path / "one.csv"), "--parquet", str(tmp_path / "p.parquet")]) == 2
    assert "one model has no pairs" in capsys.readouterr().err and not (tmp_path / "p.parquet").exists()


def test_logs_of_different_tasks_are_named_not_sent_to_on_missing(shared_data, capsys):
    folder = shared_data / "formats" / "inspect_ai"
    files = [str(folder / "data_arc_qwen.json"), str(folder / "mmlu-summary-choices.eval")]
    for extra in ([], ["--on-missing", "intersect"]):  # the same answer either way: no dead end
        assert main(["diagnose", *files, *extra]) == 1
        err = capsys.readouterr().err
        assert "different tasks" in err and "--on-missing" not in err, err
        assert "ollama/qwen2.5:0.5b: 3 items of task inspect_evals/arc_easy (in data_arc_qwen.json)" in err
        assert "openai/gpt-4o: 1 item of task inspect_evals/mmlu_0_shot (in mmlu-summary-choices.eval)" in err


def test_disjoint_wide_columns_are_named(tmp_path, capsys):
    (tmp_path / "w.csv").write_text("item,a,b\nq1,1,\nq2,0,\nq3,,1\n")
    assert main(["diagnose", str(tmp_path / "w.csv")]) == 1
    err = capsys.readouterr().err
    assert "no item is shared by all models" in err and "a: 2 items; b: 1 item" in err and "--on-missing" not in err


def test_units_and_words(tmp_path, capsys, shared_data):
    rng = np.random.default_rng(1)
    a = rng.normal(5, 1, 300)
    b = a + rng.normal(0.02, 0.3, 300)
    pd.DataFrame({"item": [f"q{i}" for i in range(300)], "a": a, "b": b}).to_csv(tmp_path / "g.csv", index=False)
    # the gate explains its 90% CI and, on graded scores with the default margin, the margin's units
    assert main(["gate", "a", "b", "--data", str(tmp_path / "g.csv")]) in (0, 3, 4)
    out = " ".join(capsys.readouterr().out.split())
    assert "The 90% CI is the two one-sided tests at alpha = 0.05" in out
    assert "the default margin 0.01 is in their units" in out
    assert main(["gate", "a", "b", "--data", str(tmp_path / "g.csv"), "--margin", "0.1"]) in (0, 3, 4)
    assert "default margin" not in capsys.readouterr().out
    # graded report: one precision for scores, intervals and gaps; no "disagreement rate"
    assert main(["diagnose", str(shared_data / "wmt20_mqm" / "wmt20_mqm_ende_wide.csv.gz")]) == 0
    out = capsys.readouterr().out
    models = out.split("Models (", 1)[1].split("Resolution of", 1)[0]
    numbers = [t for t in models.replace("–", " ").split() if t.lstrip("-").replace(".", "", 1).isdigit()
               and "." in t]
    assert numbers and len({len(t.lstrip("-").split(".")[1]) for t in numbers}) == 1, numbers
    assert "disagreement rate" not in out and "same spread of the paired differences" in out
    # aggregate: accuracies in percent beside gaps in points; plurals; "all N pairs"
    assert main(["aggregate", str(shared_data / "formats" / "lm_eval")]) == 0
    out = capsys.readouterr().out
    assert "0.00%" in out and "0.0000" not in out
    mmlu = shared_data / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    assert main(["diagnose", str(mmlu), "--on-missing", "intersect", "--pairs", "all", "--top", "4"]) == 0
    out = capsys.readouterr().out
    assert "Resolution of all 6 pairs" in out and "6 all pairs" not in out


def test_passk_explains_its_columns_once_and_says_what_its_mark_means(tmp_path, capsys):
    rng = np.random.default_rng(4)
    rows = [f"{m},q{i},{s},{int(rng.random() < (0.5 if m == 'x' else 0.3))}"
            for m in "xy" for i in range(60) for s in range(5)]
    (tmp_path / "s.csv").write_text("model,item,sample,score\n" + "\n".join(rows) + "\n")
    assert main(["passk", str(tmp_path / "s.csv"), "--k", "1", "5"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("New questions: what generalises") == 1  # once, not once per model
    assert "band ≠ 0" in out and "resolved" not in out  # "resolved" keeps its one meaning (q ≥ 1 and the test)


def test_the_matrix_tick_contrasts_with_every_resolved_cell():
    from matplotlib.colors import to_rgb

    from llm_power.report.html import MATRIX_COLOURS, _ink

    def contrast(c1, c2):  # WCAG 2 contrast ratio, written from the definition
        def lum(c):
            lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in to_rgb(c)]
            return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
        hi, lo = sorted((lum(c1), lum(c2)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    for colour in MATRIX_COLOURS[4:]:  # a resolved pair has q >= 1
        assert contrast(_ink(to_rgb(colour)), colour) >= 4.5, colour


def test_one_more_item_is_singular_and_mde_ticks_are_plain_numbers():
    from llm_power.report.view import NextStep

    step = NextStep(regime="", model_a="a", model_b="b", gap="+1.00 points", n_star="101", more=1, clustered=False)
    assert "about 1 more item like these" in step.text()
    step = NextStep(regime="", model_a="a", model_b="b", gap="+1.00 points", n_star="102", more=2, clustered=False)
    assert "about 2 more items like these" in step.text()
    # the MDE plot's axes: plain numbers (1,000 items; 0.5 / 1 / 2 points), never 10^k alone
    import re

    from llm_power.report.html import render_html

    rng = np.random.default_rng(0)
    x = (rng.random((2_000, 3)) < [0.7, 0.68, 0.6]).astype(int)
    html = render_html(lp.diagnose(x, models=["a", "b", "c"]))
    mde = html[html.index('aria-label="Minimum detectable'):]
    mde = mde[:mde.index("</svg>")]
    labels = set(re.findall(r">([0-9][0-9,.]*)</text>", mde))
    assert {"1,000", "10,000", "100,000"} <= labels, labels
    assert {"1", "2", "5"} & labels and "mathdefault" not in mde
