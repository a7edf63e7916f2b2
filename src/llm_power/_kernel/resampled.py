"""The clustered verdict of resamples of whole clusters, as (B x G) weight-matrix products of the
per-cluster sums of :mod:`.sufficient`, decided by :func:`.verdict.resolved` (the one rule).
"""

from __future__ import annotations

import numpy as np

from .._core.progress import advance
from .quantiles import k_constant, upper_quantile
from .sufficient import BATCH_ELEMENTS, PairSums
from .variance import DESIGN_EFFECTS, cluster_design_effects
from .verdict import resolved

__all__ = ["cluster_resample_counts"]

#: elements of the (resamples x pairs) arrays of one chunk of cluster resamples: 64 Ki float64 (512 KB)
#: each, so that the twenty-odd elementwise steps of a resampled verdict run in cache, not in memory
CACHE_ELEMENTS = 1 << 16


def cluster_resample_counts(sums: PairSums, binary: bool, n_resamples: int, gen: np.random.Generator,
                            df: np.ndarray, *, alpha: float, power: float, design_effect: str,
                            confidence_level: float,
                            intervals: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Resamples of whole clusters (vectorised): the clustered unresolved count of each resample,
    and each pair's percentile interval of its resampled gaps at ``confidence_level`` (NaN when not
    ``intervals``: the counts alone skip a sort per pair).

    A cluster drawn k times counts as k clusters; each resample keeps the observed degrees of
    freedom of each pair's cluster test. All resamples are drawn first (one (B x G) draw), then
    the pairs are processed in chunks so that a chunk's (B x pairs) arrays stay bounded.
    """
    g = sums.clusters()[0].size
    n_pairs = sums.delta.size
    picks = gen.integers(0, g, size=(n_resamples, g))
    w = np.zeros((n_resamples, g))
    np.add.at(w, (np.arange(n_resamples)[:, None], picks), 1.0)
    # the critical values of each pair's cluster test, once
    crit = np.asarray(upper_quantile(alpha / 2.0, df), dtype=float)
    k_df = np.asarray(k_constant(alpha, power, "two-sided", df), dtype=float)
    tail = (1.0 - confidence_level) / 2.0
    counts = np.zeros(n_resamples, dtype=np.int64)
    low, high = np.empty(n_pairs), np.empty(n_pairs)
    step = max(1, BATCH_ELEMENTS // max(n_resamples, 1))
    inner = max(1, CACHE_ELEMENTS // max(n_resamples, 1))
    model = DESIGN_EFFECTS[design_effect]
    advance("cluster resamples", 0, n_pairs)
    for start in range(0, n_pairs, step):
        sl = slice(start, start + step)
        part = PairSums(n=sums.n, delta=sums.delta[sl], ss=sums.ss[sl], sizes=sums.sizes,
                        resid=None if sums.resid is None else sums.resid[:, sl],
                        resid_sq=None if sums.resid_sq is None else sums.resid_sq[:, sl])
        products = _resample_products(part, w, model.measured, model.imbens_kolesar_df)
        for sub in range(0, part.delta.size, inner):  # the elementwise steps chunk by chunk, in cache
            ss = slice(sub, sub + inner)
            unresolved, d_star = _resample_verdict({k: v[:, ss] for k, v in products.items()}, part.delta[ss],
                                                   sums.clusters()[0], w, binary, crit[sl][ss], k_df[sl][ss],
                                                   design_effect=design_effect)
            counts += unresolved
            at = slice(start + sub, start + sub + d_star.shape[1])
            if intervals:
                low[at], high[at] = np.quantile(np.ascontiguousarray(d_star.T), [tail, 1.0 - tail], axis=1)
            else:
                low[at] = high[at] = np.nan
        advance("cluster resamples", min(start + step, n_pairs), n_pairs)
    return counts, low, high


def _cr2_weights(w: np.ndarray, m: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    """Each resample's draw counts ``w`` (B x G) times the CR2 factor 1 / (1 - m_g / n_b) of the clusters
    drawn; 0 for a cluster not drawn (whose size may equal the resample's: 0/0 there is not a weight).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, w / (1.0 - m[None, :] / n_b[:, None]), 0.0)


def _resample_products(sums: PairSums, w: np.ndarray, measured: bool, cr2: bool) -> dict[str, np.ndarray]:
    """The (B x pairs) matrix products of the resampled verdicts of the pairs of ``sums``: ``w`` (B x G)
    counts how often each cluster is drawn in each resample. Measured design effects (CR2, CR1) need
    four products, the ANOVA ones nine.
    """
    m, r, qc = sums.clusters()
    n_b = w @ m
    rr = r * r
    out = {"e": w @ r, "q": w @ qc}
    if measured:
        ww = _cr2_weights(w, m, n_b) if cr2 else w  # CR2 factors of the resampled clusters
        out["sq1"], out["sq2"] = ww @ rr, ww @ (m[:, None] * r)
    else:
        wh = _cr2_weights(w, m, n_b)
        out["r2a"], out["r2b"] = w @ rr, w @ (m[:, None] * r)
        out["r2ha"], out["r2hb"] = wh @ rr, wh @ (m[:, None] * r)
        out["between"] = w @ (rr / m[:, None])
    return out


def _resample_verdict(p: dict[str, np.ndarray], delta: np.ndarray, m: np.ndarray, w: np.ndarray,  # noqa: PLR0913, PLR0917
                      binary: bool, crit: np.ndarray, k_df: np.ndarray, *,
                      design_effect: str) -> tuple[np.ndarray, np.ndarray]:
    """Unresolved flags summed per resample, and the resampled gaps, from the products of
    :func:`_resample_products` (elementwise only: the same expressions as :func:`cluster_design_effects`
    and the cluster verdict, so the same bits).
    """
    g = m.size
    n_b = w @ m  # (B,)
    e = p["e"] / n_b[:, None]  # delta_b - delta
    d_star = delta[None, :] + e
    var0 = np.maximum(p["q"] / n_b[:, None] - e * e, 0.0)
    var = var0 if binary else var0 / (1.0 - 1.0 / n_b)[:, None]  # ddof 1 for graded scores
    nn = n_b[:, None]
    model = DESIGN_EFFECTS[design_effect]
    if model.measured:  # the sandwich itself (CR2 or CR1): only its sum of squares, not all four effects
        ww = _cr2_weights(w, m, n_b) if model.imbens_kolesar_df else w
        sq = np.maximum(p["sq1"] - 2.0 * e * p["sq2"] + e * e * (ww @ (m * m))[:, None], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = sq / (nn * nn) if model.imbens_kolesar_df else g / (g - 1.0) * sq / (nn * nn)
    else:
        wh = _cr2_weights(w, m, n_b)
        r2 = np.maximum(p["r2a"] - 2.0 * e * p["r2b"] + e * e * (w @ (m * m))[:, None], 0.0)
        r2h = np.maximum(p["r2ha"] - 2.0 * e * p["r2hb"] + e * e * (wh @ (m * m))[:, None], 0.0)
        r2m = p["between"] - n_b[:, None] * e * e
        ssw = p["q"] - p["between"]
        effects = cluster_design_effects(n_b, g, var, r2, r2h, np.maximum(r2m, 0.0), w @ (m * m), ssw)
        variance = model.variance(effects, var, nn)
    # the decision of _cluster_decision, with critical values per pair instead of a p-value per resample
    with np.errstate(divide="ignore", invalid="ignore"):
        t_abs = np.abs(d_star) / np.sqrt(variance)
        floor_var = np.maximum(variance * nn, var)  # max(DE, 1) sigma^2
        q = np.where(floor_var > 0, nn * d_star * d_star / (floor_var * k_df), 0.0)
    # the verdict with the cluster t test's rejection decided by its critical value (q >= 1 implies a
    # gap and a finite N*)
    flags = resolved(q, rejected=t_abs >= crit)
    return np.sum(~flags, axis=1), d_star
