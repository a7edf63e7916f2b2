"""``llm-power demo``: the resolution report on real MMLU-Pro per-question results (bundled)."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.terminal import dump_json, print_table
from ._types import positive_int
from .diagnose import run_diagnosis

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
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def error_bars(confidence_level: float) -> dict[str, Any]:
    """Half-widths of the Wilson interval at the benchmark sizes of the demo table."""
    from ..intervals import half_width
    rows = [{"benchmark": name, "n": n, "half_width_at_0_8": half_width(n, 0.8, confidence_level=confidence_level),
             "half_width_at_0_5": half_width(n, 0.5, confidence_level=confidence_level)} for n, name in BENCHMARKS]
    return {"method": "wilson", "confidence_level": confidence_level, "benchmarks": rows}


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..io.demo import load_mmlu_pro
    if args.error_bars:
        payload = error_bars(args.confidence_level)
        if args.format == "json":
            dump_json(payload)
            return 0
        rows = [[r["benchmark"], f"{r['n']:,}", f"±{100 * r['half_width_at_0_8']:.1f}",
                 f"±{100 * r['half_width_at_0_5']:.1f}"] for r in payload["benchmarks"]]
        print_table(f"Error bars of one benchmark score ({100 * args.confidence_level:g}% Wilson interval, in points)",
                    ["benchmark (example)", "items", "score 80%", "score 50%"], rows, right_align=(1, 2, 3))
        return 0
    data = load_mmlu_pro()
    models, x, category = data.models, data.scores, data.clusters
    args.cluster = "category"
    args.pairs, args.correction, args.anytime = "adjacent", "holm", True
    args.alpha, args.power, args.cluster_resamples, args.seed = 0.05, 0.8, 1000, 0
    args.design_effect = "robust"
    args.json_out = args.markdown_out = None
    args.wide = getattr(args, "wide", False)
    note = ("Data: MMLU-Pro per-question results published by the MMLU-Pro authors (TIGER-AI-Lab, Apache-2.0; "
            "data set MIT), strict correctness, 14 subject categories as clusters.")
    return run_diagnosis(args, models, x, category, source="bundled MMLU-Pro results (llm_power/data)",
                         inputs=(), note=note, title=f"MMLU-Pro: which of the top {args.top} gaps are real?",
                         next_line="llm-power diagnose YOUR_RESULTS --cluster FIELD --html report.html")
