"""Atomic output files: write to a temporary file in the same folder, then rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: str | Path, text: str, *, inputs: tuple = ()) -> Path:
    """Write ``text`` to ``path`` atomically; refuse to overwrite one of the ``inputs``."""
    target = Path(path)
    resolved = target.resolve()
    for inp in inputs:
        if Path(inp).resolve() == resolved:
            raise ValueError(f"refusing to overwrite the input file {inp}; choose another output name")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target
