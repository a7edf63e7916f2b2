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


def test_fdr_planning_treats_small_gaps_as_nulls() -> None:
    """``null_below``: the pilot's small gaps become true nulls (delta 0); the plan's curve is the kernel's on
    those gaps (false resolutions and FDR with it), "all" means every real gap, and an FDR goal has Jung's
    closed form beside the simulated items."""
    x = _pilot(5, n=3000)
    plan = lp.plan_leaderboard(x, family="all", correction="bh", null_below=0.03, expected=3, rng=3)
    d = x[:, [a for a, _ in _pairs_idx(plan)]] - x[:, [b for _, b in _pairs_idx(plan)]]
    raw = d.mean(axis=0)
    np.testing.assert_allclose(plan.delta, np.where(np.abs(raw) < 0.03, 0.0, raw), rtol=1e-12, atol=1e-15)
    nulls = int(np.sum(plan.delta == 0))
    assert 0 < nulls < len(plan.pairs)
    pw = plan.power
    again = leaderboard_power(plan.delta, plan.sd, _corr(x, plan), pw.n_items, correction="bh", rng=_seed(3))
    np.testing.assert_allclose(pw.fdr, again.fdr)
    np.testing.assert_allclose(pw.all_resolved, again.all_resolved)
    assert np.all(np.asarray(pw.false_resolved) >= 0) and np.all(np.asarray(pw.fdr) <= 0.05 + 3 * np.asarray(pw.fdr_se))
    jung = plan.discoveries
    assert jung is not None and jung["n_real"] == len(plan.pairs) - nulls and jung["n_nulls"] == nulls
    assert jung["n_items"] == pytest.approx(plan.items.n_items, rel=0.1)
    assert plan.to_dict()["null_below"] == 0.03 and plan.to_dict()["discoveries"]["n_items"] == jung["n_items"]
    # every gap real: no closed form without an FDR goal, and P(all) over all of them
    assert lp.plan_leaderboard(x, n_items=[3000], rng=0).discoveries is None


def _pairs_idx(plan: lp.LeaderboardPlan) -> list[tuple[int, int]]:
    return [(int(a.split("_")[1]), int(b.split("_")[1])) for a, b in plan.pairs]


def _seed(rng: int) -> int:
    return int(np.random.default_rng(rng).integers(2**63))


def test_dunnett_plans_the_many_to_one_family() -> None:
    """``correction="dunnett"``: the one-sided simultaneous test of the control's gains; its P(all) by the
    multivariate normal CDF agrees with the simulated limit; only for the many-to-one family."""
    x = _pilot(6, n=2000)
    plan = lp.plan_leaderboard(x, family="many_to_one", control="model_0", correction="dunnett",
                               n_items=[1000, 4000], n_simulations=40_000, rng=1)
    pw = plan.power
    assert pw.correction == "dunnett" and pw.all_resolved_exact is not None
    assert np.all(np.abs(pw.all_resolved - pw.all_resolved_exact) <= 3 * np.maximum(pw.all_resolved_se, 1e-4))
    with pytest.raises(ValueError, match="many-to-one test"):
        lp.plan_leaderboard(x, correction="dunnett")
    with pytest.raises(ValueError, match="`null_below` must be a gap in"):
        lp.plan_leaderboard(x, null_below=2.0)


def test_the_command_line_plans_an_fdr(tmp_path) -> None:
    from _cli import run as run_cli

    x = _pilot(5, n=3000)
    path = tmp_path / "pilot.csv"
    rows = ["item," + ",".join(f"model_{k}" for k in range(5))]
    rows += [f"q{r}," + ",".join(str(v) for v in x[r]) for r in range(x.shape[0])]
    path.write_text("\n".join(rows) + "\n")
    args = ["plan", "leaderboard", str(path), "--family", "all", "--correction", "ebh", "--null-below", "0.03",
            "--expected", "3", "--seed", "2"]
    import json

    got = json.loads(run_cli([*args, "--format", "json"]).stdout)
    want = lp.plan_leaderboard(x, family="all", correction="ebh", null_below=0.03, expected=3, rng=2)
    assert got["items"]["n_items"] == want.items.n_items
    assert got["discoveries"]["n_items"] == want.discoveries["n_items"]
    assert got["power"]["fdr"] == pytest.approx(np.asarray(want.power.fdr).tolist())
    text = " ".join(run_cli(args).stdout.split())
    nulls = int(np.sum(want.delta == 0))
    verb = "is below 3 points and planned as a true null" if nulls == 1 else "are below 3 points and planned as true nulls"
    assert f"{nulls} of the 10 pilot gaps {verb}" in text
    assert f"Jung's closed form (2005; independent statistics): {want.discoveries['n_items']:,} items" in text
    assert "FDR" in text and "e-BH" in text


def test_a_clustered_plan_is_the_kernels_on_the_cluster_family() -> None:
    """``cluster=``: the gaps' SDs, correlation and df are the kernel's ``cluster_family`` (CR2, design effect
    floored at 1, IK df), judged on t quantiles; one item per cluster is the IID plan (to the CR2 weight)."""
    from llm_power._kernel.cluster_family import cluster_family
    from llm_power._kernel.family import family_pairs

    x = _pilot(7, n=2400)
    labels = np.repeat(np.arange(120), 20)
    plan = lp.plan_leaderboard(x, cluster=labels, at_least=3, n_items=[2400, 9600], rng=4)
    order = np.argsort(-x.mean(axis=0), kind="stable")
    i, j = family_pairs(order, "adjacent")
    fam = cluster_family(x, labels, i, j, ddof=0)
    np.testing.assert_allclose(plan.sd, fam.sd_effective)
    want = leaderboard_power(fam.delta, fam.sd_effective, fam.corr, plan.power.n_items, correction="holm",
                             rng=_seed(4), df_per_item=fam.df / 2400)
    np.testing.assert_allclose(plan.power.expected_resolved, want.expected_resolved)
    assert plan.clusters["n_clusters"] == 120 and len(plan.clusters["df"]) == 4
    iid = lp.plan_leaderboard(x, at_least=3, rng=4)
    assert plan.items.n_items >= iid.items.n_items  # clustering never makes a plan cheaper (DE floored at 1)
    alone = lp.plan_leaderboard(x, cluster=np.arange(2400), at_least=3, rng=4)
    assert alone.items.n_items == pytest.approx(iid.items.n_items, rel=0.01)


def test_the_command_line_plans_clustered_items() -> None:
    from _cli import run as run_cli

    from llm_power.io.demo import load_mmlu_pro

    import json

    out = run_cli(["plan", "leaderboard", "--demo", "--top", "4", "--cluster", "category", "--simulations", "2000",
                   "--format", "json"])
    assert out.returncode == 0, out.stderr
    data = load_mmlu_pro()
    want = lp.plan_leaderboard(data, top=4, cluster=data.clusters, n_simulations=2000, rng=0)
    got = json.loads(out.stdout)
    assert got["clusters"]["n_clusters"] == 14
    assert got["power"]["expected_resolved"] == pytest.approx(np.asarray(want.power.expected_resolved).tolist())
    assert got["pairs"][0]["sd"] == pytest.approx(float(want.sd[0]))
    bad = run_cli(["plan", "leaderboard", "--demo", "--cluster", "src"])
    assert bad.returncode != 0 and "clustered by category only" in bad.stderr


def test_counting_as_a_report_counts() -> None:
    """``count="report"``: the curve and items are the kernel's ``report_power`` on the pilot's models (their
    means and ddof-0 covariance), one seed; the CLI gives the same; the options it cannot take are refused."""
    from _cli import run as run_cli

    from llm_power._kernel.report_power import report_power

    import json

    x = _pilot(8, n=2000)
    plan = lp.plan_leaderboard(x, count="report", at_least=3, rng=6)
    order = np.argsort(-x.mean(axis=0), kind="stable")
    c = x[:, order] - x.mean(axis=0)[order]
    want = report_power(x.mean(axis=0)[order], c.T @ c / 2000, plan.power.n_items, rng=_seed(6))
    np.testing.assert_allclose(plan.power.expected_resolved, want.expected_resolved)
    assert plan.count == "report" and plan.to_dict()["count"] == "report"
    assert plan.items.value >= 0.8 > plan.items.value_below
    for bad in ({"family": "all"}, {"null_below": 0.01}, {"cluster": np.arange(2000) // 10}):
        with pytest.raises(ValueError, match="`count='report'` plans a report's own adjacent gaps"):
            lp.plan_leaderboard(x, count="report", **bad)
    with pytest.raises(ValueError, match="`count` must be one of"):
        lp.plan_leaderboard(x, count="future")
    out = run_cli(["plan", "leaderboard", "--demo", "--top", "6", "--count", "report", "--simulations", "2000",
                   "--format", "json"])
    assert out.returncode == 0, out.stderr
    from llm_power.io.demo import load_mmlu_pro

    got = json.loads(out.stdout)
    ref = lp.plan_leaderboard(load_mmlu_pro(), top=6, count="report", n_simulations=2000, rng=0)
    assert got["count"] == "report"
    assert got["power"]["expected_resolved"] == pytest.approx(np.asarray(ref.power.expected_resolved).tolist())
