"""Number formatting shared by every summary and renderer: p-values, gaps and scores in their units.

0/1 scores are accuracies and are shown in percent / percentage points; graded scores (MQM,
BLEU, rewards, preference margins) are shown in their own units -- never multiplied by 100.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_gap", "fmt_margins", "fmt_n_star", "fmt_p", "fmt_score", "p_is", "unique_short_names"]

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


def fmt_gap(delta: Any, binary: bool, *, sign: bool = True, digits: int = 2, decimals: int | None = None) -> str:
    """A gap: points for 0/1 scores (``digits`` decimals); graded scores with ``decimals`` decimals
    (one precision for a whole table) or, without it, 4 significant digits.
    """
    if delta is None or (isinstance(delta, float) and math.isnan(delta)):
        return "—"
    delta = float(delta)
    if math.isinf(delta):
        return ("+∞" if delta > 0 else "−∞") if sign else "∞"
    if binary:
        return f"{100 * delta:+.{digits}f}" if sign else f"{100 * delta:.{digits}f}"
    if decimals is not None:
        return f"{delta:+.{decimals}f}" if sign else f"{delta:.{decimals}f}"
    return f"{delta:+.4g}" if sign else f"{delta:.4g}"


def items_text(n: Any, noun: str = "item") -> str:
    """``n`` with its noun agreeing: "1 item", "12,032 items"."""
    n = int(n)
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def fmt_score(mean: Any, binary: bool, *, decimals: int | None = None) -> str:
    """A score: percent for 0/1 scores; graded with ``decimals`` decimals or 4 significant digits."""
    if binary:
        return f"{100 * float(mean):.2f}%"
    return f"{float(mean):.{decimals}f}" if decimals is not None else f"{float(mean):.4g}"


def table_decimals(half_widths: Any) -> int:
    """Decimals that show graded scores, intervals and gaps of one table alike: two significant
    digits of the narrowest interval's half-width (0.056 -> 3), between 0 and 6.
    """
    import numpy as np

    h = np.abs(np.asarray(half_widths, dtype=float))
    h = h[np.isfinite(h) & (h > 0)]
    if not h.size:
        return 4
    return int(min(6, max(0, 1 - math.floor(math.log10(float(h.min()))))))


def fmt_margins(value: float, low: float, high: float, *, scale: float = 1.0, decimals: int = 1) -> str:
    """How far an interval reaches below and above its estimate: "±6.1" when both sides round alike,
    "−15.2 / +12.6" when the interval is asymmetric (Wilson near 0 or 1, a clipped bound) -- a single
    "±" beside an asymmetric interval would misstate one side.
    """
    below, above = scale * (value - low), scale * (high - value)
    lo_text, hi_text = f"{below:.{decimals}f}", f"{above:.{decimals}f}"
    if lo_text == hi_text:
        return f"±{hi_text}"
    return f"−{lo_text} / +{hi_text}"


def fmt_n_star(n_star: Any) -> str:
    if n_star is None or (isinstance(n_star, float) and math.isnan(n_star)):
        return "—"
    return "∞" if math.isinf(n_star) else f"{int(n_star):,}"


def unique_short_names(names: Any, width: int) -> list[str]:
    """Names no longer than ``width`` characters and still distinct: a long name keeps its start and
    its end around "…" (``Mistral-7B-Instruct-v0.1`` and ``-v0.2`` stay apart), colliding forms
    move the cut until they differ, and names that differ only in the middle keep the part where
    they differ (``Meta…70B-Instruct``). A name that cannot be shortened uniquely stays whole.

    >>> unique_short_names(["Mistral-7B-Instruct-v0.1", "Mistral-7B-Instruct-v0.2", "Yi-34B"], 14)
    ['Mistral…t-v0.1', 'Mistral…t-v0.2', 'Yi-34B']
    >>> unique_short_names(["Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-8B-Instruct"], 16)
    ['Meta…0B-Instruct', 'Meta…8B-Instruct']
    """
    names = [str(s) for s in names]
    width = max(int(width), 5)
    taken = {s for s in names if len(s) <= width}
    out = list(names)
    long = [k for k, s in enumerate(names) if len(s) > width]
    for tail in range((width - 1) // 2, width - 2):  # move the cut towards the start until all differ
        long = _settle(out, taken, long, {k: names[k][:width - 1 - tail] + "…" + names[k][-tail:] for k in long})
        if not long:
            return out
    # differing only in the middle: a short head, then the name from just before where it differs
    for head in (4, 2, 0):
        forms = {}
        for k in long:
            start = max(_common_prefix(names[k], names) - 2, head)
            rest = names[k][start:]
            body = rest if head + 1 + len(rest) <= width else rest[:width - head - 2] + "…"
            forms[k] = names[k][:head] + "…" + body
        long = _settle(out, taken, long, forms)
    return out


def _settle(out: list[str], taken: set[str], todo: list[int], forms: dict[int, str]) -> list[int]:
    """Adopt the forms that are unique (among themselves and the names already shown); the rest remain."""
    counts: dict[str, int] = {}
    for form in forms.values():
        counts[form] = counts.get(form, 0) + 1
    settled = {k for k, form in forms.items() if counts[form] == 1 and form not in taken}
    for k in settled:
        out[k] = forms[k]
        taken.add(forms[k])
    return [k for k in todo if k not in settled]


def _common_prefix(name: str, names: list[str]) -> int:
    """The longest prefix ``name`` shares with another of ``names``."""
    best = 0
    for other in names:
        if other != name:
            n = 0
            for x, y in zip(name, other, strict=False):
                if x != y:
                    break
                n += 1
            best = max(best, n)
    return best
