r"""Anytime-valid monitoring of a live arena: every rating gap, however often it is looked at.

An arena re-fits its Bradley-Terry ratings as votes arrive and is read after every batch. The
fixed-n Wald interval of a gap, read at every look, is not a 95% interval any more: with a look
per batch the chance that some look shows a gap that is not there grows with the looks. The
:class:`ArenaMonitor` keeps, for every pair of models, a *confidence sequence* -- intervals that
cover the true gap at every look simultaneously -- and the matching e-process, and decides a pair
when its sequence leaves out 0. Two constructions (``method``):

- ``"asymptotic"`` (default): the asymptotic confidence sequence of an M-estimator
  (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas 2024, the Gaussian-mixture form of their
  Theorem 2.2, as in their code's ``std_conjmix_margin``). At each look the Bradley-Terry
  maximum-likelihood fit of *all* battles so far (the whole comparison graph: a gap borrows
  strength from every path between the two models), the sandwich standard error
  :math:`\widehat{se}_t` of each gap (per battle, or per cluster with ``cluster``), and

  .. math:: \hat\delta_t \pm \widehat{se}_t\,\frac{B_\alpha(t)}{\sqrt t},\qquad
            B_\alpha(t) = \sqrt{(t + \rho)\log\frac{t + \rho}{\rho\,\alpha^2}},

  :math:`t` the battles so far (the clusters with ``cluster``: the independent units).
  :math:`\widehat{se}_t\sqrt t` is the estimated standard deviation :math:`\hat\sigma_t` of the
  gap's influence function, so this is the paper's
  :math:`\hat\delta_t \pm \hat\sigma_t\sqrt{2(t\rho'^2 + 1)/(t^2\rho'^2)\,\log(\sqrt{t\rho'^2+1}/\alpha)}`
  with :math:`\rho = 1/\rho'^2` (:func:`llm_power.sequential.normal_mixture_boundary` in time
  :math:`t`). :math:`\rho = r^*\,` ``tuned_for``, :math:`r^*` the ratio that makes the boundary
  tightest at ``tuned_for`` units at the pair's level (alpha; alpha / K_max with Bonferroni;
  :func:`llm_power.anytime_critical_value`: 3.04 standard errors at 0.05 instead of 1.96). The
  pair's e-value is the normal mixture of the same standardised sum :math:`S = \sqrt t\,\hat\delta_t / \widehat{se}_t`,
  :math:`E_t = \sqrt{\rho/(t+\rho)}\,\exp(S^2 / (2(t+\rho)))`, so :math:`E_t \ge 1/\alpha'`
  exactly when the interval at :math:`\alpha'` leaves out 0 (one verdict). Valid as battles
  grow (a CLT-type, time-uniform guarantee), for independent battles (or independent clusters)
  drawn from a sampling design that does not change -- any uneven share of battles per pair.
- ``"betting"``: exact (nonasymptotic) betting confidence sequences (Waudby-Smith & Ramdas 2024;
  :mod:`llm_power._kernel.betting`) of each pair's *direct* battles only: the outcomes
  :math:`y \in \{0, \tfrac12, 1\}` (ties half) of the pair's battles bound the pair's win share,
  whose logit is the Bradley-Terry gap (monotone: the sequence maps exactly). Valid at any
  stopping time for independent battles whatever their number; pairs that never met directly stay
  undecided, and the bounds are wider than the asymptotic ones. Clustered votes break it (refused).

Over the pairs (``correction``):

- ``"e-bh"`` (default): e-BH (Wang & Ramdas 2022; :func:`llm_power.e_bh`) on the pairs' current
  e-values at false discovery rate ``alpha``, read at any look; each interval is the e-BY interval
  at ``alpha x R / K`` (R discoveries among K pairs; Xu, Wang & Ramdas 2022), which leaves out 0
  exactly for the discoveries. Not sticky: a discovery can be withdrawn at a later look (the
  ``history`` records both). When a model joins, K grows: the guarantee holds at every look for
  the family of pairs the arena has then.
- ``"bonferroni"``: every pair at ``alpha / K_max``, ``K_max`` the pairs of ``max_models`` models,
  declared in advance (by default the models of the first look; adding more is refused). Then the
  chance that *any* pair's sequence *ever* misses its gap is at most ``alpha``, also across models
  that join later (their pairs were paid for in advance). Each interval is the running
  intersection of the pair's intervals, so verdicts are sticky.
- ``None``: every pair at ``alpha`` (no control over the pairs), sticky.

References
----------
.. [1] Waudby-Smith, I., Arbour, D., Sinha, R., Kennedy, E. H. & Ramdas, A. (2024). Time-uniform
   central limit theory and asymptotic confidence sequences. Annals of Statistics 52, 2613-2640.
.. [2] Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
   betting. JRSS B 86, 1-27.
.. [3] Wang, R. & Ramdas, A. (2022). False discovery rate control with e-values. JRSS B 84, 822-852.
.. [4] Xu, Z., Wang, R. & Ramdas, A. (2022). Post-selection inference for e-value based confidence
   intervals. arXiv:2203.12572.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._core.clusters import code_labels
from .._core.errors import DataError, DegenerateDataWarning, SeparationWarning
from .._core.files import MB, check_size
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.validation import check_int_at_least, check_open_unit, check_option
from .._kernel.betting_pairs import agree_intervals
from .._kernel.quantiles import mixture_tuning
from ._battles import ELO, Battles, check_model_count, encode_battles

__all__ = ["ArenaMonitor", "ArenaMonitorResult", "monitor_battles"]

#: how an ArenaMonitor builds each pair's confidence sequence
ARENA_MONITOR_METHODS = ("asymptotic", "betting")
#: how it controls its errors over the pairs (or None)
ARENA_MONITOR_CORRECTIONS = ("bonferroni", "e-bh")

#: the numbers an ArenaMonitor keeps per pair besides a betting grid
_PAIR_BYTES = 256
#: the numbers it keeps per battle (two model codes, the outcome, the cluster code)
_BATTLE_BYTES = 8 + 8 + 1 + 8
#: candidate gaps of a pair's betting sequence (e-BH reads every candidate's capital: a coarser grid)
_GRID = {"e-bh": 501, "bonferroni": 2001, None: 2001}
#: verdict codes
_VERDICTS = {0: "undecided", 1: "A better", -1: "B better"}


@dataclass(frozen=True, repr=False)
class ArenaMonitorResult(Result):
    """The state of an :class:`ArenaMonitor` after a look.

    Attributes
    ----------
    looks : int
        Looks so far (one per :meth:`ArenaMonitor.update` with battles).
    n_battles : int
        Battles so far.
    n_clusters : int or None
        Clusters so far (with ``cluster``): the time of the asymptotic sequences.
    models : list of str
        Ranked by the current Bradley-Terry rating, best first (models the fit cannot place last).
    ratings, elo : list of float
        Log-strengths (centred) and Elo points (mean 1000) in that order (NaN: not placed).
    model_battles : list of int
        Battles of each model.
    status : list of str
        ``"provisional"`` or ``"established"``: a model is provisional while it has fewer than
        ``min_battles`` battles, or when it joined after the first look and a gap to a model ranked
        next to it is still undecided (its place is not yet known).
    columns : dict of ndarray
        One entry per pair, in the order the pairs joined (``model_a`` joined first): ``model_a``,
        ``model_b``, ``estimate`` (theta_a - theta_b in log-strength; with ``method="betting"``
        the logit of model_a's direct win share), ``estimate_elo``, ``se`` (the sandwich standard
        error; NaN with betting), ``ci_low``, ``ci_high`` (the anytime interval at ``level``;
        infinite before the pair can be placed), ``elo_ci_low``, ``elo_ci_high``, ``e_value``,
        ``level`` (the level the interval is at), ``verdict`` ("A better", "B better",
        "undecided"), ``decided`` (bool), ``decided_at`` (battles when first decided; 0: not) and
        ``battles`` (direct battles of the pair).
    decided : list of tuple
        (winner, loser) of the decided pairs.
    alpha : float
    correction : str or None
    method : str
    history : list of dict
        Every change of a verdict: ``look``, ``n_battles``, ``winner``, ``loser``, ``event``
        (``"decided"``, or ``"withdrawn"``: an e-BH discovery lost at a later look).
    """

    looks: int
    n_battles: int
    n_clusters: int | None
    models: list[str]
    ratings: list[float]
    elo: list[float]
    model_battles: list[int]
    status: list[str]
    columns: dict[str, Any]
    decided: list[tuple[str, str]]
    alpha: float
    correction: str | None
    method: str
    history: list[dict[str, Any]] = field(default_factory=list)

    _repr_fields: ClassVar[tuple[str, ...]] = ("looks", "n_battles", "decided")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Arrays, one per pair (in ``columns`` order): each gap's anytime interval in Elo points at
        the level of the ``level`` column (``elo_ci_low``, ``elo_ci_high``).
        """
        return stored_interval(self.columns["elo_ci_low"], self.columns["elo_ci_high"], None, confidence_level,
                               recompute="create the ArenaMonitor with alpha=1 - confidence_level")

    def to_frame(self) -> Any:
        """One row per pair (pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns)

    def summary(self) -> str:
        """The ranking with each model's status, and the decided pairs."""
        lines = [f"Arena monitor ({self.method}, {self.correction or 'no correction'}, alpha={self.alpha:g}): "
                 f"{self.looks} looks, {self.n_battles:,} battles, {len(self.decided)} of "
                 f"{self.columns['estimate'].size} pairs decided"]
        lines += [f"  {k + 1:>3}. {name}  {elo:8.1f}  {n:>8,} battles  {st}" for k, (name, elo, n, st)
                  in enumerate(zip(self.models, self.elo, self.model_battles, self.status, strict=True))]
        return "\n".join(lines)


class ArenaMonitor:
    r"""Anytime-valid monitoring of every rating gap of a live arena, as battles arrive in batches.

    Parameters
    ----------
    models : sequence of str, optional
        The models there from the start; models met in a batch (or :meth:`add_model`) join later.
    alpha : float, default 0.05
        False discovery rate (e-BH), family-wise level (Bonferroni), or each pair's level (None):
        the chance, over all looks together, that a sequence misses its gap.
    correction : {"e-bh", "bonferroni", None}, default "e-bh"
        Over the pairs (see :mod:`llm_power.preferences._monitor`).
    method : {"asymptotic", "betting"}, default "asymptotic"
        The asymptotic confidence sequence of the Bradley-Terry fit of all battles, or exact betting
        sequences of each pair's direct battles.
    cluster : str, optional
        The column of the batches that labels the prompt (or voter) of each battle: the sandwich
        sums scores within clusters (CR1) and time counts clusters. ``method="asymptotic"`` only.
        A cluster's battles may arrive over several batches.
    tuned_for : int, default 10000
        Battles (clusters with ``cluster``) at which the sequences are tightest (the mixing
        precision of the asymptotic boundary, the betting horizon); validity does not depend on it.
    max_models : int, optional
        Bonferroni: the most models the arena will hold; every pair is monitored at
        ``alpha / (max_models (max_models - 1) / 2)`` from the start, so models may join up to it.
        By default the models of the first look (no model may join later).
    min_battles : int, default 50
        A model with fewer battles is provisional.

    Notes
    -----
    A look refits Bradley-Terry on the battles' outcome cells (three per ordered pair of models),
    so its cost grows with the models, not the battles, except for the cluster sandwich (one sparse
    pass over the battles). The battles are kept (25 bytes each). The pairs' state and the battles
    are sized before they are allocated: more pairs than ``LLM_POWER_MAX_MONITOR_PAIRS`` or a state
    larger than ``LLM_POWER_MAX_MONITOR_MB`` is refused with the variable that raises the limit.

    A look at which the battles do not connect every model fits the largest connected group; gaps
    with a model outside it (or a model that never wins or never loses: no finite rating) have an
    e-value of 1 and an unbounded interval at that look. With ``cluster``, so do all gaps while the
    clustered covariance is not estimable (no more clusters than models); the sequences are
    asymptotic in the clusters, so read the first looks of a few dozen clusters as approximate
    (the monitor does not warn at every look).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from llm_power import ArenaMonitor
    >>> rng = np.random.default_rng(0)
    >>> skill = {"a": 0.6, "b": 0.0, "c": -0.6}
    >>> def batch(n):
    ...     a, b = (rng.choice(list(skill), size=(2, n * 2)))
    ...     a, b = a[a != b][:n], b[a != b][:n]
    ...     p = 1 / (1 + np.exp(-(np.vectorize(skill.get)(a) - np.vectorize(skill.get)(b))))
    ...     return pd.DataFrame({"model_a": a, "model_b": b,
    ...                          "winner": np.where(rng.random(a.size) < p, "model_a", "model_b")})
    >>> arena = ArenaMonitor(["a", "b", "c"], tuned_for=3000)
    >>> for _ in range(10):
    ...     state = arena.update(batch(300))
    >>> state.models, sorted(state.decided)
    (['a', 'b', 'c'], [('a', 'b'), ('a', 'c'), ('b', 'c')])
    """

    @public
    def __init__(self, models: Any = None, *, alpha: float = 0.05, correction: str | None = "e-bh",  # noqa: PLR0913
                 method: str = "asymptotic", cluster: str | None = None, tuned_for: int = 10_000,
                 max_models: int | None = None, min_battles: int = 50) -> None:
        self.alpha = check_open_unit(alpha, "alpha")
        if correction is not None:
            check_option(correction, "correction", ARENA_MONITOR_CORRECTIONS)
        self.correction = correction
        self.method = check_option(method, "method", ARENA_MONITOR_METHODS)
        if cluster is not None and not isinstance(cluster, str):
            msg = f"`cluster` must be the name of a column of the battles; got {cluster!r}."
            raise TypeError(msg)
        if cluster is not None and method == "betting":
            msg = ("`cluster` needs method='asymptotic': the betting sequences assume independent battles, "
                   "which votes sharing a prompt are not.")
            raise ValueError(msg)
        self.cluster = cluster
        self.tuned_for = check_int_at_least(tuned_for, "tuned_for", 1)
        self.max_models = None if max_models is None else check_int_at_least(max_models, "max_models", 2)
        self._declared = max_models is not None
        self.min_battles = check_int_at_least(min_battles, "min_battles", 0)
        self.models: list[str] = []
        self._index: dict[str, int] = {}
        self._joined: list[int] = []
        self.looks = 0
        self.history: list[dict[str, Any]] = []
        # battles: chunks of (model codes, outcome codes 0 a / 1 b / 2 tie, cluster codes)
        self._chunks: list[tuple[np.ndarray, ...]] = []
        self._n = 0
        self._cluster_ids: dict[Any, int] = {}
        # pairs (i < j in joining order)
        self._pi = np.zeros(0, dtype=np.int64)
        self._pj = np.zeros(0, dtype=np.int64)
        self._low = np.zeros(0)  # running intersections (sticky corrections)
        self._high = np.zeros(0)
        self._decision = np.zeros(0, dtype=np.int8)
        self._decided_at = np.zeros(0, dtype=np.int64)
        self._seqs: list[Any] = []
        self._rho: float | None = None
        self._pair_level: float | None = None
        self._last: ArenaMonitorResult | None = None
        if models is not None:
            names = [str(m) for m in models]
            if len(set(names)) != len(names):
                msg = "`models` must name distinct models."
                raise ValueError(msg)
            self._check_sizes(len(names))
            for name in names:
                self._add(name)

    # -- sizes ----------------------------------------------------------------------------------
    def _check_sizes(self, models: int, battles: int = 0) -> None:
        """Refuse, before anything is allocated, more models than a fit takes, more pairs than
        ``LLM_POWER_MAX_MONITOR_PAIRS``, or a state larger than ``LLM_POWER_MAX_MONITOR_MB``.
        """
        if self.max_models is not None and models > self.max_models:
            msg = (f"{models} models: more than `max_models`={self.max_models}, whose pairs the Bonferroni "
                   "levels were set for; create the monitor with a larger max_models.")
            raise ValueError(msg)
        check_model_count(models)
        pairs = models * (models - 1) // 2
        check_size(pairs, "LLM_POWER_MAX_MONITOR_PAIRS", f"{models:,} models are pairs to monitor at every look")
        per = _PAIR_BYTES + (34 * _GRID[self.correction] if self.method == "betting" else 0)
        check_size(math.ceil((pairs * per + (self._n + battles) * _BATTLE_BYTES) / MB), "LLM_POWER_MAX_MONITOR_MB",
                   f"the state of {models:,} models' {pairs:,} pairs ({per:,} bytes each with method="
                   f"{self.method!r}) and {self._n + battles:,} battles, in MB")

    def add_model(self, name: Any) -> None:
        """A model joins the arena: its pairs start now (their sequences and e-processes begin with
        their first battles, so they stay valid). With Bonferroni it must fit within ``max_models``.
        """
        name = str(name)
        if name in self._index:
            msg = f"model {name!r} is already in the arena."
            raise ValueError(msg)
        self._check_growth(len(self.models) + 1)
        self._check_sizes(len(self.models) + 1)
        self._add(name)

    def _check_growth(self, models: int) -> None:
        if self.correction == "bonferroni" and self.looks > 0 and not self._declared:
            msg = (f"a model joins after the first look ({models} models): with correction='bonferroni' declare "
                   "`max_models` when creating the monitor, so the levels are set for its pairs in advance.")
            raise ValueError(msg)

    def _add(self, name: str) -> None:
        k = len(self.models)
        self.models.append(name)
        self._index[name] = k
        self._joined.append(self.looks)
        new = np.arange(k, dtype=np.int64)
        self._pi = np.r_[self._pi, new]
        self._pj = np.r_[self._pj, np.full(k, k, dtype=np.int64)]
        self._low = np.r_[self._low, np.full(k, -math.inf)]
        self._high = np.r_[self._high, np.full(k, math.inf)]
        self._decision = np.r_[self._decision, np.zeros(k, dtype=np.int8)]
        self._decided_at = np.r_[self._decided_at, np.zeros(k, dtype=np.int64)]
        self._seqs += [None] * k

    def _levels(self) -> float:
        """Each pair's level (fixed at the first look), and the mixing precision tuned for it."""
        if self._pair_level is None:
            k_max = self.max_models if self.max_models is not None else len(self.models)
            if self.correction == "bonferroni":
                self.max_models = k_max
                self._pair_level = self.alpha / max(k_max * (k_max - 1) // 2, 1)
            else:
                self._pair_level = self.alpha
            _, r = mixture_tuning(self._pair_level)
            self._rho = r * self.tuned_for
        return self._pair_level

    # -- adding battles -------------------------------------------------------------------------
    def _battles(self) -> tuple[np.ndarray, ...]:
        if len(self._chunks) > 1:
            self._chunks = [tuple(np.concatenate(c) for c in zip(*self._chunks, strict=True))]
        if not self._chunks:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0, dtype=np.int8), empty
        return self._chunks[0]

    def _cluster_codes(self, battles: Any, n: int) -> np.ndarray:
        """Global codes of the batch's cluster labels (a label seen in an earlier batch keeps its code)."""
        import pandas as pd

        try:
            col = battles[self.cluster]
        except (KeyError, TypeError, IndexError):
            msg = f"cluster={self.cluster!r}: the battles have no column {self.cluster!r}"
            raise DataError(msg) from None
        code_labels(col, n, name=str(self.cluster), unit="battle")  # a missing label is an error
        local, uniq = pd.factorize(pd.Series(np.asarray(col, dtype=object)), use_na_sentinel=False)
        ids = self._cluster_ids
        table = np.array([ids.setdefault(u, len(ids)) for u in uniq.tolist()], dtype=np.int64)
        return table[np.asarray(local, dtype=np.intp)]

    @staticmethod
    def _rows(battles: Any) -> int:
        try:
            return len(battles["model_a"])
        except (KeyError, TypeError, IndexError):
            return -1

    def update(self, battles: Any) -> ArenaMonitorResult:
        """Add a batch of battles (a DataFrame or mapping with ``model_a``, ``model_b``, ``winner``
        -- model_a | model_b | tie or a model's name -- and the ``cluster`` column) and look.
        A batch with no battles adds no look.
        """
        if self._rows(battles) == 0:
            return self.state()
        enc = encode_battles(battles)
        groups = None if self.cluster is None else self._cluster_codes(battles, enc.n)
        new = [m for m in enc.models if m not in self._index]
        if new:
            self._check_growth(len(self.models) + len(new))
        self._check_sizes(len(self.models) + len(new), enc.n)
        for name in new:
            self._add(name)
        if self.looks == 0:
            self._levels()
        code = np.array([self._index[m] for m in enc.models], dtype=np.int64)
        ia, ib = code[enc.ia], code[enc.ib]
        outcome = enc.outcome.astype(np.int8)
        self._chunks.append((ia, ib, outcome, np.zeros(ia.size, dtype=np.int64) if groups is None else groups))
        self._n += int(ia.size)
        if self.method == "betting":
            self._bet(ia, ib, outcome)
        self.looks += 1
        self._last = self._look()
        return self._last

    def _pair_ids(self, ia: np.ndarray, ib: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each battle's pair (index into the pair arrays) and whether model_a is the pair's first model."""
        lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
        return hi * (hi - 1) // 2 + lo, ia == lo  # pairs are added model by model: (0,1), (0,2), (1,2), ...

    def _bet(self, ia: np.ndarray, ib: np.ndarray, outcome: np.ndarray) -> None:
        """Each pair's direct battles, in order, into its betting sequence (d = 2y - 1 in [-1, 1])."""
        from .._kernel.betting import BettingSequence

        pair, first = self._pair_ids(ia, ib)
        y_a = np.array([1.0, 0.0, 0.5])[outcome]
        d = 2.0 * np.where(first, y_a, 1.0 - y_a) - 1.0
        order = np.argsort(pair, kind="stable")
        pair, d = pair[order], d[order]
        starts = np.r_[0, np.flatnonzero(np.diff(pair)) + 1]
        ends = np.r_[starts[1:], pair.size]
        level = self._levels()
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            p = int(pair[s])
            seq = self._seqs[p]
            if seq is None:
                seq = self._seqs[p] = BettingSequence(-1.0, 1.0, alpha_lower=level / 2, alpha_upper=level / 2,
                                                      horizon=self.tuned_for, null=0.0,
                                                      track_all=self.correction == "e-bh",
                                                      grid=_GRID[self.correction])
            seq.extend(d[s:e])  # its decision is read from its bounds at the look

    # -- a look ---------------------------------------------------------------------------------
    def _fit(self) -> tuple[np.ndarray, np.ndarray, float, int | None]:
        """Ratings of every model (NaN: not placed), the gaps' sandwich standard errors (NaN: not
        estimable), the time t (battles, or clusters) and the clusters.
        """
        from scipy import sparse
        from scipy.sparse import csgraph

        from ._bradley_terry import fit_battles

        k, pairs = len(self.models), self._pi.size
        ratings, se = np.full(k, math.nan), np.full(pairs, math.nan)
        ia, ib, outcome, groups = self._battles()
        graph = sparse.csr_matrix(np.bincount(ia * k + ib, minlength=k * k).reshape(k, k))
        _, comp = csgraph.connected_components(graph, directed=False)
        sizes = np.bincount(comp[ia], minlength=k)
        main = comp == int(np.argmax(sizes))
        keep = main[ia] & main[ib]
        index = np.cumsum(main) - 1
        names = [m for m, ok in zip(self.models, main, strict=True) if ok]
        g = None
        n_clusters = None
        if self.cluster is not None:
            # the codes are 0..G-1 in order of appearance: compacted only when some battles are left out
            g = groups if keep.all() else np.unique(groups[keep], return_inverse=True)[1]
            n_clusters = int(g.max()) + 1 if g.size else 0
        t = float(n_clusters if n_clusters is not None else keep.sum())
        if len(names) < 2:
            return ratings, se, t, n_clusters
        enc = Battles(models=names, ia=index[ia[keep]], ib=index[ib[keep]], outcome=outcome[keep])
        try:
            with warnings.catch_warnings():  # separated models and too few clusters: undecided gaps, not warnings
                warnings.simplefilter("ignore", SeparationWarning)
                warnings.simplefilter("ignore", DegenerateDataWarning)
                fit = fit_battles(enc, g)
        except (DataError, np.linalg.LinAlgError):
            return ratings, se, t, n_clusters
        ratings[main] = fit.ratings
        both = main[self._pi] & main[self._pj]
        se[both] = fit.contrast_se(index[self._pi[both]], index[self._pj[both]])
        return ratings, se, t, n_clusters

    def _asymptotic(self, gap: np.ndarray, se: np.ndarray, t: float) -> tuple[np.ndarray, Any]:
        """The log e-values of the gaps, and the interval half-widths at a level (a function)."""
        rho = float(self._rho or 1.0)
        ok = np.isfinite(se) & (se > 0) & np.isfinite(gap) & (t > 0)
        safe = np.where(ok, se, 1.0)
        s2 = np.where(ok, t * (gap / safe) ** 2, 0.0)  # the standardised sum, squared
        log_e = np.where(ok, 0.5 * math.log(rho / (t + rho)) + s2 / (2.0 * (t + rho)), 0.0)

        def half(level: float) -> np.ndarray:
            b = math.sqrt((t + rho) * math.log((t + rho) / (rho * level * level))) if t > 0 else math.inf
            return np.where(ok, safe * b / math.sqrt(max(t, 1e-300)), math.inf)

        return log_e, half

    def _betting_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
        """Direct estimates, log e-values, which side leads, and the intervals (sticky: the running
        intersection; or at a level: the e-value interval) of the betting sequences.
        """
        pairs = self._pi.size
        est, log_e, ahead = np.full(pairs, math.nan), np.zeros(pairs), np.zeros(pairs, dtype=bool)
        for p, seq in enumerate(self._seqs):
            if seq is None:
                continue
            share = seq.total / seq.n
            est[p] = _logit(share)
            top = max(seq.null_log_up, seq.null_log_down)
            log_e[p] = math.log(0.5) + min(top, 700.0)
            ahead[p] = seq.null_log_up >= seq.null_log_down

        def bounds(level: float | None) -> tuple[np.ndarray, np.ndarray]:
            low, high = np.full(pairs, -math.inf), np.full(pairs, math.inf)
            for p, seq in enumerate(self._seqs):
                if seq is not None:
                    lo, hi = seq.bounds() if level is None else seq.bounds_at(level)
                    low[p], high[p] = _to_gap(lo), _to_gap(hi)
            return low, high

        return est, log_e, ahead, bounds

    def _look(self) -> ArenaMonitorResult:
        level = self._levels()
        ratings, se, t, n_clusters = self._fit()
        gap = ratings[self._pi] - ratings[self._pj]
        pairs = self._pi.size
        if self.method == "asymptotic":
            est = gap
            log_e, half = self._asymptotic(gap, se, t)
            ahead = est > 0
        else:
            est, log_e, ahead, bounds = self._betting_state()
            se = np.full(pairs, math.nan)
        e_value = np.exp(np.minimum(log_e, 700.0))
        before = self._decision.copy()
        if self.correction == "e-bh":
            from ..multiplicity import e_bh

            found = e_bh(e_value, q=self.alpha)
            at = self.alpha * max(int(found.sum()), 1) / max(pairs, 1)
            with np.errstate(invalid="ignore"):
                low, high = (est - half(at), est + half(at)) if self.method == "asymptotic" else bounds(at)
            low, high = agree_intervals(np.where(np.isnan(low), -math.inf, low),
                                        np.where(np.isnan(high), math.inf, high), found, ahead, exact=True)
            self._decision = np.where(found, np.where(ahead, 1, -1), 0).astype(np.int8)
            fresh = (before == 0) & (self._decision != 0)
            self._decided_at = np.where(fresh, self._n, np.where(self._decision != 0, self._decided_at, 0))
            levels = np.full(pairs, at)
        else:
            if self.method == "asymptotic":
                hit = log_e >= math.log(1.0 / level)
                with np.errstate(invalid="ignore"):
                    low, high = est - half(level), est + half(level)
                low, high = agree_intervals(np.where(np.isnan(low), -math.inf, low),
                                            np.where(np.isnan(high), math.inf, high), hit, ahead, exact=True)
                low, high = self._intersect(low, high)
            else:
                low, high = bounds(None)  # the kernel's running intersection, off 0 once the null is rejected
            out = (low > 0) | (high < 0)
            fresh = (self._decision == 0) & out
            self._decision[fresh] = np.where(low[fresh] > 0, 1, -1)
            self._decided_at[fresh] = self._n
            levels = np.full(pairs, level)
        self._record(before)
        return self._result(ratings, est, se, low, high, e_value, levels, n_clusters)

    def _intersect(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The running intersection of each pair's intervals (a gap's sequence, sticky); when the new
        interval misses the old one entirely, the old one's end nearest to it (inside the old one:
        the verdict stands).
        """
        new_low = np.maximum(self._low, low)
        new_high = np.minimum(self._high, high)
        empty = new_low > new_high
        if empty.any():
            point = np.where(low > self._high, self._high, self._low)
            new_low = np.where(empty, point, new_low)
            new_high = np.where(empty, point, new_high)
        self._low, self._high = new_low, new_high
        return new_low.copy(), new_high.copy()

    def _record(self, before: np.ndarray) -> None:
        changed = np.flatnonzero(before != self._decision)
        for p in changed.tolist():
            a, b = self.models[int(self._pi[p])], self.models[int(self._pj[p])]
            side = int(self._decision[p]) or int(before[p])
            winner, loser = (a, b) if side > 0 else (b, a)
            self.history.append({"look": self.looks, "n_battles": self._n, "winner": winner, "loser": loser,
                                 "event": "decided" if self._decision[p] else "withdrawn"})

    def _result(self, ratings: np.ndarray, est: np.ndarray, se: np.ndarray, low: np.ndarray,  # noqa: PLR0913, PLR0917
                high: np.ndarray, e_value: np.ndarray, levels: np.ndarray,
                n_clusters: int | None) -> ArenaMonitorResult:
        k = len(self.models)
        ia, ib, _, _ = self._battles()
        counts = np.bincount(ia, minlength=k) + np.bincount(ib, minlength=k)
        pair, _ = self._pair_ids(ia, ib)
        direct = np.bincount(pair, minlength=self._pi.size)
        order = np.argsort(np.where(np.isnan(ratings), math.inf, -ratings), kind="stable")
        rank = np.empty(k, dtype=np.int64)
        rank[order] = np.arange(k)
        names = np.array(self.models, dtype=object)
        verdict = self._decision
        status = self._status(ratings, order, counts)
        finite = np.isfinite(ratings)
        elo = ELO * ratings + (1000.0 - (float(ELO * ratings[finite].mean()) if finite.any() else 0.0))
        columns = {
            "model_a": names[self._pi].astype(str), "model_b": names[self._pj].astype(str), "estimate": est,
            "estimate_elo": ELO * est, "se": se, "ci_low": low, "ci_high": high, "elo_ci_low": ELO * low,
            "elo_ci_high": ELO * high, "e_value": e_value, "level": levels,
            "verdict": np.array([_VERDICTS[v] for v in verdict.tolist()], dtype=object).astype(str),
            "decided": verdict != 0, "decided_at": self._decided_at.copy(), "battles": direct,
        }
        decided = [(self.models[int(a)], self.models[int(b)]) if v > 0 else (self.models[int(b)], self.models[int(a)])
                   for a, b, v in zip(self._pi.tolist(), self._pj.tolist(), verdict.tolist(), strict=True) if v]
        return ArenaMonitorResult(
            looks=self.looks, n_battles=self._n, n_clusters=n_clusters, models=[self.models[i] for i in order],
            ratings=[float(ratings[i]) for i in order], elo=[float(elo[i]) for i in order],
            model_battles=[int(counts[i]) for i in order], status=[status[i] for i in order], columns=columns,
            decided=decided, alpha=self.alpha, correction=self.correction, method=self.method,
            history=list(self.history))

    def _status(self, ratings: np.ndarray, order: np.ndarray, counts: np.ndarray) -> list[str]:
        """Provisional: fewer than ``min_battles`` battles, no rating, or joined after the first look
        with an undecided gap to a model ranked next to it.
        """
        k = len(self.models)
        out = ["established"] * k
        decided = {(int(a), int(b)) for a, b, v in zip(self._pi, self._pj, self._decision, strict=True) if v}
        placed = [int(i) for i in order if math.isfinite(ratings[i])]
        for pos, i in enumerate(placed):
            if self._joined[i] > 0:
                near = placed[max(pos - 1, 0):pos] + placed[pos + 1:pos + 2]
                if any((min(i, j), max(i, j)) not in decided for j in near):
                    out[i] = "provisional"
        for i in range(k):
            if counts[i] < self.min_battles or not math.isfinite(ratings[i]):
                out[i] = "provisional"
        return out

    def state(self) -> ArenaMonitorResult:
        """The state after the last look (before any: every pair undecided, no ratings)."""
        if self._last is not None:
            return self._last
        pairs = self._pi.size
        k = len(self.models)
        nan = np.full(pairs, math.nan)
        return self._result(np.full(k, math.nan), nan, nan, np.full(pairs, -math.inf), np.full(pairs, math.inf),
                            np.ones(pairs), np.full(pairs, self._pair_level or self.alpha), None)


def _logit(share: float) -> float:
    if share <= 0.0:
        return -math.inf
    if share >= 1.0:
        return math.inf
    return math.log(share / (1.0 - share))


def _to_gap(d: float) -> float:
    """A bound of the mean of d = 2y - 1 as a bound of the gap: logit((1 + d) / 2)."""
    return _logit((1.0 + d) / 2.0)


@public
def monitor_battles(battles: Any, *, batch: int = 1000, order: str | None = None,  # noqa: PLR0913
                    **kwargs: Any) -> ArenaMonitorResult:
    """Replay a battle log through an :class:`ArenaMonitor`, a look after every ``batch`` battles.

    Parameters
    ----------
    battles : DataFrame or mapping
        ``model_a``, ``model_b``, ``winner`` (and the ``cluster`` column).
    batch : int, default 1000
        Battles per look.
    order : str, optional
        A column to sort the battles by first (a timestamp; stable), else the rows' order.
    **kwargs
        The :class:`ArenaMonitor` options. With ``correction="bonferroni"`` and no ``max_models``,
        ``max_models`` is the number of models in the log (every model may join when it first plays).

    Returns
    -------
    ArenaMonitorResult
        The state after the last look; its ``history`` lists every decision and when it was made.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from llm_power import monitor_battles
    >>> rng = np.random.default_rng(1)
    >>> a = rng.choice(["x", "y"], 4000)
    >>> log = pd.DataFrame({"model_a": a, "model_b": np.where(a == "x", "y", "x"),
    ...                     "winner": np.where(rng.random(4000) < np.where(a == "x", 0.6, 0.4), "model_a", "model_b")})
    >>> state = monitor_battles(log, batch=500, tuned_for=4000)
    >>> state.decided, state.history[0]["winner"]
    ([('x', 'y')], 'x')
    """
    import pandas as pd

    batch = check_int_at_least(batch, "batch", 1)
    frame = battles if isinstance(battles, pd.DataFrame) else pd.DataFrame(dict(battles))
    if order is not None:
        if order not in frame.columns:
            msg = f"order={order!r}: the battles have no column {order!r}"
            raise DataError(msg)
        frame = frame.sort_values(order, kind="stable")
    if kwargs.get("correction", "e-bh") == "bonferroni" and kwargs.get("max_models") is None:
        enc = encode_battles(frame)
        kwargs["max_models"] = max(len(enc.models), 2)
    arena = ArenaMonitor(**kwargs)
    state = arena.state()
    for start in range(0, len(frame), batch):
        state = arena.update(frame.iloc[start:start + batch])
    return state
