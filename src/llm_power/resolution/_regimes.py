"""How each stress regime of a resolution report is computed (the entries of ``REGIMES`` in
:mod:`._registry` name these functions).

A regime is a small function from the context of :func:`llm_power.diagnose` (the ranked matrix,
the pairs' sufficient statistics and their IID verdict) and the checked options to its per-pair
columns, resolved flags and settings. Every regime only tightens the IID verdict.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.errors import DegenerateDataWarning
from .._kernel.crossed import consistent_runs_needed, gap_run_variance, runs_needed
from .._kernel.quantiles import upper_quantile, z_quantile
from .._kernel.resampled import cluster_resample_counts
from .._kernel.sufficient import PairSums, PairwiseStatistics
from .._kernel.verdict import Verdict, cluster_verdict, iid_verdict, resolved, run_verdict, t_interval
from ..multiplicity import adjust_pvalues
from ..sequential import anytime_critical_value, beta_mixture_log_evalue
from ._registry import REGIMES, Regime

__all__ = ["REGIMES", "Context", "Regime", "RegimeOutput", "regime_anytime", "regime_cluster", "regime_corrected",
           "regime_runs", "tie_groups_and_rank_intervals"]


@dataclass(frozen=True)
class FineClusters:
    """A clustering nested in the coarse one: per fine cluster its size, its coarse cluster's code and
    each model's sum of scores, shape (H, models in the caller's order).
    """

    sizes: np.ndarray
    parent: np.ndarray
    sums: np.ndarray


@dataclass
class Context:
    """Everything the regimes need: the number of items, the ranking (``order``: the source's columns
    by rank), the pairs (in ranks), their sums and the IID verdict.
    """

    n: int  # items
    names: list[Any]
    order: np.ndarray
    pairs: str
    st: PairwiseStatistics
    pair_idx: np.ndarray
    sums: PairSums
    var: np.ndarray
    pvalue: np.ndarray
    tests: Any  # per pair: an array of names, or (names, codes) for 0/1 pairs
    b: np.ndarray | None
    c: np.ndarray | None
    verdict: Any
    alpha: float
    power: float
    confidence_level: float
    gen: np.random.Generator
    columns: dict[str, Any]
    settings: dict[str, Any]
    model_ci: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))  # per ranked model
    model_se: np.ndarray = field(default_factory=lambda: np.empty(0))  # per ranked model, the interval's SE
    model_sd: np.ndarray = field(default_factory=lambda: np.empty(0))  # per ranked model, SD of the item scores
    #: several runs per model: (crossed mean squares, what names a run, the runs' blocks when matched)
    runs: tuple[Any, str, Any, bool] | None = None  # (mean squares, runs_by, matched blocks, 0/1 scores)
    wild_seed: int | None = None  # the wild cluster bootstrap's weights (wild_decision.wild_seed of the caller's rng)
    fine: FineClusters | None = None  # a finer clustering nested in the coarse one (diagnose's cluster_fine)
    scores: np.ndarray | None = None  # the items x models matrix in memory (None: item shards)


@dataclass
class RegimeOutput:
    """What a regime adds to the report: per-pair columns, its resolved flags, settings, extras."""

    columns: dict[str, Any]
    resolved: np.ndarray
    settings: dict[str, Any] = field(default_factory=dict)
    robustness: dict[str, Any] | None = None


def regime_corrected(ctx: Context, options: Any) -> RegimeOutput:
    """Multiplicity: the real Bonferroni / Holm step-down / BH step-up procedures over the family."""
    correction = options.correction
    n = ctx.n
    alpha_prime, flags, corr = _corrected(ctx.sums.delta, ctx.var, n, ctx.pvalue, ctx.alpha, ctx.power,
                                          correction, ctx.b, ctx.c)
    flags &= ctx.verdict.resolved
    columns = {"pvalue_adjusted": adjust_pvalues(ctx.pvalue, method=correction), "alpha_corrected": alpha_prime,
               "n_star_corrected": corr.n_star, "q_corrected": corr.q, "resolved_corrected": flags}
    return RegimeOutput(columns=columns, resolved=flags, settings={"family_size": ctx.pair_idx.shape[0],
                                                                   "family_dependence": _family_dependence(ctx)})


#: the correlations between the pairs' statistics are measured for at most this many pairs and models
#: (a pairs x pairs matrix; one models x models product over the items)
MAX_DEPENDENCE_PAIRS, MAX_DEPENDENCE_MODELS = 2_000, 1_000


def _family_dependence(ctx: Context) -> dict[str, Any]:
    """The correlations between the family's paired statistics (:func:`llm_power._kernel.family.
    correlation_from_covariance`, over items) and whether BH's positive-dependence (PRDS) assumption
    can hold: adjacent gaps that share a model correlate negatively (issue 45).
    """
    from .._kernel.family import correlation_from_covariance

    n_pairs = ctx.pair_idx.shape[0]
    x = ctx.scores
    used = np.unique(ctx.pair_idx)
    out: dict[str, Any] = {"n_pairs": int(n_pairs), "over": "items"}
    if x is None:
        return {**out, "computed": False, "why": "the scores are item shards (the Dask engine)"}
    if n_pairs > MAX_DEPENDENCE_PAIRS or used.size > MAX_DEPENDENCE_MODELS:
        return {**out, "computed": False,
                "why": f"more than {MAX_DEPENDENCE_PAIRS:,} pairs or {MAX_DEPENDENCE_MODELS:,} models"}
    if n_pairs < 2:
        return {**out, "computed": False, "why": "one pair"}
    cols = ctx.order[used]  # the caller's columns of the models the pairs use
    block = np.asarray(x[:, cols], dtype=float)
    block -= block.mean(axis=0)
    cov = block.T @ block / max(ctx.n - 1, 1)
    where = np.searchsorted(used, ctx.pair_idx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # identical models: NaN, and PRDS not judged
        fam = correlation_from_covariance(cov, where[:, 0], where[:, 1])
    k = fam.corr.shape[0]
    return {**out, "computed": True, "n_correlations": k * (k - 1) // 2, "minimum": fam.minimum,
            "median": fam.median, "maximum": fam.maximum, "share_negative": fam.share_negative,
            "prds_plausible": fam.prds_plausible}


def regime_cluster(ctx: Context, options: Any) -> RegimeOutput:
    """Clustering: cluster-robust test, interval, design effect and N*/q/MDE; robustness of the count."""
    sums, n = ctx.sums, ctx.n
    design_effect = options.design_effect
    cv = cluster_verdict(sums, ctx.var, ctx.verdict.resolved, alpha=ctx.alpha, power=ctx.power,
                         alternative="two-sided", design_effect=design_effect, method=options.cluster_method,
                         confidence_level=ctx.confidence_level, seed=ctx.wild_seed)
    lo, hi = cv.ci_low, cv.ci_high  # the clustered test's own interval
    columns = {"icc": cv.icc, "design_effect": cv.design_effect, "design_effect_robust": cv.design_effect_robust,
               "design_effect_cr1": cv.design_effect_cr1, "cluster_df": cv.df,
               "design_effect_anova": cv.design_effect_anova, "design_effect_paper": cv.design_effect_paper,
               "pvalue_cluster": cv.pvalue, "cluster_ci_low": lo, "cluster_ci_high": hi,
               "n_star_cluster": cv.n_star, "q_cluster": cv.q, "mde_cluster": cv.mde, "resolved_cluster": cv.resolved}
    level, loco = _cluster_level(sums, ctx.st.binary, alpha=ctx.alpha)
    columns.update(loco)
    if ctx.fine is not None:
        level["coarse_vs_fine"], columns["cluster_fine_pvalue"] = _coarse_vs_fine(ctx, ctx.fine, alpha=ctx.alpha)
    sizes = sums.clusters()[0]
    g = sizes.size
    settings = {"n_clusters": g, "cluster_level": level, "cluster_caution": cluster_caution(g, ctx.st.binary, sizes),
                "mean_cluster_size": float(n / g),
                "kish_cluster_size": float(np.sum(sizes ** 2) / n),
                "design_effect": design_effect, "cluster_method": cv.method,
                "cluster_df_min": float(np.min(cv.df))}
    robustness = None
    b_count = options.cluster_resamples
    # the shown gaps -- with every pair, the adjacent ones (resampling all M(M-1)/2 pairs cost 80x the
    # IID diagnosis at 1,000 models)
    keep = (np.flatnonzero(ctx.pair_idx[:, 1] == ctx.pair_idx[:, 0] + 1) if ctx.pairs == "all"
            else np.arange(ctx.pair_idx.shape[0]))
    if options.cluster_nstar_sims:
        settings["cluster_nstar"], columns["n_star_cluster_bootstrap"], columns["design_effect_bootstrap"] = (
            _bootstrap_n_star(ctx, keep, cv.method, options.cluster_nstar_sims))
    if b_count:  # the robustness of the count the report leads with, over the shown gaps
        shown = PairSums(n=sums.n, delta=sums.delta[keep], ss=sums.ss[keep], sizes=sums.sizes,
                         resid=None if sums.resid is None else sums.resid[:, keep],
                         resid_sq=None if sums.resid_sq is None else sums.resid_sq[:, keep])
        counts, _, _ = cluster_resample_counts(shown, ctx.st.binary, b_count, ctx.gen, cv.df[keep], alpha=ctx.alpha,
                                               power=ctx.power, design_effect=design_effect,
                                               confidence_level=ctx.confidence_level, intervals=False)
        robustness = {"n_resamples": int(b_count), "pairs": "adjacent" if ctx.pairs == "all" else ctx.pairs,
                      "of_all_pairs": ctx.pairs == "all",
                      "n_pairs": int(keep.size), "observed": int(np.sum(~cv.resolved[keep])),
                      "mean": float(counts.mean()), "median": float(np.median(counts)),
                      "q05": float(np.quantile(counts, 0.05)), "q95": float(np.quantile(counts, 0.95)),
                      "distribution": np.bincount(counts, minlength=keep.size + 1).tolist()}
    return RegimeOutput(columns=columns, resolved=cv.resolved, settings=settings, robustness=robustness)


#: cluster sizes this unequal (coefficient of variation) are the simulations' "very unequal" pattern
#: (20 to 1,000 items, CV 1.04-1.14; MMLU-Pro's categories: 0.22)
VERY_UNEQUAL_CV = 0.8


def cluster_caution(n_clusters: int, binary: bool, sizes: np.ndarray | None = None) -> str | None:
    """Where no clustered test held its level in the simulations of docs/clusters.md (144 designs),
    the words that say so for this design; None where one did.
    """
    cv = float(np.std(sizes) / np.mean(sizes)) if sizes is not None and np.size(sizes) else 0.0
    if binary and 9 <= n_clusters <= 10 and cv >= VERY_UNEQUAL_CV:
        return (f"with {n_clusters} clusters of very unequal sizes (coefficient of variation {cv:.2f}) no clustered "
                "test held its 5% level in every simulated design with 10 (CR2 conservative down to 2.6%, the wild "
                "bootstrap up to 8.2%; docs/clusters.md)")
    if n_clusters < 8:
        return (f"with {n_clusters} clusters no clustered test held its 5% level in every simulated design "
                "(CR2 conservative down to 1.4%, the wild bootstrap up to 6.8%; docs/clusters.md)")
    if not binary and n_clusters <= 40:
        return (f"on graded scores with {n_clusters} clusters no clustered test held its 5% level when the "
                "cluster effects were skewed (6-9% with 20 clusters or fewer, about 6% with 40; docs/clusters.md): "
                "read the clustered verdict as approximate")
    return None


#: the clustering-level test and leave-one-cluster-out are computed for at most this many pairs (G
#: passes of the cluster-robust variance over the pairs each)
MAX_LEVEL_PAIRS = 5_000


def _cluster_level(sums: PairSums, binary: bool, *, alpha: float) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Does clustering matter, and does any one cluster carry a gap? Per pair: the score-variance test
    of "items are independent" against "the clusters are" (MacKinnon, Nielsen & Webb 2023, Box's scaled
    chi-square reference; 0/1 pairs, whose power sums follow from the per-cluster counts), summarised
    over the family by the Cauchy combination; and how many clusters, dropped alone, flip the gap's
    sign or its clustered verdict (the CR2 t test). Up to :data:`MAX_LEVEL_PAIRS` pairs.
    """
    from .._kernel.cluster_level import family_level, item_level_test, leave_one_cluster_out

    sizes, resid, resid_sq = sums.clusters()
    n_pairs = resid.shape[1]
    nan = np.full(n_pairs, np.nan)
    if n_pairs > MAX_LEVEL_PAIRS or sizes.size < 3:
        why = (f"more than {MAX_LEVEL_PAIRS:,} pairs" if n_pairs > MAX_LEVEL_PAIRS else "fewer than 3 clusters")
        return {"computed": False, "why": why}, {"cluster_level_pvalue": nan, "loco_sign_flips": nan,
                                                 "loco_verdict_flips": nan}
    s_g = resid + sizes[:, None] * sums.delta
    q_g = np.maximum(resid_sq + 2.0 * sums.delta * s_g - sizes[:, None] * sums.delta ** 2, 0.0)  # sum D^2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # a zero gap: NaN, said by the regime's notes
        loo = leave_one_cluster_out(s_g, q_g, sizes, alpha=alpha)
        pvalue = nan
        if binary:  # D in {-1, 0, 1}: D^3 = D, D^4 = D^2
            pvalue = np.asarray(item_level_test(np.stack([s_g, q_g, s_g, q_g]), sizes).pvalue, dtype=float)
            pvalue = pvalue.reshape(-1)
    level: dict[str, Any] = {"computed": True, "test": "items vs clusters, score variance (Box chi-square)"}
    if binary:
        fam = family_level(pvalue, alpha=alpha)
        level.update(share_rejected=fam.share_rejected, combined_pvalue=fam.combined_pvalue,
                     n_estimable=fam.n_estimable)
    else:
        level.update(test=None, why="graded scores: the test needs third and fourth powers of the differences")
    return level, {"cluster_level_pvalue": pvalue,
                   "loco_sign_flips": np.asarray(loo.sign_flips, dtype=float).reshape(-1),
                   "loco_verdict_flips": np.asarray(loo.verdict_flips, dtype=float).reshape(-1)}


#: N* by the cluster bootstrap is simulated for at most this many shown gaps (about 0.04 CPU-s each)
MAX_NSTAR_PAIRS = 100


def _bootstrap_n_star(ctx: Context, keep: np.ndarray, method: str,
                      n_sims: int) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """N* of each shown gap by the cluster bootstrap (:func:`llm_power._kernel.cluster_nstar.bootstrap_n_star`):
    the clustered test of ``method`` simulated on benchmarks of whole clusters drawn from the observed
    ones, over the uncertainty of their between-cluster variance (``pilot="expected"``); the design
    effect it implies beside the formula's. Draws from their own stream of the caller's seed. The wild
    bootstrap's power is the CR2 test's, as its formula N* is (each simulated benchmark would need its
    own bootstrap: minutes a gap).
    """
    from .._kernel.cluster_nstar import bootstrap_n_star

    method = "cr2" if method == "wild" else method
    n_pairs = ctx.pair_idx.shape[0]
    n_star, de = np.full(n_pairs, np.nan), np.full(n_pairs, np.nan)
    summary: dict[str, Any] = {"test": method, "n_sims": int(n_sims), "pilot": "expected", "n_pairs": int(keep.size),
                               "pairs": "adjacent" if ctx.pairs == "all" else ctx.pairs}
    if keep.size > MAX_NSTAR_PAIRS:
        summary.update(computed=False, why=f"more than {MAX_NSTAR_PAIRS} shown gaps (--top K shows fewer)")
        return summary, n_star, de
    sums = ctx.sums
    sizes, resid, resid_sq = sums.clusters()
    delta = sums.delta[keep]
    s_g = resid[:, keep] + sizes[:, None] * delta
    q_g = np.maximum(resid_sq[:, keep] + 2.0 * delta * s_g - sizes[:, None] * delta ** 2, 0.0)  # sum D^2
    seed = np.random.SeedSequence([0 if ctx.wild_seed is None else int(ctx.wild_seed), 45])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # no gap or no variation: inf / NaN, said below
        res = bootstrap_n_star(s_g, q_g, sizes, alpha=ctx.alpha, power=ctx.power, test=method, n_sims=n_sims,
                               ddof=0 if ctx.st.binary else 1, rng=np.random.default_rng(seed))
    n_star[keep] = np.ceil(np.asarray(res.n_star, dtype=float).reshape(-1))
    de[keep] = np.asarray(res.design_effect, dtype=float).reshape(-1)
    summary.update(computed=True, mean_cluster_size=float(sizes.mean()),
                   n_clusters_needed=np.asarray(res.n_clusters, dtype=float).reshape(-1).tolist(),
                   achieved_power=np.asarray(res.achieved_power, dtype=float).reshape(-1).tolist())
    return summary, n_star, de


#: wild bootstrap draws of the coarse-vs-fine test (its p-value is at least 1/1,000)
FINE_RESAMPLES = 999


def _coarse_vs_fine(ctx: Context, fine: FineClusters, *, alpha: float) -> tuple[dict[str, Any], np.ndarray]:
    """Does the coarse clustering matter beyond the fine one nested in it? Per pair the score-variance
    test of MacKinnon, Nielsen & Webb (2023) with its wild bootstrap reference (the normal one
    over-rejects with few clusters: docs/clusters.md), from the fine clusters' sums of each model
    (the pair's are their difference), combined over the family; up to :data:`MAX_LEVEL_PAIRS` pairs.
    Its draws come from their own stream of the caller's seed: the other regimes' numbers do not
    change when it is asked for.
    """
    from .._kernel.cluster_level import clustering_level_test, family_level

    n_pairs = ctx.pair_idx.shape[0]
    summary: dict[str, Any] = {"fine_clusters": int(fine.sizes.size), "n_resamples": FINE_RESAMPLES,
                               "test": "coarse vs fine clusters, score variance (wild bootstrap)"}
    if n_pairs > MAX_LEVEL_PAIRS:
        summary.update(computed=False, why=f"more than {MAX_LEVEL_PAIRS:,} pairs")
        return summary, np.full(n_pairs, np.nan)
    i, j = ctx.order[ctx.pair_idx[:, 0]], ctx.order[ctx.pair_idx[:, 1]]  # the pairs' columns of the caller
    diff = fine.sums[:, i] - fine.sums[:, j]
    seed = np.random.SeedSequence([0 if ctx.wild_seed is None else int(ctx.wild_seed), 44])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # a pair without variation: NaN, not a finding
        pvalue = np.asarray(clustering_level_test(diff, fine.sizes, fine.parent, n_resamples=FINE_RESAMPLES,
                                                  rng=np.random.default_rng(seed)).pvalue, dtype=float).reshape(-1)
    fam = family_level(pvalue, alpha=alpha)
    summary.update(computed=True, share_rejected=fam.share_rejected, combined_pvalue=fam.combined_pvalue,
                   n_estimable=fam.n_estimable)
    return summary, pvalue


def regime_runs(ctx: Context, _options: Any) -> RegimeOutput:
    """Run noise (seeds, templates, engines): the gap's variance over items and runs, its t test on
    the run test's (conservative Satterthwaite) df, N*/q/MDE at the current runs and the runs needed at
    the current items.
    """
    if ctx.runs is None:
        msg = "the run regime needs several runs per model"
        raise ValueError(msg)
    (ms, runs_by, blocks, binary_runs), n = ctx.runs, ctx.n  # blocks: matched runs (shared templates), else None
    i, j = ctx.order[ctx.pair_idx[:, 0]], ctx.order[ctx.pair_idx[:, 1]]  # the pairs' columns of the source
    s2_d = ctx.sums.ss / (n - 1)  # sample variance of the run-averaged differences (ddof 1, 0/1 or not)
    pv = gap_run_variance(s2_d, n, ms, i, j, blocks)
    rv = run_verdict(ctx.sums.delta, s2_d, pv.run_part, n, pv.df, ctx.verdict.resolved, alpha=ctx.alpha,
                     power=ctx.power, alternative="two-sided")
    lo, hi = t_interval(ctx.sums.delta, rv.variance, rv.df, ctx.confidence_level, "two-sided")
    needed = consistent_runs_needed(
        runs_needed(ctx.sums.delta, n, pv.s2_item, pv.s2_res, pv.run_a, pv.run_b, pv.res_a, pv.res_b,
                    alpha=ctx.alpha, power=ctx.power), rv.q, ms.runs[i], ms.runs[j])
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(rv.variance > 0, pv.run_part / rv.variance, 0.0)
    columns = {"se_run": np.sqrt(rv.variance), "run_df": rv.df, "pvalue_run": rv.pvalue, "run_ci_low": lo,
               "run_ci_high": hi, "n_star_run": rv.n_star, "q_run": rv.q, "mde_run": rv.mde,
               "resolved_run": rv.resolved, "run_share": share, "runs_needed": needed}
    runs = ms.runs[ctx.order]
    fewest, most = int(runs.min()), int(runs.max())
    # the run-averaged scores of 0/1 runs are shares of runs: shown in points, as the runs' own scores
    settings = {"points": bool(binary_runs), "runs_by": runs_by, "runs_min": fewest, "runs_max": most,
                "runs_span": f"{fewest}" if fewest == most else f"{fewest}-{most}",
                "run_pairing": "matched" if blocks is not None else "independent",
                "run_sd": [float(v) for v in np.sqrt(ms.var_run[ctx.order])],
                "run_noise_exceeds_gap": int(np.sum(~np.isfinite(rv.n_star) & (ctx.sums.delta != 0)))}
    return RegimeOutput(columns=columns, resolved=rv.resolved, settings=settings)


def regime_anytime(ctx: Context, _options: Any) -> RegimeOutput:
    """Anytime-valid: the normal-mixture boundary replaces z_{1-alpha/2} in K, so N* grows and q
    shrinks by K / K_anytime (for the exact conditional N* of few discordant items too); Beta-mixture
    e-values for 0/1 pairs.
    """
    z_b = float(z_quantile(ctx.power))
    z_any, r = anytime_critical_value(ctx.alpha)
    k, k_any = ctx.settings["k_factor"], (z_any + z_b) ** 2
    n_star, q = np.asarray(ctx.verdict.n_star, dtype=float), np.asarray(ctx.verdict.q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_star_any = np.where(np.isfinite(n_star), n_star * k_any / k, n_star)
    q_any = q * k / k_any  # never above q: the boundary is wider than z_{1-alpha/2}
    flags = resolved(q_any, n_star_any, rejected=ctx.verdict.resolved)  # the IID test must reject, and more
    columns = {"n_star_anytime": n_star_any, "q_anytime": q_any, "resolved_anytime": flags}
    settings: dict[str, Any] = {"z_anytime": z_any, "z_fixed": float(upper_quantile(ctx.alpha / 2)),
                                "mixture_ratio": r}
    if ctx.b is not None and ctx.c is not None:  # 0/1 scores
        # Beta(a, a) mixture tuned at this benchmark's discordant count (rho = 2a + 1 = r m)
        a_mix = np.maximum(0.5, (r * np.maximum(ctx.b + ctx.c, 1) - 1) / 2)
        columns["e_value"] = np.exp(np.minimum(beta_mixture_log_evalue(ctx.b, ctx.c, a=a_mix), 700.0))
        settings["e_value_note"] = ("Beta-mixture e-value with the prior tuned to the observed number of "
                                    "discordant items: a post-hoc evidence summary, not a stopping rule")
    return RegimeOutput(columns=columns, resolved=flags, settings=settings)


def _corrected(delta: np.ndarray, var: np.ndarray, n: int, pvalue: np.ndarray, alpha: float,  # noqa: PLR0917
               power: float, correction: str, b: np.ndarray | None,
               c: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, Verdict]:
    """Per-pair levels and resolved flags of the multiplicity procedure (Bonferroni, Holm, BH, BY)."""
    m = pvalue.size
    order = np.argsort(pvalue, kind="stable")
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(1, m + 1)
    if correction == "bonferroni":
        alpha_prime = np.full(m, alpha / m)
        corr = iid_verdict(delta, var, n, pvalue, alpha=alpha_prime, power=power, alternative="two-sided", b=b, c=c)
        return alpha_prime, corr.resolved.copy(), corr
    if correction == "holm":
        alpha_prime = alpha / (m - rank + 1)
        corr = iid_verdict(delta, var, n, pvalue, alpha=alpha_prime, power=power, alternative="two-sided", b=b, c=c)
        passed = np.logical_and.accumulate(corr.resolved[order])  # step down: stop at the first failure
        resolved = np.empty(m, dtype=bool)
        resolved[order] = passed
        return alpha_prime, resolved, corr
    # Benjamini-Hochberg step-up: the largest j whose pair passes at j alpha / m; every pair up to j
    # is then judged at that level (and must still have q >= 1 there); Benjamini-Yekutieli: the same
    # at alpha / (1 + 1/2 + ... + 1/m)
    if correction == "by":
        alpha = alpha / float(np.sum(1.0 / np.arange(1, m + 1)))
    alpha_prime = rank * alpha / m
    corr = iid_verdict(delta, var, n, pvalue, alpha=alpha_prime, power=power, alternative="two-sided", b=b, c=c)
    passing = np.nonzero(corr.resolved[order])[0]
    if passing.size == 0:
        return alpha_prime, np.zeros(m, dtype=bool), corr
    j_star = int(passing[-1]) + 1
    alpha_prime = np.where(rank <= j_star, j_star * alpha / m, alpha_prime)
    corr = iid_verdict(delta, var, n, pvalue, alpha=alpha_prime, power=power, alternative="two-sided", b=b, c=c)
    return alpha_prime, corr.resolved & (rank <= j_star), corr


def tie_groups_and_rank_intervals(m_models: int, pair_idx: np.ndarray, resolved: np.ndarray,
                                  complete: bool) -> tuple[list[list[int]], dict[int, tuple[int, int]]]:
    """Tie groups and rank intervals (1-based) of models in rank order, from the verdicts of the pairs
    ``pair_idx`` (ranks, a above b).

    A tie group is a maximal run of consecutive ranks holding no resolved pair (runs of one model
    are not groups); groups may overlap ("A ≈ B", "B ≈ C" where A is resolved above C). With
    ``complete`` verdicts (every pair known) a model's rank interval is [1 + models resolved above
    it, M - models resolved below it]. Otherwise only the pairs given are known (adjacent pairs):
    a pair not given counts as a boundary of every group (so a group is one unresolved adjacent
    pair), and a model is known above another only through a chain of resolved adjacent pairs.
    """
    flags = np.asarray(resolved, dtype=bool)
    i, j = np.asarray(pair_idx[:, 0], dtype=np.int64), np.asarray(pair_idx[:, 1], dtype=np.int64)
    # first[a]: the nearest rank below a that a run starting at or above a cannot reach
    first = np.full(m_models, m_models, dtype=np.int64)
    if complete:
        np.minimum.at(first, i[flags], j[flags])
    else:  # adjacent pairs only: the pair two ranks down is unknown, so it closes every run
        first = np.minimum(np.arange(m_models) + 2, m_models)
        adj = (j == i + 1)
        np.minimum.at(first, i[adj & flags], j[adj & flags])
    reach = np.minimum.accumulate(first[::-1])[::-1] - 1  # the last rank a run starting at a can hold
    groups = [list(range(a, int(reach[a]) + 1)) for a in range(m_models)
              if reach[a] > a and (a == 0 or reach[a - 1] < reach[a])]
    if complete:
        above = np.bincount(j[flags], minlength=m_models)  # models resolved above each model
        below = np.bincount(i[flags], minlength=m_models)
        intervals = {g: (int(above[g] + 1), int(m_models - below[g])) for g in range(m_models)}
        return groups, intervals
    step = np.zeros(max(m_models - 1, 0), dtype=bool)  # step[a]: the adjacent pair (a, a + 1) is resolved
    adj = (j == i + 1) & flags
    step[i[adj]] = True
    # a model is known above g through an unbroken chain of resolved adjacent pairs: the run of
    # resolved steps just above g, and just below it
    up = np.zeros(m_models, dtype=np.int64)
    down = np.zeros(m_models, dtype=np.int64)
    for g in range(1, m_models):
        up[g] = up[g - 1] + 1 if step[g - 1] else 0
    for g in range(m_models - 2, -1, -1):
        down[g] = down[g + 1] + 1 if step[g] else 0
    intervals = {g: (int(up[g] + 1), int(m_models - down[g])) for g in range(m_models)}
    return groups, intervals
