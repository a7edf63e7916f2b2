"""Terminal and JSON output shared by the CLI commands."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["dump_json", "print_table", "safe_text", "say", "terminal_width"]

# Shown as visible escapes, never sent to a terminal raw: C0/C1 control characters (escape
# sequences, carriage returns, bells) and DEL; every invisible format character that can hide or
# reorder text -- soft hyphen, combining grapheme joiner, the Arabic letter mark, Hangul fillers,
# Khmer inherent vowels, Mongolian vowel separator and variation selectors, zero-width spaces and
# joiners, line/paragraph separators, bidirectional embeddings, overrides and isolates, the word
# joiner and invisible operators (U+2060-2064) and deprecated format controls, variation
# selectors, the byte-order mark, interlinear annotations, musical formatting, and the tag block
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                     "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
                     "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def safe_text(text: Any) -> str:
    r"""Untrusted text (model names, item ids, file names, messages) made safe for a terminal line:
    control and invisible formatting characters become visible escapes (``\\x1b``).
    """
    return _UNSAFE.sub(_visible, str(text))


def _cell(text: Any) -> str:
    from rich.markup import escape

    return escape(safe_text(text))


def terminal_width(stream: Any = None) -> int:
    """The width to render for: the terminal's; ``COLUMNS`` or 100 for files and pipes."""
    out = sys.stdout if stream is None else stream
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if hasattr(out, "isatty") and out.isatty():
        return shutil.get_terminal_size((100, 24)).columns
    return 100


def say(text: Any, stream: TextIO | None = None) -> None:
    """Print a line of prose (escaped), wrapped to the terminal's width; words are never split
    (a long path stays whole), continuation lines are indented.
    """
    import textwrap

    out = sys.stdout if stream is None else stream
    lines = textwrap.wrap(safe_text(text), width=terminal_width(out), subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False) or [""]
    out.write("\n".join(lines) + "\n")


def dump_json(payload: Any, stream: TextIO | None = None) -> None:
    """Write ``payload`` as deterministic JSON (plain types, sorted keys) and a newline."""
    from .._core.results import to_plain

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
    from rich import box
    from rich.console import Console
    from rich.table import Table

    out = sys.stdout if stream is None else stream
    # the terminal's width; COLUMNS or 100 for files and pipes (long cells wrap, never cut)
    console = Console(file=out, highlight=False, emoji=False, width=terminal_width(out))
    console.print(_cell(title), style="bold", overflow="fold")  # a long name folds at the width
    table = Table(caption=None if caption is None else _cell(caption), caption_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for i, name in enumerate(columns):
        # a cell that does not fit folds onto the next line; it is never cut with "…"
        table.add_column(_cell(name), justify="right" if i in right_align else "left", no_wrap=i == 0,
                         overflow="fold")
    for row in rows:
        table.add_row(*(_cell(cell) for cell in row))
    console.print(table)
