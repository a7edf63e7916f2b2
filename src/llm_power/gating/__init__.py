"""The regression gate: :func:`gate` (PASS / FAIL / INCONCLUSIVE against a margin, fixed-n or
anytime-valid) and the assertions for test suites (:mod:`llm_power.testing`).
"""

from ._gate import (
    EXIT_CODES,
    GateResult,
    TaskGateResult,
    gate,
    gate_tasks,
)
from ._testing import (
    assert_not_worse,
)

__all__ = [
    "EXIT_CODES",
    "GateResult",
    "TaskGateResult",
    "assert_not_worse",
    "gate",
    "gate_tasks",
]
