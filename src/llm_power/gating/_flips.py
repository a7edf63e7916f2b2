"""The items that flipped between a baseline and a candidate: for a paired 0/1 gate, the items the
baseline got right and the candidate wrong (regressions) and those the other way round (fixes).

The counts are the discordant counts of the 2x2 table (:func:`llm_power._kernel.sufficient.discordant_counts`,
held equal in ``tests/gating/test_gate_ci.py``), and (fixed - regressed) / n is the gate's gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core.results import Result
from .._core.validation import check_paired, is_binary

__all__ = ["FlipTable", "flipped_items"]


@dataclass(frozen=True)
class FlipTable(Result):
    """Result of :func:`flipped_items`.

    Attributes
    ----------
    regressed : tuple of str
        Ids of the items correct in the baseline and wrong in the candidate, in the items' order.
    fixed : tuple of str
        Ids of the items wrong in the baseline and correct in the candidate, in the items' order.
    n : int
        Items compared.
    """

    regressed: tuple[str, ...]
    fixed: tuple[str, ...]
    n: int

    _repr_fields: ClassVar[tuple[str, ...]] = ("n_regressed", "n_fixed", "n")

    @property
    def n_regressed(self) -> int:
        """Items correct in the baseline, wrong in the candidate."""
        return len(self.regressed)

    @property
    def n_fixed(self) -> int:
        """Items wrong in the baseline, correct in the candidate."""
        return len(self.fixed)

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """The counts and the ids (the first ``limit`` of each side when given; the counts stay whole)."""
        keep = slice(None) if limit is None else slice(0, max(int(limit), 0))
        return {"n": self.n, "n_regressed": self.n_regressed, "n_fixed": self.n_fixed,
                "regressed": list(self.regressed[keep]), "fixed": list(self.fixed[keep])}

    def summary(self) -> str:
        """The two counts in one line."""
        items = "item" if self.n_regressed == 1 else "items"
        return (f"{self.n_regressed:,} {items} correct in the baseline and wrong in the candidate, "
                f"{self.n_fixed:,} the other way round (of {self.n:,})")


def flipped_items(baseline: Any, candidate: Any, items: Sequence[Any], *,
                  higher_is_better: bool = True) -> FlipTable:
    """The items whose 0/1 score flipped between a baseline and a candidate.

    Parameters
    ----------
    baseline, candidate : array_like of 0/1, shape (n,)
        Per-item correctness of each model on the same items, in the same order.
    items : sequence, length n
        The item ids (shown as text).
    higher_is_better : bool, default True
        False for 0/1 error flags: an item "correct" is then a 0.

    Returns
    -------
    FlipTable

    Examples
    --------
    >>> from llm_power.gating import flipped_items
    >>> flips = flipped_items([1, 1, 0, 0], [1, 0, 1, 0], ["q1", "q2", "q3", "q4"])
    >>> flips.regressed, flips.fixed
    (('q2',), ('q3',))
    """
    b_arr, c_arr = check_paired(baseline, candidate, a_name="baseline", b_name="candidate", min_items=1)
    if not is_binary(b_arr, c_arr):
        msg = "`baseline` and `candidate` must be 0/1 scores to list the items that flipped; got graded scores."
        raise ValueError(msg)
    ids = list(items)
    if len(ids) != b_arr.size:
        msg = f"`items` must have one id per item ({b_arr.size}); got {len(ids)}."
        raise ValueError(msg)
    if not higher_is_better:  # error flags: 1 - x is correctness
        b_arr, c_arr = 1.0 - b_arr, 1.0 - c_arr
    regressed = np.flatnonzero(b_arr > c_arr)
    fixed = np.flatnonzero(b_arr < c_arr)
    return FlipTable(regressed=tuple(str(ids[i]) for i in regressed), fixed=tuple(str(ids[i]) for i in fixed),
                     n=int(b_arr.size))
