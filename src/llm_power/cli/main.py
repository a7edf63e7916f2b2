"""Entry point of the ``llm-power`` command.

Exit codes (:data:`EXIT_CODES`, one kind of error each, the same in every command): 0 success; 1 the
input (a file, its records or fields, or a column, model or judge the files lack); 2 the command line
(an unknown command or flag, a bad option value, options that do not go together), as argparse's own
usage errors. An error is one line on stderr (no traceback unless ``--traceback``), and the last line:
no note follows it. ``gate`` adds 3 INCONCLUSIVE and 4 FAIL.
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
from .._core.suggest import did_you_mean
from .._version import __version__
from ..report.terminal import safe_text, short_words, terminal_width
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
    verify,
)

COMMANDS = (ci, coverage, compare, plan, adjust, diagnose, rank, noise, gate, aggregate, arena, judges, ppi, passk,
            subset, verify, demo)

#: the exit codes of every command: one per kind of error (``gate`` adds 3 INCONCLUSIVE and 4 FAIL)
EXIT_CODES = {
    0: "success",
    1: "the input: a file that is missing, unreadable or malformed, a record or field that cannot be used, "
       "a column, model or judge that the files lack, or a request these files cannot meet",
    2: "the command line: an unknown command or flag, a bad option value, options that do not go together, "
       "or an output path that must not be written (argparse's usage errors, and the same checks made later)",
}


#: the templates of a bad option in the package's messages (house style), which start by naming it:
#: "`confidence_level` must be in (0, 1); got 1.5.", the impossible request "rho=0.95 is outside the
#: admissible range ...", and two options together: "`p_a` and `p_b` are equal (delta = 0) ..."
_OPTION_ERROR = re.compile(r"`?([A-Za-z_]\w*)`?(?: must |=\S+ is outside | and `([A-Za-z_]\w*)`)")


def exit_code(exc: BaseException, flags: dict[str, str]) -> int:
    """The exit code of an error that ends a command (:data:`EXIT_CODES`): 2 for the command line -- the
    command's own :class:`~._types.UsageError`, an output path refused, and a check of the library that
    names one of the command's options (``flags``: parameter -> flag) in the option templates --, else 1,
    the input (a :class:`~llm_power.DataError` names the file, record and field; a file not found; data
    a computation cannot use).
    """
    from ..report.files import OutputPathError
    from ._types import UsageError

    if isinstance(exc, (UsageError, OutputPathError)):
        return 2
    if isinstance(exc, (LLMPowerError, OSError, ArithmeticError)):
        return 1
    option = _OPTION_ERROR.match(str(exc))
    named = [] if option is None else [n for n in option.groups() if n is not None]
    return 2 if named and all(n in flags for n in named) else 1


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
    """argparse with one-line usage errors (exit 2): the message and where to look, no usage block; an
    unknown flag is reported by the command it was given to, and a misspelled flag, command or choice
    with its close matches.
    """

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """Parse the command line; arguments no parser knows are a usage error of the command that runs."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = _chosen(self, parsed)
            chosen.error(unrecognized(extras, chosen))
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """The check of a choice (a command, ``--method``), with the close matches of a misspelling."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            text = did_you_mean(str(value), action.choices or ())
            if not text:
                raise
            head = f"invalid choice: {value!r}"
            message = exc.message.replace(head, f"{head}; {text}", 1) if head in exc.message else \
                f"{exc.message}; {text}"
            raise argparse.ArgumentError(action, message) from None

    def error(self, message: str) -> NoReturn:
        """Print the usage error on one line and exit with status 2."""
        text = short_words(f"{self.prog}: error: {safe_text(' '.join(message.split()))} (see {self.prog} --help)")
        if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
            import textwrap

            # stderr's own terminal: with stdout redirected, stdout's size is not the screen's
            width = terminal_width(sys.stderr)
            text = "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
                                           break_on_hyphens=False)) or text
        self.exit(2, text + "\n")


def unrecognized(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """The "unrecognized arguments" error, with the close matches of each unknown flag among ``parser``'s."""
    flags = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]  # noqa: SLF001
    unknown = [w.split("=", 1)[0] for w in extras if w.startswith("-") and len(w) > 1 and not _NUMBER.fullmatch(w)]
    hints = [(w, did_you_mean(w, flags, quote=False)) for w in dict.fromkeys(unknown)]
    hints = [(w, h) for w, h in hints if h]
    shown = "; ".join(h if len(unknown) == 1 else f"{w}: {h}" for w, h in hints)
    return f"unrecognized arguments: {' '.join(extras)}{f'; {shown}' if shown else ''}"


_NUMBER = re.compile(r"-\d[\d.eE+-]*")


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
    flags.update({k: flags[v] for k, v in (("p_a", "pa"), ("p_b", "pb"), ("item_column", "id_column"),
                                           ("n_resamples", "resamples")) if v in flags})
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
            code = _run(args)
        except BrokenPipeError:  # output piped into `head` and closed early: not an error
            sys.stderr.close()
            return 0
        except (LLMPowerError, ValueError, TypeError, OSError, ArithmeticError) as exc:
            if args.traceback:
                raise
            # the one line, and the last: the notes of a command that failed are not what the user needs
            message_line(f"llm-power {_command(args)}: error: {safe_text(as_flags(str(exc), args))}")
            return exit_code(exc, args.cli_flags)
        except KeyboardInterrupt:  # pragma: no cover - interactive
            print("llm-power: interrupted", file=sys.stderr)
            return 130
    _notes(args, caught)
    return code


def message_line(text: str) -> None:
    """One message on stderr: one line for pipes and logs (grep-able, as tests and CI read it);
    on a terminal, wrapped at its width between words, continuation lines indented.
    """
    stream = sys.stderr
    text = short_words(text)
    if hasattr(stream, "isatty") and stream.isatty():
        import textwrap

        width = terminal_width(stream)  # stderr's own terminal (stdout may be a file)
        text = "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
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
    """Run the command (its errors are raised: :func:`main` reports them and picks the exit code)."""
    from ..report.files import check_output_folder, check_outputs
    from ._bar import progress_bar
    from ._paths import command_paths

    outputs, inputs, folders = command_paths(args)
    check_outputs(outputs, inputs)  # before anything is read or computed
    for folder in folders:
        check_output_folder(folder, inputs, outputs)
    with progress_bar(args):
        return int(args.run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
