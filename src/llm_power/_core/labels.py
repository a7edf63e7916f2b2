"""Whether a label or id is missing, without numpy or pandas (the readers' registry imports it, and
``--help`` reads the registry's names).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["missing_label"]


def missing_label(value: Any) -> bool:
    """Whether a label is missing: None, NaN, pandas NA/NaT, an empty or blank string."""
    if value is None:
        return True
    if isinstance(value, float):  # numpy's float64 too
        return math.isnan(value)
    if isinstance(value, str):
        return value.strip() == ""
    if type(value).__name__ in {"NAType", "NaTType"}:  # pandas NA / NaT, without importing pandas
        return True
    try:  # other NaN-like scalars (numpy float32 NaN, decimal NaN, numpy datetime NaT)
        return bool(value != value)
    except (TypeError, ValueError):
        return False
