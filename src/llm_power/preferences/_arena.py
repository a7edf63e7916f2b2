r"""Arena resolution: how many more battles until each displayed rating gap is separated?

The leaderboard-resolution idea carried to pairwise battles. The arena is fitted by
Bradley-Terry (:func:`llm_power.bradley_terry`); for each pair of models ranked next to each other
(or every pair) the rating gap :math:`\hat\delta`, its sandwich standard error and Wald test.
With :math:`N` battles in the whole arena the variance of a gap scales as :math:`V/N`
(:math:`V = N\,\widehat{\mathrm{se}}^2`), *under the observed allocation of battles to pairs and
the observed clustering* (battles per prompt or voter stay as they are). So the battles needed to
separate the pair at level :math:`\alpha` with the given power are

.. math:: N^* = (z_{1-\alpha/2} + z_{\text{power}})^2 \, V / \hat\delta^2,

and :math:`q = N / N^*`; a pair is *resolved* when :math:`q \ge 1` and its test rejects — the same
rule as :func:`llm_power.diagnose`. The regimes stress that verdict like the score report does:
multiplicity (Holm / Bonferroni / BH over the family of pairs), clustering (the cluster-robust
covariance, when ``cluster`` is given) and anytime-valid monitoring of a live arena (the
normal-mixture boundary replaces :math:`z_{1-\alpha/2}`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._core.errors import DataError, SeparationWarning
from .._core.files import limit
from .._core.params import public
from .._core.progress import advance, step
from .._core.results import ConfidenceInterval, RenamedKeys, Result, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_int_at_least, check_option
from .._kernel.quantiles import k_constant, normal_pvalue
from .._kernel.verdict import floor_pvalue
from ._battles import ELO as _ELO
from ._bradley_terry import BradleyTerryResult

#: all-pairs reports with more pairs are refused before allocating (as diagnose's max_pairs)
MAX_PAIRS = "LLM_POWER_MAX_ARENA_PAIRS"  # 200,000 by default

__all__ = ["ArenaDiagnosis", "arena_diagnose"]

ELO = _ELO  # Elo points per unit of log-strength (defined with the battles, read here by the reports)


@dataclass(frozen=True, repr=False)
class ArenaDiagnosis(Result):
    """Result of :func:`arena_diagnose`.

    Attributes
    ----------
    models : list of str
        Ranked, best first.
    ratings : BradleyTerryResult
        The fit whose covariance the verdict uses (cluster-robust with ``cluster``).
    columns : dict of ndarray
        One entry per pair (``model_a`` ranked above ``model_b``): ``rank_a``, ``rank_b``, ``gap``
        and ``gap_elo``, ``se`` (log-strength units), ``elo_ci_low`` / ``elo_ci_high``, ``pvalue``,
        ``battles`` (between the two), ``n_star`` / ``q`` / ``resolved`` (IID), ``estimable`` (False
        for a gap with a separated model: NaN numbers, never resolved); per regime
        ``pvalue_adjusted``, ``alpha_corrected``, ``n_star_corrected``, ``q_corrected``,
        ``resolved_corrected``; with clusters ``se_cluster``, ``pvalue_cluster``, ``cluster_df``,
        ``cluster_elo_ci_low`` / ``cluster_elo_ci_high``, ``n_star_cluster``, ``q_cluster``,
        ``design_effect``, ``resolved_cluster`` and ``cluster_estimable``; ``n_star_anytime``,
        ``q_anytime``, ``resolved_anytime``.
    n_battles : int
    ranks : dict of lists
        The ranked models' ``model``, ``elo`` (mean 1000), ``rank``, simultaneous ``rank_ci_low`` /
        ``rank_ci_high`` (max-t over all pairs, at the confidence level, on the covariance above; None
        when that covariance is not estimable) and
        ``tie_groups`` (per model, the numbers of the statistical ties it is in: maximal runs of
        consecutive ranks holding no resolved pair of the headline regime, ``settings["headline"]``,
        the pairs table's own verdicts; they may overlap); ``best_set`` (the models that
        can be #1: a pair separates two ranks only when it also passes every regime of the pairs
        table it is shown in), ``critical_value`` and ``winner`` (the top model's Elo corrected
        for selection: naive, median-unbiased, conditional and hybrid, Andrews, Kitagawa and
        McCloskey 2024; :func:`~llm_power.winners_curse`).
    settings : dict
        Including ``headline`` (the resolved column of the strictest estimable regime),
        ``cluster_not_estimable`` (why the cluster regime has no number, or None),
        ``separated`` (models without a finite rating) and, with style control, ``covariates``
        and ``weights``.
    style : dict or None
        With ``covariates`` or ``weights``: per covariate (lists in order) ``covariate``,
        ``coefficient`` (log-odds per unit), ``se``, ``ci_low`` / ``ci_high``, ``pvalue``,
        ``coefficient_elo`` / ``elo_ci_low`` / ``elo_ci_high`` (Elo points per unit); ``df`` and
        ``test`` (cluster-robust with ``cluster``). ``ranks["raw_elo"]`` then holds each model's
        Elo without covariates or weights.
    monitor : ArenaMonitorResult or None
        With ``monitor``: the live monitor's state after its last look over these battles.
    """

    models: list[str]
    ratings: BradleyTerryResult
    columns: dict[str, Any]
    n_battles: int
    ranks: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    style: dict[str, Any] | None = None
    monitor: Any = None

    _repr_fields: ClassVar[tuple[str, ...]] = ("n_battles",)
    view_kind: ClassVar[str] = "arena"

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Arrays, one per pair (in ``columns`` order): each rating gap's interval in Elo points
        (the columns ``elo_ci_low``, ``elo_ci_high``).
        """
        return stored_interval(self.columns["elo_ci_low"], self.columns["elo_ci_high"],
                               self.settings.get("confidence_level"), confidence_level,
                               recompute="run arena_diagnose(..., confidence_level=confidence_level)")

    @property
    def n_pairs(self) -> int:
        """Pairs in the family."""
        return int(self.columns["gap"].size)

    def regimes(self) -> list[tuple[str, str]]:
        """(label, resolved column) of every regime computed, IID first."""
        out = [("IID", "resolved"), (str(self.settings["correction_label"]), "resolved_corrected")]
        if "resolved_cluster" in self.columns:
            out.append(("cluster", "resolved_cluster"))
        out.append(("anytime", "resolved_anytime"))
        return out

    def unresolved(self) -> dict[str, int]:
        """Unresolved pairs per regime label."""
        return {label: int(np.sum(~np.asarray(self.columns[col], dtype=bool))) for label, col in self.regimes()}

    def headline(self) -> tuple[str, str]:
        """(label, resolved column) of the headline regime: the strictest one that could be estimated."""
        col = str(self.settings.get("headline", "resolved"))
        return next(label for label, c in self.regimes() if c == col), col

    def to_frame(self) -> Any:
        """One row per pair (pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns)

    def summary(self) -> str:
        """The verdict per regime, one line each."""
        lines = [f"Arena: {len(self.models)} models, {self.n_battles:,} battles, {self.n_pairs} "
                 f"{self.settings['pairs']} pairs"]
        lines += [f"  {n} of {self.n_pairs} unresolved ({label})" for label, n in self.unresolved().items()]
        return "\n".join(lines)


def _pair_index(m: int, pairs: str) -> np.ndarray:
    if pairs == "adjacent":
        return np.stack([np.arange(m - 1), np.arange(1, m)], axis=1)
    i, j = np.triu_indices(m, k=1)
    return np.stack([i, j], axis=1)


@public
def arena_diagnose(battles: Any, *, pairs: str = "adjacent", cluster: Any = None, ties: str = "half",  # noqa: PLR0913
                   alpha: float = 0.05, power: float = 0.8, correction: str = "holm",
                   confidence_level: float = 0.95, rng: SeedLike = None, covariates: Any = None,
                   weights: Any = None, monitor: Any = None) -> ArenaDiagnosis:
    """Resolution report of an arena: per ranked pair the rating gap, its interval and test, the
    battles N* needed to separate it and q = N / N*, under multiplicity, clustering and
    anytime-valid monitoring.

    The regimes are those of :func:`llm_power.diagnose`, computed by the same functions on the
    gaps' IID (sandwich) variances: Holm / Bonferroni / BH on the IID Wald p-values, the
    anytime-valid boundary on the IID N*, and the cluster regime from the kernel's CR1 sandwich
    (G/(G-1), Student t on G - 1 degrees of freedom, design effect floored at 1, and the IID
    verdict required). Every regime is at least as strict as IID. When the clusters cannot
    estimate the ratings' covariance (no more clusters than free ratings, or a contrast the
    clusters do not inform) the cluster regime is *not estimable* for those pairs: NaN numbers,
    not resolved, and ``settings["cluster_not_estimable"]`` says why. A model that never wins
    (never loses) has no finite rating: its gaps are not estimable either.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        ``model_a``, ``model_b``, ``winner`` (see :func:`llm_power.bradley_terry`).
    pairs : {"adjacent", "all"}, default "adjacent"
        The family: models ranked next to each other, or every pair. ``"adjacent"`` gives M - 1
        pairs for M models, ``"all"`` M (M - 1) / 2 (more than 200,000 is a DataError).
    cluster : str or array_like, optional
        Battles sharing a prompt or a voter (a column such as ``"question"`` or labels): adds the
        cluster regime, whose covariance sums the Bradley-Terry scores within clusters.
        Default None: no cluster regime (battles treated as independent). A missing label is a
        DataError; a single cluster is a ValueError.
    ties : {"half", "davidson"}, default "half"
        How a tie enters the Bradley-Terry fit: half a win for each side, or Davidson's tie model
        with its tie parameter estimated (``settings["tie_parameter"]``).
    alpha : float, default 0.05
        Level of each test (two-sided Wald on the gap), in (0, 1); also the level N* is planned at.
    power : float, default 0.8
        The power N* is planned for, in (0, 1).
    correction : {"holm", "bonferroni", "bh"}, default "holm"
        The multiplicity regime's procedure over the family of pairs.
    confidence_level : float, default 0.95
        In (0, 1): level of the gaps' intervals (``elo_ci_low`` / ``elo_ci_high``) and of the
        simultaneous rank intervals.
    rng : seed or Generator, optional
        For the max-t critical value of the rank intervals (normal draws); the same seed gives
        the same numbers (the CLI's ``--seed``, default 0).
    covariates : list of str or array_like (n_battles, p), optional
        Style control (:func:`llm_power.bradley_terry`'s ``covariates``): numeric columns of
        ``battles`` (or an array), each battle's model_a minus model_b (answer length, markdown
        counts, ...). The ratings, gaps and every verdict are then the style-controlled ones;
        ``ranks["raw_elo"]`` keeps the Elo without the covariates and ``style`` the covariates'
        coefficients with their intervals (cluster-robust with ``cluster``). Needs
        ``ties="half"``; the fragility of #1 (refits of the raw model) is not computed.
        Default None: no covariates.
    weights : str or array_like (n_battles,), optional
        A column (or array) of positive battle weights, e.g. inverse sampling probabilities of
        unevenly sampled pairs: the weighted fit, with a sandwich that accounts for the weights.
        Default None: every battle weighs 1.
    monitor : int or ArenaMonitorResult, optional
        The live view of the same battles (:class:`llm_power.ArenaMonitor`): an int replays the
        battles in their row order through an ArenaMonitor, a look after every ``monitor``
        battles (asymptotic confidence sequences, e-BH at ``alpha``, per ``cluster`` when given,
        tightest at the log's size: ``tuned_for`` its battles, or clusters);
        or the state of a monitor that saw these battles (``monitor_battles(...)``; its battle
        count must match). Stored as ``monitor``: the report shows each pair's anytime interval,
        e-value and decision, and which models are provisional. Not with ``covariates`` or
        ``weights`` (the monitor fits the raw model). Default None: no monitor.

    Returns
    -------
    ArenaDiagnosis
        ``models`` (ranked, best first), ``ratings`` (the :class:`BradleyTerryResult` the
        verdicts use: cluster-robust with ``cluster``), ``columns`` (one array per field, one
        entry per pair: ``gap`` in log-strength units and ``gap_elo`` in Elo points, ``se``,
        ``pvalue``, ``n_star``, ``q``, ``resolved`` and the ``*_corrected``, ``*_cluster`` and
        ``*_anytime`` columns of the other regimes), ``n_battles``, ``ranks`` (Elo with mean 1000,
        rank, simultaneous rank interval and tie group per model) and ``settings`` (the options,
        ``headline`` regime, ``separated`` models). ``to_frame()`` gives one row per pair,
        ``unresolved()`` the unresolved pairs per regime, ``summary()`` one line per regime.

    Examples
    --------
    >>> from llm_power import arena_diagnose
    >>> battles = {"model_a": ["x", "y", "x", "z"] * 60, "model_b": ["y", "z", "z", "x"] * 60,
    ...            "winner": ["model_a", "model_a", "model_a", "tie", "model_b", "tie", "model_a", "model_b"] * 30}
    >>> res = arena_diagnose(battles)
    >>> res.models
    ['x', 'y', 'z']
    >>> [round(float(v), 2) for v in res.columns["q"]]
    [0.18, 8.14]
    """
    from ..resolution import REGIMES, DiagnoseOptions

    # the options diagnose declares, checked by the same registry (correction: one is always applied here)
    check_option(correction, "correction", ("holm", "bonferroni", "bh"))
    opts = DiagnoseOptions.create(pairs=pairs, correction=correction, alpha=alpha, power=power,
                                  confidence_level=confidence_level)
    alpha, power, level = opts.alpha, opts.power, opts.confidence_level
    from ._battles import battle_cluster_codes, encode_battles
    from ._bradley_terry import fit_battles
    from ._ratings import rank_order

    enc = encode_battles(battles)
    groups = battle_cluster_codes(cluster, battles, enc.n)
    m_models = len(enc.models)
    max_pairs = limit(MAX_PAIRS)
    if pairs == "all" and m_models * (m_models - 1) // 2 > max_pairs:
        msg = (f"{m_models:,} models have {m_models * (m_models - 1) // 2:,} pairs, more than {max_pairs:,} (each pair "
               f"is a row of the report; {MAX_PAIRS} raises the limit); use pairs='adjacent' (--pairs adjacent) or "
               "fewer models")
        raise DataError(msg)
    styled = covariates is not None or weights is not None
    if monitor is not None:
        monitor = _monitor_state(monitor, battles, enc.n, groups, styled=styled, cluster=cluster, ties=ties,
                                 alpha=alpha)
    if styled:
        from ._bradley_terry import fit_styled

        def fit(g: np.ndarray | None) -> BradleyTerryResult:
            return fit_styled(enc, g, battles, covariates, weights, ties=ties, method="sandwich",
                              confidence_level=level, tol=1e-10, max_iter=200)
    else:
        def fit(g: np.ndarray | None) -> BradleyTerryResult:
            return fit_battles(enc, g, ties=ties, confidence_level=level)
    iid = fit(None)
    clustered = None
    if groups is not None:
        with warnings.catch_warnings():  # the IID fit warned about separation already
            warnings.simplefilter("ignore", SeparationWarning)
            clustered = fit(groups)
    order = rank_order(iid.ratings)
    idx = _pair_index(len(iid.models), pairs)
    names = [iid.models[k] for k in order]
    ctx, cols = _iid_context(enc, iid, order, idx, names, pairs, alpha=alpha, power=power, level=level, rng=rng)
    regimes = {r.key: r for r in REGIMES}
    compute_corrected, compute_anytime = regimes["corrected"].compute, regimes["anytime"].compute
    if compute_corrected is None or compute_anytime is None:  # pragma: no cover - both regimes compute
        msg = "the corrected and anytime regimes have no compute function"
        raise RuntimeError(msg)
    corrected = compute_corrected(ctx, opts)
    anytime = compute_anytime(ctx, opts)
    estimable = cols["estimable"]
    for out in (corrected, anytime):
        cols.update({k: np.where(estimable, v, np.nan) if np.asarray(v).dtype.kind == "f" else v
                     for k, v in out.columns.items()})
    labels = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "BH"}
    settings: dict[str, Any] = {"alpha": alpha, "power": power, "pairs": pairs, "correction": correction,
                                "correction_label": labels[correction], "confidence_level": level, "ties": ties,
                                **anytime.settings, "n_clusters": None if clustered is None else clustered.n_clusters,
                                "tie_parameter": iid.tie_parameter, "separated": dict(iid.separated),
                                "cluster_not_estimable": None}
    if clustered is not None:
        cols.update(_cluster_columns(clustered, ctx, order[idx[:, 0]], order[idx[:, 1]], estimable, level=level))
        reason = clustered.not_estimable
        ok_c = cols["cluster_estimable"]
        if reason is None and not ok_c[estimable].all():
            reason = (f"{int((~ok_c & estimable).sum())} of {int(estimable.sum())} gaps lie in directions the "
                      f"{clustered.n_clusters} clusters do not inform (a rank-deficient cluster meat)")
        settings.update(cluster_not_estimable=reason, cluster_df=clustered.df)
    settings["headline"] = _headline(cols, settings)
    regime_cols = ["resolved", "resolved_corrected", "resolved_anytime"] + (
        ["resolved_cluster"] if "resolved_cluster" in cols and np.any(cols["cluster_estimable"]) else [])
    ranks = _ranks(clustered or iid, names, idx, cols, settings, regime_cols, level=level, rng=rng,
                   enc=None if styled else enc)
    style = None
    if styled:
        settings.update(covariates=iid.covariates, weights=weights if isinstance(weights, str) else
                        (None if weights is None else "given"))
        ranks["raw_elo"] = _raw_elo(enc, names)
        style = _style_table(clustered if clustered is not None and clustered.not_estimable is None else iid,
                             level=level)
    return ArenaDiagnosis(models=names, ratings=clustered or iid, columns=RenamedKeys(cols, _RENAMED_COLUMNS),
                          n_battles=iid.n_battles, ranks=RenamedKeys(ranks, _RENAMED_RANKS), settings=settings,
                          style=style, monitor=monitor)


def _monitor_state(monitor: Any, battles: Any, n: int, groups: np.ndarray | None, *, styled: bool,  # noqa: PLR0913
                   cluster: Any, ties: str, alpha: float) -> Any:
    """The live monitor of the battles: replayed a look every ``monitor`` battles (tuned for the log's
    size: its battles, or clusters), or a given state checked against them.
    """
    from ._monitor import ArenaMonitorResult, monitor_battles

    if styled:
        msg = "`monitor` with `covariates` or `weights`: the monitor fits Bradley-Terry without them"
        raise ValueError(msg)
    if isinstance(monitor, ArenaMonitorResult):
        if monitor.n_battles != n:
            msg = f"`monitor` saw {monitor.n_battles:,} battles, the report has {n:,}: give the state of these battles"
            raise DataError(msg)
        return monitor
    batch = check_int_at_least(monitor, "monitor", 1)
    if not isinstance(cluster, (str, type(None))):
        msg = "`monitor` replays the battles with `cluster` as a column name (not labels)"
        raise ValueError(msg)
    if ties != "half":
        msg = "`monitor` counts a tie as half a win (ties='half')"
        raise ValueError(msg)
    units = n if groups is None else int(np.unique(groups).size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        return monitor_battles(battles, batch=batch, alpha=alpha, cluster=cluster, tuned_for=max(units, 1))


def _raw_elo(enc: Any, names: list[str]) -> list[float]:
    """Each model's Elo (mean 1000) without the covariates or weights: the ratings style control moves."""
    from ._bradley_terry import fit_battles

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        raw = fit_battles(enc, None, ties="half")
    elo = dict(zip(raw.models, raw.elo(), strict=True))
    return [float(elo[x]) for x in names]


def _style_table(fit: BradleyTerryResult, *, level: float) -> dict[str, Any]:
    """The covariates' coefficients with their intervals and Wald tests (t on the clusters' df when the
    fit is clustered), in log-odds and Elo points per unit of the covariate.
    """
    from .._kernel.quantiles import t_pvalue
    from .._kernel.verdict import t_interval

    beta = np.asarray(fit.coefficients, dtype=float)
    cov = fit.coefficient_covariance
    var = np.full(beta.shape, np.nan) if cov is None else np.diag(np.asarray(cov, dtype=float)).copy()
    if fit.sandwich_parts is not None and beta.size:
        m = len(fit.models)
        _, ok = fit.sandwich_parts.contrast_variance(np.eye(m + beta.size)[m:])
        var = np.where(ok, var, np.nan)
    se = np.sqrt(np.maximum(var, 0.0))
    lo, hi = t_interval(beta, var, fit.df, level, "two-sided")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, beta / se, np.nan)
    p = np.where(np.isfinite(z), floor_pvalue(t_pvalue(z, fit.df)), np.nan)
    return {"covariate": list(fit.covariates or []), "coefficient": beta, "se": se, "ci_low": lo, "ci_high": hi,
            "pvalue": p, "coefficient_elo": ELO * beta, "elo_ci_low": ELO * lo, "elo_ci_high": ELO * hi,
            "df": fit.df, "test": "cluster-robust (CR1)" if fit.n_clusters is not None else "Wald (sandwich)"}


#: the interval columns' names before the one naming of intervals, read for one release
_RENAMED_COLUMNS = {"ci_low_elo": "elo_ci_low", "ci_high_elo": "elo_ci_high",
                    "ci_low_elo_cluster": "cluster_elo_ci_low", "ci_high_elo_cluster": "cluster_elo_ci_high"}
_RENAMED_RANKS = {"rank_low": "rank_ci_low", "rank_high": "rank_ci_high"}


def _iid_context(enc: Any, iid: BradleyTerryResult, order: np.ndarray, idx: np.ndarray, names: list[str],  # noqa: PLR0913
                 pairs: str, *, alpha: float, power: float, level: float, rng: Any) -> tuple[Any, dict[str, Any]]:
    """The IID columns of the pairs (Wald test on the sandwich variance, the IID verdict) and the
    regimes' context: the gaps' variance per battle, as diagnose's context has it per item.
    """
    from .._kernel.sufficient import PairSums, PairwiseStatistics
    from .._kernel.verdict import iid_verdict, t_interval
    from ..resolution import Context

    n = iid.n_battles
    a_codes, b_codes = order[idx[:, 0]], order[idx[:, 1]]
    with np.errstate(invalid="ignore"):
        gap = iid.ratings[a_codes] - iid.ratings[b_codes]
    se = iid.contrast_se(a_codes, b_codes)
    estimable = np.isfinite(gap) & np.isfinite(se)
    gap_v = np.where(estimable, gap, 0.0)  # the verdict sees a zero gap where none can be estimated
    var_item = np.where(estimable, se * se * n, 0.0)  # the gap's variance per battle
    z = np.where(estimable & (se > 0), gap_v / np.where(se > 0, se, 1.0), np.where(gap_v != 0, np.inf, 0.0))
    p = np.where(estimable, floor_pvalue(normal_pvalue(z)), 1.0)
    verdict = iid_verdict(gap_v, var_item, n, p, alpha=alpha, power=power, alternative="two-sided")
    verdict = dataclasses.replace(verdict, resolved=verdict.resolved & estimable,
                                  n_star=np.where(estimable, verdict.n_star, np.nan),
                                  q=np.where(estimable, verdict.q, np.nan))
    lo, hi = t_interval(gap, se * se, math.inf, level, "two-sided")
    cols: dict[str, Any] = {
        "model_a": np.array([names[k] for k in idx[:, 0]], dtype=object),
        "model_b": np.array([names[k] for k in idx[:, 1]], dtype=object),
        "rank_a": idx[:, 0] + 1, "rank_b": idx[:, 1] + 1, "gap": gap, "gap_elo": ELO * gap, "se": se,
        "elo_ci_low": ELO * lo, "elo_ci_high": ELO * hi, "pvalue": np.where(estimable, p, np.nan),
        "battles": _direct_counts(enc, a_codes, b_codes), "n_star": verdict.n_star, "q": verdict.q,
        "resolved": verdict.resolved, "estimable": estimable,
    }
    st = PairwiseStatistics(n=n, means=iid.ratings[order], mean_diff=None, var_diff=None, binary=False, b=None)
    ctx = Context(n=n, names=names, order=order, pairs=pairs, st=st, pair_idx=idx,
                  sums=PairSums(n=n, delta=gap_v, ss=var_item * n), var=var_item, pvalue=p, tests=None, b=None,
                  c=None, verdict=verdict, alpha=alpha, power=power, confidence_level=level, gen=as_rng(rng),
                  columns={}, settings={"k_factor": float(k_constant(alpha, power))})
    return ctx, cols


def _cluster_columns(clustered: BradleyTerryResult, ctx: Any, a_codes: np.ndarray, b_codes: np.ndarray,
                     estimable: np.ndarray, *, level: float) -> dict[str, Any]:
    """The cluster regime: the kernel's CR1 variance of each gap (NaN where not estimable) through the
    decision diagnose's cluster regime uses.
    """
    from .._kernel.verdict import cluster_verdict_from_variance, t_interval

    gap = ctx.sums.delta
    se_c = clustered.contrast_se(a_codes, b_codes)
    ok_c = estimable & np.isfinite(se_c)
    v_c = np.where(ok_c, se_c * se_c, np.nan)
    v_iid = ctx.var / ctx.n
    with np.errstate(divide="ignore", invalid="ignore"):
        de = np.where(ok_c & (v_iid > 0), v_c / v_iid, np.nan)
    df = np.full(gap.size, clustered.df)
    cv = cluster_verdict_from_variance(gap, ctx.var, ctx.n, v_c, de, df, ctx.verdict.resolved & ok_c,
                                       n_clusters=int(clustered.n_clusters or 0), alpha=ctx.alpha, power=ctx.power,
                                       alternative="two-sided")
    lo_c, hi_c = t_interval(np.where(ok_c, gap, np.nan), v_c, clustered.df, level, "two-sided")
    return {"se_cluster": np.sqrt(v_c), "pvalue_cluster": np.where(ok_c, cv.pvalue, np.nan), "design_effect": de,
            "cluster_df": np.where(ok_c, clustered.df, np.nan), "cluster_elo_ci_low": ELO * lo_c,
            "cluster_elo_ci_high": ELO * hi_c, "n_star_cluster": np.where(ok_c, cv.n_star, np.nan),
            "q_cluster": np.where(ok_c, cv.q, np.nan), "resolved_cluster": cv.resolved & ok_c,
            "cluster_estimable": ok_c}


def _ranks(fit: BradleyTerryResult, names: list[str], idx: np.ndarray, cols: dict[str, Any],  # noqa: PLR0913
           settings: dict[str, Any], regimes: list[str], *, level: float, rng: Any,
           enc: Any = None) -> dict[str, Any]:
    """The ranking table: Elo, simultaneous rank intervals, tie groups from the headline verdicts,
    the set that can be #1 and the winner's rating corrected for selection.

    A pair separates two ranks when its gap exceeds the max-t critical value (over all pairs, on
    the fit's covariance) **and**, when the pairs table shows it, every regime there resolves it:
    the ranks never say more than the table (as diagnose's rankings).
    """
    from .._kernel.ranks import centred, selected_inference
    from ..resolution import tie_groups_and_rank_intervals

    m = len(names)
    groups, _ = tie_groups_and_rank_intervals(m, idx, np.asarray(cols[settings["headline"]], dtype=bool),
                                              settings["pairs"] == "all")
    group_of: dict[int, list[int]] = {g: [] for g in range(m)}  # groups may overlap: a model may be in two
    for k, grp in enumerate(groups):
        for g in grp:
            group_of[g].append(k + 1)
    elo = dict(zip(fit.models, fit.elo(), strict=True))
    out: dict[str, Any] = {"model": list(names), "elo": [float(elo[x]) for x in names], "rank": list(range(1, m + 1)),
                           "rank_ci_low": [None] * m, "rank_ci_high": [None] * m,
                           "tie_groups": [group_of[r] for r in range(m)], "best_set": None, "winner": None,
                           "fragility": None}
    if enc is not None and settings.get("ties") == "half" and m <= MAX_FRAGILITY_MODELS:
        out["fragility"] = _top_fragility(enc, names)  # refits: no covariance needed
    if fit.not_estimable is not None:  # no covariance: no simultaneous rank interval either (—)
        return out
    position = {name: k for k, name in enumerate(names)}
    rank_of = np.array([position[x] for x in fit.models])
    i, j, diff, se = fit.pairwise()
    ok = np.isfinite(se) & np.isfinite(diff)
    with step("rank intervals"):
        crit = fit.simultaneous_critical_value(level, rng=rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(ok & (se > 0), np.abs(diff) / np.where(se > 0, se, 1.0), np.where(ok & (diff != 0), np.inf, 0.0))
    separated = ok & (z > crit) if math.isfinite(crit) else np.zeros(z.shape, dtype=bool)
    ri, rj = rank_of[i], rank_of[j]
    pair_idx = np.stack([np.minimum(ri, rj), np.maximum(ri, rj)], axis=1)
    shown = np.ones(idx.shape[0], dtype=bool)
    for col in regimes:
        shown &= np.asarray(cols[col], dtype=bool)
    where = {(int(a), int(b)): k for k, (a, b) in enumerate(pair_idx)}
    for (a, b), ok_shown in zip(idx.tolist(), shown, strict=True):
        separated[where[a, b]] &= bool(ok_shown)
    _, intervals = tie_groups_and_rank_intervals(m, pair_idx, separated, complete=True)
    out["rank_ci_low"] = [int(intervals[r][0]) for r in range(m)]
    out["rank_ci_high"] = [int(intervals[r][1]) for r in range(m)]
    out["best_set"] = [names[r] for r in range(m) if intervals[r][0] == 1]
    out["critical_value"] = float(crit)
    order = np.array([fit.models.index(x) for x in names])
    ratings = np.asarray(fit.ratings, dtype=float)[order]
    if np.all(np.isfinite(ratings)) and m >= 2:  # the winner's Elo (mean 1000): the centred ratings
        values, cov = centred(ratings, np.asarray(fit.covariance, dtype=float)[np.ix_(order, order)])
        win = selected_inference(values, cov, names, level, as_rng(rng))
        to_elo = {k: (ELO * v[0] + 1000.0, ELO * v[1] + 1000.0) if isinstance(v, tuple) else ELO * v + 1000.0
                  for k, v in win.items() if k in ("estimate", "median_unbiased", "hybrid_estimate", "naive_ci",
                                                  "conditional_ci", "hybrid_ci", "projection_ci")}
        out["winner"] = {**win, **to_elo, "se": ELO * win["se"], "units": "Elo"}
    return out


#: arenas up to this many models get the fragility of #1 (a refit per challenger)
MAX_FRAGILITY_MODELS = 100
#: the name of those refits in progress reports
FRAGILITY_TASK = "fragility of #1: refits"


def _top_fragility(enc: Any, names: list[str]) -> dict[str, Any] | None:
    """The fewest battles whose removal lets another model tie or overtake #1, checked by refitting
    (:func:`~llm_power.arena_fragility`, on the IID fit's ratings).
    """
    import warnings

    from ._bradley_terry import fit_battles
    from ._fragility import flip_count

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        ratings = np.asarray(fit_battles(enc, None, ties="half").ratings, dtype=float)
    if not np.all(np.isfinite(ratings)):
        return None
    top = enc.models.index(names[0])
    counts = {}
    advance(FRAGILITY_TASK, 0, len(names) - 1)
    for k, name in enumerate(names[1:], start=1):  # a refit per challenger: the arena's longest step
        counts[name] = flip_count(enc, ratings, top, enc.models.index(name))
        advance(FRAGILITY_TASK, k, len(names) - 1)
    challenger = min(names[1:], key=lambda x: (counts[x][1], counts[x][0]))
    flips = counts[challenger][1]
    return {"top_model": names[0], "challenger": challenger, "battles_to_flip_top": flips,
            "battles_amip_top": counts[challenger][0], "share_top": flips / enc.n,
            "fragile_top": bool(flips / enc.n <= FRAGILE_SHARE), "fragile_share": FRAGILE_SHARE}


#: a gap (or #1) that flips by removing at most this share of the battles is fragile
FRAGILE_SHARE = 0.001


def _headline(cols: dict[str, Any], settings: dict[str, Any]) -> str:
    """The resolved column of the headline regime -- the strictest one computed and estimable, by the
    rule every command uses (:func:`~llm_power.resolution.headline_key`): the one the tie groups and
    the charts are drawn from.
    """
    from ..resolution import headline_key

    keys = ["iid", "corrected", *(["cluster"] if "resolved_cluster" in cols else []), "anytime"]
    if settings.get("cluster_not_estimable") and "cluster_estimable" in cols and not np.any(cols["cluster_estimable"]):
        keys.remove("cluster")
    field = {"iid": ""} | {k: "_" + k for k in keys[1:]}
    unresolved, medians = {}, {}
    for k in keys:
        q = np.asarray(cols["q" + field[k]], dtype=float)
        q = q[np.isfinite(q)]
        unresolved[k] = int(np.sum(~np.asarray(cols["resolved" + field[k]], dtype=bool)))
        medians[k] = float(np.median(q)) if q.size else 0.0
    return "resolved" + field[headline_key(unresolved, medians)]


def _direct_counts(enc: Any, a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    """Battles between each pair, from the pairs that occur (memory O(battles + pairs), never M x M)."""
    m = len(enc.models)
    lo, hi = np.minimum(enc.ia, enc.ib).astype(np.int64), np.maximum(enc.ia, enc.ib).astype(np.int64)
    keys, counts = np.unique(lo * m + hi, return_counts=True)
    want = np.minimum(a_codes, b_codes).astype(np.int64) * m + np.maximum(a_codes, b_codes)
    at = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
    return np.where(keys.size and (keys[at] == want), counts[at] if keys.size else 0, 0).astype(np.int64)
