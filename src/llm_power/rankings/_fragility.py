"""Fragility: how few items flip a gap, or the #1 position, when they are removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import Result
from .._core.validation import check_open_unit, check_score_matrix
from ..matrix import RunScores, ScoreMatrix
from ..resolution import DiagnoseOptions
from ._section import carries_its_own, fragility_of, scores_fragility

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
def fragility(data: Any, *, models: Any = None, pairs: str | None = None, fragile_share: float = 0.001,
              max_pairs: int | None = None) -> FragilityResult:
    r"""The fewest items whose removal ties or reverses each gap of a leaderboard, and the #1 position.

    Parameters
    ----------
    data : Diagnosis, or array_like or DataFrame of shape (n_items, n_models)
        A finished :func:`~llm_power.diagnose` (its pairs), or per-item scores, every model on every
        item (0/1 or graded; a :class:`~llm_power.matrix.ScoreMatrix`, or several runs per model,
        whose per-item means are the scores).
    models : sequence of str, optional
        With scores only.
    pairs : {"adjacent", "all"}, optional
        With scores only (default "adjacent"); a Diagnosis has its pairs. The models are ranked and
        paired as :func:`~llm_power.diagnose` ranks and pairs them (ties in column order).
    fragile_share : float, default 0.001
        A gap is *fragile* when removing at most this share of the items flips it.
    max_pairs : int, optional
        With scores only: refuse more pairs than this (default 200,000, as diagnose's ``max_pairs``;
        ``pairs="all"`` grows with the square of the models, and the result holds a row per pair).

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

    Cost: for 0/1 scores b - c = S_A - S_B, the difference of the two models' correct answers, so
    every count -- each shown pair's and #1's against every other model -- follows from the column
    sums: one pass over the scores, then a few numbers per pair (no pairwise statistics, no
    diagnosis of every pair). For graded scores the per-item differences of the shown pairs and of
    #1's pairs are sorted, a bounded block of pairs at a time. A Diagnosis is not diagnosed again.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import fragility
    >>> x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 0], [1, 0, 0]])
    >>> res = fragility(x, models=["a", "b", "c"])
    >>> res.items_to_flip.tolist(), res.challenger, res.items_to_flip_top
    ([2.0, 1.0], 'b', 2.0)
    """
    share = check_open_unit(fragile_share, "fragile_share")
    if carries_its_own(data, models=models, pairs=pairs, max_pairs=max_pairs):
        diag = data
        fr = fragility_of(diag)
        if fr is None:
            msg = "graded scores on item shards: the items that flip a gap need the per-item differences"
            raise ValueError(msg)
        cols = diag.columns
        names, model_a, model_b = list(diag.models), list(cols["model_a"]), list(cols["model_b"])
        delta, n = np.asarray(cols["delta"], dtype=float), diag.n
    else:
        opts = DiagnoseOptions.create(**{k: v for k, v in (("pairs", pairs), ("max_pairs", max_pairs))
                                         if v is not None})  # diagnose's checks and defaults
        source = _scores(data, models)
        opts.check_pairs(source.n_models, top=False)
        fr = scores_fragility(source, opts.pairs)
        names, n, delta = fr["models"], source.n, fr["delta"]
        model_a, model_b = [names[k] for k in fr["i"]], [names[k] for k in fr["j"]]
    flips = np.asarray(fr["pairs"], dtype=float)
    return FragilityResult(models=names, model_a=model_a, model_b=model_b, delta=delta, items_to_flip=flips,
                           share=flips / n, fragile=flips / n <= share, top_model=names[0],
                           challenger=fr["challenger"], items_to_flip_top=fr["top"], share_top=fr["top"] / n,
                           fragile_top=bool(fr["top"] / n <= share), fragile_share=share, n_items=n)


def _scores(data: Any, models: Any) -> ScoreMatrix:
    """The scores as diagnose reads them (checked; several runs per model: their per-item means),
    without their cluster labels, which no count of items uses.
    """
    if isinstance(data, RunScores) or (not hasattr(data, "columns") and np.ndim(data) == 3):
        data = data if isinstance(data, RunScores) else RunScores.from_array(data, models=models)
        data = data.averaged()
    if isinstance(data, ScoreMatrix):
        models = data.models if models is None else models
        data = data.scores
    x, names = check_score_matrix(data, models)
    return ScoreMatrix.coded(x, names, None, 0)
