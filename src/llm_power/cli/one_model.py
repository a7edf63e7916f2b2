"""One model given to ``diagnose``: its score with an interval, and where to go next (no dead end)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..report.tables import one_model_html, one_model_markdown, one_model_view, print_view
from ..report.terminal import dump_json, say
from ._json import document

__all__ = ["print_one_model"]


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
         lambda: json.dumps(to_plain(document(args, summary)), indent=2, sort_keys=True, allow_nan=False) + "\n"),
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

    summary = {"model": model, **one_model_summary(scores, clusters, confidence_level=level,
                                                   cluster_method=getattr(args, "cluster_method", "cr2"),
                                                   rng=getattr(args, "seed", 0))}
    _write_files(args, summary)
    if args.format == "json":
        dump_json(document(args, summary))
        return 0
    binary, n = summary["binary"], summary["n"]
    say(f"One model ({model}): nothing to compare; its score and {100 * level:g}% interval.")
    print_view(one_model_view(summary))
    k = int(round(summary["mean"] * n))
    if binary:
        say(f"next: llm-power ci {k} {n} --method all   (every interval method for this score)")
    say(f"next: llm-power plan mde --n {n}   (the smallest gap to another model these {n:,} items can detect)")
    say("next: add a second model's results to compare them (llm-power compare / diagnose)")
    return 0
