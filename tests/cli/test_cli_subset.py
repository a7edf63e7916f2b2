"""``llm-power subset plan`` and ``subset estimate`` on the MMLU-Pro results: the plan file, the
estimate's numbers equal to the library's (one verdict across entry points), and the errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

import llm_power as lp
from llm_power.cli.main import main
from llm_power.io.demo import load_mmlu_pro


@pytest.fixture(scope="module")
def mmlu():
    d = load_mmlu_pro()
    return [str(i) for i in d.items], list(d.models), np.asarray(d.scores, dtype=float), np.asarray(d.clusters)


def _leaderboard(tmp_path, mmlu, drop=0):
    items, models, x, category = mmlu
    frame = pd.DataFrame(np.delete(x, drop, axis=1), columns=[m for k, m in enumerate(models) if k != drop])
    frame.insert(0, "item", items)
    frame.insert(1, "category", category)
    path = tmp_path / "leaderboard.csv"
    frame.to_csv(path, index=False)
    return path


def _new(tmp_path, mmlu, plan_path, name="new model", column=0):
    items, _, x, _ = mmlu
    plan = pd.read_csv(plan_path, dtype={"item_id": str, "stratum": str})
    pos = {i: k for k, i in enumerate(items)}
    rows = [pos[i] for i in plan["item_id"]]
    path = tmp_path / "new.csv"
    pd.DataFrame({"item": plan["item_id"], name: x[rows, column]}).to_csv(path, index=False)
    return path, np.array(rows)


def test_plan_then_estimate_gives_the_librarys_numbers(tmp_path, mmlu, capsys):
    items, models, x, category = mmlu
    board = _leaderboard(tmp_path, mmlu)
    plan_path = tmp_path / "plan.csv"
    assert main(["subset", "plan", str(board), "--cluster", "category", "--budget", "400", "--out", str(plan_path),
                 "--seed", "3"]) == 0
    shown = capsys.readouterr().out
    assert "Plan: 400 of 12,032 items (neyman allocation)" in shown and "math" in shown
    plan = lp.read_subset_plan(plan_path)
    assert plan.n == 400 and plan.n_items == 12032 and len(plan.allocation) == 14
    new_path, rows = _new(tmp_path, mmlu, plan_path)
    assert main(["subset", "estimate", str(new_path), "--plan", str(plan_path), "--reference", str(board),
                 "--cluster", "category", "--against", models[5], "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    others = x[:, 1:]
    want = lp.subset_estimate(x[rows, 0], rows, reference=others, strata=category)
    got = out["models"][0]
    assert got["model"] == "new model" and got["estimate"] == pytest.approx(want.estimate, rel=1e-12)
    assert (got["ci"]["low"], got["ci"]["high"]) == pytest.approx((want.ci.low, want.ci.high), rel=1e-12)
    gap = lp.subset_compare(x[rows, 0], rows, x[:, 5], reference=others, strata=category)
    assert out["gaps"][0]["verdict"] == gap.verdict.replace("model", "new model").replace("other", models[5])
    assert out["gaps"][0]["pvalue"] == pytest.approx(gap.pvalue, rel=1e-10)
    # the table, as a person sees it
    assert main(["subset", "estimate", str(new_path), "--plan", str(plan_path), "--reference", str(board),
                 "--cluster", "category"]) == 0
    table = capsys.readouterr().out
    assert "Scores from 400 of 12,032 items (stratified difference estimator; points)" in table
    assert f"{100 * want.estimate:.2f}" in table and f"{100 * want.ci.low:.2f} – {100 * want.ci.high:.2f}" in table
    assert "Bonferroni" in table
    assert table.count(" ahead") + table.count(" behind") + table.count("not decided") == 25


def test_estimate_without_a_leaderboard_compares_the_new_models_once(tmp_path, mmlu, capsys):
    items, models, x, _ = mmlu
    plan = lp.subset_plan(items, budget=300, rng=2)
    plan_path = tmp_path / "plan.csv"
    plan.write(plan_path)
    rows = np.array(plan.positions)
    path = tmp_path / "two.csv"
    pd.DataFrame({"item": plan.items, "a": x[rows, 0], "b": x[rows, 9]}).to_csv(path, index=False)
    assert main(["subset", "estimate", str(path), "--plan", str(plan_path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(g["model"], g["against"]) for g in out["gaps"]] == [("a", "b")]
    want = lp.subset_compare(x[rows, 0], rows, x[rows, 9], n_items=len(items))
    assert out["gaps"][0]["gap"] == pytest.approx(want.gap) and out["gaps"][0]["other_on"] == "the items run"
    assert out["models"][0]["method"] == "subset mean"


def test_estimate_errors_are_one_line(tmp_path, mmlu, capsys):
    board = _leaderboard(tmp_path, mmlu)
    plan_path = tmp_path / "plan.csv"
    assert main(["subset", "plan", str(board), "--cluster", "category", "--budget", "200", "--out",
                 str(plan_path)]) == 0
    capsys.readouterr()
    new_path, _ = _new(tmp_path, mmlu, plan_path)
    # a result short of the plan's items
    frame = pd.read_csv(new_path, dtype={"item": str})
    short = tmp_path / "short.csv"
    frame.iloc[:-3].to_csv(short, index=False)
    assert main(["subset", "estimate", str(short), "--plan", str(plan_path)]) == 1
    err = capsys.readouterr().err
    assert "3 of the plan's 200 items have no result" in err and err.count("\n") == 1
    # a stratified plan against a reference read without its strata
    assert main(["subset", "estimate", str(new_path), "--plan", str(plan_path), "--reference", str(board)]) == 2
    assert "give --cluster" in capsys.readouterr().err
    # an output that is a link, or the plan file itself
    link = tmp_path / "link.csv"
    os.symlink(tmp_path / "elsewhere.csv", link)
    assert main(["subset", "plan", str(board), "--budget", "50", "--out", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert main(["subset", "plan", str(board), "--budget", "50", "--out", str(board)]) == 2
    assert "input" in capsys.readouterr().err
    bad = tmp_path / "bad_plan.csv"
    bad.write_text("item_id,stratum,weight\n1,a,x\n", encoding="utf-8")
    assert main(["subset", "estimate", str(new_path), "--plan", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad_plan.csv" in err and "line 2" in err


def test_hostile_model_names_are_escaped(tmp_path, mmlu, capsys):
    items, _, x, _ = mmlu
    plan = lp.subset_plan(items, budget=100, rng=0)
    plan_path = tmp_path / "plan.csv"
    plan.write(plan_path)
    rows = np.array(plan.positions)
    path = tmp_path / "evil.csv"
    pd.DataFrame({"item": plan.items, "\x1b[31mred": x[rows, 0], "ok": x[rows, 1]}).to_csv(path, index=False)
    assert main(["subset", "estimate", str(path), "--plan", str(plan_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mred" in out


def test_a_model_on_both_sides_is_noted(tmp_path, mmlu, capsys):
    """A model in the new results that is also a reference model is compared both ways on different data
    (its subset scores against the other's full ones, and back): the command says so."""
    items, models, x, category = mmlu
    board = _leaderboard(tmp_path, mmlu)
    plan_path = tmp_path / "plan.csv"
    assert main(["subset", "plan", str(board), "--cluster", "category", "--budget", "300", "--out", str(plan_path),
                 "--seed", "1"]) == 0
    new_path, _ = _new(tmp_path, mmlu, plan_path, name=models[1])  # the board leaves out models[0]
    capsys.readouterr()
    assert main(["subset", "estimate", str(new_path), "--plan", str(plan_path), "--reference", str(board),
                 "--cluster", "category", "--against", models[3]]) == 0
    err = capsys.readouterr().err
    assert f"'{models[1]}' in both the new results and the reference" in err
    new_path, _ = _new(tmp_path, mmlu, plan_path, name="a new model")
    assert main(["subset", "estimate", str(new_path), "--plan", str(plan_path), "--reference", str(board),
                 "--cluster", "category", "--against", models[3]]) == 0
    assert "in both the new results" not in capsys.readouterr().err
