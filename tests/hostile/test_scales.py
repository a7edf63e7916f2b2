"""Issue 40, wrong numbers without an error: an Every Eval Ever record on a 0-100 scale printed
``nan – nan`` on 7302bb3 (its score read as a fraction above 1). A record that declares its range
(``metric_config.min_score`` / ``max_score``) is read on it; one that does not, outside [0, 1], has no
interval ("—"), never NaN; a score outside its declared range is an error naming the field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import _cli  # tests/_cli.py

SOURCE = Path(__file__).resolve().parents[3] / "shared" / "data" / "formats" / "every_eval_ever" / \
    "converted_v0.3.0" / "arc_easy_qwen2.5-0.5b.json"


def _record(tmp_path, name, *, scale, declare=True, n=500, se=True, score=None):
    data = json.loads(SOURCE.read_text(encoding="utf-8"))
    for res in data["evaluation_results"]:
        config, details = res["metric_config"], res["score_details"]
        if declare:
            config["min_score"], config["max_score"] = 0.0, float(scale)
        else:
            config.pop("min_score", None), config.pop("max_score", None)
        details["score"] = (0.62 if score is None else score) * scale
        details["uncertainty"] = {"num_samples": n}
        if se:
            details["uncertainty"]["standard_error"] = {"value": 0.021 * scale}
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _aggregate(path):
    out = _cli.run(["aggregate", str(path), "--format", "json"])  # main() in process (tests/_cli.py)
    return out


@pytest.mark.parametrize("se", [True, False])
def test_a_record_on_a_0_to_100_scale_is_the_same_record_on_0_to_1(tmp_path, se):
    one = json.loads(_aggregate(_record(tmp_path, "a.json", scale=1, se=se)).stdout)["scores"]
    hundred = json.loads(_aggregate(_record(tmp_path, "b.json", scale=100, se=se)).stdout)["scores"]
    assert len(one) == len(hundred) >= 1
    for x, y in zip(one, hundred, strict=True):
        assert y["ci_low"] == pytest.approx(x["ci_low"], rel=1e-12) and y["ci_high"] == pytest.approx(x["ci_high"])
        assert y["value"] == pytest.approx(x["value"]) and y["interval"] == x["interval"] != "none"


def test_an_undeclared_scale_outside_0_1_has_no_interval_and_no_nan(tmp_path):
    path = _record(tmp_path, "c.json", scale=100, declare=False, se=False)
    out = _cli.run(["aggregate", str(path)])
    assert out.returncode == 0, out.stderr
    assert "nan" not in out.stdout.lower() and "—" in out.stdout


def test_a_score_outside_its_declared_range_is_an_error(tmp_path):
    out = _aggregate(_record(tmp_path, "d.json", scale=100, score=1.5))
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1 and len(lines) == 1
    assert "d.json" in lines[0] and "score_details.score" in lines[0] and "outside the record's range" in lines[0]
