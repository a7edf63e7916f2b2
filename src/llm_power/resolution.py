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

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special, stats

from ._results import Result, to_plain
from ._validation import as_rng, check_option
from .errors import DataError, DegenerateDataWarning
from .multiplicity import adjust_pvalues
from .paired import mcnemar_pvalue
from .planning import _check_alpha_power, ceil_items, k_factor
from .sequential import anytime_critical_value, beta_mixture_log_evalue

__all__ = ["CORRECTIONS", "Diagnosis", "PairResolution", "PairwiseStatistics", "calibrate", "diagnose",
           "pairwise_statistics"]

CORRECTIONS = ("bh", "bonferroni", "holm")


# =================================================================================================
# Sufficient statistics
# =================================================================================================

@dataclass(frozen=True)
class PairwiseStatistics:
    """Sufficient statistics of all pairs of models, from matrix products.

    For model columns i, j: ``n`` items, ``means[i]``, ``mean_diff[i, j]`` = mean(x_i - x_j),
    ``var_diff[i, j]`` = variance of x_i - x_j (ddof = 0), and for 0/1 scores the discordant
    counts ``b[i, j]`` = #(i right, j wrong) (so c = b.T).
    """

    n: int
    means: np.ndarray
    mean_diff: np.ndarray
    var_diff: np.ndarray
    binary: bool
    b: np.ndarray | None


def _as_matrix(scores: Any, models: Any) -> tuple[np.ndarray, list[str]]:
    if hasattr(scores, "columns") and hasattr(scores, "to_numpy"):  # a pandas DataFrame
        names = [str(c) for c in scores.columns]
        try:
            x = scores.to_numpy(dtype=float)
        except (TypeError, ValueError):
            bad = [c for c in scores.columns if scores[c].dtype.kind not in "biuf"]
            raise DataError(f"model column {bad[0]!r} is not numeric" if bad else "scores are not numeric") from None
    else:
        try:
            x = np.asarray(scores, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("`scores` must be a numeric (n_items, n_models) matrix or a DataFrame.") from None
        names = None
    if x.ndim != 2:
        raise ValueError(f"`scores` must be a 2-D (n_items, n_models) matrix; got shape {x.shape}.")
    if models is not None:
        names = [str(m) for m in models]
        if len(names) != x.shape[1]:
            raise ValueError(f"`models` has {len(names)} names for {x.shape[1]} model columns.")
    if names is None:
        names = [f"model_{j}" for j in range(x.shape[1])]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"model names must be unique; {dup!r} appears twice.")
    if x.shape[1] < 2:
        raise ValueError(f"need at least 2 models to compare; got {x.shape[1]}.")
    if x.shape[0] < 2:
        raise ValueError(f"need at least 2 items; got {x.shape[0]}.")
    bad = ~np.isfinite(x)
    if np.any(bad):
        item, col = (int(v) for v in np.argwhere(bad)[0])
        count = int(bad[:, col].sum())
        raise DataError(
            f"model {names[col]!r} has {count} missing or non-finite score(s) (first at item row {item}); "
            "paired comparisons need every model scored on every item -- drop or score those items first"
        )
    return x, names


def pairwise_statistics(x: np.ndarray) -> PairwiseStatistics:
    """All-pairs sufficient statistics of an (n_items, n_models) matrix (no missing values).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.resolution import pairwise_statistics
    >>> x = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]])
    >>> st = pairwise_statistics(x)
    >>> st.b.astype(int).tolist()   # b[i, j] = items model i got right and model j wrong
    [[0, 1, 2], [1, 0, 1], [1, 0, 0]]
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    means = x.mean(axis=0)
    binary = bool(np.all((x == 0) | (x == 1)))
    gram = x.T @ x / n  # E[x_i x_j]
    second = np.diag(gram)
    mean_diff = means[:, None] - means[None, :]
    # E[(x_i - x_j)^2] - (mean diff)^2
    var_diff = second[:, None] + second[None, :] - 2.0 * gram - mean_diff**2
    var_diff = np.maximum(var_diff, 0.0)
    b = None
    if binary:
        both = x.T @ x
        b = np.rint(x.sum(axis=0)[:, None] - both)  # i right, j wrong
    return PairwiseStatistics(n=n, means=means, mean_diff=mean_diff, var_diff=var_diff, binary=binary, b=b)


def _cluster_statistics(x: np.ndarray, codes: np.ndarray, n_groups: int, pairs: np.ndarray):
    """Per-cluster item counts, sums of D and sums of D^2 for the given pairs (G x P each)."""
    sizes = np.bincount(codes, minlength=n_groups).astype(float)
    col_sums = np.zeros((n_groups, x.shape[1]))
    np.add.at(col_sums, codes, x)
    i, j = pairs[:, 0], pairs[:, 1]
    s = col_sums[:, i] - col_sums[:, j]
    q = np.empty_like(s)
    for g in range(n_groups):  # loop over clusters (few), not items or pairs
        xg = x[codes == g]
        gram = xg.T @ xg
        sq = np.diag(gram)
        q[g] = sq[i] + sq[j] - 2.0 * gram[i, j]
    return sizes, s, q


def _icc_from_sums(w: np.ndarray, sizes: np.ndarray, s: np.ndarray, q: np.ndarray):
    """ANOVA ICC per pair from per-cluster sums; ``w`` are cluster multiplicities (B x G or G).

    Returns (n_total, delta, var_d (ddof 0), icc_raw, mean cluster size), vectorised over the
    leading resample axis of ``w`` and the pair axis of ``s``/``q``.
    """
    w = np.atleast_2d(w)
    n_tot = w @ sizes  # (B,)
    g_tot = w.sum(axis=1)
    s_tot = w @ s  # (B, P)
    q_tot = w @ q
    delta = s_tot / n_tot[:, None]
    var_d = q_tot / n_tot[:, None] - delta**2
    with np.errstate(divide="ignore", invalid="ignore"):
        cluster_mean = np.where(sizes[:, None] > 0, s / np.maximum(sizes, 1)[:, None], 0.0)  # (G, P)
        ssb = w @ (sizes[:, None] * cluster_mean**2) - n_tot[:, None] * delta**2
        ssw = q_tot - w @ (sizes[:, None] * cluster_mean**2)
        msb = ssb / (g_tot - 1)[:, None]
        msw = ssw / (n_tot - g_tot)[:, None]
        n0 = (n_tot - (w @ sizes**2) / n_tot) / (g_tot - 1)
        icc = (msb - msw) / (msb + (n0[:, None] - 1) * msw)
    icc = np.where(np.isfinite(icc), icc, np.nan)
    return n_tot, delta, var_d, icc, n_tot / g_tot


# =================================================================================================
# Results
# =================================================================================================

@dataclass(frozen=True, slots=True, repr=False)
class PairResolution(Result):
    """Resolution of one pair of models (A ranked above B). Optional fields are None when the
    corresponding stress test was not requested."""

    model_a: str
    model_b: str
    rank_a: int
    rank_b: int
    n: int
    mean_a: float
    mean_b: float
    delta: float
    se: float
    pvalue: float
    test: str
    n_star: float
    q: float
    mde: float
    resolved: bool
    b: int | None = None
    c: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    pvalue_adjusted: float | None = None
    alpha_corrected: float | None = None
    n_star_corrected: float | None = None
    q_corrected: float | None = None
    resolved_corrected: bool | None = None
    icc: float | None = None
    design_effect: float | None = None
    n_star_cluster: float | None = None
    q_cluster: float | None = None
    resolved_cluster: bool | None = None
    cluster_ci_low: float | None = None
    cluster_ci_high: float | None = None
    e_value: float | None = None
    n_star_anytime: float | None = None
    q_anytime: float | None = None
    resolved_anytime: bool | None = None

    _repr_fields = ("model_a", "model_b", "delta", "pvalue", "n_star", "q", "resolved")


@dataclass(frozen=True, slots=True, repr=False)
class Diagnosis(Result):
    """Result of :func:`diagnose`.

    Attributes
    ----------
    models : list of str
        Ranked best first.
    means : ndarray
        Mean scores in that order.
    n : int
        Items.
    pairs : list of PairResolution
    n_unresolved : dict
        Unresolved pairs under each regime computed: "iid", and "corrected", "cluster",
        "anytime" when requested.
    tie_groups : dict
        Per regime, groups of models (rank order) not resolved from each other: each model's
        rank interval is the span of its group (adjacent pairs), or [1 + #models resolved
        above it, #models not resolved below it + its rank] (all pairs).
    rank_intervals : dict
        Per regime, (lowest, highest) plausible rank of each model.
    cluster_robustness : dict or None
        Distribution of the clustered unresolved count over resamples of the clusters.
    settings : dict
        alpha, power, correction, anytime, pairs, method, binary, n_clusters, critical values.
    """

    models: list
    means: np.ndarray = field(compare=False)
    n: int = 0
    pairs: list = field(default_factory=list)
    n_unresolved: dict = field(default_factory=dict)
    tie_groups: dict = field(default_factory=dict)
    rank_intervals: dict = field(default_factory=dict)
    cluster_robustness: dict | None = None
    settings: dict = field(default_factory=dict)

    _repr_fields = ("n", "n_unresolved")

    def __repr__(self) -> str:
        return (f"Diagnosis(models={len(self.models)}, n={self.n}, pairs={len(self.pairs)}, "
                f"n_unresolved={self.n_unresolved})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "models": list(self.models),
            "means": to_plain(self.means),
            "n": self.n,
            "pairs": [p.to_dict() for p in self.pairs],
            "n_unresolved": dict(self.n_unresolved),
            "tie_groups": to_plain(self.tie_groups),
            "rank_intervals": to_plain(self.rank_intervals),
            "cluster_robustness": to_plain(self.cluster_robustness),
            "settings": to_plain(self.settings),
        }

    def to_frame(self):
        """The pairs as a pandas DataFrame (one row per pair)."""
        import pandas as pd

        return pd.DataFrame([p.to_dict() for p in self.pairs])

    def summary(self) -> str:
        m = len(self.pairs)
        lines = [f"{len(self.models)} models, {self.n:,} items, {m} {self.settings.get('pairs')} pairs "
                 f"(alpha = {self.settings['alpha']:g}, power = {self.settings['power']:g})"]
        labels = {"iid": "IID", "corrected": f"{self.settings.get('correction')}-corrected",
                  "cluster": "clustered", "anytime": "anytime-valid"}
        for key, count in self.n_unresolved.items():
            lines.append(f"  {labels.get(key, key)}: {count} of {m} pairs unresolved")
        if self.cluster_robustness:
            cr = self.cluster_robustness
            lines.append(f"  cluster bootstrap of the clustered count ({cr['n_resamples']} resamples): "
                         f"median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}]")
        lines.append(f"{'rank':>4}  {'model A':<28} {'model B':<28} {'gap':>7} {'p':>9} {'N*':>9} {'q':>7}  verdict")
        for p in self.pairs:
            ns = "inf" if math.isinf(p.n_star) else f"{int(p.n_star):,}"
            lines.append(f"{p.rank_a:>4}  {p.model_a[:28]:<28} {p.model_b[:28]:<28} {100 * p.delta:>+7.2f} "
                         f"{p.pvalue:>9.3g} {ns:>9} {p.q:>7.2f}  {'resolved' if p.resolved else 'UNRESOLVED'}")
        return "\n".join(lines)


# =================================================================================================
# diagnose
# =================================================================================================

def diagnose(
    scores: Any,
    *,
    models: Any = None,
    cluster: Any = None,
    pairs: str = "adjacent",
    alpha: float = 0.05,
    power: float = 0.8,
    correction: str | None = None,
    anytime: bool = False,
    method: str = "wald",
    cluster_resamples: int = 1000,
    rng: Any = None,
) -> Diagnosis:
    r"""Leaderboard resolution report for an items x models score matrix.

    Parameters
    ----------
    scores : array_like or DataFrame, shape (n_items, n_models)
        Per-item scores (0/1 correctness or graded), every model on every item.
    models : sequence of str, optional
        Model names (default: DataFrame columns or ``model_0``, ...).
    cluster : array_like, optional
        One cluster label per item (subject, source). Adds the clustering stress test.
    pairs : {"adjacent", "all"}, default "adjacent"
        Adjacent ranks (what a leaderboard displays) or every pair.
    alpha, power : float
        Resolution thresholds: a gap is resolved when N >= N*(alpha, power).
    correction : {"bonferroni", "holm", "bh"}, optional
        Multiplicity stress test across the family of pairs: alpha is replaced by a per-pair
        alpha' (Bonferroni alpha/m; Holm: the j-th smallest p-value gets alpha/(m - j + 1);
        BH: j alpha/m), N* grows by ((z_{1-alpha'/2} + z_{1-beta}) / (z_{1-alpha/2} + z_{1-beta}))^2.
    anytime : bool, default False
        Anytime-valid stress test: z_{1-alpha/2} is replaced by the normal-mixture boundary in z
        units (3.04 at alpha = 0.05; :mod:`llm_power.sequential`), the critical value a
        continuously monitored leaderboard must use. For 0/1 data the Beta-mixture e-value of
        each pair is reported too.
    method : {"wald"}, default "wald"
        N* = K sigma_D^2 / delta^2 with the plug-in sigma_D^2 (the resolution paper's N*).
    cluster_resamples : int, default 1000
        Resamples of the clusters for the robustness of the clustered unresolved count and the
        cluster-bootstrap CI of each gap (0 to skip).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Diagnosis

    Notes
    -----
    Per pair: delta = mean_A - mean_B; the paired p-value is the exact McNemar test for 0/1
    scores and the paired t test otherwise; :math:`\hat\sigma_D^2 = (b+c)/N - ((b-c)/N)^2`
    (0/1) or the sample variance of D; N* = K sigma^2/delta^2, MDE = sqrt(K sigma^2/N) and
    q = N/N* = T^2/K with T = sqrt(N) delta / sigma. Clustering: the ICC of D by one-way ANOVA
    over the cluster labels (truncated at 0), DE = 1 + (mbar - 1) ICC, N*_cluster = DE N*,
    q_cluster = q / DE; the cluster-bootstrap CI resamples whole clusters. The cluster
    robustness resamples the clusters (with replacement), recomputes delta, sigma and the ICC
    of every displayed pair and counts the unresolved pairs (the pairs stay those of the
    observed ranking). q is not "observed power", and q < 1 does not mean the models are equal:
    it means this benchmark is too small to tell them apart at (alpha, power).

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
    (['w', 'x', 'y', 'z'], {'iid': 1}, [['w', 'x'], ['y'], ['z']])
    """
    pairs = check_option(pairs, "pairs", ("adjacent", "all"))
    method = check_option(method, "method", ("wald",))
    alpha, power = _check_alpha_power(alpha, power)
    if correction is not None:
        correction = check_option(correction, "correction", CORRECTIONS)
    x, names = _as_matrix(scores, models)
    n, m_models = x.shape
    order = np.argsort(-x.mean(axis=0), kind="stable")
    x = x[:, order]
    names = [names[k] for k in order]
    st = pairwise_statistics(x)
    if pairs == "adjacent":
        pair_idx = np.c_[np.arange(m_models - 1), np.arange(1, m_models)]
    else:
        ii, jj = np.triu_indices(m_models, k=1)
        pair_idx = np.c_[ii, jj]
    i, j = pair_idx[:, 0], pair_idx[:, 1]
    delta = st.mean_diff[i, j]
    if st.binary:
        b = st.b[i, j]
        c = st.b[j, i]
        var = (b + c) / n - ((b - c) / n) ** 2
        pvalue = mcnemar_pvalue(b, c, method="exact")[1]
        test = "mcnemar_exact"
    else:
        b = c = None
        var = st.var_diff[i, j] * n / (n - 1)  # sample variance (ddof = 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = delta / np.sqrt(var / n)
        t = np.where(var > 0, t, np.where(delta == 0, 0.0, np.inf))
        pvalue = np.minimum(1.0, 2 * stats.t.sf(np.abs(t), n - 1))
        test = "paired_t"
    k = k_factor(alpha, power)
    with np.errstate(divide="ignore", invalid="ignore"):
        t2 = np.where(var > 0, n * delta**2 / var, np.where(delta == 0, 0.0, np.inf))
        n_star = np.where(delta == 0, np.inf, k * var / delta**2)
    q = t2 / k
    mde = np.sqrt(k * var / n)
    if np.any((var == 0) & (delta != 0)):
        warnings.warn("a pair differs by the same amount on every item (zero variance): N* = 0, q = inf.",
                      DegenerateDataWarning, stacklevel=2)
    z_b = float(special.ndtri(power))
    z_a = float(special.ndtri(1 - alpha / 2))
    columns: dict[str, Any] = {}
    settings: dict[str, Any] = {"alpha": alpha, "power": power, "pairs": pairs, "method": method,
                                "correction": correction, "anytime": anytime, "binary": st.binary,
                                "test": test, "k_factor": k}
    n_unresolved = {"iid": int(np.sum(q < 1))}

    # -- multiplicity -----------------------------------------------------------------------------
    if correction is not None:
        m = pair_idx.shape[0]
        adj = adjust_pvalues(pvalue, method=correction)
        alpha_prime = _alpha_prime(pvalue, alpha, correction)
        k_corr = (special.ndtri(1 - alpha_prime / 2) + z_b) ** 2
        columns.update(pvalue_adjusted=adj, alpha_corrected=alpha_prime, n_star_corrected=n_star * k_corr / k,
                       q_corrected=t2 / k_corr)
        n_unresolved["corrected"] = int(np.sum(t2 / k_corr < 1))
        settings["family_size"] = m

    # -- clustering -------------------------------------------------------------------------------
    robustness = None
    if cluster is not None:
        labels = np.asarray(cluster)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(f"`cluster` must have one label per item ({n}); got shape {labels.shape}.")
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.reshape(-1)
        n_groups = int(codes.max() + 1)
        if n_groups < 2:
            raise ValueError("`cluster` puts every item in one cluster: the design effect is undefined "
                             "(need at least 2 clusters).")
        sizes, s_g, q_g = _cluster_statistics(x, codes, n_groups, pair_idx)
        _, _, _, icc_raw, m_bar = _icc_from_sums(np.ones(n_groups), sizes, s_g, q_g)
        icc = np.maximum(np.nan_to_num(icc_raw[0], nan=0.0), 0.0)
        de = 1.0 + (m_bar[0] - 1.0) * icc
        columns.update(icc=icc, design_effect=de, n_star_cluster=n_star * de, q_cluster=q / de)
        n_unresolved["cluster"] = int(np.sum(q / de < 1))
        settings["n_clusters"] = n_groups
        settings["mean_cluster_size"] = float(m_bar[0])
        if cluster_resamples:
            gen = as_rng(rng)
            picks = gen.integers(0, n_groups, size=(int(cluster_resamples), n_groups))
            w = np.zeros((int(cluster_resamples), n_groups))
            np.add.at(w, (np.arange(int(cluster_resamples))[:, None], picks), 1.0)
            n_tot, d_star, v_star, icc_star, mb_star = _icc_from_sums(w, sizes, s_g, q_g)
            if st.binary:
                var_star = v_star
            else:
                var_star = v_star * n_tot[:, None] / (n_tot[:, None] - 1)
            de_star = 1.0 + (mb_star[:, None] - 1.0) * np.maximum(np.nan_to_num(icc_star, nan=0.0), 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                q_star = np.where(var_star > 0, n_tot[:, None] * d_star**2 / var_star, 0.0) / k / de_star
            counts = np.sum(q_star < 1, axis=1)
            lo, hi = np.quantile(d_star, [0.025, 0.975], axis=0)
            columns.update(cluster_ci_low=lo, cluster_ci_high=hi)
            robustness = {
                "n_resamples": int(cluster_resamples),
                "observed": n_unresolved["cluster"],
                "mean": float(counts.mean()),
                "median": float(np.median(counts)),
                "q05": float(np.quantile(counts, 0.05)),
                "q95": float(np.quantile(counts, 0.95)),
                "distribution": np.bincount(counts, minlength=pair_idx.shape[0] + 1).tolist(),
            }

    # -- anytime-valid ----------------------------------------------------------------------------
    if anytime:
        z_any, r = anytime_critical_value(alpha)
        k_any = (z_any + z_b) ** 2
        columns.update(n_star_anytime=n_star * k_any / k, q_anytime=t2 / k_any)
        n_unresolved["anytime"] = int(np.sum(t2 / k_any < 1))
        settings.update(z_anytime=z_any, z_fixed=z_a, mixture_ratio=r)
        if st.binary:
            # Beta(a, a) mixture tuned at this benchmark's discordant count (rho = 2a + 1 = r m)
            m_disc = b + c
            a_mix = np.maximum(0.5, (r * np.maximum(m_disc, 1) - 1) / 2)
            log_e = beta_mixture_log_evalue(b, c, a=a_mix)
            columns["e_value"] = np.exp(np.minimum(log_e, 700.0))
            settings["e_value_note"] = ("Beta-mixture e-value with the prior tuned to the observed number of "
                                        "discordant items: a post-hoc evidence summary, not a stopping rule")

    # paired 95% CI of each gap: Newcombe (0/1) or t (graded)
    if st.binary:
        from .effects import paired_difference_ci_from_counts

        n11 = np.rint(st.means[i] * n - b)
        cis = [paired_difference_ci_from_counts(int(n11[p]), int(b[p]), int(c[p]), int(n - n11[p] - b[p] - c[p]),
                                                confidence_level=1 - alpha) for p in range(pair_idx.shape[0])]
        columns["ci_low"] = np.array([ci.low for ci in cis])
        columns["ci_high"] = np.array([ci.high for ci in cis])
    else:
        half = stats.t.ppf(1 - alpha / 2, n - 1) * np.sqrt(var / n)
        columns["ci_low"], columns["ci_high"] = delta - half, delta + half

    results = []
    for p in range(pair_idx.shape[0]):
        ia, ib = int(i[p]), int(j[p])
        extra = {key: _py(val[p]) for key, val in columns.items()}
        if "q_corrected" in extra:
            extra["resolved_corrected"] = bool(extra["q_corrected"] >= 1)
        if "q_cluster" in extra:
            extra["resolved_cluster"] = bool(extra["q_cluster"] >= 1)
        if "q_anytime" in extra:
            extra["resolved_anytime"] = bool(extra["q_anytime"] >= 1)
        results.append(PairResolution(
            model_a=names[ia], model_b=names[ib], rank_a=ia + 1, rank_b=ib + 1, n=n,
            mean_a=float(st.means[ia]), mean_b=float(st.means[ib]), delta=float(delta[p]),
            se=float(math.sqrt(var[p] / n)), pvalue=float(pvalue[p]), test=test,
            n_star=ceil_items(float(n_star[p])), q=float(q[p]), mde=float(mde[p]), resolved=bool(q[p] >= 1),
            b=None if b is None else int(b[p]), c=None if c is None else int(c[p]), **extra,
        ))
    regimes = {"iid": np.asarray(q >= 1)}
    for key, col in (("corrected", "q_corrected"), ("cluster", "q_cluster"), ("anytime", "q_anytime")):
        if col in columns:
            regimes[key] = np.asarray(columns[col] >= 1)
    tie_groups, rank_intervals = {}, {}
    for key, resolved in regimes.items():
        groups, intervals = _ties(m_models, pair_idx, resolved, pairs)
        tie_groups[key] = [[names[g] for g in grp] for grp in groups]
        rank_intervals[key] = {names[k]: intervals[k] for k in range(m_models)}
    return Diagnosis(models=names, means=st.means, n=n, pairs=results, n_unresolved=n_unresolved,
                     tie_groups=tie_groups, rank_intervals=rank_intervals, cluster_robustness=robustness,
                     settings=settings)


def _py(value: Any) -> Any:
    value = value.item() if isinstance(value, np.generic) else value
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _alpha_prime(pvalue: np.ndarray, alpha: float, correction: str) -> np.ndarray:
    """Per-pair significance level under the correction (rank-dependent for Holm and BH)."""
    m = pvalue.size
    if correction == "bonferroni":
        return np.full(m, alpha / m)
    order = np.argsort(pvalue, kind="stable")
    rank = np.empty(m, dtype=float)
    rank[order] = np.arange(1, m + 1)
    if correction == "holm":
        return alpha / (m - rank + 1)
    return rank * alpha / m  # bh


def _ties(m_models: int, pair_idx: np.ndarray, resolved: np.ndarray, pairs: str):
    """Tie groups and rank intervals (1-based) from the resolved flags of the pairs."""
    if pairs == "adjacent":
        groups, current = [], [0]
        for p in range(pair_idx.shape[0]):
            if resolved[p]:
                groups.append(current)
                current = [int(pair_idx[p, 1])]
            else:
                current.append(int(pair_idx[p, 1]))
        groups.append(current)
        intervals = {}
        for grp in groups:
            for g in grp:
                intervals[g] = (grp[0] + 1, grp[-1] + 1)
        return groups, intervals
    above = np.zeros(m_models, dtype=int)  # models resolved above each model
    below = np.zeros(m_models, dtype=int)
    for p in range(pair_idx.shape[0]):
        if resolved[p]:
            above[pair_idx[p, 1]] += 1
            below[pair_idx[p, 0]] += 1
    intervals = {g: (int(above[g] + 1), int(m_models - below[g])) for g in range(m_models)}
    # groups: maximal runs of models whose rank intervals overlap the first member's
    groups, current = [], [0]
    for g in range(1, m_models):
        if intervals[g][0] <= intervals[current[0]][1]:
            current.append(g)
        else:
            groups.append(current)
            current = [g]
    groups.append(current)
    return groups, intervals


# =================================================================================================
# Calibration
# =================================================================================================

def calibrate(
    a: Any,
    b: Any,
    *,
    n: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    n_sims: int = 2000,
    test: str = "z",
    rng: Any = None,
) -> dict:
    r"""Check N* on real data: resample the items of a pair to size N* many times and count how
    often the paired test rejects; the empirical power should be close to ``power``.

    Items are drawn with replacement from the observed pair, so the resampled population has
    exactly the observed gap and per-item variance -- the quantities N* was computed from.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores of a real pair (0/1 data are resampled through their 2x2 table).
    n : int, optional
        Items per resample (default: N* of this pair at (alpha, power)).
    test : {"z", "mcnemar_exact"}, default "z"
        ``"z"``: the paired z test with the plug-in variance, the test whose power N* models;
        ``"mcnemar_exact"``: the exact McNemar test (0/1 data; conservative, slightly lower power).

    Returns
    -------
    dict
        ``n``, ``empirical_power``, ``standard_error``, ``target``, ``delta``, ``n_sims``.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.resolution import calibrate
    >>> a = np.r_[np.ones(700), np.ones(60), np.zeros(40), np.zeros(200)]
    >>> b = np.r_[np.ones(700), np.zeros(60), np.ones(40), np.zeros(200)]
    >>> res = calibrate(a, b, n_sims=4000, rng=0)
    >>> res["n"], abs(res["empirical_power"] - 0.8) < 0.03
    (1955, True)
    """
    from ._validation import check_paired, is_binary

    x, y = check_paired(a, b)
    alpha, power = _check_alpha_power(alpha, power)
    test = check_option(test, "test", ("mcnemar_exact", "z"))
    gen = as_rng(rng)
    d = x - y
    n_items = d.size
    delta = float(d.mean())
    binary = is_binary(x, y)
    var = float(d.var()) if binary else float(d.var(ddof=1))
    if delta == 0 or var == 0:
        raise ValueError("the pair has no gap (or no variance): N* is undefined.")
    k = k_factor(alpha, power)
    n_use = int(math.ceil(k * var / delta**2 - 1e-9)) if n is None else int(n)
    sims = int(n_sims)
    if binary:
        cells = np.array([np.mean(d > 0), np.mean(d < 0)])
        counts = gen.multinomial(n_use, [cells[0], cells[1], 1 - cells.sum()], size=sims)
        bb, cc = counts[:, 0].astype(float), counts[:, 1].astype(float)
        if test == "mcnemar_exact":
            p = mcnemar_pvalue(bb, cc, method="exact")[1]
        else:
            mean = (bb - cc) / n_use
            v = (bb + cc) / n_use - mean**2
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(v > 0, mean / np.sqrt(v / n_use), 0.0)
            p = 2 * special.ndtr(-np.abs(z))
    else:
        if test == "mcnemar_exact":
            raise ValueError("`test` 'mcnemar_exact' needs 0/1 scores.")
        p = np.empty(sims)
        step = max(1, 2**22 // n_use)
        for start in range(0, sims, step):
            idx = gen.integers(0, n_items, size=(min(step, sims - start), n_use))
            dd = d[idx]
            mean = dd.mean(axis=1)
            sd = dd.std(axis=1, ddof=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(sd > 0, mean / (sd / math.sqrt(n_use)), 0.0)
            p[start:start + idx.shape[0]] = 2 * special.ndtr(-np.abs(z))
    rate = float(np.mean(p <= alpha))
    return {"n": n_use, "empirical_power": rate, "standard_error": math.sqrt(rate * (1 - rate) / sims),
            "target": power, "delta": delta, "n_sims": sims, "test": test}
