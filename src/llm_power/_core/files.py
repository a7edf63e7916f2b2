"""Only regular files are read: the one opener every reader uses, and the limits of what is read.

A FIFO given as a plan file blocks ``open`` until a writer comes (forever), ``/dev/zero`` never ends,
a socket or a device is not data. So a file is opened here and nowhere else: ``os.open`` with
``O_NONBLOCK`` (opening a FIFO does not wait for a writer), ``fstat`` of the open descriptor (no race
between a check and the open), anything but a regular file refused with one
:class:`~llm_power.DataError` naming it, then ``O_NONBLOCK`` cleared and the file read under a
limit checked against its size *before* anything is allocated. Folder walks keep the regular files
and refuse, by name, a FIFO, device or socket among the files they were asked for.

The limits (``LLM_POWER_MAX_*``) are listed with their defaults in :mod:`llm_power.io.safe` and
docs/security.md; :func:`limit` reads one from the environment.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .errors import DataError

__all__ = ["CSV_FIELD_LIMIT", "DEFAULTS", "MB", "OUT_OF_MEMORY", "allow_long_csv_fields", "check_size",
           "csv_error_text", "file_kind", "is_regular", "limit", "open_regular", "read_capped", "read_regular_bytes",
           "regular_files"]

MB = 1 << 20

#: the environment variables that raise a limit, and their defaults (docs/security.md)
DEFAULTS = {"LLM_POWER_MAX_MEMBER_MB": 512, "LLM_POWER_MAX_ARCHIVE_MB": 4096, "LLM_POWER_MAX_RATIO": 200,
            "LLM_POWER_MAX_JSON_MB": 2048,
            "LLM_POWER_MAX_RECEIPT_MB": 256, "LLM_POWER_MAX_PARQUET_MB": 4096, "LLM_POWER_MAX_TEXT_MB": 2048,
            "LLM_POWER_MAX_YAML_ALIAS_NODES": 100_000,
            # sizes that scale work or memory with an argument (checked before allocating)
            "LLM_POWER_MAX_ITEMS": 100_000_000, "LLM_POWER_MAX_PLAN_RUNS": 1_000_000,
            "LLM_POWER_MAX_MONITOR_PAIRS": 20_000, "LLM_POWER_MAX_MONITOR_MB": 1024,
            "LLM_POWER_MAX_RESAMPLES": 50_000_000,
            "LLM_POWER_MAX_CLUSTER_RESAMPLES": 1_000_000,
            "LLM_POWER_MAX_WILD_DRAWS": 5_000_000, "LLM_POWER_MAX_YAML_MB": 8, "LLM_POWER_MAX_CSV_FIELD_MB": 64,
            "LLM_POWER_MAX_EXACT_POWER_ITEMS": 1_000_000, "LLM_POWER_MAX_EXACT_SEARCH_ITEMS": 200_000,
            "LLM_POWER_MAX_COVERAGE_TERMS": 20_000_000, "LLM_POWER_MAX_ARENA_PAIRS": 200_000,
            # JSON documents one reading session keeps (in file bytes) so a file is parsed once
            "LLM_POWER_PARSE_CACHE_MB": 256}


#: the message of a reader that runs out of memory (naming the file is the caller's)
OUT_OF_MEMORY = ("too large to read into the memory available (the file's rows do not fit, though it is within "
                 "the size limits); free memory, or split the file")


#: largest CSV field read by default (a logged prompt, a long item id; the csv module's default is
#: 131,072); ``LLM_POWER_MAX_CSV_FIELD_MB`` sets it
CSV_FIELD_LIMIT = 1 << 26


def allow_long_csv_fields() -> None:
    """Set the csv module's field limit to ``LLM_POWER_MAX_CSV_FIELD_MB`` (64 MB by default)."""
    import csv

    csv.field_size_limit(limit("LLM_POWER_MAX_CSV_FIELD_MB") * MB)


def csv_error_text(exc: Exception) -> str:
    """A csv module error in the readers' words: a field past the limit names the limit and its variable."""
    text = str(exc)
    if "field larger than field limit" in text:
        return (f"a field is longer than the limit of {limit('LLM_POWER_MAX_CSV_FIELD_MB'):,} MB "
                "(LLM_POWER_MAX_CSV_FIELD_MB raises it)")
    return f"not readable as CSV ({text})"


def limit(name: str) -> int:
    """The limit ``name`` from the environment, or its default (a bad value is an error)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return DEFAULTS[name]
    try:
        value = int(raw)
    except ValueError:
        msg = f"environment variable {name} must be a positive integer; got {raw!r}"
        raise ValueError(msg) from None
    if value < 1:
        msg = f"environment variable {name} must be a positive integer; got {raw!r}"
        raise ValueError(msg)
    return value


def check_size(value: float, name: str, what: str, *, error: type[Exception] = ValueError) -> None:
    """Refuse, before anything is allocated, a ``value`` past the limit ``name`` (an environment
    variable of :data:`DEFAULTS`): one error giving the value, the limit and the variable that raises it.
    """
    cap = limit(name)
    if value > cap:
        shown = f"{value:,.0f}" if value < 1e18 else f"{value:.3g}"
        msg = f"{what}: {shown} is more than the limit of {cap:,} ({name} raises it)"
        raise error(msg)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO", "a character device", "a folder", ...)."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file"))
    return next((word for test, word in kinds if test(mode)), "not a regular file")


def _not_regular(mode: int, name: str) -> DataError:
    return DataError(f"not a regular file ({file_kind(mode)}); only regular files are read", file=name)


def _cannot_open(exc: OSError, name: str) -> DataError:
    if isinstance(exc, FileNotFoundError):
        return DataError("file not found", file=name)
    return DataError(f"cannot read ({exc.strerror or type(exc).__name__})", file=name)


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """Open a regular file for reading in binary (a link to one is followed).

    The file is checked twice: by ``stat`` before it is opened (a device is never opened: opening
    one can have effects) and by ``fstat`` of the descriptor, which was opened with ``O_NONBLOCK``
    (a FIFO swapped in between does not block the open). A FIFO, device, socket or folder is a
    :class:`~llm_power.DataError` naming the file ("not a regular file (a FIFO)"); so
    is a missing or unreadable file. The returned object's ``name`` is the path.
    """
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except OSError as exc:
        raise _cannot_open(exc, name) from None
    if not stat.S_ISREG(mode):
        raise _not_regular(mode, name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise _cannot_open(exc, name) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(mode, name)
        _blocking(fd)
        raw = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    raw.name = name  # messages and pandas see the path, not the descriptor number
    return io.BufferedReader(raw)


def _blocking(fd: int) -> None:
    """Clear ``O_NONBLOCK`` again (a no-op for regular files on Linux; kept for other systems)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows has no O_NONBLOCK either
        return
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    if flags & os.O_NONBLOCK:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)


def read_capped(fh: io.BufferedIOBase | io.RawIOBase, cap: int, too_large: Callable[[], DataError],
                expected: int = 0) -> bytes:
    """All of ``fh``, refused (``too_large()`` raised) past ``cap`` bytes: read in 1 MB pieces after
    the ``expected`` size, so nothing larger than the data (or the cap) is ever allocated.
    """
    first = fh.read(min(expected, cap)) if expected > 0 else b""
    pieces, total = [first or b""], len(first or b"")
    while True:
        piece = fh.read(min(MB, cap + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
        if total > cap:
            raise too_large()
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _size_text(n: float) -> str:
    return f"{n / MB:,.0f} MB" if n >= 10 * MB else f"{n:,.0f} bytes"


def read_regular_bytes(path: str | os.PathLike[str], cap: int, *, limit_name: str | None = None) -> bytes:
    """The bytes of a regular file (:func:`open_regular`), at most ``cap`` of them: the size is
    checked before the file is read, and again as it is read (a file that grows is stopped). The
    error names the file, its size, the limit and ``limit_name``, the environment variable that
    raises it (when there is one).
    """
    name = os.fspath(path)
    raise_it = f" ({limit_name}; raise it for a file that is really this large)" if limit_name else ""

    def too_large(size: float | None = None) -> DataError:
        shown = f"{_size_text(size)}, more than" if size is not None else "more than"
        return DataError(f"{shown} the {_size_text(cap)} limit{raise_it}", file=name)

    with open_regular(name) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > cap:
            raise too_large(size)
        try:
            return read_capped(fh, cap, too_large, expected=size)
        except OSError as exc:
            raise _cannot_open(exc, name) from None


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file (or a link to one): False for a folder or nothing there
    (a dangling link), a :class:`~llm_power.DataError` naming it for a FIFO, device or socket -- a
    file a reader was about to open, which is never skipped in silence.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISREG(mode):
        return True
    if stat.S_ISDIR(mode):
        return False
    raise _not_regular(mode, os.fspath(path))


def regular_files(folder: Path, pattern: str = "*", keep: Callable[[Path], bool] | None = None) -> list[Path]:
    """The regular files under ``folder`` (recursively) whose names match ``pattern`` and ``keep``
    (a test on the path alone: nothing is opened), sorted. Folders are walked, not returned; a
    FIFO, device or socket that matches is a :class:`~llm_power.DataError` naming it.

    A folder that is a symbolic link is walked too (model folders linked into a results folder are
    common), each real folder once (a link back to an ancestor is not a loop); the paths keep the
    names they have under ``folder``. Reading through a link is allowed; writing never is
    (:func:`llm_power.report.files.check_output_folder`).
    """
    import fnmatch

    seen: set[tuple[int, int]] = set()
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=True):
        try:
            st = os.stat(root)
        except OSError:  # a link that went away while walking
            dirs[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen:  # a linked folder already walked (or a link to an ancestor)
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs.sort()
        base = Path(root)
        found += [base / name for name in files if fnmatch.fnmatchcase(name, pattern)]
    named = sorted(p for p in found if keep is None or keep(p))  # sorted: the first FIFO is named
    return [p for p in named if is_regular(p)]
