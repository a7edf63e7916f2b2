"""diagnose(): sufficient statistics, per-pair quantities, stress tests, real MMLU-Pro data."""

from __future__ import annotations

import csv
import gzip
import warnings

import numpy as np
import pytest
from scipy import stats

from llm_power import (
    DataError,
    FewClustersWarning,
    calibrate,
    compare,
    diagnose,
    icc_anova,
    mcnemar,
    paired_t,
    pairwise_statistics,
)
from llm_power._core.validation import as_rng
from llm_power.planning import k_factor

K = k_factor()


def binary_matrix(rng, n=3000, skills=(0.72, 0.70, 0.66, 0.65, 0.55), clusters=8):
    cluster = rng.integers(0, clusters, size=n)
    difficulty = rng.normal(0, 1.0, size=clusters)[cluster] + rng.normal(0, 1, size=n)
    logits = np.log(np.array(skills) / (1 - np.array(skills)))
    p = 1 / (1 + np.exp(-(logits[None, :] - 0.8 * difficulty[:, None])))
    return (rng.random(p.shape) < p).astype(float), cluster


def test_pairwise_statistics_equal_item_loops():
    rng = np.random.default_rng(70)
    x, _ = binary_matrix(rng, n=500)
    st = pairwise_statistics(x)
    for i in range(5):
        for j in range(5):
            b = sum(1 for r in range(500) if x[r, i] == 1 and x[r, j] == 0)
            assert st.b[i, j] == b
            d = x[:, i] - x[:, j]
            assert st.var_diff[i, j] == pytest.approx(d.var(), abs=1e-12)
            assert st.mean_diff[i, j] == pytest.approx(d.mean(), abs=1e-15)
    g = rng.random((300, 4))
    sg = pairwise_statistics(g)
    assert not sg.binary and sg.b is None
    assert sg.var_diff[0, 3] == pytest.approx(np.var(g[:, 0] - g[:, 3]), rel=1e-10)


@pytest.mark.parametrize("graded", [False, True])
def test_each_pair_equals_compare_and_q_is_t_squared_over_k(graded):
    rng = np.random.default_rng(71)
    x, _ = binary_matrix(rng, n=2500)
    if graded:
        x = np.clip(x * 0.8 + rng.random(x.shape) * 0.2, 0, 1)
    res = diagnose(x, pairs="all")
    order = np.argsort(-x.mean(axis=0), kind="stable")
    for p in res.pairs:
        a, b = x[:, order[p.rank_a - 1]], x[:, order[p.rank_b - 1]]
        ref = compare(a, b)
        assert p.test == ref.method
        assert p.delta == pytest.approx(ref.delta, abs=1e-15)
        assert p.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
        assert p.n_star == ref.n_star and p.q == pytest.approx(ref.q, rel=1e-10)
        assert p.mde == pytest.approx(ref.mde, rel=1e-12)
        assert p.resolved == ref.resolved and p.regime == ref.regime
        d = a - b
        if p.regime == "plug-in":
            t = paired_t(a, b).statistic if graded else np.sqrt(d.size) * d.mean() / d.std()
            assert p.q == pytest.approx(t**2 / K, rel=1e-9)
        if not graded:
            method = "exact" if p.b + p.c < 25 else "asymptotic"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert p.pvalue == pytest.approx(mcnemar(a, b, method=method).pvalue, rel=1e-12)


def _holm_oracle(crit, pvalue):
    """Holm step-down by a loop: walk the p-values upward, stop at the first pair that fails."""
    out = np.zeros(crit.size, dtype=bool)
    for idx in np.argsort(pvalue, kind="stable"):
        if not crit[idx]:
            break
        out[idx] = True
    return out


def test_adjacent_pairs_are_a_subset_of_all_pairs():
    rng = np.random.default_rng(72)
    x, _ = binary_matrix(rng)
    adj = diagnose(x)
    allp = {(p.model_a, p.model_b): p for p in diagnose(x, pairs="all").pairs}
    assert len(adj.pairs) == 4 and len(allp) == 10
    for p in adj.pairs:
        assert allp[(p.model_a, p.model_b)].q == p.q


@pytest.mark.parametrize("correction", ["bonferroni", "holm", "bh", "by"])
def test_multiplicity_alpha_prime_and_n_star(correction):
    rng = np.random.default_rng(73)
    x, _ = binary_matrix(rng, n=1200, skills=(0.72, 0.71, 0.69, 0.66, 0.65, 0.6))
    res = diagnose(x, pairs="all", correction=correction)
    p = np.array([q.pvalue for q in res.pairs])
    m = p.size
    rank = stats.rankdata(p, method="ordinal")
    z_b = stats.norm.ppf(0.8)

    def crit(pair, a_prime):
        # resolved at level a_prime: q at a_prime >= 1 (plug-in pairs) and p <= a_prime
        factor = ((stats.norm.ppf(1 - a_prime / 2) + z_b) / (stats.norm.ppf(0.975) + z_b)) ** 2
        return pair.q / factor >= 1 and pair.pvalue <= a_prime

    assert all(pair.regime == "plug-in" for pair in res.pairs)  # the checks below use the plug-in q
    if correction == "bonferroni":
        expected_alpha = np.full(m, 0.05 / m)
        expected = np.array([crit(pair, 0.05 / m) for pair in res.pairs])
    elif correction == "holm":
        expected_alpha = 0.05 / (m - rank + 1)
        expected = _holm_oracle(np.array([crit(pair, a) for pair, a in zip(res.pairs, expected_alpha)]), p)
    else:  # BH step-up: the largest j passing at j alpha / m; pairs up to j judged at that level; BY: BH at
        # alpha / (1 + 1/2 + ... + 1/m) (Benjamini & Yekutieli 2001, Theorem 1.3)
        level = 0.05 if correction == "bh" else 0.05 / sum(1.0 / k for k in range(1, m + 1))
        passing = [j for j in range(1, m + 1) if crit(res.pairs[int(np.flatnonzero(rank == j)[0])], j * level / m)]
        j_star = max(passing, default=0)
        expected_alpha = np.where(rank <= j_star, j_star * level / m, rank * level / m)
        expected = np.array([rank[k] <= j_star and crit(pair, expected_alpha[k]) for k, pair in enumerate(res.pairs)])
    expected &= np.array([pair.resolved for pair in res.pairs])
    for pair, a_prime, ok in zip(res.pairs, expected_alpha, expected):
        assert pair.alpha_corrected == pytest.approx(a_prime)
        factor = ((stats.norm.ppf(1 - a_prime / 2) + z_b) / (stats.norm.ppf(0.975) + z_b)) ** 2
        assert pair.q_corrected == pytest.approx(pair.q / factor, rel=1e-9)
        assert pair.resolved_corrected == ok
        if pair.resolved_corrected:  # resolved under the correction => its adjusted p-value rejects
            assert pair.pvalue_adjusted <= 0.05 and pair.q_corrected >= 1
    assert res.n_unresolved["corrected"] >= res.n_unresolved["iid"]
    assert res.n_unresolved["corrected"] == int(np.sum(~expected))


def test_holm_inside_diagnose_is_step_down_not_pair_by_pair():
    # p-values crafted so that pair-by-pair Holm levels would resolve a pair after a failure
    rng = np.random.default_rng(7)
    x, _ = binary_matrix(rng, n=3000, skills=(0.80, 0.74, 0.73, 0.60))
    res = diagnose(x, pairs="all", correction="holm")
    p = np.array([q.pvalue for q in res.pairs])
    flags = np.array([q.resolved_corrected for q in res.pairs])
    order = np.argsort(p, kind="stable")
    seen_failure = False
    for idx in order:  # once a pair fails, every pair with a larger p-value fails
        if not flags[idx]:
            seen_failure = True
        assert not (seen_failure and flags[idx])


def slow_cr2_variance(d, cluster):
    """CR2 (Bell & McCaffrey 2002) variance of the mean by the general sandwich: A_g = (I - H_gg)^(-1/2)."""
    n = d.size
    x = np.ones((n, 1))
    h = x @ np.linalg.inv(x.T @ x) @ x.T
    e = d - d.mean()
    meat = 0.0
    for g in np.unique(cluster):
        idx = np.flatnonzero(cluster == g)
        w, v = np.linalg.eigh(np.eye(idx.size) - h[np.ix_(idx, idx)])
        a_g = v @ np.diag(1 / np.sqrt(w)) @ v.T
        u = x[idx].T @ a_g @ e[idx]
        meat += float(u @ u)
    return meat / n**2


def slow_ik_df(cluster, rho):
    """Imbens & Kolesar (2016) degrees of freedom: eigenvalues of G' Omega G, with the working model
    Omega = (1 - rho) I + rho * [same cluster], built as full matrices."""
    n = cluster.size
    x = np.ones((n, 1))
    h = x @ np.linalg.inv(x.T @ x) @ x.T
    cols = []
    for g in np.unique(cluster):
        idx = np.flatnonzero(cluster == g)
        w, v = np.linalg.eigh(np.eye(idx.size) - h[np.ix_(idx, idx)])
        a_g = v @ np.diag(1 / np.sqrt(w)) @ v.T
        cols.append((np.eye(n) - h)[:, idx] @ a_g @ x[idx] @ np.linalg.inv(x.T @ x))
    gm = np.hstack(cols)
    omega = (1 - rho) * np.eye(n) + rho * (cluster[:, None] == cluster[None, :])
    lam = np.linalg.eigvalsh(gm.T @ omega @ gm)
    return lam.sum() ** 2 / np.sum(lam**2)


def test_cluster_design_effects_against_statsmodels_and_icc_anova():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(74)
    x, cluster = binary_matrix(rng, n=1200)
    with pytest.warns(FewClustersWarning):
        res = diagnose(x, cluster=cluster, cluster_resamples=0)
    order = np.argsort(-x.mean(axis=0), kind="stable")
    for p in res.pairs:
        d = x[:, order[p.rank_a - 1]] - x[:, order[p.rank_b - 1]]
        fit = sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": cluster})
        v_cr1 = float(fit.bse[0]) ** 2  # statsmodels' CR1: G/(G-1) (N-1)/(N-k) with k = 1
        var = d.var()  # plug-in variance of 0/1 differences
        assert p.design_effect_cr1 == pytest.approx(v_cr1 / (var / d.size), rel=1e-9)
        v_cr2 = slow_cr2_variance(d, cluster)
        assert p.design_effect_robust == pytest.approx(v_cr2 / (var / d.size), rel=1e-9)
        assert p.design_effect == p.design_effect_robust  # the default
        ref = icc_anova(d, cluster)
        assert p.icc == pytest.approx(ref.icc, abs=1e-12)
        assert p.cluster_df == pytest.approx(slow_ik_df(cluster, ref.icc), rel=1e-8)
        kish = np.sum(np.bincount(cluster) ** 2) / d.size
        assert p.design_effect_anova == pytest.approx(1 + (kish - 1) * ref.icc, rel=1e-12)
        assert p.design_effect_paper == pytest.approx(1 + (d.size / 8 - 1) * ref.icc, rel=1e-12)
        # the cluster test: t on the CR2 standard error with the Imbens-Kolesar df
        df = p.cluster_df
        t = d.mean() / np.sqrt(v_cr2)
        assert p.pvalue_cluster == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-9)
        k_g = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) ** 2
        n_star = max(v_cr2 / (var / d.size), 1.0) * k_g * var / d.mean() ** 2
        assert p.n_star_cluster == np.ceil(n_star - 1e-9)
        assert p.q_cluster == pytest.approx(d.size / n_star, rel=1e-9)
        assert p.resolved_cluster == (d.size / n_star >= 1 and p.pvalue_cluster <= 0.05 and p.resolved)


def test_equal_cluster_sizes_cr2_is_cr1_and_df_is_g_minus_1():
    rng = np.random.default_rng(12)
    cluster = np.repeat(np.arange(10), 50)
    x = (rng.random((500, 3)) < [0.7, 0.6, 0.5]).astype(float)
    with pytest.warns(FewClustersWarning):
        res = diagnose(x, cluster=cluster, cluster_resamples=0)
    for p in res.pairs:
        assert p.design_effect_robust == pytest.approx(p.design_effect_cr1, rel=1e-12)
        assert p.cluster_df == pytest.approx(9.0, rel=1e-10)


def _slow_cluster_count(x, cluster, picks, pair_idx, dfs):
    """Resample clusters explicitly (copies are distinct clusters) and recount the clustered
    unresolved pairs with a loop-based CR2 variance, t quantiles at the pair's df and max(DE, 1)."""
    groups = [np.flatnonzero(cluster == g) for g in range(cluster.max() + 1)]
    counts = []
    for row in picks:
        unresolved = 0
        for (i, j), df in zip(pair_idx, dfs):
            k_g = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) ** 2
            parts = [x[groups[g], i] - x[groups[g], j] for g in row]
            d = np.concatenate(parts)
            n, delta, var = d.size, d.mean(), d.var()
            v_cr = sum((part.sum() - part.size * delta) ** 2 / (1 - part.size / n) for part in parts) / n**2
            t = delta / np.sqrt(v_cr) if v_cr > 0 else np.inf
            p = 2 * stats.t.sf(abs(t), df)
            de = max(v_cr / (var / n), 1.0) if var > 0 else np.nan
            q = n * delta**2 / (de * var * k_g) if var > 0 else 0.0
            unresolved += not (q >= 1 and p <= 0.05)
        counts.append(unresolved)
    return np.array(counts)


def test_cluster_robustness_equals_explicit_cluster_resampling():
    rng = np.random.default_rng(75)
    x, cluster = binary_matrix(rng, n=1500)
    with pytest.warns(FewClustersWarning):
        res = diagnose(x, cluster=cluster, cluster_resamples=40, rng=5)
    order = np.argsort(-x.mean(axis=0), kind="stable")
    xs = x[:, order]
    picks = as_rng(5).integers(0, cluster.max() + 1, size=(40, cluster.max() + 1))
    slow = _slow_cluster_count(xs, cluster, picks, [(k, k + 1) for k in range(4)], [p.cluster_df for p in res.pairs])
    dist = np.bincount(slow, minlength=5)
    assert res.cluster_robustness["distribution"] == dist.tolist()
    assert res.cluster_robustness["median"] == np.median(slow)


def test_cluster_resamples_of_unequal_clusters_whose_sizes_add_up():
    """Nine clusters of 30 items and one of 300: a resample without the big one totals exactly its size,
    where its CR2 factor is 0/0 (a third of the resamples): no RuntimeWarning reaches the user, and the
    counts equal explicit resampling (a NaN weight of an undrawn cluster made those resamples' variances
    NaN: 72 of 200 resamples counted every pair unresolved instead of 5)."""
    import warnings

    rng = np.random.default_rng(78)
    sizes = [30] * 9 + [300]
    cluster = np.repeat(np.arange(10), sizes)
    x, _ = binary_matrix(rng, n=cluster.size, clusters=10, skills=(0.9, 0.7, 0.5, 0.3, 0.1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", FewClustersWarning)
        res = diagnose(x, cluster=cluster, cluster_resamples=200, rng=6)
    order = np.argsort(-x.mean(axis=0), kind="stable")
    picks = as_rng(6).integers(0, 10, size=(200, 10))
    n_b = np.array([sum(sizes[g] for g in row) for row in picks])
    assert any(n_b[b] in [sizes[g] for g in range(10) if g not in picks[b]] for b in range(200))  # the 0/0 met
    slow = _slow_cluster_count(x[:, order], cluster, picks, [(k, k + 1) for k in range(4)],
                               [p.cluster_df for p in res.pairs])
    assert res.cluster_robustness["distribution"] == np.bincount(slow, minlength=5).tolist()


def test_the_percentile_cluster_bootstrap_interval_is_no_longer_reported():
    """Issue 44: the pairs cluster bootstrap's percentile interval covered 0.917-0.931 with MMLU-Pro's 14
    clusters (the known small-G failure); the clustered interval is the chosen test's own
    (``cluster_method``), and the resamples count the shown gaps' verdicts only."""
    rng = np.random.default_rng(76)
    x, cluster = binary_matrix(rng, clusters=30)
    res = diagnose(x, cluster=cluster, cluster_resamples=200, rng=1)
    assert "cluster_bootstrap_ci_low" not in res.columns and "cluster_bootstrap_ci_high" not in res.columns
    assert res.cluster_robustness["n_pairs"] == len(res.pairs)
    every = diagnose(x, cluster=cluster, pairs="all", cluster_resamples=200, rng=1)
    assert every.cluster_robustness["pairs"] == "adjacent"
    assert every.cluster_robustness["n_pairs"] == x.shape[1] - 1
    assert every.cluster_robustness["distribution"] == res.cluster_robustness["distribution"]  # the same gaps


def test_anytime_q_uses_the_mixture_critical_value():
    from llm_power import anytime_critical_value

    rng = np.random.default_rng(77)
    x, _ = binary_matrix(rng)
    res = diagnose(x, anytime=True)
    z_any, _ = anytime_critical_value(0.05)
    k_any = (z_any + stats.norm.ppf(0.8)) ** 2
    for p in res.pairs:
        assert p.q_anytime == pytest.approx(p.q * K / k_any, rel=1e-12)
        assert p.e_value is not None and p.e_value > 0
    assert res.n_unresolved["anytime"] >= res.n_unresolved["iid"]


def _brute_ties(m, resolved_pairs):
    """Every maximal run of consecutive ranks holding no resolved pair (ranks 0-based), by enumeration."""
    def clean(i, j):
        return all((a, b) not in resolved_pairs for a in range(i, j + 1) for b in range(a + 1, j + 1))
    runs = [(i, j) for i in range(m) for j in range(i + 1, m) if clean(i, j)]
    return [r for r in runs if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in runs)]


def test_tie_groups_and_rank_intervals():
    """Issue 39, point 3: a tie group is a maximal run of consecutive ranks that holds no resolved pair (the
    report's own verdict for a shown pair, the all-pairs verdict of the same regime for the others) --
    checked against enumeration -- and the rank intervals count the models resolved above and below."""
    rng = np.random.default_rng(78)
    x, _ = binary_matrix(rng, n=4000, skills=(0.80, 0.795, 0.77, 0.70, 0.698, 0.55))
    allp = diagnose(x, models=list("abcdef"), pairs="all")
    res = diagnose(x, models=list("abcdef"), pairs="adjacent")
    rank = {name: k for k, name in enumerate(allp.models)}
    known = {(rank[p.model_a], rank[p.model_b]): p.resolved for p in allp.pairs}
    known.update({(rank[p.model_a], rank[p.model_b]): p.resolved for p in res.pairs})  # the table's word wins
    want = [[allp.models[g] for g in range(i, j + 1)]
            for i, j in _brute_ties(6, {k for k, ok in known.items() if ok})]
    assert res.tie_groups["iid"] == want and allp.tie_groups["iid"] == want
    assert any(len(g) > 1 for g in want) and len(want) >= 2  # the design has ties and resolved pairs
    for name, (lo, hi) in allp.rank_intervals["iid"].items():
        r = allp.models.index(name) + 1
        above = sum(1 for p in allp.pairs if p.model_b == name and p.resolved)
        below = sum(1 for p in allp.pairs if p.model_a == name and p.resolved)
        assert (lo, hi) == (above + 1, 6 - below) and lo <= r <= hi
    assert res.rank_intervals == allp.rank_intervals


def test_a_tie_never_holds_a_pair_the_table_resolves():
    """Holm over the 5 adjacent pairs resolves model_0 vs model_1; Holm over all 15 pairs does not. The tie
    groups take the table's word for a shown pair, so model_0 and model_1 are in no tie together."""
    rng = np.random.default_rng(138)
    skill = np.sort(rng.uniform(0.4, 0.8, 6))[::-1]
    x = (rng.random((3000, 6)) < skill).astype(float)
    adj = diagnose(x, correction="holm")
    every = adj.all_pairs()
    assert adj.columns["resolved_corrected"][0] and (adj.columns["model_a"][0], adj.columns["model_b"][0]) == (
        "model_0", "model_1")
    k = next(k for k, (a, b) in enumerate(zip(every.columns["model_a"], every.columns["model_b"], strict=True))
             if (a, b) == ("model_0", "model_1"))
    assert not every.columns["resolved_corrected"][k]  # the precondition: the two families disagree
    assert not any({"model_0", "model_1"} <= set(g) for g in adj.tie_groups["corrected"])
    assert adj.tie_groups["corrected"] == [["model_1", "model_2"], ["model_3", "model_4", "model_5"]]


@pytest.mark.parametrize("seed", range(12))
def test_tie_groups_are_the_maximal_clean_runs_on_random_verdicts(seed):
    """The kernel of the tie groups against enumeration on random verdicts, complete and adjacent-only
    (where a pair not given closes every run, so each group is one unresolved adjacent pair)."""
    from llm_power.resolution import tie_groups_and_rank_intervals

    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 9))
    i, j = np.triu_indices(m, 1)
    flags = rng.random(i.size) < rng.random()
    groups, intervals = tie_groups_and_rank_intervals(m, np.stack([i, j], axis=1), flags, complete=True)
    assert [(g[0], g[-1]) for g in groups] == _brute_ties(m, {(a, b) for a, b, f in zip(i, j, flags) if f})
    for g in range(m):
        assert intervals[g] == (1 + int(np.sum(flags & (j == g))), m - int(np.sum(flags & (i == g))))
    adj = np.stack([np.arange(m - 1), np.arange(1, m)], axis=1)
    adj_flags = rng.random(m - 1) < 0.5
    groups, intervals = tie_groups_and_rank_intervals(m, adj, adj_flags, complete=False)
    assert [(g[0], g[-1]) for g in groups] == [(a, a + 1) for a in range(m - 1) if not adj_flags[a]]
    for g in range(m):  # known above only through an unbroken chain of resolved adjacent pairs
        up = next((k for k in range(g) if not adj_flags[g - 1 - k]), g)
        down = next((k for k in range(m - 1 - g) if not adj_flags[g + k]), m - 1 - g)
        assert intervals[g] == (up + 1, m - down)


def test_dataframe_input_and_outputs():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(79)
    x, cluster = binary_matrix(rng, n=800)
    df = pd.DataFrame(x, columns=list("vwxyz"))
    res = diagnose(df, cluster=cluster, correction="holm", anytime=True, cluster_resamples=50, rng=0)
    frame = res.to_frame()
    assert len(frame) == 4 and {"q", "q_corrected", "q_cluster", "q_anytime"} <= set(frame.columns)
    import json

    payload = json.loads(json.dumps(res.to_dict()))
    assert payload["models"] == res.models and len(payload["pairs"]) == 4
    assert "unresolved" in res.summary()


def test_bad_input():
    rng = np.random.default_rng(80)
    x, cluster = binary_matrix(rng, n=200)
    with pytest.raises(ValueError, match=r"need at least 2 models to compare; got 1"):
        diagnose(x[:, :1])
    bad = x.copy()
    bad[17, 2] = np.nan
    with pytest.raises(DataError, match=r"model 'model_2' has 1 missing or non-finite score\(s\) \(first at item row 17\)"):
        diagnose(bad)
    with pytest.raises(ValueError, match=r"`cluster` must have one label per item \(200\); got shape \(199,\)"):
        diagnose(x, cluster=cluster[:-1])
    with pytest.raises(ValueError, match=r"every item in one cluster"):
        diagnose(x, cluster=np.zeros(200))
    with pytest.raises(ValueError, match=r"`correction` must be one of 'bh', 'bonferroni', 'by', 'holm' or None; got 'fdr'"):
        diagnose(x, correction="fdr")
    with pytest.raises(ValueError, match=r"`models` has 3 names for 5 model columns"):
        diagnose(x, models=["a", "b", "c"])


# --- calibration and the real MMLU-Pro data ------------------------------------------------------

def load_mmlu_pro(shared_data):
    path = shared_data / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    x = np.array([[np.nan if v == "" else float(v) for v in r[2:]] for r in body])
    category = np.array([r[1] for r in body])
    names = header[2:]
    complete = [k for k in range(x.shape[1]) if not np.isnan(x[:, k]).any()]
    return x[:, complete], [names[k] for k in complete], category


def test_calibration_of_n_star_by_resampling():
    rng = np.random.default_rng(81)
    for skills in [(0.70, 0.68), (0.50, 0.47), (0.85, 0.84)]:
        x, _ = binary_matrix(rng, n=6000, skills=skills)
        res = calibrate(x[:, 0], x[:, 1], n_sims=4000, rng=1)
        assert abs(res["empirical_power"] - 0.8) <= 0.03


def test_mmlu_pro_top10_report(shared_data):
    """Issue 5 acceptance: 26 complete models, strict correctness, 14 categories as clusters;
    top-10 by accuracy, adjacent pairs, IID / Holm / cluster / anytime verdicts; q = T^2/K."""
    x, names, category = load_mmlu_pro(shared_data)
    assert x.shape == (12032, 26)
    assert np.unique(category).size == 14
    # accuracies equal the published acc_strict of models.csv
    with open(shared_data / "mmlu_pro_tiger" / "models.csv", encoding="utf-8") as fh:
        published = {r["model"]: float(r["acc_strict"]) for r in csv.DictReader(fh)}
    for k, name in enumerate(names):
        assert round(x[:, k].mean(), 6) == pytest.approx(published[name], abs=1e-6)
    top = np.argsort(-x.mean(axis=0), kind="stable")[:10]
    with pytest.warns(FewClustersWarning, match="only 14 clusters"):
        res = diagnose(x[:, top], models=[names[k] for k in top], cluster=category, correction="holm",
                       anytime=True, rng=0)
    assert len(res.pairs) == 9
    assert res.models[0] == "Meta-Llama-3_1-70B-Instruct"
    for p in res.pairs:
        a = x[:, top[p.rank_a - 1]]
        b = x[:, top[p.rank_b - 1]]
        d = a - b
        t = np.sqrt(d.size) * d.mean() / d.std()
        assert p.q == pytest.approx(t**2 / K, rel=1e-10)
        for key in ("resolved", "resolved_corrected", "resolved_cluster", "resolved_anytime"):
            assert isinstance(getattr(p, key), bool)
    n = res.n_unresolved
    assert set(n) == {"iid", "corrected", "cluster", "anytime"}
    # a sizeable share of adjacent gaps is unresolved, more under clustering
    assert n["iid"] >= 3
    assert n["cluster"] > n["iid"] and n["corrected"] >= n["iid"] and n["anytime"] >= n["iid"]
    cr = res.cluster_robustness
    assert cr["q05"] <= cr["observed"] + 1 and sum(cr["distribution"]) == cr["n_resamples"]
    # issue 9 acceptance: the clustered count stays 8 of 9 unresolved under every design effect
    assert n["cluster"] == 8
    for mode in ("cr1", "anova", "paper"):
        other = diagnose(x[:, top], models=[names[k] for k in top], cluster=category, design_effect=mode,
                         cluster_resamples=0)
        assert other.n_unresolved["cluster"] == 8, mode
    for p in res.pairs:  # Kish's size >= the mean size, so the Kish DE >= the paper's
        assert p.design_effect_anova >= p.design_effect_paper


def test_mmlu_pro_calibration_on_real_pairs(shared_data):
    """Issue 5 acceptance: empirical power at N* within +-0.03 of 0.8 on real pairs."""
    x, names, _ = load_mmlu_pro(shared_data)
    top = np.argsort(-x.mean(axis=0), kind="stable")[:10]
    for k in range(9):
        res = calibrate(x[:, top[k]], x[:, top[k + 1]], n_sims=4000, rng=k)
        assert abs(res["empirical_power"] - 0.8) <= 0.03, (names[top[k]], res)


@pytest.mark.slow
def test_all_pairs_100_models():
    # the time is measured in benchmarks/diagnose.py, not here
    rng = np.random.default_rng(82)
    x = (rng.random((12_032, 100)) < rng.uniform(0.3, 0.8, size=100)).astype(np.float64)
    cluster = rng.integers(0, 14, size=12_032)
    res = diagnose(x, pairs="all", cluster=cluster, correction="holm", anytime=True, cluster_resamples=200, rng=0)
    assert len(res.pairs) == 4950
    sub = diagnose(x[:, :3], pairs="all")
    assert sum(res.cluster_robustness["distribution"]) == 200
    assert {(p.model_a, p.model_b) for p in sub.pairs} <= {(p.model_a, p.model_b) for p in res.pairs}


def test_columnar_diagnosis_rows_on_demand_and_order():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(81)
    x, cluster = binary_matrix(rng, n=900)
    names = ["v", "w", "x", "y", "z"]
    with pytest.warns(FewClustersWarning):
        res = diagnose(x, models=names, cluster=cluster, correction="holm", cluster_resamples=0)
    # order: the caller's columns, best first (a stable sort of the means, computed here by hand)
    means = x.mean(axis=0)
    expected = sorted(range(5), key=lambda k: (-means[k], k))
    assert res.order.tolist() == expected and res.models == [names[k] for k in expected]
    # columns are arrays, one per field; rows and the frame carry the same values
    assert all(len(v) == 4 for v in res.columns.values())
    frame = res.to_frame()
    for k, row in enumerate(res.pairs):
        assert row.model_a == res.columns["model_a"][k] == frame["model_a"][k]
        assert row.q == pytest.approx(res.columns["q"][k]) and isinstance(row.rank_a, int) and isinstance(row.b, int)
        assert row.resolved_cluster == bool(frame["resolved_cluster"][k])
    assert isinstance(frame, pd.DataFrame) and (frame["n"] == 900).all()
    top = diagnose(x, models=names, top=3)
    assert top.models == res.models[:3] and top.order.tolist() == expected[:3]


def test_the_same_mistake_raises_the_same_class_from_a_file_or_an_array(tmp_path):
    from llm_power import read_results

    with pytest.raises(DataError, match="not numeric"):
        diagnose([["a", "b"], ["c", "d"]])
    (tmp_path / "bad.csv").write_text("item,m1,m2\nq1,1,x\nq2,0,1\n")
    with pytest.raises(DataError, match="'x' is not a number"):
        read_results(tmp_path / "bad.csv")
    with pytest.raises(DataError, match="'m' appears twice"):
        diagnose(np.eye(3), models=["m", "m", "n"])
    (tmp_path / "dup.csv").write_text("item,m,m\nq1,1,0\nq2,0,1\n")
    with pytest.raises(DataError, match="appears twice"):
        read_results(tmp_path / "dup.csv")


def test_the_dependence_of_the_family_beside_the_correction():
    """settings["family_dependence"]: the correlations between the pairs' statistics, against numpy's
    correlation of the per-item differences themselves; BH's note where one is negative (adjacent
    gaps sharing a model), none for a family of positively dependent gaps."""
    rng = np.random.default_rng(74)
    x, _ = binary_matrix(rng, n=1500, skills=(0.8, 0.7, 0.6, 0.5, 0.4))
    res = diagnose(x, correction="bh")
    dep = res.settings["family_dependence"]
    cols = {name: k for k, name in enumerate(res.models)}
    order = [int(str(name).rsplit("_", 1)[1]) for name in res.models]  # the columns behind the ranks
    d = np.stack([x[:, order[cols[p.model_a]]] - x[:, order[cols[p.model_b]]] for p in res.pairs], axis=1)
    r = np.corrcoef(d, rowvar=False)[np.triu_indices(d.shape[1], 1)]
    assert dep["computed"] and dep["n_correlations"] == r.size
    assert dep["minimum"] == pytest.approx(r.min(), abs=1e-12) and dep["maximum"] == pytest.approx(r.max(), abs=1e-12)
    assert dep["share_negative"] == pytest.approx(np.mean(r < 0))
    assert dep["prds_plausible"] == bool(np.all(r >= 0)) and not dep["prds_plausible"]
    text = res.to_markdown()
    assert f"{round(np.mean(r < 0) * r.size)} of {r.size} correlations between these gaps' statistics are negative" in text
    assert "--correction by holds under any dependence" in text
    holm = diagnose(x, correction="holm").to_markdown()
    assert "assumes positive dependence" not in holm  # Holm holds under any dependence: nothing to say
    # a family of one pair has no dependence to measure
    top = diagnose(x[:, [0, 2]], correction="bh").settings["family_dependence"]
    assert not top["computed"] and top["why"] == "one pair"
