"""Fewer items with valid intervals: the full-benchmark score of a model run on a random subset of
the items, with control variates from the leaderboard or a cheap judge (the difference estimator).

Each name is imported from its module on first use.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._estimate import SubsetEstimateResult, subset_estimate

_LAZY = {
    "SubsetEstimateResult": "._estimate",
    "subset_estimate": "._estimate",
}

__all__ = ["SubsetEstimateResult", "subset_estimate"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
