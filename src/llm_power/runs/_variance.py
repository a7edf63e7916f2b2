"""The variance of a score over items *and* runs: the crossed decomposition of each model and each pair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.validation import check_confidence_level, check_option
from .._kernel.crossed import (
    CrossedMeanSquares,
    chi2_variance_interval,
    crossed_mean_squares,
    gap_run_variance,
    mls_difference_interval,
    mls_sum_interval,
    satterthwaite_df,
)
from .._kernel.verdict import t_interval
from ..matrix import RunScores

__all__ = ["RunVarianceResult", "as_run_scores", "run_variance"]


def as_run_scores(data: Any, *, models: Any = None, min_runs: int = 1, run: str = "run") -> RunScores:
    """:class:`~llm_power.matrix.RunScores` from itself, a long DataFrame ``model, <run>, item, score``
    (:meth:`RunScores.from_frame`), an items x runs x models array, or a dict ``{model: items x runs
    array}`` (every model on the same items, in the same order).
    """
    if isinstance(data, RunScores):
        rs = data
    elif hasattr(data, "columns") and hasattr(data, "iloc"):  # a long pandas table
        rs = RunScores.from_frame(data, run=run)
    elif isinstance(data, dict):
        names = list(data)
        blocks = [np.asarray(data[k], dtype=float) for k in names]
        for name, blk in zip(names, blocks, strict=True):
            if blk.ndim != 2:
                msg = f"model {name!r}: scores must be items x runs (2 dimensions); got shape {blk.shape}"
                raise ValueError(msg)
        n = blocks[0].shape[0] if blocks else 0
        rs = RunScores(items=list(range(n)), models=names, blocks=blocks,
                       run_labels=[[str(t) for t in range(b.shape[1])] for b in blocks])
    else:
        rs = RunScores.from_array(data, models=models)
    if rs.n < 2:
        msg = f"{rs.n} item(s): at least 2 are needed"
        raise ValueError(msg)
    few = [str(m) for m, r in zip(rs.models, rs.runs.tolist(), strict=True) if r < min_runs]
    if few:
        msg = (f"{len(few)} model(s) with fewer than {min_runs} runs ({', '.join(few[:5])}): the run-to-run variance "
               f"needs at least {min_runs} runs of each model")
        raise ValueError(msg)
    return rs


@dataclass(frozen=True, slots=True, repr=False)
class RunVarianceResult(Result):
    """The crossed decomposition (items x runs) of each model's score and of each pair's gap.

    Per model (arrays in ``models`` order): the score, its variance components with intervals at
    ``confidence_level`` (item: MLS; run: MLS; residual item x run: chi-square), the standard error over
    items only (IID, of the run-averaged score) and over items and runs, and ``run_share``, the share of
    the score's variance that comes from run-to-run shifts (what more items never remove).

    Per pair (``pairs``: list of dicts, adjacent by score or every pair): the gap, its standard
    errors, the run test's df (the smallest Satterthwaite df over confidence bounds of the run mean
    squares: :func:`llm_power._kernel.crossed.run_test_df`), t interval over items and runs, and the
    variance parts of the gap: ``var_item`` (of one item's run-averaged difference, at infinitely many
    runs; MLS interval ``var_item_ci``), ``var_run`` (the two models' run components; Graybill-Wang interval
    ``var_run_ci``), ``var_res`` (their residuals), ``run_share`` (of the gap's
    variance, the run part) and ``rerun_removable_share`` (what infinitely many runs at these items
    would remove: run part and residual).
    """

    models: list[Any]
    n_items: int
    runs: np.ndarray
    mean: np.ndarray
    se_items: np.ndarray
    se: np.ndarray
    var_item: np.ndarray
    var_item_ci: tuple[np.ndarray, np.ndarray]
    var_run: np.ndarray
    var_run_ci: tuple[np.ndarray, np.ndarray]
    var_res: np.ndarray
    var_res_ci: tuple[np.ndarray, np.ndarray]
    run_share: np.ndarray
    pairs: list[dict[str, Any]]
    confidence_level: float
    runs_by: str = "run"

    _repr_fields = ("models", "n_items", "runs", "mean", "se")

    @public
    def confidence_interval(self, confidence_level: float | None = None, *,
                            component: str = "item") -> ConfidenceInterval:
        """Per model, the interval of one variance component: ``component`` ``"item"`` (default),
        ``"run"`` or ``"residual"`` (the fields ``var_item_ci``, ``var_run_ci``, ``var_res_ci``).
        """
        picked = {"item": self.var_item_ci, "run": self.var_run_ci, "residual": self.var_res_ci}.get(
            component, (None, None))
        low, high = picked
        return stored_interval(low, high, self.confidence_level, confidence_level,
                               recompute="run run_variance(..., confidence_level=confidence_level)",
                               choice=("component", component, ("item", "run", "residual")))
    _title = "Variance over items and runs"

    def summary(self) -> str:
        """Per model: score, SE (items only, items and runs), components; then the pairs."""
        lines = [f"Variance over items and runs ({self.n_items:,} items; runs by {self.runs_by})",
                 f"{'model':<24} {'runs':>4} {'score':>8} {'SE items':>9} {'SE +runs':>9} {'SD run':>8} "
                 f"{'run share':>9}"]
        for k, name in enumerate(self.models):
            lines.append(f"{str(name)[:24]:<24} {int(self.runs[k]):>4} {self.mean[k]:>8.4f} "
                         f"{self.se_items[k]:>9.4f} {self.se[k]:>9.4f} "
                         f"{np.sqrt(self.var_run[k]):>8.4f} {self.run_share[k]:>9.0%}")
        return "\n".join(lines)


def model_components(ms: CrossedMeanSquares, level: float) -> dict[str, Any]:
    """Per-model components with their intervals (NaN where one run cannot estimate them)."""
    n, r = float(ms.n), ms.runs
    with np.errstate(invalid="ignore", divide="ignore"):
        item_ci = mls_difference_interval(1.0 / r, ms.ms_item, ms.df_item, 1.0 / r, ms.ms_res, ms.df_res, level)
        run_ci = mls_difference_interval(1.0 / n, ms.ms_run, ms.df_run, 1.0 / n, ms.ms_res, ms.df_res, level)
        res_ci = chi2_variance_interval(ms.ms_res, ms.df_res, level)
        var_item = np.where(r > 1, ms.var_item, np.nan)
        share = np.where(ms.var_mean > 0, (ms.var_run / r) / ms.var_mean, 0.0)
    one = r < 2
    nan = np.where(one, np.nan, 0.0)
    return {"var_item": var_item, "var_item_ci": (item_ci[0] + nan, item_ci[1] + nan), "var_run": ms.var_run,
            "var_run_ci": (run_ci[0] + nan, run_ci[1] + nan), "var_res": ms.var_res,
            "var_res_ci": (res_ci[0] + nan, res_ci[1] + nan), "run_share": share,
            "se_items": np.sqrt(ms.var_mean_items), "se": np.sqrt(ms.var_mean)}


def pair_rows(rs: RunScores, ms: CrossedMeanSquares, i: np.ndarray, j: np.ndarray,  # noqa: PLR0917
              level: float, matched: bool = False) -> list[dict[str, Any]]:
    """The gap decomposition of the pairs (i, j) (model indices); ``matched``: runs shared (templates)."""
    d = ms.item_means[:, i] - ms.item_means[:, j]
    delta = d.mean(axis=0)
    s2_d = d.var(axis=0, ddof=1)
    pv = gap_run_variance(s2_d, rs.n, ms, i, j, rs.blocks if matched else None)
    lo, hi = t_interval(delta, pv.variance, pv.df, level, "two-sided")
    with np.errstate(invalid="ignore", divide="ignore"):
        run_share = np.where(pv.variance > 0, pv.run_part / pv.variance, 0.0)
        removable = np.where(pv.variance > 0, 1.0 - np.minimum(pv.s2_item / rs.n, pv.variance) / pv.variance, 0.0)
    # intervals of the gap's components: the run component sum_m (MS_run,m - MS_res,m)/n by Graybill-Wang
    # for the positive terms, the residual mean squares (on (n-1)(R-1) df) taken as known; the item
    # component s2_D - sum_m MS_res,m/R_m by MLS, the residual part on its Satterthwaite df
    if matched and pv.ms_run_matched is not None:  # the difference's own two-way layout: MLS for both
        r = ms.runs[i]
        df_res = (rs.n - 1.0) * (r - 1.0)
        run_lo, run_hi = mls_difference_interval(1.0 / rs.n, pv.ms_run_matched, r - 1.0, 1.0 / rs.n, pv.s2_res, df_res,
                                                 level)
        item_lo, item_hi = mls_difference_interval(1.0, s2_d, rs.n - 1.0, 1.0 / r, pv.s2_res, df_res, level)
    else:
        res_n = (ms.ms_res[i] + ms.ms_res[j]) / rs.n
        run_lo, run_hi = mls_sum_interval([(1.0 / rs.n, ms.ms_run[i], ms.df_run[i]),
                                           (1.0 / rs.n, ms.ms_run[j], ms.df_run[j])], level)
        run_lo, run_hi = np.maximum(run_lo - res_n, 0.0), np.maximum(run_hi - res_n, 0.0)
        res_a, res_b = ms.ms_res[i] / ms.runs[i], ms.ms_res[j] / ms.runs[j]
        res_df = satterthwaite_df([(res_a, ms.df_res[i]), (res_b, ms.df_res[j])])
        item_lo, item_hi = mls_difference_interval(1.0, s2_d, rs.n - 1.0, 1.0, res_a + res_b, res_df, level)
    rows = []
    for p, (a, b) in enumerate(zip(i.tolist(), j.tolist(), strict=True)):
        rows.append({"model_a": rs.models[a], "model_b": rs.models[b], "delta": float(delta[p]),
                     "se_items": float(np.sqrt(pv.item_part[p])), "se": float(np.sqrt(pv.variance[p])),
                     "df": float(pv.df[p]), "ci_low": float(lo[p]), "ci_high": float(hi[p]),
                     "var_item": float(pv.s2_item[p]), "var_item_ci": (float(item_lo[p]), float(item_hi[p])),
                     "var_run": float(pv.s2_run[p]), "var_run_ci": (float(run_lo[p]), float(run_hi[p])),
                     "var_res": float(pv.s2_res[p]), "run_share": float(run_share[p]),
                     "rerun_removable_share": float(removable[p])})
    return rows


def pair_index(means: np.ndarray, pairs: str) -> tuple[np.ndarray, np.ndarray]:
    """(i, j) model indices of the adjacent pairs by score (higher first), or of every pair."""
    order = np.argsort(-means, kind="stable")
    if pairs == "adjacent":
        return order[:-1], order[1:]
    a, b = np.triu_indices(order.size, 1)
    return order[a], order[b]


@public
def run_variance(data: Any, *, models: Any = None, run: str = "run", pairs: str = "adjacent",  # noqa: PLR0913
                 run_pairing: str = "auto", confidence_level: float = 0.95) -> RunVarianceResult:
    r"""Decompose each model's score, and each pair's gap, into item, run and item x run variance.

    Parameters
    ----------
    data : RunScores, DataFrame, array_like of shape (n_items, n_runs, n_models), or dict
        Several runs per model on the same items (:func:`llm_power.read_runs`,
        :func:`llm_power.align_runs`); a long DataFrame ``model, <run>, item, score``; a dict maps
        each model to its items x runs array.
    models : sequence of str, optional
        Model names for an array.
    run : str, default "run"
        The run column of a DataFrame.
    pairs : {"adjacent", "all"}, default "adjacent"
        The pairs whose gaps are decomposed: adjacent by score, or all.
    run_pairing : {"auto", "independent", "matched"}, default "auto"
        As for :func:`llm_power.diagnose`: matched runs (shared prompt templates) decompose each
        pair's per-run differences; "auto" is matched for templates every model shares.
    confidence_level : float, default 0.95

    Returns
    -------
    RunVarianceResult

    Notes
    -----
    Each model's n items x R runs follow the crossed random-effects model
    y_ir = mu + a_i + b_r + e_ir. From the two-way mean squares (method of moments, = REML for this
    balanced design when positive): s2_item = (MS_item - MS_res)/R, s2_run = (MS_run - MS_res)/n,
    s2_res = MS_res, each truncated at 0; intervals by the modified large-sample method (Ting et al.
    1990) and chi-square. The score's variance is MS_item/(nR) + s2_run/R. For a pair run
    independently (seeds, engines), Var(gap) = s2_D/n + s2_run,A/R_A + s2_run,B/R_B with s2_D the
    variance of the per-item differences of run means, on the run test's df: the smallest
    Satterthwaite df over one-sided 80% bounds of each run mean square (estimated Satterthwaite df
    over-reject with 2 or 3 runs; docs/runs.md).

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(1)
    >>> item = rng.normal(0, 1, (400, 1, 1))
    >>> run = rng.normal(0, 0.1, (1, 5, 2))
    >>> y = 0.5 + item + run + rng.normal(0, 0.5, (400, 5, 2))
    >>> res = lp.run_variance(y, models=["a", "b"])
    >>> res.runs.tolist(), bool(np.all(res.se > res.se_items))
    ([5, 5], True)
    """
    level = check_confidence_level(confidence_level)
    pairs = check_option(pairs, "pairs", ("adjacent", "all"))
    rs = as_run_scores(data, models=models, run=run)
    return decomposition(rs, crossed_mean_squares(rs.blocks), level, pairs, rs.matched(run_pairing))


def decomposition(rs: RunScores, ms: CrossedMeanSquares, level: float, pairs: str,  # noqa: PLR0917
                  matched: bool) -> RunVarianceResult:
    """The :class:`RunVarianceResult` of validated run scores from their mean squares (computed once by the
    caller: :func:`llm_power.noise` uses them again).
    """
    comp = model_components(ms, level)
    i, j = pair_index(ms.mean, pairs)
    return RunVarianceResult(models=list(rs.models), n_items=rs.n, runs=rs.runs, mean=ms.mean, pairs=pair_rows(
        rs, ms, i, j, level, matched), confidence_level=level, runs_by=rs.runs_by, **comp)
