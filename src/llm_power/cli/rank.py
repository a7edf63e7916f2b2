"""``llm-power rank RESULTS...``: which ranks the data support for every model at once, and who can be #1."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.tables import print_view, ranks_view
from ..report.terminal import dump_json, safe_text, say
from ._json import document
from ._types import HelpFormatter, UsageError, add_reader_options, nonnegative_int, positive_int
from .diagnose import add_declared_options

HELP = ("rank intervals: every model's rank with simultaneous coverage, the set of models that can be #1, the "
        "winner's score corrected for selection, and how few items flip #1")
EPILOG = """examples:
  llm-power rank out/ --cluster subject       # lm-eval --log_samples output folder(s)
  llm-power rank scores.csv --n-resamples 5000
  llm-power rank --demo                       # the demo's leaderboard: its ranks, the same numbers
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser: what diagnose reads and the options it
    declares (the same data and options give the same rank intervals as diagnose's report).
    """
    p = sub.add_parser("rank", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:], epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("results", nargs="*", metavar="RESULTS", help="result files or folders (what diagnose reads)")
    p.add_argument("--demo", action="store_true",
                   help="the bundled MMLU-Pro results with the demo's settings (its top 10, clusters by category, "
                        "Holm and anytime) instead of RESULTS")
    p.add_argument("--cluster", metavar="FIELD",
                   help="cluster label (as diagnose): whole clusters resampled, each gap studentised by its "
                        "cluster-robust SE, and a pair must be resolved by the cluster test (default: none)")
    p.add_argument("--run", dest="run_field", metavar="FIELD",
                   help="several runs per model (as diagnose): the run regime must resolve a pair too (default: "
                        "none, one run per model)")
    add_declared_options(p)
    p.add_argument("--n-resamples", type=positive_int, default=1000,
                   help="bootstrap resamples of the items (or clusters) for the critical value (default 1000)")
    p.add_argument("--method", dest="rank_method", choices=("auto", "bootstrap", "gaussian"), default="auto",
                   help="critical value: the bootstrap, or its normal limit (default auto: the bootstrap up to "
                        "2,000,000 resampled items)")
    p.add_argument("--fragile-share", type=float, default=0.001, metavar="S",
                   help="a gap is fragile when removing at most this share of the items flips it (default 0.001)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the bootstrap (default 0)")
    add_reader_options(p, missing="some model lacks")
    p.set_defaults(run=run, engine="local")


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The declared options given on the command line (not at their defaults), but ``top`` and the
    level, which ``--demo`` sets itself: they override the demo's (``rank --demo --correction bh``).
    """
    from ..resolution import REGIMES

    return {o.name: getattr(args, o.name) for regime in REGIMES for o in regime.options
            if o.flag is not None and o.name not in ("top", "confidence_level")
            and getattr(args, o.name, o.default) != o.default}


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from .._core.progress import step
    from ..rankings import rank_report
    from ..report.view import build_view
    from .diagnose import DIAGNOSE_STEP, load_diagnosis

    if args.demo:
        from ..io.demo import load_mmlu_pro
        from .demo import DEMO_CLUSTER, DEMO_NOTE, demo_options

        if args.results:
            msg = "give RESULTS or --demo, not both"
            raise UsageError(msg)
        data = load_mmlu_pro()
        args.cluster = DEMO_CLUSTER
        with step(DIAGNOSE_STEP):
            from ..resolution import diagnose

            diag = diagnose(data.scores, models=data.models, cluster=data.clusters, rng=args.seed,
                            options=demo_options(top=10 if args.top is None else args.top,
                                                 confidence_level=args.confidence_level, **_given(args)))
        source, note = "the bundled MMLU-Pro results, as the demo", DEMO_NOTE
    else:
        if not args.results:
            msg = "give RESULTS (files or folders with per-item results), or --demo"
            raise UsageError(msg)
        args.json_out = args.markdown_out = args.html_out = args.parquet_out = None
        loaded = load_diagnosis(args)
        if isinstance(loaded, int):  # one model: nothing to rank (its summary was printed)
            return loaded
        diag, source, note = loaded.diag, loaded.source, loaded.note
    report = rank_report(diag, ranks=True, n_resamples=args.n_resamples, method=args.rank_method,
                         fragile_share=args.fragile_share, rng=args.seed)
    ranks = report.ranks
    if ranks is None:  # pragma: no cover - ranks=True computes them or raises
        msg = f"no rank intervals: {report.skipped}"
        raise ValueError(msg)
    if args.format == "json":  # the numbers of lp.rank_intervals, lp.winners_curse and lp.fragility
        dump_json(document(args, {"source": source, "note": note, "models": list(diag.models), "means": diag.means,
                                  "n_items": diag.n, "settings": diag.settings, **report.to_dict()}))
        return 0
    view = build_view(diag, max_rows=0, rankings=report)
    print_view(ranks_view(view, ranks, n_items=diag.n))
    for line in view.ranking.lines() if view.ranking is not None else []:
        say(safe_text(line))
    if note:
        say(note)
    return 0
