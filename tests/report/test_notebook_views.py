"""Every result type has a notebook view (issue 42): ``_repr_html_`` shows its table -- the
command's own table where it has one, its numbers otherwise, with the per-model / per-pair / per-k
arrays as columns -- and its chart where the HTML report has one; no text leaks as a literal escape
(``\\x0a`` for a newline) and data containers have a short repr.

The factories below cover every subclass of ``Result``: a new result type fails the first test
until it has a factory here (and so a view someone has looked at).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import llm_power as lp
from llm_power._core.results import Result
from llm_power.gating import gate_tasks
from llm_power.gating._flips import flipped_items
from llm_power.gating._policy import gate_outcome
from llm_power.planning import paired_bounds

RNG = np.random.default_rng(42)
X = (RNG.random((300, 4)) < [0.8, 0.7, 0.62, 0.5]).astype(float)
CLUSTER = np.repeat(np.arange(30), 10)
MODELS = ["alpha", "beta", "gamma", "delta"]


def _battles(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    names = np.array(["a", "b", "c"])
    i, j = rng.integers(0, 3, n), rng.integers(0, 3, n)
    keep = i != j
    skill = np.array([0.7, 0.0, -0.5])
    win = rng.random(keep.sum()) < 1 / (1 + np.exp(-(skill[i[keep]] - skill[j[keep]])))
    return pd.DataFrame({"model_a": names[i[keep]], "model_b": names[j[keep]],
                         "winner": np.where(win, "model_a", "model_b"),
                         "length_a": rng.integers(50, 500, keep.sum()), "length_b": rng.integers(50, 500, keep.sum()),
                         "question_id": rng.integers(0, 40, keep.sum())})


def _runs() -> lp.RunScores:
    rng = np.random.default_rng(5)
    rows = []
    for model, p in (("a", 0.75), ("b", 0.6), ("c", 0.55)):
        truth = rng.random(200) < p
        for run in range(4):
            flip = rng.random(200) < 0.08
            rows += [{"model": model, "item": f"q{i}", "run": str(run), "score": float(t ^ f)}
                     for i, (t, f) in enumerate(zip(truth, flip, strict=True))]
    return lp.align_runs(pd.DataFrame(rows))


def _monitor() -> lp.MonitorResult:
    mon = lp.SequentialMonitor(tuned_for=600)
    state = None
    for k in range(3):
        state = mon.update(X[100 * k:100 * (k + 1), 0], X[100 * k:100 * (k + 1), 3])
    return state


def _board() -> lp.LeaderboardMonitorResult:
    board = lp.LeaderboardMonitor(MODELS, tuned_for=600, min_items=50)
    state = None
    for k in range(3):
        state = board.update(X[100 * k:100 * (k + 1)])
    return state


def _sequence() -> lp.SubsetSequenceResult:
    seq = lp.SubsetSequence(300, against=0.5)
    return seq.add(X[:60, 0])


SAMPLED = np.random.default_rng(9).choice(300, 80, replace=False)


def _plan() -> lp.SubsetPlan:
    return lp.subset_plan(300, strata=CLUSTER % 3, budget=60, rng=0)


FACTORIES = {
    "ICCResult": lambda: lp.icc_anova(X[:, 0], CLUSTER),
    "DesignEffectsResult": lambda: lp.design_effects(X[:, 0] - X[:, 1], CLUSTER),
    "EffectSizesResult": lambda: lp.effect_sizes(X[:, 0], X[:, 1]),
    "MonitorResult": _monitor,
    "LeaderboardMonitorResult": _board,
    "GateResult": lambda: lp.gate(X[:, 1], X[:, 0]),
    "GateOutcome": lambda: gate_outcome("INCONCLUSIVE", "warn"),
    "FlipTable": lambda: flipped_items(X[:, 1], X[:, 0], [f"q{k}" for k in range(X.shape[0])]),
    "TaskGateResult": lambda: gate_tasks(X[:, 1], X[:, 0], CLUSTER % 3),
    "CountEffectsResult": lambda: lp.count_effects([0.001, 0.02, 0.3, 0.04]),
    "ErrorRatesResult": lambda: lp.simulate_error_rates(6, 2, n_sims=200, rng=0),
    "BootstrapResult": lambda: lp.paired_bootstrap(X[:, 0], X[:, 1], n_resamples=200, rng=0),
    "PermutationResult": lambda: lp.permutation_test(X[:, 0], X[:, 1], n_resamples=200, rng=0),
    "TestResult": lambda: lp.paired_t(X[:, 0], X[:, 1]),
    "McNemarResult": lambda: lp.mcnemar(X[:, 0], X[:, 1]),
    "Comparison": lambda: lp.compare(X[:, 0], X[:, 1]),
    "PairedBoundsResult": lambda: paired_bounds(0.8, 0.7, 300),
    "TypeSMResult": lambda: lp.type_s_m(0.02, 0.015),
    "ShortcutRatioResult": lambda: lp.shortcut_ratio(0.9, 0.7, rho=0.3),
    "PowerSimulationResult": lambda: lp.simulated_power(300, 0.8, 0.72, rho=0.4, n_sims=200, rng=0),
    "CalibrationResult": lambda: lp.calibrate(X[:, 0], X[:, 1], n_sims=100, rng=0),
    "BradleyTerryResult": lambda: lp.bradley_terry(_battles()),
    "ArenaDiagnosis": lambda: lp.arena_diagnose(_battles()),
    "ArenaFragilityResult": lambda: lp.arena_fragility(_battles()),
    "ArenaMonitorResult": lambda: lp.monitor_battles(_battles(), batch=200, tuned_for=600),
    "AgreementResult": lambda: lp.judge_agreement(X[:, 0], X[:, 1], n_resamples=100, rng=0),
    "LengthBiasResult": lambda: lp.length_bias(_battles()),
    "PPIResult": lambda: lp.ppi_mean(X[:50, 0], X[:50, 1], X[50:, 1]),
    "WinRateResult": lambda: lp.win_rate(np.where(X[:, 0] == X[:, 1], 0.5, X[:, 0]), n_resamples=100, rng=0),
    "WinRateComparison": lambda: lp.compare_win_rates(X[:, 0], X[:, 1]),
    "FragilityResult": lambda: lp.fragility(X, models=MODELS),
    "RankIntervalsResult": lambda: lp.rank_intervals(X, models=MODELS, n_resamples=200, rng=0),
    "WinnerResult": lambda: lp.winners_curse(X, models=MODELS, rng=0),
    "RankReport": lambda: lp.rank_report(lp.diagnose(X, models=MODELS), n_resamples=200, rng=0),
    "PairResolution": lambda: lp.diagnose(X, models=MODELS).pairs[0],
    "Diagnosis": lambda: lp.diagnose(X, models=MODELS),
    "RunVarianceResult": lambda: lp.run_variance(_runs()),
    "NoiseReport": lambda: lp.noise(_runs(), rng=0),
    "RunPlanResult": lambda: lp.plan_runs(_runs(), 0.05),
    "LeaderboardPlan": lambda: lp.plan_leaderboard((RNG.random((400, 4)) < [0.8, 0.75, 0.7, 0.6]).astype(int),
                                                   n_items=[400], n_simulations=500, rng=0),
    "PassAtKResult": lambda: lp.pass_at_k_ci((RNG.random((100, 8)) < 0.4).astype(int), k=[1, 4], rng=0),
    "PassAtKComparison": lambda: lp.compare_pass_at_k((RNG.random((80, 6)) < 0.6).astype(float),
                                                      (RNG.random((80, 6)) < 0.5).astype(float), [1, 3],
                                                      n_resamples=100, rng=0),
    "PassAtKPlanResult": lambda: lp.pass_at_k_plan((RNG.random((100, 8)) < 0.4).astype(int), 4, 0.05),
    "VarianceComponentsResult": lambda: lp.variance_components((RNG.random((100, 8)) < 0.4).astype(int)),
    "RepeatedSamplingPlanResult": lambda: lp.repeated_sampling_plan(0.05, between=0.04, within=0.1),
    "SubsetPlan": _plan,
    "SubsetEstimateResult": lambda: lp.subset_estimate(X[SAMPLED, 0], SAMPLED, reference=X[:, 1:]),
    "SubsetCompareResult": lambda: lp.subset_compare(X[SAMPLED, 0], SAMPLED, X[SAMPLED, 1], reference=X[:, 2:]),
    "SubsetSequenceResult": _sequence,
}

#: the results whose command prints a table of its own, shown as that table in a notebook
OWN_TABLE = {"Comparison": "Paired comparison on", "RankIntervalsResult": "simultaneous coverage",
             "PassAtKComparison": "pass@", "NoiseReport": "", "SubsetPlan": "Plan:", "RunPlanResult": "",
             "RankReport": "simultaneous coverage", "LeaderboardPlan": "Resolving the 3 adjacent gaps"}
#: the results with a chart in the HTML report, drawn in the notebook too (their view is the report's)
CHARTS = {"Diagnosis": 2, "ArenaDiagnosis": 1}
REPORT_VIEW = {"Diagnosis": "Resolution of 3 adjacent pairs", "ArenaDiagnosis": "Arena: 3 models"}


def _result_types() -> set[str]:
    for name in lp.__all__:  # every family loaded
        getattr(lp, name)
    seen, todo = set(), list(Result.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("llm_power."):
            seen.add(cls.__name__)
        todo += cls.__subclasses__()
    return seen


def test_every_result_type_has_a_factory_here():
    assert _result_types() - set(FACTORIES) == set()


@pytest.fixture(scope="module")
def rendered():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few clusters, approximations: not what this test looks at
        return {name: make() for name, make in FACTORIES.items()}


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>|<svg.*?</svg>", " ", html, flags=re.S))


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_the_notebook_view_shows_the_results_table_and_no_escape(rendered, name):
    result = rendered[name]
    assert type(result).__name__ == name
    html = result._repr_html_()
    assert html.startswith('<div class="llmp">') and "<script" not in html.lower()
    assert "<table" in html and "<td" in html, name
    text = _text(html)
    assert not re.search(r"\\x[0-9a-f]{2}", text), re.search(r".{40}\\x[0-9a-f]{2}.{20}", text)
    assert html.count("<svg") == CHARTS.get(name, 0), name
    if name in REPORT_VIEW:
        assert REPORT_VIEW[name] in text
    elif name in OWN_TABLE:
        assert OWN_TABLE[name] in text, name
        assert "<details><summary>all fields</summary>" in html  # and every field one click away
    else:
        for field in result.fields():  # every scalar field is in the table, by name
            value = getattr(result, field)
            if isinstance(value, (int, float, str, bool)) and not isinstance(value, np.ndarray):
                assert f">{field}<" in html, (name, field)


def test_arrays_are_shown_as_columns_with_their_numbers(rendered):
    ranks = rendered["RankIntervalsResult"]
    html = ranks._repr_html_()
    for k, name in enumerate(ranks.models):  # each row: the model, its mean and its rank interval
        lo, hi = int(ranks.rank_ci_low[k]), int(ranks.rank_ci_high[k])
        row = re.search(rf"<tr><td>{k + 1}</td><td class=\"l\">{name}</td>(.*?)</tr>", html)
        assert row is not None, name
        assert f"{ranks.means[k]:.4f}" in row.group(1)
        assert (str(lo) if lo == hi else f"{lo}–{hi}") in row.group(1)
    passk = rendered["PassAtKResult"]
    html = passk._repr_html_()
    for est in np.atleast_1d(passk.estimate):  # per-k estimates, as columns beside k
        assert f"{float(est):.4g}" in html


def test_a_summary_keeps_its_lines():
    html = lp.compare(X[:, 0], X[:, 1])._repr_html_()
    summary = lp.compare(X[:, 0], X[:, 1]).summary()
    assert "\n" in summary and "\\x0a" not in html
    assert html.count("\n") >= summary.count("\n")  # the pre block keeps the newlines


def test_data_containers_have_a_short_repr():
    wide = (RNG.random((3000, 40)) < 0.6).astype(float)
    frame = pd.DataFrame(wide, columns=[f"m{k}" for k in range(40)]).assign(item=np.arange(3000))
    long = frame.melt(id_vars="item", var_name="model", value_name="score")
    for value in (lp.align_results(long), lp.pairwise_statistics(wide), _runs()):
        assert len(repr(value)) < 200 and "\n" not in repr(value), type(value).__name__
