"""Number formatting shared by every summary and renderer: p-values, gaps and scores in their units.

0/1 scores are accuracies and are shown in percent / percentage points; graded scores (MQM,
BLEU, rewards, preference margins) are shown in their own units -- never multiplied by 100.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_gap", "fmt_n_star", "fmt_p", "fmt_score", "gap_unit", "p_is"]

#: p-values below this are shown as "< 1e-300" (they are floored at the smallest normal double)
P_DISPLAY_FLOOR = 1e-300


def fmt_p(p: Any, digits: int = 3) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    p = float(p)
    if p < P_DISPLAY_FLOOR:
        return "< 1e-300"
    return f"{p:.{digits}g}"


def p_is(p: Any, digits: int = 4) -> str:
    """'p = 0.0215' or 'p < 1e-300'."""
    text = fmt_p(p, digits)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def gap_unit(binary: bool) -> str:
    return "pts" if binary else "score units"


def fmt_gap(delta: Any, binary: bool, *, sign: bool = True, digits: int = 2) -> str:
    if delta is None or (isinstance(delta, float) and math.isnan(delta)):
        return "—"
    delta = float(delta)
    if math.isinf(delta):
        return ("+∞" if delta > 0 else "−∞") if sign else "∞"
    if binary:
        return f"{100 * delta:+.{digits}f}" if sign else f"{100 * delta:.{digits}f}"
    return f"{delta:+.4g}" if sign else f"{delta:.4g}"


def fmt_score(mean: Any, binary: bool) -> str:
    return f"{100 * float(mean):.2f}%" if binary else f"{float(mean):.4g}"


def fmt_n_star(n_star: Any) -> str:
    if n_star is None or (isinstance(n_star, float) and math.isnan(n_star)):
        return "—"
    return "∞" if math.isinf(n_star) else f"{int(n_star):,}"
