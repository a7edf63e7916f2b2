"""Hostile-input guards shared by the readers: bounded archives, JSON that cannot crash the reader.

Every failure becomes one :class:`~llm_power.DataError` line naming the file (and the archive
member or record). Limits can be raised through environment variables (docs/security.md):

=====================================  =========  ==============================================
variable                               default    what it bounds
=====================================  =========  ==============================================
``LLM_POWER_MAX_MEMBER_MB``            512        uncompressed size of one archive member or ``.gz`` file
``LLM_POWER_MAX_ARCHIVE_MB``           4096       uncompressed size of all members read from one archive
``LLM_POWER_MAX_RATIO``                200        compression ratio of a member or ``.gz`` file past 1 MB
``LLM_POWER_MAX_JSON_MB``              2048       size of one JSON file read whole
``LLM_POWER_MAX_PARQUET_MB``           4096       uncompressed size of one Parquet file (its metadata's)
=====================================  =========  ==============================================
"""

from __future__ import annotations

import io
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

from .._core.errors import DataError

__all__ = ["ArchiveReader", "load_json_bytes", "load_json_file", "limit", "open_bounded", "read_parquet"]

_MB = 1 << 20
_DEFAULTS = {"LLM_POWER_MAX_MEMBER_MB": 512, "LLM_POWER_MAX_ARCHIVE_MB": 4096, "LLM_POWER_MAX_RATIO": 200,
             "LLM_POWER_MAX_JSON_MB": 2048, "LLM_POWER_MAX_PARQUET_MB": 4096}


def limit(name: str) -> int:
    """The limit ``name`` from the environment, or its default (a bad value is an error)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return _DEFAULTS[name]
    try:
        value = int(raw)
    except ValueError:
        msg = f"environment variable {name} must be a positive integer; got {raw!r}"
        raise ValueError(msg) from None
    if value < 1:
        msg = f"environment variable {name} must be a positive integer; got {raw!r}"
        raise ValueError(msg)
    return value


class _BoundedGzip(io.RawIOBase):
    """A gzip file decompressed under the archive limits: more than ``LLM_POWER_MAX_MEMBER_MB``, or a
    ratio above ``LLM_POWER_MAX_RATIO`` once past 1 MB, is a DataError naming the file (a 5 MB file
    of 2 GiB of rows stops at the limit, never in a MemoryError).
    """

    def __init__(self, path: Path) -> None:
        import gzip

        self.path = path
        self.compressed = max(path.stat().st_size, 1)
        self.cap = limit("LLM_POWER_MAX_MEMBER_MB") * _MB
        self.ratio = limit("LLM_POWER_MAX_RATIO")
        self.inner = gzip.open(path, "rb")
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
        self.inner.close()
        super().close()


def open_bounded(path: str | Path) -> Any:
    """The file's bytes as a binary file object: a ``.gz`` file decompressed under the archive limits
    (:class:`_BoundedGzip`), any other file as is.
    """
    path = Path(path)
    if path.suffix.lower() == ".gz":
        return io.BufferedReader(_BoundedGzip(path), buffer_size=1 << 20)
    return open(path, "rb")  # noqa: SIM115 - closed by the caller's with-block


def read_parquet(path: str | Path) -> Any:
    """A Parquet file as a pandas DataFrame, after its footer is checked: a column named twice is a
    DataError (as in a CSV header), and so is an uncompressed size (from the row groups' metadata,
    before anything is decompressed) past ``LLM_POWER_MAX_PARQUET_MB``; any read failure is one line.
    """
    import pandas as pd
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.exists():
        msg = "file not found"
        raise DataError(msg, file=str(path))
    try:
        parquet = pq.ParquetFile(path)
        meta = parquet.metadata
        size = sum(meta.row_group(k).total_byte_size for k in range(meta.num_row_groups))
        schema_names = parquet.schema_arrow.names
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a broken file
        msg = f"not readable as Parquet ({type(exc).__name__}: {str(exc)[:120]})"
        raise DataError(msg, file=str(path)) from None
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
        return pd.read_parquet(path)
    except MemoryError:
        msg = "too large to read into memory"
        raise DataError(msg, file=str(path)) from None
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a broken file
        msg = f"not readable as Parquet ({type(exc).__name__}: {str(exc)[:120]})"
        raise DataError(msg, file=str(path)) from None


def load_json_bytes(data: bytes, *, file: str, record: str | None = None) -> Any:
    """Parse JSON bytes; every failure (syntax, encoding, nesting, giant numbers) is one DataError."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})"
        raise DataError(msg, file=file,
                        record=record) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        raise DataError(msg, file=file,
                        record=record) from None
    except RecursionError:
        msg = "JSON nested too deeply to read"
        raise DataError(msg, file=file, record=record) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        msg = f"unreadable JSON value ({str(exc)[:80]})"
        raise DataError(msg, file=file, record=record) from None


def load_json_file(path: str | Path) -> Any:
    """Read and parse one JSON file, bounded by ``LLM_POWER_MAX_JSON_MB``."""
    path = Path(path)
    cap = limit("LLM_POWER_MAX_JSON_MB") * _MB
    try:
        size = path.stat().st_size
        if size > cap:
            msg = (
                f"JSON file of {size / _MB:.0f} MB is larger than the {cap // _MB} MB limit "
                            "(LLM_POWER_MAX_JSON_MB)"
            )
            raise DataError(msg, file=str(path))
        if path.suffix.lower() == ".gz":  # decompressed under the same bound and the archive limits
            with open_bounded(path) as fh:
                data = fh.read(cap + 1)
            if len(data) > cap:
                msg = f"JSON file decompresses to more than the {cap // _MB} MB limit (LLM_POWER_MAX_JSON_MB)"
                raise DataError(msg, file=str(path))
        else:
            data = path.read_bytes()
    except (OSError, EOFError) as exc:
        msg = f"cannot read ({getattr(exc, 'strerror', None) or type(exc).__name__})"
        raise DataError(msg, file=str(path)) from None
    return load_json_bytes(data, file=str(path))


class ArchiveReader:
    """A zip archive read member by member under size, ratio and total limits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.total = 0
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError):
            msg = "not an inspect .eval log (not a zip archive)"
            raise DataError(msg, file=str(path)) from None
        except OSError as exc:
            msg = f"cannot read ({exc.strerror or type(exc).__name__})"
            raise DataError(msg, file=str(path)) from None

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.zip.close()

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
