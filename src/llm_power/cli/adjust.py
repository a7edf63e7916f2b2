"""``llm-power adjust P...``: multiplicity-adjusted p-values (Bonferroni, Holm, Hochberg, BH, BY)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .._core.options import ADJUST_METHODS
from ..report.tables import adjust_view, print_view
from ..report.terminal import dump_json
from ._json import document
from ._types import HelpFormatter, UsageError

HELP = "adjust p-values for many comparisons (Holm by default; Bonferroni, Hochberg, BH, BY)"


def _pvalue(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        msg = f"not a number: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        msg = f"a p-value must be in [0, 1]; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("adjust", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:] + ".",
                       epilog="example: llm-power adjust 0.01 0.04 0.03 --method holm",
                       formatter_class=HelpFormatter)
    p.add_argument("pvalues", nargs="+", type=_pvalue, metavar="P", help="raw p-values of one family")
    p.add_argument("--method", default="holm", choices=ADJUST_METHODS,
                   help="holm (default; FWER, step-down), bonferroni, hochberg (FWER, step-up), "
                        "bh (FDR, Benjamini-Hochberg), by (FDR under any dependence)")
    p.add_argument("--alpha", type=float, default=0.05, help="level for the 'rejected' column (default 0.05)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..multiplicity import adjust_pvalues
    if not 0.0 < args.alpha < 1.0:
        msg = f"`--alpha` must be in (0, 1); got {args.alpha!r}."
        raise UsageError(msg)
    adjusted = adjust_pvalues(args.pvalues, method=args.method)
    rejected = [bool(a <= args.alpha) for a in adjusted]
    if args.format == "json":
        dump_json(document(args, {"method": args.method, "alpha": args.alpha, "pvalues": list(args.pvalues),
                                   "adjusted": adjusted, "rejected": rejected}))
        return 0
    print_view(adjust_view(args.pvalues, adjusted, rejected, method=args.method, alpha=args.alpha))
    return 0
