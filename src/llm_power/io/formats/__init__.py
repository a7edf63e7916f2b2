"""The ``FORMATS`` registry: one module per harness format, found by looking in this folder.

A format module defines ``FORMATS``, a tuple of :class:`~llm_power.io.records.Format` entries
(a name, a summary for error messages, ``claims(path)`` for detection, ``finds(folder)`` and
``companions(path)`` for folders and output safety, and ``read(path, options)`` yielding
:class:`~llm_power.io.records.Record`). Adding a format is adding a module here (and its test):
detection, folder search, ``format=``/``--input-format`` choices, the "known formats" of error
messages and the output-safety checks all iterate this registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from ..records import AggregateReader, BattleReader, Format, SampleReader

__all__ = ["AGGREGATE_READERS", "BATTLE_READERS", "FORMATS", "SAMPLE_READERS", "aggregates_by_order",
           "battles_by_order", "by_order", "samples_by_order"]


def _discover(kind: str = "FORMATS") -> dict[str, Any]:
    """Every entry of ``kind`` (``FORMATS``: per-item readers; ``SAMPLES``: repeated-samples readers;
    ``AGGREGATES``: aggregate-score readers; ``BATTLES``: pairwise battles) declared by the modules of
    this folder, by name.
    """
    found: dict[str, Any] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for fmt in getattr(module, kind, ()):
            if fmt.name in found or fmt.name == "auto":
                msg = f"two {kind.lower()} readers are named {fmt.name!r}"
                raise RuntimeError(msg)
            found[fmt.name] = fmt
    return dict(sorted(found.items()))


#: name -> :class:`~llm_power.io.records.Format`, sorted by name
FORMATS: dict[str, Format] = _discover()
#: name -> :class:`~llm_power.io.records.SampleReader` (``passk``), sorted by name
SAMPLE_READERS: dict[str, SampleReader] = _discover("SAMPLES")


#: name -> :class:`~llm_power.io.records.AggregateReader` (``aggregate``), sorted by name
AGGREGATE_READERS: dict[str, AggregateReader] = _discover("AGGREGATES")


def aggregates_by_order() -> list[AggregateReader]:
    """The aggregate readers in detection order."""
    return sorted(AGGREGATE_READERS.values(), key=lambda r: (r.order, r.name))


#: name -> :class:`~llm_power.io.records.BattleReader` (``arena``, ``judges``), sorted by name
BATTLE_READERS: dict[str, BattleReader] = _discover("BATTLES")


def battles_by_order() -> list[BattleReader]:
    """The battle readers in detection order."""
    return sorted(BATTLE_READERS.values(), key=lambda r: (r.order, r.name))


def samples_by_order() -> list[SampleReader]:
    """The samples readers in detection order."""
    return sorted(SAMPLE_READERS.values(), key=lambda r: (r.order, r.name))


def by_order() -> list[Format]:
    """The formats in detection order."""
    return sorted(FORMATS.values(), key=lambda f: (f.order, f.name))
