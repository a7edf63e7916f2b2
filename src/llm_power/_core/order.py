"""The order of item ids: natural ("q2" before "q10"), the one sort key of every reader."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["natural_key", "natural_order"]

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(item: Any) -> tuple[Any, ...]:
    """The sort key of item ids: natural order, then the text (so 'q1' and 'q01' never tie)."""
    return _natural(item), str(item)


def _natural(item: Any) -> tuple[Any, ...]:
    """Sort 'task:10' after 'task:9'."""
    # ASCII digits only: '①' or '٣' are characters of the id, not numbers to sort by
    return tuple(int(t) if t.isascii() and t.isdigit() else t for t in _DIGITS.split(str(item)))


def natural_order(items: list[Any]) -> list[int]:
    """The positions of ``items`` sorted by :func:`natural_key`: ``sorted(range(len(items)), key=...)``,
    without a key tuple per item when every id is a text without digits followed by digits ("mmlu:12",
    the ids of lm-eval and inspect tasks): then the order is by the text, then the number.
    """
    if items and set(map(type, items)) == {str}:
        import numpy as np

        heads = [item.rstrip("0123456789") for item in items]
        cut = np.fromiter(map(len, heads), dtype=np.int64, count=len(items))
        digits = np.fromiter(map(len, items), dtype=np.int64, count=len(items)) - cut
        distinct = sorted(set(heads))
        if digits.min() > 0 and digits.max() <= 18 and not any(_DIGITS.search(h) for h in distinct):  # noqa: PLR2004
            code = {h: k for k, h in enumerate(distinct)}
            numbers = np.fromiter(map(int, [item[k:] for item, k in zip(items, cut.tolist(), strict=True)]),
                                  dtype=np.int64, count=len(items))
            groups = np.fromiter(map(code.__getitem__, heads), dtype=np.int64, count=len(items))
            order = np.lexsort((numbers, groups))
            if not ((np.diff(numbers[order]) == 0) & (np.diff(groups[order]) == 0)).any():
                return list(order.tolist())  # no tie ("q1" and "q01" tie on the number: the text decides)
    return sorted(range(len(items)), key=lambda r: natural_key(items[r]))
