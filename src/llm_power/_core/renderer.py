"""Where results find the report layer that renders them (notebook views, HTML, Markdown, JSON
files): the package -- the composition root -- installs it here when it is imported; the statistics
core never imports the report layer, and this module imports nothing (``import llm_power`` stays light).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["renderer", "use_renderer"]

_FACTORY: list[Callable[[], Any]] = []


def use_renderer(factory: Callable[[], Any]) -> None:
    """Install the report layer: ``factory()`` returns it (imported on first use)."""
    _FACTORY[:] = [factory]


def renderer() -> Any:
    """The installed report layer (a module with ``fragment``, ``html_document``, ``markdown_text``,
    ``json_text`` and ``write``).
    """
    if not _FACTORY:
        msg = "no report layer is installed (import llm_power, which installs it)"
        raise RuntimeError(msg)
    return _FACTORY[0]()
