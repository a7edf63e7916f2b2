"""``llm-power demo``: what llm-power says about real benchmark sizes, computed live."""

from __future__ import annotations

import argparse
from typing import Any

from ..intervals import half_width, n_for_half_width
from ..report.terminal import dump_json, print_table

HELP = "show the error bars of common LLM benchmarks (computed live)"

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
    p = sub.add_parser("demo", parents=[parent], help=HELP, description=HELP.capitalize() + ".")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="confidence level in (0, 1) (default 0.95)")
    p.set_defaults(run=run)


def compute(confidence_level: float) -> dict:
    rows = []
    for n, name in BENCHMARKS:
        rows.append({
            "benchmark": name,
            "n": n,
            "half_width_at_0_8": half_width(n, 0.8, confidence_level=confidence_level),
            "half_width_at_0_5": half_width(n, 0.5, confidence_level=confidence_level),
        })
    needed = {f"{w:g}": n_for_half_width(w, 0.8, confidence_level=confidence_level)
              for w in (0.05, 0.02, 0.01)}
    return {"method": "wilson", "confidence_level": confidence_level, "benchmarks": rows,
            "items_needed_at_0_8": needed}


def run(args: argparse.Namespace) -> int:
    payload = compute(args.confidence_level)
    if args.format == "json":
        dump_json(payload)
        return 0
    level = f"{100 * args.confidence_level:g}%"
    rows = [
        [r["benchmark"], f"{r['n']:,}", f"±{100 * r['half_width_at_0_8']:.1f}",
         f"±{100 * r['half_width_at_0_5']:.1f}"]
        for r in payload["benchmarks"]
    ]
    need = payload["items_needed_at_0_8"]
    print_table(
        f"Error bars of one benchmark score ({level} Wilson interval, in points)",
        ["benchmark (example)", "items", "score 80%", "score 50%"], rows, right_align=(1, 2, 3),
        caption=(
            "Read: 80% on HumanEval (164 items) is 80 ± "
            f"{100 * payload['benchmarks'][2]['half_width_at_0_8']:.1f} points. For ±5 / ±2 / ±1 "
            f"points at 80% you need {need['0.05']:,} / {need['0.02']:,} / {need['0.01']:,} items."
        ),
    )
    print("Try: llm-power ci 17 20 --method all    llm-power coverage --n 10 --p 0.02")
    return 0
