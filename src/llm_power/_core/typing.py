"""Typing aliases of the public signatures (for readers and type checkers; nothing at run time)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import numpy as np

__all__ = ["Alternative", "ArrayLike", "SeedLike"]

#: per-item scores, counts or labels: a list, tuple, numpy array or pandas Series/column
ArrayLike: TypeAlias = Any
#: ``alternative=``: the scipy vocabulary
Alternative: TypeAlias = Literal["two-sided", "less", "greater"]
#: ``rng=``: None (fresh entropy), an int seed, or a numpy Generator (the same seed, the same numbers)
SeedLike: TypeAlias = int | np.random.Generator | None
