"""`compare`: the one-line paired comparison of two models on the same items."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.clusters import code_labels, require_clusters
from .._core.errors import DataError
from .._core.format import fmt_gap, fmt_n_star, fmt_score, items_text, p_is
from .._core.params import public
from .._core.results import ConfidenceInterval, Result
from .._core.typing import SeedLike
from .._core.validation import (
    as_rng,
    check_alpha_power,
    check_alternative,
    check_confidence_level,
    check_option,
    check_paired,
    check_run_pair,
    is_binary,
)
from .._kernel.crossed import consistent_runs_needed, crossed_mean_squares, gap_run_variance, runs_needed
from .._kernel.sizes import ceil_items
from .._kernel.sufficient import pair_sums
from .._kernel.variance import DESIGN_EFFECTS
from .._kernel.verdict import (
    CLUSTER_METHODS,
    REASONS,
    choose_iid_test,
    cluster_verdict,
    floor_pvalue,
    iid_verdict,
    run_verdict,
    spread,
    verdict_reason,
    warn_degenerate,
)
from .._kernel.verdict import resolved as verdict_resolved
from .._kernel.wild_decision import WILD_RESAMPLES, wild_seed
from ._effects import effect_sizes, paired_counts
from ._registry import COMPARE_METHODS, DEFAULT_RESAMPLES, TESTS, PairData, interval_at
from ._resampling import paired_bootstrap

__all__ = ["COMPARE_METHODS", "Comparison", "compare"]

#: compare's methods: the package's paired tests (one registry, shared with simulated_power) plus
#: "auto" (the decision tree) and "mcnemar" (exact or asymptotic by the discordant count)


@dataclass(frozen=True, slots=True, repr=False)
class Comparison(Result):
    """Result of :func:`compare`.

    Attributes
    ----------
    n : int
        Number of items.
    mean_a, mean_b : float
        Mean scores (accuracies for 0/1 data).
    delta : float
        mean_a - mean_b.
    method : str
        The test used (chosen by the decision tree when ``method="auto"``).
    reason : str
        Why that test (for ``"auto"``), or "requested".
    statistic, pvalue : float
        Of that test (never exactly 0: an underflowed p-value is floored at 2.2e-308).
    alternative : str
    se_paired, se_unpaired : float
        Plug-in standard errors of delta using and ignoring the pairing.
    phi : float
        Correlation of the two models' per-item scores.
    n_star : float
        Items needed to resolve a gap of size delta at (alpha, power) in the tested direction,
        rounded up; ``inf`` when delta = 0 or points the other way; NaN when undefined (zero
        variance of graded differences). With clusters: the clustered N*.
    mde : float
        Minimum detectable effect of this benchmark (in the scores' units; ``inf`` when no gap
        is detectable, e.g. too few discordant items for the exact test).
    q : float
        Resolution ratio n / N* (unrounded N*); q >= 1 is necessary for "resolved".
    resolved : bool
        q >= 1 AND the test reported in ``pvalue`` rejects at ``alpha`` in the tested direction
        (with clusters, also the IID verdict holds: a stress test only tightens).
    verdict_reason : str
        Which part of that rule decides: "resolved", "too_small" (q < 1), "no_rejection" (q >= 1
        but the test does not reject), "unreachable" (N* infinite: no gap in the tested direction,
        or run noise that more items do not remove), "undefined" (no variance) or
        "iid_unresolved" (the clustered or run test's rule holds, the IID one does not).
    regime : str
        How N* was computed: "plug-in" (N* = K sigma^2/delta^2), "exact" (exact conditional
        McNemar at the observed cells, for few discordant items), "cluster", "degenerate".
    b, c : int or None
        Discordant counts for 0/1 data (A only right, B only right).
    confidence_level, alpha, power : float
    ci_method : str
        How :meth:`confidence_interval` is computed.
    n_clusters : int or None
    design_effect : float or None
        With clusters: the design effect of ``design_effect_method`` (unfloored; N* uses max(DE, 1)).
    design_effect_method : str or None
    cluster_df : float or None
        Degrees of freedom of the cluster t test and of the t quantiles in N* (G - 1 for equal
        cluster sizes; the Imbens-Kolesar value, at most G - 1, for unequal ones).
    se_cluster : float or None
        With clusters: the standard error of delta behind the reported test and interval (the
        cluster-robust one of ``design_effect_method``, or the cluster bootstrap's).
    runs_a, runs_b : int or None
        With several runs per model (``a``, ``b`` of shape (n_items, n_runs)): the runs of each.
    run_pairing : str or None
        With runs: "independent" or "matched" (the runs the two models share, as prompt templates).
    run_df, se_runs : float or None
        The run test's df (Satterthwaite's, made conservative for few runs) and the gap's standard
        error over items and runs.
    runs_needed : float or None
        Runs per model that would give the run-regime test the requested power at these items
        (``inf``: more runs alone cannot; more items are needed too).
    """

    n: int
    mean_a: float
    mean_b: float
    delta: float
    method: str
    reason: str
    statistic: float
    pvalue: float
    alternative: str
    se_paired: float
    se_unpaired: float
    phi: float
    n_star: float
    mde: float
    q: float
    resolved: bool
    regime: str
    b: int | None
    c: int | None
    confidence_level: float
    alpha: float
    power: float
    ci_method: str
    binary: bool = True
    n_clusters: int | None = None
    design_effect: float | None = None
    design_effect_method: str | None = None
    cluster_df: float | None = None
    runs_a: int | None = None
    runs_b: int | None = None
    run_pairing: str | None = None
    run_df: float | None = None
    se_runs: float | None = None
    runs_needed: float | None = None
    verdict_reason: str = "resolved"
    se_cluster: float | None = None
    _interval: tuple[Any, ...] | None = field(default=None, compare=False)  # (kind, data): picklable, no closure

    _repr_fields = ("n", "delta", "method", "pvalue", "n_star", "q", "resolved")
    _title = "Paired comparison of A and B on the same items"

    def _fields(self) -> tuple[str, ...]:
        return tuple(name for name in Result._fields(self) if not name.startswith("_"))

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Confidence interval for delta = mean_a - mean_b (method in ``ci_method``; one-sided for a
        one-sided ``alternative``).
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        if self._interval is None:  # pragma: no cover - always set by compare()
            msg = "this Comparison was not made by compare()"
            raise RuntimeError(msg)
        return interval_at(self._interval, level, self.alternative)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (used by the CLI and the reports)."""
        out = Result.to_dict(self)
        ci = self.confidence_interval()
        out["ci"] = {"low": ci.low, "high": ci.high}
        out["confidence_interval"] = out["ci"]  # its name before the one naming of intervals: one release
        return out

    def summary(self) -> str:
        """A short human-readable summary."""
        ci = self.confidence_interval()
        level = f"{100 * self.confidence_level:g}%"
        bin_ = self.binary
        unit = "points" if bin_ else "score units"
        verdict = "resolved" if self.resolved else f"NOT resolved ({REASONS[self.verdict_reason]})"
        counts = f"  discordant items: b = {self.b} (A only), c = {self.c} (B only)\n" if self.b is not None else ""
        clusters = (f"  clusters: {self.n_clusters}, design effect {self.design_effect:.3g} "
                    f"({self.design_effect_method}); N* uses max(DE, 1) and t({self.cluster_df:.3g}) quantiles\n"
                    if self.n_clusters else "")
        se_scale = 100 if bin_ else 1
        if self.runs_a is not None:
            need = self.runs_needed
            clusters += (f"  runs: {self.runs_a} (A) and {self.runs_b} (B); SE over items and runs "
                         f"{se_scale * (self.se_runs or 0.0):.4g} {unit}"
                         + (f"; runs per model for the requested power at these items: {need:,.0f}\n"
                            if need is not None and math.isfinite(need)
                            else "; more runs alone cannot give the requested power at these items\n"))
        return (
            f"A {fmt_score(self.mean_a, bin_)} vs B {fmt_score(self.mean_b, bin_)} on {items_text(self.n)}: "
            f"delta = {fmt_gap(self.delta, bin_)} {unit}, {level} CI "
            f"[{fmt_gap(ci.low, bin_)}, {fmt_gap(ci.high, bin_)}] ({self.ci_method})\n"
            f"{counts}{clusters}"
            f"  test: {self.method} ({self.reason}); {self.alternative} {p_is(self.pvalue)}\n"
            f"  SE paired {se_scale * self.se_paired:.4g} vs unpaired {se_scale * self.se_unpaired:.4g} {unit} "
            + (f"(phi = {self.phi:.2f})\n" if math.isfinite(self.phi) else "(phi undefined: a constant model)\n")
            + f"  resolution: N* = {fmt_n_star(self.n_star)} items for this gap at alpha = {self.alpha:g}, power = "
            f"{self.power:g} ({self.regime}); q = N/N* = {self.q:.3g} -> {verdict}; "
            + (f"MDE = {fmt_gap(self.mde, bin_, sign=False)} {unit}" if math.isfinite(self.mde) else
               f"no gap is detectable with power {self.power:g} at these {items_text(self.n)} (MDE = ∞: too few "
               "disagreements)")
        )




@public
def compare(
    a: Any,
    b: Any,
    *,
    method: str = "auto",
    cluster: Any = None,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
    n_resamples: int | None = None,
    design_effect: str = "robust",
    cluster_method: str = "cr2",
    run_pairing: str = "independent",
    rng: SeedLike = None,
) -> Comparison:
    r"""Compare two models scored on the same items: test, interval, effect sizes and resolution.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores of model A and model B (0/1 correctness or graded scores). Of shape
        (n_items, n_runs), several runs per model (seeds, templates; at least 2 each): the gap is
        then tested over items and runs (:func:`llm_power.diagnose`'s run regime, test "run_t").
    method : str, default "auto"
        ``"auto"`` follows the decision tree below. Explicit choices: ``"mcnemar"`` (exact when
        b + c < 25, else asymptotic), ``"mcnemar_exact"``, ``"mcnemar_asymptotic"``,
        ``"mcnemar_mid_p"``, ``"paired_t"``, ``"bootstrap"``, ``"permutation"``, ``"sign"``,
        ``"wilcoxon"``, and with clusters ``"cluster_t"``.
    cluster : array_like, optional
        One cluster label per item (subject, source document); NaN/None/empty labels are a
        :class:`~llm_power.DataError`, fewer than 2 clusters a ValueError, fewer than 30 a
        :class:`FewClustersWarning`. The clusters are used in the test (``"cluster_t"``: the
        cluster-robust t test with G - 1 df, the default; or ``"bootstrap"``: the cluster
        bootstrap), the interval AND N*/q/MDE. Item-level tests (McNemar, paired t, permutation,
        sign, Wilcoxon) cannot use clusters and raise.
    alternative : {"two-sided", "less", "greater"}
        "greater": A scores higher than B. One-sided alternatives give a one-sided interval and
        N* = inf, q = 0 for a gap in the other direction.
    confidence_level : float, default 0.95
    alpha, power : float, default 0.05 and 0.8
        Thresholds of the resolution verdict (N*, MDE, q).
    n_resamples : int, optional
        Resamples of the bootstrap (default 10,000) and random sign patterns of the permutation
        test (default: exact enumeration when at most 20 items differ, else 10,000 random
        patterns; a number given here is used as is).
    cluster_method : {"cr2", "cv3", "wild"}, default "cr2"
        With clusters: the clustered test and interval -- the t test on the ``design_effect``
        variance, the cluster jackknife (CV3) on G - 1 df, or the restricted wild cluster bootstrap
        (two-sided; its interval inverts the test with the same draws). The same choice as
        :func:`~llm_power.diagnose`'s, with the same numbers for the same pair (``docs/clusters.md``).
    design_effect : {"robust", "cr1", "anova", "paper"}, default "robust"
        With clusters: the measured design effect from the bias-reduced cluster-robust variance
        (CR2, equal to CR1 when clusters have equal sizes) with Imbens-Kolesar degrees of freedom;
        ``"cr1"`` the CR1 variance with G - 1 df; the ANOVA-ICC one with Kish's cluster size; or
        the resolution paper's mean-size form (for reproduction only); see
        :func:`llm_power.design_effects` and ``docs/resolution.md``.
    run_pairing : {"independent", "matched"}, default "independent"
        With several runs: run independently (seeds, engines), or matched -- column r of ``a`` and
        of ``b`` share a prompt template, and the gap's variance comes from the per-run differences.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Comparison

    Notes
    -----
    Decision tree for ``method="auto"`` (after Dror et al. 2018, "The Hitchhiker's Guide to
    Testing Statistical Significance in NLP"):

    1. cluster labels given -> the cluster-robust t test (items are not independent);
    2. 0/1 scores -> McNemar: exact when b + c < 25, else the continuity-corrected chi-square;
    3. graded scores, n >= 30 -> paired t test (the mean difference is approximately normal by the
       central limit theorem);
    4. graded scores, n < 30 -> paired t if a Shapiro-Wilk test does not reject normality of the
       differences (p >= 0.05), else the sign-flip permutation test (no distributional assumption,
       exact for few items).

    Dror et al. also list the sign test and Wilcoxon for large samples of unknown distribution,
    mainly because resampling is expensive there; here resampling is vectorised and the mean
    gap is the reported quantity, so they are available only on request (they test the median /
    symmetry of the differences, not the mean).

    Resolution (``llm_power._kernel.verdict``, shared with :func:`diagnose`): with
    :math:`\hat\sigma_D^2 = (b+c)/N - ((b-c)/N)^2` for 0/1 data and the sample variance of D
    (ddof = 1) otherwise, :math:`N^* = K\hat\sigma_D^2/\hat\delta^2`,
    :math:`\mathrm{MDE} = \sqrt{K\hat\sigma_D^2/N}`, :math:`q = N/N^* = T^2/K`; for 0/1 data
    with b + c < 25 the exact conditional McNemar N* at the observed cells. "Resolved" = q >= 1
    and the reported test rejects. q is not "observed power": it says whether this benchmark is
    big enough for a gap of the size observed; q < 1 does not mean the models are equal.

    References
    ----------
    .. [1] Dror, R., Baumer, G., Shlomov, S. & Reichart, R. (2018). The Hitchhiker's Guide to
       Testing Statistical Significance in Natural Language Processing. ACL, 1383-1392.

    Examples
    --------
    A 75% vs B 71% on the same 200 items, disagreeing on only 10 of them:

    >>> import numpy as np
    >>> from llm_power import compare
    >>> a = np.r_[np.ones(150), np.zeros(50)]
    >>> b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    >>> res = compare(a, b)
    >>> res.method, res.b, res.c, round(res.pvalue, 4)
    ('mcnemar_exact', 9, 1, 0.0215)
    >>> res.regime, res.n_star, round(res.q, 2), res.resolved   # significant, yet below 80% power
    ('exact', 240.0, 0.83, False)
    """
    if np.ndim(a) == 2 or np.ndim(b) == 2:  # several runs per model (items x runs): the run regime decides
        return _compare_runs(a, b, method=method, cluster=cluster, alternative=alternative,
                             confidence_level=confidence_level, alpha=alpha, power=power, n_resamples=n_resamples,
                             run_pairing=run_pairing, rng=rng)
    method, alternative, confidence_level, (alpha, power) = (
        check_option(method, "method", COMPARE_METHODS + (("cluster_t",) if cluster is not None else ())),
        check_alternative(alternative), check_confidence_level(confidence_level), check_alpha_power(alpha, power))
    design_effect = check_option(design_effect, "design_effect", DESIGN_EFFECTS)
    cluster_method = check_option(cluster_method, "cluster_method", CLUSTER_METHODS)
    if cluster_method != "cr2" and (cluster is None or method == "bootstrap"):
        msg = (f"cluster_method={cluster_method!r} chooses the clustered test: it needs `cluster` labels and "
               "cannot be combined with method='bootstrap' (the cluster bootstrap)")
        raise ValueError(msg)
    a_arr, b_arr = check_paired(a, b)
    gen = as_rng(rng)
    first = wild_seed(gen)  # before anything draws: the same weights as diagnose's and the gate's
    n = a_arr.size
    binary = is_binary(a_arr, b_arr)
    _check_method(method, binary, clustered=cluster is not None)
    codes, n_groups = None, 0
    if cluster is not None:
        codes, n_groups = code_labels(cluster, n)
        require_clusters(n_groups)
    with np.errstate(over="ignore", invalid="ignore"):
        d = a_arr - b_arr
    if not np.all(np.isfinite(d)):
        msg = "the score differences overflow: scores are too large to compare (rescale them)"
        raise DataError(msg)
    sums = pair_sums(d[:, None], codes, n_groups)
    delta = float(sums.delta[0])
    n_b = n_c = None
    if binary:
        n11, n_b, n_c, n00 = paired_counts(a_arr, b_arr)
        variance = (n_b + n_c) / n - delta * delta
    else:
        scale = math.sqrt(float(np.mean(a_arr * a_arr))) + math.sqrt(float(np.mean(b_arr * b_arr)))
        variance = float(spread(float(sums.ss[0]) / (n - 1), scale))
    var = np.array([max(variance, 0.0)])

    # the IID test (the reported one without clusters; the IID check of the verdict with clusters)
    iid_method, iid_reason = choose_iid_test(binary, n, None if n_b is None or n_c is None else n_b + n_c, d)
    if cluster is None and method != "auto":
        iid_method, iid_reason = method, "requested"
    run = TESTS[iid_method].run(PairData(a_arr, b_arr, delta=delta, variance=variance, n=n, n_b=n_b, n_c=n_c,
                                         alternative=alternative, n_resamples=n_resamples, gen=gen))
    statistic, pvalue, iid_interval, ci_method, iid_method = (run.statistic, run.pvalue, run.interval,
                                                              run.interval_name, run.name)
    verdict = iid_verdict(np.array([delta]), var, n, np.array([pvalue]), alpha=alpha, power=power,
                          alternative=alternative, b=None if n_b is None else np.array([n_b]),
                          c=None if n_c is None else np.array([n_c]))
    warn_degenerate(var, np.array([delta]), binary)
    n_star, q, mde = float(verdict.n_star[0]), float(verdict.q[0]), float(verdict.mde[0])
    resolved, regime = bool(verdict.resolved[0]), str(verdict.regime[0])
    chosen, reason, interval = iid_method, iid_reason, iid_interval
    de = cluster_dof = se_cluster = None
    if cluster is not None:
        cv = cluster_verdict(sums, var, verdict.resolved, alpha=alpha, power=power, alternative=alternative,
                             design_effect=design_effect, method=cluster_method, seed=first)
        de, cluster_dof = float(cv.design_effect[0]), float(cv.df[0])
        n_star, q, mde, regime = float(cv.n_star[0]), float(cv.q[0]), float(cv.mde[0]), "cluster"
        chosen, reason, statistic, pvalue, interval, ci_method = _cluster_test(
            method, cv, a_arr, b_arr, codes=codes, delta=delta, design_effect=design_effect, n_resamples=n_resamples,
            confidence_level=confidence_level, alternative=alternative, gen=gen, sums=sums)
        se_cluster = (float(interval[1].standard_error) if interval[0] == "bootstrap"
                      else float(cv.se_test[0]) if cv.se_test is not None
                      else math.sqrt(float(cv.variance[0])))
        # the reported clustered test (the cluster t, or the cluster bootstrap on request) decides, and the
        # IID verdict must hold too
        resolved = bool(verdict_resolved(q, n_star, pvalue=pvalue, alpha=alpha)) and bool(verdict.resolved[0])

    why = verdict_reason(q, n_star, pvalue=pvalue, alpha=alpha, iid_resolved=bool(verdict.resolved[0]))
    es = effect_sizes(a_arr, b_arr)
    return Comparison(
        n=n, mean_a=float(a_arr.mean()), mean_b=float(b_arr.mean()), delta=delta, method=chosen,
        reason=reason, statistic=float(statistic), pvalue=float(pvalue), alternative=alternative,
        se_paired=es.se_paired, se_unpaired=es.se_unpaired, phi=es.phi, n_star=ceil_items(n_star),
        mde=mde, q=q, resolved=resolved, regime=regime, b=n_b, c=n_c, confidence_level=confidence_level,
        alpha=alpha, power=power, ci_method=ci_method, binary=binary,
        n_clusters=n_groups if cluster is not None else None, design_effect=de,
        design_effect_method=design_effect if cluster is not None else None, cluster_df=cluster_dof,
        verdict_reason=why, se_cluster=se_cluster, _interval=interval,
    )


def _compare_runs(a: Any, b: Any, *, method: str, cluster: Any, alternative: str, confidence_level: float,  # noqa: PLR0913
                  alpha: float, power: float, n_resamples: int | None, run_pairing: str, rng: SeedLike) -> Comparison:
    """:func:`compare` of two models with several runs each: the IID comparison of the run-averaged
    scores, then the run regime of :func:`llm_power.diagnose` (the same kernel: the gap's variance over
    items and runs on the run test's conservative Satterthwaite df, N*/q/MDE at these runs, runs needed at these items).
    """
    if cluster is not None:
        msg = ("compare takes either several runs or cluster labels, not both; diagnose reports the run and the "
               "cluster regimes side by side")
        raise ValueError(msg)
    block_a, block_b, run_pairing = check_run_pair(a, b, run_pairing=run_pairing)
    blocks = [block_a, block_b]
    iid = compare(blocks[0].mean(axis=1), blocks[1].mean(axis=1), method=method, alternative=alternative,
                  confidence_level=confidence_level, alpha=alpha, power=power, n_resamples=n_resamples, rng=rng)
    n = iid.n
    ms = crossed_mean_squares(blocks)
    d = ms.item_means[:, 0] - ms.item_means[:, 1]
    s2_d = float(np.var(d, ddof=1))
    zero, one = np.array([0]), np.array([1])
    pv = gap_run_variance(np.array([s2_d]), n, ms, zero, one, blocks if run_pairing == "matched" else None)
    rv = run_verdict(np.array([iid.delta]), np.array([s2_d]), pv.run_part, n, pv.df, np.array([iid.resolved]),
                     alpha=alpha, power=power, alternative=alternative)
    raw = runs_needed(np.array([iid.delta]), n, pv.s2_item, pv.s2_res, pv.run_a, pv.run_b, pv.res_a, pv.res_b,
                      alpha=alpha, power=power, alternative=alternative)
    needed = consistent_runs_needed(raw, rv.q, ms.runs[zero], ms.runs[one])
    df, variance = float(rv.df[0]), float(rv.variance[0])
    reason = (f"{ms.runs[0]:.0f} and {ms.runs[1]:.0f} runs: t test over items and runs (run-to-run variance "
              f"included, {df:.3g} df, conservative Satterthwaite); the IID test of the run means ({iid.method}) "
              "must hold too")
    return dataclasses.replace(
        iid, method="run_t", reason=reason, statistic=float(rv.statistic[0]), pvalue=float(rv.pvalue[0]),
        n_star=ceil_items(float(rv.n_star[0])), mde=float(rv.mde[0]), q=float(rv.q[0]), resolved=bool(rv.resolved[0]),
        verdict_reason=verdict_reason(float(rv.q[0]), float(rv.n_star[0]), pvalue=float(rv.pvalue[0]), alpha=alpha,
                                      iid_resolved=iid.resolved),
        regime="runs", ci_method=f"t over items and runs ({df:.3g} df)", run_pairing=run_pairing,
        runs_a=int(ms.runs[0]),
        runs_b=int(ms.runs[1]), run_df=df, se_runs=float(np.sqrt(variance)), runs_needed=float(needed[0]),
        _interval=("t", (iid.delta, variance, df)))


def _check_method(method: str, binary: bool, *, clustered: bool) -> None:
    """What the chosen test of the registry needs: 0/1 scores, or no cluster labels."""
    test = TESTS.get(method)
    if clustered and test is not None and not test.clusters:
        msg = (
            f"`method` {method!r} tests items as independent and cannot use `cluster`; use "
                         "'auto' or 'cluster_t' (cluster-robust t test) or 'bootstrap' (cluster bootstrap)."
        )
        raise ValueError(msg)
    if test is not None and test.binary_only and not binary:
        msg = (
            f"`method` {method!r} needs 0/1 scores; these scores are graded. "
                         "Use 'paired_t', 'bootstrap' or 'permutation'."
        )
        raise ValueError(msg)


def _cluster_test(method: str, cv: Any, a_arr: np.ndarray, b_arr: np.ndarray, *, codes: Any, delta: float,
                  design_effect: str, n_resamples: int | None, confidence_level: float, alternative: str,
                  gen: np.random.Generator, sums: Any) -> tuple[str, str, float, float, tuple[Any, ...], str]:
    """The clustered test of compare: the kernel's clustered test (``cv.method``: the cluster-robust t
    test, the cluster jackknife, the wild cluster bootstrap), or the cluster bootstrap on request.
    """
    if method == "bootstrap":
        b_count = DEFAULT_RESAMPLES if n_resamples is None else n_resamples
        boot = paired_bootstrap(a_arr, b_arr, n_resamples=b_count, cluster=codes, confidence_level=confidence_level,
                                alternative=alternative, rng=gen)
        return ("bootstrap", "requested: the cluster (block) bootstrap resamples whole clusters", boot.estimate,
                float(floor_pvalue(boot.percentile_pvalue())), ("bootstrap", boot), "cluster bootstrap percentile")
    df = float(cv.df[0])
    if cv.method == "wild":
        sizes, resid, _ = sums.clusters()
        reason = (f"items are clustered ({cv.n_clusters} clusters): restricted wild cluster bootstrap "
                  "(CR1-studentised), requested")
        spec = ("wild", (resid[:, 0] + sizes * delta, sizes, WILD_RESAMPLES, cv.seed))
        return ("cluster_wild", reason, float(cv.statistic[0]), float(cv.pvalue[0]), spec,
                "wild cluster bootstrap, inverted")
    if cv.method == "cv3":
        reason = f"items are clustered ({cv.n_clusters} clusters): cluster jackknife (CV3) t test, requested"
        return ("cluster_cv3", reason, float(cv.statistic[0]), float(cv.pvalue[0]),
                ("t", (delta, float(cv.variance[0]), df)), f"cluster jackknife t ({df:.3g} df)")
    reason = (f"items are clustered ({cv.n_clusters} clusters): cluster-robust t test "
              f"({DESIGN_EFFECTS[design_effect].label}, {df:.3g} df)" if method == "auto" else "requested")
    return ("cluster_t", reason, float(cv.statistic[0]), float(cv.pvalue[0]), ("t", (delta, float(cv.variance[0]), df)),
            f"cluster-robust t ({df:.3g} df)")


