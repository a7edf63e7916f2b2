"""``llm-power arena FILES...``: resolution of an arena or judge leaderboard built from pairwise battles."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..io.safe import parse_once
from ._types import nonnegative_int

#: shortened names are never shorter than this (below it the table names models by rank)
MIN_NAME = 16

HELP = "Bradley-Terry ratings of pairwise battles: which rating gaps the battles can separate, and N* battles"

EPILOG = """examples:
  llm-power arena --demo
  llm-power arena battles.csv --cluster question_id --html arena.html
  llm-power arena model_judgment/gpt-4_pair.jsonl --pairs all --json arena.json
  llm-power arena results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json --ties davidson
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("arena", parents=[parent], help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
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
    from .._core.errors import DataError
    from ..io.battles import read_battles

    if args.demo == bool(args.files):
        msg = "give battle FILES or --demo (one of them)"
        raise DataError(msg)
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


def _filter(frame: Any, args: argparse.Namespace) -> Any:
    from .._core.errors import DataError
    from ..io.battles import where_rows

    frame = where_rows(frame, args.where)
    if args.judge:
        judges = sorted(set(frame["judge"].astype(str)) - {""})
        unknown = sorted(set(args.judge) - set(judges))
        if unknown:
            shown = ", ".join(map(repr, judges[:10])) + (f", … ({len(judges)} in all)" if len(judges) > 10 else "")
            msg = (f"--judge {unknown[0]!r}: no such judge; judges: {shown}" if judges
                   else f"--judge {unknown[0]!r}: the battles name no judge (no judge column)")
            raise DataError(msg)
        frame = frame[frame["judge"].astype(str).isin(args.judge)]
    if frame.empty:
        msg = "no battles left after --where/--judge"
        raise DataError(msg)
    return frame


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from .._core.errors import DataError
    from ..preferences import arena_diagnose
    from ..report.arena import (
        MAX_TERMINAL_ROWS,
        arena_header,
        arena_legend,
        arena_ranking_lines,
        arena_rows,
        arena_sentences,
        arena_test_label,
        rank_rows,
        render_arena_html,
        render_arena_markdown,
    )
    from ..report.files import check_outputs, write_atomic
    from ..report.terminal import dump_json, print_table, safe_text, say, terminal_width
    from ..report.terminal_report import fit_table

    outputs = [args.html_out, args.markdown_out, args.json_out]
    check_outputs(outputs, args.files)
    frame, source, inputs = _load(args)
    frame = _filter(frame, args)
    if args.demo:
        source += "".join(f", {w}" for w in args.where or []) + ")"
    if args.cluster and args.cluster not in frame.columns:
        msg = f"--cluster {args.cluster!r}: the battles have no such column ({', '.join(map(str, frame.columns))})"
        raise DataError(msg)
    diag = arena_diagnose(frame, pairs=args.pairs, cluster=args.cluster, ties=args.ties, alpha=args.alpha,
                          power=args.power, correction=args.correction, confidence_level=args.confidence_level,
                          rng=args.seed)
    payload = {"models": diag.models, "ranks": diag.ranks,
               "n_battles": diag.n_battles, "settings": diag.settings, "pairs": diag.to_frame().to_dict("list"),
               "unresolved": diag.unresolved()}
    if args.json_out:
        import io

        buf = io.StringIO()
        dump_json(payload, buf)
        write_atomic(args.json_out, buf.getvalue(), inputs=tuple(inputs))
    if args.markdown_out:
        write_atomic(args.markdown_out, render_arena_markdown(diag), inputs=tuple(inputs))
    if args.html_out:
        write_atomic(args.html_out, render_arena_html(diag, source=source), inputs=tuple(inputs))
    if args.format == "json":
        dump_json(payload)
        return 0
    print_table(f"Arena: {len(diag.models)} models, {diag.n_battles:,} battles",
                ["rank", "model", "Elo", "rank interval", "ties"],
                [[r[2], r[0], r[1], r[3], r[4]] for r in rank_rows(diag)],
                caption=f"Elo: 400/ln 10 × Bradley–Terry log-strength, mean 1000. Rank intervals: simultaneous "
                        f"{args.confidence_level:.0%} (max-t over all pairs). Ties: the statistical ties (numbered) a "
                        "model is in, runs of ranks holding no resolved pair of the headline regime.",
                right_align=(0, 2))
    header = arena_header(diag)
    rows = arena_rows(diag, MAX_TERMINAL_ROWS)
    title = f"Rating gaps, {args.pairs} pairs; {arena_test_label(diag)}" + (
        f" (the first {len(rows)} of {diag.n_pairs:,}; --json FILE has every pair)" if len(rows) < diag.n_pairs else "")
    width = terminal_width(sys.stdout)
    # whole names, then shorter unique names, then headers on two lines, then the models by their
    # rank in the table above: the first layout that fits the terminal, no row wrapped, no number cut
    position = {name: str(k + 1) for k, name in enumerate(diag.ranks["model"])}
    by_rank = [[position[a], position[b], *rest] for (a, b, *rest) in rows]
    two = [h.replace(" ", "\n", 1) for h in header]
    variants: list[tuple[list[str], list[list[str]], tuple[int, ...]]] = [
        (head, arena_rows(diag, MAX_TERMINAL_ROWS, name_width=w), (0, 1)) for head in (header, two)
        for w in (None, 24, MIN_NAME)]
    variants += [(head, by_rank, ()) for head in (header, two)]
    table, chosen = fit_table(variants, width)
    say(title)
    if table is None:  # narrower than every table: one paragraph per pair, whole names, nothing cut
        for row in rows:
            say(f"{row[0]} − {row[1]}: " + ", ".join(f"{name} {cell}" for name, cell in zip(header[2:], row[2:],
                                                                                         strict=True)))
    else:
        from rich.console import Console

        Console(file=sys.stdout, width=width, highlight=False, emoji=False, soft_wrap=False).print(table)
        if chosen >= len(variants) - 2:  # the rank layout
            say("A, B: the models' ranks in the table above (names in full there).")
    say(arena_legend(diag))
    for line in arena_sentences(diag):
        say(line)
    for line in arena_ranking_lines(diag):  # model names: escaped for the terminal
        say(safe_text(line))
    return 0
