"""The progress bar of long commands: a rich bar on stderr per task the core reports (files read,
pairs computed, cluster resamples); none with ``--quiet`` or when output is not a terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(args: argparse.Namespace) -> Iterator[None]:
    """Show the core's progress reports as a transient bar while the block runs."""
    interactive = all(hasattr(s, "isatty") and s.isatty() for s in (sys.stdout, sys.stderr))
    if getattr(args, "quiet", False) or not interactive:
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from .._progress import listening

    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, int] = {}

        def listener(task: str, done: int, total: int) -> None:
            if task not in tasks:
                tasks[task] = int(bar.add_task(task, total=total))
            bar.update(tasks[task], completed=done, total=total)  # type: ignore[arg-type]

        with listening(listener):
            yield
