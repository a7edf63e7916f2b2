"""``llm-power subset plan | estimate``: run fewer items and still know the score -- which items to
run (stratified, Neyman allocation, sized for a budget, a half-width or a gap), and the
full-benchmark score and gaps of models run on them, with design-based intervals.
"""

from __future__ import annotations

import argparse
from typing import Any

from .._core.suggest import hint
from ..io.safe import parse_once
from ..report import tables
from ..report.schema import subset_gap_inference
from ..report.tables import print_view
from ..report.terminal import dump_json, safe_text, say
from ._json import document
from ._types import HelpFormatter, UsageError, add_reader_options, nonnegative_int, positive_int

HELP = "fewer items: plan a random subset of a benchmark, and estimate full-benchmark scores and gaps from it"

TARGET_HELP = ("what the intervals are of: population (default: the questions the items stand for, what compare and "
               "diagnose test) or benchmark (the mean over exactly its items)")

PLAN_EPILOG = """examples:
  llm-power subset plan leaderboard.csv --cluster category --budget 500 --out plan.csv
  llm-power subset plan leaderboard.csv --half-width 0.015 --out plan.csv
  llm-power subset plan leaderboard.csv --cluster subject --gap 0.02 --budget 2000 --out plan.csv

RESULTS are the other models' per-item results on every item (what diagnose reads): they give the
item ids, the strata (--cluster) and how much a model's score varies in each stratum. The plan
file lists the items to run in a random order, with their stratum and design weight.
"""

ESTIMATE_EPILOG = """examples:
  llm-power subset estimate new_model.csv --plan plan.csv --reference leaderboard.csv --cluster category
  llm-power subset estimate new_a.csv new_b.csv --plan plan.csv          # no leaderboard: plain estimates

RESULTS are the new models' results on the plan's items. With --reference (every item's results of
the other models, read with the --cluster the plan was made with) the leaderboard's per-item mean
is a control variate, and each new model is compared with each reference model (or --against).
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    top = sub.add_parser("subset", help=HELP, description=HELP[:1].upper() + HELP[1:] + ".")
    ssub = top.add_subparsers(dest="subset_command", metavar="WHAT")

    def overview(args: argparse.Namespace) -> int:  # noqa: ARG001 - the run signature
        top.print_help()
        return 0

    top.set_defaults(run=overview, traceback=False, quiet=False)

    p = ssub.add_parser("plan", parents=[parent], help="which items to run: a stratified random subset and its file",
                        description="Plan which items to run: a stratified random subset (Neyman allocation) sized "
                                    "for a budget, a half-width or a gap.",
                        epilog=PLAN_EPILOG, formatter_class=HelpFormatter)
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="other models' per-item results on every item (files or folders diagnose reads)")
    p.add_argument("--cluster", metavar="FIELD", help="stratify by this field (default: one stratum)")
    p.add_argument("--budget", type=positive_int, metavar="N",
                   help="items that can be run at most (default: no limit; give it, --half-width or --gap)")
    p.add_argument("--half-width", type=float, metavar="H",
                   help="the half-width wanted for a score's interval, 0.02 = 2 points (default: none)")
    p.add_argument("--gap", type=float, metavar="G",
                   help="a gap to resolve against a model with known results, with probability --power "
                        "(default: none)")
    p.add_argument("--power", type=float, default=0.8, help="power for --gap (default 0.8)")
    p.add_argument("--allocation", choices=("neyman", "proportional"), default="neyman",
                   help="items per stratum proportional to its size times its spread (neyman, default) or its size")
    p.add_argument("--no-control", dest="control", action="store_false",
                   help="plan for the plain subset mean (default: for the estimate with the leaderboard's mean as "
                        "a control variate)")
    p.add_argument("--target", choices=("population", "benchmark"), default="population", help=TARGET_HELP)
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the expected interval (default 0.95)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the draw (default 0)")
    p.add_argument("--out", dest="plan_out", required=True, metavar="FILE",
                   help="the plan file to write (CSV: item_id, stratum, weight, order; '-': stdout; required)")
    p.add_argument("--json", dest="json_out", metavar="FILE",
                   help="also write the plan's numbers as JSON (default: none)")
    add_reader_options(p, missing="some model lacks")
    p.set_defaults(run=run_plan)

    e = ssub.add_parser("estimate", parents=[parent], help="full-benchmark scores and gaps of models run on a plan",
                        description="The full-benchmark score and gaps of models run on a plan's items, with "
                                    "design-based intervals.",
                        epilog=ESTIMATE_EPILOG, formatter_class=HelpFormatter)
    e.add_argument("results", nargs="+", metavar="RESULTS", help="the new models' results on the plan's items")
    e.add_argument("--plan", required=True, metavar="FILE", help="the plan file (from subset plan; required)")
    e.add_argument("--reference", nargs="+", metavar="RESULTS",
                   help="every item's results of the other models: control variates and models to compare with "
                        "(default: none; the plan's weights give the strata)")
    e.add_argument("--cluster", metavar="FIELD",
                   help="the strata field of --reference, the one the plan was made with (default: none, one stratum)")
    e.add_argument("--against", action="append", metavar="MODEL",
                   help="compare only with this model (repeatable; default: every reference model, or with no "
                        "reference every other new model)")
    e.add_argument("--correction", choices=("bonferroni", "none"), default="bonferroni",
                   help="several gaps per model: Bonferroni-adjusted tests and intervals (default) or none")
    e.add_argument("--target", choices=("population", "benchmark"), default="population", help=TARGET_HELP)
    e.add_argument("--alpha", type=float, default=0.05, help="significance level of the gaps (default 0.05)")
    e.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the score intervals (default 0.95)")
    e.add_argument("--json", dest="json_out", metavar="FILE", help="also write the numbers as JSON (default: none)")
    add_reader_options(p=e, missing="some model lacks")
    e.set_defaults(run=run_estimate)


@parse_once()
def _matrix(raw: list[str], args: argparse.Namespace, cluster: str | None) -> tuple[Any, list[Any]]:
    """The aligned results of ``raw`` (any model count) and the files read."""
    import dataclasses

    from ..io.detect import expand_paths
    from ._reader import ReaderOptions, load_matrix

    paths = expand_paths(raw)
    opts = dataclasses.replace(ReaderOptions.from_args(args), cluster=cluster)
    return load_matrix(opts, paths, min_models=1), paths


def run_plan(args: argparse.Namespace) -> int:
    """``subset plan``: returns the exit code."""
    import numpy as np

    from ..io.detect import companion_files
    from ..report.files import check_outputs
    from ..subsets import subset_plan

    if args.budget is None and args.half_width is None and args.gap is None:  # before anything is read
        msg = "give a --budget, a --half-width or a --gap to size the plan"
        raise UsageError(msg)
    check_outputs([args.plan_out, args.json_out], args.results)
    data, paths = _matrix(args.results, args, args.cluster)
    inputs = tuple(args.results) + tuple(paths) + tuple(companion_files(paths))
    check_outputs([args.plan_out, args.json_out], inputs)
    plan = subset_plan([str(i) for i in data.items], strata=data.clusters if args.cluster else None,
                       budget=args.budget, half_width=args.half_width, gap=args.gap, power=args.power,
                       reference=np.asarray(data.scores, dtype=float), control=args.control,
                       allocation=args.allocation, target=args.target, confidence_level=args.confidence_level,
                       rng=args.seed)
    written = plan.write(args.plan_out, inputs=inputs)
    payload = {"plan": str(written), **{k: v for k, v in plan.to_dict().items() if k not in ("items", "positions",
                                                                                               "strata", "weights")}}
    if args.json_out:
        import io

        from ..report.files import write_atomic

        buf = io.StringIO()
        dump_json(document(args, payload), buf)
        write_atomic(args.json_out, buf.getvalue(), inputs=inputs)
    if args.plan_out == "-":
        return 0
    if args.format == "json":
        dump_json(document(args, payload))
        return 0
    level = f"{100 * plan.confidence_level:g}%"
    print_view(tables.subset_plan_view(plan))
    say(f"sd: the spread of a model's score in the stratum, from {plan.sd_source}.")
    say(f"Sized for {plan.target}: expected {level} interval of a score ({plan.target_of} target) "
        f"±{plan.expected_half_width:.4f} "
        f"(standard error {plan.expected_se:.4f})" + ("" if plan.target_met else
                                                        " -- the target is NOT met: the budget or the benchmark is "
                                                        "too small") + ".")
    say(f"Plan written to {safe_text(str(written))} (item_id, stratum, weight, order). Run those items, then: "
        f"llm-power subset estimate NEW_RESULTS --plan {safe_text(str(written))} --reference "
        + " ".join(safe_text(str(r)) for r in args.results) + (f" --cluster {safe_text(args.cluster)}" if args.cluster
                                                                else ""))
    return 0


def _design(plan: Any, ref: Any, plan_file: str) -> tuple[Any, Any, Any]:
    """(positions of the plan's items, strata of every item or None, the reference matrix or None)
    -- among the reference's items, or a population laid out from the plan's weights.
    """
    import numpy as np

    from .._core.errors import DataError

    sizes = {a["stratum"]: a["items"] for a in plan.allocation}
    if ref is None:  # no item beyond the plan is known: lay the strata out from the weights
        labels = np.repeat(np.array(list(sizes), dtype=object), list(sizes.values()))
        start = dict(zip(sizes, np.cumsum([0, *list(sizes.values())[:-1]]), strict=True))
        used: dict[str, int] = dict.fromkeys(sizes, 0)
        slots = []
        for s in plan.strata:
            slots.append(int(start[s]) + used[s])
            used[s] += 1
        return np.array(slots, dtype=np.int64), (labels if len(sizes) > 1 else None), None
    index = {str(item): k for k, item in enumerate(ref.items)}
    missing = [i for i in plan.items if i not in index]
    if missing:
        msg = (f"{len(missing)} of the plan's items are not in --reference (first: {missing[0]!r}); the reference "
               "must hold every item of the benchmark")
        raise DataError(msg, file=plan_file, field="item_id")
    pos = np.array([index[i] for i in plan.items], dtype=np.int64)
    if ref.n != plan.n_items:
        msg = (f"the plan is of a benchmark of {plan.n_items:,} items (its weights add up to that), --reference has "
               f"{ref.n:,}")
        raise DataError(msg, file=plan_file, field="weight")
    if len(sizes) == 1:
        return pos, None, ref
    if ref.clusters is None:
        msg = "the plan has several strata: give --cluster, the field of --reference the plan was made with"
        raise UsageError(msg)
    labels = np.array([str(c) for c in ref.clusters], dtype=object)
    for s, k in zip(plan.strata, pos, strict=True):
        if labels[k] != s:
            msg = f"item {ref.items[k]!r} is in stratum {s!r} in the plan and {labels[k]!r} in --reference --cluster"
            raise DataError(msg, file=plan_file, field="stratum")
    counts = dict(zip(*np.unique(labels, return_counts=True), strict=True))
    for s, size in sizes.items():
        if counts.get(s, 0) != size:
            msg = f"stratum {s!r} has {size:,} items by the plan's weights and {counts.get(s, 0):,} in --reference"
            raise DataError(msg, file=plan_file, field="weight")
    return pos, labels, ref


def estimate(args: argparse.Namespace) -> dict[str, Any]:
    """Every number ``subset estimate`` prints, as plain data."""
    import numpy as np

    from .._core.errors import DataError
    from ..subsets import read_subset_plan, subset_compare, subset_estimate

    plan = read_subset_plan(args.plan)
    new, _ = _matrix(args.results, args, None)
    ref = _matrix(args.reference, args, args.cluster)[0] if args.reference else None
    positions, strata, ref = _design(plan, ref, args.plan)
    row = {str(item): k for k, item in enumerate(new.items)}
    absent = [i for i in plan.items if i not in row]
    if absent:
        msg = f"{len(absent)} of the plan's {plan.n:,} items have no result (first: {absent[0]!r}); run every item"
        raise DataError(msg, file=", ".join(map(str, args.results)))
    take = np.array([row[i] for i in plan.items], dtype=np.int64)
    scores = np.asarray(new.scores, dtype=float)[take]
    ref_x = None if ref is None else np.asarray(ref.scores, dtype=float)
    ref_models = [] if ref is None else [str(m) for m in ref.models]
    new_models = [str(m) for m in new.models]
    both = [m for m in new_models if m in ref_models]
    if both:
        from .._core.errors import LLMPowerWarning, warn

        warn(f"{', '.join(map(repr, both[:3]))}{' ...' if len(both) > 3 else ''} in both the new results and the "
             "reference: each gap compares a model's subset scores with the other's reference scores, so 'A vs B' "
             "and 'B vs A' rest on different data and need not agree (name the reference models with --against, "
             "or leave a model out of one side)", LLMPowerWarning)
    extra = new.n - plan.n
    out: dict[str, Any] = {"plan": args.plan, "n": plan.n, "n_items": plan.n_items, "models": [], "gaps": [],
                           "ignored_items": extra, "target": args.target,
                           "binary": bool(np.isin(scores, (0.0, 1.0)).all() and (ref_x is None
                                          or np.isin(ref_x[~np.isnan(ref_x)], (0.0, 1.0)).all()))}
    for j, name in enumerate(new_models):
        others = [k for k, m in enumerate(ref_models) if m != name]  # a model is never its own control variate
        reference = ref_x[:, others] if ref_x is not None and others else None
        res = subset_estimate(scores[:, j], positions, reference=reference, strata=strata, n_items=plan.n_items,
                              target=args.target, confidence_level=args.confidence_level)
        out["models"].append({"model": name, **res.to_dict()})
        if args.against:
            unknown = [a for a in args.against if a not in ref_models and a not in new_models]
            if unknown:
                msg = (f"--against {unknown[0]!r}: no such model{hint(unknown[0], [*ref_models, *new_models])} "
                       f"(reference: {ref_models}; new: {new_models})")
                raise DataError(msg)
            targets = [a for a in args.against if a != name]
        else:
            # with no reference the new models are compared with each other, each pair once
            targets = [m for m in ref_models if m != name] if ref_models else new_models[j + 1:]
        k = max(len(targets) if ref_models or args.against else len(new_models) - 1, 1)
        alpha = args.alpha / k if args.correction == "bonferroni" else args.alpha
        for target in targets:
            if target in ref_models and ref_x is not None:
                other = ref_x[:, ref_models.index(target)]
            else:
                other = scores[:, new_models.index(target)]
            gap = subset_compare(scores[:, j], positions, other, reference=reference, strata=strata,
                                 n_items=plan.n_items, names=(name, target), alpha=alpha, target=args.target)
            out["gaps"].append({"model": name, "against": target, **gap.to_dict()})
    out["correction"] = args.correction
    for row in out["gaps"]:
        row["inference"] = subset_gap_inference(row, args.correction)
    return out


def run_estimate(args: argparse.Namespace) -> int:
    """``subset estimate``: returns the exit code."""
    from ..io.detect import companion_files, expand_paths
    from ..report.files import check_outputs, write_atomic

    inputs = [*args.results, args.plan, *(args.reference or [])]
    check_outputs([args.json_out], inputs)
    paths = expand_paths([*args.results, *(args.reference or [])])
    check_outputs([args.json_out], (*inputs, *paths, *companion_files(paths)))
    out = estimate(args)
    if args.json_out:
        import io

        buf = io.StringIO()
        dump_json(document(args, out), buf)
        write_atomic(args.json_out, buf.getvalue(), inputs=(*inputs, *paths))
    if args.format == "json":
        dump_json(document(args, out))
        return 0
    print_view(tables.subset_estimate_view(out, confidence_level=args.confidence_level))
    if out["gaps"]:
        several = any(g["alpha"] < args.alpha for g in out["gaps"])
        corr = ("Bonferroni over each model's comparisons: a model compared with k others is tested at alpha / k "
                f"(alpha = {args.alpha:g}), its intervals at 1 - alpha / k" if several
                else f"alpha = {args.alpha:g}, intervals at 1 - alpha")
        _print_gaps(out["gaps"], f"{corr}; a verdict (the model against the other) is given exactly when the "
                                 "interval leaves out 0.", binary=out["binary"])
    if out["ignored_items"] > 0:
        say(f"{out['ignored_items']:,} item(s) of RESULTS are not in the plan and were left out (the design is the "
            "plan's draw).")
    return 0


def _print_gaps(gaps: list[dict[str, Any]], caption: str, *, binary: bool = False) -> None:
    """The gaps table at the terminal's width (``report.tables.subset_gap_variants``), else one line per gap."""
    from ..report.terminal_report import print_fitted_table

    title = "Gaps estimated from the subset" + (" (points)" if binary else "")
    if not print_fitted_table(title, tables.subset_gap_variants(gaps, binary=binary), caption=caption):
        say(title)
        for g in gaps:
            say(f"{g['model']} vs {g['against']}: gap {tables.subset_gap_text(g, binary)}, "
                f"p {tables.fmt_p_short(g['pvalue'])}, {g['verdict']}")
        say(caption)


