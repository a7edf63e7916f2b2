"""``llm-power arena FILES...``: resolution of an arena or judge leaderboard built from pairwise battles."""

from __future__ import annotations

import argparse
from typing import Any

from .._core.suggest import hint
from ..io.safe import parse_once
from ..report.schema import arena_inference
from ._json import document
from ._types import HelpFormatter, UsageError, nonnegative_int, positive_int

HELP = "Bradley-Terry ratings of pairwise battles: which rating gaps the battles can separate, and N* battles"

EPILOG = """examples:
  llm-power arena --demo
  llm-power arena battles.csv --cluster question_id --html arena.html
  llm-power arena battles.csv --covariate length_diff --covariate markdown_diff --weights ipw
  llm-power arena votes.parquet --monitor 5000 --order timestamp --cluster prompt_id
  llm-power arena model_judgment/gpt-4_pair.jsonl --pairs all --json arena.json
  llm-power arena results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json --ties davidson
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("arena", parents=[parent], help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("files", nargs="*", metavar="FILES",
                   help="battle logs (CSV/TSV/JSONL/JSON/Parquet with model_a, model_b, winner), MT-Bench "
                        "*_pair.jsonl, AlpacaEval annotations.json, or folders of the latter two")
    p.add_argument("--demo", action="store_true",
                   help="use the bundled MT-Bench judge battles (six judges; English unless --where lang=ko; "
                        "default: off)")
    p.add_argument("--judge", action="append", metavar="NAME",
                   help="keep only verdicts of this judge (repeatable; default: every judge)")
    p.add_argument("--where", action="append", metavar="COLUMN=VALUE",
                   help="keep only rows whose COLUMN equals VALUE, e.g. lang=en (repeatable; default: all rows)")
    p.add_argument("--cluster", metavar="COLUMN",
                   help="battles sharing this column's value are correlated, e.g. question_id or judge "
                        "(adds the cluster regime; default: none)")
    p.add_argument("--covariate", action="append", metavar="COLUMN",
                   help="style control: a numeric column, model_a's minus model_b's (e.g. length difference); "
                        "ratings and verdicts adjusted for it, its coefficient shown (repeatable; default: none)")
    p.add_argument("--weights", metavar="COLUMN",
                   help="a column of positive battle weights, e.g. inverse sampling probabilities of unevenly "
                        "sampled pairs (default: every battle weighs 1)")
    p.add_argument("--monitor", type=positive_int, metavar="BATTLES",
                   help="replay the battles as a live arena, a look every BATTLES battles, and show each pair's "
                        "anytime-valid interval and decision (e-BH at --alpha; default: no monitor)")
    p.add_argument("--order", metavar="COLUMN",
                   help="with --monitor: the battles' arrival order, e.g. a timestamp column (default: file order)")
    p.add_argument("--engine", default="local", choices=("local", "duckdb"),
                   help="read FILES here (default local), or only their model_a, model_b, winner and "
                        "--cluster columns by DuckDB out of core (duckdb)")
    p.add_argument("--pairs", choices=("adjacent", "all"), default="adjacent",
                   help="adjacent ranks or every pair (default adjacent)")
    p.add_argument("--ties", choices=("half", "davidson"), default="half",
                   help="a tie is half a win for each side, or Davidson's tie model (default half)")
    p.add_argument("--seed", type=nonnegative_int, default=0,
                   help="random seed of the rank intervals' max-t draws (default 0)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "bh"), default="holm",
                   help="multiplicity procedure over the pairs (default holm)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power of N* (default 0.8)")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the intervals (default 0.95)")
    p.add_argument("--html", dest="html_out", metavar="FILE",
                   help="write the self-contained HTML report (default: none)")
    p.add_argument("--markdown", dest="markdown_out", metavar="FILE", help="write the Markdown report (default: none)")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="write every pair's numbers as JSON (default: none)")
    p.set_defaults(run=run)


@parse_once()
def _load(args: argparse.Namespace) -> tuple[Any, str, list[Any]]:
    from ..io.battles import read_battles

    if args.demo == bool(args.files):
        msg = "give battle FILES or --demo (one of them)"
        raise UsageError(msg)
    if args.engine != "local":
        from ..engines.battles import battle_rows

        frame = battle_rows(args.files, cluster=args.cluster)
        return frame, ", ".join(str(f) for f in args.files), list(args.files)
    if args.demo:
        from importlib import resources

        import pandas as pd

        with resources.as_file(resources.files("llm_power") / "data" / "mtbench_swap_battles.csv.gz") as path:
            frame = pd.read_csv(path)
        if not args.where:
            frame = frame[frame["lang"] == "en"]
        return frame, "the bundled MT-Bench judge battles (English" if not args.where else "the bundled MT-Bench " \
            "judge battles (", []
    frame = read_battles(args.files)
    return frame, ", ".join(str(f) for f in args.files), list(args.files)


#: what --engine duckdb reads: the battles' model_a, model_b, winner and --cluster columns, nothing else
_LOCAL_ONLY = (("--demo", "demo"), ("--where", "where"), ("--judge", "judge"), ("--covariate", "covariate"),
               ("--weights", "weights"), ("--monitor", "monitor"), ("--order", "order"))


def _check_engine(args: argparse.Namespace) -> None:
    """--engine: duckdb reads the battles' four columns; spark, ray and dask are not there yet."""
    if args.engine == "local":
        return
    if args.engine != "duckdb":  # pragma: no cover - argparse's choices refuse the others first
        msg = f"--engine {args.engine} is not available for arena yet: use --engine local or duckdb"
        raise UsageError(msg)
    for flag, name in _LOCAL_ONLY:
        if getattr(args, name):
            msg = (f"{flag} is not available with --engine duckdb (it reads model_a, model_b, winner and "
                   "--cluster only): use --engine local")
            raise UsageError(msg)


def _filter(frame: Any, args: argparse.Namespace) -> Any:
    from .._core.errors import DataError
    from ..io.battles import where_rows

    frame = where_rows(frame, args.where)
    if args.judge:
        judges = sorted(set(frame["judge"].astype(str)) - {""})
        unknown = sorted(set(args.judge) - set(judges))
        if unknown:
            shown = ", ".join(map(repr, judges[:10])) + (f", … ({len(judges)} in all)" if len(judges) > 10 else "")
            msg = (f"--judge {unknown[0]!r}: no such judge{hint(unknown[0], judges)}; judges: {shown}" if judges
                   else f"--judge {unknown[0]!r}: the battles name no judge (no judge column)")
            raise DataError(msg)
        frame = frame[frame["judge"].astype(str).isin(args.judge)]
    if frame.empty:
        msg = "no battles left after --where/--judge"
        raise DataError(msg)
    return frame


def _check_columns(args: argparse.Namespace, frame: Any) -> None:
    """The options that name columns exist, and the combinations the fit allows."""
    from .._core.errors import DataError

    if args.order and not args.monitor:
        msg = "--order is the arrival order of --monitor's replay: give --monitor BATTLES too"
        raise UsageError(msg)
    if args.monitor and (args.covariate or args.weights):
        msg = "--monitor fits Bradley-Terry without --covariate/--weights: run them separately"
        raise UsageError(msg)
    if args.monitor and args.ties != "half":
        msg = "--monitor counts a tie as half a win (--ties half)"
        raise UsageError(msg)
    for flag, column in [("--cluster", args.cluster), ("--weights", args.weights), ("--order", args.order),
                         *[("--covariate", c) for c in args.covariate or []]]:
        if column and column not in frame.columns:
            msg = f"{flag} {column!r}: the battles have no such column{hint(column, frame.columns)} " \
                  f"({', '.join(map(str, frame.columns))})"
            raise DataError(msg)
    if (args.covariate or args.weights) and args.ties != "half":
        msg = "--covariate and --weights fit ties as half a win (--ties half)"
        raise UsageError(msg)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from .._core.progress import step
    from ..report.files import check_outputs, write_atomic
    from ..report.tables import print_view
    from ..report.terminal import dump_json, safe_text, say

    outputs = [args.html_out, args.markdown_out, args.json_out]
    check_outputs(outputs, args.files)
    _check_engine(args)
    with step("reading battles"):
        frame, source, inputs = _load(args)
        frame = _filter(frame, args)
    if args.demo:
        source += "".join(f", {w}" for w in args.where or []) + ")"
    _check_columns(args, frame)
    if args.order:
        frame = frame.sort_values(args.order, kind="stable")
    with step("arena: ratings and pairs"):  # with the import of the statistics libraries
        from ..preferences import arena_diagnose
        from ..report.arena import (
            arena_legend,
            arena_ranking_lines,
            arena_ranks_view,
            arena_sentences,
            arena_style_view,
            monitor_sentences,
            print_arena_gaps,
            print_arena_monitor,
            render_arena_html,
            render_arena_markdown,
            style_sentences,
        )

        diag = arena_diagnose(frame, pairs=args.pairs, cluster=args.cluster, ties=args.ties, alpha=args.alpha,
                              power=args.power, correction=args.correction, confidence_level=args.confidence_level,
                              rng=args.seed, covariates=args.covariate, weights=args.weights, monitor=args.monitor)
    payload = {"models": diag.models, "ranks": diag.ranks, "style": diag.style,
               "monitor": None if diag.monitor is None else diag.monitor.to_dict(),
               "n_battles": diag.n_battles, "settings": diag.settings, "pairs": diag.to_frame().to_dict("list"),
               "unresolved": diag.unresolved()}
    payload["pairs"]["inference"] = arena_inference(payload["pairs"], diag.settings)
    if args.json_out:
        import io

        buf = io.StringIO()
        dump_json(document(args, payload), buf)
        write_atomic(args.json_out, buf.getvalue(), inputs=tuple(inputs))
    if args.markdown_out:
        write_atomic(args.markdown_out, render_arena_markdown(diag), inputs=tuple(inputs))
    if args.html_out:
        write_atomic(args.html_out, render_arena_html(diag, source=source), inputs=tuple(inputs))
    if args.format == "json":
        dump_json(document(args, payload))
        return 0
    print_view(arena_ranks_view(diag, confidence_level=args.confidence_level))
    style = arena_style_view(diag)
    if style is not None:
        print_view(style)
    print_arena_gaps(diag, args.pairs)
    say(arena_legend(diag))
    print_arena_monitor(diag)
    for line in arena_sentences(diag):
        say(line)
    for line in style_sentences(diag) + monitor_sentences(diag):  # model names: escaped for the terminal
        say(safe_text(line))
    for line in arena_ranking_lines(diag):  # model names: escaped for the terminal
        say(safe_text(line))
    return 0
