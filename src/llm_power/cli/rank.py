"""``llm-power rank RESULTS...``: which ranks the data support for every model at once, and who can be #1."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.terminal import dump_json, print_table, safe_text, say
from ._types import add_reader_options, positive_int

HELP = "rank intervals: every model's rank with simultaneous coverage, and the set of models that can be #1"
EPILOG = """examples:
  llm-power rank out/                         # lm-eval --log_samples output folder(s)
  llm-power rank scores.csv --n-resamples 5000
  llm-power rank --demo                       # the bundled MMLU-Pro leaderboard (26 models)
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("rank", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:], epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="*", metavar="RESULTS", help="result files or folders (what diagnose reads)")
    p.add_argument("--demo", action="store_true", help="the bundled MMLU-Pro results instead of RESULTS")
    p.add_argument("--confidence-level", type=float, default=0.95,
                   help="simultaneous coverage of all the rank intervals (default 0.95)")
    p.add_argument("--n-resamples", type=positive_int, default=1000,
                   help="bootstrap resamples of the items for the critical value (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    add_reader_options(p, missing="some model lacks")
    p.set_defaults(run=run, cluster=None, split="test", filter=None)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..rankings import rank_intervals

    if args.demo:
        from ..io.demo import load_mmlu_pro

        aligned = load_mmlu_pro()
        source = "the bundled MMLU-Pro results"
    else:
        if not args.results:
            msg = "give RESULTS (files or folders with per-item results), or --demo"
            raise ValueError(msg)
        from ..io.detect import expand_paths
        from .diagnose import load_aligned

        aligned = load_aligned(expand_paths(args.results), args)
        if isinstance(aligned, int):  # one model: nothing to rank (its summary was printed)
            return aligned
        source = ", ".join(str(p) for p in args.results)
    res = rank_intervals(aligned.scores, models=aligned.models, confidence_level=args.confidence_level,
                         n_resamples=args.n_resamples, rng=args.seed)
    if args.format == "json":
        dump_json({"source": source, "note": getattr(aligned, "note", ""), **res.to_dict()})
        return 0
    level = f"{100 * res.confidence_level:g}%"
    rows = [[str(k + 1), safe_text(m), f"{res.means[k]:.4f}",
             f"{int(res.rank_low[k])}" + ("" if res.rank_low[k] == res.rank_high[k] else f"-{int(res.rank_high[k])}")]
            for k, m in enumerate(res.models)]
    print_table(f"Ranks with {level} simultaneous coverage ({res.n_items:,} items)", ["#", "model", "score", "rank"],
                rows, right_align=(0, 2, 3),
                caption=f"Every model's true rank lies in its interval at once with probability {level} (max-t "
                        f"bootstrap over the paired differences, {res.n_resamples:,} resamples, critical value "
                        f"{res.critical_value:.3g}; Mogstad, Romano, Shaikh and Wilhelm 2024).")
    say("#1 is one of: " + ", ".join(res.best_set))
    if getattr(aligned, "note", ""):
        say(aligned.note)
    return 0
