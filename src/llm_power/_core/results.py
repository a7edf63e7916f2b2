"""Result base class: one-line ``repr``, ``summary()`` and ``to_dict()`` with plain JSON types.

Results are frozen, slotted dataclasses that inherit from :class:`Result`. Subclasses list the
fields shown in the one-line ``repr`` in ``_repr_fields`` (default: all fields) and may override
``summary()``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .renderer import renderer

__all__ = ["INTERVAL_NAME", "ConfidenceInterval", "RenamedKeys", "Result", "renamed_field", "stored_interval",
           "to_plain"]


class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)``; floats for scalar input, arrays for array input."""

    low: Any
    high: Any


#: How every result names its intervals (docs/reference/index.md): a stored interval is a
#: ``ConfidenceInterval`` named ``ci`` (the result's own quantity) or ``<quantity>_ci``; bounds kept as
#: columns (one per pair, model or k) are ``[<regime>_][<quantity>_]ci_low`` / ``..._ci_high``. The
#: quantity is left out for the result's own one (a pair's gap). tests/test_intervals_one_way.py holds
#: every result field to it.
INTERVAL_NAME = r"^(?:[a-z0-9]+_)*ci(?:_low|_high)?$"


def renamed_field(old: str, new: str) -> property:
    """A read-only alias ``old`` for the field ``new`` that warns once per use (DeprecationWarning).

    Kept for one release after a rename so code written against the old name keeps working and
    says what to write instead; ``to_dict()``/JSON carry only the new name.
    """

    def get(self: Any) -> Any:
        import warnings

        warnings.warn(f"`{old}` was renamed `{new}` (one naming for every interval, docs/reference/index.md); "
                      f"the old name is kept for one release.", DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    get.__name__ = old
    get.__doc__ = f"Deprecated name of ``{new}`` (kept for one release, DeprecationWarning)."
    return property(get)


class RenamedKeys(dict):  # type: ignore[type-arg]
    """A result's dict of columns in which renamed keys still read, with a DeprecationWarning, for
    one release (``renamed``: old key -> new key). Iteration, ``to_dict()`` and JSON see only the
    new keys.
    """

    def __init__(self, data: Mapping[str, Any], renamed: Mapping[str, str]) -> None:
        super().__init__(data)
        self.renamed = dict(renamed)

    def __missing__(self, key: str) -> Any:
        new = self.renamed.get(key)
        if new is None or new not in self:
            raise KeyError(key)
        import warnings

        warnings.warn(f"the column {key!r} was renamed {new!r} (one naming for every interval, "
                      f"docs/reference/index.md); the old name is kept for one release.",
                      DeprecationWarning, stacklevel=2)
        return self[new]


def stored_interval(low: Any, high: Any, stored: float | None, asked: float | None, *, recompute: str,
                    choice: tuple[str, Any, tuple[str, ...]] | None = None) -> ConfidenceInterval:
    """A result's interval at the level it was computed at: ``confidence_interval()`` of a result
    that keeps its interval rather than a recipe for it. ``asked`` None or equal to ``stored`` gives
    the interval; another level is an error that says how to get it (``recompute``). ``choice``:
    (parameter, value, allowed) of a keyword that picks one of several intervals, checked here.
    """
    if choice is not None and choice[1] not in choice[2]:
        listed = ", ".join(repr(v) for v in choice[2])
        msg = f"`{choice[0]}` must be one of {listed}; got {choice[1]!r}."
        raise ValueError(msg)
    if asked is not None:
        if isinstance(asked, bool) or not isinstance(asked, (int, float)) or not 0.0 < float(asked) < 1.0:
            msg = f"`confidence_level` must be in (0, 1); got {asked!r}."
            raise ValueError(msg)
        if stored is None or not math.isclose(float(asked), stored, rel_tol=0.0, abs_tol=1e-12):
            at = "" if stored is None else f" at the {stored:g} level"
            msg = (f"this interval was computed{at} and the result keeps it, not a way to recompute it; "
                   f"for confidence_level={asked:g}, {recompute}")
            raise ValueError(msg)
    return ConfidenceInterval(low, high)


def to_plain(value: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and nested containers to plain JSON types.

    NaN and infinities become ``None`` (JSON has no NaN).
    """
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, ConfidenceInterval):
        return {"low": to_plain(value.low), "high": to_plain(value.high)}
    if isinstance(value, np.ndarray):
        return [to_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return str(value)


def _short(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape})"
    if isinstance(value, ConfidenceInterval):
        return f"({_short(value.low)}, {_short(value.high)})"
    return repr(value)


def _renderer() -> Any:
    """The report layer that renders results, as the package installed it (:mod:`.renderer`)."""
    return renderer()


class Result:
    """Mixin for frozen result dataclasses."""

    __slots__ = ()
    _repr_fields: ClassVar[tuple[str, ...] | None] = None
    _title: ClassVar[str | None] = None
    #: which view of the report layer shows it: "generic" (title, summary, scalar fields), "diagnosis"
    #: or "arena" (what the views ask of a result is public: ``view_kind``, ``report_title()``, ``fields()``)
    view_kind: ClassVar[str] = "generic"

    def fields(self) -> tuple[str, ...]:
        """The names of the result's fields, in order."""
        return tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]

    _fields = fields

    def report_title(self) -> str:
        """The heading a report gives this result."""
        return self._title or type(self).__name__

    def __repr__(self) -> str:
        names = self._repr_fields or self._fields()
        inner = ", ".join(f"{name}={_short(getattr(self, name))}" for name in names)
        return f"{type(self).__name__}({inner})"

    def to_dict(self) -> dict[str, Any]:
        """All fields as plain Python/JSON types (NaN becomes ``None``)."""
        return {name: to_plain(getattr(self, name)) for name in self._fields()}

    def _repr_html_(self) -> str:
        """The notebook view (Jupyter): a self-contained HTML fragment, no script, names escaped."""
        return str(_renderer().fragment(self))

    def _write_text(self, path: Any, text: str, *, inputs: tuple[Any, ...] = ()) -> str:
        """Write ``text`` (a file the result renders itself, e.g. a plan) atomically to ``path``
        under the output rules, through the report layer; returns the text.
        """
        return str(_renderer().write(path, text, inputs=inputs))

    def to_html(self, path: Any = None) -> str:
        """The result as a self-contained HTML page -- for a leaderboard or an arena the full report
        ``--html`` writes -- written atomically to ``path`` when given; returns the HTML.
        """
        layer = _renderer()
        return str(layer.write(path, layer.html_document(self)))

    def to_markdown(self, path: Any = None) -> str:
        """The result as GitHub-flavoured Markdown (names escaped), written to ``path`` when given."""
        layer = _renderer()
        return str(layer.write(path, layer.markdown_text(self)))

    def to_json(self, path: Any = None) -> str:
        """:meth:`to_dict` as deterministic JSON (sorted keys, NaN as null), written to ``path`` when given."""
        layer = _renderer()
        return str(layer.write(path, layer.json_text(self)))

    def summary(self) -> str:
        """A small human-readable table of the fields."""
        rows = [(name, getattr(self, name)) for name in self._fields()]
        width = max(len(name) for name, _ in rows)
        title = self._title or type(self).__name__
        lines = [title, "-" * max(len(title), width + 12)]
        for name, value in rows:
            lines.append(f"{name:<{width}}  {_short(value)}")
        return "\n".join(lines)
