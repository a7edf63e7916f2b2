"""ArenaMonitor: anytime-valid monitoring of a live arena (issue 46, part 1).

Oracles: the asymptotic sequence against the public Bradley-Terry fit (its sandwich standard
error, per battle or per prompt) and the public normal-mixture boundary and e-value; the betting
sequence's e-value against the capital computed by hand from the bets. Validity: simulated arenas
of 10-50 models with uneven pair sampling and prompt clusters, a look after every batch, checked
at every look (the time-uniform error, the FDR of e-BH) and against the fixed-n Wald test peeked
at every look, which inflates.

The simulated arenas (``_design``, ``_stream``): ratings rounded to 0.1 with half of the models in
tied pairs (true gaps 0, so e-BH can make false discoveries), 15% of the pairs sampled 10x as often
as the rest, model_a / model_b in random order, no ties. With prompt clusters each prompt has a
random effect per model, v ~ U(-1, 1), and P(a beats b | prompt) = p + kappa min(p, 1 - p)
(v_a - v_b) / 2 with p = expit(theta_a - theta_b): battles sharing a prompt are correlated, and
averaged over prompts P(a beats b) = p exactly, so the Bradley-Terry parameter of the population
(the pseudo-true value of the fit, the target of the sequences) is theta.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import llm_power as lp
from llm_power import ArenaMonitor, bradley_terry, monitor_battles
from llm_power._core.errors import DataError
from llm_power._kernel.betting import bets
from llm_power.sequential import anytime_critical_value, normal_mixture_boundary, normal_mixture_log_evalue


def _names(m):
    return [f"m{k:02d}" for k in range(m)]


def _design(m, rng, *, uneven=True, tied=0.5):
    theta = np.round(rng.normal(0, 0.6, m), 1)
    for g in range(int(m * tied) // 2):
        theta[2 * g + 1] = theta[2 * g]
    i, j = np.triu_indices(m, 1)
    w = np.ones(i.size)
    if uneven:
        w[rng.random(i.size) < 0.15] = 10.0
    return theta, i, j, w / w.sum()


def _stream(theta, i, j, prob, rng, n, *, cluster_size=0, kappa=0.8):
    names = np.array(_names(theta.size))
    p = rng.choice(i.size, n, p=prob)
    a, b = i[p], j[p]
    flip = rng.random(n) < 0.5
    a, b = np.where(flip, b, a), np.where(flip, a, b)
    pw = special.expit(theta[a] - theta[b])
    cols = {}
    if cluster_size:
        g = np.arange(n) // cluster_size
        v = rng.uniform(-1, 1, (g.max() + 1, theta.size))
        pw = pw + kappa * np.minimum(pw, 1 - pw) * (v[g, a] - v[g, b]) / 2
        cols["prompt"] = g
    win = rng.random(n) < pw
    return pd.DataFrame({"model_a": names[a], "model_b": names[b],
                         "winner": np.where(win, "model_a", "model_b"), **cols})


def _simulate(m=10, reps=60, looks=20, batch=500, *, correction="bonferroni", method="asymptotic",  # noqa: PLR0913
              cluster_size=0, seed=1, alpha=0.05, late=0):
    """Per replicate: did any pair's sequence ever miss its true gap; did the Bonferroni Wald interval
    (z at alpha / 2K) of the same fit, read at every look, ever miss; e-BH's largest FDP over the looks
    and its FDP at the last look. ``late``: the last ``late`` models join at the fifth look (their
    pairs are not sampled before; the monitor meets them in a batch, Bonferroni paid for ``m`` models).
    """
    rng = np.random.default_rng(seed)
    miss, wald = np.zeros(reps, bool), np.zeros(reps, bool)
    fdp_max, fdp_end = np.zeros(reps), np.zeros(reps)
    k = m * (m - 1) // 2
    z = stats.norm.isf(alpha / (2 * k))
    units = looks * batch // max(cluster_size, 1)
    for r in range(reps):
        theta, i, j, prob = _design(m, rng)
        mon = ArenaMonitor(_names(m - late), alpha=alpha, correction=correction, method=method,
                           cluster="prompt" if cluster_size else None, tuned_for=units, max_models=m)
        data = _stream(theta, i, j, prob, rng, looks * batch, cluster_size=cluster_size)
        if late:
            early = _stream(theta, i, j, np.where(j < m - late, prob, 0.0) / prob[j < m - late].sum(), rng,
                            4 * batch, cluster_size=cluster_size)
            data = pd.concat([early, data.iloc[4 * batch:]], ignore_index=True)
        for look in range(looks):
            c = mon.update(data.iloc[look * batch:(look + 1) * batch]).columns
            gap = theta[[int(s[1:]) for s in c["model_a"]]] - theta[[int(s[1:]) for s in c["model_b"]]]
            lo, hi = c["ci_low"], c["ci_high"]
            assert np.array_equal((lo > 0) | (hi < 0), c["decided"])  # one verdict, at every look
            miss[r] |= bool(np.any((gap < lo) | (gap > hi)))
            ok = np.isfinite(c["se"])
            wald[r] |= bool(np.any(ok & (np.abs(c["estimate"] - gap) > z * np.where(ok, c["se"], 1.0))))
            d = c["decided"]
            side = np.where(c["verdict"] == "A better", 1.0, -1.0)
            fdp = float(np.sum(d & ((gap == 0) | (np.sign(gap) != side)))) / max(int(d.sum()), 1)
            fdp_max[r] = max(fdp_max[r], fdp)
        fdp_end[r] = fdp
    return miss, wald, fdp_max, fdp_end


def _se(x):
    return math.sqrt(max(float(np.mean(x)) * (1 - float(np.mean(x))), 0.0) / x.size)


def _battles(m=4, n=2000, seed=0, cluster_size=0):
    rng = np.random.default_rng(seed)
    theta, i, j, prob = _design(m, rng, tied=0.0)
    return _stream(theta, i, j, prob, rng, n, cluster_size=cluster_size)


# -- validation ------------------------------------------------------------------------------------
def test_options_are_checked_with_one_line_messages(monkeypatch):
    with pytest.raises(ValueError, match="`correction` must be one of"):
        ArenaMonitor(correction="holm")
    with pytest.raises(ValueError, match="`method` must be one of"):
        ArenaMonitor(method="bootstrap")
    with pytest.raises(ValueError, match="needs method='asymptotic'"):
        ArenaMonitor(method="betting", cluster="prompt")
    with pytest.raises(ValueError, match="alpha"):
        ArenaMonitor(alpha=1.5)
    with pytest.raises(ValueError, match="tuned_for"):
        ArenaMonitor(tuned_for=0)
    with pytest.raises(ValueError, match="distinct"):
        ArenaMonitor(["a", "a"])
    arena = ArenaMonitor(["a", "b"])
    with pytest.raises(ValueError, match="already in the arena"):
        arena.add_model("a")
    with pytest.raises(DataError, match="model_a, model_b and winner"):
        arena.update({"model_a": ["a"], "model_b": ["b"]})
    with pytest.raises(DataError, match="winner 'c' is none of"):
        arena.update({"model_a": ["a", "a"], "model_b": ["b", "b"], "winner": ["model_a", "c"]})
    with pytest.raises(DataError, match="no column 'prompt'"):
        ArenaMonitor(cluster="prompt").update({"model_a": ["a"], "model_b": ["b"], "winner": ["tie"]})
    with pytest.raises(DataError, match="no cluster label"):
        ArenaMonitor(cluster="prompt").update({"model_a": ["a", "a"], "model_b": ["b", "b"],
                                               "winner": ["tie", "tie"], "prompt": ["p1", None]})
    monkeypatch.setenv("LLM_POWER_MAX_MONITOR_PAIRS", "10")
    with pytest.raises(ValueError, match="LLM_POWER_MAX_MONITOR_PAIRS"):
        ArenaMonitor(_names(6))
    monkeypatch.delenv("LLM_POWER_MAX_MONITOR_PAIRS")
    monkeypatch.setenv("LLM_POWER_MAX_MONITOR_MB", "1")
    with pytest.raises(ValueError, match="LLM_POWER_MAX_MONITOR_MB"):
        ArenaMonitor(_names(60), method="betting", correction="bonferroni")


def test_a_failed_batch_changes_nothing():
    arena = ArenaMonitor()
    state = arena.update(_battles(n=400))
    with pytest.raises(DataError):
        arena.update({"model_a": ["m00", "zz"], "model_b": ["m01", "m00"], "winner": ["model_a", "nobody"]})
    assert arena.models == _names(4) and arena.update(_battles(n=0)).n_battles == state.n_battles == 400


def test_bonferroni_pays_for_the_models_in_advance():
    arena = ArenaMonitor(correction="bonferroni")
    arena.update(_battles(m=3, n=300))
    with pytest.raises(ValueError, match="declare `max_models`"):
        arena.add_model("new")
    capped = ArenaMonitor(correction="bonferroni", max_models=4)
    state = capped.update(_battles(m=3, n=300))
    assert np.allclose(state.columns["level"], 0.05 / 6)  # alpha / K_max, K_max = 4 x 3 / 2
    capped.add_model("m03")
    with pytest.raises(ValueError, match="more than `max_models`=4"):
        capped.add_model("m04")


# -- the asymptotic sequence against its formula ---------------------------------------------------
@pytest.mark.parametrize("cluster_size", [0, 5])
def test_asymptotic_sequence_is_the_mixture_boundary_around_the_bradley_terry_fit(cluster_size):
    """Oracle: bradley_terry's sandwich standard error (per battle, or per prompt with t the prompts)
    and the public normal-mixture boundary and e-value, tuned with anytime_critical_value."""
    battles = _battles(m=5, n=3000, seed=3, cluster_size=cluster_size)
    cluster = "prompt" if cluster_size else None
    arena = ArenaMonitor(correction=None, cluster=cluster, tuned_for=2000)
    arena.update(battles.iloc[:1000])
    arena.update(battles.iloc[1000:])
    state = arena._last  # the current look's interval, before the running intersection
    fit = bradley_terry(battles, cluster=cluster)
    t = battles["prompt"].nunique() if cluster_size else len(battles)
    _, r = anytime_critical_value(0.05)
    c = state.columns
    for p in range(c["model_a"].size):
        a, b = c["model_a"][p], c["model_b"][p]
        gap, se = fit.ratings[fit.models.index(a)] - fit.ratings[fit.models.index(b)], fit.difference_se(a, b)
        assert c["estimate"][p] == pytest.approx(gap, abs=1e-8)
        assert c["se"][p] == pytest.approx(se, rel=1e-8)
        s = math.sqrt(t) * gap / se
        assert c["e_value"][p] == pytest.approx(math.exp(normal_mixture_log_evalue(s, t, rho=r * 2000)), rel=1e-7)
        half = se * normal_mixture_boundary(t, alpha=0.05, rho=r * 2000) / math.sqrt(t)
        if not c["decided"][p]:  # a decided pair's interval is the running intersection
            assert max(c["ci_low"][p], gap - half) == pytest.approx(c["ci_low"][p], abs=1e-9)
        assert c["ci_low"][p] >= gap - half - 1e-9 and c["ci_high"][p] <= gap + half + 1e-9


def test_with_ebh_the_intervals_are_ebys_and_agree_with_the_discoveries():
    battles = _battles(m=6, n=4000, seed=4)
    arena = ArenaMonitor(tuned_for=4000)
    for k in range(8):
        state = arena.update(battles.iloc[500 * k:500 * (k + 1)])
        c = state.columns
        found = lp.e_bh(c["e_value"], q=0.05)
        assert np.array_equal(found, c["decided"])
        level = 0.05 * max(int(found.sum()), 1) / found.size
        assert np.allclose(c["level"], level)
        assert np.array_equal((c["ci_low"] > 0) | (c["ci_high"] < 0), found)
        assert np.all(c["e_value"][found] >= found.size / (0.05 * found.sum()) * (1 - 1e-12))
    assert state.decided and {h["event"] for h in state.history} <= {"decided", "withdrawn"}


@pytest.mark.parametrize("cluster_size", [0, 4])
def test_a_final_discovery_is_rejected_by_the_fixed_n_wald_test_whose_interval_it_contains(cluster_size):
    """At the end of a stream (e-BH, current evidence), each discovery's e-BY interval at level
    alpha R / K contains the fixed-n Wald interval of the same battles at that level, with the same
    covariance (bradley_terry, per battle or per prompt), so the Wald test rejects it too."""
    battles = _battles(m=6, n=6000, seed=5, cluster_size=cluster_size)
    cluster = "prompt" if cluster_size else None
    state = monitor_battles(battles, batch=600, cluster=cluster, tuned_for=3000)
    fit = bradley_terry(battles, cluster=cluster)
    c = state.columns
    assert c["decided"].sum() >= 5
    for p in range(c["model_a"].size):
        a, b, level = c["model_a"][p], c["model_b"][p], c["level"][p]
        lo, hi = fit.difference_ci(a, b, confidence_level=1 - level)
        assert c["ci_low"][p] <= lo + 1e-12 and hi <= c["ci_high"][p] + 1e-12
        if c["decided"][p]:
            assert fit.difference_pvalue(a, b) <= level


# -- betting ---------------------------------------------------------------------------------------
def test_betting_e_value_is_the_capital_of_the_direct_battles_by_hand():
    """Oracle: the two capitals at the null computed from the predictable bets, product by product."""
    battles = _battles(m=3, n=900, seed=6)
    arena = ArenaMonitor(method="betting", correction="bonferroni", tuned_for=900)
    for k in range(3):
        state = arena.update(battles.iloc[300 * k:300 * (k + 1)])
    level = 0.05 / 3
    c = state.columns
    for p in range(3):
        a, b = c["model_a"][p], c["model_b"][p]
        rows = battles[((battles.model_a == a) & (battles.model_b == b)) | ((battles.model_a == b)
                                                                         & (battles.model_b == a))]
        y = np.where((rows.model_a == a) == (rows.winner == "model_a"), 1.0, 0.0)
        lam = bets(y, level / 2, 900)
        up, down = np.prod(1 + lam * (y - 0.5)), np.prod(1 - lam * (y - 0.5))
        assert c["e_value"][p] == pytest.approx(0.5 * max(up, down), rel=1e-9)
        assert c["battles"][p] == y.size
        assert c["estimate"][p] == pytest.approx(math.log(y.mean() / (1 - y.mean())))
        assert np.array_equal((c["ci_low"] > 0) | (c["ci_high"] < 0), c["decided"])


def test_betting_decides_a_clear_gap_and_leaves_pairs_without_battles_undecided():
    battles = _battles(m=3, n=3000, seed=7)
    arena = ArenaMonitor(method="betting", tuned_for=3000)
    arena.add_model("never")
    state = arena.update(battles)
    c = state.to_frame()
    assert (c[c.model_b == "never"].ci_low == -math.inf).all() and not c[c.model_b == "never"].decided.any()
    assert state.decided


# -- models joining --------------------------------------------------------------------------------
def test_a_model_that_joins_later_is_provisional_until_its_neighbours_are_decided():
    rng = np.random.default_rng(8)
    theta = np.array([1.5, 0.0, -1.5, 0.3])  # the late model m03 lands between m00 and m01
    i, j = np.triu_indices(3, 1)
    arena = ArenaMonitor(min_battles=20, tuned_for=5000)
    state = arena.update(_stream(theta[:3], i, j, np.full(3, 1 / 3), rng, 1500))
    assert state.status == ["established"] * 3
    i, j = np.triu_indices(4, 1)
    statuses = []
    for _ in range(20):
        state = arena.update(_stream(theta, i, j, np.full(6, 1 / 6), rng, 400))  # m03 joins in the batch
        statuses.append(dict(zip(state.models, state.status, strict=True))["m03"])
    assert statuses[0] == "provisional" and statuses[-1] == "established"
    assert state.models == ["m00", "m03", "m01", "m02"]
    first = statuses.index("established")  # from the look both neighbours' gaps are decided
    assert set(statuses[first:]) == {"established"}
    assert {("m00", "m03"), ("m03", "m01")} <= set(state.decided)


def test_a_look_before_the_battles_connect_the_models_reports_no_evidence():
    arena = ArenaMonitor(["a", "b", "c", "d"])
    state = arena.update({"model_a": ["a", "b", "c"] * 20, "model_b": ["b", "a", "d"] * 20,
                          "winner": ["model_a", "model_a", "model_a"] * 20})
    c = state.to_frame().set_index(["model_a", "model_b"])
    assert (c.loc[("a", "c"), "e_value"] == 1.0) and c.loc[("a", "c"), "ci_low"] == -math.inf
    assert state.status == ["established", "established", "provisional", "provisional"] or "provisional" in state.status


# -- replay ----------------------------------------------------------------------------------------
def test_monitor_battles_replays_a_log_in_order_as_the_monitor_would():
    battles = _battles(m=4, n=3000, seed=9).assign(ts=np.random.default_rng(0).permutation(3000))
    state = monitor_battles(battles, batch=500, order="ts", tuned_for=3000)
    arena = ArenaMonitor(tuned_for=3000)
    ordered = battles.sort_values("ts", kind="stable")
    for k in range(6):
        manual = arena.update(ordered.iloc[500 * k:500 * (k + 1)])
    assert state.looks == 6 and state.decided == manual.decided and state.history == manual.history
    assert np.array_equal(state.columns["ci_low"], manual.columns["ci_low"])
    assert all(h["event"] == "decided" for h in state.history[:1]) and state.history
    json.dumps(state.to_dict())
    assert "Arena monitor" in state.summary() and repr(state).startswith("ArenaMonitorResult(")
    with pytest.raises(DataError, match="no column 'when'"):
        monitor_battles(battles, order="when")


def test_bonferroni_replay_declares_every_model_of_the_log():
    battles = _battles(m=5, n=2000, seed=10)
    late = battles.assign(model_b=np.where(np.arange(2000) > 1500, battles.model_b.replace("m00", "late"),
                                           battles.model_b))
    state = monitor_battles(late, batch=400, correction="bonferroni")
    assert np.allclose(state.columns["level"], 0.05 / 15)  # 6 models' 15 pairs, paid for from the start
    assert state.decided == sorted(state.decided, key=state.decided.index)  # sticky, in order of decision


# -- validity --------------------------------------------------------------------------------------
def test_bonferroni_never_misses_a_gap_while_the_peeked_wald_test_does():
    """10 models, uneven sampling, a look every 500 battles (20 looks): P(any sequence ever misses its
    gap) <= alpha + 3 SE; the fixed-n Bonferroni Wald interval read at every look misses > 2 alpha."""
    miss, wald, _, _ = _simulate(reps=80, correction="bonferroni")
    assert miss.mean() <= 0.05 + 3 * _se(miss) + 1e-12
    assert wald.mean() > 2 * 0.05


def test_bonferroni_covers_when_models_join_later():
    miss, _, _, _ = _simulate(reps=60, late=2, correction="bonferroni", seed=5)
    assert miss.mean() <= 0.05 + 3 * _se(miss) + 1e-12


def test_ebh_controls_the_fdr_at_every_look():
    _, _, fdp_max, fdp_end = _simulate(reps=60, correction="e-bh", seed=2)
    assert fdp_max.mean() <= 0.05 + 3 * fdp_max.std() / math.sqrt(fdp_max.size)
    assert fdp_end.mean() <= 0.05 + 3 * fdp_end.std() / math.sqrt(fdp_end.size)


def test_the_clustered_sequence_covers_under_prompt_effects():
    miss, wald, _, _ = _simulate(reps=50, looks=15, batch=600, cluster_size=10, correction="bonferroni", seed=3)
    assert miss.mean() <= 0.05 + 3 * _se(miss) + 1e-12
    assert wald.mean() > 2 * 0.05


def test_betting_sequences_cover():
    miss, _, _, _ = _simulate(m=6, reps=30, looks=10, batch=600, method="betting", correction="bonferroni", seed=4)
    assert miss.mean() <= 0.05 + 3 * _se(miss) + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(("m", "batch", "cluster_size", "correction"), [
    (10, 500, 0, "bonferroni"), (10, 500, 0, "e-bh"), (10, 500, 10, "bonferroni"), (10, 500, 10, "e-bh"),
    (30, 3000, 10, "e-bh"), (50, 5000, 0, "bonferroni"), (50, 5000, 0, "e-bh")])
def test_validity_at_scale(m, batch, cluster_size, correction):
    reps = 400 if m == 10 else 60
    miss, wald, fdp_max, _ = _simulate(m=m, reps=reps, batch=batch, cluster_size=cluster_size,
                                       correction=correction, seed=11)
    if correction == "bonferroni":
        assert miss.mean() <= 0.05 + 3 * _se(miss) + 1e-12
        assert wald.mean() > 2 * 0.05
    else:
        assert fdp_max.mean() <= 0.05 + 3 * fdp_max.std() / math.sqrt(reps)


# -- speed -----------------------------------------------------------------------------------------
def test_a_look_at_50_models_and_100k_battles_takes_well_under_a_second():
    rng = np.random.default_rng(12)
    theta, i, j, prob = _design(50, rng)
    arena = ArenaMonitor(_names(50), tuned_for=100_000)
    arena.update(_stream(theta, i, j, prob, rng, 100_000))
    batch = _stream(theta, i, j, prob, rng, 1000)
    took = []
    for _ in range(3):
        t0 = time.perf_counter()
        arena.update(batch)
        took.append(time.perf_counter() - t0)
    assert min(took) < 0.5
