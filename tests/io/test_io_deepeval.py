"""The DeepEval reader on the two real test-run files of ../shared/data/formats/deepeval (oracle
values from its README: every metric's score per test case, the errored metrics of the unfinished
run), and on runs written here in DeepEval's layout (two models in their own .deepeval folders,
clusters, hostile cases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import llm_power as lp
from llm_power.errors import DataError
from llm_power.io.detect import detect_format, expand_paths

#: README: per metric, the scores of test_case_0 and test_case_1
SCORES = {"Exact Match": (1.0, 0.0), "AnswerLLMJudgeMetric": (1.0, 1.0), "Answer Relevancy": (1.0, 1.0),
          "Contextual Recall": (1.0, 1.0), "Faithfulness": (1.0, 1.0), "Tool Correctness": (0.5, 0.5),
          "ToolUsageMetric": (1.0, 0.75), "Argument Correctness": (0.0, 0.0), "FactsSimilarityMetric": (0.5, 0.5)}


def test_the_finished_run(shared_data):
    path = shared_data / "formats" / "deepeval" / "latest_test_run_beeai_f8b9dba.json"
    assert detect_format(path) == "deepeval"
    for metric, want in SCORES.items():
        frame = lp.read_results([path], metric=metric)
        assert frame.sort_values("item")["score"].tolist() == list(want), metric
    # both test cases fail (Argument Correctness): testPassed 0, testFailed 2
    assert lp.read_results([path])["score"].tolist() == [0.0, 0.0]
    assert lp.read_results([path], metric="Tool Correctness.success")["score"].tolist() == [1.0, 1.0]  # 0.5 >= 0.5


def test_the_unfinished_run_leaves_errored_metrics_missing(shared_data):
    path = shared_data / "formats" / "deepeval" / "temp_test_run_data_beeai_cfbc9c3.json"
    present = {"Exact Match": 0.0, "AnswerLLMJudgeMetric": 0.0, "Tool Correctness": 0.5, "ToolUsageMetric": 1.0,
               "FactsSimilarityMetric": 0.8}
    for metric, want in present.items():
        assert lp.read_results([path], metric=metric)["score"].tolist() == [want]
    for metric in ("Answer Relevancy", "Contextual Recall", "Faithfulness", "Argument Correctness", None):
        with pytest.raises(DataError, match="every one errored"):  # missing, never a 0
            lp.read_results([path], metric=metric)


def _run(folder: Path, cases, name: str = ".latest_test_run.json", wrap: bool = True):
    folder.mkdir(parents=True, exist_ok=True)
    body = {"testCases": cases, "conversationalTestCases": [], "metricsScores": [], "prompts": [],
            "testPassed": 0, "testFailed": 0, "runDuration": 1.0}
    (folder / name).write_text(json.dumps({"testRunData": body} if wrap else body))
    return folder / name


def _case(name, score, topic="a", **over):
    case = {"name": name, "input": "q", "actualOutput": "x", "expectedOutput": "y", "success": score >= 0.5,
            "metricsData": [{"name": "Correctness", "threshold": 0.5, "success": score >= 0.5, "score": score}],
            "order": 0, "additionalMetadata": {"topic": topic}}
    case.update(over)
    return case


def test_two_models_in_their_own_folders_pair_by_test_case(tmp_path):
    for model, scores in (("model-a", (1.0, 0.0, 1.0)), ("model-b", (0.0, 0.0, 1.0))):
        _run(tmp_path / model / ".deepeval", [_case(f"test_case_{i}", s, topic="t" + str(i % 2))
                                               for i, s in enumerate(scores)])
    (tmp_path / "model-a" / ".deepeval" / ".temp_test_run_data.json").write_text("{}")  # ignored beside the finished run
    found = expand_paths([tmp_path])
    assert [p.parent.parent.name for p in found] == ["model-a", "model-b"]
    aligned = lp.align_results(lp.read_results(found, cluster="topic"))
    assert aligned.models == ["model-a", "model-b"] and aligned.scores.tolist() == [[1, 0], [0, 0], [1, 1]]
    assert list(aligned.clusters) == ["t0", "t1", "t0"]


@pytest.mark.parametrize(("cases", "match"), [
    ([_case("c", 1.0), _case("c", 0.0)], r"testCases\[1\].*'c' appears twice"),
    ([_case("", 1.0)], r"testCases\[0\].*non-empty 'name'"),
    ([_case("c", 1.0, success="yes")], r"'success' must be true or false"),
    ([_case("c", 1.0, metricsData=[{"name": "Correctness", "score": "high"}])], r"metricsData.Correctness.score"),
    ([], r"no test cases"),
])
def test_bad_runs_are_one_line(tmp_path, cases, match):
    path = _run(tmp_path, cases, name="run.json", wrap=False)
    metric = "Correctness" if "score" in match else None
    with pytest.raises(DataError, match=match) as err:
        lp.read_results([path], metric=metric)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DataError, match=r"no metric 'BLEU'.*available: 'success', 'Correctness'"):
        lp.read_results([_run(tmp_path / "ok", [_case("c", 1.0)], name="run.json")], metric="BLEU")
