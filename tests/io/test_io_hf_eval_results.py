"""Hugging Face Hub eval results (``.eval_results/*.yaml``, model cards' ``model-index``) in
``llm-power aggregate``. The shared files are the specification's templates
(../shared/data/formats/hf_eval_results/README.md): the template entry fails on its placeholder
in one line, the real minimal entry (copied from the spec verbatim) reads to gpqa_diamond 0.412,
the card's front matter fails cleanly; the interval without a standard error is the Wilson
interval at the value (statsmodels, a fractional count), conservative for scores in [0, 1]."""

from __future__ import annotations

import json

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from llm_power import DataError
from llm_power.cli.main import main
from llm_power.io.aggregate import read_aggregates, read_hf_eval_results


@pytest.fixture
def spec(shared_data):
    return shared_data / "formats" / "hf_eval_results"


def _repo(tmp_path, name, text):
    folder = tmp_path / name / ".eval_results"
    folder.mkdir(parents=True)
    (folder / "results.yaml").write_text(text, encoding="utf-8")
    return tmp_path / name


def test_the_specs_minimal_entry_reads_and_its_template_fails_in_one_line(spec, tmp_path):
    text = (spec / "eval_results.yaml").read_text(encoding="utf-8")
    minimal = text[text.index("- dataset:\n    id: Idavidrein/gpqa"):]  # the spec's "only the required attributes"
    repo = _repo(tmp_path, "org__model", minimal)
    [score] = read_hf_eval_results(repo, items={"gpqa_diamond": 198})
    assert (score.model, score.task, score.metric, score.value, score.n, score.stderr) == \
        ("org__model", "gpqa_diamond", "value", 0.412, 198, None)
    with pytest.raises(DataError, match=r"entry 0.*task_id.*template placeholder") as err:
        read_hf_eval_results(spec / "eval_results.yaml", items=198)
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="not valid YAML front matter") as err:
        read_hf_eval_results(spec / "modelcard.md", items=198)
    assert "modelcard.md" in str(err.value) and "\n" not in str(err.value)


def test_percentages_model_index_and_the_missing_item_count(tmp_path):
    repo = _repo(tmp_path, "hle-model", "- dataset: {id: cais/hle, task_id: hle}\n  value: 20.90\n")
    [score] = read_hf_eval_results(repo, items=2500)
    assert score.value == pytest.approx(0.209)
    with pytest.raises(DataError, match=r"--items hle=N"):
        read_hf_eval_results(repo)
    card = tmp_path / "card" / "README.md"
    card.parent.mkdir()
    card.write_text("---\nlicense: mit\nmodel-index:\n- name: my-model\n  results:\n  - task: {type: text-generation}\n"
                    "    dataset: {type: gsm8k, name: GSM8K, config: main}\n    metrics:\n"
                    "    - {type: accuracy, value: 0.781}\n---\n# My model\n", encoding="utf-8")
    [score] = read_aggregates(card, items={"gsm8k:main": 1319})
    assert (score.model, score.task, score.metric, score.value, score.n) == ("my-model", "gsm8k:main", "accuracy",
                                                                             0.781, 1319)
    quoted = _repo(tmp_path, "quoted", "- dataset: {id: a/b, task_id: t}\n  value: '41.2%'\n")
    assert read_hf_eval_results(quoted, items=10)[0].value == pytest.approx(0.412)
    small = _repo(tmp_path, "small", "- dataset: {id: a/b, task_id: t}\n  value: '0.5%'\n")
    assert read_hf_eval_results(small, items=10)[0].value == pytest.approx(0.005)
    bad = _repo(tmp_path, "bad", "- dataset: {id: a/b, task_id: t}\n  value: 140\n")
    with pytest.raises(DataError, match="neither a fraction"):
        read_hf_eval_results(bad, items=10)


def test_aggregate_cli_gives_the_wilson_interval_at_the_value(tmp_path, capsys):
    a = _repo(tmp_path, "org__a", "- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}\n  value: 0.412\n")
    b = _repo(tmp_path, "org__b", "- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}\n  value: 35.4\n")
    assert main(["aggregate", str(a), str(b), "--items", "gpqa_diamond=198", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = out["scores"][0]
    low, high = proportion_confint(0.412 * 198, 198, alpha=0.05, method="wilson")
    assert first["interval"] == "wilson bound"
    assert (first["ci_low"], first["ci_high"]) == pytest.approx((low, high), rel=1e-10)
    assert out["pairs"][0]["task"] == "gpqa_diamond"
    assert main(["aggregate", str(a), "--items", "zero"]) == 2  # a bad option value: usage
    assert "--items 'zero'" in capsys.readouterr().err


def test_the_bound_covers_averaged_repeats():
    """Scores that are the mean of 4 repeats per item (values in {0, .25, .5, .75, 1}): the Wilson
    interval at the mean covers the true mean at least at its level (the variance bound)."""
    from llm_power.planning import aggregate_interval

    rng = np.random.default_rng(0)
    p_item = rng.beta(2, 3, 400)
    truth = p_item.mean()
    hits, reps = 0, 2000
    for _ in range(reps):
        items = rng.choice(400, 150, replace=True)
        value = rng.binomial(4, p_item[items]).mean() / 4
        low, high, kind = aggregate_interval(value, 150, None, 0.95)
        hits += low <= truth <= high
    assert kind == "wilson bound" and hits / reps >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)
