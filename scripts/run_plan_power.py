"""Power of the run test at the designs the run plans advertise: the working tree against 7302bb3.

A gap between two models is planned from its components -- s2_item (item x model), the residual
(item x run) of each model and the run x model component -- at alpha = 0.05 and power 0.8:

- ``items``: the items needed at a given number of runs (``plan_runs(...).items_needed``),
- ``runs``: the runs needed at a given number of items (``runs_needed``, also diagnose's and compare's),
- ``cheapest``: the cheapest (items, runs) of the allocation table at a cost per run.

Each planned design is then simulated (normal theory, exactly: the grand mean, s2_D and each layout's
MS_run and MS_res are independent, their laws written out below) and the run test that compare and
diagnose run there -- the kernel's variance and df -- is applied; the share of rejections is its power
(Monte-Carlo SE sqrt(0.16 / reps) at 0.8). Two sources of the components:

- ``truth``: the true components are given to the planner (the plan's own rule is checked);
- ``pilot``: a pilot of ``--pilot-items`` items x ``--pilot-runs`` runs is simulated, the plan made from
  its estimates (as ``plan_runs`` does); the power is averaged over pilots, and over the pilots whose
  estimated run component is 0 (the audit's case).

Run from the repository root (git is needed for the old kernel):

    .venv/bin/python scripts/run_plan_power.py --reps 4000 --pilots 300
"""

from __future__ import annotations

import argparse
import math
import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_test_size import old_kernel  # noqa: E402

from llm_power._kernel import crossed  # noqa: E402
from llm_power._kernel.quantiles import t_pvalue  # noqa: E402
from llm_power._kernel.verdict import run_verdict  # noqa: E402


def mean_squares(runs: np.ndarray, ms_run: np.ndarray, ms_res: np.ndarray, n: int) -> crossed.CrossedMeanSquares:
    """A CrossedMeanSquares holding only what the pair variance reads (runs, MS_run, MS_res)."""
    k = runs.size
    return crossed.CrossedMeanSquares(n=n, runs=runs, mean=np.zeros(k), item_means=np.zeros((1, k)),
                                      run_means=[], ms_item=np.full(k, np.nan), ms_run=ms_run, ms_res=ms_res)


def draw(rng: np.random.Generator, reps: int, n: int, r: int, comp: dict[str, float], *, delta: float,
         matched: bool) -> dict[str, np.ndarray]:
    """The statistics of ``reps`` replications at (n, R) under normal theory: delta-hat, s2_D, and per
    run layout (model A and B, or the matched difference) MS_run and MS_res."""
    df_res = (n - 1.0) * (r - 1.0)
    layouts = [("run_d", "res_d")] if matched else [("run_a", "res_a"), ("run_b", "res_b")]
    res_sum = sum(comp[res] for _, res in layouts)
    run_sum = sum(comp[run] for run, _ in layouts)
    tau2 = comp["item"] / n + run_sum / r + res_sum / (n * r)
    out = {"delta": delta + math.sqrt(tau2) * rng.standard_normal(reps),
           "s2_d": (comp["item"] + res_sum / r) * rng.chisquare(n - 1, reps) / (n - 1)}
    for k, (run, res) in enumerate(layouts):
        out[f"ms_run{k}"] = (comp[res] + n * comp[run]) * rng.chisquare(r - 1, reps) / (r - 1)
        out[f"ms_res{k}"] = comp[res] * rng.chisquare(df_res, reps) / df_res
    return out


def pair_variance(kernel: types.ModuleType, st: dict[str, np.ndarray], n: int, r: int, matched: bool) -> object:
    """The kernel's PairRunVariance of the drawn statistics."""
    reps = st["delta"].size
    if matched:
        if hasattr(kernel, "matched_run_variance"):
            return kernel.matched_run_variance(st["s2_d"], n, st["ms_run0"], st["ms_res0"], r)
        return None
    runs = np.full(2 * reps, float(r))
    ms_run = np.empty(2 * reps)
    ms_res = np.empty(2 * reps)
    ms_run[0::2], ms_run[1::2] = st["ms_run0"], st["ms_run1"]
    ms_res[0::2], ms_res[1::2] = st["ms_res0"], st["ms_res1"]
    i = np.arange(0, 2 * reps, 2)
    return kernel.pair_run_variance(st["s2_d"], n, mean_squares(runs, ms_run, ms_res, n), i, i + 1)


def old_matched(st: dict[str, np.ndarray], n: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """7302bb3's matched variance and df (written out from its matched_pair_run_variance, which needs scores)."""
    from llm_power._kernel.crossed import satterthwaite_df

    vr = np.maximum((st["ms_run0"] - st["ms_res0"]) / n, 0.0)
    on = vr > 0
    item = st["s2_d"] / n
    df = satterthwaite_df([(item, n - 1.0), (np.where(on, st["ms_run0"] / (n * r), 0.0), r - 1.0),
                           (np.where(on, -st["ms_res0"] / (n * r), 0.0), (n - 1.0) * (r - 1.0))])
    return item + vr / r, np.minimum(df, n - 1.0)


def power(kernel: types.ModuleType, rng: np.random.Generator, reps: int, n: float, r: float, *,
          comp: dict[str, float], delta: float, matched: bool) -> float:
    """Share of replications at (n, R) whose two-sided run test rejects at 0.05 (NaN for no design)."""
    if not (math.isfinite(n) and math.isfinite(r)) or r < 2:
        return math.nan
    n, r = int(n), int(r)
    st = draw(rng, reps, n, r, comp, delta=delta, matched=matched)
    pv = pair_variance(kernel, st, n, r, matched)
    if pv is None:
        var, df = old_matched(st, n, r)
    else:
        var, df = pv.variance, pv.df
    with np.errstate(divide="ignore", invalid="ignore"):
        t = st["delta"] / np.sqrt(var)
    return float(np.mean(np.asarray(t_pvalue(t, df, "two-sided")) <= 0.05))


def terms(comp: dict[str, float], matched: bool) -> tuple[float, ...]:
    """(s2_item, s2_res, run_a, run_b, res_a, res_b) as the planners take them."""
    if matched:
        return comp["item"], comp["res_d"], comp["run_d"], 0.0, comp["res_d"], 0.0
    return comp["item"], comp["res_a"] + comp["res_b"], comp["run_a"], comp["run_b"], comp["res_a"], comp["res_b"]


def plans(kernel: types.ModuleType, comp: dict[str, float], delta: float, matched: bool, *, pilot_n: int,
          pilot_r: int, pilot_df: float | None = None, pilot_run_part: float | None = None,
          pilot_s2_d: float | None = None) -> dict[str, tuple[float, float]]:
    """The designs (n, R) each planner advertises for ``delta`` from the components ``comp``."""
    s2_item, s2_res, run_a, run_b, res_a, res_b = terms(comp, matched)
    out = {}
    if hasattr(kernel, "planned_items"):
        items = float(np.ravel(kernel.planned_items(delta, s2_item, run_a, run_b, res_a, res_b, pilot_r, pilot_r,
                                                    alpha=0.05, power=0.8))[0])
    elif pilot_df is None:
        items = math.nan
    else:  # 7302bb3: plan_runs advertised the verdict's N*_run at the pilot's runs
        rv = run_verdict(np.array([delta]), np.array([pilot_s2_d]), np.array([pilot_run_part]), pilot_n,
                         np.array([pilot_df]), np.array([True]), alpha=0.05, power=0.8, alternative="two-sided")
        items = float(np.ceil(rv.n_star[0])) if np.isfinite(rv.n_star[0]) else math.inf
    out["items"] = (items, float(pilot_r))
    need = kernel.runs_needed(np.array([delta]), pilot_n, np.array([s2_item]), np.array([s2_res]), np.array([run_a]),
                              np.array([run_b]), np.array([res_a]), np.array([res_b]), alpha=0.05, power=0.8)
    out["runs"] = (float(pilot_n), float(need[0]))
    for cost in (200.0, 2000.0):
        t = kernel.allocation_table(delta, s2_item, s2_res, run_a, run_b, res_a, res_b, alpha=0.05, power=0.8,
                                    cost_item=1.0, cost_run=cost, max_items=None, max_runs=100)
        finite = np.isfinite(t["cost"])
        k = int(np.flatnonzero(finite)[np.argmin(t["cost"][finite])]) if finite.any() else -1
        out[f"cheapest@{cost:g}"] = (float(t["items"][k]), float(t["runs"][k])) if k >= 0 else (math.inf, math.inf)
    return out


DESIGNS = {  # the gap's components: item x model, residual per layout, run x model per layout
    "independent, no run variance": ({"item": 0.3, "res_a": 0.25, "res_b": 0.25, "run_a": 0.0, "run_b": 0.0}, False),
    "independent, run variance": ({"item": 0.3, "res_a": 0.25, "res_b": 0.25, "run_a": 3e-4, "run_b": 3e-4}, False),
    "independent, one model's runs": ({"item": 0.3, "res_a": 0.25, "res_b": 0.25, "run_a": 6e-4, "run_b": 0.0},
                                      False),
    "matched, no run variance": ({"item": 0.3, "res_d": 0.5, "run_d": 0.0}, True),
    "matched, run variance": ({"item": 0.3, "res_d": 0.5, "run_d": 6e-4}, True),
}


def pilot_components(rng: np.random.Generator, comp: dict[str, float], n: int, r: int,
                     matched: bool) -> tuple[dict[str, float], float, float, dict[str, np.ndarray]]:
    """One pilot's estimated components (as plan_runs estimates them), its s2_D, run part and statistics."""
    st = draw(rng, 1, n, r, comp, delta=0.0, matched=matched)
    est = {"item": max(float(st["s2_d"][0]) - sum(float(st[f"ms_res{k}"][0]) for k in range(1 if matched else 2)) / r,
                       0.0)}
    layouts = ["d"] if matched else ["a", "b"]
    for k, name in enumerate(layouts):
        est[f"res_{name}"] = float(st[f"ms_res{k}"][0])
        est[f"run_{name}"] = max((float(st[f"ms_run{k}"][0]) - float(st[f"ms_res{k}"][0])) / n, 0.0)
    return est, float(st["s2_d"][0]), sum(est[f"run_{x}"] for x in layouts) / r, st


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--pilots", type=int, default=200)
    parser.add_argument("--pilot-items", type=int, default=300)
    parser.add_argument("--pilot-runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    old = old_kernel()
    n0, r0 = args.pilot_items, args.pilot_runs
    se = math.sqrt(0.16 / args.reps)
    print(f"power at the planned designs (target 0.8); {args.reps} replications per design, MC SE {se:.3f}")
    for name, (comp, matched) in DESIGNS.items():
        delta = 0.06
        print(f"\n{name}: gap {delta}, components {comp}; pilot {n0} items x {r0} runs")
        for label, kernel in (("now", crossed), ("7302bb3", old)):
            rng = np.random.default_rng(args.seed)
            # truth: the true components given to the planner (7302bb3 planned items from a pilot's N*_run only)
            truth = plans(kernel, comp, delta, matched, pilot_n=n0, pilot_r=r0)
            row = [f"{plan_name} {n:.0f}x{r:.0f}: {power(kernel, rng, args.reps, n, r, comp=comp, delta=delta, matched=matched):.3f}"
                   for plan_name, (n, r) in truth.items()]
            print(f"  {label:>8} truth:  " + "; ".join(row))
            # pilots: the plan from each pilot's estimates, its power at the truth
            sums: dict[str, list[float]] = {}
            zero: dict[str, list[float]] = {}
            prng = np.random.default_rng(args.seed + 1)
            for _ in range(args.pilots):
                est, s2_d, run_part, st = pilot_components(prng, comp, n0, r0, matched)
                pv = pair_variance(kernel, st, n0, r0, matched)
                df = float(old_matched(st, n0, r0)[1][0]) if pv is None else float(pv.df[0])
                designs = plans(kernel, est, delta, matched, pilot_n=n0, pilot_r=r0, pilot_df=df,
                                pilot_run_part=run_part, pilot_s2_d=s2_d)
                truncated = all(est[k] == 0 for k in est if k.startswith("run"))
                for plan_name, (n, r) in designs.items():
                    p = power(kernel, rng, max(args.reps // 10, 200), n, r, comp=comp, delta=delta, matched=matched)
                    if math.isfinite(p):
                        sums.setdefault(plan_name, []).append(p)
                        if truncated:
                            zero.setdefault(plan_name, []).append(p)
            print(f"  {label:>8} pilots: " + "; ".join(f"{k} {np.mean(v):.3f}" for k, v in sums.items()))
            if zero:
                print(f"  {label:>8} pilots with run component 0 ({len(next(iter(zero.values())))}): "
                      + "; ".join(f"{k} {np.mean(v):.3f}" for k, v in zero.items()))


if __name__ == "__main__":
    main()
