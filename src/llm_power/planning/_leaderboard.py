"""Planning a whole leaderboard from a pilot: how many of its gaps the verdict will resolve at N items,
and the items a goal needs (issue 45). The statistics are the kernel's
(:mod:`llm_power._kernel.family`, :mod:`llm_power._kernel.leaderboard_power`); this module reads the
pilot, forms the family and says the answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_int_at_least, check_option, check_score_matrix
from ..matrix import ScoreMatrix

__all__ = ["LeaderboardPlan", "plan_leaderboard"]

#: the families a leaderboard plans for (``llm_power._kernel.family.FAMILIES`` by their public names)
PLAN_FAMILIES = ("adjacent", "all", "many_to_one")
#: the corrections the planner judges with (the verdict's, and none)
PLAN_CORRECTIONS = ("none", "bonferroni", "holm", "bh", "by", "ebh", "dunnett")
#: what a plan counts: the pilot's adjacent gaps, or a future report's own (its ranking re-formed)
PLAN_COUNTS = ("pilot", "report")
#: the step-up (FDR) corrections, planned in closed form too (Jung 2005)
FDR_CORRECTIONS = ("bh", "by", "ebh")
#: the simulations hold a pairs x pairs correlation and draws x pairs normals: at most this many pairs
MAX_PLAN_PAIRS = 2_000
#: the probability of correct selection is an orthant probability in (models - 1) dimensions: computed
#: by default up to this many models, and on request (``selection_probability``) up to 200
MAX_SELECTION_MODELS, MAX_SELECTION_ASKED = 31, 201


@dataclass(frozen=True, repr=False)
class LeaderboardPlan(Result):
    """The plan of a leaderboard's family of comparisons from a pilot.

    ``models`` best first; ``pairs`` the family's (model A, model B) with the pilot's ``delta`` (A - B)
    and per-item ``sd`` of the differences; ``dependence`` the correlations between the pairs'
    statistics (:class:`llm_power._kernel.family.FamilyCorrelation` as a dict); ``power`` the family's
    power at ``power.n_items`` (the pilot's items, multiples of it, and the items needed);
    ``items`` the items the goal needs (None without a goal); ``selection`` the probability that the
    pilot's best model is observed best at each N of ``power.n_items`` (and the items ``selection_probability``
    needs), None for more than :data:`MAX_SELECTION_MODELS` models unless asked for. ``null_below``:
    the gap below which a pilot gap was planned as a true null (``delta`` 0 there); ``discoveries``:
    Jung's closed-form items for an ``expected`` goal under an FDR correction (``DiscoveryItems`` as a
    dict, with ``dependence_ok`` saying whether the family's statistics allow it), else None;
    ``clusters``: for a clustered plan, the pilot's clusters and each pair's design effect and df;
    ``count``: "pilot" (the pilot's pairs) or "report" (``power`` and ``items`` count the report's own
    adjacent gaps; ``power.each_resolved`` is then per rank position).
    """

    models: list[Any]
    family: str
    pairs: list[tuple[Any, Any]]
    delta: np.ndarray
    sd: np.ndarray
    n_pilot: int
    dependence: dict[str, Any]
    power: Any
    items: Any
    selection: dict[str, Any] | None = None
    null_below: float | None = None
    discoveries: dict[str, Any] | None = None
    clusters: dict[str, Any] | None = None
    count: str = "pilot"

    _repr_fields = ("family", "n_pilot", "delta", "items")
    _title = "Leaderboard plan"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        def num(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        power = self.power.to_dict()
        return {"models": [str(m) for m in self.models], "family": self.family, "n_pilot": self.n_pilot,
                "pairs": [{"model_a": str(a), "model_b": str(b), "delta": num(d), "sd": num(s)}
                          for (a, b), d, s in zip(self.pairs, self.delta.tolist(), self.sd.tolist(), strict=True)],
                "dependence": self.dependence, "power": power,
                "items": None if self.items is None else self.items.to_dict(), "selection": self.selection,
                "null_below": self.null_below, "discoveries": self.discoveries, "clusters": self.clusters,
                "count": self.count}


@public
def plan_leaderboard(scores: Any, *, models: Any = None, family: str = "adjacent", control: Any = None,  # noqa: PLR0913
                     top: int | None = None, correction: str = "holm", at_least: Any = None,
                     probability: float = 0.8, expected: float | None = None, n_items: Any = None,
                     alpha: float = 0.05, power: float = 0.8, n_simulations: int = 10_000,
                     max_items: int = 100_000_000, selection_probability: float | None = None,
                     indifference: float | None = None, null_below: float | None = None,
                     cluster: Any = None, count: str = "pilot", rng: SeedLike = None) -> LeaderboardPlan:
    r"""How many of a leaderboard's gaps the verdict will resolve at N items, and the items a goal needs.

    From a pilot items x models matrix: each pair of the family's gap and per-item SD of its
    differences, and the correlation between the pairs' statistics (adjacent gaps that share a model
    correlate negatively); then, in the joint normal limit, the verdict of every pair judged as
    :func:`~llm_power.diagnose` judges it (q >= 1 and p <= alpha', alpha' from ``correction``),
    counting a gap only when it is resolved in its pilot direction: the expected number of resolved
    gaps with its 5-95% band, P(all resolved) and P(at least k) at each N, and the smallest N for the
    goal. The normal limit agrees with simulated benchmarks judged by the exact McNemar tests within
    3 Monte-Carlo SE on seven designs (``tests/kernel/test_leaderboard_power.py``).

    Parameters
    ----------
    scores : array_like, DataFrame or ScoreMatrix, shape (n_items, n_models)
        The pilot: per-item scores (0/1 or graded) of every model on the same items.
    models : sequence, optional
        Model names (default: the DataFrame's columns or ``model_0``, ...).
    family : {"adjacent", "all", "many_to_one"}, default "adjacent"
        The comparisons planned for: adjacent pairs of the pilot's ranking, all pairs, or ``control``
        against each other model.
    control : str, optional
        The model of ``family="many_to_one"`` (a new model compared with each model of the board).
    top : int, optional
        Plan for the ``top`` best models only.
    correction : {"holm", "bonferroni", "bh", "by", "ebh", "dunnett", "none"}, default "holm"
        The multiplicity procedure of the verdicts (as ``diagnose``'s ``correction``; "none": each
        gap at alpha). "ebh": e-BH on the anytime regime's normal-mixture e-values (FDR under any
        dependence). "dunnett" (``family="many_to_one"`` only): Dunnett's one-sided simultaneous test
        of ``control``'s gains over each model, its P(all) also by the multivariate normal CDF.
    at_least : int or "all", optional
        The goal: at least this many gaps resolved with ``probability``.
    probability : float, default 0.8
        The probability the ``at_least`` goal is reached with.
    expected : float, optional
        The goal instead: this many gaps resolved on average.
    n_items : int or sequence of int, optional
        The numbers of items to report the power at (default: the pilot's, and 2, 4 and 10 times it);
        the items needed are added.
    alpha, power : float
        The verdict's level and the power inside its q (as ``diagnose``'s).
    n_simulations : int, default 10,000
        Draws of the joint normal limit (the same draws at every N: smooth curves, an exact integer N).
    max_items : int, default 100,000,000
        The largest N searched (a goal not reached by it is an error saying so).
    selection_probability : float, optional
        P*: also the items after which the pilot's best model is observed best with probability P*
        (the probability of correct selection at each N is reported up to 31 models without it).
    indifference : float, optional
        Bechhofer's indifference zone delta*: plan the selection as if every other model trailed the
        best by exactly delta* (the least favourable configuration), with the pilot's SDs and
        correlations; default the pilot's own leads.
    null_below : float, optional
        FDR planning: pilot gaps smaller than this (a proportion, 0.005 = half a point) are planned as
        true nulls (zero gaps); the plan then reports the false resolutions and the FDR at each N, the
        goal counts real gaps only, and with ``expected`` and an FDR correction ("bh", "by", "ebh") Jung's
        closed-form items are given beside the simulated ones.
    cluster : sequence, optional
        Each pilot item's cluster label (subject, source passage): plan for benchmarks whose items come
        in clusters like the pilot's, judged by the clustered test (``diagnose(cluster=...)``): each
        gap's per-item SD becomes its CR2 one (its design effect, floored at 1, as the verdict floors
        it), the correlation the CR2 one, and the verdicts use t quantiles on the pilot's
        Imbens-Kolesar df per item times N (:mod:`llm_power._kernel.cluster_family`). A ScoreMatrix's
        own ``clusters`` are not used unless passed here. ``P(best)`` stays the IID one.
    count : {"pilot", "report"}, default "pilot"
        What is counted: the pilot's adjacent gaps ("will these gaps be resolved?"), or a future
        report's own -- each simulated benchmark ranked anew, its adjacent gaps judged, as ``diagnose``
        counts them (:mod:`llm_power._kernel.report_power`); fewer where models are close, since a new
        ranking reorders near-ties. "report": adjacent family only, unclustered, no ``null_below``.
    rng : None, int or numpy.random.Generator
        The draws (the same seed gives the same plan).

    Returns
    -------
    LeaderboardPlan

    Examples
    --------
    A pilot of 2,000 items and four models: how many items would resolve all three adjacent gaps with
    probability 0.8 under Holm's correction?

    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((2000, 4)) < [0.80, 0.76, 0.70, 0.66]).astype(int)
    >>> plan = lp.plan_leaderboard(x, at_least="all", rng=1)
    >>> plan.items.n_items
    6842
    >>> plan.power.n_items.tolist(), np.round(plan.power.expected_resolved, 2).tolist()
    ([2000.0, 4000.0, 6842.0, 8000.0, 20000.0], [1.66, 2.48, 2.8, 2.87, 3.0])
    >>> round(plan.dependence["minimum"], 2)  # adjacent gaps sharing a model: negatively correlated
    -0.53

    At the pilot's 2,000 items 1.66 of the 3 gaps are resolved on average; 6,842 items resolve all
    three with probability 0.8 (2.8 on average).
    """
    from .._kernel.family import family_pairs
    from .._kernel.leaderboard_power import items_for_leaderboard, leaderboard_power
    from .._kernel.ranks import rank_order

    check_option(family, "family", PLAN_FAMILIES)
    check_option(correction, "correction", PLAN_CORRECTIONS)
    check_option(count, "count", PLAN_COUNTS)
    if isinstance(scores, ScoreMatrix):
        models = scores.models if models is None else models
        scores = scores.scores
    x, names = check_score_matrix(scores, models)
    n = x.shape[0]
    if n < 2:
        msg = f"the pilot needs at least 2 items; got {n}"
        raise ValueError(msg)
    means = x.mean(axis=0)
    order = rank_order(means)
    if top is not None:
        order = order[:check_int_at_least(top, "top", 2, maximum=len(names))]
    ctrl = None
    if family == "many_to_one":
        if control is None or control not in names:
            msg = f"`family='many_to_one'` needs `control`, one of the models; got {control!r}"
            raise ValueError(msg)
        ctrl = names.index(control)
        if ctrl not in set(order.tolist()):
            order = np.r_[order, ctrl]
    elif control is not None:
        msg = "`control` is the model of family='many_to_one'"
        raise ValueError(msg)
    i, j = family_pairs(order, "all_pairs" if family == "all" else family, control=ctrl)
    if i.size > MAX_PLAN_PAIRS:
        msg = (f"the family has {i.size:,} pairs, more than {MAX_PLAN_PAIRS:,} (a pairs x pairs correlation): plan "
               "for the adjacent pairs, or `top` models")
        raise ValueError(msg)
    delta, sd, dep, df_per_item, clustered = _family_stats(x, means, i, j, cluster)
    delta = _nulls(delta, null_below, correction, family)
    gen = as_rng(rng)
    seed = int(gen.integers(2**63))  # one seed: the same draws for the curve and the search
    goal = {"at_least": at_least, "expected": expected, "probability": probability}
    common = {"alpha": alpha, "power": power, "correction": correction, "n_simulations": n_simulations, "rng": seed}
    if count == "report":
        _check_report(family, cluster, null_below, correction)
        block = x[:, order] - means[order]
        args: tuple[Any, ...] = (means[order], block.T @ block / n)  # the report's models: means, covariance
        plan_items, plan_curve = _report_planners()
    else:
        args, extra = (delta, sd, dep.corr), {"df_per_item": df_per_item}
        common |= extra
        plan_items, plan_curve = items_for_leaderboard, leaderboard_power
    items = None
    if at_least is not None or expected is not None:
        items = plan_items(*args, **goal, **common, max_items=max_items)
    grid = [n, 2 * n, 4 * n, 10 * n] if n_items is None else list(np.atleast_1d(np.asarray(n_items)).tolist())
    if items is not None and items.n_items not in grid:
        grid.append(items.n_items)
    curve = plan_curve(*args, np.asarray(sorted({int(v) for v in grid})), **common)
    summary = dep.to_dict()
    summary.pop("corr")
    discoveries = _discoveries(delta, sd, expected, alpha=alpha, power=power, correction=correction,
                               max_items=max_items, prds=bool(summary["prds_plausible"]))
    selection = _selection(x, order, names, curve.n_items, selection_probability, indifference)
    return LeaderboardPlan(models=[names[k] for k in order], family=family,
                           pairs=[(names[p], names[q]) for p, q in zip(i.tolist(), j.tolist(), strict=True)],
                           delta=delta, sd=sd, n_pilot=n, dependence=summary, power=curve, items=items,
                           selection=selection, null_below=null_below, discoveries=discoveries, clusters=clustered,
                           count=count)


def _family_stats(x: np.ndarray, means: np.ndarray, i: np.ndarray, j: np.ndarray, cluster: Any) -> tuple[Any, ...]:
    """Each pair's gap and per-item SD, their correlation (a ``FamilyCorrelation``), the df per item of a
    clustered test (None: IID) and the clustered plan's summary (None: IID).
    """
    from .._kernel.family import correlation_from_covariance

    n = x.shape[0]
    if cluster is not None:
        from .._kernel.cluster_family import cluster_family

        fam = cluster_family(x, cluster, i, j, ddof=0)  # ddof 0, as the IID plan below
        clustered = {"n_clusters": fam.n_clusters, "design_effect": [_num(v) for v in fam.design_effect.tolist()],
                     "df": [_num(v) for v in fam.df.tolist()]}
        return fam.delta, fam.sd_effective, fam.dependence, fam.df / n, clustered
    used = np.unique(np.r_[i, j])
    block = x[:, used] - means[used]
    cov = block.T @ block / n  # the models' covariance over items (ddof 0, as the paired SD below)
    a, b = np.searchsorted(used, i), np.searchsorted(used, j)
    sd = np.sqrt(np.maximum(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 0.0))
    return means[i] - means[j], sd, correlation_from_covariance(cov, a, b), None, None


def _check_report(family: str, cluster: Any, null_below: float | None, correction: str) -> None:
    """``count="report"`` plans the adjacent gaps of the report's own ranking, unclustered, without ties."""
    if family != "adjacent" or cluster is not None or null_below is not None or correction == "dunnett":
        msg = ("`count='report'` plans a report's own adjacent gaps: with family='adjacent', without `cluster`, "
               "`null_below` or Dunnett")
        raise ValueError(msg)


def _report_planners() -> tuple[Any, Any]:
    from .._kernel.report_power import items_for_report, report_power

    return items_for_report, report_power


def _num(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def _nulls(delta: np.ndarray, null_below: float | None, correction: str, family: str) -> np.ndarray:
    """The planned gaps: the pilot's, those below ``null_below`` set to 0 (true nulls); checks the FDR options."""
    if correction == "dunnett" and family != "many_to_one":
        msg = "`correction='dunnett'` is the many-to-one test: use it with family='many_to_one' and `control`"
        raise ValueError(msg)
    if null_below is None:
        return delta
    if not (isinstance(null_below, (int, float)) and math.isfinite(null_below) and 0 < null_below < 1):
        msg = f"`null_below` must be a gap in (0, 1) (a proportion: 0.005 is half a point); got {null_below!r}"
        raise ValueError(msg)
    return np.where(np.abs(delta) < null_below, 0.0, delta)


def _discoveries(delta: np.ndarray, sd: np.ndarray, expected: float | None, *, alpha: float, power: float,  # noqa: PLR0913
                 correction: str, max_items: int, prds: bool) -> dict[str, Any] | None:
    """Jung's closed-form items of an ``expected`` goal under an FDR correction (None otherwise)."""
    if expected is None or correction not in FDR_CORRECTIONS or np.count_nonzero(delta) <= expected:
        return None
    from .._kernel.leaderboard_power import items_for_discoveries

    out = items_for_discoveries(delta, sd, discoveries=expected, alpha=alpha, power=power, correction=correction,
                                max_items=max_items).to_dict()
    out["dependence_ok"] = prds
    return out


def _selection(x: np.ndarray, order: np.ndarray, names: list[Any], grid: np.ndarray, target: float | None,
               indifference: float | None) -> dict[str, Any] | None:
    """P(the pilot's best is observed best) at each N of ``grid`` and the items ``target`` needs
    (:mod:`llm_power._kernel.selection`), from the many-to-one family with the best as control.
    """
    from .._kernel.family import family_correlation
    from .._kernel.selection import items_for_selection, selection_probability

    m = order.size
    if m > (MAX_SELECTION_ASKED if target is not None or indifference is not None else MAX_SELECTION_MODELS):
        return None
    best, others = int(order[0]), order[1:]
    d = x[:, [best]] - x[:, others]
    lead, sd = d.mean(axis=0), d.std(axis=0)
    if indifference is not None:
        if not math.isfinite(indifference) or indifference <= 0:
            msg = f"`indifference` must be a gap > 0; got {indifference!r}"
            raise ValueError(msg)
        lead = np.full(others.size, float(indifference))
    if np.any(sd <= 0):
        return None  # a model identical to the best: never told apart
    corr = family_correlation(x, np.full(others.size, best), others).corr
    out: dict[str, Any] = {"best": str(names[best]), "lead": "indifference" if indifference is not None else "pilot",
                           "n_items": [float(v) for v in grid],
                           "probability": np.atleast_1d(selection_probability(lead, sd, corr, grid)).tolist(),
                           "target": target, "items": None}
    if target is not None:
        needed = items_for_selection(lead, sd, corr, probability=target)
        out["items"] = needed if math.isfinite(needed) else None
    return out
