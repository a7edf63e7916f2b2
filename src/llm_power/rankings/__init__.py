"""Rankings you can defend: simultaneous confidence sets for the ranks of a leaderboard and the set of
models that can be #1 (Mogstad, Romano, Shaikh and Wilhelm 2024), the winner's score corrected for
selection (Andrews, Kitagawa and McCloskey 2024), and how few items flip a gap or #1 -- each a function of
a finished :func:`~llm_power.diagnose` (or of scores, diagnosed on the way), :func:`rank_report` all three.

Each name is imported from its module on first use.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._fragility import FragilityResult, fragility
    from ._ranks import RankIntervalsResult, rank_intervals
    from ._report import RankReport, rank_report
    from ._winners import WINNER_TARGETS, WinnerResult, winners_curse

_LAZY = {
    "FragilityResult": "._fragility",
    "RankIntervalsResult": "._ranks",
    "RankReport": "._report",
    "WINNER_TARGETS": "._winners",
    "WinnerResult": "._winners",
    "fragility": "._fragility",
    "rank_intervals": "._ranks",
    "rank_report": "._report",
    "winners_curse": "._winners",
}

__all__ = [
    "FragilityResult",
    "RankIntervalsResult",
    "RankReport",
    "WINNER_TARGETS",
    "WinnerResult",
    "fragility",
    "rank_intervals",
    "rank_report",
    "winners_curse",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
