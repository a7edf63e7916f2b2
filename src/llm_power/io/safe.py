"""Hostile-input guards shared by the readers: only regular files, bounded archives, JSON and YAML
that cannot crash the reader.

Every file is opened by :func:`open_regular` (from :mod:`llm_power._core.files`): a FIFO, a device,
a socket or a folder where a file is read is one :class:`~llm_power.DataError` line naming it, never
a read that blocks or never ends; folder walks (:func:`regular_files`) refuse such an entry by name.
Every failure becomes one DataError line naming the file (and the archive member or record): bad
syntax, JSON or YAML nested too deeply, a key twice in one JSON object or YAML mapping, YAML aliases
that expand past a bound. Limits can be raised through environment variables (docs/security.md):

=====================================  =========  ==============================================
variable                               default    what it bounds
=====================================  =========  ==============================================
``LLM_POWER_MAX_MEMBER_MB``            512        uncompressed size of one archive member or ``.gz`` file
``LLM_POWER_MAX_ARCHIVE_MB``           4096       uncompressed size of all members read from one archive
``LLM_POWER_MAX_RATIO``                200        compression ratio of a member or ``.gz`` file past 1 MB
``LLM_POWER_MAX_JSON_MB``              2048       size of one JSON file read whole
``LLM_POWER_MAX_PARQUET_MB``           4096       uncompressed size of one Parquet file (its metadata's)
``LLM_POWER_MAX_TEXT_MB``              2048       size of one other file read whole (a subset plan, an id list)
``LLM_POWER_MAX_YAML_ALIAS_NODES``     100000     nodes that YAML aliases (``*name``) add to one file
``LLM_POWER_MAX_ITEMS``                100000000  items of a subset plan or design (``items``, ``n_items``, weights)
``LLM_POWER_MAX_PLAN_RUNS``            1000000    ``max_runs`` of a run plan (a table row per number of runs)
``LLM_POWER_MAX_MONITOR_PAIRS``        20000      pairs a ``LeaderboardMonitor`` watches
``LLM_POWER_MAX_MONITOR_MB``           1024       memory of a ``LeaderboardMonitor``'s pairs (36 kB each, betting)
=====================================  =========  ==============================================
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import zipfile
import zlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from .._core.errors import DataError
from .._core.files import MB as _MB
from .._core.files import is_regular, limit, open_regular, read_capped, read_regular_bytes, regular_files

__all__ = ["ArchiveReader", "is_regular", "limit", "load_json_bytes", "load_json_file", "load_yaml", "open_bounded",
           "open_regular", "parquet_columns", "parse_json", "parse_once", "peek_json", "read_parquet",
           "read_regular_bytes", "regular_files"]


class _BoundedGzip(io.RawIOBase):
    """A gzip file decompressed under the archive limits: more than ``LLM_POWER_MAX_MEMBER_MB``, or a
    ratio above ``LLM_POWER_MAX_RATIO`` once past 1 MB, is a DataError naming the file (a 5 MB file
    of 2 GiB of rows stops at the limit, never in a MemoryError). Only a regular file is opened.
    """

    def __init__(self, path: Path) -> None:
        import gzip

        self.path = path
        self.cap = limit("LLM_POWER_MAX_MEMBER_MB") * _MB
        self.ratio = limit("LLM_POWER_MAX_RATIO")
        self.raw = open_regular(path)
        try:
            self.compressed = max(os.fstat(self.raw.fileno()).st_size, 1)
            self.inner = gzip.GzipFile(fileobj=self.raw, mode="rb")
        except BaseException:
            self.raw.close()
            raise
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.inner.read(len(buffer))
        except (OSError, EOFError, zlib.error) as exc:
            msg = f"not a readable gzip file ({exc})"
            raise DataError(msg, file=str(self.path)) from None
        n = len(data)
        buffer[:n] = data
        self.total = max(self.total, int(self.inner.tell()))
        if self.total > self.cap:
            msg = (f"decompresses to more than the {self.cap // _MB} MB limit (LLM_POWER_MAX_MEMBER_MB); raise "
                   "it for a file that is really this large")
            raise DataError(msg, file=str(self.path))
        if self.total > _MB and self.total > self.ratio * self.compressed:
            msg = (f"decompresses more than {self.ratio}:1 (a compression bomb?); LLM_POWER_MAX_RATIO raises the "
                   "limit")
            raise DataError(msg, file=str(self.path))
        return n

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Seek in the decompressed stream (the readers rewind after sniffing a CSV dialect); the
        limits hold on the furthest byte reached.
        """
        return int(self.inner.seek(offset, whence))

    def tell(self) -> int:
        return int(self.inner.tell())

    def close(self) -> None:
        if not self.closed:  # a GzipFile given a file object leaves it open; either may be missing after
            for part in (getattr(self, "inner", None), getattr(self, "raw", None)):  # a failed __init__
                if part is not None:
                    part.close()
        super().close()


def open_bounded(path: str | Path) -> Any:
    """The file's bytes as a binary file object: a ``.gz`` file decompressed under the archive limits
    (:class:`_BoundedGzip`), any other file as is; only a regular file is opened (:func:`open_regular`).
    """
    path = Path(path)
    if path.suffix.lower() == ".gz":
        return io.BufferedReader(_BoundedGzip(path), buffer_size=1 << 20)
    return open_regular(path)


def _parquet_error(exc: BaseException, path: Path) -> DataError:
    msg = f"not readable as Parquet ({type(exc).__name__}: {str(exc)[:120]})"
    return DataError(msg, file=str(path))


def parquet_columns(path: str | Path) -> list[str]:
    """The column names of a Parquet file's schema, from its footer (a regular file only; one
    DataError line when it is not readable as Parquet).
    """
    import pyarrow.parquet as pq

    path = Path(path)
    with open_regular(path) as fh:
        try:
            return [str(name) for name in pq.ParquetFile(fh).schema_arrow.names]
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a broken file
            raise _parquet_error(exc, path) from None


def read_parquet(path: str | Path, columns: list[str] | None = None) -> Any:
    """A Parquet file as a pandas DataFrame, after its footer is checked: a column named twice is a
    DataError (as in a CSV header), and so is an uncompressed size (from the row groups' metadata,
    before anything is decompressed) past ``LLM_POWER_MAX_PARQUET_MB``; any read failure is one line.
    pyarrow reads the regular file this opened (:func:`open_regular`), never the path. ``columns``: only
    these (the size limit then counts only theirs).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    path = Path(path)
    with open_regular(path) as fh:
        try:
            parquet = pq.ParquetFile(fh)
            meta = parquet.metadata
            schema_names = parquet.schema_arrow.names
            if columns is None:
                size = sum(meta.row_group(k).total_byte_size for k in range(meta.num_row_groups))
            else:
                size = sum(meta.row_group(k).column(c).total_uncompressed_size for k in range(meta.num_row_groups)
                           for c in range(meta.num_columns)
                           if meta.row_group(k).column(c).path_in_schema.split(".")[0] in columns)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a broken file
            raise _parquet_error(exc, path) from None
        seen: set[str] = set()
        for name in schema_names:
            if name in seen:
                msg = f"the schema names column {name!r} twice (which one is meant?)"
                raise DataError(msg, file=str(path), field=name)
            seen.add(name)
        cap = limit("LLM_POWER_MAX_PARQUET_MB")
        if size > cap * _MB:
            msg = (f"decompresses to {size / _MB:,.0f} MB, more than the {cap:,} MB limit (LLM_POWER_MAX_PARQUET_MB); "
                   "raise it for a file that is really this large")
            raise DataError(msg, file=str(path))
        try:
            fh.seek(0)
            return pd.read_parquet(fh, columns=columns)
        except MemoryError:
            msg = "too large to read into memory"
            raise DataError(msg, file=str(path)) from None
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a broken file
            raise _parquet_error(exc, path) from None


# ---- JSON: one object per key ------------------------------------------------------------------------------

class _DuplicateKey(Exception):  # noqa: N818 - a signal inside the parser, never seen outside this module
    def __init__(self, key: str, line: int | None = None) -> None:
        super().__init__(key)
        self.key, self.line = key, line


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object, unless a key comes twice (json would keep the last)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _DuplicateKey(key)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique)
#: a duplicate key's line is found by a second, pure-Python parse: only for texts up to this size
_LOCATE_MAX = 64 * _MB


def _duplicate_line(text: str) -> int | None:
    """The line where the first object holding a key twice starts (the pure-Python parser knows
    positions, the C one does not); None when it cannot tell (too large, too deep).
    """
    from json import decoder, scanner

    if len(text) > _LOCATE_MAX:
        return None

    untyped: Any = decoder  # WHITESPACE, WHITESPACE_STR and JSONObject are not in the stubs
    whitespace, whitespace_str = untyped.WHITESPACE.match, untyped.WHITESPACE_STR

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, object_hook: Any,
                     _pairs_hook: Any, memo: Any = None, _w: Any = whitespace, _ws: str = whitespace_str) -> Any:
        s, start = s_and_end

        def located(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            try:
                return _unique(pairs)
            except _DuplicateKey as exc:
                raise _DuplicateKey(exc.key, s.count("\n", 0, start) + 1) from None

        return untyped.JSONObject(s_and_end, strict, scan_once, object_hook, located, memo, _w, _ws)

    slow = json.JSONDecoder()
    slow.parse_object = parse_object  # type: ignore[attr-defined]
    slow.scan_once = scanner.py_make_scanner(slow)  # type: ignore[attr-defined]
    try:
        slow.decode(text)
    except _DuplicateKey as exc:
        return exc.line
    except (ValueError, RecursionError):
        return None
    return None


def parse_json(text: str, *, file: str, record: str | None = None) -> Any:
    """``json.loads`` that refuses a key twice in one object: a DataError naming the file, the
    record (``record``, else the line where the object starts) and the key. Other failures raise as
    ``json.loads``'s do, for the caller to word.
    """
    try:
        return _DECODER.decode(text)
    except _DuplicateKey as exc:
        where = record
        if where is None:
            line = _duplicate_line(text)
            where = None if line is None else f"line {line}"
        msg = "a key appears twice in one JSON object (which value is meant?)"
        raise DataError(msg, file=file, record=where, field=exc.key) from None


class _NotJSON(DataError):
    """Bytes that are not JSON at all (bad UTF-8, bad syntax): a folder search passes over them."""


def load_json_bytes(data: bytes, *, file: str, record: str | None = None) -> Any:
    """Parse JSON bytes; every failure (syntax, encoding, nesting, giant numbers, a key twice in one
    object) is one DataError.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})"
        raise _NotJSON(msg, file=file, record=record) from None
    collecting = gc.isenabled()
    gc.disable()  # JSON builds no cycles: the collector's passes over a growing heap are pure cost
    try:
        return parse_json(text, file=file, record=record)
    except DataError:
        raise
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        raise _NotJSON(msg, file=file, record=record) from None
    except RecursionError:
        msg = "JSON nested too deeply to read"
        raise DataError(msg, file=file, record=record) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        msg = f"unreadable JSON value ({str(exc)[:80]})"
        raise _NotJSON(msg, file=file, record=record) from None
    finally:
        if collecting:
            gc.enable()


# ---- parse once: one reading session sees each JSON file parsed once ---------------------------------------

class _Parsed:
    """The JSON documents one reading session has parsed, by file identity (device, inode, size,
    modification time: a file that changes is parsed again), least recently used first, within a
    budget of file bytes (``LLM_POWER_PARSE_CACHE_MB``); a reader takes its document out.
    """

    def __init__(self, budget: int) -> None:
        from collections import OrderedDict

        self.budget, self.held = budget, 0
        self.docs: OrderedDict[tuple[int, ...], tuple[int, Any, _NotJSON | None]] = OrderedDict()

    def get(self, key: tuple[int, ...], *, take: bool) -> tuple[Any, _NotJSON | None] | None:
        if key not in self.docs:
            return None
        size, value, error = self.docs.pop(key) if take else self.docs[key]
        if take:
            self.held -= size
        else:
            self.docs.move_to_end(key)
        return value, error

    def put(self, key: tuple[int, ...], size: int, value: Any, error: _NotJSON | None) -> None:
        if size > self.budget:
            return
        self.docs[key], self.held = (size, value, error), self.held + size
        while self.held > self.budget:
            _, (old, _, _) = self.docs.popitem(last=False)
            self.held -= old


_SESSION: ContextVar[_Parsed | None] = ContextVar("llm_power_parsed", default=None)


@contextlib.contextmanager
def parse_once() -> Iterator[None]:
    """A reading session: detection, folder searches and the reader share each JSON file's parse
    (format tests used to parse a file once each: an OpenCompass file was parsed 13 times by
    ``diagnose FOLDER``). Sessions nest (the outermost one holds the documents); everything is
    released when it ends, and a reader takes its document out as it reads it.
    """
    if _SESSION.get() is not None:
        yield
        return
    token = _SESSION.set(_Parsed(limit("LLM_POWER_PARSE_CACHE_MB") * _MB))
    try:
        yield
    finally:
        _SESSION.reset(token)


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def load_json_file(path: str | Path, *, take: bool = False) -> Any:
    """Read and parse one JSON file (a regular file only), bounded by ``LLM_POWER_MAX_JSON_MB``;
    inside :func:`parse_once`, parsed once per session (``take``: the reader's last use, which
    releases the session's copy).
    """
    path = Path(path)
    session = _SESSION.get()
    key = _identity(path) if session is not None else None
    if session is None or key is None:
        return _load_json_file(path)
    held = session.get(key, take=take)
    if held is None:
        try:
            value, error = _load_json_file(path), None
        except _NotJSON as exc:
            value, error = None, exc
        if not take:
            session.put(key, key[2], value, error)
    else:
        value, error = held
    if error is not None:
        raise error
    return value


def _load_json_file(path: Path) -> Any:
    cap = limit("LLM_POWER_MAX_JSON_MB") * _MB
    if path.suffix.lower() == ".gz":  # decompressed under the same bound and the archive limits
        def too_large() -> DataError:
            msg = f"JSON file decompresses to more than the {cap // _MB} MB limit (LLM_POWER_MAX_JSON_MB)"
            return DataError(msg, file=str(path))

        try:
            with open_bounded(path) as fh:
                data = read_capped(fh, cap, too_large)
        except (OSError, EOFError) as exc:
            msg = f"cannot read ({getattr(exc, 'strerror', None) or type(exc).__name__})"
            raise DataError(msg, file=str(path)) from None
    else:
        data = read_regular_bytes(path, cap, limit_name="LLM_POWER_MAX_JSON_MB")
    return load_json_bytes(data, file=str(path))


def peek_json(path: str | Path) -> Any:
    """A JSON file's value for a format's test of a file it may own (detection, folder searches):
    None when the file is not JSON at all (bad syntax or UTF-8: not this format's file). What is
    JSON but hostile -- a key twice in one object, nesting too deep, past the size limit, a FIFO or
    a device -- is the DataError of :func:`load_json_file`: a file is never skipped for that.
    """
    try:
        return load_json_file(path)
    except _NotJSON:
        return None


# ---- YAML: safe tags, one value per key, aliases that cannot explode --------------------------------------

class _YamlRefused(Exception):  # noqa: N818 - a signal inside the loader, turned into a DataError below
    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.field = message, line, field


def _yaml_children(node: Any) -> list[Any]:
    import yaml  # type: ignore[import-untyped]

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_aliases(root: Any, allowed: int) -> None:
    """Refuse a document whose aliases expand it by more than ``allowed`` nodes (a billion laughs:
    a few kB of ``*a`` that the readers would walk as billions of entries), or that holds itself.
    The expanded size of every node is counted once, bottom-up, without recursion.
    """
    size: dict[int, int] = {}
    started: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            size[key] = 1 + sum(size[id(child)] for child in _yaml_children(node))
            # every node of this one's expansion but those counted in `size` is a copy an alias made
            if size[key] - len(size) > allowed:
                msg = (f"YAML aliases expand this file by more than {allowed:,} nodes (LLM_POWER_MAX_YAML_ALIAS_NODES; "
                       "a billion-laughs file?)")
                raise _YamlRefused(msg, node.start_mark.line + 1)
            continue
        if key in size:
            continue
        if key in started:  # reached again from inside itself
            msg = "a YAML alias refers to a node that holds it (recursive data)"
            raise _YamlRefused(msg, node.start_mark.line + 1)
        started.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _yaml_children(node) if id(child) not in size)


def _yaml_loader() -> Any:
    """The safe loader with two refusals: a key twice in one mapping, aliases past the bound."""
    import yaml

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        def compose_document(self) -> Any:
            node = super().compose_document()
            if node is not None:
                _check_aliases(node, limit("LLM_POWER_MAX_YAML_ALIAS_NODES"))
            return node

        def compose_mapping_node(self, anchor: Any) -> Any:
            node = super().compose_mapping_node(anchor)
            node.written = list(node.value)  # the keys as written, before merge keys (<<) flatten in
            return node

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # noqa: FBT001, FBT002 - PyYAML's
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, Any] = {}
                for key_node, _ in getattr(node, "written", node.value):
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue  # a merge key's mapping may be overridden: that is what it is for
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        first = seen.setdefault(key, key_node)
                    except TypeError:  # unhashable: PyYAML says so
                        continue
                    if first is not key_node:
                        msg = (f"the key appears twice in one mapping (first at line {first.start_mark.line + 1}; "
                               "which value is meant?)")
                        raise _YamlRefused(msg, key_node.start_mark.line + 1, str(key))
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_yaml(text: str, *, file: str, what: str = "") -> Any:
    """Parse YAML text with PyYAML's safe loader (no ``!!python`` tags); every failure is one
    DataError naming the file: a syntax error (with its line), nesting too deep, a key twice in one
    mapping (its line and key), aliases that expand past ``LLM_POWER_MAX_YAML_ALIAS_NODES``, a value
    PyYAML cannot convert (an integer of 5,000 digits).
    """
    import yaml

    what = f" {what}" if what else ""
    loader = _yaml_loader()(text)
    try:
        return loader.get_single_data()
    except _YamlRefused as exc:
        raise DataError(exc.message, file=file, record=None if exc.line is None else f"line {exc.line}",
                        field=exc.field) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        msg = f"not valid YAML{what}{line}: {' '.join(str(problem).split())[:160]}"
        raise DataError(msg, file=file) from None
    except RecursionError:
        msg = f"YAML{what} nested too deeply to read"
        raise DataError(msg, file=file) from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer with more digits than Python converts
        msg = f"unreadable YAML{what} value ({' '.join(str(exc).split())[:80]})"
        raise DataError(msg, file=file) from None
    finally:
        loader.dispose()


class ArchiveReader:
    """A zip archive read member by member under size, ratio and total limits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.total = 0
        self.fh = open_regular(path)  # a regular file only; zipfile would open anything
        try:
            self.zip = zipfile.ZipFile(self.fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError):
            self.fh.close()
            msg = "not an inspect .eval log (not a zip archive)"
            raise DataError(msg, file=str(path)) from None
        except OSError as exc:
            self.fh.close()
            msg = f"cannot read ({exc.strerror or type(exc).__name__})"
            raise DataError(msg, file=str(path)) from None

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.zip.close()
        self.fh.close()

    def names(self) -> set[str]:
        """Names of the archive members."""
        return set(self.zip.namelist())

    def read(self, name: str) -> bytes:
        """The member's bytes, streamed and refused past the limits (the header may lie)."""
        where = f"{self.path}:{name}"
        try:
            info = self.zip.getinfo(name)
        except KeyError:
            msg = "member missing from the archive"
            raise DataError(msg, file=where) from None
        member_cap = limit("LLM_POWER_MAX_MEMBER_MB") * _MB
        total_cap = limit("LLM_POWER_MAX_ARCHIVE_MB") * _MB
        ratio_cap = limit("LLM_POWER_MAX_RATIO")
        if info.flag_bits & 0x1:
            msg = "encrypted archive member (password-protected logs cannot be read)"
            raise DataError(msg, file=where)
        self._check(info.file_size, info.compress_size, member_cap, total_cap, ratio_cap, where)
        chunks, size = [], 0
        try:
            with self.zip.open(info) as fh:
                while True:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        break
                    size += len(chunk)
                    self._check(size, info.compress_size, member_cap, total_cap, ratio_cap, where)
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            msg = f"corrupt archive member ({type(exc).__name__}: {str(exc)[:60]})"
            raise DataError(msg, file=where) from None
        except NotImplementedError as exc:
            msg = f"unsupported compression ({str(exc)[:60]})"
            raise DataError(msg, file=where) from None
        except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required for extraction"
            msg = f"cannot extract ({str(exc)[:80]})"
            raise DataError(msg, file=where) from None
        self.total += size
        return b"".join(chunks)

    def _check(self, size: int, compressed: int, member_cap: int, total_cap: int, ratio_cap: int, where: str) -> None:
        if size > member_cap:
            msg = f"archive member larger than the {member_cap // _MB} MB limit (LLM_POWER_MAX_MEMBER_MB)"
            raise DataError(msg,
                            file=where)
        if self.total + size > total_cap:
            msg = f"archive expands past the {total_cap // _MB} MB limit (LLM_POWER_MAX_ARCHIVE_MB)"
            raise DataError(msg,
                            file=where)
        if size > _MB and size > ratio_cap * max(compressed, 1):
            msg = f"archive member expands more than {ratio_cap}:1 (a zip bomb?; LLM_POWER_MAX_RATIO)"
            raise DataError(msg,
                            file=where)

    def json(self, name: str) -> Any:
        """Parse one archive member as JSON (bounded; one-line errors)."""
        return load_json_bytes(self.read(name), file=f"{self.path}:{name}")
