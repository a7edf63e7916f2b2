"""read_samples and `llm-power passk`: inspect epochs kept apart, EvalPlus samples, SWE-bench runs
as samples with the instance list as denominator; the CLI's numbers equal the API's."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from llm_power import compare_pass_at_k, pass_at_k_ci
from llm_power.cli.main import main
from llm_power._core.errors import DataError
from llm_power.io import read_samples, sample_matrices


def _truth(seed, n_q=40, n_s=6, shift=0.0):
    rng = np.random.default_rng(seed)
    p = np.clip(rng.beta(0.6, 0.9, n_q) + shift, 0, 1)
    return (rng.random((n_q, n_s)) < p[:, None]).astype(int)


def _inspect_log(path, model, x, archive=False):
    samples = [{"id": f"q{i}", "epoch": e + 1, "scores": {"match": {"value": "C" if x[i, e] else "I"}},
                "metadata": {"subject": f"s{i % 5}"}} for i in range(x.shape[0]) for e in range(x.shape[1])]
    if archive:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("header.json", json.dumps({"version": 2, "eval": {"model": model, "task": "math"}}))
            z.writestr("summaries.json", json.dumps(samples))
    else:
        path.write_text(json.dumps({"version": 2, "eval": {"model": model, "task": "math"}, "samples": samples}))
    return path


def test_inspect_epochs_are_samples_not_averaged(tmp_path):
    x = _truth(0)
    frame = read_samples(_inspect_log(tmp_path / "a.eval", "model-a", x, archive=True), cluster="subject")
    assert len(frame) == x.size and set(frame["sample"]) == {str(e) for e in range(1, 7)}
    wide = sample_matrices(frame)["model-a"]
    order = [int(item.split(":q")[1]) for item in wide.index]
    np.testing.assert_array_equal(wide.to_numpy(), x[order])
    assert frame.groupby("item")["cluster"].nunique().max() == 1


def test_evalplus_files(tmp_path):
    x = _truth(1)
    base = np.maximum(x, _truth(2))  # base tests pass at least as often as base + plus
    tasks = {f"HumanEval/{i}": [{"task_id": f"HumanEval/{i}", "solution": "...",
                                 "base_status": "pass" if base[i, s] else "fail",
                                 "plus_status": "pass" if x[i, s] else "fail"} for s in range(6)] for i in range(40)}
    path = tmp_path / "codegen-16b_temp_0.8_eval_results.json"
    path.write_text(json.dumps({"date": "2024-01-01", "eval": tasks}))
    frame = read_samples(path)
    assert set(frame["model"]) == {"codegen-16b_temp_0.8"}
    wide = sample_matrices(frame)["codegen-16b_temp_0.8"].loc[[f"HumanEval/{i}" for i in range(40)]]
    np.testing.assert_array_equal(wide.to_numpy(), x * base)
    only_base = sample_matrices(read_samples(path, metric="base"))["codegen-16b_temp_0.8"]
    assert only_base.to_numpy().sum() == base.sum()
    tasks["HumanEval/3"][2]["plus_status"] = "crashed"
    path.write_text(json.dumps({"eval": tasks}))
    with pytest.raises(DataError, match="task HumanEval/3 sample 2, field 'plus_status': 'crashed' is not a status"):
        read_samples(path)


def test_swebench_runs_with_an_instance_list(tmp_path):
    ids = [f"django__django-{k}" for k in range(30)]
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    x = _truth(3, n_q=30, n_s=3)
    for run in range(3):
        resolved = [i for i, ok in zip(ids, x[:, run], strict=True) if ok]
        submitted = ids[:20]  # the report names only what was submitted
        (tmp_path / f"my-agent.run{run}.json").write_text(json.dumps({
            "total_instances": 30, "submitted_instances": 20, "resolved_ids": resolved,
            "unresolved_ids": [i for i in submitted if i not in resolved]}))
    reports = sorted(tmp_path.glob("my-agent.*.json"))
    with pytest.raises(DataError, match="covers .* of total_instances = 30"):
        read_samples(reports)
    frame = read_samples(reports, instances=tmp_path / "ids.txt")
    wide = sample_matrices(frame)["my-agent"].loc[ids]
    np.testing.assert_array_equal(wide.to_numpy(), x)


def test_long_table_and_duplicates(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("model,item,sample,score\nm,q1,1,1\nm,q1,2,0\nm,q2,1,1\nm,q2,2,1\n")
    assert len(read_samples(path)) == 4
    path.write_text("model,item,sample,score\nm,q1,1,1\nm,q1,1,0\n")
    with pytest.raises(DataError, match="appears twice"):
        read_samples(path)


def test_cli_equals_the_api(tmp_path, capsys):
    a, b = _truth(4, shift=0.15), _truth(4)
    files = [_inspect_log(tmp_path / "a.json", "tuned", a), _inspect_log(tmp_path / "b.json", "base", b)]
    assert main(["passk", *map(str, files), "--k", "1", "3", "6", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    for name, x in (("tuned", a), ("base", b)):
        res = pass_at_k_ci(x, [1, 3, 6])
        np.testing.assert_allclose(payload["models"][name]["estimate"], res.estimate, rtol=1e-12)
        np.testing.assert_allclose(payload["models"][name]["se_questions"], res.standard_error, rtol=1e-12)
        fixed = pass_at_k_ci(x, [1, 3, 6], population="fixed_questions")
        np.testing.assert_allclose(payload["models"][name]["se_fixed_questions"], fixed.standard_error, rtol=1e-12)
    assert list(payload["models"]) == ["base", "tuned"]  # name order, whatever the file order
    cmp = compare_pass_at_k(b, a, [1, 3, 6], rng=0)  # the first minus the second: base - tuned
    assert payload["comparison"]["a"] == "base"
    np.testing.assert_allclose(payload["comparison"]["difference"], cmp.difference, rtol=1e-12)
    assert payload["comparison"]["band_excludes_zero"] == cmp.band_excludes_zero.tolist()
    assert main(["passk", *map(str, files[::-1]), "--k", "1", "3", "6", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == payload  # the file order never matters
    assert main(["passk", *map(str, files), "--k", "1", "3", "6", "--format", "json", "--baseline", "base"]) == 0
    swapped = json.loads(capsys.readouterr().out)["comparison"]
    cmp = compare_pass_at_k(a, b, [1, 3, 6], rng=0)  # --baseline base: tuned - base
    assert (swapped["a"], swapped["b"]) == ("tuned", "base")
    np.testing.assert_allclose(swapped["difference"], cmp.difference, rtol=1e-12)
    np.testing.assert_allclose(swapped["band_ci_low"], cmp.band_ci_low, rtol=1e-12)
    assert main(["passk", *map(str, files), "--baseline", "nobody"]) == 1
    assert "--baseline 'nobody' must name one of exactly two models" in capsys.readouterr().err
    assert main(["passk", *map(str, files), "--k", "1", "6"]) == 0
    out = capsys.readouterr().out
    assert "CI, new questions" in out and "band (all k)" in out
    assert main(["passk", str(files[0]), "--k", "7"]) == 1
    assert "k = 7 but question" in capsys.readouterr().err


def test_cli_diagnose_at_one_k_equals_the_api(tmp_path, capsys):
    from llm_power import diagnose, pass_at_k_matrix

    xs = {name: _truth(5, shift=s) for name, s in (("base", 0.0), ("mid", 0.08), ("tuned", 0.16))}
    files = [str(_inspect_log(tmp_path / f"{name}.json", name, x)) for name, x in xs.items()]
    assert main(["passk", *files, "--k", "1", "--diagnose", "3", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    values, names = pass_at_k_matrix(xs, 3)
    diag = diagnose(values, models=names, rng=0)
    np.testing.assert_allclose(payload["diagnosis"]["pvalue"], diag.to_frame()["pvalue"], rtol=1e-12)
    assert payload["diagnosis"]["model_a"] == diag.to_frame()["model_a"].tolist()


def _lm_eval_file(folder, model, x, metric="pass@1", k=1):
    from llm_power import pass_at_k

    run = folder / model
    run.mkdir(parents=True)
    date = "2025-01-01T00-00-00.000000"
    (run / f"results_{date}.json").write_text(json.dumps({"model_name": model, "config": {"model": "hf"}}))
    lines = []
    for i, row in enumerate(x):
        n, c = row.size, int(row.sum())
        lines.append(json.dumps({"doc_id": i, "doc": {"subject": f"s{i % 3}"}, "filter": "create_test",
                                "resps": [[f"def f(): return {j}" for j in range(n)]], "metrics": [metric],
                                metric: float(pass_at_k(n, c, k))}))
    path = run / f"samples_humaneval_{date}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_lm_eval_repeats_give_the_counts_of_passing_repeats(tmp_path):
    x = _truth(6, n_q=25, n_s=10)
    frame = read_samples(_lm_eval_file(tmp_path, "org/coder", x), cluster="subject")
    wide = sample_matrices(frame)["org/coder"]
    order = [int(item.split(":")[1]) for item in wide.index]
    np.testing.assert_array_equal(wide.to_numpy().sum(axis=1), x[order].sum(axis=1))
    assert wide.shape == (25, 10)
    res = pass_at_k_ci(wide.to_numpy(dtype=float), [1, 5])
    np.testing.assert_allclose(res.estimate, pass_at_k_ci(x, [1, 5]).estimate, rtol=1e-12)
    # pass@3 of 10 repeats is invertible where fewer than 8 passed
    y = np.zeros((5, 10))
    for i, c in enumerate([0, 2, 4, 6, 7]):
        y[i, :c] = 1
    frame = read_samples(_lm_eval_file(tmp_path / "k3", "m", y, metric="pass@3", k=3))
    assert sample_matrices(frame)["m"].to_numpy().sum(axis=1).tolist() == [0, 2, 4, 6, 7]
    # pass@10 of 10 repeats is 1 whenever one passed: the count is unknowable
    with pytest.raises(DataError, match="does not say how many passed"):
        read_samples(_lm_eval_file(tmp_path / "k10", "m", x[:3], metric="pass@10", k=10))
