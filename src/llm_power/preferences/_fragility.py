"""Arena fragility: how few battles (votes) flip a Bradley-Terry gap or the #1 position.

The approximate maximum influence perturbation (AMIP; Broderick, Giordano and Meager 2023): the
influence of each battle on a gap, from the fit's score and information, says which battles to
drop first and how many would flip the gap to first order; every count is then **checked by
refitting** without those battles (adding battles in influence order until the refit flips), so
the count reported is one that is known to flip it -- an upper bound on the true minimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.results import Result
from .._core.validation import check_int_at_least, check_open_unit, check_option
from .._kernel.ranks import linear_removals_to_flip

__all__ = ["ArenaFragilityResult", "arena_fragility", "battle_influence"]

#: a rating gap (log-strength) within this of 0 is a tie of the fit, not an order: ten times the
#: Newton solve's stopping rule (steps below 1e-10), far below any difference the data can show
#: (1e-9 log-strength is 2e-7 Elo points), and far above the rounding left in a tied fit (~1e-16)
TIED_GAP = 1e-9


@dataclass(frozen=True, slots=True, repr=False)
class ArenaFragilityResult(Result):
    """Battles whose removal flips each gap and #1 (see :func:`arena_fragility`).

    Attributes
    ----------
    models : list of str
        Ranked by rating, best first.
    model_a, model_b : list of str
        The pairs (A rated above B).
    gap : numpy.ndarray
        Rating gaps (log-strength).
    battles_amip : numpy.ndarray
        The first-order (AMIP) count of battles whose removal flips each gap.
    battles_to_flip : numpy.ndarray
        The count checked by refitting: removing that many battles (the most influential first)
        makes the refitted gap <= 0 (inf: not within ``max_refits`` refits); 0 for a pair already tied
        in the fit (a gap within ``TIED_GAP`` = 1e-9 of 0, the fit's numerical precision).
    gap_after : numpy.ndarray
        The refitted gap after that removal.
    share : numpy.ndarray
        battles_to_flip / n_battles.
    fragile : numpy.ndarray
        share <= fragile_share.
    top_model, challenger : str
    battles_to_flip_top, share_top : float
    fragile_top : bool
    n_battles : int
    fragile_share : float
    """

    models: list[str]
    model_a: list[str]
    model_b: list[str]
    gap: np.ndarray
    battles_amip: np.ndarray
    battles_to_flip: np.ndarray
    gap_after: np.ndarray
    share: np.ndarray
    fragile: np.ndarray
    top_model: str
    challenger: str
    battles_to_flip_top: float
    share_top: float
    fragile_top: bool
    n_battles: int
    fragile_share: float

    _repr_fields = ("top_model", "challenger", "battles_to_flip_top", "fragile_top")
    _title = "Arena fragility"

    def summary(self) -> str:
        """Per pair, the battles that flip it (checked by refitting); and for #1."""
        def count(k: float) -> str:
            return "more than the refits tried" if not math.isfinite(k) else f"{int(k):,}"

        lines = [f"#1 {self.top_model}: removing {count(self.battles_to_flip_top)} of {self.n_battles:,} battles "
                 f"({100 * self.share_top:.2g}%) lets {self.challenger} tie or overtake it (refit)"
                 + (" -- fragile" if self.fragile_top else "")]
        for a, b, k, amip, f in zip(self.model_a, self.model_b, self.battles_to_flip, self.battles_amip,
                                    self.fragile, strict=True):
            lines.append(f"  {a[:28]:<28} > {b[:28]:<28} flips by removing {count(k):>7} battles "
                         f"(first order: {count(amip)})" + (" fragile" if f else ""))
        return "\n".join(lines)


def battle_influence(enc: Any, ratings: np.ndarray, contrast: np.ndarray) -> np.ndarray:
    """For each battle b, the first-order drop of the contrast c'theta when b is removed:
    c' I^+ g_b, with g_b = (y_b - p_b)(e_a - e_b) the battle's score (y = 1, 1/2, 0 for a win, a tie,
    a loss of model a; p_b = sigma(theta_a - theta_b)) and I = sum_b p_b (1 - p_b)(e_a - e_b)(e_a - e_b)'
    the information (ties counted as half a win: the fit's ``ties="half"``).
    """
    m = ratings.size
    d = ratings[enc.ia] - ratings[enc.ib]
    p = 1.0 / (1.0 + np.exp(-d))
    y = np.where(enc.outcome == 0, 1.0, np.where(enc.outcome == 1, 0.0, 0.5))
    w = p * (1.0 - p)
    info = np.zeros((m, m))
    np.add.at(info, (enc.ia, enc.ia), w)
    np.add.at(info, (enc.ib, enc.ib), w)
    np.add.at(info, (enc.ia, enc.ib), -w)
    np.add.at(info, (enc.ib, enc.ia), -w)
    u = np.linalg.pinv(info) @ contrast  # I^+ c (the Laplacian is singular along 1; c sums to 0)
    return np.asarray((y - p) * (u[enc.ia] - u[enc.ib]), dtype=float)


def _refit_gap(enc: Any, drop: np.ndarray, a: int, b: int) -> float:
    from ._battles import Battles
    from ._bradley_terry import fit_battles

    keep = np.ones(enc.n, dtype=bool)
    keep[drop] = False
    sub = Battles(models=enc.models, ia=enc.ia[keep], ib=enc.ib[keep], outcome=enc.outcome[keep])
    import warnings

    from .._core.errors import DataError, SeparationWarning

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeparationWarning)
            fit = fit_battles(sub, None, ties="half", confidence_level=0.95)
    except DataError:  # the comparison graph fell apart: the gap is no longer defined
        return math.nan
    with np.errstate(invalid="ignore"):
        return float(fit.ratings[a] - fit.ratings[b])


def flip_count(enc: Any, ratings: np.ndarray, a: int, b: int, *, max_refits: int = 12) -> tuple[float, float, float]:
    """(first-order count, refit-checked count, refitted gap) for the gap theta_a - theta_b.

    A gap already tied in the fit (within :data:`TIED_GAP` of 0) or reversed needs no battle removed:
    (0, 0, gap). A refit counts as flipped when its gap is within the same tolerance of 0 or below.
    """
    c = np.zeros(ratings.size)
    c[a], c[b] = 1.0, -1.0
    gap = float(ratings[a] - ratings[b])
    if not gap > TIED_GAP:
        return 0.0, 0.0, gap
    amip, order = linear_removals_to_flip(gap, battle_influence(enc, ratings, c))
    k = int(min(amip, enc.n - 1)) if math.isfinite(amip) else max(1, int(0.1 * enc.n))
    for _ in range(max_refits):
        after = _refit_gap(enc, order[:k], a, b)
        if after <= TIED_GAP:
            return amip, float(k), after
        if k >= enc.n - 1:
            break
        k = min(enc.n - 1, max(k + 1, int(math.ceil(1.25 * k))))
    return amip, math.inf, after


def arena_fragility(battles: Any, *, pairs: str = "adjacent", fragile_share: float = 0.001,
                    max_refits: int = 12) -> ArenaFragilityResult:
    r"""How few battles (votes) flip each rating gap of an arena, and the #1 position.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        ``model_a``, ``model_b``, ``winner`` (as :func:`~llm_power.bradley_terry`; ties count as
        half a win).
    pairs : {"adjacent", "all"}, default "adjacent"
    fragile_share : float, default 0.001
        A gap is *fragile* when removing at most this share of the battles flips it.
    max_refits : int, default 12
        Refits per gap when checking the first-order count (each adds 25% more battles).

    Returns
    -------
    ArenaFragilityResult

    Notes
    -----
    The influence of battle b on a gap c'theta is c' I^+ g_b (:func:`battle_influence`): to first
    order, removing a set S lowers the gap by the sum of its influences, so the most influential
    battles are removed first and the first-order count is where their sum reaches the gap. A
    refit without them checks it; if the refitted gap is still positive, 25% more battles are
    removed and refitted, up to ``max_refits`` times. The count reported flips the refitted gap
    (it is attained, so the true minimum is at most it). A pair already tied in the fit (a gap
    within ``TIED_GAP`` = 1e-9 of 0) needs 0 battles. #1 is the smallest count of the top model's
    gaps.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import arena_fragility
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 3, 3000)
    >>> b = (a + rng.integers(1, 3, 3000)) % 3
    >>> theta = np.array([0.3, 0.25, -0.2])
    >>> win = rng.random(3000) < 1 / (1 + np.exp(-(theta[a] - theta[b])))
    >>> names = np.array(["x", "y", "z"])
    >>> res = arena_fragility({"model_a": names[a], "model_b": names[b],
    ...                        "winner": np.where(win, "model_a", "model_b")})
    >>> res.top_model, res.challenger, bool(res.gap_after[0] <= 0)
    ('x', 'y', True)
    """
    from ._battles import encode_battles
    from ._bradley_terry import fit_battles
    from ._ratings import rank_order

    pairs = check_option(pairs, "pairs", ("adjacent", "all"))
    share = check_open_unit(fragile_share, "fragile_share")
    max_refits = check_int_at_least(max_refits, "max_refits", 1)
    enc = encode_battles(battles)
    fit = fit_battles(enc, None, ties="half", confidence_level=0.95)
    ratings = np.asarray(fit.ratings, dtype=float)
    if not np.all(np.isfinite(ratings)):
        msg = ("some models never win or never lose (separated): their ratings are infinite, so battles that flip "
               "their gaps are not defined; drop them or add battles")
        raise ValueError(msg)
    order = rank_order(ratings)
    m = order.size
    idx = [(r, r + 1) for r in range(m - 1)] if pairs == "adjacent" else [(r, s) for r in range(m)
                                                                         for s in range(r + 1, m)]
    found = {}
    for r, s in {*idx, *((0, t) for t in range(1, m))}:
        found[r, s] = flip_count(enc, ratings, int(order[r]), int(order[s]), max_refits=max_refits)
    top = min(range(1, m), key=lambda t: (found[0, t][1], found[0, t][0], t))
    n = enc.n
    k = np.array([found[p][1] for p in idx])
    names = [enc.models[g] for g in order]
    return ArenaFragilityResult(
        models=names, model_a=[names[r] for r, _ in idx], model_b=[names[s] for _, s in idx],
        gap=np.array([ratings[order[r]] - ratings[order[s]] for r, s in idx]),
        battles_amip=np.array([found[p][0] for p in idx]), battles_to_flip=k,
        gap_after=np.array([found[p][2] for p in idx]), share=k / n, fragile=k / n <= share,
        top_model=names[0], challenger=names[top], battles_to_flip_top=float(found[0, top][1]),
        share_top=float(found[0, top][1]) / n, fragile_top=bool(found[0, top][1] / n <= share), n_battles=n,
        fragile_share=share)
