"""The README's console blocks: parse them, run their commands, and (deliberately) rewrite them.

A console block is a fenced ``console`` block of ``$ llm-power ...`` lines, each followed by the
output the command prints (stdout at ``COLUMNS=100``, trailing spaces removed). The test
(tests/test_readme.py) runs every command and compares; after a deliberate change of the output,
regenerate with ``.venv/bin/python tests/readme_console.py`` and review the diff.

Commands run in a scratch directory that links to the repository's ``src`` and ``examples``
(files the commands read); a line ``report: /.../NAME`` is compared by its file name only.
"""

from __future__ import annotations

import contextlib
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
    assert argv[0] == "llm-power", f"README console commands run llm-power, not {argv[0]!r}"
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
    assert code == 0, f"{command!r} exited {code}"
    return [line.rstrip() for line in out.getvalue().rstrip("\n").splitlines()]


def normalise(lines: list[str]) -> list[str]:
    """Lines as compared: a report's absolute path by its file name."""
    return [f"report: …/{Path(line[8:]).name}" if line.startswith("report: ") else line.rstrip() for line in lines]


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A scratch directory with links to the repository's files the commands read."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("src", "examples"):
            (Path(tmp) / name).symlink_to(ROOT / name)
        yield Path(tmp)


def regenerate() -> None:
    """Rewrite every console block of README.md with the commands' current output."""
    text = README.read_text()
    with scratch() as cwd:
        pieces, last = [], 0
        for match, pairs in blocks(text):
            body = []
            for command, _ in pairs:
                body.append(f"$ {command}")
                body += normalise(run(command, cwd))
            pieces += [text[last:match.start(1)], "\n".join(body) + "\n"]
            last = match.end(1)
        pieces.append(text[last:])
    README.write_text("".join(pieces))
    print(f"wrote {README}", file=sys.stderr)


if __name__ == "__main__":
    regenerate()
