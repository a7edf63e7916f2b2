"""The Every Eval Ever writer: every record validates against EEE's own JSON schema (0.3.0, in
../shared/data/formats/every_eval_ever/schemas), its numbers are the ones computed here
independently (numpy's SD with ddof 1, the Wilson interval of scipy-free closed form via
lp.proportion_ci, Student t from scipy, the closed-form CR2 variance of a mean), and it reads back
through the EEE aggregate reader and ``llm-power aggregate`` to the same numbers."""

from __future__ import annotations

import json
import math
import os

import jsonschema
import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power.cli.main import main
from llm_power.io.aggregate import read_eee_aggregates


@pytest.fixture
def validator(shared_data):
    schema = json.loads((shared_data / "formats" / "every_eval_ever" / "schemas" / "eval.schema.json").read_text())
    assert schema["version"] == "0.3.0"  # the schema the writer follows
    return jsonschema.Draft7Validator(schema)


def _cr2_se(y: np.ndarray, g: np.ndarray) -> float:
    """CR2 (Bell-McCaffrey) SE of a mean: for an intercept-only fit (I - H_gg)^(-1/2) scales each
    cluster's residual sum by (1 - n_g / n)^(-1/2), so V = sum_g (sum_i e_i)^2 / (1 - n_g / n) / n^2."""
    e, n = y - y.mean(), y.size
    return math.sqrt(sum(e[g == h].sum() ** 2 / (1 - np.sum(g == h) / n) for h in np.unique(g)) / n**2)


@pytest.mark.parametrize("design", ["binary", "graded", "clustered"])
def test_records_validate_and_hold_the_numbers(validator, design):
    rng = np.random.default_rng(3)
    n = 500
    names = ["org/model-a", "модель β", "org_model-a"]  # unicode, and two names one sanitising would merge
    if design == "graded":
        x = rng.beta(2, 2, (n, 3))
    else:
        x = (rng.random((n, 3)) < [0.72, 0.66, 0.61]).astype(float)
    g = rng.integers(0, 40, n) if design == "clustered" else None
    diag = lp.diagnose(x, models=names, cluster=g)
    records = lp.to_eee(diag, benchmark="toy", retrieved_timestamp=1_700_000_000)
    assert [r["model_info"]["id"] for r in records] == diag.models
    for rec in records:
        errors = sorted(validator.iter_errors(rec), key=str)
        assert not errors, errors[0].message
        j = names.index(rec["model_info"]["id"])
        y = x[:, j]
        (res,) = rec["evaluation_results"]
        unc = res["score_details"]["uncertainty"]
        assert res["score_details"]["score"] == pytest.approx(y.mean(), rel=1e-12)
        assert unc["num_samples"] == n and unc["standard_deviation"] == pytest.approx(np.std(y, ddof=1), rel=1e-12)
        ci = unc["confidence_interval"]
        assert ci["confidence_level"] == 0.95
        if design == "clustered":
            assert unc["standard_error"]["value"] == pytest.approx(_cr2_se(y, g), rel=1e-10)
            assert "CR2" in unc["standard_error"]["method"] and "CR2" in ci["method"]
        else:
            assert unc["standard_error"]["value"] == pytest.approx(np.std(y, ddof=1) / math.sqrt(n), rel=1e-12)
        if design == "binary":
            want = lp.proportion_ci(int(y.sum()), n, method="wilson")
            assert (ci["lower"], ci["upper"]) == pytest.approx((want.low, want.high), rel=1e-12)
            assert ci["method"] == "wilson" and res["metric_config"]["score_type"] == "binary"
        if design == "graded":
            half = stats.t.ppf(0.975, n - 1) * np.std(y, ddof=1) / math.sqrt(n)
            assert (ci["lower"], ci["upper"]) == pytest.approx((y.mean() - half, y.mean() + half), rel=1e-12)
            assert ci["method"] == "student-t" and res["metric_config"]["score_type"] == "continuous"


def test_written_files_read_back_to_the_same_numbers(tmp_path, validator, capsys):
    rng = np.random.default_rng(4)
    x = (rng.random((800, 3)) < [0.7, 0.65, 0.5]).astype(float)
    names = ["org/a", "org_a", "b"]
    diag = lp.diagnose(x, models=names)
    files = lp.write_eee(diag, tmp_path / "eee", benchmark="toy", retrieved_timestamp=0)
    assert len({f.name for f in files}) == 3 and not list((tmp_path / "eee").glob(".*"))  # no temp files left
    back = {s.model: s for s in read_eee_aggregates(tmp_path / "eee")}
    for k, name in enumerate(diag.models):
        assert validator.is_valid(json.loads(files[k].read_text()))
        s = back[name]
        assert (s.value, s.stderr, s.n) == (float(diag.means[k]), float(diag.model_se[k]), 800)
    assert main(["aggregate", str(tmp_path / "eee"), "--format", "json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)["scores"]}
    for k, name in enumerate(diag.models):  # the aggregate command's Wilson interval is the report's
        assert (rows[name]["ci_low"], rows[name]["ci_high"]) == pytest.approx(
            (float(diag.model_ci_low[k]), float(diag.model_ci_high[k])), rel=1e-12)


def test_cli_writes_records_next_to_the_report_and_never_into_an_input(tmp_path, capsys, shared_data):
    src = shared_data / "formats" / "every_eval_ever" / "converted_v0.3.0"
    files = [str(src / "arc_easy_qwen2.5-0.5b_samples.jsonl"), str(src / "arc_easy_claude-sonnet-4_samples.jsonl")]
    out = tmp_path / "records"
    assert main(["diagnose", *files, "--on-missing", "intersect", "--eee", str(out), "--ranks", "off"]) == 0
    written = sorted(out.glob("*.json"))
    assert len(written) == 2
    rec = json.loads(written[0].read_text())
    assert rec["evaluation_results"][0]["evaluation_name"] == "arc_easy"  # the task the item ids share
    assert rec["evaluation_results"][0]["score_details"]["uncertainty"]["num_samples"] == 3
    # into an input folder, or through a symlink: refused before anything is read or written
    assert main(["diagnose", str(src), "--eee", str(src / "out")]) == 2
    assert "lies inside the input" in capsys.readouterr().err and not (src / "out").exists()
    link = tmp_path / "link"
    os.symlink(tmp_path / "elsewhere", link)
    assert main(["diagnose", *files, "--on-missing", "intersect", "--eee", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err and not (tmp_path / "elsewhere").exists()
    with pytest.raises(ValueError, match="evaluator_relationship"):
        lp.to_eee(lp.diagnose(np.eye(4)[:, :2]), evaluator_relationship="friend")


def test_standard_errors_are_the_published_alpacaeval_ones(shared_data, validator):
    """AlpacaEval 2.0 (58 models x 805 instructions, per-item preferences vs GPT-4-Turbo): the
    leaderboard publishes each model's win rate and standard error (README: the i.i.d. SE with
    ddof 1); the records of the models with every item carry exactly those numbers."""
    import pandas as pd

    folder = shared_data / "alpaca_eval2"
    prefs = pd.read_csv(folder / "alpaca_eval2_preference.csv.gz")
    published = pd.read_csv(folder / "models.csv").set_index("model")
    cols = [c for c in prefs.columns[2:] if prefs[c].notna().all() and pd.notna(published.loc[c, "lb_standard_error"])
            and c != "gpt4_1106_preview"]
    assert len(cols) >= 40  # the precondition: most models have all 805 items and a published SE
    diag = lp.diagnose(prefs[cols].to_numpy() - 1.0, models=cols)  # preference 1..2 -> win share 0..1
    for rec in lp.to_eee(diag, benchmark="alpaca_eval_2"):
        assert validator.is_valid(rec)
        model = rec["model_info"]["id"]
        details = rec["evaluation_results"][0]["score_details"]
        assert 100 * details["score"] == pytest.approx(published.loc[model, "lb_win_rate"], rel=1e-6)
        se = details["uncertainty"]["standard_error"]["value"]
        assert 100 * se == pytest.approx(published.loc[model, "lb_standard_error"], rel=1e-6)
