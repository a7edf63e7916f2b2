"""Oracles for the rankings wing's formulas, each expected value computed here from outside the package (issue 49).

Each test names the wrong formula it is sized to catch. Sources: scipy's t quantile (a pair's cluster t test on
G - 1 df) against a percentile cluster bootstrap drawn here; the truncation of a selected normal target written
out from the selection's rows (Andrews, Kitagawa and McCloskey 2024) for equal, independent variances; exact
maxima of independent and of equicorrelated normals (Sidak's product; the range of iid normals and the maximum
of a "many-to-one" comparison, by numerical integration with scipy); brute force over every subset for the
fewest removals; double centring by hand; and the documented thresholds (the bootstrap up to 2,000,000
resampled units, a gap fragile at *most* the share, half a grid step as the continuity correction).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

import llm_power as lp
from llm_power._kernel.ranks import centred, linear_removals_to_flip, max_t_critical_value, selected_inference


# ---- the clustered critical value: never below a pair's own cluster t ---------------------------------------


def test_few_clusters_bootstrap_critical_value_is_at_least_the_pairs_cluster_t():
    """Two models, 5 equal clusters: a percentile cluster bootstrap of the studentised gap (drawn here, 20,000
    resamples of the clusters) has its 95% quantile far below the pair's own cluster t test's t_{4, 0.975} =
    2.776 (scipy), and the critical value is the larger of the two: t_4 within Monte-Carlo error (200,000
    draws, about 0.3%). Sized for: the smaller of the two taken, the bootstrap quantile alone, t on G df
    (2.571, 7% lower)."""
    rng = np.random.default_rng(41)
    g, per = 5, 20
    codes = np.repeat(np.arange(g), per)
    x = (rng.random((g * per, 2)) < np.clip(0.6 + rng.normal(0, 0.1, (g, 2))[codes], 0, 1)).astype(float)
    d = x[:, 0] - x[:, 1]
    n = d.size
    r = np.bincount(codes, weights=d - d.mean())
    se = math.sqrt(np.sum(r**2 / (1 - per / n)) / n**2)  # the pair's CR2 standard error (equal sizes)
    cov = np.zeros((2, 2))
    for a in range(2):
        for b in range(2):
            ra = np.bincount(codes, weights=x[:, a] - x[:, a].mean())
            rb = np.bincount(codes, weights=x[:, b] - x[:, b].mean())
            cov[a, b] = np.sum(ra * rb / (1 - per / n)) / n**2
    picks = rng.integers(0, g, (20000, g))
    sums = np.bincount(codes, weights=d)[picks].sum(axis=1)
    boot = np.abs(sums / (per * g) - d.mean()) / se
    t4 = stats.t.isf(0.025, g - 1)
    assert np.quantile(boot, 0.95) < 0.85 * t4  # the precondition: the bootstrap alone is well below the t test
    crit, used = max_t_critical_value("bootstrap", x, np.array([0]), np.array([1]), np.array([d.mean()]),
                                      np.array([0.01]), cov, 0.95, 2000, np.random.default_rng(3), codes=codes,
                                      n_groups=g, n_draws=200_000)
    assert used == pytest.approx([se], rel=1e-10)
    assert crit == pytest.approx(t4, rel=0.02)


# ---- inference on a selected winner: the truncation, beta and the projection's critical value --------------


def test_winner_truncation_is_the_largest_other_mean_less_the_slack():
    """Independent means with equal variance, Y = the winner's mean: given Z the selection {x_k - x_w <= slack}
    is {Y >= x_k - slack} for every other k, so the truncation is [max_k x_k - slack, inf). Sized for: the
    smallest other mean taken as the bound (min for max)."""
    x = np.array([0.70, 0.68, 0.71, 0.65])
    out = selected_inference(x, np.eye(4) * 1e-4, list("abcd"), 0.95, np.random.default_rng(0), slack=0.002,
                             n_draws=2000)
    assert out["selected"] == ["c"]
    assert out["truncation"] == pytest.approx((0.70 - 0.002, math.inf))


def test_new_model_truncation_is_the_nearest_rival_of_the_best():
    """The new model n against the best existing model b (independent, equal variances), Y = x_n - x_b: with
    c = (e_n - e_b) / 2 the rows x_k - x_b <= slack become Y <= x_n + x_b - 2 x_k + 2 slack, so the upper end
    is the minimum over the other existing models k, the lower end -inf. Sized for: the maximum taken (max for
    min)."""
    x = np.array([0.66, 0.70, 0.69, 0.60])
    out = selected_inference(x, np.eye(4) * 1e-4, list("nabc"), 0.95, np.random.default_rng(0), slack=0.001,
                             target="new", new=0, n_draws=2000)
    assert out["selected"] == ["n", "a"] and out["estimate"] == pytest.approx(-0.04)
    upper = min(x[0] + x[1] - 2 * x[k] for k in (2, 3)) + 2 * 0.001
    assert out["truncation"] == pytest.approx((-math.inf, upper))


def test_beta_is_a_tenth_of_alpha():
    """The hybrid's projection step works at beta = alpha / 10 by default (Andrews, Kitagawa and McCloskey's
    recommendation, documented). Sized for: any other fraction."""
    rng = np.random.default_rng(42)
    x = (rng.random((400, 3)) < [0.7, 0.6, 0.5]).astype(int)
    assert lp.winners_curse(x, rng=0).beta == pytest.approx(0.005, rel=1e-12)
    assert lp.winners_curse(x, confidence_level=0.9, rng=0).beta == pytest.approx(0.01, rel=1e-12)


#: a fine grid for the one-dimensional integrals below (a Riemann sum over +-9 sd, exact to about 1e-12 for these smooth integrands)
_U = np.linspace(-9.0, 9.0, 36001)


def _expect(values):
    """E[values(u)] for u standard normal, on the grid."""
    return float(np.sum(stats.norm.pdf(_U) * values) * (_U[1] - _U[0]))


def _max_equicorrelated(level, m):
    """c with P(max_k |xi_0 - xi_k| / sqrt(2) <= c) = level for iid normals xi_0..xi_{m-1}: given xi_0 = u the
    m - 1 differences are independent, so the probability is E[(Phi(u + c sqrt 2) - Phi(u - c sqrt 2))^(m-1)]."""
    def prob(c):
        r = c * math.sqrt(2)
        return _expect((stats.norm.cdf(_U + r) - stats.norm.cdf(_U - r)) ** (m - 1)) - level
    return optimize.brentq(prob, 1.0, 8.0, xtol=1e-10)


def _range_quantile(level, m):
    """c with P(range of m iid normals <= c sqrt 2) = level: P(R <= r) = m E[(Phi(u + r) - Phi(u))^(m-1)]."""
    def prob(c):
        r = c * math.sqrt(2)
        return m * _expect((stats.norm.cdf(_U + r) - stats.norm.cdf(_U)) ** (m - 1)) - level
    return optimize.brentq(prob, 1.0, 8.0, xtol=1e-10)


@pytest.mark.parametrize(("target", "m"), [("winner", 4), ("top_gap", 3), ("new", 4)])
def test_projection_critical_value_is_the_exact_1_minus_beta_maximum(target, m):
    """The projection interval's c_beta is the 1 - beta quantile of the largest studentised deviation over every
    target the selection could pick, for independent equal-variance means exactly: the winner, any model's
    score (Sidak: Phi^-1((1 + (1 - beta)^(1/m)) / 2)); the top gap, any pair's difference (the range of m iid
    normals over sqrt 2); the new model, its gap to each existing one (equicorrelated at 1/2). Monte-Carlo
    error at 400,000 draws about 0.5%. Sized for: the quantile at 1 - beta/2 (4-6% higher), the top gap's
    family cut to neighbouring pairs (3% lower)."""
    beta = 0.005
    x = np.linspace(0.7, 0.6, m)
    out = selected_inference(x, np.eye(m) * 1e-4, [f"m{k}" for k in range(m)], 0.95, np.random.default_rng(7),
                             target=target, new=m - 1 if target == "new" else None, n_draws=400_000)
    assert out["beta"] == pytest.approx(beta)
    if target == "winner":
        want = stats.norm.ppf((1 + (1 - beta) ** (1 / m)) / 2)
    elif target == "top_gap":
        want = _range_quantile(1 - beta, m)
    else:
        want = _max_equicorrelated(1 - beta, m)
    assert out["critical_value_projection"] == pytest.approx(want, rel=0.012)


def test_continuity_correction_is_half_a_step_of_the_means_grid():
    """Mean scores of 0/1 items move in steps of 1/n, of quarter scores in steps of 1/(4n): the selection is
    relaxed by half a step, 1/(2n) and 1/(8n). Sized for: a whole step."""
    rng = np.random.default_rng(43)
    x = (rng.random((500, 3)) < [0.7, 0.69, 0.6]).astype(int)
    assert lp.winners_curse(x, rng=0).continuity_correction == pytest.approx(1 / 1000, rel=1e-12)
    quarters = rng.integers(0, 5, (400, 3)) / 4.0
    assert lp.winners_curse(quarters, rng=0).continuity_correction == pytest.approx(0.25 / 800, rel=1e-12)


# ---- fragility --------------------------------------------------------------------------------------------


def _brute_removals(gap, drop):
    """The fewest observations whose removal lowers ``gap`` to <= 0 when removing b lowers it by drop[b]."""
    if gap <= 0:
        return 0.0
    for k in range(1, drop.size + 1):
        if any(gap - drop[list(s)].sum() <= 1e-12 for s in itertools.combinations(range(drop.size), k)):
            return float(k)
    return math.inf


def test_linear_removals_equal_brute_force_over_every_subset():
    """The approximate maximum influence perturbation (Broderick, Giordano and Meager 2023): the fewest
    observations whose (linear) drops bring the gap to <= 0, against every subset of 8 observations, and the
    removal order starts with the largest drop. Sized for: the smallest drops first, a count one short."""
    rng = np.random.default_rng(44)
    kinds = set()
    for _ in range(60):
        drop = rng.normal(0.1, 0.3, 8)
        gap = float(rng.uniform(-0.2, 1.5))
        k, order = linear_removals_to_flip(gap, drop)
        want = _brute_removals(gap, drop)
        assert k == want, (gap, drop)
        kinds.add("zero" if want == 0 else "inf" if math.isinf(want) else "finite")
        if want > 0:
            assert drop[order[0]] == drop.max()
    assert kinds == {"zero", "finite", "inf"}


def test_a_gap_is_fragile_at_most_the_share():
    """fragile: items_to_flip / n <= fragile_share ("flips by removing at most" the share): 2 of 1,000 items
    flip this pair, fragile at a share of 0.002, not at 0.0019. Sized for: a strict comparison (< for <=)."""
    x = np.zeros((1000, 2), dtype=int)
    x[:2, 0] = 1  # A alone right on 2 items: b - c = 2
    x[2:500, :] = 1
    at = lp.fragility(x, fragile_share=0.002)
    assert at.items_to_flip.tolist() == [2.0] and at.items_to_flip_top == 2.0
    assert at.fragile.tolist() == [True] and at.fragile_top
    below = lp.fragility(x, fragile_share=0.0019)
    assert below.fragile.tolist() == [False] and not below.fragile_top


# ---- rank_intervals' documented thresholds -----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:only 10 clusters")
def test_auto_bootstraps_up_to_two_million_resampled_units():
    """method="auto" bootstraps while the resampled units (items, or clusters with clusters) times the
    resamples are at most 2,000,000: 2,000 items x 1,000 is the bootstrap, and so are 3,000 items in 10
    clusters (10 x 1,000 clusters resampled). Sized for: a strict limit, items counted where clusters are
    resampled."""
    rng = np.random.default_rng(45)
    x = (rng.random((2000, 3)) < [0.7, 0.6, 0.5]).astype(float)
    assert lp.rank_intervals(x, n_resamples=1000, rng=0).method == "bootstrap"
    codes = np.repeat(np.arange(10), 300)
    y = (rng.random((3000, 3)) < [0.7, 0.6, 0.5]).astype(float)
    res = lp.rank_intervals(y, cluster=codes, n_resamples=1000, rng=0)
    assert res.method == "bootstrap" and res.resampled == "clusters"


def test_top_sets_are_listed_below_the_number_of_models():
    """top_sets holds k in 1, 3, 5, 10 below the number of models (5 models: the top 1 and top 3)."""
    rng = np.random.default_rng(46)
    x = rng.normal([0.5, 0.45, 0.4, 0.3, 0.2], 1.0, (300, 5))
    assert set(lp.rank_intervals(x, rng=0).top_sets) == {"1", "3"}


def test_centred_values_and_covariance_are_double_centred():
    """Ratings identified up to a constant: the centred values are v - mean(v), the covariance double
    centred, S_ij - mean_i S - mean_j S + mean S (by hand). Sized for: centring by 1/(M - 1)."""
    rng = np.random.default_rng(47)
    v = rng.normal(size=5)
    a = rng.normal(size=(5, 5))
    cov = a @ a.T
    cv, cc = centred(v, cov)
    assert cv == pytest.approx(v - v.mean(), abs=1e-12)
    want = cov - cov.mean(axis=0, keepdims=True) - cov.mean(axis=1, keepdims=True) + cov.mean()
    assert cc == pytest.approx(want, abs=1e-12)


def test_a_shown_pair_unresolved_in_its_own_family_never_splits_two_ranks():
    """Benjamini-Hochberg judges a pair at rank j of its family at j alpha / m, so a pair can be resolved among
    all 10 pairs (rank 6: alpha' = 0.03) and not among the 4 pairs the table shows (rank 1: 0.0125). Five
    graded models built with adjacent gaps of 1, 3.1, 1 and 1 standard errors make b - c that pair; its max-t
    interval excludes 0 (3.1 > the critical value of about 2.7). The rule (docs/rankings.md: separated only
    when every regime resolves it, in the displayed family too) keeps b and c's rank intervals overlapping;
    brute force from the two tables gives the intervals. Sized for: the displayed family's verdict left out."""
    rng = np.random.default_rng(48)
    n = 3000
    noise = rng.normal(size=(n, 5))
    x = noise.copy()
    for k, t in enumerate([1.0, 3.1, 1.0, 1.0], start=1):  # mean_{k-1} - mean_k = t se of their differences
        se = (x[:, k - 1] - noise[:, k]).std(ddof=1) / math.sqrt(n)
        x[:, k] = noise[:, k] - noise[:, k].mean() + x[:, k - 1].mean() - t * se
    diag = lp.diagnose(x, models=list("abcde"), correction="bh")
    res = lp.rank_intervals(diag, rng=0)
    shown = diag.to_frame().set_index(["model_a", "model_b"])
    every = diag.all_pairs().to_frame()
    assert every.set_index(["model_a", "model_b"]).loc[("b", "c"), "resolved_corrected"]  # among all pairs: yes
    assert not shown.loc[("b", "c"), "resolved_corrected"]  # among the pairs shown: no
    c = res.critical_value
    sep = {}
    for row in every.itertuples():
        ok = row.delta - c * row.se > 0 and row.resolved and row.resolved_corrected
        if (row.model_a, row.model_b) in shown.index:
            ok = ok and bool(shown.loc[(row.model_a, row.model_b), "resolved_corrected"])
        sep[row.model_a, row.model_b] = ok
    assert every.set_index(["model_a", "model_b"]).loc[("b", "c"), "delta"] > c * every.set_index(
        ["model_a", "model_b"]).loc[("b", "c"), "se"]  # the max-t interval alone would split b and c
    names = list("abcde")
    assert res.models == names  # built in rank order
    for k, name in enumerate(names):
        above = sum(sep.get((other, name), False) for other in names)
        below = sum(sep.get((name, other), False) for other in names)
        assert (res.rank_ci_low[k], res.rank_ci_high[k]) == (1 + above, 5 - below), name
    assert res.rank_ci_high[1] >= res.rank_ci_low[2]  # b and c overlap
