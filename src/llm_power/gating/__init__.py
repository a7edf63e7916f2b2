"""The regression gate: :func:`gate` (PASS / FAIL / INCONCLUSIVE against a margin, fixed-n or
anytime-valid), what a verdict does to a CI run (:func:`gate_outcome`), the items that flipped
(:func:`flipped_items`) and the assertions for test suites (:mod:`llm_power.testing`).

Each name is imported from its module on first use (``import llm_power.gating`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._flips import FlipTable, flipped_items
    from ._gate import EXIT_CODES, GateResult, TaskGateResult, gate, gate_tasks
    from ._policy import GateOutcome, gate_outcome
    from ._testing import assert_not_worse

#: public name -> the module of this family that defines it
_LAZY = {
    "EXIT_CODES": "._gate",
    "FlipTable": "._flips",
    "GateOutcome": "._policy",
    "GateResult": "._gate",
    "TaskGateResult": "._gate",
    "assert_not_worse": "._testing",
    "flipped_items": "._flips",
    "gate": "._gate",
    "gate_outcome": "._policy",
    "gate_tasks": "._gate",
}

__all__ = [
    "EXIT_CODES",
    "FlipTable",
    "GateOutcome",
    "GateResult",
    "TaskGateResult",
    "assert_not_worse",
    "flipped_items",
    "gate",
    "gate_outcome",
    "gate_tasks",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
