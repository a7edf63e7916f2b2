"""One model given to ``diagnose``: its score with an interval, and where to go next (no dead end)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from .._core.format import fmt_margins, fmt_score
from ..report.terminal import dump_json, print_table, say

__all__ = ["print_one_model"]


def _cells(summary: dict[str, Any]) -> tuple[str, str, str]:
    """(score, interval, half-width) as shown, in points for 0/1 scores; the same in every medium."""
    binary, lo, hi = summary["binary"], summary["low"], summary["high"]
    interval = f"{100 * lo:.1f} – {100 * hi:.1f}%" if binary else f"{lo:.4g} – {hi:.4g}"
    mean = summary["mean"]  # the reach below and above the score: "−15.2 / +12.6" when asymmetric (Wilson)
    half = (fmt_margins(mean, lo, hi, scale=100.0) + " points" if binary
            else fmt_margins(mean, lo, hi, decimals=max(0, 2 - math.floor(math.log10(abs(hi - lo) / 2)))
                             if hi > lo else 3))
    return fmt_score(summary["mean"], binary), interval, half


def one_model_markdown(summary: dict[str, Any]) -> str:
    """The one-model report as GitHub-flavoured Markdown (the name escaped)."""
    from ..report.markdown import md_prose, md_text

    score, interval, half = _cells(summary)
    level = f"{100 * summary['confidence_level']:g}%"
    return (f"## One model: {md_text(summary['model'])}\n\n"
            + md_prose(f"Nothing to compare: its score on {summary['n']:,} items and {level} interval.") + "\n\n"
            f"| score | {level} interval | ± | method |\n| ---: | ---: | ---: | --- |\n"
            f"| {score} | {interval} | {half} | {md_prose(summary['method'])} |\n")


def one_model_html(summary: dict[str, Any]) -> str:
    """The one-model report as a self-contained HTML page (no script; the name escaped)."""
    from html import escape

    score, interval, half = _cells(summary)
    level = f"{100 * summary['confidence_level']:g}%"
    name = escape(str(summary["model"]))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
            "content=\"width=device-width, initial-scale=1\"><title>One model: " + name + "</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1f2328}"
            "table{border-collapse:collapse}th,td{padding:.3rem .8rem;border-bottom:1px solid #d0d7de;"
            "text-align:right}td:last-child,th:last-child{text-align:left}</style></head><body>"
            f"<h1>One model: {name}</h1><p>Nothing to compare: its score on {summary['n']:,} items and its "
            f"{level} interval. Add a second model's results to compare them.</p><table><thead><tr><th>score</th>"
            f"<th>{level} interval</th><th>±</th><th>method</th></tr></thead><tbody><tr><td>{escape(score)}</td>"
            f"<td>{escape(interval)}</td><td>{escape(half)}</td><td>{escape(summary['method'])}</td></tr></tbody>"
            "</table></body></html>\n")


def _write_files(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    """--json / --markdown / --html for one model: a one-model report (a CI job that uploads the
    artefact finds it); --parquet has no pairs to hold: a usage error before anything is written.
    """
    import json

    from .._core.results import to_plain
    from ..report.files import OutputPathError, write_atomic
    from ._paths import command_paths

    if getattr(args, "parquet_out", None):
        msg = ("--parquet holds the pairs table, and one model has no pairs; --json FILE writes its score and "
               "interval")
        raise OutputPathError(msg)
    inputs = tuple(command_paths(args)[1])
    writers: list[tuple[Any, Callable[[], str]]] = [
        (getattr(args, "json_out", None),
         lambda: json.dumps(to_plain(summary), indent=2, sort_keys=True, allow_nan=False) + "\n"),
        (getattr(args, "markdown_out", None), lambda: one_model_markdown(summary)),
        (getattr(args, "html_out", None), lambda: one_model_html(summary))]
    for path, text in writers:
        if path:
            write_atomic(path, text(), inputs=inputs)


def print_one_model(args: argparse.Namespace, model: str, scores: Any, clusters: Any) -> int:
    """Print one model's score and interval and point to ``ci`` / ``plan``, and write the output
    files asked for as a one-model report; returns 0.
    """
    level = getattr(args, "confidence_level", 0.95)
    from ..intervals import one_model_summary

    summary = {"model": model, **one_model_summary(scores, clusters, confidence_level=level)}
    _write_files(args, summary)
    if args.format == "json":
        dump_json(summary)
        return 0
    binary, n = summary["binary"], summary["n"]
    _, interval, half = _cells(summary)
    say(f"One model ({model}): nothing to compare; its score and {100 * level:g}% interval.")
    # the name is in the sentence above (a long one would squeeze the numbers)
    print_table(f"{n:,} items", ["score" if binary else "mean score", f"{100 * level:g}% interval", "±", "method"],
                [[fmt_score(summary["mean"], binary), interval, half, summary["method"]]], right_align=(0, 1, 2))
    k = int(round(summary["mean"] * n))
    if binary:
        say(f"next: llm-power ci {k} {n} --method all   (every interval method for this score)")
    say(f"next: llm-power plan mde --n {n}   (the smallest gap to another model these {n:,} items can detect)")
    say("next: add a second model's results to compare them (llm-power compare / diagnose)")
    return 0
