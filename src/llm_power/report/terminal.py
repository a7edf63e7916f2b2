"""Terminal and JSON output shared by the CLI commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .._results import to_plain

__all__ = ["dump_json", "print_table"]


def dump_json(payload: Any, stream: TextIO | None = None) -> None:
    """Write ``payload`` as deterministic JSON (plain types, sorted keys) and a newline."""
    stream = sys.stdout if stream is None else stream
    json.dump(to_plain(payload), stream, indent=2, sort_keys=True, allow_nan=False)
    stream.write("\n")


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    caption: str | None = None,
    right_align: Sequence[int] = (),
    stream: TextIO | None = None,
) -> None:
    """Print a rich table; plain (no colour codes) when the stream is not a terminal."""
    from rich.console import Console
    from rich.table import Table

    out = sys.stdout if stream is None else stream
    is_tty = hasattr(out, "isatty") and out.isatty()
    # A terminal gets its own width; files and pipes a wide, fixed one (no ellipsised names).
    console = Console(file=out, highlight=False, width=None if is_tty else 200)
    console.print(title, style="bold", soft_wrap=True)
    table = Table(caption=caption, caption_justify="left")
    for i, name in enumerate(columns):
        table.add_column(name, justify="right" if i in right_align else "left", no_wrap=i == 0)
    for row in rows:
        table.add_row(*row)
    console.print(table)
