"""argparse value types with the package's messages (bad values are usage errors, exit 2)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator
from typing import Any

from .._core.options import COMPARE_METHOD_NAMES, DESIGN_EFFECT_NAMES

__all__ = ["COMPARE_METHODS", "DESIGN_EFFECTS", "INPUT_FORMATS", "RegistryChoices", "UsageError", "nonnegative_int",
           "positive_int"]


class UsageError(ValueError):
    """A command line that cannot work whatever the files hold -- options missing, or that do not go
    together -- found after parsing: exit 2, as argparse's usage errors (``llm_power.cli.main.exit_code``).
    """


class RegistryChoices:
    """argparse ``choices`` read from a registry when first needed (``--help`` of the program and
    every other command stay light; the choices are the registry's, never a second list).
    """

    def __init__(self, module: str, name: str, extra: tuple[str, ...] = (), *, first: tuple[str, ...] = ()) -> None:
        self._where = (module, name)
        self._extra = extra
        self._first = first
        self._values: tuple[str, ...] | None = None

    def _get(self) -> tuple[str, ...]:
        if self._values is None:
            found = getattr(importlib.import_module(self._where[0]), self._where[1])
            self._values = (*self._first, *found, *self._extra)
        return self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __contains__(self, value: object) -> bool:
        return value in self._get()

    def __len__(self) -> int:
        return len(self._get())

    def __bool__(self) -> bool:  # argparse asks "any choices?" when an option is added: not a reason to load
        return True


#: ``--input-format``: "auto" and the formats of the readers' registry (``llm_power.io.formats.FORMATS``,
#: which loads without numpy or pandas: argparse lists every option's choices for ``--help``)
INPUT_FORMATS = RegistryChoices("llm_power.io.formats", "FORMATS", first=("auto",))
#: ``compare --method``: "auto", every test of the paired registry (its light copy, tested equal), and the
#: cluster-robust t test
COMPARE_METHODS = (*COMPARE_METHOD_NAMES, "cluster_t")
#: ``--design-effect``: the design-effect models of the cluster regime (their light copy, tested equal)
DESIGN_EFFECTS = DESIGN_EFFECT_NAMES


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        msg = f"must be a whole number; got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def nonnegative_int(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    value = _int(text)
    if value < 0:
        msg = f"must be a non-negative integer; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    value = _int(text)
    if value < 1:
        msg = f"must be a positive integer; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def add_run_pairing(p: Any) -> None:
    """``--run-pairing {auto,independent,matched}``, default auto: the option the run regime declares
    (``llm_power.resolution.REGIMES``), for the commands that take runs outside diagnose.
    """
    from ..resolution import REGIMES

    option = next(o for r in REGIMES for o in r.options if o.name == "run_pairing")
    p.add_argument(option.flag, dest=option.name, default=option.default, help=option.help, **option.cli)


def add_reader_options(p: Any, *, missing: str, records: bool = True) -> None:
    """The reader options of the commands that read result files (``missing``: what --on-missing drops;
    ``records``: the harness-record choices ``--split`` and ``--filter`` too).
    """
    p.add_argument("--input-format", default="auto", choices=INPUT_FORMATS, metavar="FORMAT",
                   help="force the input format: %(choices)s (default auto)")
    p.add_argument("--metric", "--score-column", dest="metric", metavar="COL",
                   help="per-item metric / score column (default per format: score, correct, acc, ...)")
    p.add_argument("--id-column", metavar="COL",
                   help="item id column of plain tables (default: item, item_id, id, doc_id, ...)")
    p.add_argument("--on-missing", default="error", choices=("error", "intersect"),
                   help=f"items {missing}: error (default) or keep the common ones")
    if records:
        p.add_argument("--split", default="test", help="HELM split (default test)")
        p.add_argument("--filter", help="lm-eval filter when a task wrote several, e.g. strict-match (default: the "
                                        "only one)")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help laid out for the stream's width (its terminal's, ``COLUMNS``, or 80 in a pipe): the prose
    paragraphs of a description or epilog wrap; an example line (``  llm-power ...   # why``) keeps its
    form, its comment going to the line above when the line is too long, and a command longer than
    the width continues on the next line after a backslash.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            import sys

            from ..report.terminal import terminal_width

            width = terminal_width(sys.stdout) - 2  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        limit = width + 2  # the line may use the whole stream's width
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(textwrap.wrap(" ".join(paragraph), width=limit, break_long_words=False,
                                         break_on_hyphens=False))
                paragraph.clear()

        for line in text.splitlines():
            if not line.strip():
                flush()
                out.append("")
            elif line.startswith((" ", "examples:")) or "llm-power " in line[:24]:
                flush()
                out.extend(_example_lines(line, limit))
            else:
                paragraph.append(line.strip())
        flush()
        return "\n".join(indent + line if line else line for line in out)


def _example_lines(line: str, limit: int) -> list[str]:
    """An example command line (and its ``# comment``) within ``limit`` columns."""
    if len(line) <= limit:
        return [line]
    head, _, comment = line.partition("  # ")
    lead = len(head) - len(head.lstrip())
    if head.startswith("examples:"):
        lead = len("examples: ")
    out = [" " * lead + "# " + comment.strip()] if comment else []
    command = head.rstrip()
    while len(command) > limit:  # break at the last space that fits, continuing with " \"
        cut = command.rfind(" ", lead + 1, limit - 2)
        if cut <= lead:
            break
        out.append(command[:cut] + " \\")
        command = " " * (lead + 4) + command[cut + 1:]
    out.append(command)
    return out
