"""No sentence contradicts the numbers beside it (issue 39, points 6 and 7): each case a user met, with the
words the report now says instead -- decided by the data and an outside oracle where there is one.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power._core.errors import DegenerateDataWarning
from llm_power.cli.main import main
from llm_power.report.view import build_view


def quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def test_a_winner_right_on_every_item_gets_no_zero_width_interval():
    """A 100% score has no variance: the selection-corrected intervals are undefined (NaN, with a warning),
    and the report says why instead of printing [100%, 100%]."""
    rng = np.random.default_rng(1)
    x = np.column_stack([np.ones(300), (rng.random(300) < 0.7), (rng.random(300) < 0.6)]).astype(float)
    diag = lp.diagnose(x, models=["perfect", "b", "c"])
    with pytest.warns(DegenerateDataWarning, match="no variance"):
        win = lp.winners_curse(diag, rng=0)
    assert win.selected == ["perfect"] and all(math.isnan(v) for v in win.hybrid_ci + win.naive_ci)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = build_view(diag, rankings=lp.rank_report(diag, rng=0))
    line = next(s for s in view.ranking.lines() if s.startswith("perfect"))
    assert "the same on every item" in line and "100.00% – 100.00%" not in line


def test_a_correction_that_changes_nothing_says_so():
    """The demo's #1 leads by ten points: the corrected estimate equals the naive one, so the report does
    not say "scores X because the same data picked it ... corrected: X"."""
    rng = np.random.default_rng(2)
    x = (rng.random((3000, 3)) < [0.8, 0.6, 0.55]).astype(float)
    diag = lp.diagnose(x, models=["a", "b", "c"])
    report = lp.rank_report(diag, rng=0)
    assert f"{100 * report.winner.hybrid_estimate:.2f}" == f"{100 * report.winner.estimate:.2f}"
    line = next(s for s in build_view(diag, rankings=report).ranking.lines() if s.startswith("a "))
    assert "does not move the estimate" in line and "because the same data picked it" not in line


def test_no_step_beside_an_unresolved_gap_with_infinite_n_star():
    """Two models with the same score, disagreeing on two items: no gap, so N* is infinite -- the report
    used to say "next: no displayed gap is too small" beside the unresolved pair."""
    a = np.r_[np.ones(30), np.zeros(30)]
    b = a.copy()
    b[0], b[59] = 0.0, 1.0
    diag = quiet(lp.diagnose, np.column_stack([a, b]), models=["a", "b"])
    assert not diag.columns["resolved"][0] and math.isinf(diag.columns["n_star"][0])
    view = build_view(diag)
    assert not view.steps and len(view.next_steps) == 1
    assert view.next_steps[0].startswith("no unresolved gap would be resolved by more items like these: N* = ∞")
    assert "no displayed gap is too small" not in " ".join(view.next_steps)
    x = (np.random.default_rng(3).random((4000, 2)) < [0.8, 0.5]).astype(float)
    done = build_view(lp.diagnose(x, models=["a", "b"]))
    assert done.next_steps[0].startswith("every displayed gap is resolved; stress the verdict with")


def test_an_infinite_mde_beside_a_finite_n_star_is_explained():
    """Four items, two disagreements: N* = 12 items at this disagreement rate, yet no gap is detectable at
    these four -- said as such, not "MDE ∞" beside "N* 12"."""
    res = quiet(lp.compare, np.array([1, 1, 1, 0.0]), np.array([0, 0, 1, 0.0]))
    assert res.n_star == 12 and math.isinf(res.mde)
    assert "no gap is detectable with power 0.8 at these 4 items (MDE = ∞" in res.summary()


def test_an_asymmetric_interval_is_not_shown_as_plus_minus(capsys, tmp_path):
    """80% of 30 items: Wilson's interval is [62.7%, 90.5%], 17.3 points below and 10.5 above -- not ±13.9."""
    lo, hi = lp.proportion_ci(24, 30)
    assert (round(100 * (0.8 - lo), 1), round(100 * (hi - 0.8), 1)) == (17.3, 10.5)
    assert main(["demo", "--error-bars"]) == 0
    out = capsys.readouterr().out
    assert "−17.3 / +10.5" in out and "±16.8" in out  # a score of 50% is symmetric
    path = tmp_path / "one.csv"
    path.write_text("item,solo\n" + "".join(f"q{i},{int(i < 24)}\n" for i in range(30)))
    assert main(["diagnose", str(path)]) == 0
    assert "−17.3 / +10.5 points" in capsys.readouterr().out
    x = np.column_stack([np.r_[np.ones(24), np.zeros(6)], np.r_[np.ones(12), np.zeros(18)]])
    rows = build_view(lp.diagnose(x, models=["a", "b"])).models
    assert rows[0].half == "−17.3 / +10.5"


def test_after_a_resolved_headline_the_other_regimes_say_resolved_too():
    """Runs: "0 of 1 once run-to-run noise counts" after "resolved" read as a count of resolved pairs."""
    rng = np.random.default_rng(4)
    x = (rng.random((2000, 3, 2)) < [0.85, 0.5]).astype(float)  # items x runs x models, a clear gap
    diag = lp.diagnose(x, models=["a", "b"])
    assert diag.n_unresolved == {"iid": 0, "runs": 0}
    sentences = build_view(diag).sentences
    assert sentences[0].startswith("Headline (") and "is resolved by this benchmark" in sentences[0]
    assert sentences[1].startswith("It is resolved ")
    assert not any(s.startswith("0 of") for s in sentences)
    assert diag.settings["method"] == "wald"  # was the models' interval description


def test_a_single_models_duplicate_items_are_an_error(tmp_path, capsys):
    """One model given twice (the same file) or an item twice: an error as for two models -- n is not
    inflated into a narrower interval."""
    path = tmp_path / "one.csv"
    path.write_text("model,item,score\n" + "".join(f"A,q{i},{i % 2}\n" for i in range(40)))
    assert main(["diagnose", str(path), str(path)]) == 1
    assert "model 'A' has item 'q0' more than once" in capsys.readouterr().err
    twice = tmp_path / "twice.csv"
    twice.write_text("model,item,score\nA,q1,1\nA,q1,1\nA,q2,0\n")
    assert main(["diagnose", str(twice)]) == 1
    assert "more than once" in capsys.readouterr().err


def test_the_anytime_note_prints_the_fixed_critical_value_of_alpha():
    """At alpha = 0.01 the fixed-n critical value is 2.58, not 1.96."""
    from llm_power.report.html import render_html

    x = (np.random.default_rng(5).random((500, 3)) < [0.7, 0.65, 0.5]).astype(float)
    html = render_html(lp.diagnose(x, alpha=0.01, anytime=True))
    assert f"instead of {stats.norm.isf(0.005):.2f}, the fixed-n one at α = 0.01" in html
    assert "instead of 1.96" not in html


def test_compare_with_clusters_shows_the_clustered_standard_error(tmp_path, capsys):
    rng = np.random.default_rng(6)
    g = np.repeat(np.arange(20), 30)
    bump = rng.normal(0, 0.8, 20)[g]
    a = (rng.random(600) < 1 / (1 + np.exp(-(0.5 + bump)))).astype(int)
    b = (rng.random(600) < 1 / (1 + np.exp(-(0.2 + bump)))).astype(int)
    res = quiet(lp.compare, a, b, cluster=g)
    half = stats.t.isf(0.025, res.cluster_df) * res.se_cluster
    assert tuple(res.confidence_interval()) == pytest.approx((res.delta - half, res.delta + half), rel=1e-10)
    path = tmp_path / "two.csv"
    path.write_text("item,subject,A,B\n" + "".join(f"q{i},s{g[i]},{a[i]},{b[i]}\n" for i in range(600)))
    assert main(["compare", str(path), "--cluster", "subject", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["se_cluster"] == pytest.approx(res.se_cluster)
    assert main(["compare", str(path), "--cluster", "subject"]) == 0
    out = capsys.readouterr().out
    assert "SE cluster-robust" in out and "IID; φ =" in out


def test_a_graded_gate_without_variance_warns_and_stays_inconclusive():
    """Every paired difference the same: the gate's paired t has no variance (NaN bounds, INCONCLUSIVE) and
    says so once (this path once called a flag as if it were the warning function)."""
    base = np.random.default_rng(7).integers(0, 8, 200) / 8  # graded, and the shift exact in binary
    with pytest.warns(DegenerateDataWarning, match="every paired difference is the same"):
        res = lp.gate(base, base + 0.125, margin=0.0)
    assert res.verdict == "INCONCLUSIVE" and math.isnan(res.ci_low)
