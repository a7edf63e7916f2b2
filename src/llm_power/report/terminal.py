"""Terminal and JSON output shared by the CLI commands."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["PIPE_WIDTH", "dump_json", "print_table", "safe_text", "say", "terminal_width"]

# Shown as visible escapes, never sent to a terminal raw, by Unicode category rather than by a list:
# control characters (Cc: C0/C1, escape sequences, carriage returns, bells, DEL), every format
# character (Cf: zero-width spaces and joiners, bidirectional embeddings, overrides and isolates, the
# Arabic number signs, Egyptian hieroglyph and shorthand format controls, the tag block, ...),
# surrogates, private-use and unassigned code points (Cs, Co, Cn: a later Unicode may make them
# format characters), line and paragraph separators (Zl, Zp); and the invisible characters of other
# categories that can hide text -- the combining grapheme joiner, Khmer inherent vowels, Mongolian
# and other variation selectors (Mn), and the Hangul fillers (Lo).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_INVISIBLE = frozenset([0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0,
                        *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
_ASCII_UNSAFE = re.compile("[\x00-\x1f\x7f]")


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _unsafe(char: str) -> bool:
    import unicodedata

    return unicodedata.category(char) in _UNSAFE_CATEGORIES or ord(char) in _INVISIBLE


def safe_text(text: Any) -> str:
    r"""Untrusted text (model names, item ids, file names, messages) made safe for a terminal line:
    control, format, unassigned and other invisible characters (by Unicode category) become visible
    escapes (``\\x1b``, ``\\u200b``).
    """
    text = str(text)
    if text.isascii():
        return _ASCII_UNSAFE.sub(lambda m: _escape(m.group()), text)
    return "".join(_escape(c) if c < " " or (c > "~" and _unsafe(c)) else c for c in text)


#: a message's longest word: longer ones (a 200,000-character model name or id) keep their start and
#: end around a count of what was left out, so an error stays one readable line
MESSAGE_WORD_LIMIT = 240


def short_words(text: str, limit: int = MESSAGE_WORD_LIMIT) -> str:
    """``text`` with every word longer than ``limit`` characters cut in the middle, saying how much
    (the start and the end of a name or path are what tell it apart).
    """
    if len(text) <= limit:
        return text

    def cut(match: re.Match[str]) -> str:
        word = match.group()
        if len(word) <= limit:
            return word
        head, tail = (limit * 2) // 3, limit // 6
        return f"{word[:head]}...[{len(word) - head - tail:,} characters]...{word[-tail:]}"

    return re.sub(r"\S{%d,}" % (limit + 1), cut, text)


def _cell(text: Any) -> str:
    from rich.markup import escape

    return escape(safe_text(text))


#: the width of output that goes to a file or a pipe (``COLUMNS`` overrides): a pipe is usually read
#: in a terminal (``| head``, ``| less``), and 80 columns is the narrowest one people use
PIPE_WIDTH = 80


def terminal_width(stream: Any = None) -> int:
    """The width to lay ``stream`` out at (stdout by default): ``COLUMNS`` when set, else the width of
    the terminal that stream is (stdout and stderr are asked separately: a note on the terminal while
    stdout goes to a file has the terminal's width), else 80 for files and pipes.
    """
    out = sys.stdout if stream is None else stream
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        if out.isatty():
            return max(os.get_terminal_size(out.fileno()).columns, 20)
    except (AttributeError, OSError, ValueError):  # no descriptor (a StringIO), or not a terminal after all
        pass
    return PIPE_WIDTH


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
    wrap: Sequence[int] | None = None,
) -> None:
    """Print a rich table; plain (no colour codes) when the stream is not a terminal. ``wrap``: the
    columns that may wrap to fit the width (default: all but the first).
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table

    out = sys.stdout if stream is None else stream
    # the stream's width (COLUMNS, the terminal's, or 80 for files and pipes): long cells wrap, never cut
    console = Console(file=out, highlight=False, emoji=False, width=terminal_width(out))
    console.print(_cell(title), style="bold", overflow="fold")  # a long name folds at the width
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for i, name in enumerate(columns):
        # a cell that does not fit folds onto the next line; it is never cut with "…"
        table.add_column(_cell(name), justify="right" if i in right_align else "left",
                         no_wrap=(i == 0) if wrap is None else (i not in wrap), overflow="fold")
    for row in rows:
        table.add_row(*(_cell(cell) for cell in row))
    console.print(table)
    if caption:  # the stream's width, not the table's: a narrow table's footnote is not a column of words
        say(caption, out)
