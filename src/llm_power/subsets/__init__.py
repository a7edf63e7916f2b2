"""Fewer items with valid intervals: plan which items to run (stratified, Neyman allocation), the
full-benchmark score and gaps of a model run on a random subset (the stratified difference
estimator, with control variates from the leaderboard or a cheap judge), and sequential subsets
that stop when the answer is known.

Each name is imported from its module on first use.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._compare import SubsetCompareResult, subset_compare
    from ._estimate import SubsetEstimateResult, subset_estimate
    from ._plan import SubsetPlan, read_subset_plan, subset_plan
    from ._sequential import SubsetSequence, SubsetSequenceResult

_LAZY = {
    "SubsetCompareResult": "._compare",
    "SubsetEstimateResult": "._estimate",
    "SubsetPlan": "._plan",
    "SubsetSequence": "._sequential",
    "SubsetSequenceResult": "._sequential",
    "read_subset_plan": "._plan",
    "subset_compare": "._compare",
    "subset_estimate": "._estimate",
    "subset_plan": "._plan",
}

__all__ = [
    "SubsetCompareResult",
    "SubsetEstimateResult",
    "SubsetPlan",
    "SubsetSequence",
    "SubsetSequenceResult",
    "read_subset_plan",
    "subset_compare",
    "subset_estimate",
    "subset_plan",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
