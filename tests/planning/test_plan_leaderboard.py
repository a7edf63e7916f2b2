"""plan_leaderboard (issue 45): the family, its gaps and SDs and their correlation, against numpy on the
per-item differences; the plan's curve and items are the kernel's on them, with one seed; many-to-one
families are positively dependent; the goal's N is the smallest that reaches it."""

from __future__ import annotations

import numpy as np
import pytest

import llm_power as lp
from llm_power._kernel.leaderboard_power import leaderboard_power


def _pilot(seed: int = 0, n: int = 1500) -> np.ndarray:
    rng = np.random.default_rng(seed)
    hard = rng.random(n)[:, None]  # shared difficulty: the models' items correlate, as real ones do
    return (rng.random((n, 5)) < np.clip([0.85, 0.8, 0.78, 0.7, 0.6] - 0.5 * (hard - 0.5), 0, 1)).astype(int)


@pytest.mark.parametrize("family", ["adjacent", "all"])
def test_the_family_and_its_dependence_equal_numpy_on_the_differences(family: str) -> None:
    x = _pilot()
    names = [f"m{k}" for k in range(5)]
    plan = lp.plan_leaderboard(x, models=names, family=family, n_items=[1500], rng=3)
    col = {m: k for k, m in enumerate(names)}
    order = np.argsort(-x.mean(axis=0), kind="stable")
    assert plan.models == [names[k] for k in order]
    d = np.stack([x[:, col[a]] - x[:, col[b]] for a, b in plan.pairs], axis=1)
    assert len(plan.pairs) == (4 if family == "adjacent" else 10)
    np.testing.assert_allclose(plan.delta, d.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(plan.sd, d.std(axis=0), rtol=1e-10)
    r = np.corrcoef(d, rowvar=False)[np.triu_indices(d.shape[1], 1)]
    dep = plan.dependence
    assert dep["minimum"] == pytest.approx(r.min(), abs=1e-10) and dep["maximum"] == pytest.approx(r.max(), abs=1e-10)
    assert dep["prds_plausible"] == bool(np.all(r >= 0))
    want = leaderboard_power(d.mean(axis=0), d.std(axis=0), np.corrcoef(d, rowvar=False), np.array([1500]),
                             correction="holm", rng=int(np.random.default_rng(3).integers(2**63)))
    assert plan.power.expected_resolved == pytest.approx(want.expected_resolved, rel=1e-12)
    assert plan.power.all_resolved == pytest.approx(want.all_resolved, rel=1e-12)


def test_the_goal_is_the_smallest_n_that_reaches_it() -> None:
    x = _pilot(1)
    plan = lp.plan_leaderboard(x, at_least=3, probability=0.8, correction="bh", rng=5)
    n = plan.items.n_items
    seed = int(np.random.default_rng(5).integers(2**63))
    around = leaderboard_power(plan.delta, plan.sd, _corr(x, plan), np.array([n - 1, n]), correction="bh", rng=seed)
    p = around.probability_at_least(3)
    assert p[1] >= 0.8 > p[0]
    assert n in plan.power.n_items.tolist()
    payload = plan.to_dict()
    assert payload["items"]["n_items"] == n and len(payload["pairs"]) == 4 and payload["n_pilot"] == 1500
    html = plan._repr_html_()  # a notebook shows the command's table, not a paragraph of fields
    assert "<table" in html and "Resolving the 4 adjacent gaps of 5 models" in html and f"{n:,}" in html
    assert "\n" not in repr(plan) and repr(plan).startswith("LeaderboardPlan(family='adjacent', n_pilot=1500")


def _corr(x: np.ndarray, plan: lp.LeaderboardPlan) -> np.ndarray:
    names = [f"model_{k}" for k in range(x.shape[1])]
    col = {m: k for k, m in enumerate(names)}
    d = np.stack([x[:, col[a]] - x[:, col[b]] for a, b in plan.pairs], axis=1)
    return np.corrcoef(d, rowvar=False)


def test_many_to_one_is_positively_dependent() -> None:
    """One new model against each model of the board: every statistic shares the new model, so the
    family is positively correlated (BH inside its guarantee), unlike adjacent gaps."""
    x = _pilot(2)
    plan = lp.plan_leaderboard(x, family="many_to_one", control="model_4", n_items=[1500], rng=0)
    assert [a for a, _ in plan.pairs] == ["model_4"] * 4
    assert plan.dependence["minimum"] > 0 and plan.dependence["prds_plausible"]
    assert not lp.plan_leaderboard(x, n_items=[1500], rng=0).dependence["prds_plausible"]


def test_options_are_checked() -> None:
    x = _pilot()
    with pytest.raises(ValueError, match="`family` must be one of"):
        lp.plan_leaderboard(x, family="pairs")
    with pytest.raises(ValueError, match="`correction` must be one of"):
        lp.plan_leaderboard(x, correction="fdr")
    with pytest.raises(ValueError, match="needs `control`, one of the models; got 'gpt'"):
        lp.plan_leaderboard(x, family="many_to_one", control="gpt")
    with pytest.raises(ValueError, match="`control` is the model of family='many_to_one'"):
        lp.plan_leaderboard(x, control="model_0")
    with pytest.raises(ValueError, match="`top`"):
        lp.plan_leaderboard(x, top=1)


def test_the_command_line_gives_the_apis_plan(tmp_path) -> None:
    from _cli import run as run_cli

    x = _pilot(4, n=800)
    path = tmp_path / "pilot.csv"
    rows = ["item," + ",".join(f"model_{k}" for k in range(5))]
    rows += [f"q{r}," + ",".join(str(v) for v in x[r]) for r in range(x.shape[0])]
    path.write_text("\n".join(rows) + "\n")
    out = run_cli(["plan", "leaderboard", str(path), "--at-least", "3", "--correction", "by", "--seed", "7",
                   "--format", "json"])
    assert out.returncode == 0, out.stderr
    import json

    got = json.loads(out.stdout)
    want = lp.plan_leaderboard(x, at_least=3, correction="by", rng=7)
    assert got["items"]["n_items"] == want.items.n_items
    assert got["power"]["expected_resolved"] == pytest.approx(np.asarray(want.power.expected_resolved).tolist())
    text = run_cli(["plan", "leaderboard", str(path), "--at-least", "3", "--correction", "by", "--seed", "7"]).stdout
    assert f"At least 3 of 4 resolved with probability 0.8: {want.items.n_items:,} items" in " ".join(text.split())
    bad = run_cli(["plan", "leaderboard", str(path), "--family", "many-to-one"])
    assert bad.returncode != 0 and "needs --control, one of the models" in bad.stderr


def test_selecting_the_best_from_the_pilot_and_in_the_indifference_zone() -> None:
    """plan.selection: the kernel's P(correct selection) on the best's leads, SDs and correlations formed
    here from the items; with an indifference zone every lead is delta*; Bechhofer's limit holds for
    independent models (checked in tests/kernel/test_selection.py)."""
    from llm_power._kernel.selection import items_for_selection, selection_probability

    x = _pilot(6)
    plan = lp.plan_leaderboard(x, n_items=[500, 1500], selection_probability=0.9, rng=0)
    col = {f"model_{k}": k for k in range(5)}
    best = col[plan.models[0]]
    others = [col[m] for m in plan.models[1:]]
    d = x[:, [best]] - x[:, others]
    corr = np.corrcoef(d, rowvar=False)
    sel = plan.selection
    assert sel["best"] == plan.models[0] and sel["lead"] == "pilot"
    want = selection_probability(d.mean(axis=0), d.std(axis=0), corr, np.array([500.0, 1500.0]))
    np.testing.assert_allclose(sel["probability"], want, atol=1e-5)  # Genz's integration error
    assert sel["items"] == items_for_selection(d.mean(axis=0), d.std(axis=0), corr, probability=0.9)
    zone = lp.plan_leaderboard(x, n_items=[1500], selection_probability=0.9, indifference=0.02, rng=0).selection
    assert zone["lead"] == "indifference"
    assert zone["items"] == items_for_selection(np.full(4, 0.02), d.std(axis=0), corr, probability=0.9)
    with pytest.raises(ValueError, match="`indifference` must be a gap > 0"):
        lp.plan_leaderboard(x, indifference=-0.1, rng=0)
