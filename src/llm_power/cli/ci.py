"""``llm-power ci K N``: confidence interval(s) for one score."""

from __future__ import annotations

import argparse
import warnings
from typing import Any

from .._core.options import INTERVAL_METHODS
from ..report.tables import interval_view, print_view
from ..report.terminal import dump_json
from ._json import document

HELP = "confidence interval for one score: K correct out of N items"


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser(
        "ci", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:] + ".",
        epilog="example: llm-power ci 17 20 --method all",
    )
    p.add_argument("k", metavar="K", type=int, help="number of items scored correct")
    p.add_argument("n", metavar="N", type=int, help="number of items")
    p.add_argument(
        "--method", default="wilson", choices=(*INTERVAL_METHODS, "all"), metavar="METHOD",
        help="interval method: " + ", ".join(INTERVAL_METHODS) + " (default wilson), or all (every method)",
    )
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"),
                   help="two-sided (default); less = upper bound only; greater = lower bound only")
    p.set_defaults(run=run)


def compute(k: int, n: int, methods: tuple[str, ...], confidence_level: float, alternative: str) -> dict[str, Any]:
    """The payload shared by the table and JSON output."""
    from ..intervals import proportion_ci
    rows = []
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the zero-width Wald case is reported in `note`
            ci = proportion_ci(k, n, method=method, confidence_level=confidence_level,
                               alternative=alternative)
            raw = proportion_ci(k, n, method=method, confidence_level=confidence_level,
                                alternative=alternative, clip=False)
        note = ""
        if raw.low < 0 or raw.high > 1:
            note = f"raw bounds [{raw.low:.4f}, {raw.high:.4f}] leave [0, 1]; clipped"
        if method == "wald" and k in (0, n):
            note = "zero width at K = 0 or K = N: Wald claims certainty; do not use"
        rows.append({"method": method, "low": ci.low, "high": ci.high,
                     "raw": {"low": raw.low, "high": raw.high}, "note": note})
    return {"k": k, "n": n, "estimate": k / n, "confidence_level": confidence_level,
            "alternative": alternative, "intervals": rows}


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    methods = INTERVAL_METHODS if args.method == "all" else (args.method,)
    payload = compute(args.k, args.n, methods, args.confidence_level, args.alternative)
    if args.format == "json":
        dump_json(document(args, payload))
        return 0
    print_view(interval_view(payload, k=args.k, n=args.n, confidence_level=args.confidence_level,
                             alternative=args.alternative))
    return 0
