"""The clustered test chosen by ``cluster_method`` (issue 44): one kernel function decides, so the
same pair gets the same p-value, interval and verdict from ``compare``, ``diagnose`` and the
command line; the numbers come from elsewhere -- wildboottest (fully enumerated wild cluster
bootstrap), a leave-one-cluster-out loop (CV3) and scipy's t distribution -- and a clustered verdict
is never less strict than the IID one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from _cli import run as run_cli
from _wild_oracle import wildboottest_pvalue


def _pair(g: int, n: int = 1200, seed: int = 1, graded: bool = False) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, g, n)
    eff = rng.normal(0, 0.4, g)
    a = (rng.random(n) < 1 / (1 + np.exp(-(0.45 + eff[codes])))).astype(float)
    b = (rng.random(n) < 1 / (1 + np.exp(-(0.25 + eff[codes])))).astype(float)
    if graded:
        a = np.clip(a + rng.normal(0, 0.2, n), 0, 1)
    return a, b, codes




@pytest.mark.parametrize("method", ["cr2", "cv3", "wild"])
@pytest.mark.parametrize(("g", "graded"), [(8, False), (12, False), (9, True)])
def test_compare_and_diagnose_give_one_verdict(method: str, g: int, graded: bool) -> None:
    a, b, codes = _pair(g, graded=graded)
    res = lp.compare(a, b, cluster=codes, cluster_method=method, rng=7)
    row = lp.diagnose(np.c_[a, b], models=["a", "b"], cluster=codes, cluster_method=method, rng=7).to_frame().iloc[0]
    ci = res.confidence_interval()
    sign = 1.0 if row["model_a"] == "a" else -1.0  # diagnose ranks the better model first
    assert res.pvalue == pytest.approx(row["pvalue_cluster"], rel=1e-12)
    low, high = sorted((sign * row["cluster_ci_low"], sign * row["cluster_ci_high"]))
    assert (ci.low, ci.high) == pytest.approx((low, high), rel=1e-9, abs=1e-12)
    assert res.resolved == bool(row["resolved_cluster"])
    assert res.q == pytest.approx(row["q_cluster"], rel=1e-12)
    assert res.statistic * res.se_cluster == pytest.approx(res.delta, rel=1e-9)  # the SE shown is the test's


def test_the_wild_p_value_is_wildboottests_through_diagnose() -> None:
    """12 clusters: 2^12 = 4,096 sign vectors <= 9,999 draws, so both enumerate them all: equal p."""
    rng = np.random.default_rng(3)
    n, m, g = 900, 5, 12
    codes = rng.integers(0, g, n)
    eff = rng.normal(0, 0.5, (g, 1))
    x = (rng.random((n, m)) < 1 / (1 + np.exp(-(np.linspace(0.9, 0.1, m) + eff[codes])))).astype(float)
    names = [f"m{k}" for k in range(m)]
    diag = lp.diagnose(x, models=names, cluster=codes, pairs="all", cluster_method="wild", rng=0,
                       cluster_nstar_sims=0)  # the p-values only (the same bits): no N* simulations
    frame = diag.to_frame()
    col = {name: k for k, name in enumerate(names)}  # the columns of x, not the ranks
    for _, row in frame.iterrows():
        d = x[:, col[row["model_a"]]] - x[:, col[row["model_b"]]]
        want = wildboottest_pvalue(d, codes)
        assert row["pvalue_cluster"] == pytest.approx(max(want, 1 / 4096), abs=1e-12)


def test_the_cv3_test_is_the_leave_one_cluster_out_jackknife() -> None:
    a, b, codes = _pair(10, seed=4)
    d = a - b
    g = codes.max() + 1
    theta = np.array([d[codes != k].mean() for k in range(g)])
    var = (g - 1) / g * np.sum((theta - d.mean()) ** 2)  # CV3 centred at the estimate
    t = d.mean() / np.sqrt(var)
    res = lp.compare(a, b, cluster=codes, cluster_method="cv3")
    assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(t), g - 1), rel=1e-10)
    half = stats.t.ppf(0.975, g - 1) * np.sqrt(var)
    ci = res.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-10)
    gate = lp.gate(b, a, cluster=codes, cluster_method="cv3", margin=0.0)  # candidate a: d = a - b
    iid = lp.gate(b, a, margin=0.0)
    assert gate.test == "cluster_cv3"  # the larger of the CV3 t test's one-sided p and the IID test's
    assert gate.pvalue_noninferiority == pytest.approx(max(stats.t.sf(t, g - 1), iid.pvalue_noninferiority),
                                                       rel=1e-10)


@pytest.mark.parametrize("method", ["cr2", "cv3", "wild"])
def test_the_interval_excludes_zero_exactly_when_the_test_rejects(method: str) -> None:
    rng = np.random.default_rng(11)
    n, m, g = 700, 9, 7
    codes = rng.integers(0, g, n)
    eff = rng.normal(0, 0.3, (g, 1))
    x = (rng.random((n, m)) < 1 / (1 + np.exp(-(np.linspace(0.6, 0.0, m) + eff[codes])))).astype(float)
    frame = lp.diagnose(x, cluster=codes, pairs="all", cluster_method=method, rng=2).to_frame()
    excludes = (frame["cluster_ci_low"] > 0) | (frame["cluster_ci_high"] < 0)
    rejects = frame["pvalue_cluster"] <= 0.05
    assert excludes.tolist() == rejects.tolist()
    assert 0 < rejects.sum() < len(frame)  # the check sees both outcomes
    # a cautious regime is never less strict than IID
    assert not (frame["resolved_cluster"] & ~frame["resolved"]).any()


def test_the_same_seed_gives_the_same_wild_numbers_whatever_else_is_drawn() -> None:
    a, b, codes = _pair(8, n=25, seed=2, graded=True)  # 25 graded items: the IID test flips signs first
    first = lp.compare(a, b, cluster=codes, cluster_method="wild", rng=np.random.default_rng(5))
    again = lp.compare(a, b, cluster=codes, cluster_method="wild", rng=5)
    row = lp.diagnose(np.c_[a, b], models=["a", "b"], cluster=codes, cluster_method="wild",
                      rng=5).to_frame().iloc[0]
    assert first.pvalue == again.pvalue == row["pvalue_cluster"]
    other = lp.compare(a, b, cluster=codes, cluster_method="wild", rng=6)
    assert other.pvalue != first.pvalue  # 8 clusters: Webb's weights are drawn, not enumerated


def test_options_are_checked_at_the_edge() -> None:
    a, b, codes = _pair(8)
    with pytest.raises(ValueError, match="cluster_method"):
        lp.compare(a, b, cluster=codes, cluster_method="cr3")
    with pytest.raises(ValueError, match="needs `cluster` labels"):
        lp.compare(a, b, cluster_method="wild")
    with pytest.raises(ValueError, match="two-sided"):
        lp.compare(a, b, cluster=codes, cluster_method="wild", alternative="greater")
    with pytest.raises(ValueError, match="one-sided"):
        lp.gate(a, b, cluster=codes, cluster_method="wild")
    with pytest.raises(ValueError, match="cluster_method"):
        lp.diagnose(np.c_[a, b], cluster=codes, cluster_method="jackknife")


def test_the_command_line_gives_the_apis_numbers(tmp_path) -> None:
    a, b, codes = _pair(9, seed=6)
    lines = [f"{m},q{k},{v},s{codes[k]}\n" for m, col in (("a", a), ("b", b)) for k, v in enumerate(col)]
    path = tmp_path / "scores.csv"
    path.write_text("model,item,score,subject\n" + "".join(lines))
    out = run_cli(["compare", str(path), "--cluster", "subject", "--cluster-method", "wild", "--seed", "3",
                   "--format", "json"])
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    labels = np.array([f"s{c}" for c in codes])
    want = lp.compare(a, b, cluster=labels, cluster_method="wild", rng=3)
    assert got["pvalue"] == pytest.approx(want.pvalue, rel=1e-12)
    assert got["method"] == "cluster_wild"
    out = run_cli(["diagnose", str(path), "--cluster", "subject", "--cluster-method", "cv3", "--format", "json"])
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)["pairs"][0]
    cv3 = lp.compare(a, b, cluster=labels, cluster_method="cv3")
    assert row["pvalue_cluster"] == pytest.approx(cv3.pvalue, rel=1e-12)


def test_the_level_test_and_leaving_one_cluster_out_beside_the_clustered_regime() -> None:
    """diagnose's per-pair columns against the items themselves: the level test from the power sums of
    the per-item differences (not the discordant counts the regime uses), and each cluster really
    dropped -- the gap's sign, and the cluster t test's rejection, recomputed without it."""
    from llm_power._kernel.cluster_level import item_level_test

    rng = np.random.default_rng(8)
    n, m, g = 800, 5, 9
    codes = rng.integers(0, g, n)
    eff = rng.normal(0, 0.35, (g, 1))
    x = (rng.random((n, m)) < 1 / (1 + np.exp(-(np.linspace(0.5, 0.3, m) + eff[codes])))).astype(float)
    names = [f"m{k}" for k in range(m)]
    diag = lp.diagnose(x, models=names, cluster=codes, pairs="all", rng=0)
    frame = diag.to_frame()
    col = {name: k for k, name in enumerate(names)}  # the columns of x, not the ranks
    for _, row in frame.iterrows():
        d = x[:, col[row["model_a"]]] - x[:, col[row["model_b"]]]
        sums = np.stack([np.bincount(codes, weights=d ** k, minlength=g) for k in (1, 2, 3, 4)])
        want = float(item_level_test(sums, np.bincount(codes, minlength=g)).pvalue)
        assert row["cluster_level_pvalue"] == pytest.approx(want, rel=1e-9, abs=1e-15)
        full = lp.compare(x[:, col[row["model_a"]]], x[:, col[row["model_b"]]], cluster=codes)
        signs = verdicts = 0
        for k in range(g):
            keep = codes != k
            part = lp.compare(x[keep, col[row["model_a"]]], x[keep, col[row["model_b"]]], cluster=codes[keep])
            signs += np.sign(part.delta) != np.sign(full.delta)
            verdicts += ((part.pvalue <= 0.05) != (full.pvalue <= 0.05)
                         or (part.pvalue <= 0.05 and np.sign(part.delta) != np.sign(full.delta)))
        assert row["loco_sign_flips"] == signs
        assert row["loco_verdict_flips"] == verdicts
    assert frame["loco_sign_flips"].sum() > 0 or frame["loco_verdict_flips"].sum() > 0  # the check sees flips
    level = diag.settings["cluster_level"]
    assert level["computed"] and level["n_estimable"] == len(frame)


def test_the_report_says_where_no_clustered_test_held_its_level() -> None:
    """docs/clusters.md's simulations: below 8 clusters no method held 5% in every design, and graded
    scores with skewed cluster effects defeated every method up to 40 clusters (the most simulated);
    the report says so for those designs and for no other."""
    from llm_power.report.view import build_view

    rng = np.random.default_rng(0)
    graded = rng.random((630, 3))
    binary = (rng.random((630, 3)) < 0.5).astype(float)
    cases = [(graded, 12, "on graded scores with 12 clusters"), (graded, 40, "on graded scores with 40 clusters"),
             (graded, 42, None),
             (binary, 6, "with 6 clusters no clustered test"), (binary, 14, None)]
    unequal = np.repeat(np.arange(10), np.round(20.0 * 50.0 ** np.linspace(0, 1, 10)).astype(int))  # 20 .. 1,000
    x = (np.random.default_rng(1).random((unequal.size, 3)) < 0.5).astype(float)
    caution = lp.diagnose(x, cluster=unequal, rng=0).settings["cluster_caution"]
    assert caution.startswith("with 10 clusters of very unequal sizes (coefficient of variation 1.09)")
    assert lp.diagnose(x[unequal < 8], cluster=unequal[unequal < 8], rng=0).settings["cluster_caution"] is None
    for x, g, words in cases:
        diag = lp.diagnose(x, cluster=np.arange(630) % g, rng=0)
        caution = diag.settings["cluster_caution"]
        text = build_view(diag).robustness or ""
        if words is None:
            assert caution is None and "Caution" not in text
        else:
            assert caution.startswith(words) and f"Caution: {caution}." in text


def test_every_view_says_whether_clustering_matters() -> None:
    """The sentence beside the clustered regime in the terminal view, Markdown, HTML and notebook."""
    from llm_power.report.view import build_view

    a, b, codes = _pair(9, seed=12)
    x = np.c_[a, b, (a + b > 0).astype(float)]
    diag = lp.diagnose(x, cluster=codes, rng=0)
    sentence = build_view(diag).robustness
    assert sentence and "when one cluster is left out" in sentence
    for text in (diag.to_markdown(), diag.to_html(), diag._repr_html_()):
        assert "when one cluster is left out" in text


def test_rank_demo_takes_the_options_given() -> None:
    """`rank --demo` used to keep its own settings whatever was given (a silent ignore): the declared
    options given on the command line now override the demo's, the rest stay the demo's."""
    for extra, want in ((["--cluster-method", "cv3"], {"cluster_method": "cv3", "correction": "holm"}),
                        (["--correction", "bh"], {"cluster_method": "cr2", "correction": "bh"}),
                        ([], {"cluster_method": "cr2", "correction": "holm", "anytime": True})):
        out = run_cli(["rank", "--demo", *extra, "--format", "json"])
        assert out.returncode == 0, out.stderr
        settings = json.loads(out.stdout)["settings"]
        assert {key: settings[key] for key in want} == want


def _nested(seed: int, coarse_sd: float, n: int = 900, m: int = 4, g: int = 8, per: int = 5) -> tuple[np.ndarray, ...]:
    """0/1 scores of m models with a random effect per model and fine cluster (g x per of them, nested in
    g coarse ones) and, with ``coarse_sd``, one per model and coarse cluster too (what differences keep)."""
    rng = np.random.default_rng(seed)
    fine = rng.integers(0, g * per, n)
    coarse = fine // per
    eff = rng.normal(0, 0.3, (g * per, m)) + rng.normal(0, coarse_sd, (g, m))[np.arange(g * per) // per]
    x = (rng.random((n, m)) < 1 / (1 + np.exp(-(np.linspace(0.6, 0.3, m) + eff[fine])))).astype(float)
    return x, coarse, fine


def test_coarse_vs_fine_beside_the_clustered_regime() -> None:
    """diagnose's coarse-vs-fine p-value of each pair is the kernel's test on that pair's fine-cluster
    sums, formed here from the per-item differences (not the models' sums the regime differences),
    with the draws of its own stream of the seed; the other columns do not change when it is asked for."""
    from llm_power._kernel.cluster_level import clustering_level_test
    from llm_power._kernel.wild_decision import wild_seed

    x, coarse, fine = _nested(3, 0.5)
    names = [f"m{k}" for k in range(x.shape[1])]
    labels = np.array([f"src-{f}" for f in fine])
    diag = lp.diagnose(x, models=names, cluster=coarse, cluster_fine=labels, pairs="all", rng=5)
    plain = lp.diagnose(x, models=names, cluster=coarse, pairs="all", rng=5)
    frame, before = diag.to_frame(), plain.to_frame()
    assert "cluster_fine_pvalue" not in before or before["cluster_fine_pvalue"].isna().all()
    same = [c for c in before.columns if c != "cluster_fine_pvalue"]
    assert frame[same].equals(before[same])
    col = {name: k for k, name in enumerate(names)}
    parent = np.array([np.unique(coarse[fine == h])[0] for h in range(fine.max() + 1)])
    seed = np.random.SeedSequence([wild_seed(np.random.default_rng(5)), 44])
    d = np.stack([x[:, col[a]] - x[:, col[b]] for a, b in zip(frame["model_a"], frame["model_b"], strict=True)], 1)
    sums = np.stack([np.bincount(fine, weights=d[:, k], minlength=fine.max() + 1) for k in range(d.shape[1])], 1)
    want = clustering_level_test(sums, np.bincount(fine), parent, n_resamples=999, rng=np.random.default_rng(seed))
    np.testing.assert_allclose(frame["cluster_fine_pvalue"], want.pvalue, rtol=1e-12)
    level = diag.settings["cluster_level"]["coarse_vs_fine"]
    assert level["fine_clusters"] == 40 and level["n_estimable"] == len(frame)
    assert level["combined_pvalue"] < 0.05  # a coarse effect of SD 0.5 beyond the fine one: found
    text = diag.to_markdown()
    assert "is needed beyond its 40 finer clusters (coarse vs fine:" in text
    assert "needed beyond its 40 finer clusters" in diag.to_html()
    x0, coarse0, fine0 = _nested(4, 0.0)
    null = lp.diagnose(x0, cluster=coarse0, cluster_fine=fine0, pairs="all", rng=1).settings["cluster_level"]
    assert null["coarse_vs_fine"]["combined_pvalue"] > 0.05  # no coarse effect beyond the fine one


def test_coarse_vs_fine_needs_a_nested_finer_clustering() -> None:
    x, coarse, fine = _nested(3, 0.5)
    with pytest.raises(lp.DataError, match="nested in `cluster`: fine cluster 'f2' has items in two coarse"):
        lp.diagnose(x, cluster=coarse, cluster_fine=np.array([f"f{f % 10}" for f in fine]))
    with pytest.raises(ValueError, match="must be finer than `cluster`: it has 8 clusters"):
        lp.diagnose(x, cluster=coarse, cluster_fine=coarse + 100)
    with pytest.raises(ValueError, match="give `cluster` too"):
        lp.diagnose(x, cluster_fine=fine)


def test_coarse_vs_fine_on_the_command_line_with_mmlu_pros_sources(tmp_path) -> None:
    """MMLU-Pro's 14 categories against its 91 sources (docs/clusters.md): the command line reads the
    second label field and reports what the API does with the same labels."""
    import csv
    from pathlib import Path

    from llm_power.io.demo import load_mmlu_pro

    items_csv = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmlu_pro_tiger" / "items.csv"
    with items_csv.open(newline="") as fh:
        src = {row["question_id"]: row["src"] for row in csv.DictReader(fh)}
    data = load_mmlu_pro()
    top = np.argsort(-data.scores.mean(axis=0), kind="stable")[:4]
    path = tmp_path / "mmlu.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "category", "src", *[data.models[k] for k in top]])
        for r, item in enumerate(data.items):
            w.writerow([item, data.clusters[r], src[item], *data.scores[r, top].astype(int).tolist()])
    out = run_cli(["diagnose", str(path), "--cluster", "category", "--cluster-fine", "src", "--format", "json"])
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    fine = [src[i] for i in data.items]
    want = lp.diagnose(data.scores[:, top], models=[data.models[k] for k in top], cluster=data.clusters,
                       cluster_fine=fine, rng=0)
    assert [row["cluster_fine_pvalue"] for row in got["pairs"]] == pytest.approx(
        want.columns["cluster_fine_pvalue"].tolist(), rel=1e-12)
    assert got["settings"]["cluster_level"]["coarse_vs_fine"]["fine_clusters"] == 91
    text = run_cli(["diagnose", str(path), "--cluster", "category", "--cluster-fine", "src"]).stdout
    assert "by category is needed beyond its 91 finer clusters" in " ".join(text.split())
    bad = run_cli(["diagnose", str(path), "--cluster", "src", "--cluster-fine", "category"])
    assert bad.returncode != 0 and "must be nested in --cluster" in bad.stderr


def test_each_models_interval_follows_the_cluster_method() -> None:
    """A model's score gets the pairs' clustered method (issue 44: "the same for a model's score"):
    CV3 is a leave-one-cluster-out loop written here; the wild interval's bounds are where
    wildboottest's p-value (all 2^12 sign vectors) crosses 5%; the one-model path gives the same."""
    from llm_power.intervals import one_model_summary

    a, b, codes = _pair(12, seed=21)
    x = np.c_[a, b]
    for method in ("cv3", "wild"):
        diag = lp.diagnose(x, models=["a", "b"], cluster=codes, cluster_method=method, rng=4)
        k = diag.models.index("a")
        lo, hi = diag.model_ci_low[k], diag.model_ci_high[k]
        one = one_model_summary(a, codes, confidence_level=0.95, cluster_method=method, rng=4)
        assert (one["low"], one["high"]) == pytest.approx((lo, hi), rel=1e-12)
        if method == "cv3":
            loo = np.array([a[codes != g].mean() for g in range(12)])
            se = np.sqrt(11 / 12 * np.sum((loo - a.mean()) ** 2))
            half = stats.t.ppf(0.975, 11) * se
            assert (lo, hi) == pytest.approx((a.mean() - half, a.mean() + half), rel=1e-10)
        else:
            step = 1e-4 * (hi - lo)
            assert wildboottest_pvalue(a - (lo + step), codes) > 0.05 >= wildboottest_pvalue(a - (lo - step), codes)
            assert wildboottest_pvalue(a - (hi - step), codes) > 0.05 >= wildboottest_pvalue(a - (hi + step), codes)
        assert diag.settings["model_ci_method"].startswith({"cv3": "cluster jackknife", "wild": "wild cluster"}[method])
        from llm_power.report.view import build_view

        assert build_view(diag).interval_name == {"cv3": "cluster jackknife t", "wild": "wild cluster bootstrap"}[method]


def test_bootstrap_n_star_of_the_shown_gaps_beside_the_formula() -> None:
    """diagnose's simulated N* of each shown gap is the kernel's bootstrap N* of that gap's cluster sums,
    formed here from the per-item differences, drawn from its own stream of the seed (the other
    columns do not change); with every pair only the adjacent gaps are simulated; the wild bootstrap's
    is the CR2 test's; more than 100 shown gaps are not simulated and the report says so."""
    from llm_power._kernel.cluster_nstar import bootstrap_n_star
    from llm_power._kernel.wild_decision import wild_seed
    from llm_power.report.view import build_view

    x, coarse, _ = _nested(5, 0.4, n=1500, m=5)
    names = [f"m{k}" for k in range(x.shape[1])]
    col = {name: k for k, name in enumerate(names)}
    for method in ("cr2", "wild"):
        diag = lp.diagnose(x, models=names, cluster=coarse, pairs="all", cluster_method=method, cluster_nstar_sims=300,
                           rng=2)
        frame = diag.to_frame()
        adjacent = (frame["rank_b"] == frame["rank_a"] + 1).to_numpy()
        assert frame.loc[~adjacent, "n_star_cluster_bootstrap"].isna().all()
        rows = frame[adjacent]
        d = np.stack([x[:, col[a]] - x[:, col[b]] for a, b in zip(rows["model_a"], rows["model_b"], strict=True)], 1)
        s = np.stack([np.bincount(coarse, weights=d[:, k]) for k in range(d.shape[1])], 1)
        q = np.stack([np.bincount(coarse, weights=d[:, k] ** 2) for k in range(d.shape[1])], 1)
        seed = np.random.SeedSequence([wild_seed(np.random.default_rng(2)), 45])
        want = bootstrap_n_star(s, q, np.bincount(coarse).astype(float), test="cr2", n_sims=300,
                                rng=np.random.default_rng(seed))
        np.testing.assert_allclose(rows["n_star_cluster_bootstrap"], np.ceil(want.n_star), rtol=1e-12)
        np.testing.assert_allclose(rows["design_effect_bootstrap"], want.design_effect, rtol=1e-9)
        assert diag.settings["cluster_nstar"]["test"] == "cr2"
        plain = lp.diagnose(x, models=names, cluster=coarse, pairs="all", cluster_method=method, cluster_nstar_sims=0,
                            rng=2).to_frame()
        same = [c for c in plain.columns if c not in {"n_star_cluster_bootstrap", "design_effect_bootstrap"}]
        assert frame[same].equals(plain[same])
    assert "Simulated N* (the cluster-robust t test on benchmarks of whole clusters" in (build_view(diag).robustness or "")
    wide = (np.random.default_rng(0).random((1500, 102)) < np.linspace(0.3, 0.8, 102)).astype(float)
    info = lp.diagnose(wide, cluster=coarse, cluster_resamples=0, rng=0).settings["cluster_nstar"]
    assert not info["computed"] and "more than 100 shown gaps" in info["why"]
    with pytest.raises(ValueError, match="cluster_nstar_sims"):
        lp.diagnose(x, cluster=coarse, cluster_nstar_sims=-1)
