"""The JSON documents of the command line: each command's payload stamped with the schema's header
(``llm_power.report.schema``: schema and package versions, the command, the options it ran with).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ..report.schema import stamp


def command_of(args: argparse.Namespace) -> str:
    """The command as typed: ``diagnose``, ``plan sample-size``, ``subset estimate``."""
    second = getattr(args, "plan_command", None) or getattr(args, "subset_command", None)
    return " ".join(filter(None, (args.command, second)))


def document(args: argparse.Namespace, payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` as the command's JSON document (its keys, and the header every document carries)."""
    return stamp(command_of(args), payload, args)
