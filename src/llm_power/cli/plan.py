"""``llm-power plan sample-size | mde | power | shortcut``: planning an eval."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .._core.options import DESIGNS
from ..report import tables
from ..report.tables import print_view
from ..report.terminal import dump_json
from ._json import document
from ._types import HelpFormatter, UsageError, add_reader_options, add_run_pairing, nonnegative_int, positive_int

HELP = "plan an eval: items needed (N*), minimum detectable effect, power, the shortcut's error"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    p.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"),
                   help="two-sided (default), or one-sided: greater (A better) / less")
    p.add_argument("--design-effect", type=float, default=1.0, metavar="DE",
                   help="multiplier for clustered items, 1 + (m - 1) ICC (default 1)")


def _pair_options(p: argparse.ArgumentParser) -> None:
    """How the two models' results relate: correlation or discordance, paired or unpaired."""
    p.add_argument("--rho", type=float, default=0.0, help="per-item correlation of the two models (default 0)")
    p.add_argument("--discordance", type=float,
                   help="share of items the models disagree on, p10 + p01, instead of --rho (default: from --rho)")
    p.add_argument("--design", default="paired", choices=DESIGNS,
                   help="paired (default: both models on the same items) or unpaired")


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    plan = sub.add_parser("plan", help=HELP, description=HELP[:1].upper() + HELP[1:] + ".")
    psub = plan.add_subparsers(dest="plan_command", metavar="WHAT")

    def overview(args: argparse.Namespace) -> int:  # noqa: ARG001 - the run signature
        plan.print_help()  # `llm-power plan` alone: what it can plan, not an error
        return 0

    plan.set_defaults(run=overview, traceback=False, quiet=False)

    ss = psub.add_parser("sample-size", parents=[parent], help="items needed to detect a gap p_a - p_b",
                         epilog="examples: llm-power plan sample-size --pa 0.65 --pb 0.60 --rho 0.30\n"
                                "          llm-power plan sample-size --table --p 0.8 --delta 0.02",
                         formatter_class=HelpFormatter)
    ss.add_argument("--pa", type=float, help="accuracy of model A (no default; required unless --table)")
    ss.add_argument("--pb", type=float, help="accuracy of model B (no default; required unless --table)")
    _pair_options(ss)
    ss.add_argument("--method", default="all", help="wald | connor | exact (paired), wald | per_arm | fleiss "
                                                    "(unpaired), or all (default)")
    ss.add_argument("--table", action="store_true",
                    help="a table of the items needed by rho, at baseline accuracy --p and gap --delta")
    ss.add_argument("--p", type=float, default=0.8, help="baseline accuracy for --table (default 0.8)")
    ss.add_argument("--delta", type=float, default=0.02, help="gap for --table (default 0.02)")
    ss.add_argument("--rhos", type=float, nargs="+", default=[0.0, 0.3, 0.5, 0.7, 0.9],
                    help="rho values for --table (default 0 0.3 0.5 0.7 0.9)")
    _common(ss)
    ss.set_defaults(run=run_sample_size)

    md = psub.add_parser("mde", parents=[parent], help="minimum detectable effect of a benchmark of n items",
                         epilog="examples: llm-power plan mde --n 1319 --p 0.8 --rho 0.7\n"
                                "          llm-power plan mde --table --p 0.8",
                         formatter_class=HelpFormatter)
    md.add_argument("--n", type=int, nargs="+", default=None,
                    help="number(s) of items (no default; required unless --table)")
    md.add_argument("--p", type=float, default=0.8, help="baseline accuracy (default 0.8)")
    _pair_options(md)
    md.add_argument("--method", default="connor",
                    help="wald | connor | exact (paired), wald | per_arm | fleiss (unpaired); default connor")
    md.add_argument("--table", action="store_true",
                    help="a table of the minimum detectable gap by benchmark size, unpaired and paired")
    md.add_argument("--rhos", type=float, nargs="+", default=[0.0, 0.7], help="rho values for --table (default 0 0.7)")
    _common(md)
    md.set_defaults(run=run_mde)

    pw = psub.add_parser("power", parents=[parent], help="power to detect p_a - p_b with n items",
                         epilog="example: llm-power plan power --n 400 --pa 0.70 --pb 0.75 --rho 0 --method exact")
    pw.add_argument("--n", type=int, nargs="+", required=True,
                   help="number(s) of items, several for a power curve (required)")
    pw.add_argument("--pa", type=float, required=True, help="accuracy of model A (required)")
    pw.add_argument("--pb", type=float, required=True, help="accuracy of model B (required)")
    _pair_options(pw)
    pw.add_argument("--method", default="normal",
                    help="normal | exact | wald | connor (paired); normal | per_arm | fleiss (unpaired); "
                         "default normal")
    pw.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pw.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"),
                    help="two-sided (default), or one-sided: greater (A better) / less")
    pw.add_argument("--design-effect", type=float, default=1.0, metavar="DE",
                    help="multiplier for clustered items, 1 + (m - 1) ICC (default 1)")
    pw.set_defaults(run=run_power)

    sc = psub.add_parser("shortcut", parents=[parent], help="how far off the 'unpaired size x (1 - rho)' recipe is",
                         epilog="example: llm-power plan shortcut --pa 0.65 --pb 0.60 --rho 0.30")
    sc.add_argument("--pa", type=float, required=True, help="accuracy of model A (required)")
    sc.add_argument("--pb", type=float, required=True, help="accuracy of model B (required)")
    sc.add_argument("--rho", type=float, required=True, help="per-item correlation of the two models (required)")
    sc.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    sc.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    sc.set_defaults(run=run_shortcut)

    _add_leaderboard(psub, parent)

    rn = psub.add_parser("runs", parents=[parent], help="runs (and items) a gap needs under run-to-run noise",
                         epilog="examples: llm-power plan runs pilot.csv --run seed --delta 0.01\n"
                                "          llm-power plan runs out/ --run seed --cost-per-run 50 --max-items 5000",
                         formatter_class=HelpFormatter)
    rn.add_argument("results", nargs="+", metavar="PILOT", help="a pilot with at least 2 runs of each model")
    rn.add_argument("--run", dest="run_field", required=True, metavar="FIELD",
                    help="what names a run (a column, a harness field such as seed, a dotted path, file, folder; "
                         "required)")
    rn.add_argument("--delta", type=float, help="the gap to resolve (default: the pilot's gap of the pair)")
    rn.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two models (default: the top two by score)")
    rn.add_argument("--cost-per-item", type=float, default=1.0, help="cost of one item in one run (default 1)")
    rn.add_argument("--cost-per-run", type=float, default=0.0, help="fixed cost of one run (default 0)")
    rn.add_argument("--max-items", type=int,
                    help="the benchmark's size: plans above it are infeasible (default: no limit)")
    rn.add_argument("--max-runs", type=int, default=100, help="most runs per model considered (default 100)")
    add_reader_options(rn, missing="a run or a model lacks", records=False)
    add_run_pairing(rn)
    rn.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    rn.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    rn.set_defaults(run=run_runs)


def _add_leaderboard(psub: Any, parent: argparse.ArgumentParser) -> None:
    """``plan leaderboard``: its options."""
    lb = psub.add_parser("leaderboard", parents=[parent],
                         help="how many of a leaderboard's gaps N items resolve, and the items a goal needs",
                         epilog="examples: llm-power plan leaderboard --demo --top 10 --at-least 8\n"
                                "          llm-power plan leaderboard pilot.csv --family many-to-one "
                                "--control new-model --at-least all\n"
                                "          llm-power plan leaderboard out/ --expected 5 --correction bh --format json\n"
                                "          llm-power plan leaderboard --demo --family all --top 10 --null-below 0.005 "
                                "--correction by --expected 20",
                         formatter_class=HelpFormatter)
    lb.add_argument("results", nargs="*", metavar="PILOT", help="the pilot's results (items x models)")
    lb.add_argument("--demo", action="store_true", help="plan on the bundled MMLU-Pro data (26 models)")
    lb.add_argument("--family", default="adjacent", choices=("adjacent", "all", "many-to-one"),
                    help="the comparisons: adjacent pairs of the ranking (default), all pairs, or --control "
                         "against each other model")
    lb.add_argument("--control", metavar="MODEL", help="the model of --family many-to-one (default: none)")
    lb.add_argument("--top", type=positive_int, metavar="K", help="plan for the K best models only (default: all)")
    lb.add_argument("--correction", default="holm", metavar="METHOD",
                    choices=("none", "bonferroni", "holm", "bh", "by", "ebh", "dunnett"),
                    help="the verdicts' multiplicity procedure: none, bonferroni, holm (default), bh, by, ebh "
                         "(e-BH on anytime e-values) or dunnett (one-sided, with --family many-to-one)")
    lb.add_argument("--at-least", metavar="K",
                    help="goal: at least K gaps (or 'all') resolved with --probability (default: none)")
    lb.add_argument("--probability", type=float, default=0.8, help="of the --at-least goal (default 0.8)")
    lb.add_argument("--expected", type=float, metavar="R", help="goal: R gaps resolved on average (default: none)")
    lb.add_argument("--select", type=float, metavar="P",
                    help="also the items after which the pilot's best model is observed best with probability P "
                         "(default: none)")
    lb.add_argument("--indifference", type=float, metavar="D",
                    help="plan that selection as if every other model trailed the best by D (Bechhofer's "
                         "indifference zone; a proportion for 0/1 scores; default: the pilot's leads)")
    lb.add_argument("--null-below", type=float, metavar="D",
                    help="FDR planning: plan pilot gaps below D as true nulls and show the false resolutions "
                         "and the FDR (a proportion for 0/1 scores; default: every gap is real)")
    lb.add_argument("--count", default="pilot", choices=("pilot", "report"),
                    help="count the pilot's adjacent gaps (default) or a future report's own, its ranking formed "
                         "anew on each simulated benchmark (fewer where models are close)")
    lb.add_argument("--cluster", metavar="FIELD",
                    help="plan for items in clusters like the pilot's, judged by the clustered test: a column, "
                         "inspect metadata or lm-eval doc field (--demo: category; default: none)")
    lb.add_argument("--items", type=positive_int, nargs="+", metavar="N",
                    help="numbers of items to show (default: the pilot's, and 2, 4 and 10 times it)")
    lb.add_argument("--simulations", type=positive_int, default=10_000,
                    help="draws of the joint normal limit (default 10000)")
    lb.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (default 0)")
    lb.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    lb.add_argument("--power", type=float, default=0.8, help="the power inside each verdict's q (default 0.8)")
    add_reader_options(lb, missing="a model lacks")
    lb.set_defaults(run=run_leaderboard)


def _need(args: argparse.Namespace, *names: str) -> None:
    missing = [f"--{n}" for n in names if getattr(args, n) is None]
    if missing:
        msg = f"{' and '.join(missing)} required (or use --table)"
        raise UsageError(msg)


def _kw(args: argparse.Namespace) -> dict[str, Any]:
    return dict(alpha=args.alpha, power=args.power, alternative=args.alternative, design_effect=args.design_effect)


def run_sample_size(args: argparse.Namespace) -> int:
    """Run `plan sample-size`; returns the exit code."""
    from .. import planning as pl
    if args.table:
        return _sample_size_table(args)
    _need(args, "pa", "pb")
    family = pl.PAIRED_METHODS if args.design == "paired" else pl.UNPAIRED_METHODS
    methods = family if args.method == "all" else (args.method,)
    rows = []
    skipped = {}
    for method in methods:
        try:
            raw = pl.unrounded_sample_size(args.pa, args.pb, rho=args.rho, design=args.design, method=method,
                                           discordance=args.discordance, **_kw(args))
        except ValueError as exc:
            if args.method != "all" or method != "exact" or "exact method computes" not in str(exc):
                raise
            skipped[method] = str(exc)  # 'all': the other methods still answer
            continue
        rows.append({"design": args.design, "method": method, "n": max(1, int(pl.ceil_items(raw))), "raw": raw})
    extra = {}
    if args.design == "paired" and args.discordance is None:
        extra["unpaired_per_group"] = pl.sample_size(args.pa, args.pb, design="unpaired", **_kw(args))
        extra["shortcut"] = pl.sample_size_shortcut(args.pa, args.pb, rho=args.rho, alpha=args.alpha, power=args.power)
    payload = {"p_a": args.pa, "p_b": args.pb, "rho": args.rho, "discordance": args.discordance, "alpha": args.alpha,
               "power": args.power, "alternative": args.alternative, "design_effect": args.design_effect,
               "results": rows, **extra, **({"skipped": skipped} if skipped else {})}
    if args.format == "json":
        dump_json(document(args, payload))
        return 0
    print_view(tables.sample_size_view(rows, extra, skipped, p_a=args.pa, p_b=args.pb, rho=args.rho,
                                       design=args.design, alpha=args.alpha, power=args.power,
                                       discordance=args.discordance))
    return 0


def _sample_size_table(args: argparse.Namespace) -> int:
    from .. import planning as pl
    p, delta = args.p, args.delta
    p_a, p_b = p + delta / 2, p - delta / 2
    method = "connor" if args.method == "all" else args.method
    rows = []
    for rho in args.rhos:
        pd = pl.discordance_from_baseline(p, rho)
        raw = pl.unrounded_sample_size(p_a, p_b, discordance=pd, method=method, **_kw(args))
        rows.append({"rho": rho, "discordance": pd, "n": max(1, int(pl.ceil_items(raw))), "raw": raw})
    unpaired_raw = pl.unrounded_sample_size(p_a, p_b, design="unpaired", **_kw(args))
    if args.format == "json":
        dump_json(document(args, {"p": p, "delta": delta, "method": method, "rows": rows,
                                  "unpaired_per_group": max(1, int(pl.ceil_items(unpaired_raw))),
                                  "unpaired_raw": unpaired_raw}))
        return 0
    print_view(tables.sample_size_grid_view(rows, max(1, int(pl.ceil_items(unpaired_raw))), unpaired_raw, p=p,
                                            delta=delta, method=method, alpha=args.alpha, power=args.power))
    return 0


def run_mde(args: argparse.Namespace) -> int:
    """Run `plan mde`; returns the exit code."""
    from .. import planning as pl
    ns = args.n or ([80, 164, 198, 1319, 14000] if args.table else None)
    if ns is None:
        msg = "--n required (or use --table)"
        raise UsageError(msg)
    common = dict(alpha=args.alpha, power=args.power, alternative=args.alternative, design_effect=args.design_effect)
    if args.table:
        method = args.method
        rows = []
        for n in ns:
            row = {"n": n, "unpaired": pl.mde(n, p=args.p, design="unpaired", **common)}
            for rho in args.rhos:
                row[f"paired_rho_{rho:g}"] = pl.mde(n, p=args.p, rho=rho, method=method, **common)
            rows.append(row)
        if args.format == "json":
            dump_json(document(args, {"p": args.p, "method": method, "rows": rows}))
            return 0
        print_view(tables.mde_grid_view(rows, args.rhos, p=args.p, method=method, alpha=args.alpha,
                                        power=args.power))
        return 0
    rows = [{"n": n, "mde": pl.mde(n, p=args.p, rho=args.rho, design=args.design, method=args.method,
                                   discordance=args.discordance, **common)} for n in ns]
    if args.format == "json":
        dump_json(document(args, {"p": args.p, "rho": args.rho, "design": args.design, "method": args.method,
                                  "rows": rows}))
        return 0
    print_view(tables.mde_view(rows, p=args.p, rho=args.rho, design=args.design, method=args.method))
    return 0


def run_power(args: argparse.Namespace) -> int:
    """Run `plan power`; returns the exit code."""
    from .. import planning as pl
    values = pl.power_curve(args.n, args.pa, args.pb, rho=args.rho, alpha=args.alpha, design=args.design,
                            method=args.method, alternative=args.alternative, design_effect=args.design_effect,
                            discordance=args.discordance)
    rows = [{"n": n, "power": float(v)} for n, v in zip(args.n, values, strict=False)]
    if args.format == "json":
        dump_json(document(args, {"p_a": args.pa, "p_b": args.pb, "rho": args.rho, "method": args.method,
                                  "design": args.design, "alpha": args.alpha, "rows": rows}))
        return 0
    print_view(tables.power_view(rows, p_a=args.pa, p_b=args.pb, rho=args.rho, design=args.design,
                                 method=args.method))
    return 0


def run_shortcut(args: argparse.Namespace) -> int:
    """Run `plan shortcut`; returns the exit code."""
    from .. import planning as pl
    n_short = pl.sample_size_shortcut(args.pa, args.pb, rho=args.rho, alpha=args.alpha, power=args.power)
    wald_raw = pl.unrounded_sample_size(args.pa, args.pb, rho=args.rho, alpha=args.alpha, power=args.power)
    res = pl.shortcut_ratio(args.pa, args.pb, rho=args.rho)
    c = pl.shortcut_constant(res.p_mid, args.rho)
    payload = {"shortcut": n_short, "n_star": max(1, int(pl.ceil_items(wald_raw))), "ratio": res.ratio,
               "second_order": res.second_order, "fourth_order": res.fourth_order,
               "second_order_residual": res.second_order_residual,
               "error_constant": c, "prescreen_delta_at_0_05": pl.shortcut_prescreen(0.05, res.p_mid, args.rho)}
    if args.format == "json":
        dump_json(document(args, payload))
        return 0
    print_view(tables.shortcut_view(payload, p_a=args.pa, p_b=args.pb, rho=args.rho))
    return 0


def run_leaderboard(args: argparse.Namespace) -> int:
    """Run `plan leaderboard`; returns the exit code."""
    from ..planning import plan_leaderboard
    from ..report.terminal import say

    if bool(args.demo) == bool(args.results):
        msg = "give the pilot's results (PILOT ...) or --demo"
        raise UsageError(msg)
    if args.demo:
        from ..io.demo import load_mmlu_pro

        data = load_mmlu_pro()
        if args.cluster not in {None, "category"}:
            msg = f"the demo's items are clustered by category only; got --cluster {args.cluster}"
            raise UsageError(msg)
    else:
        from ._reader import ReaderOptions, load_matrix

        data = load_matrix(ReaderOptions.from_args(args), None)
    clusters = data.clusters if args.cluster else None
    if args.cluster and clusters is None:
        msg = f"--cluster {args.cluster}: the pilot's files carry no such field"
        raise UsageError(msg)
    at_least: Any = args.at_least
    if at_least is not None and at_least != "all":
        try:
            at_least = int(at_least)
        except ValueError:
            msg = f"--at-least takes a number of gaps or 'all'; got {args.at_least!r}"
            raise UsageError(msg) from None
    plan = plan_leaderboard(data, family=args.family.replace("-", "_"), control=args.control, top=args.top,
                            correction=args.correction, at_least=at_least, probability=args.probability,
                            expected=args.expected, n_items=args.items, alpha=args.alpha, power=args.power,
                            n_simulations=args.simulations, selection_probability=args.select,
                            indifference=args.indifference, null_below=args.null_below, cluster=clusters,
                            count=args.count, rng=args.seed)
    if args.format == "json":
        dump_json(document(args, plan.to_dict()))
        return 0
    print_view(tables.leaderboard_plan_view(plan))
    if plan.items is None:
        say("next: add --at-least K (or all) or --expected R for the items a goal needs")
    return 0


def run_runs(args: argparse.Namespace) -> int:
    """Run `plan runs`; returns the exit code."""
    from ..io import read_runs
    from ..io.detect import expand_paths
    from ..report.terminal import say
    from ..runs import plan_runs

    runs = read_runs(expand_paths(args.results), run=args.run_field, format=args.input_format, metric=args.metric,
                     on_missing=args.on_missing, item_column=args.id_column)
    plan = plan_runs(runs, args.delta, pair=args.pair, alpha=args.alpha, power=args.power,
                     cost_per_item=args.cost_per_item, cost_per_run=args.cost_per_run, max_items=args.max_items,
                     max_runs=args.max_runs, run_pairing=args.run_pairing)
    if args.format == "json":
        dump_json(document(args, plan.to_dict()))
        return 0

    print_view(tables.runs_plan_view(plan))
    if not math.isfinite(plan.items_needed):
        say("At the pilot's runs, run-to-run noise alone exceeds the gap: no number of items resolves it; "
            "more runs must average the run noise down.")
    return 0
