"""``llm-power rank RESULTS...``: which ranks the data support for every model at once, and who can be #1."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.terminal import dump_json, print_table, safe_text, say
from ._types import add_reader_options, positive_int

HELP = ("rank intervals: every model's rank with simultaneous coverage, the set of models that can be #1, the "
        "winner's score corrected for selection, and how few items flip #1")
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
    p.add_argument("--method", choices=("auto", "bootstrap", "gaussian"), default="auto",
                   help="critical value: the bootstrap, or its normal limit (default auto: the bootstrap up to "
                        "2,000,000 resampled items)")
    p.add_argument("--fragile-share", type=float, default=0.001, metavar="S",
                   help="a gap is fragile when removing at most this share of the items flips it (default 0.001)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    add_reader_options(p, missing="some model lacks")
    p.set_defaults(run=run, cluster=None, split="test", filter=None)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..report.view import build_view
    from ..resolution import diagnose

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
    diag = diagnose(aligned.scores, models=aligned.models, alpha=1.0 - args.confidence_level,
                    confidence_level=args.confidence_level, ranks=True, rank_resamples=args.n_resamples,
                    rank_method=args.method,
                    cluster_resamples=0, fragile_share=args.fragile_share, rng=args.seed)
    sec = diag.rankings or {}
    if args.format == "json":  # the numbers of lp.rank_intervals, lp.winners_curse and lp.fragility
        dump_json({"source": source, "note": getattr(aligned, "note", ""), "models": list(diag.models),
                   "means": diag.means, "n_items": diag.n, **sec})
        return 0
    view = build_view(diag, max_rows=0)
    level = f"{100 * args.confidence_level:g}%"
    rows = [[str(m.rank), safe_text(m.name), m.score, m.ranks] for m in view.models]
    print_table(f"Ranks with {level} simultaneous coverage ({diag.n:,} items)", ["#", "model", "score", "rank"],
                rows, right_align=(0, 2, 3),
                caption=f"Every model's true rank lies in its interval at once with probability {level} (max-t "
                        + (f"bootstrap over the paired differences, {sec['n_resamples']:,} resamples"
                           if sec["method"] == "bootstrap" else "over the paired differences, normal limit")
                        + ", critical value "
                        f"{sec['critical_value']:.3g}; Mogstad, Romano, Shaikh and Wilhelm 2024); a pair separates "
                        "two ranks only when diagnose also resolves it.")
    for line in view.ranking.lines() if view.ranking is not None else []:
        say(safe_text(line))
    if getattr(aligned, "note", ""):
        say(aligned.note)
    return 0
