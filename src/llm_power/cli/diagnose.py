"""``llm-power diagnose FILE``: the leaderboard resolution report on a wide per-item file."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..io import read_wide_matrix
from ..report.terminal import dump_json, print_table
from ..resolution import CORRECTIONS, diagnose

HELP = "leaderboard resolution: which gaps between models can the benchmark resolve?"


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "diagnose", parents=[parent], help=HELP, description=HELP.capitalize(),
        epilog="example: llm-power diagnose scores.csv --cluster subject --correction holm --anytime",
    )
    p.add_argument("file", metavar="FILE", help="wide per-item file (CSV/TSV/JSONL/Parquet): item id, one column per model")
    p.add_argument("--models", nargs="+", metavar="M", help="model columns (default: every column but item id and cluster)")
    p.add_argument("--id-column", metavar="COL", help="item id column (default: item, item_id, id, doc_id, ...)")
    p.add_argument("--cluster", metavar="COL", help="cluster label column (subject, category, source)")
    p.add_argument("--pairs", default="adjacent", choices=("adjacent", "all"))
    p.add_argument("--correction", choices=CORRECTIONS, help="multiplicity stress test across the pairs")
    p.add_argument("--anytime", action="store_true", help="anytime-valid (continuously monitored) stress test")
    p.add_argument("--top", type=int, metavar="K", help="only the K best models")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--power", type=float, default=0.8)
    p.add_argument("--cluster-resamples", type=int, default=1000, metavar="B")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=run)


def _num(value: float | None, fmt: str) -> str:
    if value is None:
        return ""
    if math.isinf(value):
        return "∞"
    return format(value, fmt)


def run(args: argparse.Namespace) -> int:
    items, names, x, clusters = read_wide_matrix(args.file, item_column=args.id_column, cluster_column=args.cluster,
                                                 models=args.models)
    if args.top is not None:
        if args.top < 2:
            raise ValueError(f"--top must be at least 2; got {args.top}")
        order = (-x.mean(axis=0)).argsort(kind="stable")[: args.top]
        x = x[:, order]
        names = [names[k] for k in order]
    res = diagnose(x, models=names, cluster=clusters, pairs=args.pairs, alpha=args.alpha, power=args.power,
                   correction=args.correction, anytime=args.anytime, cluster_resamples=args.cluster_resamples,
                   rng=args.seed)
    if args.format == "json":
        dump_json({"file": args.file, **res.to_dict()})
        return 0
    cols = ["#", "model A", "model B", "gap (pts)", "p", "N*", "q", "IID"]
    if args.correction:
        cols += ["q " + args.correction, args.correction]
    if clusters is not None:
        cols += ["DE", "q cluster", "cluster"]
    if args.anytime:
        cols += ["q anytime", "anytime"]
    rows = []
    for p in res.pairs:
        row = [str(p.rank_a), p.model_a, p.model_b, f"{100 * p.delta:+.2f}", f"{p.pvalue:.2g}",
               _num(p.n_star, ",.0f"), f"{p.q:.2f}", "✓" if p.resolved else "✗"]
        if args.correction:
            row += [f"{p.q_corrected:.2f}", "✓" if p.resolved_corrected else "✗"]
        if clusters is not None:
            row += [f"{p.design_effect:.1f}", f"{p.q_cluster:.2f}", "✓" if p.resolved_cluster else "✗"]
        if args.anytime:
            row += [f"{p.q_anytime:.2f}", "✓" if p.resolved_anytime else "✗"]
        rows.append(row)
    m = len(res.pairs)
    verdicts = "; ".join(f"{key}: {count} of {m} unresolved" for key, count in res.n_unresolved.items())
    print_table(
        f"Resolution of {m} {args.pairs} pairs, {len(res.models)} models, {res.n:,} items "
        f"(α = {args.alpha:g}, power {args.power:g})",
        cols, rows, right_align=tuple(k for k, c in enumerate(cols) if c not in ("model A", "model B")),
        caption=f"{verdicts}. q = N/N*: q ≥ 1 resolved (✓); q < 1 the benchmark is too small to tell (✗), "
                "which does not mean the models are equal.",
    )
    if res.cluster_robustness:
        cr = res.cluster_robustness
        print(f"Cluster bootstrap ({cr['n_resamples']} resamples of the {res.settings['n_clusters']} clusters): "
              f"unresolved count median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}].")
    strict = "cluster" if "cluster" in res.tie_groups else "iid"
    groups = [g for g in res.tie_groups[strict] if len(g) > 1]
    if groups:
        print(f"Statistical ties ({strict}): " + "; ".join(" ≈ ".join(g) for g in groups))
    return 0
