"""Public exception and warning classes of llm-power.

Every exception subclasses the built-in it refines, so ``except ValueError`` keeps working::

    Exception
    └── LLMPowerError                      base of every llm-power exception
        └── DataError (also ValueError)    bad data in a file or array: names file, record, field

    UserWarning
    └── LLMPowerWarning                    base of every llm-power warning
        ├── DegenerateDataWarning          the data cannot support the request (e.g. k = 0 with Wald)
        │   └── SeparationWarning          a model never wins or never loses: no finite rating
        └── ApproximationWarning           an approximation is used outside its comfort zone
            └── FewClustersWarning         fewer than 30 clusters: cluster-robust inference is approximate
        └── InfeasibleDesignWarning        no feasible answer for the design (e.g. an MDE above the discordance)

Bad *options* (a misspelled method, a confidence level of 1.5) raise plain :class:`ValueError`
or :class:`TypeError` from the shared validation helper, with the parameter's name in backticks.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import FrameType

__all__ = [
    "ApproximationWarning",
    "DataError",
    "DegenerateDataWarning",
    "FewClustersWarning",
    "InfeasibleDesignWarning",
    "LLMPowerError",
    "LLMPowerWarning",
    "SeparationWarning",
    "warn",
]

#: the package's folder: a warning is attributed to the first frame outside it
_PACKAGE = str(Path(__file__).resolve().parent.parent)


def user_stacklevel() -> int:
    """The ``stacklevel`` of the caller's code: the first frame outside the package (as pandas'
    ``find_stack_level``), whatever the depth of calls, wrappers and checks in between.
    """
    frame: FrameType | None = sys._getframe(1)  # noqa: SLF001 - walks the stack without building it
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


def warn(message: str, category: type[Warning]) -> None:
    """Issue a warning attributed to the user's line that called into the package."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


class LLMPowerError(Exception):
    """Base class of every exception raised by llm-power."""


class DataError(LLMPowerError, ValueError):
    """Bad data: a file, record or field that cannot be used.

    Parameters
    ----------
    message
        What is wrong, in one line.
    file, record, field
        Where it is wrong, when known; they are prefixed to the message.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        record: int | str | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.record = record
        self.field = field
        where = []
        if file is not None:
            where.append(str(file))
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field!r}")
        self.message = message
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class LLMPowerWarning(UserWarning):
    """Base class of every warning issued by llm-power."""


class DegenerateDataWarning(LLMPowerWarning):
    """The data are degenerate for the request; the result is NaN or a documented limit."""


class SeparationWarning(DegenerateDataWarning):
    """Some models never win (or never lose) against the rest: their Bradley-Terry rating has no
    finite maximum-likelihood estimate (reported as -inf / +inf, never a finite Elo) and their gaps
    are not estimable.
    """


class ApproximationWarning(LLMPowerWarning):
    """An approximation is used where it is known to be poor."""


class FewClustersWarning(ApproximationWarning):
    """Fewer than 30 clusters: the cluster test, interval and N* use Student-t quantiles with
    G - 1 degrees of freedom, and cluster-robust inference is approximate.
    """


class InfeasibleDesignWarning(LLMPowerWarning):
    """A planning question has no feasible answer for the design (the result is NaN): e.g. the
    detectable gap would exceed the discordance, or an accuracy would leave [0, 1].
    """
