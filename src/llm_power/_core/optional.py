"""The one way to an optional package: imported when first needed, or one line that names the extra
to install (``pip install 'llm-power[mlflow]'``) instead of a traceback.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import LLMPowerError

__all__ = ["require"]


def require(module: str, extra: str, what: str) -> Any:
    """The module ``module`` (``"mlflow"``, ``"wandb.sdk"``), or an :class:`LLMPowerError` saying that
    ``what`` needs the extra ``extra``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        msg = f"{what} needs the {extra} extra: pip install 'llm-power[{extra}]'"
        raise LLMPowerError(msg) from exc
