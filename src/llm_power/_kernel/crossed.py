r"""Items crossed with runs: the two-way random-effects decomposition, written once.

A *run* (a seed, a prompt template, a serving engine, a judge rerun) shifts every item of a model
at once. For one model scored on ``n`` items in ``R`` runs (every run on every item),

    y_ir = mu + a_i + b_r + e_ir,   Var a = s2_item, Var b = s2_run, Var e = s2_res,

the mean squares of the two-way layout without replication are

    MS_item = R sum_i (ybar_i. - ybar)^2 / (n - 1),       E = s2_res + R s2_item
    MS_run  = n sum_r (ybar_.r - ybar)^2 / (R - 1),       E = s2_res + n s2_run
    MS_res  = sum_ir (y_ir - ybar_i. - ybar_.r + ybar)^2 / ((n - 1)(R - 1)),   E = s2_res

(method of moments; for a balanced design these are also the REML estimates when they are
positive). The variance of a model's score over items *and* runs is s2_item/n + s2_run/R +
s2_res/(nR), estimated as MS_item/(nR) + max(0, MS_run - MS_res)/(nR): the IID variance of the
run-averaged score plus the run part, so never below the IID one.

A pair of models run independently (seeds, engines: run r of A has nothing to do with run r of
B) has

    Var(dhat) = s2_D/n + sum_m s2_run,m / R_m,

s2_D the sample variance over items of the difference of the run-averaged scores (it holds the
item and residual parts at the current runs), with Satterthwaite's degrees of freedom for the
combination of mean squares. Intervals for the components: chi-square for s2_res; the modified
large-sample (MLS) interval of Ting, Burdick, Graybill, Jeyaratnam and Lu (1990; Burdick and
Graybill 1992, section 3.1) for s2_item = (MS_item - MS_res)/R and s2_run = (MS_run - MS_res)/n.

The run test's degrees of freedom (:func:`run_test_df`)
-------------------------------------------------------
Satterthwaite's df *estimated* from the observed mean squares is anti-conservative when a term has
few df: with 2 or 3 runs MS_run has 1 or 2 df, a small draw of it both shrinks the variance and
sends the df to n - 1, and equal models were rejected up to 12% of the time at alpha = 0.05
(matched templates, R = 2; 7.5% at R = 3; also for independent runs when one model's run
component dominates). The df of the test are therefore the *smallest* Satterthwaite df over a
confidence box for the expected run mean squares -- each E[MS_run] between its one-sided (1 - g)
chi-square bounds (R - 1) MS_run / chi2_{R-1; 1-g} and (R - 1) MS_run / chi2_{R-1; g}, g =
:data:`RUN_DF_BOUND` -- the least favourable run components the data allow, in the spirit of
Berger and Boos (1994), floored at the smallest R - 1 (the Hsu-Scheffe bound: t on the fewest
component df is conservative for a positive combination of mean squares; Mickey and Brown 1966)
and capped at n - 1. The df is a function of the two corners of each bound (Satterthwaite's df
of a sum is unimodal in each term, so its minimum over a box is at a corner). g = 0.2 was chosen
by measurement (``scripts/run_test_size.py``, docs/runs.md): over 336 designs (R = 2, 3, 5, 10;
matched and independent, both models' runs or one model's moving; graded and 0/1; n = 50 and 300;
10,000 replications each) the largest rejection rate of equal models was 5.45% (MC SE 0.22%);
with 2 runs the test is conservative (0.2-4.5%), as any test must be that holds its size when one
df is all the run component has. Normal theory: 0/1 run means that swing by +-30 points (skewed)
reached 6.7% at R = 3 (7302bb3: 8.7%).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .quantiles import chi2_upper, f_upper, k_constant, tail_level, upper_quantile

__all__ = [
    "CrossedMeanSquares",
    "allocation_table",
    "chi2_variance_interval",
    "consistent_runs_needed",
    "RUN_PAIRINGS",
    "crossed_mean_squares",
    "gap_run_variance",
    "matched_pair_run_variance",
    "matched_run_variance",
    "mls_difference_interval",
    "mls_sum_interval",
    "model_run_variance",
    "pair_run_variance",
    "planned_items",
    "planned_power",
    "RUN_DF_BOUND",
    "run_ms_bounds",
    "run_test_df",
    "runs_needed",
    "satterthwaite_df",
]

#: one-sided level g of the confidence bounds of each expected run mean square over which the run test's
#: degrees of freedom are minimised (:func:`run_test_df`; chosen by measurement, docs/runs.md)
RUN_DF_BOUND = 0.2
#: fewest runs per model the run regime's tests accept (one run cannot estimate run-to-run variance)
MIN_RUNS = 2
#: scores per chunk of the matched pairs' per-run differences (pairs x items x runs held at once)
_MATCHED_CHUNK = 1 << 22
#: equal-probability points per run mean square in the planned power (:func:`planned_power`)
PLAN_NODES = 32


@dataclass(frozen=True)
class CrossedMeanSquares:
    """Mean squares of each model's items x runs layout (arrays of shape (M,), M models)."""

    n: int  # items
    runs: np.ndarray  # R per model
    mean: np.ndarray  # grand mean
    item_means: np.ndarray  # (n, M): each item's mean over the model's runs
    run_means: list[np.ndarray]  # per model: its R run means
    ms_item: np.ndarray
    ms_run: np.ndarray
    ms_res: np.ndarray

    @property
    def df_item(self) -> np.ndarray:
        return np.full(self.runs.shape, self.n - 1.0)

    @property
    def df_run(self) -> np.ndarray:
        return self.runs - 1.0

    @property
    def df_res(self) -> np.ndarray:
        return (self.n - 1.0) * (self.runs - 1.0)

    @property
    def var_item(self) -> np.ndarray:
        """Item component (MS_item - MS_res)/R, truncated at 0."""
        return np.asarray(np.maximum((self.ms_item - self.ms_res) / self.runs, 0.0))

    @property
    def var_run(self) -> np.ndarray:
        """Run component (MS_run - MS_res)/n, truncated at 0 (NaN with one run)."""
        return np.asarray(np.where(self.runs > 1, np.maximum((self.ms_run - self.ms_res) / self.n, 0.0), np.nan))

    @property
    def var_res(self) -> np.ndarray:
        """Item x run (residual) component MS_res (NaN with one run)."""
        return np.asarray(np.where(self.runs > 1, self.ms_res, np.nan))

    @property
    def var_mean(self) -> np.ndarray:
        """Variance of the model's score over items and runs: MS_item/(nR) + var_run/R."""
        return np.asarray(self.ms_item / (self.n * self.runs) + self.var_run / self.runs)

    @property
    def var_mean_items(self) -> np.ndarray:
        """The IID (items only) variance of the run-averaged score: MS_item/(nR)."""
        return np.asarray(self.ms_item / (self.n * self.runs))


def crossed_mean_squares(blocks: list[np.ndarray]) -> CrossedMeanSquares:
    """The mean squares of each model from its (n, R_m) score block (every run on every item)."""
    n = int(blocks[0].shape[0])
    m = len(blocks)
    runs = np.array([blk.shape[1] for blk in blocks], dtype=float)
    mean, ms_item, ms_run, ms_res = (np.empty(m) for _ in range(4))
    item_means = np.empty((n, m))
    run_means = []
    for k, blk in enumerate(blocks):
        y = np.asarray(blk, dtype=float)
        r = y.shape[1]
        im, rm = y.mean(axis=1), y.mean(axis=0)
        g = float(im.mean())
        item_means[:, k], mean[k] = im, g
        run_means.append(rm)
        ms_item[k] = r * float(np.sum((im - g) ** 2)) / (n - 1) if n > 1 else np.nan
        if r > 1:
            ms_run[k] = n * float(np.sum((rm - g) ** 2)) / (r - 1)
            resid = y - im[:, None] - rm[None, :] + g
            ms_res[k] = float(np.sum(resid * resid)) / ((n - 1) * (r - 1)) if n > 1 else np.nan
        else:
            ms_run[k] = ms_res[k] = np.nan
    return CrossedMeanSquares(n=n, runs=runs, mean=mean, item_means=item_means, run_means=run_means,
                              ms_item=ms_item, ms_run=ms_run, ms_res=ms_res)


def chi2_variance_interval(ms: Any, df: Any, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact normal-theory interval of a variance from its mean square on ``df`` degrees of freedom."""
    tail = (1.0 - level) / 2.0
    ms, df = np.asarray(ms, dtype=float), np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return df * ms / np.asarray(chi2_upper(tail, df)), df * ms / np.asarray(chi2_upper(1.0 - tail, df))


def mls_difference_interval(c1: Any, s1: Any, n1: Any, c2: Any, s2: Any, n2: Any,  # noqa: PLR0913, PLR0917
                            level: float) -> tuple[np.ndarray, np.ndarray]:
    """The MLS interval of gamma = c1 S1^2 - c2 S2^2 (c1, c2 > 0; S1^2, S2^2 independent mean squares
    on n1, n2 degrees of freedom), two-sided at ``level``, bounds truncated at 0 (Burdick and Graybill
    1992, eqs. 3.1.4-3.1.9; Ting et al. 1990):

        L = g - sqrt(G1^2 c1^2 S1^4 + H2^2 c2^2 S2^4 + G12 c1 c2 S1^2 S2^2)
        U = g + sqrt(H1^2 c1^2 S1^4 + G2^2 c2^2 S2^4 + H12 c1 c2 S1^2 S2^2)

    with G_i = 1 - 1/F_{a: n_i, inf}, H_i = 1/F_{1-a: n_i, inf} - 1,
    G12 = ((F_{a: n1, n2} - 1)^2 - G1^2 F_{a: n1, n2}^2 - H2^2) / F_{a: n1, n2},
    H12 = ((1 - F_{1-a: n1, n2})^2 - H1^2 F_{1-a: n1, n2}^2 - G2^2) / F_{1-a: n1, n2},
    F_{a: u, v} the upper-a point of F(u, v) and a = (1 - level)/2.
    """
    a = (1.0 - level) / 2.0
    c1, s1, n1, c2, s2, n2 = (np.asarray(v, dtype=float) for v in (c1, s1, n1, c2, s2, n2))
    inf = np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        f1a, f1b = np.asarray(f_upper(a, n1, inf)), np.asarray(f_upper(1.0 - a, n1, inf))
        f2a, f2b = np.asarray(f_upper(a, n2, inf)), np.asarray(f_upper(1.0 - a, n2, inf))
        f12a, f12b = np.asarray(f_upper(a, n1, n2)), np.asarray(f_upper(1.0 - a, n1, n2))
        g1, h1 = 1.0 - 1.0 / f1a, 1.0 / f1b - 1.0
        g2, h2 = 1.0 - 1.0 / f2a, 1.0 / f2b - 1.0
        g12 = ((f12a - 1.0) ** 2 - g1 * g1 * f12a * f12a - h2 * h2) / f12a
        h12 = ((1.0 - f12b) ** 2 - h1 * h1 * f12b * f12b - g2 * g2) / f12b
        t1, t2 = c1 * s1, c2 * s2
        est = t1 - t2
        v_low = g1 * g1 * t1 * t1 + h2 * h2 * t2 * t2 + g12 * t1 * t2
        v_high = h1 * h1 * t1 * t1 + g2 * g2 * t2 * t2 + h12 * t1 * t2
        low = np.maximum(est - np.sqrt(np.maximum(v_low, 0.0)), 0.0)
        high = np.maximum(est + np.sqrt(np.maximum(v_high, 0.0)), 0.0)
    return low, high


def mls_sum_interval(terms: list[tuple[Any, Any, Any]], level: float) -> tuple[np.ndarray, np.ndarray]:
    """Graybill and Wang's (1980) interval of gamma = sum_q c_q S_q^2 (c_q >= 0, independent mean
    squares S_q^2 on n_q df; ``terms`` = [(c_q, S_q^2, n_q)]), two-sided at ``level``:
    L = g - sqrt(sum G_q^2 c_q^2 S_q^4), U = g + sqrt(sum H_q^2 c_q^2 S_q^4), with the G_q and H_q of
    :func:`mls_difference_interval`.
    """
    a = (1.0 - level) / 2.0
    est: Any = 0.0
    low: Any = 0.0
    high: Any = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        for c, s, df in terms:
            t = np.asarray(c, dtype=float) * np.asarray(s, dtype=float)
            g = 1.0 - 1.0 / np.asarray(f_upper(a, df, np.inf))
            h = 1.0 / np.asarray(f_upper(1.0 - a, df, np.inf)) - 1.0
            est = est + t
            low = low + g * g * t * t
            high = high + h * h * t * t
    return np.asarray(est - np.sqrt(low)), np.asarray(est + np.sqrt(high))


def satterthwaite_df(terms: list[tuple[Any, Any]]) -> np.ndarray:
    """Satterthwaite's degrees of freedom of sum_k t_k, t_k a mean-square term on df_k:
    (sum t_k)^2 / sum t_k^2/df_k (terms with df 0 or a zero value are left out).
    """
    num: Any = 0.0
    den: Any = 0.0
    for value, df in terms:
        v = np.asarray(value, dtype=float)
        d = np.asarray(df, dtype=float)
        num = num + v
        with np.errstate(invalid="ignore", divide="ignore"):
            den = den + np.where((d > 0) & (v != 0), v * v / np.where(d > 0, d, 1.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(den > 0, np.asarray(num) ** 2 / den, np.inf))


def run_ms_bounds(ms_run: Any, runs: Any, bound: float = RUN_DF_BOUND) -> tuple[np.ndarray, np.ndarray]:
    """One-sided (1 - ``bound``) confidence bounds of E[MS_run] from a run mean square on R - 1 df (normal
    theory: (R - 1) MS_run / E[MS_run] is chi-square on R - 1 df): (R - 1) MS_run / chi2_{R-1; 1-bound}
    (lower) and (R - 1) MS_run / chi2_{R-1; bound} (upper), chi2_{v; p} the p-quantile. NaN with one run.
    """
    ms_run, df = np.asarray(ms_run, dtype=float), np.asarray(runs, dtype=float) - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = df > 0
        safe = np.where(ok, df, 1.0)
        low = np.where(ok, df * ms_run / np.asarray(chi2_upper(bound, safe)), np.nan)
        high = np.where(ok, df * ms_run / np.asarray(chi2_upper(1.0 - bound, safe)), np.nan)
    return low, high


def _run_terms(ms_run: Any, ms_res: Any, n: Any, runs: Any) -> list[tuple[Any, Any]]:
    """The Satterthwaite terms of a run component (MS_run - MS_res)/(nR): MS_run/(nR) on R - 1 df minus
    MS_res/(nR) on (n - 1)(R - 1), where the component is positive (MS_run > MS_res); none elsewhere.
    """
    ms_run, ms_res, r = (np.asarray(v, dtype=float) for v in (ms_run, ms_res, runs))
    on = ms_run > ms_res  # NaN (one run) compares False
    with np.errstate(invalid="ignore", divide="ignore"):
        return [(np.where(on, ms_run / (n * r), 0.0), r - 1.0),
                (np.where(on, -ms_res / (n * r), 0.0), (n - 1.0) * (r - 1.0))]


def run_test_df(item_part: Any, n: Any, sources: list[tuple[Any, Any, Any]], bound: float = RUN_DF_BOUND) -> np.ndarray:
    """Degrees of freedom of the run test of a variance ``item_part`` (on n - 1 df) plus run components
    (MS_run - MS_res)/(nR), one per source (``sources`` = [(MS_run, MS_res, R)]: each model's layout, or
    the matched difference's): the smallest Satterthwaite df over the corners of the box in which each
    source's E[MS_run] lies between its (1 - ``bound``) bounds (:func:`run_ms_bounds`), a run term
    entering where its component is positive; floored at the smallest R - 1 of the sources with
    runs and capped at n - 1. See the module docstring for why (the estimated df is anti-conservative
    with few runs) and how ``bound`` was chosen.
    """
    n = np.asarray(n, dtype=float)
    item: list[tuple[Any, Any]] = [(np.asarray(item_part, dtype=float), n - 1.0)]
    corners = [run_ms_bounds(ms_run, r, bound) for ms_run, _, r in sources]
    df: Any = np.inf
    for pick in itertools.product((0, 1), repeat=len(sources)):
        terms = list(item)
        for (_, ms_res, r), side, values in zip(sources, pick, corners, strict=True):
            terms += _run_terms(values[side], ms_res, n, r)
        df = np.minimum(df, satterthwaite_df(terms))
    floor: Any = np.inf
    for _, _, r in sources:
        r = np.asarray(r, dtype=float)
        floor = np.minimum(floor, np.where(r >= MIN_RUNS, r - 1.0, np.inf))
    floor = np.where(np.isfinite(floor), floor, 0.0)
    return np.asarray(np.minimum(np.maximum(df, floor), n - 1.0))


@dataclass(frozen=True)
class PairRunVariance:
    """Per pair (shape (P,)): the variance of the gap over items and runs and its parts."""

    variance: np.ndarray  # s2_D/n + run_part
    item_part: np.ndarray  # s2_D/n: the IID variance of the run-averaged gap
    run_part: np.ndarray  # sum_m s2_run,m / R_m: what more items never remove
    df: np.ndarray  # Satterthwaite
    s2_item: np.ndarray  # item component of D: s2_D - sum_m MS_res,m / R_m (>= 0)
    s2_res: np.ndarray  # sum_m MS_res,m: residual variance of the difference of one run of each
    s2_run: np.ndarray  # sum_m s2_run,m
    # the terms planning works with (runs_needed, allocation): run and residual components of A and B
    # (matched runs: the difference's, and zero)
    run_a: np.ndarray | None = None
    run_b: np.ndarray | None = None
    res_a: np.ndarray | None = None
    res_b: np.ndarray | None = None
    ms_run_matched: np.ndarray | None = None  # matched runs: the difference's run mean square


def matched_pair_run_variance(s2_d: Any, n: int, blocks: list[np.ndarray], i: np.ndarray,
                              j: np.ndarray) -> PairRunVariance:
    """:class:`PairRunVariance` of pairs whose runs are *matched* (the same prompt templates for both
    models: run r of A and run r of B share the template): the two-way decomposition of the per-item,
    per-run difference D_ir = y_A,ir - y_B,ir itself, so a template's effect common to both models
    cancels and any correlation of the two models' template effects is accounted for:

        Var(gap) = s2_D/n + max(0, MS_run,D - MS_res,D)/(nR),

    on the run test's df (:func:`run_test_df`). Every block has the same R, columns in the same run
    order.
    """
    s2_d = np.asarray(s2_d, dtype=float)
    r = float(blocks[int(i[0])].shape[1]) if i.size else 1.0
    ms_run = np.empty(i.size)
    ms_res = np.empty(i.size)
    step = max(1, _MATCHED_CHUNK // max(int(n * r), 1))  # pairs per chunk: a bounded (pairs, n, R) array
    for start in range(0, i.size, step):
        a, b = i[start:start + step], j[start:start + step]
        d = (np.stack([np.asarray(blocks[k], dtype=float) for k in a.tolist()])
             - np.stack([np.asarray(blocks[k], dtype=float) for k in b.tolist()]))  # (pairs, n, R)
        im, rm = d.mean(axis=2), d.mean(axis=1)
        g = im.mean(axis=1)
        ms_run[start:start + step] = n * np.sum((rm - g[:, None]) ** 2, axis=1) / (r - 1.0)
        resid = d - im[:, :, None] - rm[:, None, :] + g[:, None, None]
        ms_res[start:start + step] = np.sum(resid * resid, axis=(1, 2)) / ((n - 1.0) * (r - 1.0))
    return matched_run_variance(s2_d, n, ms_run, ms_res, r)


def matched_run_variance(s2_d: Any, n: Any, ms_run: Any, ms_res: Any, runs: Any) -> PairRunVariance:
    """:class:`PairRunVariance` of matched pairs from the mean squares of their per-run differences
    (:func:`matched_pair_run_variance` computes them from the scores): s2_D/n + max(0, MS_run,D -
    MS_res,D)/(nR) on the run test's df.
    """
    s2_d, ms_run, ms_res = (np.asarray(v, dtype=float) for v in (s2_d, ms_run, ms_res))
    r = np.asarray(runs, dtype=float)
    vr = np.maximum((ms_run - ms_res) / n, 0.0)
    item_part = s2_d / n
    run_part = vr / r
    df = run_test_df(item_part, n, [(ms_run, ms_res, r)])
    zero = np.zeros(np.shape(vr))
    return PairRunVariance(variance=item_part + run_part, item_part=item_part, run_part=run_part,
                           df=df, s2_item=np.maximum(s2_d - ms_res / r, 0.0), s2_res=ms_res,
                           s2_run=vr, run_a=vr, run_b=zero, res_a=ms_res, res_b=zero, ms_run_matched=ms_run)


def pair_run_variance(s2_d: Any, n: int, ms: CrossedMeanSquares, i: np.ndarray, j: np.ndarray) -> PairRunVariance:
    """:class:`PairRunVariance` of the pairs (i, j) (columns of ``ms``) of independently run models;
    ``s2_d`` the sample variance (ddof 1) of the per-item differences of run-averaged scores; df of the
    run test (:func:`run_test_df`, the two models' run layouts as its sources).
    """
    s2_d = np.asarray(s2_d, dtype=float)
    ra, rb = ms.runs[i], ms.runs[j]
    vr_a, vr_b = ms.var_run[i], ms.var_run[j]
    item_part = s2_d / n
    run_part = vr_a / ra + vr_b / rb
    df = run_test_df(item_part, n, [(ms.ms_run[i], ms.ms_res[i], ra), (ms.ms_run[j], ms.ms_res[j], rb)])
    s2_res = ms.ms_res[i] + ms.ms_res[j]
    s2_item = np.maximum(s2_d - ms.ms_res[i] / ra - ms.ms_res[j] / rb, 0.0)
    return PairRunVariance(variance=item_part + run_part, item_part=item_part, run_part=run_part, df=df,
                           s2_item=s2_item, s2_res=s2_res, s2_run=vr_a + vr_b, run_a=vr_a, run_b=vr_b,
                           res_a=ms.ms_res[i], res_b=ms.ms_res[j])


def gap_run_variance(s2_d: Any, n: int, ms: CrossedMeanSquares, i: np.ndarray, j: np.ndarray,
                     blocks: list[np.ndarray] | None = None) -> PairRunVariance:
    """The gap's variance over items and runs: runs matched between the two models (``blocks`` given:
    :func:`matched_pair_run_variance`) or run independently (:func:`pair_run_variance`).
    """
    if blocks is not None:
        return matched_pair_run_variance(s2_d, n, blocks, i, j)
    return pair_run_variance(s2_d, n, ms, i, j)


RUN_PAIRINGS = ("auto", "independent", "matched")


def model_run_variance(ms: CrossedMeanSquares) -> tuple[np.ndarray, np.ndarray]:
    """Per model: the variance of its score over items and runs (:attr:`CrossedMeanSquares.var_mean`) and
    the run test's df (:func:`run_test_df`: MS_item/(nR) on n - 1 and the model's run layout).
    """
    n, r = float(ms.n), ms.runs
    return ms.var_mean, run_test_df(ms.ms_item / (n * r), n, [(ms.ms_run, ms.ms_res, r)])


def planned_power(delta: Any, s2_item: Any, res_item: Any, comps: list[tuple[Any, Any, Any]], n: Any, *,  # noqa: PLR0913
                  alpha: float, alternative: str = "two-sided", nodes: int = PLAN_NODES) -> np.ndarray:
    """Power of the run test of a gap ``delta`` at ``n`` items under normal theory, from the gap's
    components: ``s2_item`` (of one item's difference at infinitely many runs), ``res_item`` (the
    residual part of one item's run-averaged difference, sum_m res_m / R_m) and per run source ``comps`` =
    [(s2_run, res, R)] (each model run independently; or the matched difference, the other source zero).

    The test that will be run estimates the run parts: with MS_run,m = (res_m + n s2_run,m) X_m, X_m ~
    chi2_{R_m - 1}/(R_m - 1) independent of delta-hat ~ N(delta, tau^2), tau^2 = (s2_item + res_item)/n
    + sum_m s2_run,m/R_m, its variance is V = (s2_item + res_item)/n + sum_m max(0, MS_run,m - res_m)/(n
    R_m) (s2_D and MS_res at their expectations: their df, n - 1 and (n - 1)(R - 1), are many) and its df
    those of :func:`run_test_df`. The power P(|delta-hat| > t_df sqrt(V)) (one-sided: the tested tail) is
    averaged over ``nodes`` equal-probability points of each X_m (a midpoint rule in probability: robust
    to the kinks of the truncation and of the df), so the plan counts what the test will do with a run
    component it must estimate -- also one whose true value is 0. Vectorised over ``n`` and the arrays.
    """
    n = np.asarray(n, dtype=float)
    item = (np.asarray(s2_item, dtype=float) + np.asarray(res_item, dtype=float)) / n
    tau2 = item
    u = (np.arange(nodes) + 0.5) / nodes
    used = []
    for run, res, r in comps:
        run, res, r = (np.asarray(v, dtype=float) for v in (run, res, r))
        tau2 = tau2 + run / r
        e = res + n * run
        if np.all(e == 0):
            continue  # a source without variance (the zero source of a matched pair) adds nothing
        used.append((e, res, r))
    pad = (1,) * len(used)

    def spread(v: Any) -> Any:  # an element-wise array with the node axes appended
        return np.reshape(v, np.shape(v) + pad)

    grids: list[tuple[Any, Any, Any]] = []
    for k, (e, res, r) in enumerate(used):  # each source's nodes on its own trailing axis
        nu = np.maximum(r - 1.0, 1.0)
        x = special.chdtri(nu[..., None], 1.0 - u) / nu[..., None]  # (..., nodes)
        base = np.broadcast_shapes(np.shape(e), np.shape(nu))
        ms_run = (e[..., None] * x).reshape((*base, *pad[:k], nodes, *pad[k + 1:]))
        grids.append((ms_run, spread(res), spread(r)))
    n_g, item_g = spread(n), spread(item)
    variance: Any = item_g
    for ms_run, res, r in grids:
        variance = variance + np.maximum(ms_run - res, 0.0) / (n_g * r)
    df = run_test_df(item_g, n_g, grids)
    crit = np.asarray(upper_quantile(tail_level(alpha, alternative), df)) * np.sqrt(variance)
    tau = np.sqrt(spread(tau2))
    delta = spread(np.abs(np.asarray(delta, dtype=float)) if alternative == "two-sided"
                   else np.asarray(delta, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        hit = special.ndtr((delta - crit) / tau)
        if alternative == "two-sided":
            hit = hit + special.ndtr((-delta - crit) / tau)
    axes = tuple(range(-len(used), 0))
    return np.asarray(np.mean(hit, axis=axes) if axes else hit)


def _first_true(test: Any, start: np.ndarray, cap: float) -> np.ndarray:
    """Per element, the smallest integer x >= ``start`` (<= ``cap``) with ``test(index, x)`` true, for a
    test that turns true and stays true as x grows: an exponential search for a true x, then bisection.
    inf where no x up to ``cap`` passes. ``test`` takes the element indices and their candidate x.
    """
    start = np.asarray(start, dtype=float)
    out = np.full(start.shape, np.inf)
    idx = np.flatnonzero(np.isfinite(start) & (start <= cap))
    lo, hi = start[idx] - 1.0, start[idx].copy()  # lo: below every candidate tried and failed
    found = np.zeros(idx.size, dtype=bool)
    active = np.ones(idx.size, dtype=bool)
    while active.any():
        a = np.flatnonzero(active)
        ok = np.asarray(test(idx[a], hi[a]), dtype=bool)
        found[a[ok]] = True
        active[a[ok]] = False
        failed = a[~ok]
        lo[failed] = hi[failed]
        active[failed[hi[failed] >= cap]] = False  # the cap failed too: none
        grow = failed[hi[failed] < cap]
        hi[grow] = np.minimum(np.maximum(2.0 * hi[grow], hi[grow] + 1.0), cap)
    f = np.flatnonzero(found)
    while f.size:
        f = f[hi[f] - lo[f] > 1.0]
        if not f.size:
            break
        mid = np.floor((lo[f] + hi[f]) / 2.0)
        ok = np.asarray(test(idx[f], mid), dtype=bool)
        hi[f[ok]] = mid[ok]
        lo[f[~ok]] = mid[~ok]
    found_idx = np.flatnonzero(found)
    out[idx[found_idx]] = hi[found_idx]
    return out


def runs_needed(delta: Any, n: int, s2_item: Any, s2_res: Any, s2_run_a: Any, s2_run_b: Any,  # noqa: PLR0913, PLR0917
                res_a: Any, res_b: Any, *, alpha: float, power: float, alternative: str = "two-sided",
                max_runs: int = 10_000) -> np.ndarray:
    """The fewest runs per model (at the current ``n`` items) at which the run-regime test of a gap
    ``delta`` has the requested power: the smallest R >= 2 whose :func:`planned_power` reaches ``power``
    (``s2_res`` = res_a + res_b, the residual of one run of each model). inf where no R up to
    ``max_runs`` does -- at once when the item part alone exceeds delta^2 / K (the normal K): then more items
    are needed -- NaN for a zero gap. Never 1: the run tests refuse one run (it cannot estimate the
    run-to-run variance).
    """
    signed = np.asarray(delta, dtype=float)
    delta = np.where((alternative == "greater") & (signed < 0) | (alternative == "less") & (signed > 0), 0.0,
                     np.abs(signed))
    s2_item, s2_res, s2_run_a, s2_run_b, res_a, res_b = (np.broadcast_to(np.asarray(v, dtype=float), delta.shape)
                                                         for v in (s2_item, s2_res, s2_run_a, s2_run_b, res_a, res_b))
    s2_run = s2_run_a + s2_run_b
    k_inf = float(k_constant(alpha, power, alternative))
    with np.errstate(divide="ignore", invalid="ignore"):
        # what the run-dependent part may use (normal K: a bound, as the planned power takes the gap's
        # estimate as normal; a t-based K here gave up on gaps a few runs resolve)
        room = delta * delta / k_inf - s2_item / n
        start = np.where(room > 0, np.maximum(float(MIN_RUNS), np.ceil((s2_res / n + s2_run) / room)), np.inf)

    def meets(p: np.ndarray, r: np.ndarray) -> np.ndarray:
        comps = [(s2_run_a[p], res_a[p], r), (s2_run_b[p], res_b[p], r)]
        got = planned_power(delta[p], s2_item[p], s2_res[p] / r, comps, n, alpha=alpha, alternative=alternative)
        return np.asarray(got >= power)

    out = _first_true(meets, start, float(max_runs))
    out[delta == 0] = np.where(signed[delta == 0] == 0, np.nan, np.inf)  # no gap, or one in the other direction
    return out


def planned_items(delta: Any, s2_item: Any, run_a: Any, run_b: Any, res_a: Any, res_b: Any,  # noqa: PLR0913, PLR0917
                  runs_a: Any, runs_b: Any, *, alpha: float, power: float, alternative: str = "two-sided",
                  max_items: float = 1e12) -> np.ndarray:
    """The fewest items (>= 2) at which the run test of a gap ``delta`` with ``runs_a`` and ``runs_b``
    runs has the requested power (:func:`planned_power`), per element of the (broadcast) arrays; inf
    where no number up to ``max_items`` does (run noise alone exceeds the gap), with fewer than 2 runs
    or a gap of 0 (or one in the untested direction).
    """
    signed = np.asarray(delta, dtype=float)
    gap = np.where((alternative == "greater") & (signed < 0) | (alternative == "less") & (signed > 0), 0.0,
                   np.abs(signed))
    gap, s2_item, run_a, run_b, res_a, res_b, runs_a, runs_b = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(v, dtype=float)) for v in (gap, s2_item, run_a, run_b, res_a, res_b, runs_a,
                                                              runs_b)))
    res_item = res_a / runs_a + res_b / runs_b
    with np.errstate(divide="ignore", invalid="ignore"):
        room = gap * gap / float(k_constant(alpha, power, alternative)) - run_a / runs_a - run_b / runs_b
        start = np.where((room > 0) & (gap > 0) & (np.minimum(runs_a, runs_b) >= MIN_RUNS),
                         np.maximum(2.0, np.ceil((s2_item + res_item) / room)), np.inf)

    def meets(p: np.ndarray, n: np.ndarray) -> np.ndarray:
        comps = [(run_a[p], res_a[p], runs_a[p]), (run_b[p], res_b[p], runs_b[p])]
        return np.asarray(planned_power(gap[p], s2_item[p], res_item[p], comps, n, alpha=alpha, alternative=alternative)
                          >= power)

    return _first_true(meets, start, float(max_items))


def consistent_runs_needed(needed: np.ndarray, q: np.ndarray, runs_a: np.ndarray, runs_b: np.ndarray) -> np.ndarray:
    """``runs_needed`` made to agree with the observed verdict at the current runs: a gap with q_run >= 1
    needs no more runs than it has (at most max(R_A, R_B)); one with q_run < 1 needs more (at least
    min(R_A, R_B) + 1). The plan uses the components, the verdict the observed variance; where
    their estimates straddle the line the verdict's side wins, so the report never says both
    "resolved" and "needs more runs".
    """
    needed = np.asarray(needed, dtype=float)
    q = np.asarray(q, dtype=float)
    from .verdict import big_enough

    return np.where(big_enough(q), np.minimum(needed, np.maximum(runs_a, runs_b)),
                    np.where(np.isfinite(q), np.maximum(needed, np.minimum(runs_a, runs_b) + 1.0), needed))


def allocation_table(delta: float, s2_item: float, s2_res: float, s2_run_a: float, s2_run_b: float,  # noqa: PLR0913, PLR0917
                     res_a: float, res_b: float, *, alpha: float, power: float, cost_item: float, cost_run: float,
                     max_items: int | None, max_runs: int) -> dict[str, np.ndarray]:
    """For each number of runs R = 1 .. max_runs per model: the fewest items n(R) giving the run-regime
    test of ``delta`` the requested power (:func:`planned_power` at (n, R); ``s2_res`` = res_a + res_b),
    and the cost per model ``cost_item n R + cost_run R``; n = inf where no number of items suffices
    (or above ``max_items``). One run is always infeasible: the run tests refuse it (it cannot estimate
    the run-to-run variance, even when the pilot's is 0).
    """
    s2_run = s2_run_a + s2_run_b
    runs = np.arange(1, max_runs + 1, dtype=float)
    k_inf = float(k_constant(alpha, power, "two-sided"))
    with np.errstate(divide="ignore", invalid="ignore"):
        room = delta * delta / k_inf - s2_run / runs  # normal K: a lower bound on the items
        start = np.where((room > 0) & (runs >= MIN_RUNS), np.maximum(2.0, np.ceil((s2_item + s2_res / runs) / room)),
                         np.inf)

    def meets(t: np.ndarray, n: np.ndarray) -> np.ndarray:
        r = runs[t]
        got = planned_power(delta, s2_item, s2_res / r, [(s2_run_a, res_a, r), (s2_run_b, res_b, r)], n, alpha=alpha)
        return np.asarray(got >= power)

    items = _first_true(meets, start, float(max_items) if max_items is not None else 1e12)
    cost = np.where(np.isfinite(items), cost_item * items * runs + cost_run * runs, np.inf)
    return {"runs": runs, "items": items, "cost": cost}
