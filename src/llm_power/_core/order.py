"""The order of item ids: natural ("q2" before "q10"), the one sort key of every reader."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["natural_key"]

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(item: Any) -> tuple[Any, ...]:
    """The sort key of item ids: natural order, then the text (so 'q1' and 'q01' never tie)."""
    return _natural(item), str(item)


def _natural(item: Any) -> tuple[Any, ...]:
    """Sort 'task:10' after 'task:9'."""
    # ASCII digits only: '①' or '٣' are characters of the id, not numbers to sort by
    return tuple(int(t) if t.isascii() and t.isdigit() else t for t in _DIGITS.split(str(item)))
