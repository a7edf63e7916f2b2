"""``llm-power ARGS`` in this process, seen as a subprocess would see it (issue 43: the fast tier).

:func:`run` calls :func:`llm_power.cli.main.main` with standard output and error captured as bytes
(``sys.stdout.buffer`` works, as binary writers need), in the given working folder and with the given
extra environment variables, and returns the :class:`subprocess.CompletedProcess` that
``subprocess.run([sys.executable, "-m", "llm_power", *args], capture_output=True, text=True)`` returns:
exit code (argparse's ``SystemExit`` included), both streams decoded with universal newlines. A test
switches between the two without changing an assertion; it saves a fresh interpreter's start-up and
imports (about a second each) per call.

Keep a real subprocess where the process is the point: the console script and ``python -m``, what a
command imports (``--help`` loads no numpy), a memory cap (``RLIMIT_AS``), a fresh interpreter's
``PYTHONHASHSEED``, a terminal (tests/_pty.py, tmux), a read that may block (a FIFO, under a timeout).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path


class _Stream(io.TextIOWrapper):
    """A text stream over bytes that is not a terminal, like a pipe (its ``buffer`` takes bytes)."""

    def __init__(self, errors: str) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors=errors, newline="\n", write_through=True)

    def close(self) -> None:  # main() closes stderr on a broken pipe; the bytes stay readable
        self.flush()

    def text(self) -> str:
        self.flush()
        raw = self.buffer.getvalue()  # type: ignore[attr-defined]
        return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace", newline=None).read()


@contextlib.contextmanager
def _environment(cwd: str | Path | None, env: Mapping[str, str] | None) -> Iterator[None]:
    saved_env = {key: os.environ.get(key) for key in env or {}}
    saved_cwd = os.getcwd()
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(args: Sequence[str | Path], *, cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
        check: bool = False, input: str | None = None) -> subprocess.CompletedProcess[str]:  # noqa: A002
    """``llm-power ARGS`` run by ``main()`` in this process; ``env`` adds variables (as
    ``{**os.environ, **env}`` would); the result is what ``subprocess.run(..., text=True)`` returns."""
    from llm_power.cli.main import main

    argv = [str(a) for a in args]
    out, err = _Stream("strict"), _Stream("backslashreplace")
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode("utf-8")), encoding="utf-8")
    streams = (sys.stdin, sys.stdout, sys.stderr)
    with _environment(cwd, env):
        sys.stdin, sys.stdout, sys.stderr = stdin, out, err
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors and --help/--version
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=err)
        finally:
            sys.stdin, sys.stdout, sys.stderr = streams
    result = subprocess.CompletedProcess([sys.executable, "-m", "llm_power", *argv], code, out.text(), err.text())
    if check:
        result.check_returncode()
    return result
