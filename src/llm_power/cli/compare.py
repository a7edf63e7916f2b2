"""``llm-power compare A B``: paired comparison of two models' per-item results."""

from __future__ import annotations

import argparse
from typing import Any

from .._format import fmt_gap, fmt_n_star, fmt_p, fmt_score
from ..comparison import COMPARE_METHODS, compare
from ..errors import DataError
from ..io import align_pair, read_item_scores, read_wide_scores
from ._types import nonnegative_int, positive_int
from ..report.terminal import dump_json, print_table

HELP = "is model A better than model B on the same items? (paired test, CI, resolution)"


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "compare", parents=[parent], help=HELP, description=HELP.capitalize(),
        epilog="examples: llm-power compare a.csv b.csv --metric correct\n"
               "          llm-power compare scores.csv --models gpt-x claude-y --cluster subject",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="two per-item files (CSV/TSV/JSONL: item id + score), or one wide file with --models")
    p.add_argument("--models", nargs=2, metavar=("A", "B"), help="the two model columns of one wide file")
    p.add_argument("--metric", "--score-column", dest="metric", metavar="COL",
                   help="score column (default: score, correct, acc, ...)")
    p.add_argument("--id-column", metavar="COL", help="item id column (default: item, item_id, id, doc_id, ...)")
    p.add_argument("--cluster", metavar="COL",
                   help="cluster label column (subject, source): cluster-robust test, interval and N*")
    p.add_argument("--design-effect", default="robust", choices=("robust", "cr1", "anova", "paper"),
                   help="with --cluster: CR2 with Imbens-Kolesar df (default), CR1, ANOVA/Kish or the paper's form")
    p.add_argument("--method", default="auto", choices=COMPARE_METHODS + ("cluster_t",),
                   help="test (default auto: Dror et al. 2018 tree; with --cluster the cluster-robust t test)")
    p.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"))
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--power", type=float, default=0.8)
    p.add_argument("--n-resamples", type=positive_int, default=10_000, metavar="B")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed for resampling tests (default 0)")
    p.set_defaults(run=run)


def load(args: argparse.Namespace):
    if args.models:
        if len(args.files) != 1:
            raise DataError(f"--models reads one wide file; got {len(args.files)} files")
        first, second = read_wide_scores(args.files[0], args.models, item_column=args.id_column,
                                         cluster_column=args.cluster)
        names = list(args.models)
    else:
        if len(args.files) != 2:
            raise DataError(f"give two per-item files (A and B), or one wide file with --models; got {len(args.files)}")
        first, second = (read_item_scores(f, item_column=args.id_column, score_column=args.metric,
                                          cluster_column=args.cluster, cluster_required=False)
                         for f in args.files)
        if args.cluster and first.clusters is None and second.clusters is None:
            raise DataError(f"no cluster column {args.cluster!r} in either file")
        names = list(args.files)
    items, a, b, clusters = align_pair(first, second)
    return names, items, a, b, clusters


def run(args: argparse.Namespace) -> int:
    names, items, a, b, clusters = load(args)
    res = compare(a, b, method=args.method, cluster=clusters, alternative=args.alternative,
                  confidence_level=args.confidence_level, alpha=args.alpha, power=args.power,
                  n_resamples=args.n_resamples, design_effect=args.design_effect, rng=args.seed)
    if args.format == "json":
        dump_json({"model_a": names[0], "model_b": names[1], **res.to_dict()})
        return 0
    ci = res.confidence_interval()
    binary = res.binary
    unit = "points" if binary else "score units"
    scale = 100 if binary else 1
    if res.resolved:
        verdict = "resolved: q ≥ 1 and the test rejects at α"
    elif res.q >= 1 and res.pvalue > res.alpha:
        verdict = "NOT resolved: q ≥ 1 but the test does not reject at α"
    else:
        verdict = "NOT resolved: the benchmark is too small to tell"
    rows = [
        ["A", names[0], fmt_score(res.mean_a, binary)],
        ["B", names[1], fmt_score(res.mean_b, binary)],
        ["gap A − B", f"{fmt_gap(res.delta, binary)} {unit}",
         f"{100 * res.confidence_level:g}% CI [{fmt_gap(ci.low, binary)}, {fmt_gap(ci.high, binary)}] ({res.ci_method})"],
        ["test", res.method, res.reason],
        ["p-value", fmt_p(res.pvalue, 4), f"{res.alternative}; statistic {res.statistic:.4g}"],
    ]
    if res.b is not None:
        rows.append(["discordant items", f"b = {res.b}, c = {res.c}", "A only right / B only right"])
    if res.n_clusters:
        rows.append(["clusters", f"{res.n_clusters}", f"design effect {res.design_effect:.3g} "
                     f"({res.design_effect_method}), t with {res.cluster_df:.3g} df"])
    rows += [
        ["SE paired / unpaired", f"{scale * res.se_paired:.4g} / {scale * res.se_unpaired:.4g} {unit}",
         f"φ = {res.phi:.2f}: pairing keeps {res.se_paired / res.se_unpaired:.0%} of the unpaired SE"
         if res.se_unpaired > 0 else ""],
        ["N* for this gap", fmt_n_star(res.n_star), f"items to detect it at α = {res.alpha:g}, power {res.power:g} "
         f"({res.regime})"],
        ["q = N / N*", f"{res.q:.3g}", verdict],
        ["MDE", f"{fmt_gap(res.mde, binary, sign=False)} {unit}",
         f"smallest gap these {res.n:,} items detect with power {res.power:g}"],
    ]
    print_table(f"Paired comparison on {res.n:,} items", ["", "value", "note"], rows)
    return 0
