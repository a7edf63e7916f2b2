"""Plan runs: how many runs (and items) a gap needs when runs shift every item at once."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.files import check_size
from .._core.params import public
from .._core.results import Result
from .._core.validation import check_alpha_power, check_int_at_least
from .._kernel.crossed import allocation_table, crossed_mean_squares, gap_run_variance, planned_items, runs_needed
from ._variance import as_run_scores

__all__ = ["RunPlanResult", "plan_runs"]


@dataclass(frozen=True, slots=True, repr=False)
class RunPlanResult(Result):
    """Runs and items for a gap under run noise (see :func:`plan_runs`).

    Attributes
    ----------
    model_a, model_b : str
    delta : float
        The gap planned for (default: the pilot's).
    n_items : int
        The pilot's items (the "current items").
    runs_a, runs_b : int
        The pilot's runs per model.
    var_item, var_res, var_run : float
        The gap's components: item (of one item's difference at infinitely many runs), residual
        (item x run, one run of each model) and run (the two models' run components).
    items_needed : float
        Items at the pilot's runs with the requested power (inf when run noise alone exceeds the gap).
        Planned as the other numbers are, from the power of the run test that will be run at that design
        (:func:`llm_power._kernel.crossed.planned_power`), so it can exceed the N*_run that ``compare``
        and ``diagnose`` print (a plug-in on the pilot's own variance and df).
    runs_needed : float
        Runs per model at the pilot's items, at least 2 (inf: more runs alone cannot; more items are
        needed).
    best_items, best_runs, best_cost : float
        The cheapest (items, runs per model) with the requested power, cost per model
        ``cost_per_item * items * runs + cost_per_run * runs`` (inf when nothing up to ``max_runs``
        and ``max_items`` suffices).
    binary : bool
        The pilot's scores are 0/1 (the report shows the gap and its components in points).
    table : dict
        ``runs``, ``items`` and ``cost`` for each number of runs 1 .. ``max_runs`` (one run is never
        feasible: the run tests refuse it).

    Notes
    -----
    Infinite numbers (no design suffices) are ``inf`` here and ``null`` in :meth:`to_dict` and the JSON,
    as everywhere in the package; :meth:`to_dict` adds ``infinite``, the names of the fields that are
    infinite (and, for the table, ``table_infeasible_runs``), so that a null is never ambiguous.
    """

    model_a: str
    model_b: str
    delta: float
    n_items: int
    runs_a: int
    runs_b: int
    var_item: float
    var_res: float
    var_run: float
    items_needed: float
    runs_needed: float
    best_items: float
    best_runs: float
    best_cost: float
    alpha: float
    power: float
    cost_per_item: float
    cost_per_run: float
    table: dict[str, Any]
    binary: bool = False

    _repr_fields = ("delta", "items_needed", "runs_needed", "best_items", "best_runs", "best_cost")
    _title = "Runs and items for a gap under run noise"

    def summary(self) -> str:
        """The plan in words."""
        def num(x: float) -> str:
            return "∞" if not math.isfinite(x) else f"{x:,.0f}"

        lines = [f"{self.model_a} vs {self.model_b}: gap {self.delta:+.4g}, pilot {self.n_items:,} items x "
                 f"{self.runs_a}/{self.runs_b} runs (alpha = {self.alpha:g}, power = {self.power:g})",
                 f"  components of the gap: item {self.var_item:.4g}, item x run {self.var_res:.4g}, "
                 f"run {self.var_run:.4g}",
                 f"  at these runs: {num(self.items_needed)} items"
                 + (" (run noise alone exceeds the gap: no number of items suffices)"
                    if not math.isfinite(self.items_needed) else ""),
                 f"  at these items: {num(self.runs_needed)} runs per model"
                 + (" (the item part alone exceeds the gap: more items are needed)"
                    if not math.isfinite(self.runs_needed) else ""),
                 f"  cheapest: {num(self.best_items)} items x {num(self.best_runs)} runs per model, cost "
                 f"{num(self.best_cost)} (per item-run {self.cost_per_item:g}, per run {self.cost_per_run:g})"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """:meth:`Result.to_dict` plus ``infinite`` (the fields that are infinite, null in JSON) and
        ``table_infeasible_runs`` (the numbers of runs at which no design suffices, null items and cost).
        """
        out = Result.to_dict(self)
        names = ("items_needed", "runs_needed", "best_items", "best_runs", "best_cost")
        out["infinite"] = [name for name in names if math.isinf(getattr(self, name))]
        items = np.asarray(self.table["items"], dtype=float)
        out["table_infeasible_runs"] = [int(r) for r in np.asarray(self.table["runs"])[np.isinf(items)]]
        return out


@public
def plan_runs(pilot: Any, delta: float | None = None, *, models: Any = None, run: str = "run", pair: Any = None,  # noqa: PLR0913
              alpha: float = 0.05, power: float = 0.8, cost_per_item: float = 1.0, cost_per_run: float = 0.0,
              max_items: int | None = None, max_runs: int = 100, run_pairing: str = "auto") -> RunPlanResult:
    r"""How many runs, and items, a gap needs when runs (seeds, templates, engines) add noise.

    Parameters
    ----------
    pilot : RunScores, DataFrame, array_like (n_items, n_runs, n_models) or dict
        A pilot with at least 2 runs of each model (:func:`llm_power.read_runs`; a long DataFrame
        ``model, <run>, item, score``).
    delta : float, optional
        The gap to resolve (default: the pilot's gap of the pair).
    models : sequence of str, optional
        Model names for an array.
    run : str, default "run"
        The run column of a DataFrame.
    pair : (str, str), optional
        The two models (default: the pilot's only two, else its top two by score).
    alpha, power : float
    cost_per_item : float, default 1
        Cost of scoring one item once (one model, one run).
    cost_per_run : float, default 0
        Fixed cost of one run of one model (a server start, a template build).
    max_items : int, optional
        The benchmark's size: plans above it are infeasible.
    max_runs : int, default 100
        Largest number of runs per model considered.
    run_pairing : {"auto", "independent", "matched"}, default "auto"
        As for :func:`llm_power.diagnose` (matched: shared prompt templates).

    Returns
    -------
    RunPlanResult

    Notes
    -----
    The run-regime test of a gap at n items and R runs per model has variance
    s2_item/n + s2_res/(nR) + s2_run/R (components from the pilot's crossed decomposition). The plan
    computes the power of the test that will be run, under normal theory: that test estimates the run
    part, max(0, MS_run - MS_res)/(nR), and its degrees of freedom from the run mean squares, so the
    power is averaged over their chi-square laws -- counting the run terms even when the pilot's run
    component is 0, as the test will. It finds, for each R >= 2, the fewest n whose power reaches
    ``power``, and the cheapest (n, R). When K s2_run/R >= delta^2 no number of items helps at R runs:
    the run noise must be averaged down. One run per model is never planned: the run tests
    (``compare``, ``gate``, ``diagnose``) need 2.

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(2)
    >>> item = rng.normal(0, 1, (500, 1, 1))
    >>> y = item + rng.normal(0, 0.05, (1, 3, 2)) + rng.normal(0, 0.3, (500, 3, 2))
    >>> plan = lp.plan_runs(y, 0.05, models=["a", "b"], cost_per_run=100)
    >>> bool(plan.best_runs >= 2), bool(np.isfinite(plan.best_items))
    (True, True)
    """
    alpha, power = check_alpha_power(alpha, power)
    max_runs = check_int_at_least(max_runs, "max_runs", 2)
    check_size(max_runs, "LLM_POWER_MAX_PLAN_RUNS", "`max_runs` (the allocation table holds a row per number of runs)")
    if max_items is not None:
        max_items = check_int_at_least(max_items, "max_items", 2)
    for name, value in (("cost_per_item", cost_per_item), ("cost_per_run", cost_per_run)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            msg = f"`{name}` must be a finite number >= 0; got {value!r}"
            raise ValueError(msg)
    rs = as_run_scores(pilot, models=models, min_runs=2, run=run)
    ms = crossed_mean_squares(rs.blocks)
    if pair is None:
        if rs.n_models < 2:
            msg = "a pilot with at least 2 models is needed to plan a gap"
            raise ValueError(msg)
        top = np.argsort(-ms.mean, kind="stable")[:2]
        i, j = int(top[0]), int(top[1])
    else:
        names = [str(m) for m in rs.models]
        try:
            i, j = names.index(str(pair[0])), names.index(str(pair[1]))
        except ValueError:
            msg = f"`pair` {tuple(pair)!r}: both must be models of the pilot ({', '.join(names[:8])})"
            raise ValueError(msg) from None
    d = ms.item_means[:, i] - ms.item_means[:, j]
    observed = float(d.mean())
    gap = observed if delta is None else float(delta)
    if not math.isfinite(gap) or gap == 0:
        msg = f"the gap to plan for must be a finite non-zero number; got {gap!r}"
        raise ValueError(msg)
    s2_d = float(np.var(d, ddof=1))
    ii, jj = np.array([i]), np.array([j])
    pv = gap_run_variance(np.array([s2_d]), rs.n, ms, ii, jj, rs.blocks if rs.matched(run_pairing) else None)
    terms = (pv.run_a, pv.run_b, pv.res_a, pv.res_b)
    need_runs = runs_needed(np.array([gap]), rs.n, pv.s2_item, pv.s2_res, *terms, alpha=alpha, power=power,
                            max_runs=max(max_runs, 10_000))
    run_a, run_b, res_a, res_b = (float(np.asarray(t)[0]) for t in terms)
    items_now = float(planned_items(abs(gap), pv.s2_item, run_a, run_b, res_a, res_b, ms.runs[i], ms.runs[j],
                                    alpha=alpha, power=power,
                                    max_items=float(max_items) if max_items is not None else 1e12)[0])
    table = allocation_table(abs(gap), float(pv.s2_item[0]), float(pv.s2_res[0]), run_a, run_b, res_a, res_b,
                             alpha=alpha, power=power,
                             cost_item=float(cost_per_item), cost_run=float(cost_per_run), max_items=max_items,
                             max_runs=max_runs)
    finite = np.isfinite(table["cost"])
    if finite.any():
        k = int(np.flatnonzero(finite)[np.argmin(table["cost"][finite])])
        best = (float(table["items"][k]), float(table["runs"][k]), float(table["cost"][k]))
    else:
        best = (math.inf, math.inf, math.inf)
    return RunPlanResult(model_a=str(rs.models[i]), model_b=str(rs.models[j]), delta=gap, n_items=rs.n,
                         runs_a=int(ms.runs[i]), runs_b=int(ms.runs[j]), var_item=float(pv.s2_item[0]),
                         var_res=float(pv.s2_res[0]), var_run=float(pv.s2_run[0]),
                         items_needed=items_now,
                         runs_needed=float(need_runs[0]), best_items=best[0], best_runs=best[1], best_cost=best[2],
                         alpha=alpha, power=power, cost_per_item=float(cost_per_item),
                         cost_per_run=float(cost_per_run), table=table, binary=bool(rs.binary))
