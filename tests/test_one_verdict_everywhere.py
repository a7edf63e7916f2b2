"""One verdict through every entry point (issue 39, acceptance 2): over random designs -- 0/1 and graded
scores, with and without clusters, few and many items -- the same pair gets the same p-value, interval,
q and verdict wherever the same test is reported: diagnose and compare, diagnose's table and the
command line's JSON, the rank intervals of the API and of ``llm-power rank``, a census subset and the
paired t test, pass@1 and the paired t test, the noise report and diagnose's run regime (and compare of
the runs); and no tie group holds a resolved pair of its own regime (``ties_hold_no_resolved_pair``
checks groups against the table's verdicts). The gate and the arena are held to their own verdicts the
same way in ``tests/test_one_verdict.py``, and the inspect extension's report is diagnose's
(``tests/integrations/test_inspect_extension.py``).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_one_verdict import ties_hold_no_resolved_pair

import llm_power as lp
from llm_power.cli.main import main

REGIME_FLAGS = ("resolved", "resolved_corrected", "resolved_cluster", "resolved_anytime")


def quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _design(seed: int, binary: bool, clustered: bool) -> tuple[np.ndarray, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    n, m = int(rng.choice([24, 60, 300, 900])), int(rng.integers(3, 6))
    g = int(rng.integers(6, 20))
    cluster = rng.integers(0, g, n) if clustered else None
    bump = rng.normal(0, 0.6, g)[cluster] if clustered else 0.0
    skill = rng.normal(0, 0.4, m)
    logit = skill[None, :] + (bump[:, None] if clustered else 0.0) + rng.normal(0, 1.0, (n, 1))
    p = 1 / (1 + np.exp(-logit))
    x = (rng.random((n, m)) < p).astype(float) if binary else np.clip(p + rng.normal(0, 0.1, (n, m)), 0, 1)
    if clustered and np.unique(cluster).size < 2:
        cluster[0], cluster[-1] = 0, 1
    return x, cluster


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), binary=st.booleans(), clustered=st.booleans())
def test_the_same_pair_gets_the_same_answer_everywhere(seed, binary, clustered):
    x, cluster = _design(seed, binary, clustered)
    n, m = x.shape
    diag = quiet(lp.diagnose, x, cluster=cluster, pairs="all", correction="holm", anytime=True, cluster_resamples=0,
                 rng=seed)
    c = diag.columns
    ties_hold_no_resolved_pair(diag)
    adjacent = quiet(lp.diagnose, x, cluster=cluster, correction="holm", anytime=True, cluster_resamples=0, rng=seed)
    ties_hold_no_resolved_pair(adjacent)
    # the displayed family's verdict of a pair is its all-pairs verdict where the family makes no difference
    index = {(a, b): k for k, (a, b) in enumerate(zip(c["model_a"], c["model_b"], strict=True))}
    for k, (a, b) in enumerate(zip(adjacent.columns["model_a"], adjacent.columns["model_b"], strict=True)):
        j = index[a, b]
        for key in ("pvalue", "q", "n_star", "ci_low", "ci_high") + (("pvalue_cluster", "q_cluster")
                                                                      if clustered else ()):
            assert adjacent.columns[key][k] == pytest.approx(c[key][j], rel=1e-12, nan_ok=True), key
        for flag in ("resolved", "resolved_anytime") + (("resolved_cluster",) if clustered else ()):
            assert bool(adjacent.columns[flag][k]) == bool(c[flag][j]), flag
    # compare: the same test, p, interval, q and verdict (the clustered ones with clusters)
    for k in range(min(4, len(c["delta"]))):
        a, b = (diag.order[int(c[r][k]) - 1] for r in ("rank_a", "rank_b"))
        cmp = quiet(lp.compare, x[:, a], x[:, b], cluster=cluster, rng=seed)
        suffix = "_cluster" if clustered else ""
        assert cmp.pvalue == pytest.approx(c["pvalue" + suffix][k], rel=1e-9)
        assert cmp.q == pytest.approx(c["q" + suffix][k], rel=1e-9, nan_ok=True)
        assert cmp.resolved == bool(c["resolved" + suffix][k])
        lo, hi = cmp.confidence_interval()
        want = (c["cluster_ci_low"][k], c["cluster_ci_high"][k]) if clustered else (c["ci_low"][k], c["ci_high"][k])
        assert (lo, hi) == pytest.approx(want, rel=1e-7, abs=1e-12)
        assert (cmp.verdict_reason == "resolved") == cmp.resolved
    # the rank intervals: from the scores or from their diagnosis, the same numbers; a pair they separate
    # is resolved under every regime of the report
    report = lp.rank_report(diag, rng=7)
    ranks = report.ranks
    assert ranks is not None
    again = lp.rank_intervals(quiet(lp.diagnose, x, cluster=cluster, pairs="all", correction="holm", anytime=True,
                                    rng=seed + 1), rng=7)
    assert ranks.critical_value == again.critical_value
    assert ranks.rank_ci_low.tolist() == again.rank_ci_low.tolist() and ranks.rank_ci_high.tolist() == again.rank_ci_high.tolist()
    rank = {name: k for k, name in enumerate(diag.models)}
    for k, (a, b) in enumerate(zip(c["model_a"], c["model_b"], strict=True)):
        if ranks.rank_ci_high[rank[a]] < ranks.rank_ci_low[rank[b]]:  # separated by the rank intervals
            assert all(bool(c[f][k]) for f in REGIME_FLAGS if f in c), (a, b)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), binary=st.booleans(), clustered=st.booleans())
def test_subsets_and_pass_at_k_report_the_paired_t_test_they_are(seed, binary, clustered):
    """A census of the items (the population target) is the paired t test; pass@1 of one sample per
    question is the paired t test over questions -- the same p and interval as compare's paired t (its
    cluster-robust t with clusters)."""
    x, cluster = _design(seed, binary, clustered)
    a, b = x[:, 0], x[:, 1]
    n = a.size
    ref = quiet(lp.compare, a, b, method="cluster_t" if clustered else "paired_t", cluster=cluster)
    if not clustered:  # the paired t test is scipy's: compare used a plug-in variance for 0/1 scores
        from scipy import stats

        assert ref.pvalue == pytest.approx(max(stats.ttest_rel(a, b).pvalue, 2.2e-308), rel=1e-9)
        assert ref.pvalue == pytest.approx(lp.paired_t(a, b).pvalue, rel=1e-12)
    if binary:  # pass@k takes pass/fail per sample
        pk = quiet(lp.compare_pass_at_k, a[:, None], b[:, None], k=1, cluster=cluster, rng=0)
        assert float(pk.pvalue[0]) == pytest.approx(ref.pvalue, rel=1e-9)
        assert (float(pk.ci_low[0]), float(pk.ci_high[0])) == pytest.approx(tuple(ref.confidence_interval()),
                                                                            rel=1e-9)
    if not clustered:
        sub = quiet(lp.subset_compare, a, np.arange(n), b, n_items=n)
        assert sub.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
        assert (sub.ci.low, sub.ci.high) == pytest.approx(tuple(ref.confidence_interval()), rel=1e-9)
        assert sub.decided == (ref.pvalue <= 0.05)


def _wide_csv(path, x, cluster):
    frame = pd.DataFrame(x, columns=[f"m{k}" for k in range(x.shape[1])])
    frame.insert(0, "item", [f"q{i}" for i in range(x.shape[0])])
    if cluster is not None:
        frame.insert(1, "subject", [f"s{g}" for g in cluster])
    frame.to_csv(path, index=False)


@pytest.mark.parametrize(("seed", "binary", "clustered"), [(3, True, True), (4, False, False), (5, True, False)])
def test_the_command_line_json_is_the_api(tmp_path, capsys, seed, binary, clustered):
    """``llm-power diagnose --format json`` and ``llm-power rank --format json`` give the API's p, interval,
    q, verdict per regime and rank intervals, and the same tie groups."""
    x, cluster = _design(seed, binary, clustered)
    path = tmp_path / "w.csv"
    _wide_csv(path, x, cluster)
    flags = ["--pairs", "all", "--correction", "holm", "--anytime", "--cluster-resamples", "0", "--seed", "2"]
    flags += ["--cluster", "subject"] if clustered else []
    assert quiet(main, ["diagnose", str(path), *flags, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    frame = pd.read_csv(path)
    models = [c for c in frame.columns if c.startswith("m")]
    diag = quiet(lp.diagnose, frame[models], cluster=frame["subject"] if clustered else None, pairs="all",
                 correction="holm", anytime=True, cluster_resamples=0, rng=2)
    assert payload["tie_groups"] == diag.tie_groups and payload["settings"]["headline"] == diag.settings["headline"]
    for got, want in zip(payload["pairs"], diag.pairs, strict=True):
        for key in ("pvalue", "q", "ci_low", "ci_high", *REGIME_FLAGS, "pvalue_cluster", "q_cluster"):
            if hasattr(want, key) and getattr(want, key) is not None:
                value = getattr(want, key)
                if isinstance(value, float) and math.isnan(value):
                    assert got[key] is None, key
                else:
                    assert got[key] == pytest.approx(value), key
    ranks = lp.rank_report(diag, rng=2).ranks
    assert payload["rankings"]["ranks"]["rank_ci_low"] == ranks.rank_ci_low.tolist()
    assert quiet(main, ["rank", str(path), *flags, "--format", "json"]) == 0
    ranked = json.loads(capsys.readouterr().out)["ranks"]
    assert ranked["rank_ci_low"] == ranks.rank_ci_low.tolist() and ranked["rank_ci_high"] == ranks.rank_ci_high.tolist()
    assert ranked["critical_value"] == pytest.approx(ranks.critical_value)


def test_rank_with_clusters_equals_the_demo(tmp_path, capsys):
    """``llm-power rank FILE --cluster ...`` with the demo's settings gives the demo's rank intervals (issue 39,
    acceptance 4): the same data, options and seed through rank, diagnose, the demo and the API."""
    from llm_power.io.demo import load_mmlu_pro

    assert quiet(main, ["demo", "--no-html", "--format", "json"]) == 0
    demo = json.loads(capsys.readouterr().out)
    assert demo["verdict"][0].startswith("Headline (cluster, the strictest of the 4 regimes computed): ")
    data = load_mmlu_pro()
    path = tmp_path / "mmlu.csv"
    frame = pd.DataFrame(data.scores.astype(int), columns=data.models)
    frame.insert(0, "item", data.items)
    frame.insert(1, "category", data.clusters)
    frame.to_csv(path, index=False)
    for argv in (["rank", "--demo"], ["rank", str(path), "--cluster", "category", "--top", "10", "--correction",
                                      "holm", "--anytime"]):
        assert quiet(main, [*argv, "--format", "json"]) == 0
        rank = json.loads(capsys.readouterr().out)["ranks"]
        assert rank["models"] == demo["models"]
        assert rank["rank_ci_low"] == demo["rankings"]["ranks"]["rank_ci_low"], argv
        assert rank["rank_ci_high"] == demo["rankings"]["ranks"]["rank_ci_high"], argv


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), binary=st.booleans(), matched=st.booleans())
def test_noise_and_diagnose_report_the_same_run_test(seed, binary, matched):
    """Several runs per model: the noise report's gap (its SE over items and runs, the run test's df and
    interval) is the run regime's of diagnose, and compare of the two models' runs gives its p, q and
    verdict."""
    rng = np.random.default_rng(seed)
    n, r, m = int(rng.choice([40, 200])), int(rng.integers(2, 5)), 3
    skill = rng.normal(0, 0.3, m)
    logit = skill[None, None, :] + rng.normal(0, 0.3, (1, r, m)) + rng.normal(0, 1.0, (n, 1, 1))
    p = 1 / (1 + np.exp(-logit))
    x = (rng.random((n, r, m)) < p).astype(float) if binary else np.clip(p + rng.normal(0, 0.05, (n, r, m)), 0, 1)
    pairing = "matched" if matched else "independent"
    diag = quiet(lp.diagnose, x, models=["a", "b", "c"], run_pairing=pairing)
    rep = quiet(lp.noise, x, models=["a", "b", "c"], run_pairing=pairing, rng=0)
    c = diag.columns
    rows = {(row["model_a"], row["model_b"]): row for row in rep.variance.pairs}
    for k, (a, b) in enumerate(zip(c["model_a"], c["model_b"], strict=True)):
        row = rows.get((a, b))
        if row is None:
            continue
        assert row["se"] == pytest.approx(c["se_run"][k], rel=1e-9)
        assert row["df"] == pytest.approx(c["run_df"][k], rel=1e-9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((c["run_ci_low"][k], c["run_ci_high"][k]), rel=1e-9)
        ia, ib = ["a", "b", "c"].index(a), ["a", "b", "c"].index(b)
        cmp = quiet(lp.compare, x[:, :, ia], x[:, :, ib], run_pairing=pairing)
        assert cmp.pvalue == pytest.approx(c["pvalue_run"][k], rel=1e-9)
        assert cmp.q == pytest.approx(c["q_run"][k], rel=1e-9, nan_ok=True)
        assert cmp.resolved == bool(c["resolved_run"][k])
