"""Run a command in a real pseudo-terminal and read the screen a user would see.

The program is told the terminal is ``columns`` wide (TIOCSWINSZ), but the emulated screen (pyte)
is much wider: a line the program writes past its width stays visible as text beyond the
column, instead of being wrapped out of sight. The raw byte stream is kept too (to assert that a
progress bar was on screen at some point, so "no bar fragment" is not vacuous).
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[1]
SCREEN_WIDTH = 400
SCREEN_ROWS = 600


@dataclass
class Screen:
    columns: int
    lines: list[str]  # the final screen, trailing blanks stripped, empty tail dropped
    raw: str  # everything the program wrote (both streams), decoded
    returncode: int

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def too_wide(self) -> list[str]:
        from wcwidth import wcswidth

        return [line for line in self.lines if wcswidth(line) > self.columns]


def run(argv: list[str], columns: int, *, rows: int = 50, timeout: float = 300, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> Screen:
    """Run ``llm-power argv`` in a pty of ``columns`` x ``rows`` and return the final screen."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "CI")}
    environment.update({"TERM": "xterm-256color", "PYTHONUNBUFFERED": "1", **(env or {})})
    proc = subprocess.Popen([sys.executable, "-m", "llm_power", *argv], stdin=slave, stdout=slave, stderr=slave,
                            cwd=cwd or ROOT, env=environment, close_fds=True, start_new_session=True)
    os.close(slave)
    screen = pyte.Screen(SCREEN_WIDTH, SCREEN_ROWS)
    stream = pyte.ByteStream(screen)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed its end
                    break
                if not data:
                    break
                chunks.append(data)
                stream.feed(data)
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            raise TimeoutError(f"llm-power {' '.join(argv)} took more than {timeout} s")
    finally:
        os.close(master)
    code = proc.wait(timeout=30)
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return Screen(columns, lines, b"".join(chunks).decode("utf-8", errors="replace"), code)
