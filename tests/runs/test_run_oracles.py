"""The run wing against oracles from outside the package, sized to see plausible one-line formula errors.

Each test states the mutant (a wrong df, ddof, a dropped term, a swapped quantile) it is sized to see. Oracles:
scipy's paired t test and t / chi-square quantiles; statsmodels' two-way ANOVA table (``anova_lm``) for the
mean squares; Satterthwaite's (1946) df and the run test's documented rule (the smallest Satterthwaite df over
the corners of one-sided 1 - g chi-square bounds of each expected run mean square, floored at the fewest R - 1,
capped at n - 1), written out here; brute-force enumeration; and Monte-Carlo simulation of the normal-theory
laws with tolerances stated in units of their standard errors. Nothing compares the package with its own output.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import llm_power as lp
from llm_power._kernel.crossed import RUN_DF_BOUND


def anova(y: np.ndarray) -> dict[str, float]:
    """Mean squares and df of the two-way layout without replication (statsmodels' anova_lm, type I)."""
    sm = pytest.importorskip("statsmodels.api")
    smf = pytest.importorskip("statsmodels.formula.api")
    n, r = y.shape
    frame = pd.DataFrame({"y": y.ravel(), "item": np.repeat(np.arange(n), r), "run": np.tile(np.arange(r), n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = sm.stats.anova_lm(smf.ols("y ~ C(item) + C(run)", frame).fit(), typ=1)
    return {"ms_item": float(table.loc["C(item)", "mean_sq"]), "ms_run": float(table.loc["C(run)", "mean_sq"]),
            "ms_res": float(table.loc["Residual", "mean_sq"]), "df_run": float(table.loc["C(run)", "df"]),
            "df_res": float(table.loc["Residual", "df"])}


def run_test_df(item_part: float, n: int, sources: list[tuple[float, float, float]]) -> float:
    """The run test's df as documented (llm_power._kernel.crossed): min over the corners of the box in which each
    E[MS_run] lies between (R - 1) MS_run / chi2_{R-1}(1 - g) and (R - 1) MS_run / chi2_{R-1}(g) of the
    Satterthwaite df of item_part (n - 1 df) + sum (E MS_run - MS_res)/(nR) (where positive; MS_run/(nR) on R - 1
    df, MS_res/(nR) on (n - 1)(R - 1)); floored at the fewest R - 1, capped at n - 1. Scalars; scipy quantiles."""
    boxes = [((r - 1) * ms / stats.chi2.ppf(1 - RUN_DF_BOUND, r - 1),
              (r - 1) * ms / stats.chi2.ppf(RUN_DF_BOUND, r - 1)) for ms, _, r in sources]
    best = math.inf
    for corner in itertools.product(*boxes):
        num, den = item_part, item_part**2 / (n - 1)
        for e_ms, (_, ms_res, r) in zip(corner, sources, strict=True):
            if e_ms > ms_res:
                num += (e_ms - ms_res) / (n * r)
                den += (e_ms / (n * r)) ** 2 / (r - 1) + (ms_res / (n * r)) ** 2 / ((n - 1) * (r - 1))
        best = min(best, num**2 / den)
    return min(max(best, min(r - 1.0 for _, _, r in sources)), n - 1.0)


def without_run_shifts(y: np.ndarray) -> np.ndarray:
    """The scores with each run's mean moved to the model's grand mean: MS_run = 0, the runs add no variance."""
    return y - y.mean(axis=0, keepdims=True) + y.mean(axis=(0, 1), keepdims=True)


# ---- the run test's df: where the cap binds, it is the paired t test of the run means ----------------------


@pytest.mark.parametrize(("n", "r"), [(6, 10), (8, 8)])
def test_with_no_run_variance_and_many_runs_the_run_test_is_the_paired_t_test(n: int, r: int) -> None:
    """With no run-to-run shifts (each run's mean equal, MS_run = 0) the gap's variance is s2_D/n and the run test
    is the paired t test of the run-averaged scores on n - 1 df (scipy's ttest_rel), also with more runs than items
    (where the floor R - 1 exceeds n - 1 and the cap decides). Sized for the cap at n instead of n - 1 (the
    p-value moves by more than 1% at 6 items)."""
    rng = np.random.default_rng(n * r)
    y = np.array([0.4, 0.0]) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.5, (n, 1, 2)) + rng.normal(0, 0.7, (n, r, 2))
    y = without_run_shifts(y)
    ya, yb = y[:, :, 0], y[:, :, 1]
    want = stats.ttest_rel(ya.mean(1), yb.mean(1))
    for pairing in ("independent", "matched"):
        c = lp.compare(ya, yb, run_pairing=pairing)
        assert c.run_df == n - 1
        assert c.se_runs == pytest.approx(np.std(ya.mean(1) - yb.mean(1), ddof=1) / math.sqrt(n), rel=1e-9)
        assert c.pvalue == pytest.approx(want.pvalue, rel=1e-7)
    row = lp.run_variance(y, models=["a", "b"]).pairs[0]
    half = stats.t.isf(0.025, n - 1) * np.std(ya.mean(1) - yb.mean(1), ddof=1) / math.sqrt(n)
    gap = float(np.mean(ya - yb))
    assert (row["df"], row["ci_low"], row["ci_high"]) == pytest.approx((n - 1, gap - half, gap + half), rel=1e-9)


def independent_pair(ya: np.ndarray, yb: np.ndarray, tables: tuple[dict, dict] | None = None) -> dict[str, float]:
    """Gap, variance s2_D/n + sum_m max(0, MS_run,m - MS_res,m)/(n R_m) and run-test df of two independently run
    models, from their ANOVA tables."""
    n = ya.shape[0]
    d = ya.mean(1) - yb.mean(1)
    s2_d = float(d.var(ddof=1))
    var, sources = s2_d / n, []
    for y, t in zip((ya, yb), tables or (anova(ya), anova(yb)), strict=True):
        r = y.shape[1]
        var += max(t["ms_run"] - t["ms_res"], 0.0) / (n * r)
        sources.append((t["ms_run"], t["ms_res"], float(r)))
    return {"delta": float(d.mean()), "var": var, "df": run_test_df(s2_d / n, n, sources), "s2_d": s2_d}


# ---- noise: the pooled run-to-run SD with unequal runs -----------------------------------------------------


def test_noise_pools_the_run_mean_squares_by_their_degrees_of_freedom() -> None:
    """Models with 2, 6 and 3 runs: the noise is sqrt(sum_m (R_m - 1) MS_run,m / sum_m (R_m - 1) / n) (MS_run from
    anova_lm), its interval chi-square on sum_m (R_m - 1) = 8 df at 97.5% (scipy), and the signal's the Bonferroni
    bounds of the three pairs' run-test intervals at 1 - 0.025/3 (written out). Sized for: the unweighted mean of
    the MS_run (the weights differ 5:1 here), the chi-square on sum R_m df, the signal interval without
    Bonferroni or at the full level."""
    rng = np.random.default_rng(17)
    n, runs = 120, (2, 6, 3)
    item = rng.normal(0, 1, (n, 1))
    blocks = {name: shift + item + rng.normal(0, s, (1, r)) + rng.normal(0, 0.5, (n, r))
              for name, shift, r, s in zip("abc", (0.0, 0.15, 0.6), runs, (0.3, 0.02, 0.05), strict=True)}
    rep = lp.noise(blocks)
    tables = {k: anova(blocks[k]) for k in "abc"}
    df = sum(r - 1 for r in runs)
    pooled = sum((r - 1) * tables[k]["ms_run"] for r, k in zip(runs, "abc", strict=True)) / df / n
    unweighted = np.mean([t["ms_run"] for t in tables.values()]) / n
    assert abs(unweighted / pooled - 1) > 0.2
    assert rep.noise == pytest.approx(math.sqrt(pooled), rel=1e-10)
    noise_hi = math.sqrt(df * pooled / stats.chi2.ppf(0.0125, df))
    noise_lo = math.sqrt(df * pooled / stats.chi2.ppf(1 - 0.0125, df))
    near, far = [], []
    for a, b in itertools.combinations("abc", 2):
        h = independent_pair(blocks[a], blocks[b], (tables[a], tables[b]))
        half = stats.t.isf(0.025 / 2 / 3, h["df"]) * math.sqrt(h["var"])
        low, high = h["delta"] - half, h["delta"] + half
        near.append(low if low > 0 else (-high if high < 0 else 0.0))
        far.append(max(abs(low), abs(high)))
    assert max(near) > 0
    assert rep.snr_ci == pytest.approx((max(near) / noise_hi, max(far) / noise_lo), rel=1e-9)


# ---- templates: the simultaneous critical value, against the exact bootstrap distribution ------------------


def test_template_critical_value_is_the_exact_bootstrap_quantile_of_the_max_t() -> None:
    """With 6 items the items bootstrap has 462 distinct resamples (multisets, multinomial weights): the exact
    distribution of max over (template, pair) of |gap* - gap| / se, se = sd(ddof 1)/sqrt(n) of each paired
    difference, is enumerated here (scipy's multinomial), and the reported critical value (40,000 resamples) lies
    between its 94% and 96% points (the MC error of the 95% point is about 0.1% in probability). Sized for the
    standard errors with ddof 0 (the critical value sqrt(6/5) = 1.095 times larger) and a one-sided deviation."""
    rng = np.random.default_rng(8)
    n, t, m = 6, 3, 3
    y = np.array([0.0, 0.2, 0.5]) + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.5, (n, t, m))
    board = lp.RunScores.from_array(y, models=list("abc"), runs_by="template")
    crit = lp.noise(board, n_resamples=40_000, rng=3).templates["critical_value"]
    iu = np.triu_indices(m, 1)
    diffs = y[:, :, iu[0]] - y[:, :, iu[1]]  # items x templates x pairs
    gaps, se = diffs.mean(0), diffs.std(0, ddof=1) / math.sqrt(n)
    counts = np.array([c for c in itertools.product(range(n + 1), repeat=n) if sum(c) == n])
    assert len(counts) == math.comb(2 * n - 1, n)
    prob = stats.multinomial.pmf(counts, n, np.full(n, 1 / n))
    star = np.einsum("ki,itp->ktp", counts / n, diffs)
    dev = np.max(np.abs(star - gaps) / se, axis=(1, 2))
    order = np.argsort(dev)
    cdf = np.cumsum(prob[order])
    q94, q95, q96 = (dev[order][np.searchsorted(cdf, p)] for p in (0.94, 0.95, 0.96))
    assert q96 < math.sqrt(n / (n - 1)) * q94  # the mutant's value lies beyond the band
    assert q94 <= crit <= q96, (q94, q95, q96, crit)


# ---- plans: runs needed at the pilot's items agrees with the plan's own table ------------------------------


def test_runs_needed_is_finite_when_the_pilots_own_items_and_runs_suffice() -> None:
    """A pilot of 30 items x 3 runs with little residual and run noise, and a gap inside the band (t_{29,0.975} +
    z_{0.8})^2 s2_item/n < delta^2 <= (t_{29,0.975} + t_{29,0.8})^2 s2_item/n (s2_item from the ANOVA tables, the
    quantiles from scipy). The plan says the pilot's 30 items reach the power at its 3 runs; so the runs needed at
    those 30 items are at most 3 (the power grows with the runs: the allocation table's items fall with R).
    Before the fix the guard used the t-based K_{n-1} and gave up at once (inf runs, "more items are needed")
    beside "30 items at these runs"."""
    rng = np.random.default_rng(5)
    n, r = 30, 3
    item = rng.normal(0, 1, (n, 1))
    ya = item + rng.normal(0, 0.7, (n, 1)) + rng.normal(0, 0.05, (n, r))
    yb = item + rng.normal(0, 0.05, (n, r))
    ta, tb = anova(ya), anova(yb)
    s2_item = float(np.var(ya.mean(1) - yb.mean(1), ddof=1) - ta["ms_res"] / r - tb["ms_res"] / r)
    t_a, t_b, z_b = stats.t.isf(0.025, n - 1), stats.t.ppf(0.8, n - 1), stats.norm.ppf(0.8)
    low, high = (t_a + z_b) ** 2 * s2_item / n, (t_a + t_b) ** 2 * s2_item / n
    gap = math.sqrt(low + 0.9 * (high - low))
    plan = lp.plan_runs({"a": ya, "b": yb}, gap, pair=("a", "b"), max_runs=12)
    assert plan.var_item == pytest.approx(s2_item, rel=1e-9)
    assert plan.items_needed <= n  # 30 items at the pilot's 3 runs reach the power ...
    assert plan.runs_needed <= r  # ... so 30 items need at most 3 runs
