"""Progress of long computations, reported to whoever listens (the CLI's progress bar), else nowhere.

The statistics core reports ``(task, done, total)``: ``done`` of ``total`` units of ``task`` are
finished. A counted task reports ``(task, 0, total)`` when it starts (so that a bar names it while
its first unit runs) and ``(task, total, total)`` when it is finished; a listener may then drop
it. A step with no natural count (drawing the charts of a report, the rank intervals' critical
value) is a task of one unit: :func:`step` reports ``(task, 0, 1)`` on entry and ``(task, 1, 1)``
on exit, also when the step raises. A caller that wants a progress bar installs a listener with
:func:`listening`. Nothing is printed by the core itself, and a report costs one context-variable
lookup when nobody listens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["advance", "listening", "step"]

#: (task, done, total) -> None
Listener = Callable[[str, int, int], None]

_LISTENER: ContextVar[Listener | None] = ContextVar("llm_power_progress", default=None)


def advance(task: str, done: int, total: int) -> None:
    """Report that ``done`` of ``total`` units of ``task`` are finished (``done == total``: the task is over)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(task, done, total)


@contextmanager
def step(task: str) -> Iterator[None]:
    """Report a step without a natural count: started on entry, finished on exit (a one-unit task)."""
    listener = _LISTENER.get()
    if listener is None:
        yield
        return
    listener(task, 0, 1)
    try:
        yield
    finally:
        listener(task, 1, 1)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send the progress of the computations inside the block to ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
