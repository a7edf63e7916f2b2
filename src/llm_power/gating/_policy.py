"""What a gate's verdict does to a CI run: the one table of verdict x INCONCLUSIVE policy -> exit code,
check conclusion and annotation, read by ``llm-power gate --inconclusive`` and the GitHub Action.

The policies ("block" fails the run on INCONCLUSIVE, the default; "warn" lets it through with a warning
annotation; "pass" lets it through) are :data:`llm_power._core.options.INCONCLUSIVE_POLICIES`, kept
there so that the command line's ``--help`` loads no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .._core.options import INCONCLUSIVE_POLICIES
from .._core.results import Result
from .._core.validation import check_option

__all__ = ["INCONCLUSIVE_POLICIES", "GateOutcome", "gate_outcome"]

#: (verdict, policy) -> (exit code, conclusion, annotation): the only place the mapping is written.
#: PASS and FAIL ignore the policy: a policy for the undecided never turns a FAIL into a success.
_TABLE: dict[tuple[str, str], tuple[int, str, str | None]] = {
    **{("PASS", p): (0, "success", None) for p in INCONCLUSIVE_POLICIES},
    **{("FAIL", p): (4, "failure", "error") for p in INCONCLUSIVE_POLICIES},
    ("INCONCLUSIVE", "block"): (3, "failure", "error"),
    ("INCONCLUSIVE", "warn"): (0, "neutral", "warning"),
    ("INCONCLUSIVE", "pass"): (0, "success", None),
}


@dataclass(frozen=True)
class GateOutcome(Result):
    """Result of :func:`gate_outcome`: what one verdict does to a CI run under a policy.

    Attributes
    ----------
    verdict : {"PASS", "FAIL", "INCONCLUSIVE"}
    inconclusive : {"block", "warn", "pass"}
        The policy for an INCONCLUSIVE verdict.
    exit_code : int
        The process's exit code: 0 lets the step pass, 3 (INCONCLUSIVE, blocked) and 4 (FAIL) fail it.
    conclusion : {"success", "neutral", "failure"}
        The check's conclusion, in the GitHub checks API's words.
    annotation : {"error", "warning"} or None
        The level of the workflow annotation the GitHub Action writes (None: none).
    """

    verdict: str
    inconclusive: str
    exit_code: int
    conclusion: str
    annotation: str | None

    _repr_fields: ClassVar[tuple[str, ...]] = ("verdict", "inconclusive", "exit_code", "conclusion")


def gate_outcome(verdict: str, inconclusive: str = "block") -> GateOutcome:
    """The exit code, check conclusion and annotation of a gate's verdict under an INCONCLUSIVE policy.

    Parameters
    ----------
    verdict : {"PASS", "FAIL", "INCONCLUSIVE"}
        The gate's verdict (:attr:`GateResult.verdict`).
    inconclusive : {"block", "warn", "pass"}, default "block"
        What an INCONCLUSIVE verdict does: fail the run (exit 3), let it through with a warning (exit 0,
        conclusion "neutral"), or let it through (exit 0). PASS and FAIL are never changed.

    Returns
    -------
    GateOutcome

    Examples
    --------
    >>> from llm_power.gating import gate_outcome
    >>> gate_outcome("INCONCLUSIVE").exit_code                 # the default blocks
    3
    >>> out = gate_outcome("INCONCLUSIVE", inconclusive="warn")
    >>> out.exit_code, out.conclusion, out.annotation
    (0, 'neutral', 'warning')
    >>> gate_outcome("FAIL", inconclusive="pass").exit_code    # never a FAIL
    4
    """
    policy = check_option(inconclusive, "inconclusive", INCONCLUSIVE_POLICIES)
    if verdict not in ("PASS", "FAIL", "INCONCLUSIVE"):
        msg = f"`verdict` must be one of 'FAIL', 'INCONCLUSIVE', 'PASS'; got {verdict!r}."
        raise ValueError(msg)
    code, conclusion, annotation = _TABLE[verdict, policy]
    return GateOutcome(verdict=verdict, inconclusive=policy, exit_code=code, conclusion=conclusion,
                       annotation=annotation)
