"""lm-eval aggregate results: the reader (real file), the Fréchet range of the paired test against
statsmodels' McNemar on every admissible joint table, N* against sample_size, and the command.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power.planning import paired_bounds
from llm_power.cli.main import main
from llm_power.io.aggregate import read_lm_eval_aggregates


def test_reads_the_real_results_file(shared_data):
    scores = read_lm_eval_aggregates(shared_data / "formats" / "lm_eval")
    assert [(s.task, s.metric, s.filter, s.n) for s in scores] == [
        ("math_perturbed_full", "exact_match", "none", 5000), ("math_rephrased_full", "exact_match", "none", 5000)]
    p, n = scores[1].value, scores[1].n
    assert p == 0.0004 and scores[1].stderr == pytest.approx(math.sqrt(p * (1 - p) / (n - 1)), rel=1e-9)


@pytest.mark.parametrize(("p_a", "p_b", "n"), [(0.62, 0.60, 1000), (0.30, 0.35, 1319), (0.9, 0.5, 200),
                                                 (0.55, 0.55, 500)])
def test_range_is_mcnemar_over_every_admissible_table(p_a, p_b, n):
    from statsmodels.stats.contingency_tables import mcnemar

    res = paired_bounds(p_a, p_b, n)
    lo11, hi11 = max(0.0, p_a + p_b - 1.0), min(p_a, p_b)  # Fréchet bounds of P(both right)
    pvalues = []
    for p11 in np.linspace(lo11, hi11, 201):
        b, c = n * (p_a - p11), n * (p_b - p11)  # expected discordant counts
        if b + c <= 0:
            continue
        if abs(b - c) >= 1:
            table = [[n * p11, b], [c, n * (1 - p_a - p_b + p11)]]
            pvalues.append(mcnemar(table, exact=False, correction=True).pvalue)
        else:  # R's mcnemar.test: the correction never moves |b - c| past zero (statsmodels' does)
            pvalues.append(stats.chi2.sf(max(abs(b - c) - 1, 0) ** 2 / (b + c), 1))
    assert min(pvalues) == pytest.approx(res.pvalue_low, rel=1e-9, abs=1e-300)
    assert max(pvalues) == pytest.approx(res.pvalue_high, rel=1e-9)
    if p_a != p_b:
        for pi, n_star in ((res.discordance_low, res.n_star_low), (res.discordance_high, res.n_star_high)):
            if pi - (p_a - p_b) ** 2 > 1e-12:
                assert math.ceil(n_star - 1e-9) == lp.sample_size(p_a, p_b, discordance=pi)


def test_verdicts():
    assert paired_bounds(0.9, 0.5, 200).verdict == "significant"
    assert paired_bounds(0.501, 0.500, 300).verdict == "not significant"
    assert paired_bounds(0.62, 0.60, 1000).verdict == "undetermined"
    with pytest.raises(ValueError, match="p_a"):
        paired_bounds(1.2, 0.5, 10)


def _results(folder, name, acc):
    folder.mkdir(parents=True)
    (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps({
        "model_name": name, "results": {"mmlu": {"alias": "mmlu", "acc,none": acc, "acc_stderr,none": 0.005},
                                        "group": {"acc,none": 0.5}},
        "n-samples": {"mmlu": {"original": 10000, "effective": 10000}}}))


def test_command_json(tmp_path, capsys):
    _results(tmp_path / "a", "org/a", 0.6210)
    _results(tmp_path / "b", "org/b", 0.6050)
    assert main(["aggregate", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = out["scores"][0]
    ci = lp.proportion_ci(6210, 10000)
    assert first["interval"] == "wilson" and first["ci_low"] == pytest.approx(ci.low, rel=1e-12)
    assert first["mde_rho0"] == pytest.approx(lp.mde(10000, p=0.621, rho=0.0), rel=1e-12)
    (pair,) = out["pairs"]
    assert pair["task"] == "mmlu" and pair["verdict"] == "undetermined"
    assert main(["aggregate", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "--log_samples" in capsys.readouterr().out


def test_not_a_results_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "results_x.json"
    bad.write_text("[1, 2]")
    assert main(["aggregate", str(bad)]) == 1
    assert "not an lm-eval results file" in capsys.readouterr().err
