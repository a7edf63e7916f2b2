"""Every formula of the run wing against a value computed outside the package.

Oracles: statsmodels' two-way ANOVA table (``anova_lm`` of ``y ~ C(item) + C(run)``) for the mean
squares and their degrees of freedom; Satterthwaite's (1946) degrees of freedom of a linear
combination of mean squares, (sum a_k MS_k)^2 / sum (a_k MS_k)^2 / df_k, written out here, and the run
test's df as ``llm_power._kernel.crossed`` documents them -- the smallest Satterthwaite df over the corners
of a box of one-sided (1 - g) chi-square bounds of each expected run mean square, floored at the fewest
R - 1 and capped at n - 1 -- written out here with scipy's chi-square quantiles; the truncated run part a
plan expects, E[max(0, MS_run - MS_res)], by numerical integration (scipy's quad); scipy's
t, chi-square and F quantiles; the modified large-sample intervals of Burdick and Graybill (1992,
*Confidence Intervals on Variance Components*, eqs. 3.1.4-3.1.9 for c1 S1 - c2 S2 and Graybill and
Wang's (1980) interval of a sum, section 3.1), written out here from the book; an independent
bootstrap of the items for the template Kendall tau interval; and brute-force enumeration for the
plans. Nothing here compares the package with its own output.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats
from threadpoolctl import threadpool_limits

import llm_power as lp
from llm_power._kernel.crossed import RUN_DF_BOUND

# ---- the oracles, written out from their references --------------------------------------------


def anova(y: np.ndarray) -> dict[str, float]:
    """Mean squares and df of the two-way layout without replication (statsmodels' anova_lm, type I)."""
    n, r = y.shape
    frame = pd.DataFrame({"y": y.ravel(), "item": np.repeat(np.arange(n), r), "run": np.tile(np.arange(r), n)})
    with warnings.catch_warnings(), threadpool_limits(1):  # one BLAS thread: a busy machine's cores stall it
        warnings.simplefilter("ignore")
        table = sm.stats.anova_lm(smf.ols("y ~ C(item) + C(run)", frame).fit(), typ=1)
    return {"ms_item": float(table.loc["C(item)", "mean_sq"]), "ms_run": float(table.loc["C(run)", "mean_sq"]),
            "ms_res": float(table.loc["Residual", "mean_sq"]), "df_item": float(table.loc["C(item)", "df"]),
            "df_run": float(table.loc["C(run)", "df"]), "df_res": float(table.loc["Residual", "df"])}


def satterthwaite(terms: list[tuple[float, float]]) -> float:
    """Satterthwaite (1946): (sum t_k)^2 / sum t_k^2 / df_k over the terms t_k = a_k MS_k."""
    return sum(t for t, _ in terms) ** 2 / sum(t * t / d for t, d in terms if t != 0)


def run_test_df(item_part, n, sources, *, wrong: bool = False):
    """The run test's df: the smallest Satterthwaite df over the corners of the box in which each source's
    E[MS_run] lies between (R - 1) MS_run / chi2_{R-1}(1 - g) and (R - 1) MS_run / chi2_{R-1}(g) (one-sided
    1 - g bounds, g = RUN_DF_BOUND); a source's run component (E MS_run - MS_res)/(nR) enters where positive
    as MS_run/(nR) on R - 1 df minus MS_res/(nR) on (n - 1)(R - 1) -- the residual mean square's df of the
    ANOVA table (``wrong``: on (n - 1) R, the mutant the tests must see); floored at the fewest R - 1,
    capped at n - 1. Vectorised (numpy) over the arrays; ``sources`` = [(MS_run, MS_res, R)]."""
    n = np.asarray(n, dtype=float)
    boxes = [((r - 1) * np.asarray(ms) / stats.chi2.ppf(1 - RUN_DF_BOUND, r - 1),
              (r - 1) * np.asarray(ms) / stats.chi2.ppf(RUN_DF_BOUND, r - 1)) for ms, _, r in sources]
    df = np.inf
    for corner in itertools.product(*boxes):
        num, den = np.asarray(item_part, dtype=float), np.asarray(item_part, dtype=float) ** 2 / (n - 1.0)
        for e_ms, (_, ms_res, r) in zip(corner, sources, strict=True):
            on = e_ms > ms_res
            res_df = (n - 1.0) * (r if wrong else r - 1.0)
            num = num + np.where(on, (e_ms - ms_res) / (n * r), 0.0)
            den = den + np.where(on, (e_ms / (n * r)) ** 2 / (r - 1.0) + (ms_res / (n * r)) ** 2 / res_df, 0.0)
        df = np.minimum(df, num**2 / den)
    floor = min(r - 1.0 for _, _, r in sources)
    out = np.minimum(np.maximum(df, floor), n - 1.0)
    return float(out) if out.ndim == 0 else out


def k_t(alpha: float, power: float, df: float) -> float:
    """K on df degrees of freedom: (t_{1-alpha/2, df} + t_{power, df})^2 (scipy)."""
    return (stats.t.isf(alpha / 2, df) + stats.t.ppf(power, df)) ** 2


def f_isf(tail: float, d1: float, d2: float) -> float:
    """The upper-tail point of F(d1, d2) (scipy); F(d1, inf) is chi-square(d1) / d1."""
    return float(stats.chi2.isf(tail, d1) / d1 if math.isinf(d2) else stats.f.isf(tail, d1, d2))


def mls_difference(c1, s1, n1, c2, s2, n2, level):
    """Burdick and Graybill (1992) eqs. 3.1.4-3.1.9: the MLS interval of c1 S1 - c2 S2, bounds at >= 0."""
    a = (1 - level) / 2
    f1a, f1b = f_isf(a, n1, np.inf), f_isf(1 - a, n1, np.inf)
    f2a, f2b = f_isf(a, n2, np.inf), f_isf(1 - a, n2, np.inf)
    f12a, f12b = f_isf(a, n1, n2), f_isf(1 - a, n1, n2)
    g1, h1, g2, h2 = 1 - 1 / f1a, 1 / f1b - 1, 1 - 1 / f2a, 1 / f2b - 1
    g12 = ((f12a - 1) ** 2 - g1**2 * f12a**2 - h2**2) / f12a
    h12 = ((1 - f12b) ** 2 - h1**2 * f12b**2 - g2**2) / f12b
    t1, t2 = c1 * s1, c2 * s2
    lo = t1 - t2 - math.sqrt(max(g1**2 * t1**2 + h2**2 * t2**2 + g12 * t1 * t2, 0.0))
    hi = t1 - t2 + math.sqrt(max(h1**2 * t1**2 + g2**2 * t2**2 + h12 * t1 * t2, 0.0))
    return max(lo, 0.0), max(hi, 0.0)


def graybill_wang(terms, level):
    """Graybill and Wang (1980): the interval of sum c_q S_q (independent mean squares on n_q df)."""
    a = (1 - level) / 2
    est = sum(c * s for c, s, _ in terms)
    low = sum(((1 - 1 / f_isf(a, d, np.inf)) * c * s) ** 2 for c, s, d in terms)
    high = sum(((1 / f_isf(1 - a, d, np.inf) - 1) * c * s) ** 2 for c, s, d in terms)
    return est - math.sqrt(low), est + math.sqrt(high)


def noisy_pair(seed: int, n: int, r: int, *, s_run: float, s_res: float, gap: float = 0.1) -> np.ndarray:
    """(n, r, 2): shared item effects, each model's own run shifts, residual noise."""
    rng = np.random.default_rng(seed)
    return (np.array([gap, 0.0]) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.3, (n, 1, 2))
            + rng.normal(0, s_run, (1, r, 2)) + rng.normal(0, s_res, (n, r, 2)))


def independent_pair_by_hand(ya: np.ndarray, yb: np.ndarray, tables: tuple | None = None) -> dict[str, float]:
    """The gap's variance over items and runs of two independently run models, s2_D/n + sum_m max(0, MS_run,m -
    MS_res,m)/(n R_m), and the run test's df (each model's ANOVA table a source)."""
    n = ya.shape[0]
    d = ya.mean(1) - yb.mean(1)
    s2_d = d.var(ddof=1)
    run_part, sources = 0.0, []
    for y, t in zip((ya, yb), tables or (anova(ya), anova(yb)), strict=True):
        r = y.shape[1]
        run_part += max(t["ms_run"] - t["ms_res"], 0.0) / (n * r)
        sources.append((t["ms_run"], t["ms_res"], float(r)))
    var = s2_d / n + run_part
    return {"delta": d.mean(), "var": var, "df": run_test_df(s2_d / n, n, sources), "s2_d": s2_d,
            "run_part": run_part, "wrong_df": run_test_df(s2_d / n, n, sources, wrong=True),
            "floor": min(r for _, _, r in sources) - 1.0}


# ---- the pair's test over items and runs: Satterthwaite df --------------------------------------


@pytest.mark.parametrize(("n", "r", "seed"), [(25, 2, 42), (40, 3, 120), (15, 5, 75)])
def test_independent_runs_df_pvalue_and_interval_are_the_run_tests(n: int, r: int, seed: int) -> None:
    """Kills the residual mean square on (n - 1) R df instead of (n - 1)(R - 1): the df (the run test's,
    from the ANOVA tables), the p-value (scipy's t) and the t interval of compare and run_variance."""
    y = noisy_pair(seed, n, r, s_run=0.3, s_res=0.9)
    want = independent_pair_by_hand(y[:, :, 0], y[:, :, 1])
    assert want["run_part"] > 0 and want["floor"] < want["df"] < n - 1  # neither floored nor capped
    assert abs(want["wrong_df"] / want["df"] - 1) > 1e-6  # the residual's df is seen
    c = lp.compare(y[:, :, 0], y[:, :, 1])
    assert c.run_df == pytest.approx(want["df"], rel=1e-9)
    assert c.se_runs == pytest.approx(math.sqrt(want["var"]), rel=1e-9)
    t = want["delta"] / math.sqrt(want["var"])
    assert c.pvalue == pytest.approx(2 * stats.t.sf(abs(t), want["df"]), rel=1e-7)
    half = stats.t.isf(0.025, want["df"]) * math.sqrt(want["var"])
    assert c.confidence_interval() == pytest.approx((want["delta"] - half, want["delta"] + half), rel=1e-8)
    row = lp.run_variance(y, models=["a", "b"]).pairs[0]
    assert (row["model_a"], row["model_b"]) == ("a", "b")
    assert row["df"] == pytest.approx(want["df"], rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((want["delta"] - half, want["delta"] + half), rel=1e-8)


@pytest.mark.parametrize(("n", "r", "seed", "common", "own"), [(25, 2, 2, 0.5, 0.3), (30, 8, 24, 0.15, 0.1)])
def test_matched_runs_df_is_the_run_tests_on_the_differences(n: int, r: int, seed: int, common: float,
                                                              own: float) -> None:
    """Matched runs (templates): the two-way layout of D_ir = y_A,ir - y_B,ir. Var = s2_D/n +
    max(0, MS_run,D - MS_res,D)/(nR) on the run test's df, MS_res,D on (n - 1)(R - 1) (anova_lm)."""
    rng = np.random.default_rng(seed)
    shift = rng.normal(0, common, (1, r, 1))  # a template's shift common to both models
    y = (np.array([0.1, 0.0]) + rng.normal(0, 1, (n, 1, 1)) + shift + rng.normal(0, own, (1, r, 2))
         + rng.normal(0, 0.8, (n, r, 2)))
    dd = y[:, :, 0] - y[:, :, 1]
    t = anova(dd)
    d = dd.mean(1)
    s2_d = d.var(ddof=1)
    comp = (t["ms_run"] - t["ms_res"]) / n
    assert comp > 0
    var = s2_d / n + comp / r
    source = [(t["ms_run"], t["ms_res"], float(r))]
    df = run_test_df(s2_d / n, n, source)
    assert r - 1 < df < n - 1 and abs(run_test_df(s2_d / n, n, source, wrong=True) / df - 1) > 1e-6
    c = lp.compare(y[:, :, 0], y[:, :, 1], run_pairing="matched")
    assert c.run_df == pytest.approx(df, rel=1e-9)
    assert c.se_runs == pytest.approx(math.sqrt(var), rel=1e-9)
    assert c.pvalue == pytest.approx(2 * stats.t.sf(abs(d.mean()) / math.sqrt(var), df), rel=1e-7)
    board = lp.RunScores.from_array(y, models=["a", "b"], runs_by="template")
    row = lp.run_variance(board).pairs[0]
    assert row["df"] == pytest.approx(df, rel=1e-9)
    # the components of the matched gap: run (MS_run - MS_res)/n, residual MS_res, item s2_D - MS_res/R,
    # with their MLS intervals (Burdick and Graybill) on the ANOVA table's df
    assert row["var_run"] == pytest.approx(comp, rel=1e-9)
    assert row["var_res"] == pytest.approx(t["ms_res"], rel=1e-9)
    assert row["var_item"] == pytest.approx(max(s2_d - t["ms_res"] / r, 0.0), rel=1e-9)
    assert row["var_run_ci"] == pytest.approx(mls_difference(1 / n, t["ms_run"], t["df_run"], 1 / n, t["ms_res"],
                                                             t["df_res"], 0.95), rel=1e-7)
    assert row["var_item_ci"] == pytest.approx(mls_difference(1.0, s2_d, n - 1.0, 1 / r, t["ms_res"], t["df_res"],
                                                              0.95), rel=1e-7, abs=1e-15)


def test_each_models_interval_over_items_and_runs_is_the_run_tests() -> None:
    """diagnose's models table with runs: MS_item/(nR) + max(0, MS_run - MS_res)/(nR), t on the run test's
    df (MS_item/(nR) on n - 1 and the model's run layout), from the ANOVA table of each model."""
    n, r = 24, 3  # 24 items: the IID test of the run means is not the exact permutation test (2^n flips)
    rng = np.random.default_rng(30)
    y = (np.array([0.3, 0.0]) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.35, (1, r, 2))
         + rng.normal(0, 0.9, (n, r, 2)))
    d = lp.diagnose(y, models=["a", "b"])
    for k, name in enumerate(d.models):
        t = anova(y[:, :, ["a", "b"].index(name)])
        comp = (t["ms_run"] - t["ms_res"]) / n
        assert comp > 0
        var = t["ms_item"] / (n * r) + comp / r
        source = [(t["ms_run"], t["ms_res"], float(r))]
        df = run_test_df(t["ms_item"] / (n * r), n, source)
        assert r - 1 < df < n - 1 and abs(run_test_df(t["ms_item"] / (n * r), n, source, wrong=True) / df - 1) > 1e-6
        mean = y[:, :, ["a", "b"].index(name)].mean()
        half = stats.t.isf(0.025, df) * math.sqrt(var)
        assert (d.model_ci_low[k], d.model_ci_high[k]) == pytest.approx((mean - half, mean + half), rel=1e-9)
        assert d.model_se[k] == pytest.approx(math.sqrt(var), rel=1e-9)


# ---- run_variance: every component and interval ---------------------------------------------------


def test_model_components_and_their_intervals_from_the_anova_table() -> None:
    """Per model: s2_item = (MS_item - MS_res)/R, s2_run = (MS_run - MS_res)/n, s2_res = MS_res; intervals MLS
    (item, run) and chi-square (residual); SE over items sqrt(MS_item/(nR)), over items and runs
    sqrt(MS_item/(nR) + s2_run/R); run share (s2_run/R) / that variance."""
    n, r = 30, 4
    rng = np.random.default_rng(6)
    y = rng.normal(0, 1, (n, 1, 2)) + rng.normal(0, 0.3, (1, r, 2)) + rng.normal(0, 0.7, (n, r, 2))
    res = lp.run_variance(y, models=["a", "b"], confidence_level=0.9)
    for k in range(2):
        t = anova(y[:, :, k])
        v_item, v_run = (t["ms_item"] - t["ms_res"]) / r, (t["ms_run"] - t["ms_res"]) / n
        assert v_item > 0 and v_run > 0
        assert res.var_item[k] == pytest.approx(v_item, rel=1e-9)
        assert res.var_run[k] == pytest.approx(v_run, rel=1e-9)
        assert res.var_res[k] == pytest.approx(t["ms_res"], rel=1e-9)
        var = t["ms_item"] / (n * r) + v_run / r
        assert res.se_items[k] == pytest.approx(math.sqrt(t["ms_item"] / (n * r)), rel=1e-9)
        assert res.se[k] == pytest.approx(math.sqrt(var), rel=1e-9)
        assert res.run_share[k] == pytest.approx((v_run / r) / var, rel=1e-9)
        chi = (t["df_res"] * t["ms_res"] / stats.chi2.isf(0.05, t["df_res"]),
               t["df_res"] * t["ms_res"] / stats.chi2.isf(0.95, t["df_res"]))
        assert (res.var_res_ci[0][k], res.var_res_ci[1][k]) == pytest.approx(chi, rel=1e-9)
        item = mls_difference(1 / r, t["ms_item"], t["df_item"], 1 / r, t["ms_res"], t["df_res"], 0.9)
        run = mls_difference(1 / n, t["ms_run"], t["df_run"], 1 / n, t["ms_res"], t["df_res"], 0.9)
        assert (res.var_item_ci[0][k], res.var_item_ci[1][k]) == pytest.approx(item, rel=1e-8)
        assert (res.var_run_ci[0][k], res.var_run_ci[1][k]) == pytest.approx(run, rel=1e-8)


def test_independent_pair_components_and_their_intervals() -> None:
    """The gap of two independently run models: item part s2_D - sum MS_res,m/R_m (MLS against the residual
    part on its Satterthwaite df), run part sum (MS_run,m - MS_res,m)/n (Graybill-Wang over the two MS_run,
    less sum MS_res/n), residual sum MS_res; shares of the gap's variance."""
    n = 40
    rng = np.random.default_rng(8)
    item = rng.normal(0, 1, (n, 1))
    ya = item + rng.normal(0, 0.5, (n, 1)) + rng.normal(0, 0.3, (1, 3)) + rng.normal(0, 0.6, (n, 3))  # + item x model
    yb = item + rng.normal(0, 0.35, (1, 5)) + rng.normal(0, 0.6, (n, 5))
    res = lp.run_variance({"a": ya + 1.0, "b": yb})
    row = res.pairs[0]
    ta, tb = anova(ya), anova(yb)
    by_hand = independent_pair_by_hand(ya + 1.0, yb, (ta, tb))
    va, vb = (ta["ms_run"] - ta["ms_res"]) / n, (tb["ms_run"] - tb["ms_res"]) / n
    assert va > 0 and vb > 0
    assert row["var_run"] == pytest.approx(va + vb, rel=1e-9)
    assert row["var_res"] == pytest.approx(ta["ms_res"] + tb["ms_res"], rel=1e-9)
    res_a, res_b = ta["ms_res"] / 3, tb["ms_res"] / 5
    assert by_hand["s2_d"] - res_a - res_b > 0  # the item x model part is there (not truncated at 0)
    assert row["var_item"] == pytest.approx(by_hand["s2_d"] - res_a - res_b, rel=1e-9)
    assert row["se_items"] == pytest.approx(math.sqrt(by_hand["s2_d"] / n), rel=1e-9)
    assert row["se"] == pytest.approx(math.sqrt(by_hand["var"]), rel=1e-9)
    assert row["run_share"] == pytest.approx((va / 3 + vb / 5) / by_hand["var"], rel=1e-9)
    removable = 1 - min(row["var_item"] / n, by_hand["var"]) / by_hand["var"]
    assert row["rerun_removable_share"] == pytest.approx(removable, rel=1e-9)
    lo, hi = graybill_wang([(1 / n, ta["ms_run"], ta["df_run"]), (1 / n, tb["ms_run"], tb["df_run"])], 0.95)
    shift = (ta["ms_res"] + tb["ms_res"]) / n
    assert row["var_run_ci"] == pytest.approx((max(lo - shift, 0.0), max(hi - shift, 0.0)), rel=1e-8)
    res_df = satterthwaite([(res_a, ta["df_res"]), (res_b, tb["df_res"])])
    want = mls_difference(1.0, by_hand["s2_d"], n - 1.0, 1.0, res_a + res_b, res_df, 0.95)
    assert row["var_item_ci"] == pytest.approx(want, rel=1e-8, abs=1e-15)


def test_pairs_are_ranked_by_score_best_first() -> None:
    """Adjacent pairs join the k-th and (k+1)-th best models (numpy's ranking of the run-averaged scores),
    the better one first and the gap positive; "all" lists every pair with the better model first."""
    rng = np.random.default_rng(12)
    shift = np.array([0.2, 0.9, 0.5, 0.0])
    y = shift + rng.normal(0, 1, (60, 1, 1)) + rng.normal(0, 0.05, (1, 3, 4)) + rng.normal(0, 0.3, (60, 3, 4))
    names = ["w", "x", "y", "z"]
    means = y.mean(axis=(0, 1))
    ranked = [names[k] for k in np.argsort(-means)]
    assert ranked == ["x", "y", "w", "z"]
    res = lp.run_variance(y, models=names)
    assert [(p["model_a"], p["model_b"]) for p in res.pairs] == list(itertools.pairwise(ranked))
    for p in res.pairs:
        gap = means[names.index(p["model_a"])] - means[names.index(p["model_b"])]
        assert p["delta"] == pytest.approx(gap, rel=1e-12) and p["delta"] > 0
    every = lp.run_variance(y, models=names, pairs="all")
    assert [(p["model_a"], p["model_b"]) for p in every.pairs] == list(itertools.combinations(ranked, 2))


# ---- noise: flakiness, resolvable models, template Kendall tau ----------------------------------------


def test_flakiness_rows_by_hand() -> None:
    """Per model: unstable items (any disagreement), the unbiased flip rate 2c(R - c)/(R(R - 1)) with its t
    interval over items (scipy), best and worst possible (any / every run right); for graded scores the mean
    within-item variance (ddof 1); the flakiest item's Wilson interval (written out)."""
    rng = np.random.default_rng(4)
    n, r = 200, 3
    y = (rng.random((n, r, 2)) < rng.beta(0.6, 0.6, (n, 1, 2))).astype(int)
    rep = lp.noise(y, models=["a", "b"], confidence_level=0.9)
    for k, row in enumerate(rep.flakiness):
        blk = y[:, :, k]
        c = blk.sum(1)
        flip = 2 * c * (r - c) / (r * (r - 1))
        half = stats.t.isf(0.05, n - 1) * flip.std(ddof=1) / math.sqrt(n)
        assert row["unstable"] == int(np.sum((c > 0) & (c < r)))
        assert row["flip_rate"] == pytest.approx(flip.mean(), rel=1e-12)
        assert row["flip_rate_ci"] == pytest.approx((max(flip.mean() - half, 0.0), flip.mean() + half), rel=1e-9)
        assert row["best_possible"] == pytest.approx(np.mean(c > 0))
        assert row["worst_possible"] == pytest.approx(np.mean(c == r))
    graded = rng.normal(0, 1, (50, 1, 2)) + rng.normal(0, 0.3, (50, r, 2))  # graded: the within-item variance
    for k, row in enumerate(lp.noise(graded, models=["a", "b"]).flakiness):
        within = graded[:, :, k].var(axis=1, ddof=1)  # unbiased for the item x run variance
        half = stats.t.isf(0.025, 49) * within.std(ddof=1) / math.sqrt(50)
        assert row["flip_rate"] == pytest.approx(within.mean(), rel=1e-12) and "best_possible" not in row
        assert row["flip_rate_ci"] == pytest.approx((max(within.mean() - half, 0.0), within.mean() + half), rel=1e-9)
    top = rep.flaky_items[0]
    lo, hi = top["ci"]
    p = top["right"] / top["runs"]  # Wilson's score interval, written out (z from scipy)
    z = stats.norm.isf(0.05)
    centre, spread = (p + z * z / (2 * r)) / (1 + z * z / r), z * math.sqrt(p * (1 - p) / r + z * z / (4 * r * r))
    assert (lo, hi) == pytest.approx((centre - spread / (1 + z * z / r), centre + spread / (1 + z * z / r)), rel=1e-9)


def test_resolvable_models_is_the_spread_over_the_median_run_mde() -> None:
    """spread / median over the adjacent gaps of sqrt(K_df) x SE over items and runs, + 1 (K on each gap's run
    test df from the ANOVA tables, t quantiles from scipy); four models, so the median of the three is not
    their mean."""
    rng = np.random.default_rng(6)
    n, r = 50, 3
    y = np.array([0.9, 0.6, 0.5, 0.0]) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.3, (n, 1, 4)) \
        + rng.normal(0, 0.2, (1, r, 4)) + rng.normal(0, 0.2, (1, r, 1)) * np.array([0.0, 0.0, 2.0, 4.0]) \
        + rng.normal(0, 0.6, (n, r, 4))
    rep = lp.noise(y, models=["a", "b", "c", "d"], alpha=0.1, power=0.9)
    means = y.mean(axis=(0, 1))
    ranked = np.argsort(-means)
    mdes = []
    for a, b in itertools.pairwise(ranked):  # the adjacent pairs by score
        h = independent_pair_by_hand(y[:, :, a], y[:, :, b])
        mdes.append(math.sqrt(k_t(0.1, 0.9, h["df"]) * h["var"]))
    assert abs(np.median(mdes) / np.mean(mdes) - 1) > 0.01
    assert rep.signal == pytest.approx(np.ptp(means))
    assert rep.resolvable_models == pytest.approx(np.ptp(means) / np.median(mdes) + 1, rel=1e-9)


def _tau_a(per: np.ndarray) -> np.ndarray:
    """Mean Kendall tau-a between every pair of templates' rankings; per: (..., templates, models)."""
    m = per.shape[-1]
    iu = np.triu_indices(m, 1)
    s = np.sign(per[..., :, :, None] - per[..., :, None, :])[..., iu[0], iu[1]]  # (..., T, P)
    t = per.shape[-2]
    pairs = list(itertools.combinations(range(t), 2))
    return np.mean([np.mean(s[..., a, :] * s[..., b, :], axis=-1) for a, b in pairs], axis=0)


def test_template_kendall_tau_interval_is_the_two_sided_percentile_interval() -> None:
    """The interval at 95% is the 2.5% and 97.5% percentiles of the items bootstrap of the mean tau-a, here
    an independent, vectorised bootstrap (another seed, 20,000 resamples). Sized to tell it from the 5%/95%
    percentiles (alpha per tail: a 90% interval labelled 95%): those sit 0.32 bootstrap SDs inside, while
    each end's Monte-Carlo error is about 0.06 SDs (package, 4,000 resamples) and 0.03 (here) -- each end
    must be nearer its own percentile than the 90% one, a 4-SE margin."""
    rng = np.random.default_rng(21)
    n, t, m = 150, 4, 10
    y = (np.linspace(0.3, 0.0, m) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.04, (1, t, m))
         + rng.normal(0, 0.5, (n, t, m)))
    board = lp.RunScores.from_array(y, models=[f"m{k}" for k in range(m)], runs_by="template")
    rep = lp.noise(board, n_resamples=4000, rng=1)
    lo, hi = rep.templates["kendall_tau_ci"]
    assert rep.templates["kendall_tau"] == pytest.approx(float(_tau_a(y.mean(0))), rel=1e-12)
    per = y.mean(axis=0)  # templates x models
    for k, row in enumerate(rep.templates["spread"]):  # each model over the templates: range and sd (ddof 1)
        assert (row["min"], row["max"], row["spread"]) == pytest.approx((per[:, k].min(), per[:, k].max(),
                                                                         np.ptp(per[:, k])))
        assert row["sd"] == pytest.approx(per[:, k].std(ddof=1), rel=1e-12)
    gen = np.random.default_rng(99)
    boots = np.concatenate([_tau_a(y[gen.integers(0, n, (2000, n))].mean(axis=1)) for _ in range(10)])
    q025, q05, q95, q975 = np.quantile(boots, [0.025, 0.05, 0.95, 0.975])
    assert q975 - q05 > 0 and abs(lo - q025) < abs(lo - q05), (lo, q025, q05)
    assert abs(hi - q975) < abs(hi - q95), (hi, q975, q95)


# ---- plan_runs: items and runs needed, by enumeration ---------------------------------------------


@pytest.mark.parametrize(("delta", "s2_item", "comps", "n"), [
    (0.2, 0.3, [(0.004, 0.5, 3), (0.002, 0.6, 3)], 150),  # two models, run variance in both
    (0.5, 0.2, [(0.0, 0.5, 2), (0.003, 0.5, 2)], 200),  # one model's true run component is 0 (still estimated)
    (0.2, 0.4, [(0.005, 0.8, 4), (0.0, 0.0, 4)], 300),  # matched runs: the difference's source and a zero one
    (0.0, 0.3, [(0.004, 0.5, 3), (0.002, 0.6, 3)], 150),  # no gap: the size, half of it in each tail
    (0.02, 0.3, [(0.004, 0.5, 3), (0.002, 0.6, 3)], 150),  # a gap too small to see: both tails count
])
def test_planned_power_is_the_run_tests_power_under_normal_theory(delta, s2_item, comps, n) -> None:
    """The power a plan counts on, against a Monte-Carlo of the test it plans for (400,000 draws, SE <= 0.0008;
    at no gap the size, SE 0.0003, where each tail holds half -- the tolerance, a tenth, sees a lost tail):
    delta-hat ~ N(delta, (s2_item + sum res/R)/n + sum s2_run/R); each MS_run = (res + n s2_run) chi2_{R-1}/(R-1);
    the test's variance (s2_item + sum res/R)/n + sum max(0, MS_run - res)/(nR) and its df as above; reject when
    |delta-hat| > t_{df, 0.975} sqrt(V) (scipy)."""
    from llm_power._kernel.crossed import planned_power

    gen = np.random.default_rng(11)
    draws = 400_000
    item = (s2_item + sum(res / r for _, res, r in comps)) / n
    tau = math.sqrt(item + sum(run / r for run, _, r in comps))
    d_hat = gen.normal(delta, tau, draws)
    var, sources = item, []
    for run, res, r in comps:
        e = res + n * run
        if e == 0:
            continue
        ms = e * gen.chisquare(r - 1, draws) / (r - 1)
        var = var + np.maximum(ms - res, 0.0) / (n * r)
        sources.append((ms, res, r))
    df = run_test_df(np.full(draws, item), n, sources)
    mc = float(np.mean(np.abs(d_hat) > stats.t.isf(0.025, df) * np.sqrt(var)))
    got = float(planned_power(delta, s2_item, sum(res / r for _, res, r in comps), comps, n, alpha=0.05))
    assert 0.01 < mc < 0.98 and got == pytest.approx(mc, abs=max(0.004, 0.1 * mc)), (got, mc)


def first_true(ok, value: float) -> bool:
    """``value`` is the smallest integer >= 2 where ok holds, for an ok that turns true and stays true (the
    rule the plans search under): ok at value and not one below; inf: ok fails even at 10^7."""
    if math.isinf(value):
        return not ok(1e7)
    return bool(ok(value)) and (value == 2 or not ok(value - 1))


def test_plan_runs_items_and_runs_needed_by_search() -> None:
    """A plan sizes for the power the run test will have at the planned design (planned_power, held to a
    Monte-Carlo of that test above), from the pilot's components (the ANOVA tables; 3 runs of one model, 5
    of the other): items_needed is the smallest n reaching 0.8 at the pilot's runs, runs_needed the smallest
    R >= 2 (each model) at the pilot's items, the allocation's items at each R likewise (searched here)."""
    from llm_power._kernel.crossed import planned_power

    n, gap = 120, 0.5
    rng = np.random.default_rng(1)
    item = rng.normal(0, 1, (n, 1))
    ya = 0.25 + item + rng.normal(0, 0.3, (n, 1)) + rng.normal(0, 0.06, (1, 3)) + rng.normal(0, 0.8, (n, 3))
    yb = item + rng.normal(0, 0.3, (n, 1)) + rng.normal(0, 0.06, (1, 5)) + rng.normal(0, 0.8, (n, 5))
    plan = lp.plan_runs({"a": ya, "b": yb}, gap, max_runs=12)
    ta, tb = anova(ya), anova(yb)
    h = independent_pair_by_hand(ya, yb, (ta, tb))
    va, vb = (ta["ms_run"] - ta["ms_res"]) / n, (tb["ms_run"] - tb["ms_res"]) / n
    assert va > 0 and vb > 0
    s2_item = max(h["s2_d"] - ta["ms_res"] / 3 - tb["ms_res"] / 5, 0.0)
    s2_res = ta["ms_res"] + tb["ms_res"]
    assert (plan.var_item, plan.var_res, plan.var_run) == pytest.approx((s2_item, s2_res, va + vb), rel=1e-9)

    def enough(nn: float, ra: float, rb: float) -> bool:
        comps = [(va, ta["ms_res"], ra), (vb, tb["ms_res"], rb)]
        res_item = ta["ms_res"] / ra + tb["ms_res"] / rb
        return float(planned_power(gap, s2_item, res_item, comps, nn, alpha=0.05)) >= 0.8

    assert math.isfinite(plan.items_needed) and first_true(lambda nn: enough(nn, 3, 5), plan.items_needed)
    assert math.isfinite(plan.runs_needed) and first_true(lambda rr: enough(n, rr, rr), plan.runs_needed)
    items = plan.table["items"]
    assert {bool(np.isfinite(v)) for v in items[1:]} == {True, False}  # feasible and infeasible numbers of runs
    for rr in (2, 3, 5, 12):
        assert first_true(lambda nn, rr=rr: enough(nn, rr, rr), items[rr - 1]), rr
        assert plan.table["cost"][rr - 1] == items[rr - 1] * rr  # cost per item-run 1, per run 0
    assert math.isinf(plan.table["items"][0])  # one run is never planned: the run tests refuse it


def test_plan_runs_defaults_to_the_top_two_models() -> None:
    """Without ``pair`` the plan is for the pilot's two best models by mean score (numpy), better first."""
    rng = np.random.default_rng(2)
    y = np.array([0.1, 0.5, 0.0, 0.3]) + rng.normal(0, 1, (200, 1, 1)) + rng.normal(0, 0.3, (200, 3, 4))
    plan = lp.plan_runs(y, 0.2, models=["w", "x", "y", "z"])
    best = np.argsort(-y.mean(axis=(0, 1)))[:2]
    assert (plan.model_a, plan.model_b) == tuple("wxyz"[k] for k in best) == ("x", "z")


def test_runs_needed_follows_the_verdict_at_the_current_runs() -> None:
    """The documented rule (kernel, consistent_runs_needed): a gap the run test resolves (q >= 1) needs at
    most the runs it has, max(R_A, R_B); one it does not, at least min(R_A, R_B) + 1; an undefined q
    leaves the plan's number alone."""
    from llm_power._kernel.crossed import consistent_runs_needed

    needed = np.array([10.0, 2.0, 2.0, 10.0, 7.0, math.inf])
    q = np.array([1.5, 0.5, 0.5, 1.0, math.nan, 0.2])
    ra, rb = np.array([3.0, 3.0, 2.0, 2.0, 3.0, 3.0]), np.array([5.0, 5.0, 4.0, 4.0, 5.0, 5.0])
    got = consistent_runs_needed(needed, q, ra, rb)
    assert got.tolist() == [5.0, 4.0, 3.0, 4.0, 7.0, math.inf]
