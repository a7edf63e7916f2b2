"""Progress of long computations, reported to whoever listens (the CLI's progress bar), else nowhere.

The statistics core calls :func:`advance` from its loops (blocks of pairs, chunks of cluster
resamples, files read); a caller that wants a progress bar installs a listener with
:func:`listening`. Nothing is printed by the core itself, and a report costs one context-variable
lookup when nobody listens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["advance", "listening"]

#: (task, done, total) -> None
Listener = Callable[[str, int, int], None]

_LISTENER: ContextVar[Listener | None] = ContextVar("llm_power_progress", default=None)


def advance(task: str, done: int, total: int) -> None:
    """Report that ``done`` of ``total`` units of ``task`` are finished."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(task, done, total)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send the progress of the computations inside the block to ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
