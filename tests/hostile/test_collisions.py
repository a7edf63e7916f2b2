"""Issue 40, silent collisions in readers: two promptfoo providers with one id and different labels were
merged into one averaged model on 7302bb3 (n doubled, the scores averaged). Each column of promptfoo's
table is one model here.
"""

from __future__ import annotations

import json

import llm_power as lp


def _export(tmp_path, providers, prompts):
    rows = []
    for k, (prov, _) in enumerate(zip(providers, prompts, strict=True)):
        for t in range(30):
            score = float((t * (k + 3)) % 4 == 0)
            rows.append({"promptIdx": k, "testIdx": t, "provider": prov, "score": score, "success": score == 1.0,
                         "failureReason": 0 if score else 1, "vars": {}})
    data = {"evalId": "eval-x", "results": {"version": 3, "timestamp": "2026-01-01T00:00:00Z",
                                            "prompts": prompts, "results": rows,
                                            "stats": {"successes": 0, "failures": 0}}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_providers_with_one_id_and_different_labels_stay_apart(tmp_path):
    prompts = [{"raw": "Q: {{q}}", "label": "plain", "provider": "openai:gpt-4o"}] * 2
    path = _export(tmp_path, [{"id": "openai:gpt-4o", "label": "temp-0"}, {"id": "openai:gpt-4o", "label": "temp-1"}],
                   prompts)
    frame = lp.read_results(path)
    assert sorted(set(frame["model"])) == ["temp-0", "temp-1"]
    assert frame.groupby("model").size().tolist() == [30, 30]  # n not doubled


def test_the_same_provider_and_prompt_label_twice_is_two_columns(tmp_path):
    prompts = [{"raw": "Q: {{q}}", "label": "p", "provider": "m"}, {"raw": "Q2: {{q}}", "label": "p", "provider": "m"}]
    path = _export(tmp_path, [{"id": "m", "label": ""}, {"id": "m", "label": ""}], prompts)
    frame = lp.read_results(path)
    assert sorted(set(frame["model"])) == ["m [p] [column 0]", "m [p] [column 1]"]
    assert frame.groupby("model").size().tolist() == [30, 30]


def _cli(args, cwd):
    from _cli import run

    return run(args, cwd=cwd)  # main() in process, seen as a subprocess sees it (tests/_cli.py)


def test_a_list_or_object_is_never_an_id(tmp_path):
    """On 7302bb3 a list-valued item id was taken as its repr ("['x']"), so distinct records could collide
    or split; now one line names the file, record and field, in every reader of ids."""
    import pandas as pd
    import pytest

    cases = {
        "passk": ('{"model":"a","item":["x"],"sample":0,"score":1}\n{"model":"a","item":["y"],"sample":1,"score":0}\n',
                  "s.jsonl", "field 'item': is a list"),
        "passk2": ('{"model":["a"],"item":"x","sample":0,"score":1}\n', "m.jsonl", "field 'model': is a list"),
        "diagnose": ('{"model":"a","item":{"q":1},"score":1}\n{"model":"b","item":"y","score":0}\n', "l.jsonl",
                     "field 'item': is an object"),
    }
    for command, (text, name, phrase) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        out = _cli([command.rstrip("2"), str(path)], tmp_path)
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert out.returncode == 1 and len(lines) == 1 and name in lines[0] and phrase in lines[0], out.stderr
    pq = tmp_path / "wide.parquet"
    pd.DataFrame({"item": [["q1"], ["q2"]], "a": [1, 0], "b": [0, 1]}).to_parquet(pq)
    out = _cli(["diagnose", str(pq)], tmp_path)
    assert out.returncode == 1 and "wide.parquet, record row 0, field 'item': is a list" in out.stderr, out.stderr
    with pytest.raises(lp.DataError, match="is a list"):
        lp.read_results(tmp_path / "s.jsonl")


def test_a_pass_k_sample_given_twice_names_its_files(tmp_path):
    """On 7302bb3 a (model, item, sample) given twice said so without naming any file; now the one line
    names the file (or both files) where it appears."""
    body = "model,item,sample,score\nm,a,0,1\nm,b,0,0\n"
    (tmp_path / "one.csv").write_text(body, encoding="utf-8")
    (tmp_path / "copy.csv").write_text(body, encoding="utf-8")
    (tmp_path / "twice.csv").write_text(body + "m,a,0,0\n", encoding="utf-8")
    res = _cli(["passk", "one.csv", "copy.csv"], tmp_path)
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1
    assert "in one.csv and again in copy.csv" in res.stderr
    res = _cli(["passk", "twice.csv"], tmp_path)
    assert res.returncode == 1 and "twice in twice.csv" in res.stderr


def _deepeval_folder(root, folder, model, shared_data):
    body = json.loads((shared_data / "formats" / "deepeval" / "latest_test_run_beeai_f8b9dba.json").read_text("utf-8"))
    body["testRunData"]["hyperparameters"] = {"model": model}
    path = root / folder / ".deepeval" / ".latest_test_run.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_one_model_in_two_deepeval_folders_is_refused_not_pooled(tmp_path, shared_data):
    """Two DeepEval folders whose runs name one model, or one run given as its folder and as its file,
    would double that model's n if pooled: one line names the model, an item and the files."""
    first = _deepeval_folder(tmp_path, "run1", "gpt-x", shared_data)
    _deepeval_folder(tmp_path, "run2", "gpt-x", shared_data)
    _deepeval_folder(tmp_path, "other", "gpt-y", shared_data)
    res = _cli(["diagnose", "run1", "run2", "other"], tmp_path)
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "model 'gpt-x' has item" in res.stderr and "more than once" in res.stderr
    assert "run1/.deepeval/.latest_test_run.json" in res.stderr and "run2/.deepeval" in res.stderr
    res = _cli(["diagnose", "run1", "other", str(first.relative_to(tmp_path))], tmp_path)
    assert res.returncode == 1 and "model 'gpt-x' has item" in res.stderr and "more than once" in res.stderr
    res = _cli(["diagnose", "run1", "other"], tmp_path)
    assert res.returncode == 0, res.stderr
