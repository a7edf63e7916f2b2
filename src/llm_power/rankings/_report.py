"""The rankings section of a resolution report: rank intervals, the winner corrected for selection and
the items that flip each gap, for one finished diagnosis, in one typed result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._core.params import public
from .._core.progress import step
from .._core.results import Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_int_at_least, check_open_unit, check_option
from ._fragility import FragilityResult, fragility
from ._ranks import RankIntervalsResult, rank_intervals
from ._section import MAX_RANK_MODELS, RANK_METHODS, ranks_available
from ._winners import WinnerResult, winners_curse

__all__ = ["RankReport", "rank_report"]

#: the name of the step after the rank intervals in progress reports
TASK = "winner and fragile gaps"


@dataclass(frozen=True, slots=True, repr=False)
class RankReport(Result):
    """The rankings of a diagnosis (see :func:`rank_report`): each part None when not computed, and
    ``skipped`` says why.

    Attributes
    ----------
    ranks : RankIntervalsResult or None
        Simultaneous rank intervals and the set that can be #1.
    winner : WinnerResult or None
        The top model's score corrected for having been selected by the same data.
    fragility : FragilityResult or None
        The fewest items whose removal ties or reverses each shown gap and #1 (None for graded
        scores on item shards).
    skipped : str or None
        Why the rankings were not computed.
    """

    ranks: RankIntervalsResult | None = None
    winner: WinnerResult | None = None
    fragility: FragilityResult | None = None
    skipped: str | None = None

    _repr_fields = ("ranks", "skipped")
    _title = "Rankings"

    def summary(self) -> str:
        """The three parts' summaries."""
        if self.skipped:
            return f"Rankings not computed: {self.skipped}"
        parts = [p.summary() for p in (self.ranks, self.winner, self.fragility) if p is not None]
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types: each part's own ``to_dict``."""
        return {"ranks": None if self.ranks is None else self.ranks.to_dict(),
                "winner": None if self.winner is None else self.winner.to_dict(),
                "fragility": None if self.fragility is None else self.fragility.to_dict(), "skipped": self.skipped}


@public
def rank_report(diag: Any, *, ranks: bool | None = None, n_resamples: int = 1000, method: str = "auto",
                fragile_share: float = 0.001, rng: SeedLike = None) -> RankReport:
    """Rank intervals, the winner corrected for selection and the items that flip each gap, of one
    finished diagnosis -- what ``llm-power diagnose``, ``demo`` and ``rank`` show.

    Parameters
    ----------
    diag : Diagnosis
        From :func:`~llm_power.diagnose` (its level, regimes, clusters and runs are used).
    ranks : bool, optional
        None (default): computed up to 100 models; True: required (an error if they cannot be);
        False: skipped.
    n_resamples : int, default 1000
        Bootstrap resamples of the rank intervals' critical value.
    method : {"auto", "bootstrap", "gaussian"}, default "auto"
        As in :func:`~llm_power.rank_intervals`.
    fragile_share : float, default 0.001
        A gap (or #1) is *fragile* when removing at most this share of the items flips it.
    rng : None, int or numpy.random.Generator
        One seed for the rank intervals and the winner's projection draws: the same seed gives the
        same numbers as ``rank_intervals(diag, rng=seed)`` and ``winners_curse(diag, rng=seed)``.

    Returns
    -------
    RankReport

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((3000, 4)) < [0.70, 0.69, 0.55, 0.40]).astype(int)
    >>> report = lp.rank_report(lp.diagnose(x, models=["w", "x", "y", "z"]), rng=0)
    >>> report.ranks.best_set, report.winner.selected, report.fragility.challenger
    (['w', 'x'], ['w'], 'x')
    """
    from ..resolution import Diagnosis

    if not isinstance(diag, Diagnosis):
        msg = f"`diag` must be a Diagnosis (from diagnose); got {type(diag).__name__}."
        raise TypeError(msg)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    method = check_option(method, "method", RANK_METHODS)
    share = check_open_unit(fragile_share, "fragile_share")
    if ranks is False:
        return RankReport(skipped="not requested")
    why = ranks_available(diag, n_resamples, method)
    if why is None and not (ranks or len(diag.models) <= MAX_RANK_MODELS):
        why = f"more than {MAX_RANK_MODELS} models (ranks=True, or --ranks on, computes them)"
    if why is not None:
        if ranks:
            msg = f"ranks=True: {why}"
            raise ValueError(msg)
        return RankReport(skipped=why)
    seed = int(as_rng(rng).integers(2**63)) if rng is None or not isinstance(rng, int) else rng
    result = rank_intervals(diag, n_resamples=n_resamples, method=method, rng=seed)
    with step(TASK):
        winner = winners_curse(diag, rng=seed)
        try:
            flips = fragility(diag, fragile_share=share)
        except ValueError:  # graded scores on item shards: no per-item differences
            flips = None
    return RankReport(ranks=result, winner=winner, fragility=flips)
