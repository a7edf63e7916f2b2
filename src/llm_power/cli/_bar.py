"""The progress bar of long commands: one line per step the core reports (files read, pairs
computed, cluster resamples, rank intervals, the HTML report's charts, ...), on stderr; none with
``--quiet`` or when output is not a terminal.

A counted step is a bar with its share done and the time left; a step without a count (a one-unit
task, see :mod:`llm_power._core.progress`) a spinner with its name and the time it has run. A step
leaves the screen when it reports its end, so the lines always name the steps that are running
(nested steps below the step that runs them), never a finished one at 100%.

The bar owns the terminal only while nothing else is written: it appears once the work has run
for :data:`DELAY` seconds (short commands never show one; a timer shows it then even if the
running step reports nothing more), and the first character any code writes to stdout or stderr
stops and clears it before that character reaches the terminal -- so a report line never shares
a screen line with a bar fragment. Once stopped, it stays stopped (later progress reports are
dropped: the report is being printed).
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
#: the width of a counted step's bar: a line of the longest step's name stays within 80 columns
BAR_WIDTH = 24


def _delay() -> float:
    import math
    import os

    try:
        value = float(os.environ.get("LLM_POWER_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY
    return value if math.isfinite(value) and value >= 0 else DELAY


def _columns() -> tuple[Any, ...]:
    """Spinner, name, then a bar, its percentage and the time left for a counted step, or the time
    it has run for a step without a count (total 1).
    """
    from rich.progress import (
        BarColumn,
        ProgressColumn,
        SpinnerColumn,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Counted(ProgressColumn):
        """``counted`` for a counted step, ``other`` (or nothing) for a step without a count."""

        def __init__(self, counted: Any, other: Any = None) -> None:
            super().__init__()
            self.counted, self.other = counted, other

        def render(self, task: Any) -> Any:
            if task.total is not None and task.total > 1:
                return self.counted.render(task)
            return Text("") if self.other is None else self.other.render(task)

    return (SpinnerColumn(), TextColumn("{task.description}", markup=False), Counted(BarColumn(bar_width=BAR_WIDTH)),
            Counted(TaskProgressColumn()), Counted(TimeRemainingColumn(), TimeElapsedColumn()))


class _Live:
    """A rich Progress started late, one line per running step, stopped for good by the first output."""

    def __init__(self, stream: Any, delay: float) -> None:
        self.stream, self.delay = stream, delay
        self.started_at = time.monotonic()
        self.progress: Any = None
        self.running: dict[str, tuple[int, int]] = {}  # the steps under way, in the order they started
        self.shown: dict[str, Any] = {}  # their rich task ids once on screen
        self.timer: threading.Timer | None = None
        self.stopped = False
        self.lock = threading.RLock()

    def listener(self, task: str, done: int, total: int) -> None:
        with self.lock:
            if self.stopped:
                return
            if done >= total:  # over: off the screen at once (no stale 100% under the next step)
                self.running.pop(task, None)
                if task in self.shown:
                    self.progress.remove_task(self.shown.pop(task))
                return
            self.running[task] = (done, total)
            if self.progress is not None:
                self._show(task, done, total)
                return
            wait = self.delay - (time.monotonic() - self.started_at)
            if wait <= 0:
                self._start()
            elif self.timer is None:  # shown when the delay is over, even if this step reports nothing more
                self.timer = threading.Timer(wait, self._due)
                self.timer.daemon = True
                self.timer.start()

    def _due(self) -> None:
        with self.lock:
            self.timer = None
            if not self.stopped and self.progress is None and self.running:
                self._start()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import Progress

        columns = _columns()
        if self.stopped:  # something was written while rich was imported
            return
        # the bar's own console writes to the real stderr, never through the stopping proxies
        self.progress = Progress(*columns, console=Console(file=self.stream, stderr=True), transient=True,
                                 redirect_stdout=False, redirect_stderr=False)
        for name, (d, t) in self.running.items():
            self._show(name, d, t)
        self.progress.start()

    def _show(self, task: str, done: int, total: int) -> None:
        if task not in self.shown:
            self.shown[task] = self.progress.add_task(task, total=total)
        self.progress.update(self.shown[task], completed=done, total=total)

    def stop(self) -> None:
        with self.lock:
            if self.stopped:
                return
            self.stopped = True
            if self.timer is not None:
                self.timer.cancel()
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
