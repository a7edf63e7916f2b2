"""The README's console blocks are the commands' real output: check them, or regenerate them.

A console block is a fenced ``console`` block of ``$ llm-power ...`` lines, each followed by what the
command prints: its stdout at ``COLUMNS=100`` (a pipe, as the README's readers copy it), trailing
spaces removed; stderr (notes, warnings) is not shown. Usage::

    .venv/bin/python scripts/readme_blocks.py          # rewrite every block from the real output
    .venv/bin/python scripts/readme_blocks.py --check  # exit 1 with a diff when a block has drifted

The blocks are never edited by hand: after a deliberate change of a command's output, regenerate
and review the diff. ``tests/test_readme.py`` compares each command with this module's
:func:`drift` and runs ``--check``.

Every line is compared as it is: no line of the commands shown is variable. None prints a timing,
and each runs in a scratch folder (with links to the repository's ``src`` and ``examples``, the
files the commands read), so the one path, ``report: report.html``, is relative to the working
folder exactly as ``make demo`` prints it in a checkout.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```console\n(.*?)^```$", re.M | re.S)
WIDTH = "100"


def blocks(text: str) -> Iterator[tuple[re.Match[str], list[tuple[str, list[str]]]]]:
    """Each console block and its (command, expected output lines) pairs."""
    for match in FENCE.finditer(text):
        pairs: list[tuple[str, list[str]]] = []
        for line in match.group(1).splitlines():
            if line.startswith("$ "):
                pairs.append((line[2:], []))
            elif pairs:
                pairs[-1][1].append(line)
        yield match, pairs


def run(command: str, cwd: Path) -> list[str]:
    """The stdout lines of one ``llm-power`` command, as a 100-column pipe shows them."""
    from llm_power.cli.main import main

    argv = shlex.split(command.split("  #")[0])
    if argv[0] != "llm-power":
        raise ValueError(f"README console commands run llm-power, not {argv[0]!r}")
    out = io.StringIO()
    old_cwd, old_columns = Path.cwd(), os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv[1:])
    finally:
        os.chdir(old_cwd)
        if old_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old_columns
    if code != 0:
        raise RuntimeError(f"{command!r} exited {code}")
    return [line.rstrip() for line in out.getvalue().rstrip("\n").splitlines()]


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A scratch working folder with links to the repository's files the commands read."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("src", "examples"):
            (Path(tmp) / name).symlink_to(ROOT / name)
        yield Path(tmp)


def drift(command: str, expected: list[str]) -> list[str]:
    """The unified diff of what the README shows for ``command`` against what it prints ([] when equal)."""
    with scratch() as cwd:
        got = run(command, cwd)
    shown = [line.rstrip() for line in expected]
    return list(difflib.unified_diff(shown, got, "README.md", f"$ {command}", lineterm=""))


def regenerate(text: str) -> str:
    """``text`` (a README) with every console block rewritten from its commands' current output."""
    pieces, last = [], 0
    with scratch() as cwd:
        for match, pairs in blocks(text):
            body = []
            for command, _ in pairs:
                body += [f"$ {command}", *run(command, cwd)]
            pieces += [text[last:match.start(1)], "\n".join(body) + "\n"]
            last = match.end(1)
    return "".join([*pieces, text[last:]])


def main(argv: list[str] | None = None) -> int:
    """Rewrite the README's console blocks, or with ``--check`` report the ones that drifted (exit 1)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff on drift")
    parser.add_argument("--readme", type=Path, default=README, help="the Markdown file (default README.md)")
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    if args.check:
        diffs = [d for _, pairs in blocks(text) for command, shown in pairs for d in drift(command, shown)]
        print("\n".join(diffs) if diffs else f"{args.readme}: every console block is the real output")
        return 1 if diffs else 0
    args.readme.write_text(regenerate(text), encoding="utf-8")
    print(f"wrote {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
