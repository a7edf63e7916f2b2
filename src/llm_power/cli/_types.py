"""argparse value types with the package's messages (bad values are usage errors, exit 2)."""

from __future__ import annotations

import argparse

__all__ = ["nonnegative_int", "positive_int"]


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        msg = f"must be a whole number; got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def nonnegative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        msg = f"must be a non-negative integer; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        msg = f"must be a positive integer; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value
