"""Assertions for test suites (defined in the gate's family, :mod:`llm_power.gating`):
``from llm_power.testing import assert_not_worse``.
"""

from .gating import assert_not_worse

__all__ = ["assert_not_worse"]
