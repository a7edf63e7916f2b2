"""``llm-power aggregate RESULTS...``: what lm-eval aggregate scores alone can tell (no per-item samples)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..report import tables
from ..report.tables import print_view
from ..report.terminal import dump_json, say
from ._json import document
from ._types import HelpFormatter, UsageError

HELP = ("aggregate scores (lm-eval results_*.json without --log_samples, Every Eval Ever records, Hugging Face "
        ".eval_results, leaderboard tables such as AlpacaEval's CSVs): intervals, MDE, and what a paired test "
        "could say")


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("aggregate", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:],
                       epilog="examples: llm-power aggregate out/model-a/ out/model-b/ --metric acc\n"
                              "          llm-power aggregate org__model-a/ org__model-b/ --items gpqa_diamond=198\n"
                              "          llm-power aggregate weighted_alpaca_eval_gpt4_turbo_leaderboard.csv",
                       formatter_class=HelpFormatter)
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="lm-eval results_*.json, Every Eval Ever records, Hugging Face eval results, or folders "
                        "holding them; leaderboard tables (CSV/TSV: a model and a score column, with a standard "
                        "error or a count column)")
    p.add_argument("--metric", metavar="NAME", help="keep one metric, e.g. acc (default: every metric)")
    p.add_argument("--items", action="append", metavar="[TASK=]N",
                   help="the benchmark's number of items, for results that do not record it (Hugging Face eval "
                        "results, most Every Eval Ever 0.2 records, tables without a count): N for every task "
                        "or TASK=N, repeatable (default: none)")
    p.add_argument("--filter", help="keep one lm-eval filter, e.g. strict-match (default: every filter)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power of MDE and N* (default 0.8)")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the score intervals (default 0.95)")
    p.set_defaults(run=run)


def _items(values: list[str] | None) -> int | dict[str, int] | None:
    """``--items``: one count for every task, or TASK=N pairs."""
    if not values:
        return None
    counts: dict[str, int] = {}
    for text in values:
        task, _, raw = text.rpartition("=")
        try:
            n = int(raw)
        except ValueError:
            n = 0
        if n < 1:
            msg = f"--items {text!r}: give N or TASK=N with N a positive whole number"
            raise UsageError(msg)
        if n > 2**53:
            msg = f"--items {text!r}: at most 2**53 items (a count beyond it is not exact in floating point)"
            raise UsageError(msg)
        if not task:
            if len(values) > 1:
                msg = "--items N (every task) cannot be mixed with other --items"
                raise UsageError(msg)
            return n
        counts[task] = n
    return counts


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    import warnings

    from .._core.errors import InfeasibleDesignWarning
    from .._core.format import unique_short_names
    from ..io.aggregate import read_aggregates
    from ..planning import aggregate_interval, mde, paired_bounds

    scores = read_aggregates(args.results, metric=args.metric, filter=args.filter, items=_items(args.items))
    models = list(dict.fromkeys(s.model for s in scores))
    short = dict(zip(models, unique_short_names(models, 36), strict=True))  # a table per model or per task: room
    payload: dict[str, list[dict[str, Any]]] = {"scores": [], "pairs": []}
    for s in scores:
        lo, hi, kind = aggregate_interval(s.value, s.n, s.stderr, args.confidence_level)
        binary = kind in ("wilson", "wilson bound")
        detect = math.nan
        if binary:
            with warnings.catch_warnings():  # a score at 0 or 1 leaves no room to disagree: no MDE ("—")
                warnings.simplefilter("ignore", InfeasibleDesignWarning)
                detect = float(mde(s.n, p=min(max(s.value, 1e-9), 1 - 1e-9), rho=0.0, alpha=args.alpha,
                                   power=args.power))
        payload["scores"].append({**s._asdict(), "ci_low": lo, "ci_high": hi, "interval": kind, "mde_rho0": detect})
    if len(models) == 2:
        by_key: dict[tuple[str, str, str], dict[str, Any]] = {}
        for s in scores:
            by_key.setdefault((s.task, s.metric, s.filter), {})[s.model] = s
        for (task, metric, filt), pair in by_key.items():
            if len(pair) != 2:
                continue
            a, b = pair[models[0]], pair[models[1]]
            if a.n != b.n or not (0 <= a.value <= 1 and 0 <= b.value <= 1):
                continue
            res = paired_bounds(a.value, b.value, a.n, alpha=args.alpha, power=args.power)
            payload["pairs"].append({"task": task, "metric": metric, "filter": filt, **res.to_dict()})
    if args.format == "json":
        dump_json(document(args, payload))
        return 0
    for view in tables.aggregate_scores_views(payload["scores"], short, confidence_level=args.confidence_level,
                                              alpha=args.alpha, power=args.power):
        print_view(view)
    if payload["pairs"]:
        print_view(tables.aggregate_pairs_view(payload["pairs"], short[models[0]], short[models[1]]))
        if any(p["verdict"] == "undetermined" for p in payload["pairs"]):
            say("Aggregate scores cannot settle an 'undetermined' comparison: it depends on how often the models "
                "disagree, which only per-item results show. Re-run lm-eval with --log_samples and use "
                "`llm-power compare` or `llm-power gate`.")
    elif len(models) > 2:
        say(f"{len(models)} models: give two to see the range of their paired test.")
    return 0
