"""``llm-power judges`` and ``llm-power ppi`` (issue 24, item 5) on real data. Oracles: the numbers
the data sets' own sanity scripts print (../shared/data/preferences/*/sanity_output.txt, pandas
code independent of llm-power), the published Table 5 of the MT-Bench swap study, and ppi_py
(the reference implementation of PPI++).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from llm_power.cli.main import main


def _json(capsys, argv):
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_judges_on_pandalm_match_its_sanity_script(shared_data, capsys):
    path = shared_data / "preferences" / "pandalm_testset" / "battles.csv.gz"
    out = _json(capsys, ["judges", str(path), "--humans", "annotator*", "--resamples", "200"])
    assert out["item_column"] == "item_id" and out["humans"] == ["annotator1", "annotator2", "annotator3"]
    pair = {(r["judge_a"], r["judge_b"]): r for r in out["pairwise"]}
    # sanity_output.txt: kappa annotator1 vs annotator2: 0.8520, 1 vs 3: 0.8789, 2 vs 3: 0.8617
    for (a, b), kappa in ((("annotator1", "annotator2"), 0.8520), (("annotator1", "annotator3"), 0.8789),
                          (("annotator2", "annotator3"), 0.8617)):
        assert pair[(a, b)]["kappa"] == pytest.approx(kappa, abs=5e-5)
        assert pair[(a, b)]["kappa_ci"][0] < kappa < pair[(a, b)]["kappa_ci"][1]
    # gpt-3.5-turbo vs human majority: n=974 kappa=0.4929; pandalm-7b: n=999 kappa=0.4354
    vs = {r["judge"]: r for r in out["vs_human_majority"]}
    assert vs["gpt-3.5-turbo"]["n"] == 974 and vs["gpt-3.5-turbo"]["kappa"] == pytest.approx(0.4929, abs=5e-5)
    assert vs["gpt-3.5-turbo"]["agreement"] == pytest.approx(0.7156, abs=5e-5)
    assert vs["pandalm-7b"]["n"] == 999 and vs["pandalm-7b"]["kappa"] == pytest.approx(0.4354, abs=5e-5)
    # the default human patterns find the annotators too
    assert _json(capsys, ["judges", str(path), "--resamples", "0"])["humans"] == out["humans"]


def test_judges_on_llmfao_crowd_majority(shared_data, capsys):
    path = shared_data / "preferences" / "llmfao" / "battles.csv.gz"
    out = _json(capsys, ["judges", str(path), "--where", "in_crowd_subset=1", "--humans", "crowd_*",
                         "--resamples", "0", "--max-judges", "2"])
    vs = {r["judge"]: r for r in out["vs_human_majority"]}
    # sanity_output.txt: gpt-4 vs crowd majority: n=2139 agreement=0.3871 kappa=0.1781
    assert vs["gpt-4"]["n"] == 2139 and vs["gpt-4"]["agreement"] == pytest.approx(0.3871, abs=5e-5)
    assert vs["gpt-4"]["kappa"] == pytest.approx(0.1781, abs=5e-5)
    assert vs["gpt-3.5-turbo-instruct"]["kappa"] == pytest.approx(0.0833, abs=5e-5)


def test_judges_swap_consistency_matches_the_published_table(shared_data, capsys):
    path = shared_data / "preferences" / "mtbench_ko_en_swap" / "battles.csv.gz"
    table = pd.read_csv(shared_data / "preferences" / "mtbench_ko_en_swap" / "source_table5_pairwise_inconsistency.csv")
    out = _json(capsys, ["judges", str(path), "--where", "lang=en", "--resamples", "0"])
    swap = {r["judge"]: r for r in out["swap"]}
    names = {"Qwen-7B": "Qwen2.5-7B-Instruct", "Qwen-14B": "Qwen2.5-14B-Instruct",
             "Qwen-32B": "Qwen2.5-32B-Instruct", "EXAONE-32B": "EXAONE-3.5-32B-Instruct-AWQ"}
    checked = 0
    for _, row in table.iterrows():
        if row["judge"] in names:
            got = swap[names[row["judge"]]]
            assert got["n"] == row["en_valid"] and got["inconsistent"] == row["en_inconsistent"]
            assert 100 * got["rate"] == pytest.approx(row["en_rate_pct"], abs=0.005)
            checked += 1
    assert checked == 4


def test_judges_terminal_fits_80_columns_and_escapes(tmp_path, capsys, monkeypatch):
    from wcwidth import wcswidth

    evil = "\x1b[31mjudge@org/team"
    rows = []
    rng = np.random.default_rng(0)
    for q in range(60):
        truth = rng.choice(["model_a", "model_b", "tie"])
        for judge, noise in (("human_1", 0.1), ("human_2", 0.1), ("human_3", 0.1), (evil, 0.4), ("gpt", 0.3)):
            w = truth if rng.random() > noise else rng.choice(["model_a", "model_b", "tie"])
            rows.append({"question_id": q, "model_a": "x", "model_b": "y", "winner": w, "judge": judge})
    pd.DataFrame(rows).to_csv(tmp_path / "b.csv", index=False)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["judges", str(tmp_path / "b.csv"), "--markdown", str(tmp_path / "j.md"),
                 "--json", str(tmp_path / "j.json")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mjudge" in out
    assert not [line for line in out.splitlines() if wcswidth(line.rstrip()) > 80]
    assert "@org/team" not in (tmp_path / "j.md").read_text()  # the mention is inert
    assert json.loads((tmp_path / "j.json").read_text())["humans"] == ["human_1", "human_2", "human_3"]


def test_ppi_on_real_judge_labels_matches_ppi_py(shared_data, tmp_path, capsys):
    from collections import Counter

    from ppi_py import ppi_mean_pointestimate

    d = pd.read_csv(shared_data / "preferences" / "pandalm_testset" / "battles.csv.gz")
    p = d.pivot_table(index="item_id", columns="judge", values="winner", aggfunc="first")
    humans = ["annotator1", "annotator2", "annotator3"]
    majority = p[humans].apply(lambda r: Counter(r).most_common(1)[0][0], axis=1)
    judged = p["gpt-3.5-turbo"].notna()
    y = (majority[judged] == "model_b").to_numpy(int)
    f = (p["gpt-3.5-turbo"][judged] == "model_b").to_numpy(int)
    order = np.random.default_rng(0).permutation(y.size)
    lab, unl = order[:150], order[150:]
    pd.DataFrame({"item": lab, "label": y[lab], "judge": f[lab]}).to_csv(tmp_path / "lab.csv", index=False)
    pd.DataFrame({"item": unl, "judge": f[unl]}).to_csv(tmp_path / "unl.csv", index=False)
    out = _json(capsys, ["ppi", "--labeled", str(tmp_path / "lab.csv"), "--unlabeled", str(tmp_path / "unl.csv"),
                         "--plan", "0.03"])
    ref = float(np.ravel(ppi_mean_pointestimate(y[lab].astype(float), f[lab].astype(float),
                                                  f[unl].astype(float), lam=None))[0])
    assert out["estimate"] == pytest.approx(ref, rel=1e-10)
    assert out["classical_estimate"] == pytest.approx(y[lab].mean(), rel=1e-12)
    assert out["n_labeled"] == 150 and out["n_unlabeled"] == y.size - 150
    assert out["ci_low"] < out["estimate"] < out["ci_high"]
    assert out["plan"]["labels_needed"] <= out["plan"]["labels_needed_without_judge"]
    # the terminal view
    assert main(["ppi", "--labeled", str(tmp_path / "lab.csv"), "--unlabeled", str(tmp_path / "unl.csv")]) == 0
    text = capsys.readouterr().out
    assert f"{100 * out['estimate']:.2f}%" in text and "labels only" in text


def test_ppi_errors_name_the_file_and_column(tmp_path, capsys):
    (tmp_path / "lab.csv").write_text("item,label,judge\nq1,1,1\nq2,x,0\n")
    (tmp_path / "unl.csv").write_text("item,judge\nq3,1\n")
    assert main(["ppi", "--labeled", str(tmp_path / "lab.csv"), "--unlabeled", str(tmp_path / "unl.csv")]) == 1
    err = capsys.readouterr().err
    assert "lab.csv, record row 1, field 'label'" in err and err.count("\n") == 1
    (tmp_path / "unl2.csv").write_text("item,other\nq3,1\n")
    assert main(["ppi", "--labeled", str(tmp_path / "lab.csv"), "--unlabeled", str(tmp_path / "unl2.csv")]) == 1
    assert "no judge score column" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["arena", "judges"])
def test_where_is_one_rule_for_both_battle_commands(shared_data, capsys, command):
    path = str(shared_data / "preferences" / "pandalm_testset" / "battles.csv.gz")
    for cond in ("nope=1", "no-equals-sign"):
        assert main([command, path, "--where", cond]) == 1
        err = capsys.readouterr().err
        assert f"--where {cond!r}: expected COLUMN=VALUE" in err and "item_id" in err and err.count("\n") == 1
    assert main([command, path, "--where", "motivation_app=nothing-matches"]) == 1
    assert "no battles left" in capsys.readouterr().err
