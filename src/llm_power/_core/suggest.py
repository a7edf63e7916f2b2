"""Close matches of a name the user typed that is not there: the "did you mean" of every flag,
command, choice, column, model and judge (one rule, one wording, no numpy).

>>> did_you_mean("categroy", ["question_id", "category", "gemma-7b"])
"did you mean 'category'?"
>>> no_column("cluster", "categroy", ["question_id", "category"])
"no cluster column 'categroy' (did you mean 'category'?); columns are 'question_id', 'category'"
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_matches", "did_you_mean", "hint", "no_column"]

#: difflib's similarity ratio a candidate needs (its default: "categroy" -> "category" is 0.88)
CUTOFF = 0.6
#: how far below the best match another is still shown ("lm-eval": 'lm_eval', not 'lighteval' too)
MARGIN = 0.1


def close_matches(word: str, candidates: Iterable[object], *, n: int = 3) -> list[str]:
    """The candidates closest to ``word``, best first: difflib's ratio at least :data:`CUTOFF` and within
    :data:`MARGIN` of the best, at most ``n``; case and the dashes that start a flag are ignored.
    """
    def key(text: str) -> str:
        return text.lower().lstrip("-")

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(key(str(word)))
    scored = []
    for name in dict.fromkeys(str(c) for c in candidates):
        if name == word:
            continue
        matcher.set_seq1(key(name))
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            ratio = matcher.ratio()
            if ratio >= CUTOFF:
                scored.append((ratio, name))
    scored.sort(key=lambda pair: -pair[0])  # stable: ties keep the candidates' order
    return [name for ratio, name in scored[:n] if ratio >= scored[0][0] - MARGIN]


def did_you_mean(word: str, candidates: Iterable[object], *, quote: bool = True) -> str:
    """``"did you mean 'x'?"`` (or ``'x' or 'y'``) for the close matches of ``word``, else ``""``
    (``quote=False`` for flags: ``did you mean --cluster?``).
    """
    found = close_matches(word, candidates)
    if not found:
        return ""
    shown = [repr(f) if quote else f for f in found]
    listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return f"did you mean {listed}?"


def hint(word: str, candidates: Iterable[object]) -> str:
    """``" (did you mean 'x'?)"`` to put after the unknown name in a message, else ``""``."""
    text = did_you_mean(word, candidates)
    return f" ({text})" if text else ""


def no_column(what: str, wanted: str, columns: Iterable[object]) -> str:
    """The one message for a column named on the command line (or in Python) that a table lacks:
    ``no <what> column 'x' (did you mean 'y'?); columns are ...`` (the caller adds the file).
    """
    columns = [str(c) for c in columns]
    return f"no {what} column {wanted!r}{hint(wanted, columns)}; columns are {', '.join(map(repr, columns))}"
