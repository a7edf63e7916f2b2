"""The regression gate: :func:`gate` (PASS / FAIL / INCONCLUSIVE against a margin, fixed-n or
anytime-valid) and the assertions for test suites (:mod:`llm_power.testing`).

Each name is imported from its module on first use (``import llm_power.gating`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._gate import EXIT_CODES, GateResult, TaskGateResult, gate, gate_tasks
    from ._testing import assert_not_worse

#: public name -> the module of this family that defines it
_LAZY = {
    "EXIT_CODES": "._gate",
    "GateResult": "._gate",
    "TaskGateResult": "._gate",
    "assert_not_worse": "._testing",
    "gate": "._gate",
    "gate_tasks": "._gate",
}

__all__ = ["EXIT_CODES", "GateResult", "TaskGateResult", "assert_not_worse", "gate", "gate_tasks"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
