"""The run regime of diagnose / compare / gate, and plan_runs, on simulated crossed data.

Truth is known: items x runs x models with known item, run and residual components (graded: normal;
0/1: a logit link). The checks are the issue's acceptance points: a gap within run noise is not
resolved under the run regime and the report says how many runs would resolve it; without run
effects the run regime agrees with IID; the run test has its size and its power at the planned
(items, runs); every entry point gives the same pair the same verdict.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_power as lp


def leaderboard(rng: np.random.Generator, n: int, r: int, means: list[float], *, s_item: float = 1.0,
                s_run: float = 0.0, s_res: float = 0.5, binary: bool = False) -> np.ndarray:
    """items x runs x models scores: model m's item i in run t = mu_m + a_i + b_mt + e_imt."""
    m = len(means)
    latent = np.asarray(means) + rng.normal(0, s_item, (n, 1, 1)) + rng.normal(0, s_run, (1, r, m))
    if binary:
        return (rng.random((n, r, m)) < 1 / (1 + np.exp(-latent))).astype(float)
    return latent + rng.normal(0, s_res, (n, r, m))


def test_a_gap_within_run_noise_is_unresolved_and_the_report_says_how_many_runs() -> None:
    rng = np.random.default_rng(7)
    y = leaderboard(rng, 5000, 3, [0.06, 0.03, -0.2], s_run=0.03)
    d = lp.diagnose(y, models=["a", "b", "c"])
    first = d.pairs[0]
    assert first.resolved, "precondition: on items alone the 3-point gap is resolved"
    assert not first.resolved_run
    assert first.q_run < 1
    assert math.isfinite(first.runs_needed) and first.runs_needed > 3
    text = d.to_markdown()
    assert f"about {first.runs_needed:,.0f} runs per model would" in text or \
           f"or about {first.runs_needed:,.0f} runs per model at these items" in text


def test_runs_needed_from_the_true_components_reach_the_power() -> None:
    """The runs-needed rule itself (the kernel, fed the true components): simulated at that many runs
    the run test has its power, and at half as many it has not. (From a pilot, the run component is
    estimated on R - 1 df per model: with 3 runs the number is a rough guide, which docs/runs.md says.)
    Sized for a rule that misses the power by 20 points: 150 replications put the floor at 0.70, which a
    power of 0.60 fails with probability 0.99 (a 0.70 one half the time; the rule's power is checked to
    2 points by the 4,000-replication tests of tests/runs/test_run_plans.py).
    """
    from llm_power._kernel.crossed import runs_needed

    n, gap, s_run, s_res = 5000, 0.03, 0.03, 0.5
    # D_i = (b_A - b_B) + (e_A - e_B) averaged over runs: item part 0, residual 2 s_res^2, run 2 s_run^2
    r_star = int(runs_needed(np.array([gap]), n, 0.0, 2 * s_res**2, s_run**2, s_run**2, s_res**2, s_res**2,
                             alpha=0.05, power=0.8)[0])
    assert 10 <= r_star <= 30

    def power(r: int, reps: int, seed: int) -> float:
        hits = 0
        for k in range(reps):
            yk = leaderboard(np.random.default_rng(seed + k), n, r, [gap, 0.0], s_run=s_run, s_res=s_res)
            hits += lp.compare(yk[:, :, 0], yk[:, :, 1]).pvalue <= 0.05
        return hits / reps

    reps = 150
    assert power(r_star, reps, 100) >= 0.8 - 3 * math.sqrt(0.16 / reps)
    assert power(max(r_star // 2, 2), reps, 5000) < 0.75


def test_run_noise_alone_exceeding_the_gap_gives_an_infinite_n_star() -> None:
    rng = np.random.default_rng(8)
    y = leaderboard(rng, 3000, 2, [0.02, 0.0], s_run=0.05)
    c = lp.compare(y[:, :, 0], y[:, :, 1])
    k = lp.planning.k_factor(0.05, 0.8) if hasattr(lp, "planning") else 7.85
    run_part = c.se_runs**2 - np.var(y[:, :, 0].mean(1) - y[:, :, 1].mean(1), ddof=1) / 3000
    if c.delta**2 <= k * run_part:  # the precondition of an infinite N*
        assert math.isinf(c.n_star) and not c.resolved
    assert "runs" in c.summary()


@pytest.mark.parametrize("binary", [False, True])
def test_without_run_effects_the_run_regime_agrees_with_iid(binary: bool) -> None:
    same = total = 0
    for k in range(60):
        rng = np.random.default_rng(k)
        means = list(np.sort(rng.normal(0, 0.15, 6))[::-1])
        y = leaderboard(rng, 800, 4, means, s_run=0.0, binary=binary)
        d = lp.diagnose(y)
        iid = np.asarray(d.columns["resolved"], dtype=bool)
        run = np.asarray(d.columns["resolved_run"], dtype=bool)
        assert not np.any(run & ~iid)  # never less strict than IID
        same += int(np.sum(run == iid))
        total += iid.size
    assert same / total >= 0.9


def run_pvalues(y: np.ndarray, *, matched: bool = False) -> np.ndarray:
    """The run test's p-value of model 0 vs model 1 in each of the replications y (reps, n, R, 2), all at
    once through the kernel that compare and diagnose call (crossed mean squares, the gap's variance over
    items and runs on Satterthwaite df, the run verdict); ``test_the_vectorised_run_test_is_compares``
    holds it equal to lp.compare replication by replication."""
    from llm_power._kernel.crossed import crossed_mean_squares, gap_run_variance
    from llm_power._kernel.verdict import run_verdict

    reps, n = y.shape[:2]
    blocks = [y[k, :, :, m] for k in range(reps) for m in (0, 1)]
    ms = crossed_mean_squares(blocks)
    i = np.arange(0, 2 * reps, 2)
    j = i + 1
    d = ms.item_means[:, i] - ms.item_means[:, j]
    s2_d = d.var(axis=0, ddof=1)
    pv = gap_run_variance(s2_d, n, ms, i, j, blocks if matched else None)
    rv = run_verdict(d.mean(axis=0), s2_d, pv.run_part, n, pv.df, np.ones(reps, dtype=bool), alpha=0.05, power=0.8,
                     alternative="two-sided")
    return np.asarray(rv.pvalue)


def null_pairs(seed: int, reps: int, n: int, r: int, *, binary: bool, common: float = 0.0,
               own: float = 0.0) -> np.ndarray:
    """(reps, n, R, 2): two models with equal true scores, shared item effects, a template shift common to
    both (``common``) and each model's own run shifts (``own``)."""
    rng = np.random.default_rng(seed)
    latent = (0.3 + rng.normal(0, 1, (reps, n, 1, 1)) + rng.normal(0, common, (reps, 1, r, 1))
              + rng.normal(0, own, (reps, 1, r, 2)))
    if binary:
        return (rng.random((reps, n, r, 2)) < 1 / (1 + np.exp(-latent))).astype(float)
    return latent + rng.normal(0, 0.5, (reps, n, r, 2))


@pytest.mark.parametrize("matched", [False, True])
def test_the_vectorised_run_test_is_compares(matched: bool) -> None:
    """The kernel path of the size simulations below equals lp.compare (and diagnose's run column) exactly."""
    y = null_pairs(77, 6, 120, 3, binary=False, common=0.1, own=0.08)
    got = run_pvalues(y, matched=matched)
    pairing = "matched" if matched else "independent"
    want = [lp.compare(y[k, :, :, 0], y[k, :, :, 1], run_pairing=pairing).pvalue for k in range(6)]
    assert got == pytest.approx(want, rel=1e-12)
    if not matched:
        d = lp.diagnose(y[0], models=["a", "b"])
        assert d.pairs[0].pvalue_run == pytest.approx(got[0], rel=1e-12)


@pytest.mark.parametrize("binary", [False, True])
def test_run_regime_size_under_the_null(binary: bool) -> None:
    """Equal true scores, independent run effects: the run test rejects at most at alpha = 0.05 (a little
    less: the run component truncated at 0 makes it conservative, about 4.5% here). Sized to see a test at
    7%: 4,000 independent pairs give a Monte-Carlo SE of 0.0034 at 5%; the bound 0.05 + 3.5 SE = 0.062
    fails a 7% test with probability 0.97 (its SE 0.0040, 0.062 is 2 SE below 0.07); and the test must keep
    at least half its level (not a test that never rejects)."""
    reps = 4000
    y = null_pairs(1000 + binary, reps, 300, 5, binary=binary, own=0.2 if binary else 0.06)
    rate = float(np.mean(run_pvalues(y) <= 0.05))
    assert 0.025 < rate < 0.05 + 3.5 * math.sqrt(0.05 * 0.95 / reps), rate


@pytest.mark.slow
def test_the_plan_reaches_its_power() -> None:
    """The cheapest (items, runs) of the allocation, from the true components: simulated there, the run
    test has >= 80% power; a pilot with many runs plans about the same design.
    """
    from llm_power._kernel.crossed import allocation_table

    gap, s_item, s_run, s_res = 0.05, 1.0, 0.04, 0.8
    # shared item effects: the gap's item part is 0; residual 2 s_res^2; run 2 s_run^2
    t = allocation_table(gap, 0.0, 2 * s_res**2, s_run**2, s_run**2, s_res**2, s_res**2, alpha=0.05, power=0.8,
                         cost_item=1.0, cost_run=2000.0, max_items=None, max_runs=100)
    k = int(np.argmin(t["cost"]))
    n, r = int(t["items"][k]), int(t["runs"][k])
    reps = 300

    def power(n: int, r: int, seed: int) -> float:
        hits = 0
        for j in range(reps):
            y = leaderboard(np.random.default_rng(seed + j), n, r, [gap, 0.0], s_item=s_item, s_run=s_run, s_res=s_res)
            hits += lp.compare(y[:, :, 0], y[:, :, 1]).pvalue <= 0.05
        return hits / reps

    assert power(n, r, 10_000) >= 0.8 - 3 * math.sqrt(0.16 / reps), (n, r)
    assert power(max(n // 3, 10), r, 20_000) < 0.7
    pilot = leaderboard(np.random.default_rng(5), 3000, 40, [gap, 0.0], s_item=s_item, s_run=s_run, s_res=s_res)
    plan = lp.plan_runs(pilot, gap, models=["a", "b"], cost_per_item=1.0, cost_per_run=2000.0)
    assert abs(plan.best_runs - r) <= max(2, 0.35 * r)  # the run component is estimated on 39 df per model


def test_plan_allocation_is_the_cheapest_feasible_design() -> None:
    pilot = leaderboard(np.random.default_rng(6), 2000, 4, [0.05, 0.0], s_run=0.03, s_res=0.8)
    plan = lp.plan_runs(pilot, 0.04, models=["a", "b"], cost_per_item=1.0, cost_per_run=500.0, max_runs=40)
    t = plan.table
    feasible = np.isfinite(t["cost"])
    assert feasible.any()
    k = int(np.argmin(np.where(feasible, t["cost"], np.inf)))
    assert (plan.best_items, plan.best_runs, plan.best_cost) == (t["items"][k], t["runs"][k], t["cost"][k])
    assert np.all(t["cost"][feasible] == t["items"][feasible] * t["runs"][feasible] + 500.0 * t["runs"][feasible])
    # more runs never need more items (at a fixed gap, the item requirement falls with R)
    items = t["items"][feasible]
    assert np.all(np.diff(items) <= 0)


def test_one_verdict_across_compare_diagnose_and_the_cli(tmp_path: pytest.TempPathFactory) -> None:
    from _cli import run  # main() in process, seen as a subprocess sees it

    rng = np.random.default_rng(9)
    y = leaderboard(rng, 600, 4, [0.3, 0.22, 0.0], s_run=0.04)
    d = lp.diagnose(y, models=["a", "b", "c"], pairs="all")
    for p in d.pairs:
        ia, ib = "abc".index(p.model_a), "abc".index(p.model_b)
        c = lp.compare(y[:, :, ia], y[:, :, ib])
        assert c.pvalue == p.pvalue_run
        assert c.q == pytest.approx(p.q_run, rel=1e-12)
        assert c.resolved == p.resolved_run
        assert c.runs_needed == p.runs_needed
        lo, hi = c.confidence_interval()
        assert (lo, hi) == pytest.approx((p.run_ci_low, p.run_ci_high), rel=1e-12)
    rows = [f"{m},{t},q{i},{float(y[i, t, k])!r}" for k, m in enumerate("abc") for t in range(4) for i in range(600)]
    path = tmp_path / "runs.csv"
    path.write_text("model,seed,item,score\n" + "\n".join(rows) + "\n")
    out = run(["diagnose", str(path), "--run", "seed", "--pairs", "all", "--format", "json"], check=True)
    import json

    payload = json.loads(out.stdout)
    cli = {(r["model_a"], r["model_b"]): r for r in payload["pairs"]}
    for p in d.pairs:
        assert cli[(p.model_a, p.model_b)]["resolved_run"] == p.resolved_run
        assert cli[(p.model_a, p.model_b)]["pvalue_run"] == pytest.approx(p.pvalue_run, rel=1e-9)


def test_gate_with_runs_is_the_one_sided_run_test() -> None:
    rng = np.random.default_rng(10)
    y = leaderboard(rng, 1500, 4, [0.0, 0.01], s_run=0.03)
    g = lp.gate(y[:, :, 0], y[:, :, 1], margin=0.02)
    assert g.test == "run_t" and g.runs_baseline == 4
    c = lp.compare(y[:, :, 1], y[:, :, 0])  # candidate - baseline
    se, df = c.se_runs, c.run_df
    from scipy import stats

    assert g.pvalue_noninferiority == pytest.approx(stats.t.sf((c.delta + 0.02) / se, df), rel=1e-9)
    # the verdict is its interval: PASS exactly when the lower bound clears -margin
    assert (g.verdict == "PASS") == (g.ci_low > -0.02)
    # never less strict than the gate on the run means
    plain = lp.gate(y[:, :, 0].mean(1), y[:, :, 1].mean(1), margin=0.02)
    assert g.pvalue_noninferiority >= plain.pvalue_noninferiority


def test_errors_name_the_problem() -> None:
    y = np.zeros((10, 1, 2))
    with pytest.raises(ValueError, match="at least 2 runs"):
        lp.diagnose(runs=lp.RunScores.from_array(y))
    with pytest.raises(ValueError, match="either `scores` or `runs`"):
        lp.diagnose(np.zeros((10, 2)), runs=np.zeros((10, 2, 2)))
    with pytest.raises(ValueError, match="one run cannot estimate the run-to-run variance"):
        lp.compare(np.zeros((10, 1)), np.zeros((10, 3)))
    with pytest.raises(ValueError, match="one run cannot estimate"):
        lp.gate(np.zeros((10, 3)), np.zeros((10, 1)))
    with pytest.raises(ValueError, match="not both"):
        lp.compare(np.zeros((10, 2)), np.zeros((10, 2)), cluster=[0, 1] * 5)


@pytest.mark.parametrize("binary", [False, True])
def test_matched_templates_have_their_size_and_cancel_the_common_shift(binary: bool) -> None:
    """Templates shared by two equal models, with a large shift common to both and a small one of
    each: the matched run test rejects at most at alpha (and keeps at least half of it); the independent
    one, which counts the common shift as each model's noise, is valid but far more cautious. Sized as the
    test above (4,000 pairs: a 7% test fails the bound 0.05 + 3.5 SE with probability 0.97)."""
    reps, n, r = 4000, 400, 4
    y = null_pairs(30_000 + binary, reps, n, r, binary=binary, common=0.4 if binary else 0.15,
                   own=0.15 if binary else 0.05)
    matched = float(np.mean(run_pvalues(y, matched=True) <= 0.05))
    independent = float(np.mean(run_pvalues(y) <= 0.05))
    se = math.sqrt(0.05 * 0.95 / reps)
    assert 0.025 < matched < 0.05 + 3.5 * se, matched
    assert independent < 0.02


def test_matched_runs_one_verdict_and_errors() -> None:
    rng = np.random.default_rng(12)
    template = rng.normal(0, 0.1, (1, 5, 1)) + rng.normal(0, 0.02, (1, 5, 3))
    y = np.array([0.3, 0.25, 0.1]) + rng.normal(0, 1, (800, 1, 1)) + template + rng.normal(0, 0.4, (800, 5, 3))
    board = lp.RunScores.from_array(y, models=["a", "b", "c"], runs_by="template")
    d = lp.diagnose(board, pairs="all")
    assert d.settings["run_pairing"] == "matched"
    for p in d.pairs:
        ia, ib = "abc".index(p.model_a), "abc".index(p.model_b)
        c = lp.compare(y[:, :, ia], y[:, :, ib], run_pairing="matched")
        assert c.pvalue == p.pvalue_run and c.runs_needed == p.runs_needed and c.run_pairing == "matched"
    seeds = lp.RunScores.from_array(y, models=["a", "b", "c"])  # runs by "run": independent by default
    assert lp.diagnose(seeds).settings["run_pairing"] == "independent"
    with pytest.raises(ValueError, match="same runs"):
        lp.compare(y[:, :3, 0], y[:, :, 1], run_pairing="matched")
    ragged = lp.RunScores(items=list(range(800)), models=["a", "b"], blocks=[y[:, :, 0], y[:, :4, 1]],
                          run_labels=[["0", "1", "2", "3", "4"], ["0", "1", "2", "3"]], runs_by="template")
    assert lp.diagnose(ragged).settings["run_pairing"] == "independent"  # auto: not every model has them
    with pytest.raises(ValueError, match="same runs"):
        lp.diagnose(ragged, run_pairing="matched")
