"""The progress bar of long commands: a rich bar on stderr per task the core reports (files read,
pairs computed, cluster resamples); none with ``--quiet`` or when output is not a terminal.

The bar owns the terminal only while nothing else is written: it appears once the work has run
for :data:`DELAY` seconds (short commands never show one), and the first character any code
writes to stdout or stderr stops and clears it before that character reaches the terminal -- so
a report line never shares a screen line with a bar fragment. Once stopped, it stays stopped
(later progress reports are dropped: the report is being printed).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["DELAY", "progress_bar"]

#: seconds of work before a bar is worth showing (``LLM_POWER_PROGRESS_DELAY`` overrides it)
DELAY = 1.0


def _delay() -> float:
    import math
    import os

    try:
        value = float(os.environ.get("LLM_POWER_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY
    return value if math.isfinite(value) and value >= 0 else DELAY


class _Live:
    """A rich Progress started late and stopped for good by the first output."""

    def __init__(self, stream: Any, delay: float) -> None:
        self.stream, self.delay = stream, delay
        self.started_at = time.monotonic()
        self.progress: Any = None
        self.tasks: dict[str, int] = {}
        self.pending: dict[str, tuple[int, int]] = {}
        self.stopped = False
        self.lock = threading.RLock()

    def listener(self, task: str, done: int, total: int) -> None:
        with self.lock:
            if self.stopped:
                return
            if self.progress is None:
                self.pending[task] = (done, total)
                if time.monotonic() - self.started_at < self.delay:
                    return
                self._start()
            for name, (d, t) in self.pending.items():
                self._update(name, d, t)
            self.pending.clear()
            self._update(task, done, total)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn())
        # the bar's own console writes to the real stderr, never through the stopping proxies
        self.progress = Progress(*columns, console=Console(file=self.stream, stderr=True), transient=True,
                                 redirect_stdout=False, redirect_stderr=False)
        self.progress.start()

    def _update(self, task: str, done: int, total: int) -> None:
        if task not in self.tasks:
            self.tasks[task] = int(self.progress.add_task(task, total=total))
        self.progress.update(self.tasks[task], completed=done, total=total)

    def stop(self) -> None:
        with self.lock:
            if self.stopped:
                return
            self.stopped = True
            if self.progress is not None:
                self.progress.stop()  # transient: the bar's lines are erased, the cursor is back at their start


class _StopOnWrite:
    """A text stream that stops the live bar before its first non-empty write."""

    def __init__(self, stream: Any, live: _Live) -> None:
        self._stream, self._live = stream, live

    def write(self, text: str) -> int:
        if text:
            self._live.stop()
        return int(self._stream.write(text))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, flush, buffer, ...
        return getattr(self._stream, name)


@contextmanager
def progress_bar(args: argparse.Namespace, *, delay: float | None = None) -> Iterator[None]:
    """Show the core's progress reports as a transient bar while the block runs and prints nothing."""
    interactive = all(hasattr(s, "isatty") and s.isatty() for s in (sys.stdout, sys.stderr))
    if getattr(args, "quiet", False) or not interactive:
        yield
        return
    from .._core.progress import listening

    out, err = sys.stdout, sys.stderr
    live = _Live(err, _delay() if delay is None else delay)
    sys.stdout, sys.stderr = _StopOnWrite(out, live), _StopOnWrite(err, live)
    try:
        with listening(live.listener):
            yield
    finally:
        live.stop()
        sys.stdout, sys.stderr = out, err
