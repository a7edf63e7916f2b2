"""The result of a Bradley-Terry fit (:class:`BradleyTerryResult`) and what every fit shares to build
it: the sandwich result, the separation of models without a finite rating, their placement at +-inf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._core.errors import DataError, DegenerateDataWarning, SeparationWarning, warn
from .._core.params import public
from .._core.results import ConfidenceInterval, Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_option
from .._kernel.quantiles import interval_half_width, t_pvalue
from ._fit import Cells

if TYPE_CHECKING:
    from .._kernel.variance import Sandwich

__all__ = ["BradleyTerryResult", "rank_order", "sandwich_result", "separation", "with_separated"]


@dataclass(frozen=True, repr=False)
class BradleyTerryResult(Result):
    """Result of :func:`bradley_terry`.

    Attributes
    ----------
    models : list of str
        In the order of ``ratings`` (sorted by name).
    ratings : ndarray
        Log-strengths theta (natural log-odds units), centred to mean 0 over the models with a
        finite rating. A model that never loses (never wins) against the rest has no finite
        maximum-likelihood rating: +inf (-inf); a group the comparisons cannot place against the
        others: NaN (see ``separated``).
    covariance : ndarray
        Covariance of ``ratings``: sandwich (cluster-robust CR1, G/(G-1), when fitted with
        ``cluster``) or the covariance of the bootstrap refits; NaN rows for separated models and,
        with too few clusters, everywhere (``not_estimable``).
    n_battles : int
    n_clusters : int or None
    confidence_level : float
    ties : str
        ``"half"`` or ``"davidson"``.
    tie_parameter : float or None
        Davidson's nu (None with ``ties="half"``).
    method : str
        ``"sandwich"`` or ``"bootstrap"``.
    replicates : ndarray or None
        The bootstrap refits' centred ratings (``n_resamples`` x models) with ``method="bootstrap"``.
    df : float
        Degrees of freedom of the intervals' and tests' quantiles: clusters - 1 with ``cluster``
        (Student t), inf otherwise (normal).
    not_estimable : str or None
        Why the cluster-robust covariance cannot be estimated (fewer clusters than free
        ratings): every interval and test is then NaN, never a number.
    separated : dict
        Model -> why it has no finite rating ("never loses to the rest", "never wins against the
        rest", "not comparable with the rest").
    sandwich_parts : Sandwich or None
        The kernel's sandwich (bread, the directions the cluster meat does not see): what
        :meth:`contrast_se` checks a contrast against. Not part of ``to_dict()``.
    covariates : list of str or None
        With ``covariates``: their names; ``ratings`` are then the style-controlled ones.
    coefficients, coefficient_covariance : ndarray or None
        The covariates' coefficients (log-odds per unit) and their sandwich covariance.
    """

    models: list[str]
    ratings: np.ndarray
    covariance: np.ndarray
    n_battles: int
    n_clusters: int | None
    confidence_level: float
    ties: str = "half"
    tie_parameter: float | None = None
    method: str = "sandwich"
    replicates: np.ndarray | None = None
    df: float = math.inf
    not_estimable: str | None = None
    separated: dict[str, str] = field(default_factory=dict)
    sandwich_parts: Any = field(default=None, compare=False)
    covariates: list[str] | None = None
    coefficients: np.ndarray | None = None
    coefficient_covariance: np.ndarray | None = None

    _repr_fields: ClassVar[tuple[str, ...]] = ("n_battles", "n_clusters", "ties", "method")

    def _fields(self) -> tuple[str, ...]:
        return tuple(name for name in Result._fields(self) if name != "sandwich_parts")

    def _index(self, name: str) -> int:
        try:
            return self.models.index(name)
        except ValueError:
            shown = ", ".join(map(repr, self.models[:8]))
            msg = f"no model {name!r}; models: {shown}"
            raise KeyError(msg) from None

    def contrast_se(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Standard errors of theta_i - theta_j for arrays of model indices (NaN where not estimable:
        a separated model, too few clusters, or a direction the cluster meat does not see).
        """
        i, j = np.asarray(i, dtype=np.intp), np.asarray(j, dtype=np.intp)
        c = self.covariance
        var = c[i, i] + c[j, j] - 2.0 * c[i, j]
        if self.not_estimable is not None:
            return np.full(var.shape, np.nan)
        if self.sandwich_parts is not None:
            var = np.where(self.sandwich_parts.pair_estimable(i, j), var, np.nan)
        return np.sqrt(np.where(np.isnan(var), np.nan, np.maximum(var, 0.0)))

    def difference_se(self, a: str, b: str) -> float:
        """Standard error of theta_a - theta_b (NaN when not estimable)."""
        i, j = self._index(a), self._index(b)
        return float(self.contrast_se(np.array([i]), np.array([j]))[0])

    @public
    def difference_ci(self, a: str, b: str, confidence_level: float | None = None) -> ConfidenceInterval:
        """Interval of theta_a - theta_b: anchor-free.

        Wald from the sandwich covariance (normal; Student t on clusters - 1 degrees of freedom
        with clusters); with ``method="bootstrap"`` the percentile interval of the refits'
        differences. NaN when the difference is not estimable.
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        i, j = self._index(a), self._index(b)
        diff = float(self.ratings[i] - self.ratings[j])
        if self.replicates is not None and math.isfinite(diff):
            tail = (1.0 - level) / 2.0
            lo, hi = np.quantile(self.replicates[:, i] - self.replicates[:, j], [tail, 1.0 - tail])
            return ConfidenceInterval(float(lo), float(hi))
        half = float(interval_half_width(self.difference_se(a, b), level, "two-sided", self.df))
        return ConfidenceInterval(diff - half, diff + half)

    def difference_pvalue(self, a: str, b: str) -> float:
        """Two-sided Wald p-value of theta_a = theta_b (t on clusters - 1 df with clusters; NaN when
        not estimable).
        """
        se = self.difference_se(a, b)
        diff = float(self.ratings[self._index(a)] - self.ratings[self._index(b)])
        if not (math.isfinite(se) and math.isfinite(diff)):
            return math.nan
        if se == 0.0:
            return 1.0 if diff == 0.0 else 0.0
        return float(t_pvalue(diff / se, self.df))

    @public
    def confidence_interval(self, confidence_level: float | None = None, *, a: str | None = None,
                            b: str | None = None) -> ConfidenceInterval:
        """The interval of the rating gap theta_a - theta_b (anchor-free; :meth:`difference_ci`), or
        with no pair named the Wald intervals of the centred ratings (:meth:`rating_ci`). The level
        comes first, as on every result; the models are keywords.
        """
        if a is None and b is None:
            return self.rating_ci(confidence_level)
        if a is None or b is None:
            msg = "name both models of the gap (`a` and `b`), or neither for the ratings' intervals."
            raise ValueError(msg)
        return self.difference_ci(a, b, confidence_level)

    @public
    def rating_ci(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Wald intervals of the centred ratings (they depend on the centring; prefer differences)."""
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        se = np.sqrt(np.maximum(np.diag(self.covariance), 0.0))
        if self.not_estimable is not None:
            se = np.full(se.shape, np.nan)
        half = np.asarray(interval_half_width(se, level, "two-sided", self.df))
        return ConfidenceInterval(self.ratings - half, self.ratings + half)

    def elo(self, scale: float = 400.0, base: float = 10.0, anchor: tuple[str, float] | None = None) -> np.ndarray:
        """Ratings on the Elo scale: scale / ln(base) x theta, shifted so that ``anchor`` = (model,
        rating) holds (default: mean 1000 over the models with a finite rating; separated models
        keep their +-inf / NaN).
        """
        elo: np.ndarray = scale / math.log(base) * np.asarray(self.ratings, dtype=float)
        if anchor is None:
            finite = np.isfinite(elo)
            shift = 1000.0 - (float(elo[finite].mean()) if finite.any() else 0.0)
            return np.asarray(elo + shift, dtype=float)
        name, value = anchor
        return np.asarray(elo - elo[self._index(name)] + value, dtype=float)

    def strengths(self) -> np.ndarray:
        """exp(theta) normalised to sum 1 (the scale of many published Bradley-Terry scores)."""
        if self.separated:
            return np.full(len(self.models), np.nan)
        w = np.exp(self.ratings - self.ratings.max())
        return np.asarray(w / w.sum(), dtype=float)

    def pairwise(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All pairs i < j (in ``models`` order): (i, j, difference theta_i - theta_j, its standard error)."""
        i, j = np.triu_indices(len(self.models), k=1)
        with np.errstate(invalid="ignore"):
            diff = self.ratings[i] - self.ratings[j]
        return i, j, diff, self.contrast_se(i, j)

    @public
    def simultaneous_critical_value(self, confidence_level: float | None = None, *, n_draws: int = 20000,
                                    rng: SeedLike = None) -> float:
        """The max-t critical value c: P(max over all pairs |d_ij - delta_ij| / se_ij <= c) = level.

        From the refits with ``method="bootstrap"`` (studentised by the bootstrap standard errors),
        else from ``n_draws`` draws of N(0, covariance) -- a multivariate t on clusters - 1 degrees
        of freedom with clusters -- (fewer, down to 2,000, when there are more than 20,000 pairs:
        the work is bounded by 4e8 pair-draws). Pairs whose difference is not estimable are left out.
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        i, j, diff, se = self.pairwise()
        keep = np.isfinite(se) & np.isfinite(diff)
        i, j, se = i[keep], j[keep], se[keep]
        if i.size == 0:
            return math.nan
        safe = np.where(se > 0, se, np.inf)
        if self.replicates is not None:
            dev = self.replicates - self.ratings
            stat = np.max(np.abs(dev[:, i] - dev[:, j]) / safe, axis=1)
            return float(np.quantile(stat, level))
        from .._kernel.ranks import gaussian_max_abs

        return gaussian_max_abs(np.nan_to_num(self.covariance, nan=0.0), i, j, se, level, as_rng(rng),
                                n_draws=n_draws, df=self.df)

    @public
    def rank_intervals(self, *, method: str = "max-t", confidence_level: float | None = None,
                       rng: SeedLike = None) -> Any:
        """Simultaneous rank intervals and tie groups (pandas, best model first).

        A pair is *separated* when its difference is resolved simultaneously over all pairs:
        ``"max-t"`` (|d| / se above the max-t critical value; exact family-wise level under the
        normal approximation) or ``"holm"`` (Holm's step-down on the pairwise Wald p-values). A
        model's rank interval runs from 1 + the number of models separated above it to M - the
        number separated below it; the family-wise level of all intervals together is the
        confidence level. Tie groups (``tie_groups``: the numbers of the groups a model is in):
        maximal runs of consecutive ranks holding no separated pair; they may overlap, and a model
        separated from both neighbours is in none. A pair whose difference is not estimable is never
        separated.
        """
        import pandas as pd

        from ..multiplicity import adjust_pvalues
        from ..resolution import tie_groups_and_rank_intervals

        check_option(method, "method", ("max-t", "holm"))
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        order = rank_order(self.ratings)
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(order.size)
        i, j, diff, se = self.pairwise()
        ok = np.isfinite(se) & np.isfinite(diff)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(ok & (se > 0), np.abs(diff) / np.where(se > 0, se, 1.0), np.where(ok & (diff != 0), np.inf,
                                                                                         0.0))
        if method == "max-t":
            crit = self.simultaneous_critical_value(level, rng=rng)
            separated = ok & (z > crit) if math.isfinite(crit) else np.zeros(z.shape, dtype=bool)
        else:
            p = np.where(ok, np.asarray(t_pvalue(z, self.df)), 1.0)
            separated = ok & (adjust_pvalues(p, method="holm") <= 1.0 - level)
        ri, rj = rank_of[i], rank_of[j]
        pair_idx = np.stack([np.minimum(ri, rj), np.maximum(ri, rj)], axis=1)
        groups, intervals = tie_groups_and_rank_intervals(order.size, pair_idx, separated, complete=True)
        group_of: dict[int, list[int]] = {g: [] for g in range(order.size)}
        for k, grp in enumerate(groups):
            for g in grp:
                group_of[g].append(k + 1)
        return pd.DataFrame({
            "model": [self.models[k] for k in order], "rating": self.ratings[order],
            "rank": np.arange(1, order.size + 1), "rank_ci_low": [intervals[r][0] for r in range(order.size)],
            "rank_ci_high": [intervals[r][1] for r in range(order.size)],
            "tie_groups": [group_of[r] for r in range(order.size)]})

    def to_frame(self) -> Any:
        """One row per model, best first: rating, standard error, Elo, strength (pandas)."""
        import pandas as pd

        se = np.sqrt(np.maximum(np.diag(self.covariance), 0.0))
        if self.not_estimable is not None:
            se = np.full(se.shape, np.nan)
        order = rank_order(self.ratings)
        frame = pd.DataFrame({"model": self.models, "rating": self.ratings, "se": se, "elo": self.elo(),
                              "strength": self.strengths()})
        return frame.iloc[order].reset_index(drop=True)


def rank_order(ratings: np.ndarray) -> np.ndarray:
    """Models best first: +inf first, NaN (not comparable) last, ties by name order."""
    key = np.where(np.isnan(ratings), -np.inf, ratings)
    nan_last = np.isnan(ratings).astype(int)
    return np.lexsort((np.arange(ratings.size), -key, nan_last))


def sandwich_result(models: list[str], n_battles: int, theta: np.ndarray, tau: float | None,  # noqa: PLR0913
                    sw: Sandwich, confidence_level: float) -> BradleyTerryResult:
    """The result of a fit with its kernel sandwich (NaN covariance and one warning when the clusters
    cannot estimate it).
    """
    m = len(models)
    cov = sw.covariance[:m, :m]
    if sw.not_estimable is not None:
        cov = np.full((m, m), np.nan)
        warn(f"Bradley-Terry: {sw.not_estimable}; every interval and test of the ratings is NaN (fit without "
             "`cluster`, or with coarser clusters that are more numerous than the models)", DegenerateDataWarning)
    return BradleyTerryResult(models=models, ratings=theta, covariance=cov, n_battles=n_battles,
                              n_clusters=sw.n_clusters, confidence_level=confidence_level,
                              ties="half" if tau is None else "davidson",
                              tie_parameter=None if tau is None else math.exp(tau), method="sandwich", df=sw.df,
                              not_estimable=sw.not_estimable, sandwich_parts=sw)


def separation(cells: Cells, models: list[str]) -> tuple[np.ndarray, np.ndarray, dict[str, str]]:
    """The comparison digraph (i -> j when i beat or tied j at least once): a DataError when it is in
    pieces; else (main, ratings of the others: +inf / -inf / NaN, {model: why}) where ``main`` marks
    the largest strongly connected group (every model there both wins and loses within it).
    """
    from scipy import sparse
    from scipy.sparse import csgraph

    m = cells.m
    won, lost, tied = cells.counts.T
    src = np.r_[cells.pi[(won > 0) | (tied > 0)], cells.pj[(lost > 0) | (tied > 0)]]
    dst = np.r_[cells.pj[(won > 0) | (tied > 0)], cells.pi[(lost > 0) | (tied > 0)]]
    graph = sparse.csr_matrix((np.ones(src.size), (src, dst)), shape=(m, m))
    n_weak, weak = csgraph.connected_components(graph, directed=True, connection="weak")
    if n_weak > 1:
        parts = [[models[k] for k in np.nonzero(weak == c)[0]] for c in range(n_weak)]
        shown = "; ".join("{" + ", ".join(map(repr, p[:4])) + (", ..." if len(p) > 4 else "") + "}" for p in parts[:4])
        msg = (f"the battles fall into {n_weak} groups of models that never met each other ({shown}"
               f"{'; ...' if n_weak > 4 else ''}): Bradley-Terry cannot compare across them; rate each group alone")
        raise DataError(msg)
    n_strong, strong = csgraph.connected_components(graph, directed=True, connection="strong")
    main = np.ones(m, dtype=bool)
    outside = np.zeros(m)
    if n_strong == 1:
        return main, outside, {}
    sizes = np.bincount(strong, minlength=n_strong)
    main = strong == int(np.argmax(sizes))
    below = reached(graph, main)  # beaten, directly or through others, by the main group
    above = reached(graph.T.tocsr(), main)  # beating the main group
    separated: dict[str, str] = {}
    for k in np.nonzero(~main)[0]:
        if below[k]:
            outside[k], separated[models[k]] = -np.inf, "never wins against the rest"
        elif above[k]:
            outside[k], separated[models[k]] = np.inf, "never loses to the rest"
        else:
            outside[k], separated[models[k]] = np.nan, "not comparable with the rest"
    shown = ", ".join(f"{name!r} ({why})" for name, why in list(separated.items())[:5])
    warn(f"Bradley-Terry has no finite rating for {len(separated)} model(s): {shown}"
                  f"{', ...' if len(separated) > 5 else ''}; their ratings are +-inf (or NaN), their gaps are not "
                  "estimable and never reported as resolved", SeparationWarning)
    return main, outside, separated


def reached(graph: Any, start: np.ndarray) -> np.ndarray:
    """Models reachable along the edges of ``graph`` from any model in ``start``."""
    from scipy import sparse
    from scipy.sparse import csgraph

    m = graph.shape[0]
    idx = np.nonzero(start)[0]
    edges = graph.tocoo()
    rows = np.r_[edges.row, np.full(idx.size, m)]  # node m: a source pointing at every start model
    cols = np.r_[edges.col, idx]
    padded = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m + 1, m + 1))
    out = np.zeros(m + 1, dtype=bool)
    out[csgraph.breadth_first_order(padded, m, directed=True, return_predecessors=False)] = True
    return out[:m]


def with_separated(part: BradleyTerryResult, models: list[str], n_battles: int, main: np.ndarray,  # noqa: PLR0913
                   outside: np.ndarray, separated: dict[str, str]) -> BradleyTerryResult:
    """The fit of the main group placed among every model: separated ones at +-inf / NaN, NaN covariance."""
    m = len(models)
    ratings = outside.copy()
    ratings[main] = part.ratings
    cov = np.full((m, m), np.nan)
    idx = np.nonzero(main)[0]
    cov[np.ix_(idx, idx)] = part.covariance
    reps = None
    if part.replicates is not None:
        reps = np.tile(outside, (part.replicates.shape[0], 1))
        reps[:, main] = part.replicates
    sw = part.sandwich_parts
    if sw is not None:  # the kernel's sandwich on the main group, embedded: contrasts with others are NaN anyway
        from .._kernel.variance import Sandwich

        size = sw.bread.shape[0] + (m - int(main.sum()))
        pos = np.r_[idx, np.arange(m, m + sw.bread.shape[0] - idx.size)]  # ratings of main, then tau
        bread = np.zeros((size, size))
        bread[np.ix_(pos, pos)] = sw.bread
        blind = np.zeros((size, sw.blind.shape[1]))
        blind[pos] = sw.blind
        sw = Sandwich(covariance=np.zeros((size, size)), bread=bread, df=sw.df, n_clusters=sw.n_clusters,
                      not_estimable=sw.not_estimable, blind=blind)
    return BradleyTerryResult(models=models, ratings=ratings, covariance=cov, n_battles=n_battles,
                              n_clusters=part.n_clusters, confidence_level=part.confidence_level, ties=part.ties,
                              tie_parameter=part.tie_parameter, method=part.method, replicates=reps, df=part.df,
                              not_estimable=part.not_estimable, separated=separated, sandwich_parts=sw)
