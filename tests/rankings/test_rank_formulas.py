"""The rankings' formulas against values computed outside the package.

Oracles: the cluster-robust CR2 covariance of the models' means in its matrix form (Bell and McCaffrey
2002: (X'X)^-1 sum_g X_g' A_g e_g e_g' A_g X_g (X'X)^-1 with A_g = (I - H_gg)^-1/2, dense matrices and an
eigendecomposition here); numpy's covariance without clusters; scipy's t and normal quantiles for the
winner's interval; and a slow, obviously correct bootstrap (one resample at a time, from the documented
draws of the generator) for the max-t statistic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power._kernel.ranks import bootstrap_max_deviation, mean_covariance
from llm_power.matrix import ScoreMatrix
from llm_power.rankings._section import source_covariance


def cr2_by_matrices(x: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """CR2 covariance of the column means (each column an intercept-only regression), Bell-McCaffrey form."""
    n, m = x.shape
    e = x - x.mean(axis=0)
    scores = []
    for g in np.unique(codes):
        idx = codes == g
        k = int(idx.sum())
        vals, vecs = np.linalg.eigh(np.eye(k) - np.full((k, k), 1.0 / n))  # I - H_gg, H = 11'/n
        adj = vecs @ np.diag(vals**-0.5) @ vecs.T
        scores.append(np.ones(k) @ adj @ e[idx])  # X_g' A_g e_g, one entry per model
    u = np.array(scores)  # (G, M)
    return u.T @ u / n**2  # bread (X'X)^-1 = 1/n on each side


def _clustered(seed: int, sizes: list[int], probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    p = np.clip(probs + rng.normal(0, 0.15, (len(sizes), probs.size))[codes], 0.02, 0.98)
    return (rng.random((codes.size, probs.size)) < p).astype(float), codes


def test_clustered_covariance_of_the_means_is_cr2() -> None:
    """Unequal clusters (1 to 40 items): every entry of the kernel's covariance, and of diagnose's
    source covariance (the same models in rank order), equals the CR2 matrix form -- not CR0, whose
    weights 1/(1 - m_g/n) are 1 (up to 1.5 here: a cluster of 40 of 120 items)."""
    sizes = [40, 1, 7, 12, 3, 25, 9, 18, 5]
    x, codes = _clustered(1, sizes, np.array([0.7, 0.6, 0.55, 0.4]))
    want = cr2_by_matrices(x, codes)
    got = mean_covariance(x, True, codes, len(sizes))
    assert got == pytest.approx(want, rel=1e-10)
    cr0 = (lambda r: r.T @ r / x.shape[0] ** 2)(np.array([np.sum(x[codes == g] - x.mean(0), axis=0)
                                                         for g in range(len(sizes))]))
    assert np.max(np.abs(want - cr0) / np.abs(want)) > 0.05  # the test can tell CR2 from CR0
    order = np.array([2, 0, 3, 1])
    source = ScoreMatrix(items=range(x.shape[0]), models=list("abcd"), scores=x, clusters=codes)
    got_source = source_covariance(source, order, None)
    assert got_source == pytest.approx(want[np.ix_(order, order)], rel=1e-10)


def test_unclustered_covariance_of_the_means_is_numpys() -> None:
    """0/1 scores: the plug-in covariance (ddof 0) over n; graded: ddof 1 -- numpy's np.cov / n, the
    paired variances the report uses; diagnose's source covariance from its pairs' SEs is the same."""
    rng = np.random.default_rng(2)
    x = (rng.random((300, 4)) < [0.7, 0.6, 0.6, 0.4]).astype(float)
    assert mean_covariance(x, True) == pytest.approx(np.cov(x, rowvar=False, ddof=0) / 300, rel=1e-10)
    g = rng.normal(size=(300, 4)) + rng.normal(size=(300, 1))
    assert mean_covariance(g, False) == pytest.approx(np.cov(g, rowvar=False, ddof=1) / 300, rel=1e-10)
    for scores, ddof in ((x, 0), (g, 1)):
        pairs = lp.diagnose(scores, pairs="all")
        order = np.argsort(-scores.mean(axis=0), kind="stable")
        matrix = ScoreMatrix(items=range(300), models=[f"m{k}" for k in range(4)], scores=scores)
        got = source_covariance(matrix, order, pairs)
        assert got == pytest.approx(np.cov(scores[:, order], rowvar=False, ddof=ddof) / 300, rel=1e-9, abs=1e-15)


def test_winners_curse_with_clusters_uses_cr2_on_g_minus_1_df() -> None:
    """The winner's naive interval with clusters: its mean +- z sd, sd the CR2 standard error scaled by
    t_{G-1} / z (scipy), so the interval is the t interval on G - 1 df with the CR2 variance."""
    sizes = [30, 2, 11, 6, 19, 4, 8]
    x, codes = _clustered(3, sizes, np.array([0.75, 0.5, 0.45]))
    with pytest.warns(lp.FewClustersWarning, match="only 7 clusters"):
        res = lp.winners_curse(x, cluster=codes, rng=0)
    cov = cr2_by_matrices(x, codes)
    k = int(np.argmax(x.mean(axis=0)))
    se = math.sqrt(cov[k, k]) * stats.t.isf(0.025, len(sizes) - 1) / stats.norm.isf(0.025)
    assert res.se == pytest.approx(se, rel=1e-9)
    half = stats.t.isf(0.025, len(sizes) - 1) * math.sqrt(cov[k, k])
    assert res.naive_ci == pytest.approx((x[:, k].mean() - half, x[:, k].mean() + half), rel=1e-9)
    plain = lp.winners_curse(x, rng=0)  # without clusters: ddof-0 variance over n, t on n - 1
    n = x.shape[0]
    se_iid = x[:, k].std() / math.sqrt(n) * stats.t.isf(0.025, n - 1) / stats.norm.isf(0.025)
    assert plain.se == pytest.approx(se_iid, rel=1e-9)


def _slow_max_deviation(x, i, j, delta, se, picks, codes=None):
    """One resample at a time: the resampled means from the drawn items (or clusters), then the largest
    studentised deviation over the pairs."""
    out = []
    for row in picks:
        if codes is None:
            boot = x[row].mean(axis=0)
        else:
            items = np.concatenate([np.flatnonzero(codes == g) for g in row])
            boot = x[items].mean(axis=0)
        out.append(np.max(np.abs((boot[i] - boot[j] - delta) / se)))
    return np.array(out)


@pytest.mark.parametrize("clustered", [False, True])
def test_bootstrap_max_deviation_equals_a_slow_bootstrap(clustered: bool) -> None:
    """The documented draws (gen.integers(0, n, (B, n)) of items, or of the G clusters), replayed one
    resample at a time: the same maxima of |D*_jk - D_jk| / se_jk."""
    rng = np.random.default_rng(4)
    sizes = [5, 9, 2, 14, 7, 3]
    codes = np.repeat(np.arange(len(sizes)), sizes)
    x = rng.normal(size=(codes.size, 4)) + np.array([0.3, 0.2, 0.0, -0.1])
    i, j = np.triu_indices(4, 1)
    d = x[:, i] - x[:, j]
    delta, se = d.mean(axis=0), d.std(axis=0, ddof=1) / math.sqrt(codes.size)
    units = len(sizes) if clustered else codes.size
    got = bootstrap_max_deviation(x, i, j, delta, se, 300, np.random.default_rng(7),
                                  codes=codes if clustered else None, n_groups=len(sizes) if clustered else 0)
    picks = np.random.default_rng(7).integers(0, units, size=(300, units))
    want = _slow_max_deviation(x, i, j, delta, se, picks, codes if clustered else None)
    assert got == pytest.approx(want, rel=1e-10)


def test_rank_intervals_critical_value_is_the_level_quantile_of_the_bootstrap() -> None:
    """rank_intervals' critical value is the confidence_level quantile (numpy) of the max-t bootstrap over the
    items, with each pair's paired SE (0/1: the plug-in sqrt(((b + c)/n - delta^2) / n)), replayed here from
    the generator rank_intervals is given."""
    rng = np.random.default_rng(5)
    x = (rng.random((400, 4)) < [0.72, 0.7, 0.6, 0.55]).astype(float)
    for level in (0.95, 0.8):
        res = lp.rank_intervals(x, n_resamples=500, method="bootstrap", confidence_level=level,
                                rng=np.random.default_rng(11))
        order = np.argsort(-x.mean(axis=0), kind="stable")
        xs = x[:, order]
        i, j = np.triu_indices(4, 1)
        d = xs[:, i] - xs[:, j]
        se = d.std(axis=0) / math.sqrt(400)  # plug-in: ddof 0
        picks = np.random.default_rng(11).integers(0, 400, size=(500, 400))
        want = np.quantile(_slow_max_deviation(xs, i, j, d.mean(axis=0), se, picks), level)
        assert res.critical_value == pytest.approx(want, rel=1e-10), level


# ---- the Gaussian max-t, exact where it has a closed form --------------------------------------------


def test_gaussian_max_abs_of_one_contrast_is_the_normal_and_t_quantile() -> None:
    """One contrast |xi_i - xi_j| / sd of two strongly correlated coordinates is |N(0, 1)|: its 0.95 quantile is
    z_0.975 (scipy); over an independent chi-square scale on nu df it is |t_nu|: t_{nu, 0.975} -- the same with
    nu given per contrast. 400,000 draws: the quantile's Monte-Carlo error is about 0.3%."""
    from llm_power._kernel.ranks import gaussian_max_abs

    cov = np.array([[1.0, 0.9], [0.9, 1.0]]) * 1e-4  # the sum's sd is 4.4 times the difference's
    i, j, se = np.array([0]), np.array([1]), np.array([math.sqrt(0.2e-4)])
    normal = gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(1), n_draws=400_000)
    assert normal == pytest.approx(stats.norm.isf(0.025), rel=0.01)
    for df in (5.0, np.array([5.0])):
        t = gaussian_max_abs(cov, i, j, se, 0.95, np.random.default_rng(2), n_draws=400_000, df=df)
        assert t == pytest.approx(stats.t.isf(0.025, 5), rel=0.01)  # 2.571, 11% above z


def test_clustered_max_t_critical_value_refers_each_pair_to_t_on_g_minus_1() -> None:
    """With clusters and no per-pair df given, a single pair's critical value is its cluster t quantile on
    G - 1 df (scipy): t_{7, 0.975} = 2.365 with 8 clusters, 2.6% above t_8 (Monte-Carlo error about 0.3%)."""
    from llm_power._kernel.ranks import max_t_critical_value

    cov = np.array([[2.0, 1.0], [1.0, 2.0]]) * 1e-4
    i, j = np.array([0]), np.array([1])
    crit, se = max_t_critical_value("gaussian", None, i, j, np.array([0.01]), np.array([0.01]), cov, 0.95, 1,
                                    np.random.default_rng(3), n_groups=8, n_draws=400_000)
    assert se == pytest.approx([math.sqrt(2e-4)])  # the pair's own CR2 se: cov_ii + cov_jj - 2 cov_ij
    assert crit == pytest.approx(stats.t.isf(0.025, 7), rel=0.01)


def test_score_step_is_the_smallest_gap_of_the_grid() -> None:
    """The grid step the continuity correction uses: 1 for 0/1, 0.25 for quarters (even with a gap of 0.5
    in the values used), 0 for continuous scores."""
    from llm_power._kernel.ranks import score_step

    assert score_step(np.array([[0.0, 1.0], [1.0, 1.0]])) == 1.0
    assert score_step(np.array([[0.0, 0.25], [0.75, 0.5], [1.0, 0.0]])) == 0.25
    assert score_step(np.array([0.0, 0.5, 0.75, 1.0])) == 0.25
    assert score_step(np.random.default_rng(0).random(5000)) == 0.0


def test_top_gap_truncation_by_hand() -> None:
    """Three independent means with equal variance, the top gap Y = x1 - x2 selected by {x1 >= x2 >= x3}:
    with c = Sigma eta / eta' Sigma eta = (1/2, -1/2, 0), Z = X - c Y, the event is
    -slack <= Y <= x1 + x2 - 2 x3 + 2 slack (written out here from the two rows)."""
    from llm_power._kernel.ranks import selected_inference

    x = np.array([0.71, 0.68, 0.6])
    slack = 0.001
    out = selected_inference(x, np.eye(3) * 1e-4, ["a", "b", "c"], 0.95, np.random.default_rng(0), slack=slack,
                             target="top_gap", n_draws=2000)
    assert out["selected"] == ["a", "b"] and out["estimate"] == pytest.approx(0.03)
    assert out["truncation"] == pytest.approx((-slack, x[0] + x[1] - 2 * x[2] + 2 * slack), rel=1e-9)


# ---- what rank_intervals reports ------------------------------------------------------------------


def test_auto_method_bootstraps_small_benchmarks_only() -> None:
    """method="auto": the bootstrap while items x resamples stay within 2,000,000 (the documented limit),
    the normal limit beyond."""
    rng = np.random.default_rng(6)
    small = (rng.random((400, 3)) < [0.7, 0.6, 0.5]).astype(float)
    assert lp.rank_intervals(small, n_resamples=1000, rng=0).method == "bootstrap"  # 400,000 draws
    big = (rng.random((2001, 3)) < [0.7, 0.6, 0.5]).astype(float)
    assert lp.rank_intervals(big, n_resamples=1000, rng=0).method == "gaussian"  # 2,001,000 draws


def test_top_sets_are_the_models_whose_rank_can_reach_k() -> None:
    """top_sets[k]: the models whose rank interval reaches k or better (rank_ci_low <= k), per the definition
    of simultaneous rank sets -- a model ranked 2 to 4 can be in the top 3."""
    rng = np.random.default_rng(7)
    x = (rng.random((1500, 6)) < [0.75, 0.7, 0.69, 0.68, 0.55, 0.5]).astype(float)
    res = lp.rank_intervals(x, models=list("abcdef"), power=None, rng=1)
    low, high = np.asarray(res.rank_ci_low), np.asarray(res.rank_ci_high)
    assert any(lo <= 3 < hi for lo, hi in zip(low, high, strict=True))  # the case that tells low from high
    for k in ("1", "3", "5"):
        assert res.top_sets[k] == [res.models[g] for g in range(6) if low[g] <= int(k)], k
    assert res.top_sets["1"] == res.best_set
