"""The pairs of a diagnosis as columns, the derived ones formed on first access.

With millions of pairs each column is tens of MB. The models' names, ranks and means per pair
and the names of the test and regime are gathers of small arrays by the pair indices; they are
formed when a column is first read (a report, ``to_frame``, the Parquet writer read them all;
code that needs a few columns of ten million pairs does not pay for the rest).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

__all__ = ["PairColumns", "pair_indices"]


class PairColumns(Mapping[str, np.ndarray]):
    """A read-only mapping of column name -> array (one value per pair), in a fixed key order.

    ``data`` holds computed columns; ``derived`` maps a name to a recipe formed on first access
    and kept: ``(values, index)`` is ``values[index]``; ``("rank", index)`` is ``index + 1`` as
    int64; ``("items", n_star)`` is N* rounded up to whole items; ``("se", var, n)`` is
    ``sqrt(var / n)``.
    """

    __slots__ = ("_data", "_derived", "_keys")

    def __init__(self, data: dict[str, np.ndarray], derived: dict[str, tuple[Any, ...]],
                 keys: list[str]) -> None:
        self._data = dict(data)
        self._derived = dict(derived)
        self._keys = list(keys)

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self._data:
            return self._data[key]
        if key not in self._derived:
            raise KeyError(key)
        recipe = self._derived.pop(key)
        column = _form(*recipe)
        self._data[key] = column
        return column

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._data or key in self._derived

    def __reduce__(self) -> tuple[Any, ...]:  # pickled with every column formed
        return PairColumns, ({k: self[k] for k in self._keys}, {}, self._keys)

    def __repr__(self) -> str:
        return f"PairColumns({', '.join(self._keys)})"


def _form(kind: Any, *args: Any) -> np.ndarray:
    """One derived column from its recipe (see :class:`PairColumns`)."""
    from .._kernel.sizes import ceil_items_array

    if isinstance(kind, str) and kind == "rank":
        return np.asarray(args[0], dtype=np.int64) + 1
    if isinstance(kind, str) and kind == "items":
        return ceil_items_array(args[0])
    if isinstance(kind, str) and kind == "se":
        se: np.ndarray = np.sqrt(np.asarray(args[0], dtype=float) / args[1])
        return se
    gathered: np.ndarray = np.asarray(kind)[args[0]]  # values[index]
    return gathered


def pair_indices(m_models: int, pairs: str) -> np.ndarray:
    """(P, 2) ranks of the pairs, int32: adjacent ranks, or every i < j row by row (the order of
    ``numpy.triu_indices``, without its two int64 arrays and their stacked copy).
    """
    if pairs == "adjacent":
        return np.stack([np.arange(m_models - 1), np.arange(1, m_models)], axis=1).astype(np.int32)
    out = np.empty((m_models * (m_models - 1) // 2, 2), dtype=np.int32)
    start = 0
    for r in range(m_models - 1):
        stop = start + m_models - 1 - r
        out[start:stop, 0] = r
        out[start:stop, 1] = np.arange(r + 1, m_models, dtype=np.int32)
        start = stop
    return out
