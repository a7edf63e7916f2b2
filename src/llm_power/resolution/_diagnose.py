"""Leaderboard resolution: which displayed gaps can the benchmark actually resolve?

:func:`diagnose` takes an items x models score matrix, ranks the models, and for each adjacent
(or every) pair reports the gap, its paired p-value, the items N* needed to resolve a gap that
size, and q = N/N* -- then stresses the verdict under multiplicity, item clustering and
anytime-valid testing, each side by side with the IID verdict.

Everything is computed from sufficient statistics: for 0/1 scores the 2x2 tables of all pairs
come from one matrix product of the 0/1 matrix with itself; per-cluster sums of D and D^2 from
per-cluster products. No loop over items, and none over pairs on the hot path.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.clusters import coarse_of_fine, code_labels, require_clusters
from .._core.options import CORRECTIONS  # one list, shared with the command line
from .._core.params import public
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_score_matrix
from .._kernel.binary_pairs import binary_pair_columns
from .._kernel.crossed import crossed_mean_squares, model_run_variance
from .._kernel.quantiles import level_quantile
from .._kernel.ranks import rank_order
from .._kernel.sizes import ceil_items_array, k_factor
from .._kernel.sufficient import PairSums, PairwiseStatistics, pairwise_statistics
from .._kernel.variance import DESIGN_EFFECTS, mean_variance_from_sums
from .._kernel.verdict import (
    CLT_MIN_ITEMS,
    REGIME_NAMES,
    Verdict,
    choose_iid_test,
    floor_pvalue,
    iid_verdict,
    paired_t_interval,
    paired_t_test,
    spread,
    t_interval,
    warn_degenerate,
)
from .._kernel.wild_decision import check_wild_work, wild_decision, wild_seed
from ..intervals import proportion_ci
from ..matrix import RunScores, ScoreMatrix, ScoreSource
from ..paired import permutation_interval
from ..planning import calibrate  # re-exported: it lived here before 0.1
from ._columns import PairColumns, pair_indices
from ._regimes import Context, FineClusters, RegimeOutput, tie_groups_and_rank_intervals
from ._registry import REGIMES, DiagnoseOptions, headline_key
from ._results import Diagnosis, Held

__all__ = ["CORRECTIONS", "DESIGN_EFFECTS", "calibrate", "diagnose",
           "diagnose_source", "pairwise_statistics"]


# =================================================================================================
# diagnose
# =================================================================================================

@public
def diagnose(scores: Any = None, *, models: Any = None, cluster: Any = None, runs: Any = None, options: Any = None,  # noqa: PLR0913
             rng: SeedLike = None, cluster_fine: Any = None, **settings: Any) -> Diagnosis:
    r"""Leaderboard resolution report for an items x models score matrix.

    Parameters
    ----------
    scores : array_like or DataFrame, shape (n_items, n_models); or RunScores
        Per-item scores (0/1 correctness or graded), every model on every item. Several runs per
        model (a :class:`~llm_power.matrix.RunScores` from :func:`~llm_power.read_runs`, or an
        items x runs x models array) add the run regime (see ``runs``).
    models : sequence of str, optional
        Model names (default: DataFrame columns or ``model_0``, ...).
    cluster : array_like, optional
        One cluster label per item (subject, source). Adds the clustering stress test: a
        cluster-robust p-value, interval, design effect and N*/q/MDE per pair. NaN/None/empty
        labels are a :class:`~llm_power.DataError`; fewer than 2 clusters a ValueError; fewer
        than 30 a :class:`FewClustersWarning`.
    cluster_fine : array_like, optional
        A finer clustering nested in ``cluster`` (MMLU-Pro's 91 sources inside its 14 categories),
        one label per item: beside the clustered regime, the coarse-vs-fine score-variance test
        (MacKinnon, Nielsen & Webb 2023, wild bootstrap reference) of each shown gap -- does the
        coarse level matter beyond the fine one? (``cluster_fine_pvalue``; ``settings["cluster_level"]
        ["coarse_vs_fine"]``; docs/clusters.md). A fine cluster with items in two coarse ones is a
        :class:`~llm_power.DataError`.
    runs : RunScores, DataFrame or array_like of shape (n_items, n_runs, n_models), optional
        Several runs per model (seeds, prompt templates, engines; at least 2 each). Every other
        regime sees each item's mean over the model's runs; the **run regime** adds the run-to-run
        variance of each model's score: the gap's standard error sqrt(sigma_D^2/N + s2_run,A/R_A +
        s2_run,B/R_B) on the run test's (conservative Satterthwaite) df, its t test and interval, N* at the current runs
        (infinite when run noise alone exceeds the gap: more items cannot resolve it), q, MDE, and
        the runs per model that would resolve it at the current items (``runs_needed``;
        :mod:`llm_power.runs`). A DataFrame is a long table ``model, run, item, score[, cluster]``.
        A RunScores or a 3-d array given as ``scores`` is the same.
    options : DiagnoseOptions, optional
        The options as one checked, frozen object (:class:`~llm_power.DiagnoseOptions`); keywords
        given beside it take their place.
    rng : None, int or numpy.random.Generator
        The cluster resamples and the permutation tests of small graded benchmarks.
    **settings
        The options, by keyword -- each declared once by the regime it belongs to
        (:data:`~llm_power.resolution.REGIMES`), with its check and command-line flag:

        pairs : {"adjacent", "all"}, default "adjacent"
            Adjacent ranks (what a leaderboard displays) or every pair.
        alpha, power : float, default 0.05, 0.8
            Resolution thresholds (``power`` above ``alpha``).
        confidence_level : float, default 0.95
            Level of every interval reported: pair intervals, cluster intervals, cluster-bootstrap
            intervals and the per-model intervals.
        method : {"wald"}, default "wald"
            N* = K sigma_D^2 / delta^2 with the plug-in sigma_D^2 (the resolution paper's N*); 0/1
            pairs with fewer than 25 discordant items use the exact conditional McNemar N*.
        top : int, optional
            Report only the ``top`` best models (by mean score; at least 2).
        max_pairs : int, default 200,000
            Refuse (before allocating) a report with more pairs: ``pairs="all"`` grows with the
            square of the number of models (3,000 models: 4.5 million pairs).
        correction : {"bonferroni", "holm", "bh", "by"}, optional
            Multiplicity stress test across the family of pairs, as the real procedures: Bonferroni
            at alpha/m; Holm step-down (the j-th smallest p-value at alpha/(m - j + 1), stopping at
            the first pair that fails); Benjamini-Hochberg step-up (every pair up to the largest j
            whose p-value and q pass at j alpha/m, each judged at that level); Benjamini-Yekutieli,
            BH at alpha / (1 + 1/2 + ... + 1/m), whose false discovery rate holds under any
            dependence. N* at the per-pair level alpha' grows by
            ((z_{1-alpha'/2} + z_{1-beta}) / (z_{1-alpha/2} + z_{1-beta}))^2. Beside it
            ``settings["family_dependence"]``: the correlations between the pairs' statistics (up to
            2,000 pairs of up to 1,000 models), and whether BH's positive-dependence (PRDS)
            assumption can hold; the report says so where it cannot.
        design_effect : {"robust", "cr1", "anova", "paper"}, default "robust"
            The design effect of the clustering regime: measured from the bias-reduced
            cluster-robust variance CR2 (= CR1 for equal cluster sizes) with Imbens-Kolesar degrees
            of freedom (the default); CR1 with G - 1 df; the ANOVA ICC with Kish's cluster size; or
            the paper's mean-size form (for reproduction only). All four are reported per pair.
        cluster_resamples : int, default 1000
            Resamples of the clusters for the robustness of the clustered unresolved count and the
            cluster-bootstrap interval of each gap (0 to skip; at most 1,000,000).
        anytime : bool, default False
            Anytime-valid stress test: z_{1-alpha/2} is replaced by the normal-mixture boundary in
            z units (3.04 at alpha = 0.05; :mod:`llm_power.sequential`), the critical value a
            continuously monitored leaderboard must use. For 0/1 data the Beta-mixture e-value of
            each pair is reported too.
        run_pairing : {"auto", "independent", "matched"}, default "auto"
            How the runs of two models relate: ``"independent"`` (seeds, engines),
            ``"matched"`` (prompt templates shared by every model: the gap's variance comes from
            the per-run differences, so a template's effect common to both models cancels), or
            ``"auto"``: matched when ``runs.runs_by == "template"`` and every model has the same
            runs.

    Returns
    -------
    Diagnosis
        The rankings (simultaneous rank intervals, the winner corrected for selection, the items
        that flip each gap) are functions of it: :func:`~llm_power.rank_intervals`,
        :func:`~llm_power.winners_curse`, :func:`~llm_power.fragility`, and
        :func:`~llm_power.rank_report` for all three.

    Notes
    -----
    Per pair (A ranked above B): delta = mean_A - mean_B, and the same test, interval and
    verdict as :func:`compare` gives for that pair (``llm_power._kernel.verdict``): McNemar (exact
    when b + c < 25, else continuity-corrected) with Newcombe's interval for 0/1 scores, the
    paired t test and interval for graded scores (n < 30: paired t or the permutation test by
    a Shapiro-Wilk check). N* = K sigma^2/delta^2 (exact conditional McNemar N* for few
    discordant items), MDE = sqrt(K sigma^2/N), q = N/N*. A pair is **resolved** when q >= 1
    AND its test rejects at alpha; every stress test only tightens (its verdict also needs the
    IID one). Clustering: V_CR2 = sum_g (S_g - m_g delta)^2 / (1 - m_g/N) / N^2 (= the CR1
    G/(G-1) sum_g (S_g - m_g delta)^2 / N^2 for equal sizes), DE = V/(sigma^2/N), cluster t test
    and interval with nu df (G - 1 for equal sizes, Imbens-Kolesar for unequal ones),
    N*_cluster = max(DE, 1) K_nu sigma^2/delta^2 with K_nu from t_nu quantiles. The cluster
    robustness resamples whole clusters and recounts the clustered unresolved pairs (the pairs
    stay those of the observed ranking). q is not "observed power", and q < 1 does not mean the
    models are equal.

    Tie groups (``tie_groups``, per regime): maximal runs of consecutive ranks that hold no
    resolved pair -- a pair of the report counts as the report says, any other pair as the same
    regime decides it in the family of all pairs (computed up to 100 models; beyond, with adjacent
    pairs, each unresolved adjacent pair is its own group). Groups may overlap: "A ≈ B" and
    "B ≈ C" with A resolved above C.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import diagnose
    >>> rng = np.random.default_rng(0)

    Four models on 2,000 items; the top two are 1 point apart:

    >>> skill = np.array([0.70, 0.69, 0.60, 0.45])
    >>> scores = (rng.random((2000, 4)) < skill).astype(int)
    >>> res = diagnose(scores, models=["w", "x", "y", "z"])
    >>> res.models, res.n_unresolved, res.tie_groups["iid"]
    (['w', 'x', 'y', 'z'], {'iid': 1}, [['w', 'x']])
    """
    opts = DiagnoseOptions.create(options, **settings)
    run_stats = None
    if runs is None and (isinstance(scores, RunScores) or np.ndim(scores) == 3):
        runs, scores = scores, None
    if runs is not None:  # several runs per model: the run means for every regime, the mean squares for runs
        rs = (runs if isinstance(runs, RunScores) else RunScores.from_frame(runs, run="run")
              if hasattr(runs, "columns") else RunScores.from_array(runs, models=models))
        if scores is not None:
            msg = "give the scores once: either `scores` or `runs` (whose run means are the scores)"
            raise ValueError(msg)
        short = [str(m) for m, r in zip(rs.models, rs.runs.tolist(), strict=True) if r < 2]
        if short:
            msg = (f"the run regime needs at least 2 runs of each model; {len(short)} model(s) have one "
                   f"({', '.join(short[:5])})")
            raise ValueError(msg)
        matched = rs.matched(opts.run_pairing)
        run_stats = (crossed_mean_squares(rs.blocks), rs.runs_by, rs.blocks if matched else None, bool(rs.binary))
        scores = rs.averaged()
    if scores is None:
        msg = "diagnose needs `scores` (items x models) or `runs` (several runs per model)"
        raise TypeError(msg)
    if isinstance(scores, ScoreMatrix):  # a reader's matrix carries its names and cluster labels
        models = scores.models if models is None else models
        cluster = scores.clusters if cluster is None else cluster
        scores = scores.scores
    x, names = check_score_matrix(scores, models)
    codes, n_groups = None, 0
    if cluster is not None:
        codes, n_groups = code_labels(cluster, x.shape[0])
        require_clusters(n_groups)
    fine = None
    if cluster_fine is not None:
        if codes is None:
            msg = "`cluster_fine` is a finer clustering nested in `cluster`: give `cluster` too"
            raise ValueError(msg)
        fine = fine_clusters(x, codes, n_groups, cluster_fine)
    return diagnose_source(ScoreMatrix.coded(x, names, codes, n_groups), names, opts, runs=run_stats, rng=rng,
                           fine=fine)


def fine_clusters(x: np.ndarray, codes: np.ndarray, n_groups: int, labels: Any) -> FineClusters:
    """The fine clusters of a clustering nested in the coarse one (``codes``): per fine cluster its size,
    its coarse cluster and each model's sum of scores (one sparse product, no copy of ``x``).
    """
    from scipy import sparse

    fine_codes, h = code_labels(labels, x.shape[0], name="cluster_fine")
    parent = coarse_of_fine(codes, fine_codes, h, labels=np.asarray(labels, dtype=object))
    if h <= n_groups:
        msg = (f"`cluster_fine` must be finer than `cluster`: it has {h} clusters and `cluster` {n_groups} (with "
               "every fine cluster inside one coarse one, as many means the same clustering)")
        raise ValueError(msg)
    onehot = sparse.csr_matrix((np.ones(x.shape[0]), (fine_codes, np.arange(x.shape[0]))), shape=(h, x.shape[0]))
    return FineClusters(sizes=np.bincount(fine_codes, minlength=h).astype(float), parent=parent,
                        sums=np.asarray(onehot @ x, dtype=float))


def diagnose_source(source: ScoreSource, names: list[Any], options: Any, *, rng: Any = None,
                    runs: tuple[Any, str, Any, bool] | None = None, fine: FineClusters | None = None) -> Diagnosis:
    """:func:`diagnose` on checked options and a source of sufficient statistics (a matrix in
    memory, or item shards on a cluster: :func:`llm_power.engines.dask.diagnose_files`).
    """
    opts = options
    keep = None
    full_scores = source.scores if isinstance(source, ScoreMatrix) else None
    if opts.top is not None:
        keep = np.sort(rank_order(source.moments()[0])[:opts.top])
        source, names = source.select(keep), [names[k] for k in keep]
    opts.check_pairs(source.n_models)
    gen = as_rng(rng)
    first = wild_seed(gen)  # before anything draws: the same weights as compare's and the gate's
    ctx = _context(source, names, opts.pairs, alpha=opts.alpha, power=opts.power,
                   confidence_level=opts.confidence_level, rng=gen, cluster_method=opts.cluster_method, seed=first)
    ctx.wild_seed = first
    ctx.fine = fine  # its sums are in the caller's columns, as ctx.order is below
    ctx.scores = full_scores  # the caller's columns, as ctx.order is below
    local_order = ctx.order
    if keep is not None:
        ctx.order = keep[ctx.order]  # indices of the caller's columns
    ctx.runs = runs
    if runs is not None:  # each model's interval over items and runs (the union with the cluster-robust one)
        var_m, df_m = model_run_variance(runs[0])
        lo, hi = t_interval(runs[0].mean, var_m, df_m, opts.confidence_level, "two-sided")
        lo, hi = lo[ctx.order], hi[ctx.order]
        se_runs = np.sqrt(np.asarray(var_m, dtype=float))[ctx.order]
        method = "over items and runs (crossed mean squares), Student t"
        if source.n_groups:
            lo, hi = np.minimum(lo, ctx.model_ci[0]), np.maximum(hi, ctx.model_ci[1])
            se_runs = np.maximum(se_runs, ctx.model_se)
            method += "; the wider with the cluster-robust CR2 one"
        ctx.model_ci, ctx.model_se = (lo, hi), se_runs
        ctx.settings.update(model_se_method=method, model_ci_method=method)
    ctx.settings.update(method=opts.method, correction=opts.correction, anytime=opts.anytime)
    outputs = {"iid": RegimeOutput(columns=ctx.columns, resolved=ctx.verdict.resolved)}
    for regime in REGIMES[1:]:  # the IID regime is the context every other one builds on
        compute = regime.compute
        if compute is not None and regime.requested(opts, source.n_groups, runs is not None):
            outputs[regime.key] = compute(ctx, opts)
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    held = Held(source=source, names=names, local_order=local_order, options=opts, runs=runs, expand=_every_pair,
                seed=seed)
    diag = _diagnosis(ctx, outputs, held)
    return _with_ties(diag)


def _every_pair(held: Held) -> Diagnosis:
    """The diagnosis of every pair of the held source's models under the same regimes (cluster resamples
    aside, which only the displayed pairs get).
    """
    m = held.source.n_models
    opts = held.options.replace(pairs="all", cluster_resamples=0, top=None, max_pairs=max(m * (m - 1) // 2, 1))
    return diagnose_source(held.source, held.names, opts, rng=0, runs=held.runs)


# =================================================================================================
# The pieces of diagnose: context (sufficient statistics + the IID verdict), regimes, result
# =================================================================================================

def _context(source: ScoreSource, names: list[Any], pairs: str, *, alpha: float, power: float,  # noqa: PLR0913
             confidence_level: float, rng: np.random.Generator, cluster_method: str = "cr2",
             seed: int | None = None) -> Context:
    """Rank the models, form the pairs, their sufficient statistics, tests, intervals and IID verdict."""
    n, m_models = source.n, source.n_models
    means, m2 = source.moments()
    order = rank_order(means)
    st = PairwiseStatistics(n=n, means=means[order], mean_diff=None, var_diff=None, binary=source.binary, b=None)
    names = [names[k] for k in order]  # ranked; the source keeps the caller's column order
    pair_idx = pair_indices(m_models, pairs)
    i, j = pair_idx[:, 0], pair_idx[:, 1]
    ci, cj = order.astype(np.int32)[i], order.astype(np.int32)[j]  # the pairs' columns of the source
    b: np.ndarray | None = None
    c: np.ndarray | None = None
    if st.binary:  # 0/1 scores: the discordant counts of the pairs (not of all pairs: adjacent needs M - 1)
        right = np.rint(st.means * n)
        cols = binary_pair_columns(source.both_counts(ci, cj), right, i, j, n, confidence_level=confidence_level,
                                   alpha=alpha, power=power)
        b, c, var, pvalue = cols["b"], cols["c"], cols["var"], cols["pvalue"]
        sums = (PairSums(n=n, delta=cols["delta"], ss=cols["ss"]) if not source.n_groups
                else source.pair_sums_binary(ci, cj, b, c))
        tests: Any = (MCNEMAR_VARIANTS, cols["exact"].view(np.int8))  # names by code, formed when read
        verdict = Verdict(n_star=cols["n_star"], q=cols["q"], mde=cols["mde"], resolved=cols["resolved"],
                          regime=cols["regime"])  # codes into REGIME_NAMES
        columns = {"ci_low": cols["ci_low"], "ci_high": cols["ci_high"]}
    else:
        sums = source.pair_sums_graded(ci, cj)
        rms = np.sqrt(m2 / n + means * means)  # the size of each model's scores (source order)
        var = spread(sums.ss / (n - 1), rms[ci] + rms[cj])
        x = source.matrix() if n < CLT_MIN_ITEMS else None
        tests, pvalue, columns = _graded_tests(x, n, (ci, cj), sums.delta, var, confidence_level=confidence_level,
                                                gen=rng)
        verdict = iid_verdict(sums.delta, var, n, pvalue, alpha=alpha, power=power, alternative="two-sided")
    warn_degenerate(var, sums.delta, st.binary)
    model_lo, model_hi = _model_intervals(n, means, m2, st.binary, confidence_level)  # in the source's order
    with np.errstate(divide="ignore", invalid="ignore"):
        model_sd = np.sqrt(m2 / (n - 1)) if n > 1 else np.full(len(means), np.nan)
    model_se = model_sd / math.sqrt(n)  # the sample SD (ddof 1) over sqrt(n), as lm-eval's and EEE's
    se_method, ci_method = "analytic: sample SD (ddof 1) / sqrt(n)", "wilson" if st.binary else "student-t"
    if source.n_groups:  # clustered items: every model's interval by the clustered method of the pairs
        model_lo, model_hi, model_se = _cluster_model_intervals(source, means, m2, st.binary, confidence_level,
                                                                method=cluster_method, seed=seed)
        se_method = ci_method = MODEL_CLUSTER_METHODS[cluster_method]
    settings: dict[str, Any] = {"alpha": alpha, "power": power, "confidence_level": confidence_level,
                                "pairs": pairs, "binary": st.binary, "units": "points" if st.binary else "score",
                                "test": " / ".join(sorted(_test_names(tests))),
                                "k_factor": k_factor(alpha, power), "model_se_method": se_method,
                                "model_ci_method": ci_method}
    return Context(n=n, names=names, order=order, pairs=pairs, st=st, pair_idx=pair_idx, sums=sums, var=var,
                   pvalue=pvalue,
                    tests=tests, b=b, c=c, verdict=verdict, alpha=alpha, power=power,
                    confidence_level=confidence_level, gen=rng, columns=columns, settings=settings,
                    model_ci=(model_lo[order], model_hi[order]), model_se=model_se[order], model_sd=model_sd[order])


def _test_names(tests: Any) -> set[str]:
    """The tests used, without comparing millions of strings: 0/1 pairs carry (names, codes) of
    the two McNemar variants, so the codes present name them.
    """
    if isinstance(tests, tuple):
        names, codes = tests
        return {str(names[k]) for k in range(len(names)) if (codes == k).any()}
    return set(tests.tolist())


def _graded_tests(x: np.ndarray | None, n: int, pair_cols: tuple[np.ndarray, np.ndarray], delta: np.ndarray,
                  var: np.ndarray, *, confidence_level: float,
                  gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Each graded pair's test (the one compare picks), p-value and the interval that inverts it: the
    paired t interval, or for the permutation test of a small benchmark the set of shifts it does not
    reject (``pair_cols``: the columns of x, given below 30 items, where the choice looks at the
    differences).
    """
    tests = np.full(delta.size, "paired_t", dtype=object)
    pvalue = paired_t_test(delta, var, n, "two-sided")[1]
    lo, hi = paired_t_interval(delta, var, n, confidence_level, "two-sided")
    if x is not None:  # small graded benchmarks: the same per-pair choice as compare
        for p, (a, bb) in enumerate(zip(*pair_cols, strict=True)):
            d = x[:, a] - x[:, bb]
            tests[p] = choose_iid_test(False, n, None, d)[0]
            if tests[p] == "permutation":
                seed = int(gen.integers(2**62))  # as compare: the test and its inversion share the sign patterns
                pvalue[p], lo[p], hi[p] = permutation_interval(x[:, a], x[:, bb], confidence_level=confidence_level,
                                                               rng=seed)
    return tests, floor_pvalue(pvalue), {"ci_low": lo, "ci_high": hi}


def _diagnosis(ctx: Context, outputs: dict[str, RegimeOutput], held: Held) -> Diagnosis:
    """Assemble the result: the pairs' columns, the unresolved counts and the headline regime (tie
    groups and rank intervals follow in :func:`_with_ties`).
    """
    extra: dict[str, Any] = {}
    robustness = None
    for out in outputs.values():
        extra.update(out.columns)
        ctx.settings.update(out.settings)
        robustness = out.robustness or robustness
    n_unresolved = {key: int(np.sum(~np.asarray(out.resolved))) for key, out in outputs.items()}
    columns = _columns(ctx, extra)
    medians = {}
    for r in REGIMES:
        if r.key in n_unresolved:
            q = np.asarray(columns[r.q_field], dtype=float)
            q = q[np.isfinite(q)]
            medians[r.key] = float(np.median(q)) if q.size else 0.0
    ctx.settings["headline"] = headline_key(n_unresolved, medians)
    model_lo, model_hi = ctx.model_ci
    return Diagnosis(models=ctx.names, means=ctx.st.means, n=ctx.n, columns=columns,
                     order=ctx.order, n_unresolved=n_unresolved, cluster_robustness=robustness, settings=ctx.settings,
                     model_ci_low=model_lo, model_ci_high=model_hi, model_se=ctx.model_se, model_sd=ctx.model_sd,
                     held=held)


#: tie groups use the verdict of every pair (not only the displayed ones) up to this many models
MAX_TIE_MODELS = 100


def _with_ties(diag: Diagnosis) -> Diagnosis:
    """Tie groups and rank intervals per regime: from the verdicts of every pair (the report's own where
    it shows a pair, the same regime's in the family of all pairs elsewhere) up to
    :data:`MAX_TIE_MODELS` models; beyond, from the adjacent pairs alone (each group one unresolved
    adjacent pair, ranks known only through chains of resolved adjacent pairs).
    """
    m = len(diag.models)
    shown = diag.columns
    si, sj = np.asarray(shown["rank_a"]) - 1, np.asarray(shown["rank_b"]) - 1
    every = diag.all_pairs() if diag.settings.get("pairs") == "all" or m <= MAX_TIE_MODELS else None
    tie_groups, rank_intervals = {}, {}
    for r in diag.regimes:
        if every is None:
            idx, flags, complete = np.stack([si, sj], axis=1), np.asarray(shown[r.resolved_field], dtype=bool), False
        else:
            ei, ej = np.asarray(every.columns["rank_a"]) - 1, np.asarray(every.columns["rank_b"]) - 1
            flags = np.asarray(every.columns[r.resolved_field], dtype=bool).copy()
            at = np.full(m * m, -1, dtype=np.int64)
            at[ei * m + ej] = np.arange(ei.size)
            flags[at[si * m + sj]] = np.asarray(shown[r.resolved_field], dtype=bool)  # the table's word wins
            idx, complete = np.stack([ei, ej], axis=1), True
        groups, intervals = tie_groups_and_rank_intervals(m, idx, flags, complete)
        tie_groups[r.key] = [[diag.models[g] for g in grp] for grp in groups]
        rank_intervals[r.key] = {diag.models[k]: intervals[k] for k in range(m)}
    diag.settings["ties_from"] = "all pairs" if every is not None else "adjacent pairs"
    return dataclasses.replace(diag, tie_groups=tie_groups, rank_intervals=rank_intervals)


#: the names of the two McNemar variants of 0/1 pairs, by code (exact below 25 discordant items)
MCNEMAR_VARIANTS = np.array(["mcnemar_asymptotic", "mcnemar_exact"], dtype=object)


def _columns(ctx: Context, extra: dict[str, Any]) -> PairColumns:
    """The pairs as columns: the IID arrays, then each regime's (N* rounded, flags boolean). A
    column the IID pass already computed (``extra``) is taken as is; the models' names, ranks and
    means and the test and regime names are gathered when first read (:class:`PairColumns`).
    """
    i, j = ctx.pair_idx[:, 0], ctx.pair_idx[:, 1]
    names = np.array(ctx.names, dtype=object)
    v = ctx.verdict
    derived: dict[str, tuple[Any, ...]] = {
        "model_a": (names, i), "model_b": (names, j), "rank_a": ("rank", i), "rank_b": ("rank", j),
        "mean_a": (ctx.st.means, i), "mean_b": (ctx.st.means, j)}
    data: dict[str, np.ndarray] = {}
    if isinstance(ctx.tests, tuple):  # (names, codes) of 0/1 pairs: the test and the regime by code
        derived["test"] = ctx.tests
    else:
        data["test"] = ctx.tests
    regime = v.regime if v.regime.dtype == object else None
    if regime is None:
        derived["regime"] = (REGIME_NAMES, v.regime)
    else:
        data["regime"] = regime
    computed: dict[str, Callable[[], np.ndarray]] = {
        "delta": lambda: np.asarray(ctx.sums.delta, dtype=float),
        "pvalue": lambda: np.asarray(ctx.pvalue, dtype=float), "q": lambda: np.asarray(v.q, dtype=float),
        "mde": lambda: np.asarray(v.mde, dtype=float), "resolved": lambda: np.asarray(v.resolved, dtype=bool)}
    derived["se"], derived["n_star"] = ("se", ctx.var, ctx.n), ("items", v.n_star)  # formed when read
    for key, make in computed.items():
        data[key] = extra[key] if key in extra else make()
    if ctx.b is not None and ctx.c is not None:
        data["b"], data["c"] = np.asarray(ctx.b, dtype=np.int64), np.asarray(ctx.c, dtype=np.int64)
    keys = ["model_a", "model_b", "rank_a", "rank_b", "mean_a", "mean_b", "delta", "se", "pvalue", "test",
            "n_star", "q", "mde", "resolved", "regime", *(["b", "c"] if "b" in data else [])]
    rounded = {r.n_star_field for r in REGIMES[1:]}
    flags = {r.resolved_field for r in REGIMES[1:]}
    for key, val in extra.items():
        if key in computed:
            continue
        arr = np.asarray(val)
        data[key] = ceil_items_array(arr) if key in rounded else (np.asarray(arr, dtype=bool) if key in flags
                                                                   else arr)
        if key not in keys:
            keys.append(key)
    return PairColumns(data, derived, keys)


def _model_intervals(n: int, means: np.ndarray, m2: np.ndarray, binary: bool,
                     level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-model intervals at ``level`` from the means and sums of squared deviations: Wilson for
    accuracies, Student t for graded means.
    """
    if binary:
        lo, hi = proportion_ci(np.rint(means * n).astype(np.int64), n, confidence_level=level)
        return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    sd = np.sqrt(m2 / (n - 1))
    half = level_quantile(level, "two-sided", n - 1) * sd / math.sqrt(n)
    return means - half, means + half


#: how each ``cluster_method`` makes a model's interval (``settings["model_ci_method"]``)
MODEL_CLUSTER_METHODS = {
    "cr2": "cluster-robust CR2, Student t with Imbens-Kolesar df",
    "cv3": "cluster jackknife CV3, Student t with G - 1 df",
    "wild": "wild cluster bootstrap (restricted, inverted; CR1 standard error)",
}


def _cluster_model_intervals(source: ScoreSource, means: np.ndarray, m2: np.ndarray, binary: bool,  # noqa: PLR0913
                             level: float, *, method: str = "cr2",
                             seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-model clustered intervals by the pairs' ``method`` (the kernel's: CR2 with Imbens-Kolesar df
    as the one-model path and ``compare`` use, the CV3 jackknife on G - 1 df, or the inverted
    restricted wild cluster bootstrap drawn from ``seed``), clipped to [0, 1] for accuracies, and the
    standard errors (the wild bootstrap's: CR1, which studentises it).
    """
    sizes, resid, resid_sq = source.model_cluster_sums(means)
    keep = sizes > 0
    if method == "cr2":
        v = mean_variance_from_sums(source.n, means, m2, sizes[keep], resid[keep], resid_sq[keep], kind="cr2",
                                    ddof=0 if binary else 1)
        se = np.sqrt(v.variance)
        half = np.asarray(level_quantile(level, "two-sided", v.df)) * se
        lo, hi = means - half, means + half
    else:
        from .._kernel.wild_cluster import cv3_variance

        g = int(np.sum(keep))
        cluster_sums = resid[keep] + sizes[keep, None] * means
        if method == "cv3":
            se = np.sqrt(np.asarray(cv3_variance(cluster_sums, sizes[keep]), dtype=float).reshape(-1))
            half = np.asarray(level_quantile(level, "two-sided", g - 1.0)) * se
            lo, hi = means - half, means + half
        else:
            check_wild_work(cluster_sums.shape[1], g, "models")
            wild = wild_decision(PairSums(n=source.n, delta=means, ss=m2, sizes=sizes[keep], resid=resid[keep],
                                          resid_sq=resid_sq[keep]), seed=0 if seed is None else seed,
                                 confidence_level=level)
            lo, hi = np.asarray(wild.ci_low, dtype=float), np.asarray(wild.ci_high, dtype=float)
            se = wild.standard_error
    if binary:
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return lo, hi, np.asarray(se, dtype=float)


