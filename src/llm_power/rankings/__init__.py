"""Rankings you can defend: simultaneous confidence sets for the ranks of a leaderboard and the set of
models that can be #1 (Mogstad, Romano, Shaikh and Wilhelm 2024).

Each name is imported from its module on first use.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._ranks import RankIntervalsResult, rank_intervals

_LAZY = {
    "RankIntervalsResult": "._ranks",
    "rank_intervals": "._ranks",
}

__all__ = ["RankIntervalsResult", "rank_intervals"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
