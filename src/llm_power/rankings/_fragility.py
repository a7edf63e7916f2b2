"""Fragility: how few items flip a gap, or the #1 position, when they are removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import Result
from .._core.validation import check_open_unit, check_option
from ._section import carries_its_own, fragility_of

__all__ = ["FragilityResult", "fragility"]


@dataclass(frozen=True, slots=True, repr=False)
class FragilityResult(Result):
    """The fewest items whose removal ties or reverses each gap and the #1 position (see :func:`fragility`).

    Attributes
    ----------
    models : list of str
        Ranked, best first.
    model_a, model_b : list of str
        The pairs (A ranked above B).
    delta : numpy.ndarray
        The gaps (A - B).
    items_to_flip : numpy.ndarray
        Per pair, the fewest items whose removal makes the gap <= 0 (inf: no removal can).
    share : numpy.ndarray
        items_to_flip / n.
    fragile : numpy.ndarray
        share <= fragile_share.
    top_model, challenger : str
        The #1 model and the model that overtakes or ties it with the fewest removals.
    items_to_flip_top, share_top : float
    fragile_top : bool
    fragile_share : float
    n_items : int
    """

    models: list[Any]
    model_a: list[Any]
    model_b: list[Any]
    delta: np.ndarray
    items_to_flip: np.ndarray
    share: np.ndarray
    fragile: np.ndarray
    top_model: Any
    challenger: Any
    items_to_flip_top: float
    share_top: float
    fragile_top: bool
    fragile_share: float
    n_items: int

    _repr_fields = ("top_model", "challenger", "items_to_flip_top", "fragile_top")
    _title = "Fragility"

    def summary(self) -> str:
        """Per pair, the items that flip it; and for #1."""
        lines = [f"#1 {self.top_model}: removing {_count(self.items_to_flip_top)} of {self.n_items:,} items "
                 f"({_pct(self.share_top)}) lets {self.challenger} tie or overtake it"
                 + (" -- fragile" if self.fragile_top else "")]
        for a, b, k, s, f in zip(self.model_a, self.model_b, self.items_to_flip, self.share, self.fragile,
                                 strict=True):
            lines.append(f"  {str(a)[:28]:<28} > {str(b)[:28]:<28} flips by removing {_count(k):>7} ({_pct(s)})"
                         + (" fragile" if f else ""))
        return "\n".join(lines)


def _count(k: float) -> str:
    return "no set" if not np.isfinite(k) else f"{int(k):,}"


def _pct(s: float) -> str:
    return "-" if not np.isfinite(s) else f"{100 * s:.2g}%"


@public
def fragility(data: Any, *, models: Any = None, pairs: str | None = None,
              fragile_share: float = 0.001) -> FragilityResult:
    r"""The fewest items whose removal ties or reverses each gap of a leaderboard, and the #1 position.

    Parameters
    ----------
    data : Diagnosis, or array_like or DataFrame of shape (n_items, n_models)
        A finished :func:`~llm_power.diagnose` (its pairs), or per-item scores, every model on every
        item (0/1 or graded).
    models : sequence of str, optional
        With scores only.
    pairs : {"adjacent", "all"}, optional
        With scores only (default "adjacent"); a Diagnosis has its pairs.
    fragile_share : float, default 0.001
        A gap is *fragile* when removing at most this share of the items flips it.

    Returns
    -------
    FragilityResult

    Notes
    -----
    Removing a set S of items changes the sum of a pair's per-item differences d_i by -sum_S d_i,
    at most the sum of the |S| largest, so the fewest removals that make the gap <= 0 are the
    largest differences, taken until the rest sums to <= 0 (exact; for 0/1 scores b - c items
    where A alone is right). #1 changes as soon as one model ties or overtakes the top, so its
    count is the smallest of the top model's pairs (Broderick, Giordano and Meager 2023 study the
    same question for estimators in general).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import fragility
    >>> x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 0], [1, 0, 0]])
    >>> res = fragility(x, models=["a", "b", "c"])
    >>> res.items_to_flip.tolist(), res.challenger, res.items_to_flip_top
    ([2.0, 1.0], 'b', 2.0)
    """
    from ..resolution import diagnose

    share = check_open_unit(fragile_share, "fragile_share")
    if carries_its_own(data, models=models, pairs=pairs):
        diag = data
    else:
        pairs = check_option("adjacent" if pairs is None else pairs, "pairs", ("adjacent", "all"))
        diag = diagnose(data, models=models, pairs=pairs, cluster_resamples=0, rng=0)
    fr = fragility_of(diag)
    if fr is None:
        msg = "graded scores on item shards: the items that flip a gap need the per-item differences"
        raise ValueError(msg)
    cols = diag.columns
    flips = np.asarray(fr["pairs"], dtype=float)
    return FragilityResult(models=list(diag.models), model_a=list(cols["model_a"]), model_b=list(cols["model_b"]),
                           delta=np.asarray(cols["delta"], dtype=float), items_to_flip=flips, share=flips / diag.n,
                           fragile=flips / diag.n <= share, top_model=diag.models[0], challenger=fr["challenger"],
                           items_to_flip_top=fr["top"], share_top=fr["top"] / diag.n,
                           fragile_top=bool(fr["top"] / diag.n <= share), fragile_share=share, n_items=diag.n)
