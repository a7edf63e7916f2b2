"""The kernel is the only way in: no module outside ``llm_power/_kernel`` computes a normal or t
quantile, forms a sandwich or codes cluster labels itself; and the kernel's pieces against
independent references (scipy's quantiles, the matrix form of CR2, brute-force betting capital).
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from llm_power._kernel import quantiles as q
from llm_power._kernel.betting import bets, betting_bound, betting_pvalue
from llm_power._kernel.variance import mean_variance
from llm_power._core.clusters import code_labels
from llm_power._kernel.paired_intervals import mcnemar_interval
from llm_power._core.errors import DataError

SRC = Path(__file__).resolve().parents[2] / "src" / "llm_power"
KERNEL = SRC / "_kernel"
#: the quantile functions only the kernel may call
QUANTILES = {"ndtri", "stdtrit", "ppf", "isf"}


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if KERNEL not in p.parents]


def _calls(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            if name in {"ndtri", "stdtrit"} or (name in {"ppf", "isf"} and owner in {"t", "norm", "stats", "dist"}):
                out.append((node.lineno, f"{owner}.{name}" if owner else name))
            if isinstance(f, ast.Attribute) and name in {"ppf", "isf"} and isinstance(f.value, ast.Attribute) \
                    and f.value.attr in {"t", "norm"}:
                out.append((node.lineno, f"{f.value.attr}.{name}"))
    return out


def test_no_quantile_outside_the_kernel():
    """ndtri, norm.ppf/isf, t.ppf/isf (and scipy's stdtrit) are called in llm_power/_kernel only."""
    hits = []
    for path in _modules():
        for line, what in _calls(ast.parse(path.read_text())):
            hits.append(f"{path.relative_to(SRC)}:{line}: {what}")
    assert hits == []


def test_the_quantile_scan_sees_a_quantile(tmp_path):
    """The scan is not blind: each forbidden spelling in a module is found."""
    code = ("from scipy import special, stats\nz = special.ndtri(0.9)\nt = stats.t.isf(0.05, 3)\n"
            "u = stats.norm.ppf(0.5)\n")
    assert [w for _, w in _calls(ast.parse(code))] == ["special.ndtri", "t.isf", "norm.ppf"]


def _sandwiches(tree: ast.AST) -> list[int]:
    """Lines forming A @ M @ A (a sandwich) or G / (G - 1) (the CR1 factor)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.MatMult) and ast.dump(node.left.left) == ast.dump(node.right):
            out.append(node.lineno)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.BinOp) \
                and isinstance(node.right.op, ast.Sub) and ast.dump(node.left) == ast.dump(node.right.left) \
                and isinstance(node.right.right, ast.Constant) and node.right.right.value in (1, 1.0):
            out.append(node.lineno)
    return out


def test_no_sandwich_outside_the_kernel():
    """Cluster-robust variances (B^-1 M B^-1, the G/(G-1) factor) are formed in llm_power/_kernel only."""
    hits = [f"{p.relative_to(SRC)}:{line}" for p in _modules() for line in _sandwiches(ast.parse(p.read_text()))]
    assert hits == []
    assert sorted(_sandwiches(ast.parse("v = g / (g - 1) * r\nc = h @ m @ h\n"))) == [1, 2]  # the scan sees both


# ---- quantiles against scipy ---------------------------------------------------------------------

@pytest.mark.parametrize("df", [None, 1, 4.5, 30, math.inf])
def test_quantiles_equal_scipy(df):
    tails = np.array([1e-12, 1e-4, 0.025, 0.05, 0.3])
    want = stats.norm.isf(tails) if df in (None, math.inf) else stats.t.isf(tails, df)
    np.testing.assert_allclose(q.upper_quantile(tails, df), want, rtol=1e-12)
    k = q.k_constant(0.05, 0.8, "two-sided", df)
    if df in (None, math.inf):
        assert k == pytest.approx(7.848879734349086, rel=1e-12)  # SPEC section 4: K = 7.84888
    else:
        assert k == pytest.approx((stats.t.isf(0.025, df) + stats.t.ppf(0.8, df)) ** 2, rel=1e-12)
    t = np.array([-3.0, 0.0, 0.7, 8.0])
    ref = stats.norm if df in (None, math.inf) else stats.t(df)
    np.testing.assert_allclose(q.t_pvalue(t, math.inf if df is None else df), 2 * ref.sf(np.abs(t)), rtol=1e-12)
    np.testing.assert_allclose(q.t_pvalue(t, math.inf if df is None else df, "greater"), ref.sf(t), rtol=1e-12)


# ---- the one label coder -------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [None, np.nan, "", "  ", pd.NA])
def test_missing_labels_are_one_error_everywhere(bad):
    """Every entry point that takes clusters rejects a missing label with a DataError (the readers' rule)."""
    import llm_power as lp

    rng = np.random.default_rng(0)
    n = 40
    a, b = (rng.random(n) < 0.6).astype(int), (rng.random(n) < 0.5).astype(int)
    labels = [f"c{k % 5}" for k in range(n)]
    labels[7] = bad
    battles = pd.DataFrame({"model_a": ["x", "y"] * 20, "model_b": ["y", "z"] * 20,
                            "winner": (["model_a", "model_b", "tie", "model_a"] * 10), "prompt": labels})
    calls = [lambda: lp.compare(a, b, cluster=labels), lambda: lp.diagnose(np.c_[a, b], cluster=labels),
             lambda: lp.gate(a, b, cluster=labels), lambda: lp.win_rate(a, cluster=labels),
             lambda: lp.compare_win_rates(a, b, cluster=labels),
             lambda: lp.pass_at_k_ci(np.c_[a, b], 1, cluster=labels),
             lambda: lp.bradley_terry(battles, cluster="prompt"), lambda: lp.arena_diagnose(battles, cluster="prompt"),
             lambda: lp.design_effects(a - b, labels), lambda: lp.paired_bootstrap(a, b, cluster=labels)]
    for call in calls:
        with pytest.raises(DataError, match="no cluster label"):
            call()


def test_code_labels_keeps_integer_identity():
    codes, g = code_labels(np.array([3, 1, 3, 2]), 4)
    assert g == 3 and codes.tolist() == [2, 0, 2, 1]
    codes, g = code_labels(["1", 1, "1"], 3)  # text and integer labels are different clusters
    assert g == 2


# ---- CR2 against its matrix definition -------------------------------------------------------------

def test_cr2_equals_the_bell_mccaffrey_matrix_form():
    """V = (X'X)^-1 sum_g X_g' (I - H_gg)^-1/2 e_g e_g' (I - H_gg)^-1/2 X_g (X'X)^-1 for an intercept,
    computed with dense matrices (Bell & McCaffrey 2002), equals the kernel's closed form."""
    rng = np.random.default_rng(5)
    sizes = [3, 7, 1, 12, 5, 9]
    codes = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(size=codes.size) + rng.normal(size=len(sizes))[codes]
    n = y.size
    e = y - y.mean()
    meat = 0.0
    for g in range(len(sizes)):
        idx = codes == g
        h = np.full((idx.sum(), idx.sum()), 1.0 / n)
        vals, vecs = np.linalg.eigh(np.eye(idx.sum()) - h)
        adj = vecs @ np.diag(vals ** -0.5) @ vecs.T
        u = np.ones(idx.sum()) @ adj @ e[idx]
        meat += u * u
    want = meat / n**2
    got = mean_variance(y, codes, len(sizes), kind="cr2")
    assert float(got.variance[0]) == pytest.approx(want, rel=1e-12)
    assert 1.0 <= float(got.df[0]) <= len(sizes) - 1
    cr1 = mean_variance(y, codes, len(sizes), kind="cr1")
    r = np.bincount(codes, weights=e)
    assert float(cr1.variance[0]) == pytest.approx(len(sizes) / (len(sizes) - 1) * np.sum(r**2) / n**2, rel=1e-12)
    assert float(cr1.df[0]) == len(sizes) - 1


# ---- the betting sequence against brute force -------------------------------------------------------

def test_betting_capital_and_bound_equal_brute_force():
    """The capital, its p-value and the lower bound, recomputed with plain loops over the values."""
    rng = np.random.default_rng(8)
    y = np.clip(rng.beta(2, 3, 300), 0, 1)
    lam = bets(y, 0.05, 300)
    mu, sig2 = 0.5, 0.25
    for i, v in enumerate(y):  # the predictable bet uses only the values before it
        assert lam[i] == pytest.approx(min(0.5, math.sqrt(2 * math.log(20) / (sig2 * 300))), rel=1e-12)
        sig2 = (sig2 * (i + 1) + (v - mu) ** 2) / (i + 2)
        mu = (0.5 + y[: i + 1].sum()) / (i + 2)
    for m0 in (0.3, 0.38, 0.45):
        cap, best = 1.0, 1.0
        for v, bet in zip(y, lam, strict=True):
            cap *= 1 + bet * (v - m0)
            best = max(best, cap)
        assert betting_pvalue(y, lam, m0, "greater") == pytest.approx(min(1.0, 1 / cap), rel=1e-9)
        assert betting_pvalue(y, lam, m0, "greater", running=True) == pytest.approx(min(1.0, 1 / best), rel=1e-9)
    low = betting_bound(y, lam, 0.05, "lower")
    assert betting_pvalue(y, lam, low - 1e-7, "greater") <= 0.05 < betting_pvalue(y, lam, low + 1e-7, "greater")
    assert low < y.mean() < betting_bound(y, lam, 0.05, "upper")


def test_betting_sequence_is_valid_at_every_look():
    """2,000 streams of 500 Bernoulli(0.3) values: the lower 95% sequence stays below the mean at every
    one of the 500 looks in >= 95% of streams (Monte-Carlo SE 0.005); a fixed-n bound checked at every
    look does not."""
    rng = np.random.default_rng(9)
    x = (rng.random((2000, 500)) < 0.3).astype(float)
    crossed = 0
    for row in x:
        lam = bets(row, 0.05, 500)
        crossed += betting_pvalue(row, lam, 0.3, "greater", running=True) <= 0.05  # sup over all 500 looks
    assert crossed / 2000 <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 2000)
    looks = np.arange(1, 501)
    z = (np.cumsum(x, axis=1) / looks - 0.3) / np.sqrt(0.21 / looks)
    assert np.mean(np.any(z > 1.645, axis=1)) > 0.2  # the fixed-n test looked at 500 times


# ---- the interval that inverts McNemar's test -------------------------------------------------------

def _melded_monte_carlo(b, c, n, level, rng, draws=2_000_000):
    """Fay & Lumbard's melded interval by Monte Carlo (their nmc path): quantiles of T (2B - 1) with T
    and B drawn from the exact confidence distributions of the discordance and of pi."""
    m = b + c
    tail = (1 - level) / 2
    t_low = rng.beta(m, n - m + 1, draws) if m else np.zeros(draws)
    t_high = rng.beta(m + 1, n - m, draws) if m < n else np.ones(draws)
    b_low = rng.beta(b, m - b + 1, draws) if b else np.zeros(draws)
    b_high = rng.beta(b + 1, m - b, draws) if b < m else np.ones(draws)
    lo = min(np.quantile(t_low * (2 * b_low - 1), tail), np.quantile(t_high * (2 * b_low - 1), tail))
    hi = max(np.quantile(t_low * (2 * b_high - 1), 1 - tail), np.quantile(t_high * (2 * b_high - 1), 1 - tail))
    return lo, hi


@pytest.mark.parametrize(("b", "c", "n"), [(0, 5, 10), (9, 1, 200), (3, 7, 40), (12, 11, 100), (2, 0, 30)])
def test_melded_interval_equals_monte_carlo_melding(b, c, n):
    got = mcnemar_interval(b, c, n, variant="exact", level=0.95)
    want = _melded_monte_carlo(b, c, n, 0.95, np.random.default_rng(b * 100 + c))
    assert got == pytest.approx(want, abs=2e-3)


def test_melded_interval_covers_by_exact_enumeration():
    """n = 26 (Fay & Lumbard's figure): over a 51 x 51 grid of (discordance, share won by A), the
    probability that the 95% interval misses delta on either side, summed exactly over every table,
    is at most 2.5% (+ numerical integration error)."""
    n = 26
    tables = [(m, x) for m in range(n + 1) for x in range(m + 1)]
    lo = np.array([mcnemar_interval(x, m - x, n, variant="exact", level=0.95)[0] for m, x in tables])
    hi = np.array([mcnemar_interval(x, m - x, n, variant="exact", level=0.95)[1] for m, x in tables])
    ms = np.array([m for m, _ in tables])
    xs = np.array([x for _, x in tables])
    worst_low = worst_high = 0.0
    for theta in np.linspace(0, 1, 51):
        pm = stats.binom.pmf(ms, n, theta)
        for beta in np.linspace(0, 1, 51):
            prob = pm * stats.binom.pmf(xs, ms, beta)
            delta = theta * (2 * beta - 1)
            worst_low = max(worst_low, float(prob[lo > delta + 1e-12].sum()))
            worst_high = max(worst_high, float(prob[hi < delta - 1e-12].sum()))
    assert worst_low <= 0.0255 and worst_high <= 0.0255
    assert worst_low > 0.015  # not a trivially wide interval


@pytest.mark.parametrize("variant", ["exact", "mid_p", "asymptotic"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [10, 40, pytest.param(120, marks=pytest.mark.slow), "120, a random 400"])
def test_interval_excludes_zero_exactly_when_mcnemar_rejects(variant, alternative, n):
    """Every admissible table (b + c <= n): the interval at 95% excludes 0 iff the test's p <= 0.05.
    All 7,381 tables at n = 120 run in the slow tier (14 CPU-s over the nine cases); the fast tier
    checks 400 of them drawn at random (a new draw each run, shown on failure), with the edges.
    """
    from llm_power._kernel.pvalues import mcnemar_pvalue

    sample = isinstance(n, str)
    n = 120 if sample else n
    b, c = (v.ravel() for v in np.meshgrid(np.arange(n + 1), np.arange(n + 1)))
    keep = b + c <= n
    b, c = b[keep], c[keep]
    if sample:
        seed = int(np.random.SeedSequence().entropy % 2**32)
        pick = np.random.default_rng(seed).choice(b.size, 400, replace=False)
        edges = np.flatnonzero((b == 0) | (c == 0) | (b + c == n) | (b == c))
        b, c = b[np.union1d(pick, edges)], c[np.union1d(pick, edges)]
    lo, hi = mcnemar_interval(b, c, n, variant=variant, level=0.95, alternative=alternative)
    p = mcnemar_pvalue(b, c, method=variant, alternative=alternative)[1]
    excludes = (lo > 0) | (hi < 0)
    assert np.array_equal(excludes, p <= 0.05), (np.c_[b, c, lo, hi, p][excludes != (p <= 0.05)][:5],
                                                 f"seed {seed}" if sample else "")
    assert np.all(hi - lo > 0)  # never a zero-width interval
