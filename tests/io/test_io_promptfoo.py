"""The promptfoo reader on the real export of ../shared/data/formats/promptfoo (oracle values from
its README: each row's score, their means, the llm-rubric passes and the failed runs), and on
variants written here in promptfoo's results-version-3 layout (repeats, several prompts per
provider, an errored row, clusters, hostile rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import llm_power as lp
from llm_power.errors import DataError
from llm_power.io.detect import detect_format, expand_paths


def test_the_real_export(shared_data):
    path = shared_data / "formats" / "promptfoo" / "sample-export.json"
    assert detect_format(path) == "promptfoo"
    frame = lp.read_results([path])
    got = {(r.model, r.item): r.score for r in frame.itertuples()}
    assert got == pytest.approx({("openai:gpt-5", "test0"): 0.5, ("openai:gpt-5", "test1"): 2 / 3,
                                 ("openai:gpt-5-mini", "test0"): 0.75, ("openai:gpt-5-mini", "test1"): 2 / 3})
    means = frame.groupby("model")["score"].mean()
    assert means["openai:gpt-5"] == pytest.approx(0.5833, abs=1e-4)  # README: 0.5833 and 0.7083
    assert means["openai:gpt-5-mini"] == pytest.approx(0.7083, abs=1e-4)
    assert lp.read_results([path], metric="llm-rubric")["score"].tolist() == [1.0] * 4  # every answer right
    assert lp.read_results([path], metric="success")["score"].tolist() == [0.0] * 4  # every row over 3 s
    assert path in expand_paths([path.parent])


def _row(test, prompt, provider, score, **over):
    ok = isinstance(score, float) and score >= 0.5
    row = {"testIdx": test, "promptIdx": prompt, "provider": {"id": provider, "label": ""}, "score": score,
           "success": ok, "failureReason": 0 if ok else 1, "vars": {"topic": f"t{test % 2}" if isinstance(test, int) else "t"},
           "testCase": {"vars": {}, "metadata": {"level": "hard"}},
           "gradingResult": {"pass": ok, "score": score,
                             "componentResults": [{"pass": ok, "score": score,
                                                   "assertion": {"type": "equals", "value": "x"}}]}}
    row.update(over)
    return row


def _write(tmp_path: Path, rows, prompts) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "eval-1", "results": {"version": 3, "timestamp": "t", "prompts": prompts,
                                                                  "results": rows, "stats": {}},
                                "config": {}, "metadata": {}}))
    return path


def test_repeats_prompts_errors_and_clusters(tmp_path):
    prompts = [{"label": "short", "provider": "p:a"}, {"label": "long", "provider": "p:a"},
               {"label": "short", "provider": "p:b"}]
    rows = [_row(0, 0, "p:a", 1.0, repeatIndex=0), _row(0, 0, "p:a", 0.0, repeatIndex=1),
            _row(1, 0, "p:a", 1.0), _row(0, 1, "p:a", 0.0), _row(1, 1, "p:a", 1.0),
            _row(0, 2, "p:b", 1.0), _row(1, 2, "p:b", 0.0, failureReason=2, error="timeout")]
    path = _write(tmp_path, rows, prompts)
    frame = lp.read_results([path], cluster="topic")
    got = {(r.model, r.item): (r.score, r.cluster) for r in frame.itertuples()}
    assert got == {("p:a [short]", "test0"): (0.5, "t0"), ("p:a [short]", "test1"): (1.0, "t1"),
                   ("p:a [long]", "test0"): (0.0, "t0"), ("p:a [long]", "test1"): (1.0, "t1"),
                   ("p:b", "test0"): (1.0, "t0")}  # the errored row is missing, not a zero
    assert lp.read_results([path], cluster="level")["cluster"].unique().tolist() == ["hard"]
    with pytest.raises(DataError, match="lacks|missing|intersect"):
        lp.align_results(frame)


@pytest.mark.parametrize(("rows", "match"), [
    ([_row(0, 0, "p:a", 1.0, repeatIndex=0), _row(0, 0, "p:a", 1.0, repeatIndex=0)],
     r"results\[1\].*appears twice for repeat 0 \(first at row 0\)"),
    ([_row("0", 0, "p:a", 1.0)], r"results\[0\].*integer 'testIdx' and 'promptIdx'"),
    ([_row(0, 0, "p:a", "high")], r"field 'score'"),
    ([_row(0, 0, "p:a", 1.0, failureReason=2)], r"no scored rows"),
    ([], r"no rows"),
])
def test_bad_rows_are_one_line(tmp_path, rows, match):
    path = _write(tmp_path, rows, [{"label": "x", "provider": "p:a"}])
    with pytest.raises(DataError, match=match) as err:
        lp.read_results([path])
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DataError, match=r"no metric 'bleu'.*available: 'score', 'success', 'equals'"):
        lp.read_results([_write(tmp_path, [_row(0, 0, "p:a", 1.0)], [])], metric="bleu")
