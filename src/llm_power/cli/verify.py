"""``llm-power verify FILE``: re-check a receipt -- every verdict recomputed from its statistics alone."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.terminal import dump_json, safe_text
from ._types import HelpFormatter, positive_int

HELP = "re-check a receipt of diagnose: every verdict recomputed from its statistics, without the items"
EPILOG = """examples:
  llm-power diagnose scores.csv --cluster category --correction holm --receipt receipt.json
  llm-power verify receipt.json                         # exit 0: every verdict reproduced
  llm-power verify receipt.json --items scores.csv      # and the inputs hash as recorded
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("verify", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:] + ".",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("receipt", metavar="FILE", help="a receipt written by llm-power diagnose --receipt FILE")
    p.add_argument("--items", nargs="+", metavar="INPUT",
                   help="the input files: re-hash each and check it against the receipt's SHA-256 (default: "
                        "the inputs are not checked)")
    p.add_argument("--max-lines", type=positive_int, default=50, metavar="N",
                   help="print at most N mismatch lines (default 50)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand: 0 when every value matches, 1 with one line per mismatch."""
    from ..integrations.receipts import verify_receipt

    check = verify_receipt(args.receipt, items=args.items)
    if args.format == "json":
        from ._json import document

        dump_json(document(args, check.to_dict()))
    else:
        for line in check.summary(max_lines=args.max_lines).splitlines():
            print(safe_text(line))
    return 0 if check.ok else 1
