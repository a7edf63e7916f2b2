"""Subset plans: Neyman allocation against brute force over every integer allocation, the sizes
against the textbook sample-size rules computed here with scipy (Cochran 1977, §§4.4, 5.5), the
draw, and the plan file (round trip of hostile ids, one-line errors, the output rules)."""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power import DataError


def _variance(run, sizes, sd):
    w = sizes / sizes.sum()
    return float(np.sum(np.where(run < sizes, w**2 * (1 - run / sizes) * sd**2 / run, 0.0)))


@pytest.mark.parametrize("budget", [12, 30, 61])
def test_neyman_allocation_is_the_best_integer_allocation(budget):
    sizes = np.array([40.0, 25.0, 80.0])
    labels = np.repeat(["a", "b", "c"], sizes.astype(int))
    rng = np.random.default_rng(budget)
    ref = np.column_stack([(rng.random(labels.size) < np.repeat([0.95, 0.5, 0.7], sizes.astype(int))).astype(float)
                           for _ in range(4)])
    plan = lp.subset_plan(labels.size, strata=labels, budget=budget, reference=ref, control=False, rng=0)
    sd = np.array([a["sd"] for a in plan.allocation])
    # the spread the plan used: the reference models' within-stratum sd, averaged as variances
    want_sd = np.sqrt([np.mean([np.var(ref[labels == s, k], ddof=1) for k in range(4)]) for s in "abc"])
    assert sd == pytest.approx(want_sd, rel=1e-12)
    run = np.array([a["run"] for a in plan.allocation], dtype=float)
    assert run.sum() == budget and np.all(run >= 2)
    best = min(_variance(np.array(c, dtype=float), sizes, sd)
               for c in itertools.product(*(range(2, int(s) + 1) for s in sizes)) if sum(c) == budget)
    assert _variance(run, sizes, sd) <= best * 1.01


def test_proportional_allocation_and_the_limits_of_a_stratum():
    labels = np.repeat(["big", "small", "tiny"], [600, 300, 1])
    plan = lp.subset_plan(labels.size, strata=labels, budget=91, allocation="proportional", rng=0)
    assert [a["run"] for a in plan.allocation] == [60, 30, 1]  # a one-item stratum is run whole
    assert plan.expected_se > 0 and plan.allocation_method == "proportional"
    with pytest.raises(ValueError, match="at least 5"):
        lp.subset_plan(labels.size, strata=labels, budget=4)


@pytest.mark.parametrize(("target", "half"), [("benchmark", 0.03), ("population", 0.03), ("benchmark", 0.012)])
def test_size_for_a_half_width_is_the_textbook_one(target, half):
    """The worst case of a 0/1 score (S^2 = 1/4), one stratum: the smallest n whose t interval on
    n - 1 df has the half-width: S^2 (1 - n/N) / n for the benchmark (Cochran §4.4), S^2 / n for the
    population (a two-phase design: S^2 / N + S^2 (1 - n/N) / n)."""
    big_n = 5000

    def half_width(n):
        var = 0.25 * (1 - n / big_n) / n if target == "benchmark" else 0.25 / n
        return stats.t.ppf(0.975, n - 1) * math.sqrt(var)

    want = next(n for n in range(2, big_n + 1) if half_width(n) <= half)
    plan = lp.subset_plan(big_n, half_width=half, target=target, rng=0)
    assert plan.n == want and plan.target_met
    assert plan.expected_half_width == pytest.approx(half_width(want), rel=1e-9)
    n0 = (stats.norm.ppf(0.975) * 0.5 / half) ** 2  # Cochran's n0 / (1 + n0 / N) with z: a few items fewer
    assert abs(plan.n - (n0 / (1 + n0 / big_n) if target == "benchmark" else n0)) < 0.01 * plan.n + 3


def test_size_for_a_gap_at_a_power():
    big_n = 8000

    def enough(n):
        var = 0.25 * (1 - n / big_n) / n
        return (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * math.sqrt(var) <= 0.04

    want = next(n for n in range(2, big_n + 1) if enough(n))
    plan = lp.subset_plan(big_n, gap=0.04, power=0.8, target="benchmark", rng=0)
    assert plan.n == want
    capped = lp.subset_plan(big_n, gap=0.04, budget=want // 2, target="benchmark", rng=0)
    assert capped.n == want // 2 and not capped.target_met and "within a budget" in capped.target


def test_the_draw_follows_the_allocation_and_the_seed():
    labels = np.repeat(["p", "q"], [700, 300])
    plan = lp.subset_plan(labels.size, strata=labels, budget=100, rng=5)
    assert plan == lp.subset_plan(labels.size, strata=labels, budget=100, rng=5)
    assert plan.items != lp.subset_plan(labels.size, strata=labels, budget=100, rng=6).items
    pos = np.array(plan.positions)
    assert np.unique(pos).size == 100
    for a in plan.allocation:
        mine = [w for w, s in zip(plan.weights, plan.strata, strict=True) if s == a["stratum"]]
        assert len(mine) == a["run"] == int(np.sum(labels[pos] == a["stratum"]))
        assert sum(mine) == pytest.approx(a["items"])
    assert [labels[p] for p in pos] == plan.strata


def test_plan_file_round_trip_with_hostile_ids(tmp_path):
    ids = ['a,b', 'quote"d', "new\nline", "=cmd()", "ünï", " spaced ", *[f"q{k}" for k in range(60)]]
    labels = ["s,1"] * 30 + ['s"2'] * 36
    plan = lp.subset_plan(ids, strata=labels, budget=20, rng=1)
    path = tmp_path / "plan.csv"
    plan.write(path)
    back = lp.read_subset_plan(path)
    assert back.items == plan.items and back.strata == plan.strata
    assert back.weights == plan.weights
    assert sorted((a["stratum"], a["items"], a["run"]) for a in back.allocation) == \
        sorted((a["stratum"], a["items"], a["run"]) for a in plan.allocation)


@pytest.mark.parametrize(("text", "match"), [
    ("item_id,stratum\n1,a\n", "no column weight"),
    ("item_id,stratum,weight\n1,a,ten\n2,a,10\n", "line 2.*'ten' is not a number"),
    ("item_id,stratum,weight\n1,a,10\n1,a,10\n", "listed twice"),
    ("item_id,stratum,weight\n1,a,10\n2,a,5\n", "not one N_h / n_h"),
    ("item_id,stratum,weight\n1,a,0.5\n2,a,0.5\n", "at least 1"),
    ("", "empty"),
])
def test_bad_plan_files_get_one_line(tmp_path, text, match):
    path = tmp_path / "plan.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=match) as err:
        lp.read_subset_plan(path)
    assert "\n" not in str(err.value) and "plan.csv" in str(err.value)


def test_plan_write_never_follows_a_link_or_overwrites_an_input(tmp_path):
    plan = lp.subset_plan(50, budget=5, rng=0)
    target = tmp_path / "elsewhere.csv"
    target.write_text("keep", encoding="utf-8")
    link = tmp_path / "plan.csv"
    os.symlink(target, link)
    with pytest.raises(ValueError, match="symbolic link"):
        plan.write(link)
    with pytest.raises(ValueError, match="input"):
        plan.write(target, inputs=(target,))
    assert target.read_text(encoding="utf-8") == "keep"


def test_plan_argument_errors():
    with pytest.raises(ValueError, match="budget"):
        lp.subset_plan(100)
    with pytest.raises(ValueError, match="not both"):
        lp.subset_plan(100, half_width=0.1, gap=0.1)
    with pytest.raises(ValueError, match="distinct"):
        lp.subset_plan(["a", "a", "b"], budget=2)
    with pytest.raises(ValueError, match="pilot_items"):
        lp.subset_plan(100, budget=10, pilot=[1, 0, 1])
