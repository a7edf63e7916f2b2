"""``llm-power coverage --n N --p P``: exact coverage of interval methods."""

from __future__ import annotations

import argparse
from typing import Any

from .._core.options import INTERVAL_METHODS
from ..report.tables import coverage_view, print_view
from ..report.terminal import dump_json
from ._json import document

HELP = "exact coverage probability of interval methods at true accuracy P on N items"


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser(
        "coverage", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:] + ".",
        epilog="example: llm-power coverage --n 10 30 100 --p 0.02 0.5",
    )
    p.add_argument("--n", type=int, nargs="+", required=True, metavar="N", help="number(s) of items (required)")
    p.add_argument("--p", type=float, nargs="+", required=True, metavar="P",
                   help="true accuracy (or accuracies) in [0, 1] (required)")
    p.add_argument("--method", default="all", choices=(*INTERVAL_METHODS, "all"), metavar="METHOD",
                   help="interval method: " + ", ".join(INTERVAL_METHODS) + ", or all (default: all)")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="nominal level in (0, 1) (default 0.95)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..intervals import coverage
    methods = INTERVAL_METHODS if args.method == "all" else (args.method,)
    records = []
    for n in args.n:
        for p in args.p:
            cov = {m: coverage(n, p, method=m, confidence_level=args.confidence_level) for m in methods}
            records.append({"n": n, "p": p, "coverage": cov})
    if args.format == "json":
        dump_json(document(args, {"confidence_level": args.confidence_level, "results": records}))
        return 0
    print_view(coverage_view(records, methods, args.confidence_level))
    return 0
