"""Assertions for test suites: a model regression is a failing test with a readable message.

>>> import numpy as np
>>> from llm_power.testing import assert_not_worse
>>> rng = np.random.default_rng(1)
>>> base = (rng.random(4000) < 0.7).astype(int)
>>> cand = np.where(rng.random(4000) < 0.1, rng.random(4000) < 0.7, base).astype(int)
>>> assert_not_worse(base, cand, margin=0.02).verdict
'PASS'
"""

from __future__ import annotations

from typing import Any

from ._gate import GateResult, gate

__all__ = ["assert_not_worse"]


def assert_not_worse(baseline: Any, candidate: Any, *, margin: float = 0.01, alpha: float = 0.05,
                     cluster: Any = None, anytime: bool = False, horizon: int | None = None,
                     names: tuple[str, str] = ("baseline", "candidate"),
                     allow_inconclusive: bool = False) -> GateResult:
    """Assert that ``candidate`` is not worse than ``baseline`` by more than ``margin``.

    Runs :func:`llm_power.gate` on per-item scores of the same items. Passes on PASS (and on
    INCONCLUSIVE with ``allow_inconclusive=True``); otherwise raises ``AssertionError`` whose
    message is the gate's verdict line, its tests and what would decide it. Returns the
    :class:`~llm_power.GateResult`.
    """
    res = gate(baseline, candidate, margin=margin, alpha=alpha, cluster=cluster, anytime=anytime, horizon=horizon)
    if res.verdict == "PASS" or (allow_inconclusive and res.verdict == "INCONCLUSIVE"):
        return res
    base, cand = names
    lines = [res.sentence(base, cand),
             f"  one-sided p: non-inferiority {res.pvalue_noninferiority:.3g}, inferiority "
             f"{res.pvalue_inferiority:.3g} (alpha = {res.alpha:g}); n = {res.n:,} items, {res.test} test"]
    if res.verdict == "INCONCLUSIVE":
        lines.append("  more items would decide it; allow_inconclusive=True accepts an undecided gate")
    raise AssertionError("\n".join(lines))
