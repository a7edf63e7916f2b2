"""Inputs a new user has that had no path (issue 41): Every Eval Ever 0.2 records without a sample
count (``--items``), leaderboard tables of scores with standard errors or counts (AlpacaEval's
leaderboard CSVs; ``aggregate`` said "not valid JSON"), and refusals that name the command that does
read a file (an OpenCompass subjective run: ``arena``)."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

import llm_power as lp
from llm_power.io.aggregate import read_aggregates

from _cli import run as _cli_run  # tests/_cli.py


def _cli(args, cwd):
    return _cli_run(args, cwd=cwd)  # main() in process, seen as a subprocess sees it (tests/_cli.py)


def test_an_eee_0_2_record_takes_the_benchmark_size_from_items(shared_data, tmp_path):
    record = shared_data / "formats" / "every_eval_ever" / "upstream_v0.2" / \
        "hfopenllm_v2_TencentARC_LLaMA-Pro-8B-Instruct_98ea850e.json"
    with pytest.raises(lp.DataError, match=r"--items IFEval=N.*tasks: IFEval, BBH, MATH Level 5, GPQA, MUSR, MMLU-PRO"):
        read_aggregates(record)
    scores = read_aggregates(record, items={"IFEval": 541, "GPQA": 1192})
    assert {(s.task, s.value, s.n) for s in scores} == {("IFEval", 0.4486, 541), ("GPQA", 0.2743, 1192)}
    assert len(read_aggregates(record, items=1000)) == 6
    out = _cli(["aggregate", str(record), "--items", "IFEval=541", "--format", "json"], tmp_path)
    assert out.returncode == 0, out.stderr
    import json

    (row,) = json.loads(out.stdout)["scores"]
    low, high = proportion_confint(0.4486 * 541, 541, alpha=0.05, method="wilson")  # statsmodels' Wilson
    assert (row["task"], row["n"]) == ("IFEval", 541)
    assert row["ci_low"] == pytest.approx(low, rel=1e-9) and row["ci_high"] == pytest.approx(high, rel=1e-9)

ALPACA = ("," "win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,discrete_win_rate,mode,avg_length,"
          "length_controlled_winrate,lc_standard_error\n"
          "gpt-4o-2024-05-13,51.32757578249279,1.4700138592623738,415,389,1,805,51.67701863354037,"
          "minimal,1873,57.45537094058701,\n"
          "alpaca-7b,2.591450540223603,0.4870855382635108,17,785,3,805,2.298136645962733,minimal,396,"
          "5.875487163278986,\n")


def test_an_alpaca_eval_leaderboard_csv_is_read_as_scores(tmp_path):
    """AlpacaEval's leaderboard CSV: the model in the unnamed first column, win rates in percent with
    their standard errors, the count in n_total."""
    path = tmp_path / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
    path.write_text(ALPACA, encoding="utf-8")
    scores = {s.model: s for s in read_aggregates(path)}
    assert set(scores) == {"gpt-4o-2024-05-13", "alpaca-7b"}
    top = scores["gpt-4o-2024-05-13"]
    assert top.metric == "win_rate" and top.n == 805
    assert top.value == pytest.approx(0.5132757578249279) and top.stderr == pytest.approx(0.014700138592623738)
    lc = {s.model: s for s in read_aggregates(path, metric="length_controlled_winrate")}
    assert lc["alpaca-7b"].value == pytest.approx(0.05875487163278986) and lc["alpaca-7b"].stderr is None
    out = _cli(["aggregate", path.name], tmp_path)
    assert out.returncode == 0 and "gpt-4o-2024-05-13" in out.stdout, out.stderr


def test_a_table_without_a_count_asks_for_items(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("model,score\na,0.7\nb,0.65\n", encoding="utf-8")
    with pytest.raises(lp.DataError, match=r"board\.csv, record line 2.*no item count for 'a'.*--items N"):
        read_aggregates(path)
    assert [s.n for s in read_aggregates(path, items=500)] == [500, 500]


def test_a_subjective_opencompass_run_is_pointed_to_arena(shared_data, tmp_path):
    run = shared_data / "formats" / "opencompass" / "20231208_194351"
    out = _cli(["diagnose", str(run)], tmp_path)
    assert out.returncode == 1 and "llm-power arena (or judges) reads" in out.stderr, out.stderr
    one = next((run / "results").rglob("*.json"))
    out = _cli(["diagnose", str(one)], tmp_path)
    assert out.returncode == 1 and "pairwise judgements" in out.stderr and "llm-power arena" in out.stderr
    assert _cli(["arena", str(run)], tmp_path).returncode == 0


def test_a_folder_of_aggregates_is_pointed_to_aggregate(shared_data, tmp_path):
    folder = tmp_path / "agg"
    folder.mkdir()
    src = shared_data / "formats" / "every_eval_ever" / "upstream_v0.2" / "mmlu_pro_yi-1.5-34b-chat_676f4465.json"
    (folder / src.name).write_bytes(src.read_bytes())
    out = _cli(["diagnose", str(folder)], tmp_path)
    assert out.returncode == 1 and "which llm-power aggregate reads" in out.stderr, out.stderr
