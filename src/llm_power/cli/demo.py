"""``llm-power demo``: the resolution report on real MMLU-Pro per-question results (bundled)."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.tables import error_bars_view, print_view
from ..report.terminal import dump_json
from ._json import document
from ._types import positive_int
from .diagnose import add_receipt_option, run_diagnosis

HELP = "resolution report on real MMLU-Pro results (26 models, 12,032 questions), writes report.html"

#: (items, an example benchmark of that size)
BENCHMARKS = (
    (30, "AIME 2024"),
    (80, "MT-Bench"),
    (164, "HumanEval"),
    (198, "GPQA Diamond"),
    (1_319, "GSM8K test"),
    (14_042, "MMLU test"),
)


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("demo", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:] + ".")
    p.add_argument("--html", dest="html_out", default="report.html", metavar="FILE",
                   help="where to write the HTML report (default report.html)")
    p.add_argument("--no-html", dest="html_out", action="store_const", const=None,
                   help="print the report only, write no HTML (and load no plotting library)")
    p.add_argument("--top", type=positive_int, default=10, metavar="K", help="the K best models (default 10)")
    p.add_argument("--error-bars", action="store_true", help="instead: the error bars of common benchmark sizes")
    p.add_argument("--wide", action="store_true", help="every column of the pairs table at full width")
    add_receipt_option(p)
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def error_bars(confidence_level: float) -> dict[str, Any]:
    """The Wilson interval of a score of 80% and of 50% at the benchmark sizes of the demo table: its
    half-width and its reach below and above the score (unequal at 80%: the interval is asymmetric).
    """
    from ..intervals import half_width, proportion_ci

    rows = []
    for n, name in BENCHMARKS:
        row: dict[str, Any] = {"benchmark": name, "n": n}
        for p, key in ((0.8, "0_8"), (0.5, "0_5")):
            k = round(p * n)  # the nearest score the benchmark can give (half_width's rule)
            lo, hi = proportion_ci(k, n, confidence_level=confidence_level)
            row[f"half_width_at_{key}"] = half_width(n, p, confidence_level=confidence_level)
            row[f"below_at_{key}"], row[f"above_at_{key}"] = k / n - lo, hi - k / n
        rows.append(row)
    return {"method": "wilson", "confidence_level": confidence_level, "benchmarks": rows}


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..io.demo import load_mmlu_pro
    if args.error_bars:
        payload = error_bars(args.confidence_level)
        if args.format == "json":
            dump_json(document(args, payload))
            return 0
        print_view(error_bars_view(payload, confidence_level=args.confidence_level))
        return 0
    data = load_mmlu_pro()
    models, x, category = data.models, data.scores, data.clusters
    args.cluster, args.seed = DEMO_CLUSTER, 0
    args.json_out = args.markdown_out = None
    args.wide = getattr(args, "wide", False)
    from ..io.demo import mmlu_pro_path

    return run_diagnosis(args, models, x, category, source="bundled MMLU-Pro results (llm_power/data)",
                         inputs=(mmlu_pro_path(),),  # its SHA-256 in a --receipt
                         note=DEMO_NOTE, title=f"MMLU-Pro: which of the top {args.top} gaps are real?",
                         next_line="llm-power diagnose YOUR_RESULTS --cluster FIELD --html report.html",
                         options=demo_options(top=args.top, confidence_level=args.confidence_level))


#: the cluster field of the bundled data, and the words about it under every report of it
DEMO_CLUSTER = "category"
DEMO_NOTE = ("Data: MMLU-Pro per-question results published by the MMLU-Pro authors (TIGER-AI-Lab, Apache-2.0; "
             "data set MIT), strict correctness, 14 subject categories as clusters.")


def demo_options(*, top: int | None = 10, confidence_level: float = 0.95, **given: Any) -> Any:
    """The demo's options (also ``llm-power rank --demo``'s): the top models, adjacent pairs, Holm's
    correction and the anytime regime beside the clusters, the rest at diagnose's defaults or as
    ``given`` (``rank --demo --cluster-method wild``: the clustered test chosen).
    """
    from ..resolution import DiagnoseOptions

    return DiagnoseOptions.create(**{"top": top, "correction": "holm", "anytime": True,
                                     "confidence_level": confidence_level, **given})
