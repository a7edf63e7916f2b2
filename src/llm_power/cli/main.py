"""Entry point of the ``llm-power`` command.

Exit codes: 0 success; 1 bad data or values (one line on stderr, no traceback unless
``--traceback``); 2 bad usage (argparse).
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from .._core.errors import LLMPowerError
from .._core.options import VOCABULARY_FLAGS, vocabulary_type
from .._version import __version__
from ..report.files import OutputPathError
from ..report.terminal import safe_text, short_words
from . import (
    adjust,
    aggregate,
    arena,
    ci,
    compare,
    coverage,
    demo,
    diagnose,
    gate,
    judges,
    noise,
    passk,
    plan,
    ppi,
    rank,
    subset,
)

COMMANDS = (ci, coverage, compare, plan, adjust, diagnose, rank, noise, gate, aggregate, arena, judges, ppi, passk,
            subset, demo)


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand takes."""
    parent = OneLineParser(add_help=False)
    parent.add_argument(
        "--format", choices=("table", "json"), default="table",
        help="table (default) for people, json for machines (written to stdout)",
    )
    parent.add_argument(
        "--traceback", action="store_true", help="show the full Python traceback on errors"
    )
    parent.add_argument(
        "--quiet", action="store_true", help="no progress bar (there is none when output is not a terminal)"
    )
    return parent


class OneLineParser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2): the message and where to look, no usage block."""

    def error(self, message: str) -> NoReturn:
        """Print the usage error on one line and exit with status 2."""
        text = short_words(f"{self.prog}: error: {safe_text(' '.join(message.split()))} (see {self.prog} --help)")
        if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
            import shutil
            import textwrap

            width = max(shutil.get_terminal_size((100, 24)).columns, 20)
            text = "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
                                           break_on_hyphens=False)) or text
        self.exit(2, text + "\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = OneLineParser(
        prog="llm-power",
        description="Statistically honest numbers for LLM evaluations.",
    )
    parser.add_argument("--version", action="version", version=f"llm-power {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parent = common_options()
    for module in COMMANDS:
        module.register(sub, parent)
    for each in _parsers(parser):  # the vocabulary's flags are checked as they are parsed, by one rule
        for action in each._actions:  # noqa: SLF001 - argparse has no public way to list a parser's actions
            name = next((VOCABULARY_FLAGS[o] for o in action.option_strings if o in VOCABULARY_FLAGS), None)
            if name is not None:
                action.type = vocabulary_type(name)
    return parser


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every subcommand's, depth first."""
    out = [parser]
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for child in dict.fromkeys(action.choices.values()):
                out += _parsers(child)
    return out


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the subcommand that runs."""
    chosen = parser
    for name in (getattr(args, "command", None), _second(args)):
        subs = [a for a in chosen._actions if isinstance(a, argparse._SubParsersAction)]  # noqa: SLF001
        if name and subs and name in subs[0].choices:
            chosen = subs[0].choices[name]
    return chosen


def _check_levels(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--power`` above the tests' level (``--alpha``, or 1 - ``--confidence-level`` where an interval sets
    it), the rule every public function has, as a usage error naming the flags.
    """
    power = getattr(args, "power", None)
    if not isinstance(power, float):
        return
    flags = args.cli_flags
    if isinstance(getattr(args, "alpha", None), float) and "alpha" in flags:
        level, name = args.alpha, flags["alpha"]
    elif isinstance(getattr(args, "confidence_level", None), float) and "confidence_level" in flags:
        level, name = 1.0 - args.confidence_level, f"1 - {flags['confidence_level']}"
    else:
        return
    if not power > level:
        from .._core.params import POWER_REASON

        _chosen(parser, args).error(f"argument --power: must be greater than {name} ({level:g}); got {power:g}: "
                                    f"{POWER_REASON}")


def _option_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """Option names -> "--flag" for the options of the subcommand that runs (Python parameters that are
    named alike, e.g. ``alpha`` -> ``--alpha``, ``p_a`` -> ``--pa``).
    """
    chosen = _chosen(parser, args)
    flags: dict[str, str] = {}
    for action in chosen._actions:  # noqa: SLF001 - argparse has no public way to list a parser's actions
        long = [o for o in action.option_strings if o.startswith("--")]
        if long:
            flags[action.dest] = long[0]
            for option in long:  # --metric and its alias --score-column
                flags.setdefault(option[2:].replace("-", "_"), option)
        elif not action.option_strings and isinstance(action.metavar, str) and action.dest != "help":
            flags.setdefault(action.dest, action.metavar)  # a positional: its name on the usage line (K, N)
    # Python parameters named unlike their flag
    flags.update({k: flags[v] for k, v in (("p_a", "pa"), ("p_b", "pb"), ("item_column", "id_column"))
                  if v in flags})
    return flags


def _command(args: argparse.Namespace) -> str:
    return " ".join(filter(None, (args.command, _second(args))))


def _second(args: argparse.Namespace) -> str | None:
    """The second word of a two-word command (``plan mde``, ``subset estimate``)."""
    return getattr(args, "plan_command", None) or getattr(args, "subset_command", None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.cli_flags = _option_flags(parser, args)
    _check_levels(parser, args)
    if args.command is None:  # bare `llm-power`: the help, not an error
        parser.print_help()
        return 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return _run(args)
        finally:
            _notes(args, caught)


def message_line(text: str) -> None:
    """One message on stderr: one line for pipes and logs (grep-able, as tests and CI read it);
    on a terminal, wrapped at its width between words, continuation lines indented.
    """
    stream = sys.stderr
    text = short_words(text)
    if hasattr(stream, "isatty") and stream.isatty():
        import shutil
        import textwrap

        width = shutil.get_terminal_size((100, 24)).columns
        text = "\n".join(textwrap.wrap(text, width=max(width, 20), subsequent_indent="  ", break_long_words=False,
                                       break_on_hyphens=False)) or text
    print(text, file=stream)


def _notes(args: argparse.Namespace, caught: list[Any]) -> None:
    """Warnings become one-line notes on stderr (deduplicated), never raw Python warnings."""
    if sys.stderr is None or sys.stderr.closed:
        return
    seen = set()
    for item in caught:
        if issubclass(item.category, ResourceWarning):  # the interpreter's housekeeping, not the user's data
            continue
        message = " ".join(str(item.message).split())
        if message in seen:
            continue
        seen.add(message)
        message_line(f"llm-power {_command(args)}: note: {safe_text(as_flags(message, args))}")


_PARAMETER = re.compile(r"`([a-z][a-z0-9_]*)`")
_FLAG_VALUE = re.compile(r"(--[a-z][a-z0-9-]*)='([^'\s]*)'")


def as_flags(message: str, args: argparse.Namespace) -> str:
    """A library message in the CLI's words: a Python parameter the command has as an option
    (`` `confidence_level` ``) becomes its flag (``--confidence-level``).
    """
    flags: dict[str, str] = getattr(args, "cli_flags", {})

    def flag(match: re.Match[str]) -> str:
        return flags.get(match.group(1), match.group(0))

    # `name`='value' in Python's words is "--flag value" on the command line
    return _FLAG_VALUE.sub(r"\1 \2", _PARAMETER.sub(flag, message))


def _run(args: argparse.Namespace) -> int:
    from ..report.files import check_output_folder, check_outputs
    from ._bar import progress_bar
    from ._paths import command_paths

    try:
        outputs, inputs, folders = command_paths(args)
        check_outputs(outputs, inputs)  # before anything is read or computed
        for folder in folders:
            check_output_folder(folder, inputs, outputs)
        with progress_bar(args):
            return int(args.run(args) or 0)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        sys.stderr.close()
        return 0
    except OutputPathError as exc:  # a usage error: exit 2, as argparse does
        if args.traceback:
            raise
        message_line(f"llm-power {_command(args)}: error: {safe_text(str(exc))}")
        return 2
    except (LLMPowerError, ValueError, TypeError, OSError, ArithmeticError) as exc:
        if args.traceback:
            raise
        message_line(f"llm-power {_command(args)}: error: {safe_text(as_flags(str(exc), args))}")
        return 1
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("llm-power: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
