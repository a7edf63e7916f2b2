"""What a parsed command reads and writes (so that no output can overwrite or add to an input)."""

from __future__ import annotations

import argparse
import os

__all__ = ["command_paths"]


def command_paths(args: argparse.Namespace) -> tuple[list[str | None], list[str], list[str]]:
    """(outputs, inputs, output folders) of a parsed command: every ``*_out`` option is an output file
    and every ``*_dir_out`` one an output folder; every other path it names that exists (files and
    folders it reads: results, ``--instances``, ``--data``, ...) is an input, so that no output of any
    command can overwrite or add to anything it reads.
    """
    outputs: list[str | None] = []
    inputs: list[str] = []
    folders: list[str] = []
    for key, value in vars(args).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        strings = [v for v in values if isinstance(v, (str, os.PathLike))]
        if key.endswith("_dir_out"):
            folders.extend(str(v) for v in strings)
            continue
        if key.endswith("_out"):
            outputs.extend(str(v) for v in strings)
            continue
        inputs.extend(str(v) for v in strings if str(v) and str(v) != "-" and os.path.lexists(v))
    return outputs, inputs, folders
