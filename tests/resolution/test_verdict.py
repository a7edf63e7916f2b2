"""The verdict kernel (llm_power._kernel.verdict): one honest verdict, defect by defect, and its validity by simulation."""

from __future__ import annotations

import json
import math
import warnings
import numpy as np
import pytest
from scipy import stats
from conftest import table_arrays
from llm_power import (
    DataError,
    FewClustersWarning,
    InfeasibleDesignWarning,
    cells_from_margins,
    compare,
    design_effects,
    diagnose,
    discordance_from_baseline,
    mde,
    rho_bounds,
    sample_size,
    simulate_pairs,
    simulated_power,
)
from llm_power.cli.main import main
from llm_power._kernel.sufficient import pair_sums
from llm_power._kernel.verdict import cluster_verdict, iid_verdict, paired_t_test


# =================================================================================================
# reproducers and properties (was test_verdict.py)
# =================================================================================================

ALPHA = 0.05

def quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)

def brute_force_m_star(b, c, alpha=0.05, power=0.8, alternative="two-sided"):
    """Smallest number of discordant items whose exact conditional McNemar power reaches ``power``
    at pi = b/(b+c): enumerate every outcome k of Binomial(m, 1/2), keep those scipy's exact
    binomial test rejects, and add their probabilities under Binomial(m, pi)."""
    pi = b / (b + c)
    for m in range(1, 400):
        k = np.arange(m + 1)
        p = np.array([stats.binomtest(int(kk), m, 0.5, alternative=alternative).pvalue for kk in k])
        if float(np.sum(stats.binom.pmf(k[p <= alpha], m, pi))) >= power:
            return m
    return math.inf

def random_leaderboard(rng, kind):
    """(scores, cluster or None) of a random leaderboard of one of several awkward kinds."""
    if kind == "tiny_binary":
        n = int(rng.integers(8, 40))
        skill = np.sort(rng.uniform(0.3, 0.9, size=4))[::-1]
        return (rng.random((n, 4)) < skill).astype(float), None
    if kind == "binary":
        n = int(rng.integers(200, 3000))
        skill = np.sort(rng.uniform(0.4, 0.8, size=5))[::-1]
        common = rng.random(n)[:, None]
        return (0.6 * common + 0.4 * rng.random((n, 5)) < skill).astype(float), None
    if kind == "graded":
        n = int(rng.integers(30, 500))
        return rng.normal(0, 1, (n, 4)) + rng.normal(0, 1, (n, 1)) + rng.uniform(0, 0.3, 4), None
    if kind == "graded_small":  # <= 20 items: the permutation test is exact, so no MC noise
        n = int(rng.integers(6, 21))
        return rng.exponential(1, (n, 3)) + rng.uniform(0, 0.5, 3), None
    g = int(rng.integers(30, 45))
    sizes = rng.integers(5, 60, size=g)
    cluster = np.repeat(np.arange(g), sizes)
    effect = rng.normal(0, 0.8, size=g)[cluster]
    skill = np.sort(rng.uniform(0.4, 0.8, size=4))[::-1]
    logit = np.log(skill / (1 - skill))[None, :] + effect[:, None]
    x = (rng.random((cluster.size, 4)) < 1 / (1 + np.exp(-logit))).astype(float)
    if kind == "clustered_graded":
        x = x * 0.7 + 0.3 * rng.random(x.shape)
    return x, cluster

KINDS = ("tiny_binary", "binary", "graded", "graded_small", "clustered_binary", "clustered_graded")

@pytest.mark.parametrize("kind", KINDS)
def test_compare_equals_diagnose_field_by_field(kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    for _ in range(4):
        x, cluster = random_leaderboard(rng, kind)
        res = quiet(diagnose, x, cluster=cluster, pairs="all", confidence_level=0.9, cluster_resamples=0)
        order = np.argsort(-x.mean(axis=0), kind="stable")
        for p in res.pairs:
            a, b = x[:, order[p.rank_a - 1]], x[:, order[p.rank_b - 1]]
            ref = quiet(compare, a, b, confidence_level=0.9)
            assert (p.test, p.regime) == (ref.method, ref.regime)
            assert p.delta == pytest.approx(ref.delta, abs=1e-14)
            assert p.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
            assert p.n_star == ref.n_star and p.q == pytest.approx(ref.q, rel=1e-9)
            assert p.mde == pytest.approx(ref.mde, rel=1e-9) or (math.isinf(p.mde) and math.isinf(ref.mde))
            assert p.resolved == ref.resolved
            lo, hi = ref.confidence_interval()
            assert (p.ci_low, p.ci_high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
            if cluster is None:
                continue
            cl = quiet(compare, a, b, cluster=cluster, confidence_level=0.9)
            assert cl.method == "cluster_t" and cl.regime == "cluster"
            assert p.pvalue_cluster == pytest.approx(cl.pvalue, rel=1e-9)
            assert p.design_effect == pytest.approx(cl.design_effect, rel=1e-9)
            assert p.cluster_df == pytest.approx(cl.cluster_df, rel=1e-12)
            assert p.n_star_cluster == cl.n_star and p.q_cluster == pytest.approx(cl.q, rel=1e-9)
            assert p.mde_cluster == pytest.approx(cl.mde, rel=1e-9)
            assert p.resolved_cluster == cl.resolved
            lo, hi = cl.confidence_interval()
            assert (p.cluster_ci_low, p.cluster_ci_high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))

def test_compare_with_clusters_uses_them_in_test_interval_and_n_star():
    # the audit's case: a cluster-bootstrap p = 0.20 beside q = 3.26 "resolved"
    rng = np.random.default_rng(5)
    x, cluster = random_leaderboard(rng, "clustered_binary")
    a, b = x[:, 0], x[:, 1]
    for method in ("auto", "cluster_t", "bootstrap"):
        res = quiet(compare, a, b, cluster=cluster, method=method, rng=0)
        assert res.regime == "cluster" and res.n_clusters == np.unique(cluster).size
        iid = quiet(compare, a, b)
        assert res.q <= iid.q + 1e-12  # clusters never loosen the verdict
        if res.resolved:
            assert res.pvalue <= ALPHA and res.q >= 1
    for method in ("mcnemar", "mcnemar_exact", "paired_t", "permutation", "sign", "wilcoxon"):
        with pytest.raises(ValueError, match=rf"`method` '{method}' tests items as independent and cannot use `cluster`"):
            compare(a, b, cluster=cluster, method=method)

def test_cli_compare_and_cli_diagnose_agree(tmp_path, capsys):
    rng = np.random.default_rng(9)
    x, _ = random_leaderboard(rng, "binary")
    order = np.argsort(-x.mean(axis=0), kind="stable")
    names = [f"m{k}" for k in range(x.shape[1])]
    path = tmp_path / "wide.csv"
    lines = ["item," + ",".join(names)] + [f"q{i}," + ",".join(str(int(v)) for v in row) for i, row in enumerate(x)]
    path.write_text("\n".join(lines) + "\n")
    assert main(["diagnose", str(path), "--format", "json"]) == 0
    pairs = json.loads(capsys.readouterr().out)["pairs"]
    for pair in pairs:
        assert main(["compare", str(path), "--models", pair["model_a"], pair["model_b"], "--format", "json"]) == 0
        one = json.loads(capsys.readouterr().out)
        for key in ("delta", "pvalue", "n_star", "q", "mde", "resolved"):
            assert one[key] == pytest.approx(pair[key], rel=1e-9), key
    assert [p["model_a"] for p in pairs] == [names[k] for k in order[:-1]]

@pytest.mark.parametrize("kind", KINDS)
def test_resolved_implies_the_reported_test_rejects_in_every_regime(kind):
    rng = np.random.default_rng(100 + sum(map(ord, kind)))
    for _ in range(5):
        x, cluster = random_leaderboard(rng, kind)
        res = quiet(diagnose, x, cluster=cluster, pairs="all", correction="holm", anytime=True, cluster_resamples=0)
        for p in res.pairs:
            if p.resolved:
                assert p.pvalue <= ALPHA and p.q >= 1
            if p.resolved_corrected:
                assert p.pvalue_adjusted <= ALPHA and p.q_corrected >= 1 and p.resolved
            if p.resolved_anytime:
                assert p.q_anytime >= 1 and p.resolved
            if cluster is not None and p.resolved_cluster:
                assert p.pvalue_cluster <= ALPHA and p.q_cluster >= 1 and p.resolved

def test_ten_items_p_0062_is_not_resolved():
    # 10 items, 5 discordant all favouring A: the plug-in Wald q = 1.27 showed "resolved" beside
    # the exact McNemar p = 0.0625
    a, b = table_arrays(3, 5, 0, 2)
    res = quiet(compare, a, b)
    assert res.pvalue == pytest.approx(0.0625)
    assert not res.resolved and res.regime == "exact"
    m_star = brute_force_m_star(5, 0)
    assert m_star == 6
    assert res.n_star == math.ceil(m_star * 10 / 5) and res.q == pytest.approx(5 / 6)
    diag = quiet(diagnose, np.c_[a, b])
    assert not diag.pairs[0].resolved and diag.pairs[0].n_star == res.n_star

@pytest.mark.parametrize("b,c,n", [(9, 1, 200), (12, 3, 60), (20, 4, 500), (7, 0, 30), (15, 9, 100), (2, 1, 40)])
def test_exact_regime_n_star_equals_brute_force(b, c, n):
    a_arr, b_arr = table_arrays(n - b - c - 5, b, c, 5)
    res = quiet(compare, a_arr, b_arr)
    m_star = brute_force_m_star(b, c)
    assert res.regime == "exact"
    assert res.q == pytest.approx((b + c) / m_star, rel=1e-12)
    assert res.n_star == math.ceil(m_star * n / (b + c) - 1e-9)
    # one-sided: the one-sided exact test
    one = quiet(compare, a_arr, b_arr, alternative="greater")
    assert one.q == pytest.approx((b + c) / brute_force_m_star(b, c, alternative="greater"), rel=1e-12)

def test_perfect_separation_is_not_infinitely_resolved():
    a, b = np.ones(5), np.zeros(5)
    res = quiet(compare, a, b)
    assert res.n_star == 6 and res.q == pytest.approx(5 / 6) and not res.resolved
    assert math.isinf(res.mde)  # no gap is detectable with 5 discordant items: not "MDE 0.00"
    eight = quiet(compare, np.ones(8), np.zeros(8))
    assert eight.n_star == 6 and eight.q == pytest.approx(8 / 6) and eight.resolved
    assert eight.pvalue == pytest.approx(stats.binomtest(8, 8).pvalue)
    diag = quiet(diagnose, np.c_[np.ones(5), np.zeros(5)])
    assert diag.pairs[0].n_star == 6 and not diag.pairs[0].resolved and math.isinf(diag.pairs[0].mde)

@pytest.mark.parametrize("method", ["auto", "mcnemar", "mcnemar_asymptotic", "bootstrap", "permutation",
                                    "sign", "wilcoxon"])
def test_one_sided_in_the_wrong_direction_is_never_resolved(method):
    a, b = table_arrays(120, 60, 20, 100)  # A clearly better
    res = quiet(compare, a, b, alternative="less", method=method, rng=0, n_resamples=2000)
    assert res.pvalue > 0.9 and not res.resolved
    assert math.isinf(res.n_star) and res.q == 0
    right = quiet(compare, a, b, alternative="greater", method=method, rng=0, n_resamples=2000)
    assert right.resolved and right.pvalue <= ALPHA

@pytest.mark.parametrize("method", ["auto", "bootstrap", "permutation", "sign", "wilcoxon", "paired_t"])
def test_one_sided_interval_for_every_method(method):
    rng = np.random.default_rng(3)
    x = rng.random(80)
    y = x - 0.05 + 0.2 * rng.random(80)
    two = quiet(compare, x, y, method=method, rng=0, confidence_level=0.9)
    for alternative in ("greater", "less"):
        res = quiet(compare, x, y, method=method, alternative=alternative, rng=0)
        lo, hi = res.confidence_interval()
        if alternative == "greater":
            assert math.isinf(hi) and lo < res.delta
        else:
            assert math.isinf(lo) and hi > res.delta
        if method != "bootstrap":  # one-sided 95% bound = the two-sided 90% interval's bound
            t_lo, t_hi = two.confidence_interval()
            # (the permutation test's Monte-Carlo sign patterns make its null symmetric only to ~1%)
            rel = 1e-2 if method == "permutation" else 1e-6
            assert (lo if alternative == "greater" else hi) == pytest.approx(t_lo if alternative == "greater" else t_hi,
                                                                             rel=rel)
    a, b = table_arrays(100, 30, 12, 58)
    res = quiet(compare, a, b, alternative="greater")
    lo, hi = res.confidence_interval()
    # the one-sided asymptotic McNemar test inverted: (b - c) / n - (z_0.95 sqrt(b + c) + 1) / n
    ref = (30 - 12) / 200 - (stats.norm.isf(0.05) * math.sqrt(42) + 1) / 200
    assert (lo, hi) == (pytest.approx(ref, rel=1e-12), 1.0)
    assert res.method == "mcnemar_asymptotic" and (lo > 0) == (res.pvalue <= 0.05)

def test_one_cluster_is_refused_and_few_clusters_warn():
    a, b = table_arrays(100, 30, 12, 58)
    with pytest.raises(ValueError, match="every item in one cluster"):
        compare(a, b, cluster=np.zeros(200))
    with pytest.raises(ValueError, match="every item in one cluster"):
        diagnose(np.c_[a, b], cluster=np.zeros(200))
    with pytest.warns(FewClustersWarning, match="only 8 clusters"):
        compare(a, b, cluster=np.arange(200) % 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewClustersWarning)
        compare(a, b, cluster=np.arange(200) % 30)  # 30 clusters: no warning

@pytest.mark.parametrize("bad", [None, np.nan, "", " "])
def test_missing_cluster_labels_are_a_data_error(bad):
    a, b = table_arrays(100, 30, 12, 58)
    labels = np.array([f"s{k % 40}" for k in range(200)], dtype=object)
    labels[17] = bad
    with pytest.raises(DataError, match=r"1 item\(s\) have no cluster label \(first at item row 17"):
        compare(a, b, cluster=labels)
    with pytest.raises(DataError, match="no cluster label"):
        diagnose(np.c_[a, b], cluster=labels)
    floats = np.arange(200, dtype=float) % 40
    floats[3] = np.nan
    with pytest.raises(DataError, match="no cluster label"):
        diagnose(np.c_[a, b], cluster=floats)
    from llm_power import paired_bootstrap

    with pytest.raises(DataError, match="no cluster label"):
        paired_bootstrap(a, b, cluster=labels, n_resamples=100, rng=0)

def test_diagnose_cluster_pvalue_holds_its_level_under_a_clustered_null():
    # the audit: under a clustered null the IID p column gave p <= 0.05 for 18-51% of pairs
    rng = np.random.default_rng(11)
    iid_hits = cluster_hits = total = 0
    for _ in range(60):
        g = 40
        sizes = rng.integers(20, 120, size=g)
        cluster = np.repeat(np.arange(g), sizes)
        effect = rng.normal(0, 1.0, size=(g, 5))[cluster]  # model-by-cluster effects: items are clustered
        x = (rng.random((cluster.size, 5)) < 1 / (1 + np.exp(-effect))).astype(float)
        res = quiet(diagnose, x, cluster=cluster, pairs="all", cluster_resamples=0,
                    cluster_nstar_sims=0)  # the p-values only: no N* simulations (10x faster, same p)
        total += len(res.pairs)
        iid_hits += sum(p.pvalue <= ALPHA for p in res.pairs)
        cluster_hits += sum(p.pvalue_cluster <= ALPHA for p in res.pairs)
    # 600 pair tests (10 per leaderboard, correlated within one): allow 3 binomial SEs and more
    assert cluster_hits / total <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / total) * 2
    assert iid_hits / total > 0.3  # the IID p-value is badly anti-conservative here: why it matters

def test_mde_never_exceeds_the_discordance_or_leaves_0_1():
    with pytest.warns(InfeasibleDesignWarning, match=r"exceed 0\.0285"):
        assert math.isnan(mde(164, p=0.95, rho=0.7))  # was 0.0361 > p_d = 0.0285
    with pytest.warns(InfeasibleDesignWarning, match="both accuracies must stay in"):
        assert math.isnan(mde(10, p=0.98, design="unpaired"))  # implied an accuracy of 1.068
    rng = np.random.default_rng(4)
    for _ in range(150):
        n = int(rng.integers(5, 3000))
        p = float(rng.uniform(0.02, 0.98))
        lo = rho_bounds(p, p)[0]
        rho = float(rng.uniform(max(lo, -0.9), 0.95))
        method = ("wald", "connor")[int(rng.integers(0, 2))]
        p_d = discordance_from_baseline(p, rho)
        value = quiet(mde, n, p=p, rho=rho, method=method)
        assert math.isnan(value) or 0 < value <= p_d + 1e-12
        assert math.isnan(value) or (0 <= p - value / 2 and p + value / 2 <= 1)
        unpaired = quiet(mde, n, p=p, design="unpaired")
        assert math.isnan(unpaired) or unpaired <= 2 * min(p, 1 - p) + 1e-12

def test_frechet_checks_for_rho_and_discordance():
    with pytest.raises(ValueError, match=r"rho=-0\.5 is outside the admissible range \[-0\.25, 1\) for two models at p=0\.8"):
        discordance_from_baseline(0.8, -0.5)
    with pytest.raises(ValueError, match=r"rho=-0\.5 is outside the admissible range"):
        mde(500, p=0.8, rho=-0.5)
    with pytest.raises(ValueError, match=r"discordance = 0\.4 is above 0\.25"):
        sample_size(0.9, 0.85, discordance=0.4)
    with pytest.raises(ValueError, match=r"discordance = 0\.5 is above 0\.4"):
        mde(500, p=0.8, discordance=0.5)

@pytest.mark.parametrize("p_a,p_b", [(0.7, 0.6), (0.3, 0.9), (0.5, 0.5), (0.05, 0.02)])
def test_cells_at_the_exact_frechet_bounds_are_non_negative_and_simulate(p_a, p_b):
    for rho in rho_bounds(p_a, p_b):
        cells = cells_from_margins(p_a, p_b, rho)
        assert min(cells) >= 0 and sum(cells) == pytest.approx(1.0, abs=1e-12)
        a, b = simulate_pairs(200, p_a, p_b, rho=rho, n_sims=50, rng=0)
        assert a.shape == (50, 200)
        assert a.mean() == pytest.approx(p_a, abs=0.03) and b.mean() == pytest.approx(p_b, abs=0.03)
        if p_a != p_b:
            res = quiet(simulated_power, 200, p_a, p_b, rho=rho, n_sims=200, rng=0)
            assert 0 <= res.power <= 1

def test_a_large_common_offset_changes_nothing():
    rng = np.random.default_rng(6)
    x = rng.normal(0, 1, (400, 3))
    x[:, 1] += 0.03 + 0.5 * rng.normal(0, 1, 400)
    base = quiet(diagnose, x)
    shifted = quiet(diagnose, x + 1e8)  # was p = 0 and q = inf for a pair with p = 0.78
    for p0, p1 in zip(base.pairs, shifted.pairs):
        assert p1.pvalue == pytest.approx(p0.pvalue, rel=1e-5)
        assert p1.q == pytest.approx(p0.q, rel=1e-5) and p1.resolved == p0.resolved
    a, b = x[:, 0], x[:, 1]
    assert quiet(compare, a + 1e8, b + 1e8).pvalue == pytest.approx(quiet(compare, a, b).pvalue, rel=1e-5)

def test_huge_scores_are_a_clear_error_not_nan():
    rng = np.random.default_rng(7)
    x = rng.random((50, 2)) * 1e200
    with pytest.raises(DataError, match="overflow"):
        diagnose(x)
    with pytest.raises(DataError, match="overflow"):
        compare(x[:, 0], x[:, 1])

def test_pvalues_never_underflow_to_zero():
    a, b = np.r_[np.ones(5000), np.zeros(10)], np.zeros(5010)
    res = quiet(compare, a, b)
    assert res.pvalue > 0 and "p < 1e-300" in res.summary()
    diag = quiet(diagnose, np.c_[a, b])
    assert diag.pairs[0].pvalue > 0 and "< 1e-300" in diag.summary()
    rng = np.random.default_rng(8)
    x = rng.normal(size=3000)
    assert quiet(compare, x + 1, x + rng.normal(0, 1e-3, 3000)).pvalue > 0

@pytest.mark.parametrize("argv,message", [
    (["coverage", "--n", "10000000000000000000", "--p", "0.5"], "at most 2**53"),
    (["plan", "shortcut", "--pa", "0.5", "--pb", "0.5", "--rho", "0.3"], "delta = 0"),
])
def test_cli_numeric_edges_are_one_line_errors(argv, message, capsys):
    assert main(argv) == 2  # option values the command line alone gets wrong: usage errors
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err

def test_cli_tiny_alpha_works(capsys):
    assert main(["plan", "sample-size", "--pa", "0.6", "--pb", "0.5", "--alpha", "1e-300", "--method", "wald",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    # K = (z_{1-alpha/2} + z_{0.8})^2 from scipy's normal quantile in the upper tail
    k = (stats.norm.isf(0.5e-300) + stats.norm.ppf(0.8)) ** 2
    assert rows[0]["n"] == math.ceil(k * (0.6 * 0.4 + 0.5 * 0.5) / 0.01)  # sigma_D^2 = p_A q_A + p_B q_B at rho = 0

def test_confidence_level_drives_every_interval_of_diagnose(tmp_path):
    rng = np.random.default_rng(10)
    x, cluster = random_leaderboard(rng, "clustered_binary")
    res = quiet(diagnose, x, cluster=cluster, confidence_level=0.99, cluster_resamples=200, rng=0)
    n = x.shape[0]
    codes = np.unique(cluster, return_inverse=True)[1]
    sizes = np.bincount(codes)
    for k, mean in enumerate(res.means):  # clustered items: each model's CR2 t interval (Bell-McCaffrey)
        col = x[:, res.order[k]]
        r = np.bincount(codes, weights=col - mean)
        se = math.sqrt(np.sum(r**2 / (1 - sizes / n)) / n**2)
        df = quiet(design_effects, col, cluster, ddof=0).df
        half = stats.t.isf(0.005, df) * se
        want = (max(mean - half, 0.0), min(mean + half, 1.0))
        assert (res.model_ci_low[k], res.model_ci_high[k]) == (pytest.approx(want[0]), pytest.approx(want[1]))
    for p in res.pairs:  # the interval that inverts the pair's McNemar test, at 99%
        if p.b + p.c >= 25:
            half = (stats.norm.isf(0.005) * math.sqrt(p.b + p.c) + 1) / n
            assert (p.ci_low, p.ci_high) == (pytest.approx(p.delta - half), pytest.approx(p.delta + half))
        assert (p.ci_low > 0 or p.ci_high < 0) == (p.pvalue <= 0.01)
        half = (p.cluster_ci_high - p.cluster_ci_low) / 2
        t = stats.t.ppf(0.995, p.cluster_df)
        assert half / t == pytest.approx(abs(p.delta) / abs(stats.t.isf(p.pvalue_cluster / 2, p.cluster_df)), rel=1e-6)
    from llm_power.report.html import render_html

    html = render_html(res, scores=x, clusters=cluster)
    assert "99% intervals" in html and "99% CI" in html and "95%" not in html

def test_graded_scores_are_shown_in_their_own_units(tmp_path, capsys):
    rng = np.random.default_rng(12)
    x = -0.75 + 0.3 * rng.normal(size=(300, 3)) + np.array([0.1, 0.0, -0.2])  # MQM-like, negative
    path = tmp_path / "mqm.csv"
    lines = ["item,a,b,c"] + [f"s{i}," + ",".join(f"{v:.6f}" for v in row) for i, row in enumerate(x)]
    path.write_text("\n".join(lines) + "\n")
    md = tmp_path / "r.md"
    html = tmp_path / "r.html"
    assert main(["diagnose", str(path), "--markdown", str(md), "--html", str(html)]) == 0
    out = capsys.readouterr().out
    models_part = out.split("Models (")[1].split("Resolution of")[0]
    model_rows = [line for line in models_part.splitlines()[1:] if line.split()[:1] and line.split()[0].isdigit()]
    assert len(model_rows) == 3 and not any("%" in line for line in model_rows)  # no percentages
    assert "-0.65" in out or "-0.6" in out  # the best model's mean, in score units
    assert "gap (score)" in out and "gap (pts)" not in out
    page = html.read_text().replace(str(tmp_path), "TMP")  # the source path may hold "-74" (pytest-749)
    assert "mean score" in page and "score units" in page and "−74" not in page and "-74" not in page
    assert "gap (score)" in md.read_text()

def test_every_n_star_is_rounded_the_same_way():
    rng = np.random.default_rng(13)
    x, cluster = random_leaderboard(rng, "clustered_graded")
    res = quiet(diagnose, x, cluster=cluster, pairs="all", correction="bh", anytime=True, cluster_resamples=0)
    for p in res.pairs:
        for value in (p.n_star, p.n_star_corrected, p.n_star_cluster, p.n_star_anytime):
            assert math.isinf(value) or float(value).is_integer()

@pytest.mark.parametrize("method,sm_name", [("holm", "holm"), ("bonferroni", "bonferroni"), ("hochberg", "simes-hochberg"),
                                            ("bh", "fdr_bh"), ("by", "fdr_by")])
def test_cli_adjust_equals_statsmodels(method, sm_name, capsys):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = [0.01, 0.04, 0.03, 0.2, 0.001, 0.049]
    assert main(["adjust", *map(str, p), "--method", method, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    reject, adjusted, _, _ = multitest.multipletests(p, alpha=0.05, method=sm_name)
    assert payload["adjusted"] == pytest.approx(list(adjusted), rel=1e-12)
    assert payload["rejected"] == list(reject)
    assert main(["adjust", "0.01", "0.04", "0.03"]) == 0
    assert "holm adjusted p-values" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["adjust", "0.01", "1.5"])


# =================================================================================================
# validity (was test_verdict_validity.py)
# =================================================================================================

ALPHA = 0.05

def simulate(rng, sizes, icc, n_sims, *, clustered=True, binary=False):
    """Verdict arrays of ``n_sims`` null benchmarks (no true gap) with the given cluster sizes."""
    g = sizes.size
    codes = np.repeat(np.arange(g), sizes)
    n = int(sizes.sum())
    out = {"iid_resolved": [], "cluster_resolved": [], "cluster_reject": [], "de": []}
    step = max(1, 4_000_000 // n)
    for start in range(0, n_sims, step):
        s = min(step, n_sims - start)
        if clustered:
            u = rng.normal(0, math.sqrt(icc), size=(g, s))[codes]
        else:
            u = 0.0
        latent = u + rng.normal(0, math.sqrt(1 - icc) if clustered else 1.0, size=(n, s))
        if binary:  # two models with the same cluster-level skill: D = x_A - x_B in {-1, 0, 1}
            other = (u if clustered else 0.0) + rng.normal(0, math.sqrt(1 - icc) if clustered else 1.0, size=(n, s))
            d = (latent > 0).astype(float) - (other > 0).astype(float)
        else:
            d = latent
        sums = pair_sums(d, codes, g)
        var = sums.ss / n if binary else sums.ss / (n - 1)
        if binary:
            from llm_power._kernel.verdict import mcnemar_test

            b = np.sum(d > 0, axis=0).astype(float)
            c = np.sum(d < 0, axis=0).astype(float)
            p = mcnemar_test(b, c, "mcnemar_asymptotic", "two-sided")[1]
            verdict = iid_verdict(sums.delta, var, n, p, alpha=ALPHA, power=0.8, alternative="two-sided", b=b, c=c)
        else:
            p = paired_t_test(sums.delta, var, n, "two-sided")[1]
            verdict = iid_verdict(sums.delta, var, n, p, alpha=ALPHA, power=0.8, alternative="two-sided")
        cv = cluster_verdict(sums, var, verdict.resolved, alpha=ALPHA, power=0.8, alternative="two-sided",
                             design_effect="robust")
        out["iid_resolved"].append(verdict.resolved)
        out["cluster_resolved"].append(cv.resolved)
        out["cluster_reject"].append(cv.pvalue <= ALPHA)
        out["de"].append(cv.design_effect)
    return {k: np.concatenate(v) for k, v in out.items()}

def true_inflation(sizes, icc):
    return 1 + (np.sum(sizes.astype(float) ** 2) / sizes.sum() - 1) * icc

def run_de_and_false_resolution(n_sims, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for icc in (0.05, 0.1, 0.3):
        sizes = rng.integers(20, 401, size=30)
        clustered = simulate(rng, sizes, icc, n_sims)
        iid = simulate(rng, sizes, icc, n_sims, clustered=False)
        rows.append((icc, sizes, clustered, iid))
    return rows

def check_de_and_false_resolution(rows, n_sims):
    for icc, sizes, clustered, iid in rows:
        true = true_inflation(sizes, icc)
        # the reported (measured, CR2) design effect tracks the true variance inflation within 25%
        assert np.mean(clustered["de"]) == pytest.approx(true, rel=0.25)
        # clustered false resolutions <= 2x the IID-data rate, with Monte Carlo slack
        rate_c = clustered["cluster_resolved"].mean()
        rate_i = iid["iid_resolved"].mean()
        slack = 3 * math.sqrt(rate_i / n_sims) + 3 * math.sqrt(max(rate_c, 1e-4) / n_sims)
        assert rate_c <= 2 * rate_i + slack, (icc, rate_c, rate_i)

def run_size_with_8_clusters(n_sims, seed):
    rng = np.random.default_rng(seed)
    out = []
    for icc, equal, binary in ((0.05, False, False), (0.1, False, False), (0.3, False, False), (0.1, True, False),
                               (0.1, False, True)):
        sizes = np.full(8, 200) if equal else rng.integers(20, 401, size=8)
        res = simulate(rng, sizes, icc, n_sims, binary=binary)
        out.append(((icc, equal, binary), res["cluster_reject"].mean()))
    return out

def check_size(rows, n_sims):
    mc = 2 * math.sqrt(ALPHA * (1 - ALPHA) / n_sims)
    for label, size in rows:
        assert size <= ALPHA + mc, (label, size)

def test_design_effect_tracks_inflation_and_false_resolutions_are_bounded():
    check_de_and_false_resolution(run_de_and_false_resolution(4000, 1), 4000)

@pytest.mark.slow
def test_design_effect_tracks_inflation_and_false_resolutions_are_bounded_large():
    check_de_and_false_resolution(run_de_and_false_resolution(40_000, 2), 40_000)

def test_cluster_test_size_with_8_clusters():
    check_size(run_size_with_8_clusters(4000, 3), 4000)

@pytest.mark.slow
def test_cluster_test_size_with_8_clusters_large():
    check_size(run_size_with_8_clusters(40_000, 4), 40_000)

def test_the_simulated_path_is_the_one_diagnose_runs():
    # one simulated benchmark through diagnose itself gives the same DE and cluster p-value
    rng = np.random.default_rng(5)
    sizes = rng.integers(20, 401, size=8)
    codes = np.repeat(np.arange(8), sizes)
    u = rng.normal(0, math.sqrt(0.1), size=8)[codes]
    a = u + rng.normal(0, math.sqrt(0.9), size=codes.size)
    x = np.c_[a + 1.0, np.ones(codes.size)]  # model B scores 1 everywhere: D = a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = diagnose(x, cluster=codes, cluster_resamples=0)
    sums = pair_sums(a[:, None], codes, 8)
    var = sums.ss / (codes.size - 1)
    cv = cluster_verdict(sums, var, np.array([True]), alpha=ALPHA, power=0.8, alternative="two-sided",
                         design_effect="robust")
    assert res.pairs[0].design_effect == pytest.approx(float(cv.design_effect[0]), rel=1e-9)
    assert res.pairs[0].pvalue_cluster == pytest.approx(float(cv.pvalue[0]), rel=1e-9)
