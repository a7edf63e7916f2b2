"""Rankings you can defend: simultaneous confidence sets for the ranks of a leaderboard and the set of
models that can be #1 (Mogstad, Romano, Shaikh and Wilhelm 2024), the winner's score corrected for
selection (Andrews, Kitagawa and McCloskey 2024), and how few items flip a gap or #1.

Each name is imported from its module on first use.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._fragility import FragilityResult, fragility
    from ._ranks import RankIntervalsResult, rank_intervals
    from ._winners import WINNER_TARGETS, WinnerResult, winners_curse

_LAZY = {
    "FragilityResult": "._fragility",
    "RankIntervalsResult": "._ranks",
    "WINNER_TARGETS": "._winners",
    "WinnerResult": "._winners",
    "fragility": "._fragility",
    "rank_intervals": "._ranks",
    "winners_curse": "._winners",
}

__all__ = ["WINNER_TARGETS", "FragilityResult", "RankIntervalsResult", "WinnerResult", "fragility", "rank_intervals",
           "winners_curse"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
