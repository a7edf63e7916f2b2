"""Safe, atomic output files.

The promises (docs/security.md):

- **never write inside an input**: an output that resolves (following every symlink) to a file
  that was read, or to any path under a folder that was given as input, is refused;
- **never follow or replace a non-regular file**: a symlink, device, FIFO or folder at the output
  path is refused (``-`` writes to standard output explicitly);
- **atomic**: the text goes to a temporary file in the same folder, then ``os.replace`` -- a
  reader sees the old file or the new one, never half of one; a crash leaves no partial output;
- **permissions kept**: replacing an existing file keeps its mode (a 0600 file stays 0600).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["OutputPathError", "check_outputs", "write_atomic"]


class OutputPathError(ValueError):
    """An output path that must not be written (usage error: exit 2 in the CLI)."""


def _inside(child: str, parent: str) -> bool:
    try:
        return os.path.commonpath([child, parent]) == parent
    except ValueError:  # different drives
        return False


def check_outputs(outputs: Iterable[str | None], inputs: Iterable[str | Path] = ()) -> None:
    """Refuse unusable output paths before any work is done (empty, a folder, the same path twice,
    a symlink or special file, or a path that is or lies inside an input).
    """
    seen: dict[str, str] = {}
    real_inputs = [(str(inp), os.path.realpath(inp), os.path.isdir(inp)) for inp in inputs]
    for raw in outputs:
        if raw is None or raw == "-":
            continue
        if raw.strip() == "":
            msg = "an output path is empty"
            raise OutputPathError(msg)
        if raw.endswith(("/", os.sep)) or os.path.isdir(raw):
            msg = f"output {raw!r} is a folder; give a file name"
            raise OutputPathError(msg)
        if os.path.islink(raw):
            msg = f"refusing to write {raw!r}: it is a symbolic link (outputs never follow links)"
            raise OutputPathError(msg)
        if os.path.lexists(raw) and not stat.S_ISREG(os.lstat(raw).st_mode):
            msg = f"refusing to write {raw!r}: it is not a regular file"
            raise OutputPathError(msg)
        real = os.path.realpath(raw)
        if real in seen:
            msg = f"{seen[real]!r} and {raw!r} are the same output file"
            raise OutputPathError(msg)
        seen[real] = raw
        for shown, inp, is_dir in real_inputs:
            if real == inp or (is_dir and _inside(real, inp)):
                where = "is" if real == inp else "lies inside"
                msg = (
                    f"refusing to write {raw!r}: it {where} the input {shown!r} "
                                      "(outputs never overwrite or add to inputs); choose another output name"
                )
                raise OutputPathError(msg)


def check_output_folder(folder: str | Path | None, inputs: Iterable[str | Path] = (),
                        outputs: Iterable[str | None] = ()) -> None:
    """Refuse an output folder (``--eee DIR``) that is ``-`` (a folder cannot be standard output), a
    symbolic link, an existing non-folder, the same path as an output file of the run, or is or lies
    inside an input. An existing folder is written into (a second run replaces its own records, each
    file atomically; its files are checked again one by one when written); a trailing slash is fine.
    """
    if folder is None:
        return
    raw = str(folder)
    if raw.strip() == "":
        msg = "an output folder is empty"
        raise OutputPathError(msg)
    if raw == "-":
        msg = "an output folder cannot be '-' (standard output takes one file, not a folder of records)"
        raise OutputPathError(msg)
    bare = raw.rstrip("/" + os.sep) or raw
    if os.path.islink(bare):
        msg = f"refusing to write into {raw!r}: it is a symbolic link (outputs never follow links)"
        raise OutputPathError(msg)
    if os.path.lexists(bare) and not os.path.isdir(bare):
        msg = f"output folder {raw!r} exists and is not a folder"
        raise OutputPathError(msg)
    real = os.path.realpath(bare)
    for out in outputs:
        if out is not None and out != "-" and os.path.realpath(out) == real:
            msg = f"{raw!r} is both an output folder and an output file of this run"
            raise OutputPathError(msg)
    for inp in inputs:
        r_inp = os.path.realpath(inp)
        if real == r_inp or (os.path.isdir(inp) and _inside(real, r_inp)):
            msg = (f"refusing to write into {raw!r}: it is or lies inside the input {str(inp)!r} "
                   "(outputs never overwrite or add to inputs); choose another folder")
            raise OutputPathError(msg)


def write_atomic(path: str | Path, text: str | bytes | Callable[[BinaryIO], None], *,
                 inputs: tuple[Any, ...] = ()) -> Path | str:
    """Write ``text`` to ``path`` atomically (``"-"``: standard output) under the rules above;
    ``text`` may be str (UTF-8), bytes, or a function that writes to a binary file object (Parquet).
    """
    if str(path) == "-":
        if callable(text):
            text(sys.stdout.buffer)
        elif isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        sys.stdout.flush()
        return "-"
    check_outputs([str(path)], inputs)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    if target.exists():
        mode = stat.S_IMODE(os.stat(target).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(text):
                text(fh)
            else:
                fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # mkstemp creates 0600; a new file gets the usual permissions
        os.chmod(tmp, mode)
        # a link or special file that appeared since the check is still not followed: os.replace
        # swaps the directory entry itself
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def write_reports(args: Any, payload: Any, markdown: Callable[[], str], inputs: tuple[Any, ...]) -> None:
    """A command's ``--json FILE`` (``payload`` as deterministic JSON) and ``--markdown FILE``
    (``markdown()``, built only when asked for), each written atomically under the rules above.
    """
    import io

    from .terminal import dump_json

    if getattr(args, "json_out", None):
        buf = io.StringIO()
        dump_json(payload, buf)
        write_atomic(args.json_out, buf.getvalue(), inputs=inputs)
    if getattr(args, "markdown_out", None):
        write_atomic(args.markdown_out, markdown(), inputs=inputs)
