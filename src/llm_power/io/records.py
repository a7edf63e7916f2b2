"""The readers' contract: the :class:`Record` every format yields, the options a reader gets
(:class:`ReadOptions`) and a format's registry entry (:class:`Format`; the registry is
:data:`llm_power.io.formats.FORMATS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core.errors import DataError

__all__ = ["AggregateOptions", "AggregateReader", "BattleReader", "Format", "ReadOptions", "Record", "SampleOptions",
           "SampleReader", "expect", "no_files"]


@dataclass(frozen=True)
class Record:
    """One model's score on one item."""

    model: str
    item: str
    score: float
    cluster: str | None = None
    target: str | None = None
    source: str = ""


def expect(value: Any, kind: type, what: str, *, file: str, record: str | None = None) -> Any:
    """``value`` if it is a ``kind``, else a DataError naming what was expected (wrong-shape JSON)."""
    if not isinstance(value, kind):
        name = {"dict": "a JSON object", "list": "a JSON array"}.get(kind.__name__, kind.__name__)
        msg = f"{what} must be {name}; got {type(value).__name__}"
        raise DataError(msg, file=file, record=record)
    return value


@dataclass(frozen=True)
class ReadOptions:
    """What the user asked of every reader (each format uses the options it has)."""

    metric: str | None = None
    cluster: str | None = None
    split: str = "test"
    filter_name: str | None = None
    item_column: str | None = None


def no_files(_: Path) -> list[Any]:
    """The default of ``Format.finds`` and ``Format.companions``: none."""
    return []


@dataclass(frozen=True)
class Format:
    """One harness format: its name (the ``format=`` / ``--input-format`` value), how to recognise
    its files, how to find them in a folder, which other files its reader opens, and the reader.

    Detection asks the formats in ``order`` (lowest first) whether they ``claim`` a path; the
    first that does reads it.
    """

    name: str
    summary: str  # how an error message lists the format ("lm-eval samples_*.jsonl")
    read: Callable[[Path, ReadOptions], Iterator[Record]]
    claims: Callable[[Path], bool]
    order: int = 50
    #: (rank, file) inside a folder, searched recursively; the files sort by rank, then path
    finds: Callable[[Path], list[tuple[int, Path]]] = no_files
    companions: Callable[[Path], list[Path]] = no_files  # files the reader opens besides the result file
    #: what a search of a remote folder (fsspec: the Dask engine) takes by name, without opening a file:
    #: globs of a file's trailing path ("samples_*.jsonl", "results/*/*.json"); a format that tells its
    #: files by their content only is read from file URLs given one by one
    patterns: tuple[str, ...] = ()
    #: a file whose folder is the unit read (HELM's per_instance_stats.json)
    folder_marker: str | None = None
    #: read from a URI it ``claims`` (``mlflow://RUN_ID``), not from a file: taken as given, never searched
    remote: bool = False


@dataclass(frozen=True)
class SampleOptions:
    """What ``passk`` asked of every samples reader: the score (``metric``), the cluster field, and
    the instance list a report's denominator comes from (SWE-bench).
    """

    metric: str | None = None
    cluster: str | None = None
    instances: list[str] | None = None


@dataclass(frozen=True)
class SampleReader:
    """A format's reader of repeated samples per question (``passk``): rows ``{model, item, sample,
    score, cluster}``. A format module declares its readers as ``SAMPLES = (SampleReader(...),)``
    beside its ``FORMATS`` (a module may declare either); :func:`llm_power.io.read_samples` asks them
    in ``order`` whether they ``claim`` a file and searches folders with their ``finds``.
    """

    name: str
    summary: str  # how the "not a samples file" message lists it
    read: Callable[[Path, SampleOptions], Iterator[dict[str, Any]]]
    claims: Callable[[Path], bool]
    order: int = 50
    finds: Callable[[Path], list[Path]] = no_files  # its files inside a folder (searched recursively)


@dataclass(frozen=True)
class AggregateOptions:
    """What ``aggregate`` asked of every aggregate reader: one metric, one lm-eval filter, and the
    benchmark's size for results that do not record it (one number, or task -> number).
    """

    metric: str | None = None
    filter: str | None = None
    items: int | dict[str, int] | None = None


@dataclass(frozen=True)
class AggregateReader:
    """A format's reader of aggregate scores (``aggregate``): scores per task with their standard
    errors and item counts, no per-item results. A format module declares ``AGGREGATES =
    (AggregateReader(...),)``; :func:`llm_power.io.aggregate.read_aggregates` asks them in ``order``
    whether they ``claim`` a file, searches folders with their ``finds`` and gives each reader all of
    its files at once (``read(files, options)``: a list of ``AggregateScore``).
    """

    name: str
    summary: str
    read: Callable[[list[Path], AggregateOptions], list[Any]]
    claims: Callable[[Path], bool]
    order: int = 50
    finds: Callable[[Path], list[Path]] = no_files


@dataclass(frozen=True)
class BattleReader:
    """A format's reader of pairwise battles (``arena``, ``judges``): ``read(path)`` gives a table of
    ``model_a, model_b, winner, ...`` and the number of records it dropped. A format module declares
    ``BATTLES = (BattleReader(...),)``; :func:`llm_power.io.read_battles` asks them in ``order``
    whether they ``claim`` a file and searches folders with their ``finds``.
    """

    name: str
    summary: str
    read: Callable[[Path], tuple[Any, int]]
    claims: Callable[[Path], bool]
    order: int = 50
    finds: Callable[[Path], list[Path]] = no_files

