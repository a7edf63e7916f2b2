"""Public names imported from their module on first use (PEP 562): the package and each family
load only what is asked for, so ``import llm_power`` and ``--help`` stay light.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, names: Mapping[str, str], public: list[str],
               namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps a public name to the
    (relative) module that defines it; a value is cached in ``namespace`` once imported.
    """

    def getattr_(name: str) -> Any:
        if name in names:
            value = getattr(importlib.import_module(names[name], package), name)
            namespace[name] = value  # the next access is a plain attribute lookup
            return value
        msg = f"module {package!r} has no attribute {name!r}"
        raise AttributeError(msg)

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(public))

    return getattr_, dir_
