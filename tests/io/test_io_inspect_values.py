"""inspect_ai's letter scores read as inspect_ai itself reads them.

Oracle: inspect_ai's own ``value_to_float()`` (the conversion its ``accuracy()`` and ``mean()`` metrics
apply): CORRECT "C" = 1, INCORRECT "I" = 0, PARTIAL "P" = 0.5, NOANSWER "N" = 0; epochs are averaged,
as inspect's default ``mean`` reducer does.
"""

from __future__ import annotations

import json

import pytest

from llm_power import read_results

inspect_scorer = pytest.importorskip("inspect_ai.scorer")


def _log(path, values_by_epoch):
    samples = [{"id": k + 1, "epoch": epoch, "input": f"q{k}", "target": "A",
                "scores": {"choice": {"value": value, "answer": "A"}}}
               for epoch, values in enumerate(values_by_epoch, start=1) for k, value in enumerate(values)]
    path.write_text(json.dumps({"version": 2, "status": "success",
                                "eval": {"task": "toy", "model": "openai/m", "dataset": {"samples": len(samples)}},
                                "samples": samples}))
    return path


def test_each_letter_is_inspects_own_value(tmp_path):
    to_float = inspect_scorer.value_to_float()
    letters = [inspect_scorer.CORRECT, inspect_scorer.INCORRECT, inspect_scorer.PARTIAL, inspect_scorer.NOANSWER]
    df = read_results(_log(tmp_path / "one.json", [letters]))
    assert df.sort_values("item")["score"].tolist() == [to_float(v) for v in letters] == [1.0, 0.0, 0.5, 0.0]


def test_epochs_are_averaged_with_partial_credit(tmp_path):
    """Two epochs per sample: P then C averages (0.5 + 1) / 2 = 0.75, P then I 0.25, P twice 0.5."""
    to_float = inspect_scorer.value_to_float()
    first, second = ["P", "P", "P", "C"], ["C", "I", "P", "N"]
    df = read_results(_log(tmp_path / "two.json", [first, second])).sort_values("item")
    want = [(to_float(a) + to_float(b)) / 2 for a, b in zip(first, second, strict=True)]
    assert df["score"].tolist() == pytest.approx(want) == [0.75, 0.25, 0.5, 0.5]
