"""What the table engines (DuckDB, Spark, Ray) share: which files they read, in which layout, and the
local reader as the judge of a value they cannot take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from .._core.dask import TABLE_ENGINES
from .._core.errors import DataError
from .._core.validation import check_option

__all__ = ["TABLE_ENGINES", "TableFiles", "refuse", "table_files"]

#: the table formats of the registry the engines read, by kind
_KINDS = {"parquet": "parquet", "csv": "csv"}


@dataclass(frozen=True)
class TableFiles:
    """The inputs of a table engine by kind: Parquet, CSV/TSV, JSONL (local paths as the local reader
    names them, so a duplicate's message names the same files).
    """

    parquet: tuple[str, ...] = ()
    csv: tuple[str, ...] = ()
    jsonl: tuple[str, ...] = ()
    #: Every Eval Ever datastore views (``dataset_samples.parquet``; DuckDB only)
    eee: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        return self.parquet + self.csv + self.jsonl + self.eee


def _kind(path: Path, fmt: str) -> str:
    from ..io.plain import plain_suffix

    if fmt == "parquet":
        return "parquet"
    suffix = plain_suffix(path) if path.suffix.lower() == ".gz" else path.suffix.lower()
    return "jsonl" if suffix in (".jsonl", ".ndjson", ".json") else "csv"


def table_files(paths: Sequence[str | Path], *, engine: str, format: str = "auto") -> TableFiles:  # noqa: A002
    """The long-table files of ``paths`` (files and folders, searched as the local reader searches
    them); a file of another format is one error naming it and the engines that read it.
    """
    from ..io.detect import detect_format

    format = check_option(format, "format", ("auto", "csv", "parquet"))  # noqa: A001
    found: dict[str, list[str]] = {"parquet": [], "csv": [], "jsonl": [], "eee": []}
    urls = [str(p) for p in paths if "://" in str(p)]
    if urls and engine != "duckdb":
        msg = f"engine {engine!r} reads local paths here (URLs are read by --engine duckdb or dask)"
        raise DataError(msg, file=urls[0])
    for url in urls:
        for name in remote_tables(url):
            eee = name.lower().endswith("/dataset_samples.parquet") and format == "auto"  # an EEE datastore view
            found["eee" if eee else _suffix_kind(name, format)].append(name)
    for path in input_files([p for p in paths if "://" not in str(p)]):
        fmt = format if format != "auto" else detect_format(path)
        if fmt == "every_eval_ever" and engine == "duckdb" and path.suffix.lower() == ".parquet":
            found["eee"].append(str(path))  # the datastore's Parquet view of instance records
            continue
        if fmt not in _KINDS:
            msg = (f"is a {fmt} file: engine {engine!r} reads long tables (Parquet, CSV/TSV, JSONL with model, item "
                   "and score columns); harness outputs are read by --engine local or dask")
            raise DataError(msg, file=str(path))
        found[_kind(path, fmt)].append(str(path))
    return TableFiles(parquet=tuple(found["parquet"]), csv=tuple(found["csv"]), jsonl=tuple(found["jsonl"]),
                      eee=tuple(found["eee"]))


def _suffix_kind(name: str, format: str) -> str:  # noqa: A002
    """The kind of a remote file by its name (``format`` when given)."""
    low = name.lower().removesuffix(".gz")
    if format == "parquet" or (format == "auto" and low.endswith(".parquet")):
        return "parquet"
    return "jsonl" if low.endswith((".jsonl", ".ndjson", ".json")) else "csv"


def url_folder(url: str) -> tuple[Any, str | None]:
    """The fsspec filesystem of a URL and its folder path (None when the URL is a file); DataError
    naming the URL when there is nothing there.
    """
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    if not fs.exists(root):
        msg = "file or folder not found"
        raise DataError(msg, file=url)
    return fs, (root if fs.isdir(root) else None)


def remote_tables(url: str) -> list[str]:
    """The long-table files of a URL read through fsspec (``s3://``, ``gs://``, ``hf://``, ``https://``,
    ``memory://``...): the file itself, or every table file under a folder (sorted; ``_``- and
    ``.``-prefixed entries skipped).
    """
    try:
        import fsspec  # noqa: F401 - the message names the extra before url_folder imports it
    except ImportError as exc:
        msg = "reading URLs needs fsspec: pip install 'llm-power[duckdb]'"
        raise DataError(msg, file=url) from exc
    try:
        fs, root = url_folder(url)
        if root is None:
            return [url]
        names = []
        for path in sorted(fs.find(root)):
            rel = path[len(root.rstrip("/")) + 1:].split("/")
            if not any(part.startswith((".", "_")) for part in rel) and path.lower().endswith(_TABLE_SUFFIXES):
                names.append(fs.unstrip_protocol(path))
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - a filesystem's errors are many; one line names the URL
        raise DataError(" ".join(f"cannot list: {type(exc).__name__}: {exc}".split())[:300], file=url) from None
    if not names:
        msg = "no Parquet, CSV or JSONL files under this URL"
        raise DataError(msg, file=url)
    return names


#: the names of long-table files in a folder (a partitioned dataset: part-0.parquet, year=2026/x.parquet, ...)
_TABLE_SUFFIXES = (".parquet", ".csv", ".tsv", ".jsonl", ".ndjson", ".csv.gz", ".tsv.gz", ".jsonl.gz", ".ndjson.gz")


def _folder_tables(folder: Path) -> list[Path]:
    """The long-table files under a folder, sorted (regular files only; hidden and ``_``-prefixed
    entries such as ``_delta_log`` and ``_SUCCESS`` skipped, as Spark and DuckDB skip them).
    """
    from .._core.files import is_regular

    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).parts
        if any(part.startswith((".", "_")) for part in rel):
            continue
        if path.name.lower().endswith(_TABLE_SUFFIXES) and is_regular(path):
            out.append(path)
    return out


def input_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files a table engine reads: a folder's long-table files (a partitioned dataset), else what
    the local reader finds in it; files as given.
    """
    from ..io.detect import expand_paths

    out: list[Path] = []
    for raw in paths:
        folder = Path(raw)
        tables = _folder_tables(folder) if folder.is_dir() and not folder.is_symlink() else []
        out += tables if tables else expand_paths([raw])
    return out


def refuse(read: dict[str, Any]) -> Any:
    """``local_error(file, field)`` for :func:`~llm_power.engines.contract.align_block`: the local reader
    reads that file and raises its one-line error (the first bad record, by file, record and field);
    should it take the file, the error names the file and field.
    """

    def local_error(file: str, field: str) -> NoReturn:
        from ..io.harness import read_part

        if "://" in file:  # a remote file: the local reader cannot open it to name the record
            msg = "a value the local reader refuses (null, empty or not a number)"
            raise DataError(msg, file=file, field=field)

        options = {key: read.get(key) for key in ("format", "metric", "cluster", "split", "filter", "item_column")}
        options["format"] = options["format"] or "auto"
        options["split"] = options["split"] or "test"
        read_part(Path(file), options)
        msg = "a value the local reader refuses (null, empty or not a number)"
        raise DataError(msg, file=file, field=field)

    return local_error
