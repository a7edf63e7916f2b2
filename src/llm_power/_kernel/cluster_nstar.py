r"""N* of a clustered benchmark by the cluster bootstrap: simulate the chosen clustered test on benchmarks
grown from the observed clusters and find the smallest number of clusters whose power reaches the target.

Today's clustered N* is a formula, ``max(DE, 1) K_df sigma^2 / delta^2`` (:mod:`.verdict`), with the
design effect DE an *input* measured on the benchmark at hand and t quantiles on the benchmark's
Imbens-Kolesar df. Here the design effect is an *output*: a benchmark of G' clusters is simulated by
drawing G' whole clusters with replacement from the G observed ones -- each draw carries its
cluster's size m_g, its sum S_g of the paired differences D_i and its sum of squares, so the
simulated benchmarks carry the observed gap delta_hat = sum S_g / N, the observed between-cluster
variance and the observed mix of cluster sizes -- the chosen clustered test is run on each, and
the power is the share that reject in the direction of delta_hat. The number of clusters
G'* is the smallest with simulated power >= ``power``; N* in items is ``G'* mean(m_g)``, the
expected number of items of G'* drawn clusters, and the implied design effect is
``DE_boot = N*_boot / N*_iid`` with ``N*_iid = K sigma_D^2 / delta^2`` (normal quantiles, the IID plug-in).

**The pilot's uncertainty** (``pilot``). Drawing from the G observed clusters treats their
between-cluster variance as known, and it is not: with G = 14 clusters of unequal sizes the pilot's
CR2 variance rests on a few effective degrees of freedom, is skewed (usually too small, sometimes
far too large), and the bootstrap world shrinks it once more (the drawn clusters' deviations from
delta_hat have mean square sum R_g^2 / G, the CR2 variance sum h_g R_g^2 / G, h_g = 1/(1 - m_g/N)).
A G'* that gives power 0.80 in that world under-powers the real benchmark: over pilots its
population power averages well under 0.80 even when the pilot's gap is exact
(``scripts/cluster_nstar_validity.py``). ``pilot="expected"`` (the default) plans for the *expected*
power over the pilot variance's uncertainty instead, the rule of Julious and Owen (2006) behind
today's formula's pilot-df t quantiles: each simulation first draws a scale w with

    w^2 = kappa nu / chi2_nu,   kappa = sum h_g R_g^2 / sum R_g^2  (G / (G - 1) with equal sizes),

nu the Imbens-Kolesar df of the pilot's CR2 variance (its effective df, in [1, G - 1]) -- so that
w^2 sum R_g^2 / G is a draw from the posterior of the between-cluster variance given its CR2
estimate on nu df under the reference prior p(sigma^2) ~ 1/sigma^2 (a scaled inverse chi-square;
Box and Tiao 1973, section 2.3) -- and then its benchmark is drawn from the pilot's clusters with
their deviations scaled: S_g -> m_g delta_hat + w (S_g - m_g delta_hat). The gap stays delta_hat;
every cluster keeps its within-cluster sum of squares sum_i (D_i - S_g/m_g)^2 = Q_g - S_g^2/m_g
(Q_g the sum of squares becomes Q_g + (S_g'^2 - S_g^2)/m_g), because the within-cluster variance
is estimated on N - G df and is not what is uncertain; the CR2 test's ANOVA ICC (hence its df) then
sees the between-cluster share that the draw implies. (For 0/1 items the scaled cluster is no
longer a count of +1s and -1s; the tests only use the sums, and the sums are consistent: the
within-cluster sum of squares stays >= 0.) The chi-square draw is the upper-u quantile of one
uniform u per simulation, drawn before its clusters and shared by every G' and every pair, so the
common random numbers (and the monotone power curve) are kept. ``pilot="plug_in"`` takes the
observed clusters as the truth (w = 1): right when they are the population (a simulation study),
or to see the bootstrap world's own answer.

The alternative of correcting the plug-in G'* afterwards by the Julious-Owen factor
kappa (t'_{nu,power}(z_{1-alpha/2}) / (z_{1-alpha/2} + z_power))^2 (t' the noncentral t quantile:
the normal test's expected power over the same posterior) was measured too and is not used: it is
a normal-theory approximation laid over a simulated t test (the simulation averages the test's
own power over w), and with the pilot re-centred on the true gap it over-powered on all four
designs of the validity script (mean population power over 100 pilots 0.81-0.85, 3.5 SE above
0.80 on one design, where ``"expected"`` gives 0.79-0.83, all within 3 SE, and the plug-in
0.62-0.73). It does come closer to 0.80 when delta_hat is noisy (0.74-0.82 against 0.74-0.77), by
asking for about 5-10% more clusters than ``"expected"`` -- an allowance for the gap's noise
that it makes by accident, not by design. Two simpler choices under-powered on unequal sizes and
were dropped (40 pilots, true gap): nu = G - 1 (0.68-0.75; the Imbens-Kolesar df is smaller when
sizes differ) and kappa = 1 (0.75-0.78).

**The search is over the number of clusters G'** (the unit the design adds; items follow), on the
grid of every integer from 2 to 100 and about 1% steps above (``round(2 * 1.01^k)``): finer than
the Monte-Carlo noise of the power (at 1,000 simulations the SE of a power of 0.8 is 0.013, about
3% of G' at the slope of a normal power curve). It starts at today's formula's G', halves or doubles
until the target is bracketed, then bisects to adjacent grid points (about 12 steps).

**Common random numbers.** Each simulation is one infinite sequence of cluster draws; the benchmark
of G' clusters is its first G' draws, so the power curve is estimated on the same draws at every G'
and is monotone up to the test's own discreteness. Only the per-cluster *counts* matter (the
tests need sums over the drawn clusters), and they are generated lazily, in the order the search
asks for them: beyond every G' drawn so far by a multinomial increment, between two by the
multivariate hypergeometric split of the counts between them (the law of the first draws of a
sequence given its counts at both ends) -- exactly the nested sequence, whatever the search order.
The power at G'* reported is then re-estimated on ``n_sims`` fresh, independent simulations (the
search's own estimate there is >= the target by construction, biased upwards), with its
Monte-Carlo SE.

**The tests** (each as the package runs it on a real benchmark):

- ``"cr2"``: t = delta* / se_CR2 on Imbens-Kolesar df, the ICC of each simulated benchmark estimated
  by one-way ANOVA (:func:`.variance.cluster_design_effects`, :func:`.variance.cluster_df_from_counts`);
  all from per-cluster sums, O(sims x G x pairs) per G' whatever G' is.
- ``"cv3"``: t = delta* / se_CV3 (the cluster jackknife) on G' - 1 df; same cost.
- ``"wild"``: the restricted wild cluster bootstrap p-value of :func:`.wild_cluster.wild_cluster_test`
  (CR1-studentised, symmetric; ``weights="auto"``) with ``n_resamples`` draws per simulated
  benchmark, one call per simulation and grid point (all pairs at that point at once): a search
  costs about 15 x ``n_sims`` calls of O(G' x n_resamples) each -- about 1 s per pair at 400
  simulations, 199 draws and G' near 30, so meant for the few pairs shown, not a leaderboard.

References
----------
Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge
University Press (section 3.8: resampling whole clusters).
Field, C. A. and Welsh, A. H. (2007). Bootstrapping clustered data. Journal of the Royal
Statistical Society B 69(3), 369-390.
Arnold, B. F., Hogan, D. R., Colford, J. M. and Hubbard, A. E. (2011). Simulation methods to
estimate design power: an overview for applied research. BMC Medical Research Methodology 11, 94.
Landau, S. and Stahl, D. (2013). Sample size and power calculations for medical studies by
simulation when closed form expressions are not available. Statistical Methods in Medical
Research 22(3), 324-345.
Imbens, G. W. and Kolesar, M. (2016). Robust standard errors in small samples: some practical
advice. Review of Economics and Statistics 98(4), 701-712.
Julious, S. A. and Owen, R. J. (2006). Sample size calculations for clinical studies allowing for
uncertainty about the variance. Pharmaceutical Statistics 5(1), 29-37.
Box, G. E. P. and Tiao, G. C. (1973). Bayesian Inference in Statistical Analysis. Addison-Wesley
(section 2.3: the posterior of a normal variance, a scaled inverse chi-square).
"""

from __future__ import annotations

import bisect
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import DegenerateDataWarning, InfeasibleDesignWarning, warn
from .._core.validation import as_rng, check_alpha_power, check_alternative, check_int_at_least, check_option, fail
from . import quantiles as _q
from .variance import cluster_design_effects, cluster_df_from_counts, mean_variance_from_sums
from .verdict import cluster_verdict_from_variance, in_direction, plugin_verdict
from .wild_cluster import as_cluster_sums, wild_cluster_test

__all__ = [
    "GRID_RATIO",
    "PILOTS",
    "TESTS",
    "ClusterNStar",
    "bootstrap_n_star",
    "cluster_bootstrap_power",
    "cluster_grid",
]

#: the clustered tests whose power can be simulated
TESTS = ("cr2", "cv3", "wild")
#: how the pilot's between-cluster variance enters the simulations (see :func:`bootstrap_n_star`)
PILOTS = ("expected", "plug_in")
#: the search grid: every integer from 2 to 100, then steps of about 1%
GRID_RATIO = 1.01
#: pairs searched together (each block has its own draws; bounds the stored counts)
PAIR_BLOCK = 256
#: elements of the largest (sims x clusters x pairs) temporary of the t tests
BLOCK_ELEMENTS = 4_000_000
#: a simulated variance at or below this share of its scale is zero (a benchmark of copies of one cluster)
_ZERO_VARIANCE = 1e-20


def cluster_grid(max_clusters: int) -> np.ndarray:
    """The numbers of clusters searched: ``unique(round(2 GRID_RATIO^k))`` up to ``max_clusters``."""
    k = np.arange(int(math.ceil(math.log(max(max_clusters, 2) / 2.0) / math.log(GRID_RATIO))) + 2)
    grid = np.unique(np.round(2.0 * GRID_RATIO**k).astype(np.int64))
    return np.asarray(grid[grid <= max_clusters])


# =================================================================================================
# Inputs
# =================================================================================================

def _inputs(cluster_sums: Any, cluster_sumsq: Any, sizes: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                        tuple[int, ...]]:
    """(S (G, P), sums of squares (G, P), sizes (G,), trailing shape) with the package's checks."""
    s2, m, trailing = as_cluster_sums(cluster_sums, sizes, "cluster_sums")
    s = np.asarray(cluster_sums, dtype=float)
    q = np.asarray(cluster_sumsq, dtype=float)
    if q.shape != s.shape:
        msg = f"`cluster_sumsq` must have the shape of `cluster_sums` {s.shape}; got {q.shape}."
        raise ValueError(msg)
    if not (np.all(np.isfinite(q)) and np.all(q >= 0)):
        msg = "`cluster_sumsq` must be finite and non-negative."
        raise ValueError(msg)
    return s2, q.reshape(m.size, -1), m, trailing


@dataclass(frozen=True)
class _Test:
    """The simulated test: its name, level, alternative and (wild) bootstrap draws."""

    name: str
    alpha: float
    alternative: str
    n_resamples: int


# =================================================================================================
# Rejection rates of the tests on benchmarks given by per-cluster counts
# =================================================================================================

def _t_rejections(counts: np.ndarray, s: np.ndarray, sq: np.ndarray, m: np.ndarray, sign: np.ndarray,  # noqa: PLR0913, PLR0917
                  test: _Test, w: np.ndarray | None = None) -> np.ndarray:
    """Rejections (S, P) of the CR2 / CV3 t test on the benchmarks whose cluster counts are the rows of
    ``counts`` (S, G), for the pairs whose per-cluster sums are the columns of ``s`` (G, P), the
    clusters' deviations scaled by ``w`` (S, P) if given (:func:`_scaled`); a benchmark with no
    variation between its clusters (copies of one cluster) never rejects.
    """
    t, df = _t_statistics(counts, s, sq, m, test.name, w)
    p = _q.t_pvalue(t, df, test.alternative)
    return np.asarray((p <= test.alpha) & (np.sign(t) == sign[None, :]))


def _t_statistics(counts: np.ndarray, s: np.ndarray, sq: np.ndarray, m: np.ndarray,  # noqa: PLR0913, PLR0917
                  test: str, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(t, df) of the CR2 (Imbens-Kolesar df) or CV3 (G' - 1 df) test of each benchmark and pair (S, P);
    t is NaN on a benchmark with no variation between its clusters. With ``w`` (S, P) the clusters'
    deviations from the pilot gap are scaled by the benchmark's w (:func:`_scaled`); their within-cluster
    sums of squares are unchanged by construction, so the ANOVA ICC behind the df sees the same data.
    """
    c = counts.astype(float)
    n = c @ m  # (S,)
    g = float(counts[0].sum())
    with np.errstate(divide="ignore"):
        h = np.where(c > 0, 1.0 / (1.0 - m[None, :] / n[:, None]), 0.0)  # CR2 factors
    x = s[None, :, :] if w is None else _scaled(s, m, w)  # (1 or S, G, P): the clusters' sums

    def total(weights: np.ndarray, values: np.ndarray) -> np.ndarray:  # sum over the drawn clusters
        return np.asarray(weights @ values[0] if values.shape[0] == 1 else np.einsum("sg,sgp->sp", weights, values))

    mu = total(c, x) / n[:, None]  # (S, P)
    resid = x - m[None, :, None] * mu[:, None, :]  # (S, G, P): R_g of each drawn cluster
    r_sq = resid * resid
    weight = c * h if test == "cr2" else (g - 1.0) / g * c * h * h
    r2w = np.einsum("sg,sgp->sp", weight, r_sq)
    scale = total(weight, x * x)
    variance = r2w / (n * n)[:, None]
    if test == "cr2":
        r2 = np.einsum("sg,sgp->sp", c, r_sq)
        r2m = np.einsum("sg,sgp->sp", c / m[None, :], r_sq)
        ssw = c @ (sq - s * s / m[:, None])
        icc = cluster_design_effects(n, int(g), np.ones_like(r2), r2, r2w, r2m, c @ (m * m), ssw).icc
        df = cluster_df_from_counts(counts, m, icc)
    else:
        df = np.full(variance.shape, g - 1.0)
    ok = r2w > _ZERO_VARIANCE * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(ok, mu / np.sqrt(variance), np.nan)
    return np.asarray(t), np.asarray(df, dtype=float)


def _wild_rejections(counts: np.ndarray, s: np.ndarray, m: np.ndarray, sign: np.ndarray, test: _Test,  # noqa: PLR0913, PLR0917
                     rng: np.random.Generator, w: np.ndarray | None = None) -> np.ndarray:
    """Rejections (S, P) of the wild cluster bootstrap test: one :func:`wild_cluster_test` call per
    simulated benchmark (its clusters repeated as drawn, their deviations scaled by its row of ``w``
    if given), all pairs at once. One-sided alternatives use the equal-tailed p-value at 2 alpha in
    the tested direction.
    """
    two_sided = test.alternative == "two-sided"
    tails, level = ("symmetric", test.alpha) if two_sided else ("equal_tailed", 2.0 * test.alpha)
    out = np.zeros((counts.shape[0], s.shape[1]), dtype=bool)
    for i, row in enumerate(counts):
        x = s if w is None else _scaled(s, m, w[i:i + 1])[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)  # copies of one cluster: NaN, not rejected
            res = wild_cluster_test(np.repeat(x, row, axis=0), np.repeat(m, row), weights="auto",
                                    n_resamples=test.n_resamples, variance="cr1", tails=tails, rng=rng)
        p, t = np.atleast_1d(res.pvalue), np.atleast_1d(res.statistic)
        with np.errstate(invalid="ignore"):
            out[i] = (p <= level) & (np.sign(t) == sign)
    return out


def _rates(counts: np.ndarray, s: np.ndarray, sq: np.ndarray, m: np.ndarray, sign: np.ndarray, test: _Test,  # noqa: PLR0913, PLR0917
           rng: np.random.Generator, w: np.ndarray | None = None) -> np.ndarray:
    """The share of the benchmarks (rows of ``counts``) on which the test rejects, per pair (column of
    ``s``); ``w`` (S, P): each benchmark's scale of the clusters' deviations (None: the plug-in, 1).
    """
    if test.name == "wild":
        return np.asarray(_wild_rejections(counts, s, m, sign, test, rng, w).mean(axis=0))
    step = max(1, BLOCK_ELEMENTS // (counts.shape[0] * counts.shape[1]))
    out = np.empty(s.shape[1])
    for a in range(0, s.shape[1], step):
        sl = slice(a, a + step)
        out[sl] = _t_rejections(counts, s[:, sl], sq[:, sl], m, sign[sl], test,
                                None if w is None else w[:, sl]).mean(axis=0)
    return out


# =================================================================================================
# The pilot's uncertainty: a between-cluster variance drawn from its posterior in each simulation
# =================================================================================================

def _pilot_uncertainty(s: np.ndarray, sq: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nu, kappa) of each pair (P,): nu the Imbens-Kolesar df of the pilot's CR2 variance of the gap
    (its effective df, in [1, G - 1]), kappa = sum h_g R_g^2 / sum R_g^2 the CR2 factors'
    correction of the bootstrap world's between-cluster variance (G / (G - 1) with equal sizes).
    """
    n = float(m.sum())
    delta = s.sum(axis=0) / n
    resid = s - m[:, None] * delta
    resid_sq = sq - 2.0 * delta * s + m[:, None] * delta * delta
    mv = mean_variance_from_sums(int(round(n)), delta, sq.sum(axis=0) - n * delta * delta, m, resid, resid_sq,
                                 kind="cr2", ddof=0)
    r2 = np.sum(resid * resid, axis=0)
    r2h = np.sum(resid * resid / (1.0 - m[:, None] / n), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(r2 > 0, r2h / r2, 1.0)
    return np.asarray(mv.df, dtype=float), np.asarray(kappa, dtype=float)


def _pilot_scales(u: np.ndarray, nu: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """The scales w (S, P) of the simulations whose uniforms are ``u`` (S,): w^2 = kappa nu / chi2_nu, the
    chi-square draw the upper-``u`` quantile (one uniform per simulation, shared by the pairs and every G').
    """
    chi2 = _q.chi2_upper(u[:, None], nu[None, :])
    with np.errstate(divide="ignore"):
        return np.asarray(np.sqrt(kappa[None, :] * nu[None, :] / chi2))


def _scaled(s: np.ndarray, m: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The per-cluster sums (S, G, P) of the pilot (G, P) with each cluster's deviation from the pilot gap
    scaled by the simulation's w (S, P): ``m_g delta_hat + w (S_g - m_g delta_hat)``.
    """
    delta = s.sum(axis=0) / m.sum()
    base = m[:, None] * delta
    return np.asarray(base[None, :, :] + w[:, None, :] * (s - base)[None, :, :])


# =================================================================================================
# Nested cluster draws (common random numbers across G')
# =================================================================================================

def _split(increment: np.ndarray, take: int, rng: np.random.Generator) -> np.ndarray:
    """The counts among the first ``take`` of the draws whose counts are the rows of ``increment``:
    a multivariate hypergeometric draw per row, one category at a time.
    """
    out = np.zeros_like(increment)
    left = np.full(increment.shape[0], take, dtype=np.int64)
    total = increment.sum(axis=1)
    for j in range(increment.shape[1] - 1):
        good = increment[:, j]
        x = rng.hypergeometric(good, total - good, left)
        out[:, j] = x
        left -= x
        total -= good
    out[:, -1] = left
    return out


class _Paths:
    """``n_sims`` infinite sequences of draws of G clusters (uniform, with replacement), held as the
    per-cluster counts of their first G' draws at the G' asked for so far (:func:`_split` fills a G'
    between two known ones, a multinomial increment one beyond them).
    """

    def __init__(self, n_clusters: int, n_sims: int, rng: np.random.Generator) -> None:
        self.g, self.n_sims, self.rng = n_clusters, n_sims, rng
        self.keys: list[int] = []
        self.counts: dict[int, np.ndarray] = {}

    def at(self, size: int) -> np.ndarray:
        if size in self.counts:
            return self.counts[size]
        i = bisect.bisect_left(self.keys, size)
        below = self.keys[i - 1] if i > 0 else 0
        base = self.counts[below] if i > 0 else np.zeros((self.n_sims, self.g), dtype=np.int64)
        if i == len(self.keys):
            inc = self.rng.multinomial(size - below, np.full(self.g, 1.0 / self.g), size=self.n_sims)
        else:
            inc = _split(self.counts[self.keys[i]] - base, size - below, self.rng)
        out = np.asarray(base + inc, dtype=np.int64)
        self.keys.insert(i, size)
        self.counts[size] = out
        return out

    def keep(self, sizes: set[int]) -> None:
        """Forget the counts at every G' not in ``sizes`` (a subset of one path is still one path)."""
        self.keys = [k for k in self.keys if k in sizes]
        self.counts = {k: self.counts[k] for k in self.keys}


# =================================================================================================
# The power at a given number of clusters
# =================================================================================================

def cluster_bootstrap_power(cluster_sums: Any, cluster_sumsq: Any, sizes: Any, n_clusters: Any, *,  # noqa: PLR0913
                            alpha: float = 0.05, alternative: str = "two-sided", test: str = "cr2",
                            pilot: str = "expected", n_sims: int = 1000, n_resamples: int = 199,
                            rng: Any) -> tuple[Any, Any]:
    r"""The power of a clustered test on ``n_clusters`` clusters drawn with replacement from these.

    Parameters
    ----------
    cluster_sums, cluster_sumsq : array_like, shape (G,) or (G, P)
        Per-cluster sums S_g of the paired differences D_i and of their squares, one column per pair.
    sizes : array_like, shape (G,)
        Items per cluster m_g.
    n_clusters : int or array_like of int, shape (P,)
        G', the clusters of each simulated benchmark (>= 2).
    alpha, alternative, test, pilot, n_resamples
        As in :func:`bootstrap_n_star` (``pilot="plug_in"`` when the clusters given are the population).
    n_sims : int
        Simulated benchmarks per pair.
    rng : int, numpy.random.Generator or numpy.random.SeedSequence
        The source of the draws.

    Returns
    -------
    (power, se)
        The share of simulated benchmarks on which the test rejects in the direction of the
        observed gap, and its Monte-Carlo SE ``sqrt(p (1 - p) / n_sims)``; arrays of shape
        ``cluster_sums.shape[1:]``.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power._kernel.cluster_nstar import cluster_bootstrap_power
    >>> s = np.array([4.0, 1.0, 6.0, -2.0, 5.0, 2.0, 0.0, 3.0])  # a 4.4-point gap over 8 subjects
    >>> q = np.array([9.0, 11, 6, 8, 8, 9, 5, 7])  # discordant items per subject
    >>> m = np.array([50, 80, 30, 60, 45, 70, 40, 55])
    >>> p, se = cluster_bootstrap_power(s, q, m, 20, pilot="plug_in", n_sims=2000, rng=1)
    >>> round(float(p), 3), round(float(se), 4)
    (0.978, 0.0033)
    >>> p, se = cluster_bootstrap_power(s, q, m, 20, n_sims=2000, rng=1)  # over the pilot's uncertainty
    >>> round(float(p), 3), round(float(se), 4)
    (0.831, 0.0084)
    """
    alpha = check_alpha_power(alpha, 0.5 + alpha / 2.0)[0]
    check_alternative(alternative)
    check_option(test, "test", TESTS)
    check_option(pilot, "pilot", PILOTS)
    check_int_at_least(n_sims, "n_sims", 1)
    check_int_at_least(n_resamples, "n_resamples", 1)
    s, sq, m, shape = _inputs(cluster_sums, cluster_sumsq, sizes)
    sizes_g = np.broadcast_to(np.asarray(n_clusters), (s.shape[1],))
    if not np.all(np.equal(np.mod(sizes_g, 1), 0) & (sizes_g >= 2)):
        name = "n_clusters"
        raise fail(name, "whole numbers >= 2", n_clusters)
    gen = as_rng(rng)
    spec = _Test(test, alpha, alternative, n_resamples)
    sign = _direction(s, m, alternative)
    nu, kappa = _pilot_uncertainty(s, sq, m) if pilot == "expected" else (None, None)
    power = np.full(s.shape[1], np.nan)
    for size in np.unique(sizes_g):
        cols = np.nonzero(sizes_g == size)[0]
        w = None if nu is None or kappa is None else _pilot_scales(gen.random(n_sims), nu[cols], kappa[cols])
        counts = gen.multinomial(int(size), np.full(m.size, 1.0 / m.size), size=n_sims)
        power[cols] = _rates(counts, s[:, cols], sq[:, cols], m, sign[cols], spec, gen, w)
    power = np.where(sign == 0, np.nan, power)
    se = np.sqrt(power * (1.0 - power) / n_sims)
    return power.reshape(shape)[()], se.reshape(shape)[()]


def _direction(s: np.ndarray, m: np.ndarray, alternative: str) -> np.ndarray:
    """The sign of the rejections that count: the observed gap's (0: nothing to detect)."""
    delta = s.sum(axis=0) / m.sum()
    return np.where(in_direction(delta, alternative), np.sign(delta), 0.0)


# =================================================================================================
# N* by the bootstrap
# =================================================================================================

@dataclass(frozen=True)
class ClusterNStar:
    """N* of each pair by the cluster bootstrap (arrays: one value per column of ``cluster_sums``).

    ``n_clusters`` G'*, the smallest number of clusters on the grid whose simulated power reaches
    the target (inf: not even at ``max_clusters``, or no gap in the tested direction; NaN: no
    variation between clusters); ``n_star`` the items, ``G'* mean(m_g)``; ``n_star_iid`` the IID
    plug-in ``K sigma_D^2 / delta^2`` (normal quantiles) and ``design_effect`` = n_star / n_star_iid;
    ``n_star_formula`` today's clustered N* ``max(DE_CR2, 1) K_df sigma_D^2 / delta^2`` (Student t on
    the benchmark's Imbens-Kolesar df); ``achieved_power`` the power at G'* re-estimated on
    ``n_sims`` fresh simulations and ``achieved_power_se`` its Monte-Carlo SE; ``search_power`` the
    search's own estimate at G'* (>= the target) and ``below_power`` at the grid point below,
    ``n_clusters_below`` (< the target; NaN when G'* = 2); with ``pilot="expected"`` these powers are
    averages over the pilot variance's posterior as well as over the cluster draws.
    """

    n_clusters: Any
    n_star: Any
    n_star_iid: Any
    n_star_formula: Any
    design_effect: Any
    achieved_power: Any
    achieved_power_se: Any
    search_power: Any
    below_power: Any
    n_clusters_below: Any
    test: str
    alpha: float
    power: float
    alternative: str
    pilot: str
    n_sims: int
    n_resamples: int


def bootstrap_n_star(cluster_sums: Any, cluster_sumsq: Any, sizes: Any, *, alpha: float = 0.05,  # noqa: PLR0913
                     power: float = 0.8, alternative: str = "two-sided", test: str = "cr2",
                     pilot: str = "expected", n_sims: int = 1000, n_resamples: int = 199,
                     max_clusters: int = 1_000_000, ddof: int = 0, rng: Any) -> ClusterNStar:
    r"""The clusters (and items) a benchmark needs for a clustered test to reach ``power``, by the
    cluster bootstrap, for each pair (column of ``cluster_sums``).

    Parameters
    ----------
    cluster_sums : array_like, shape (G,) or (G, P)
        Per-cluster sums S_g of the paired differences D_i = X_i^A - X_i^B, one column per pair.
    cluster_sumsq : array_like, shape like ``cluster_sums``
        Per-cluster sums of D_i^2 (for 0/1 items, the discordant items of the cluster).
    sizes : array_like, shape (G,)
        Items per cluster m_g (G >= 2).
    alpha, power : float
        Level of the test and target power, in (0, 1), power > alpha.
    alternative : {"two-sided", "greater", "less"}
        The tested direction; a rejection counts only in the direction of the observed gap.
    test : {"cr2", "cv3", "wild"}
        The clustered test simulated: CR2 with Imbens-Kolesar df (the package's), the CV3 jackknife
        on G' - 1 df, or the restricted wild cluster bootstrap (see the module docstring for costs).
    pilot : {"expected", "plug_in"}
        How the observed clusters' between-cluster variance enters: ``"expected"`` (default) plans
        for the expected power over its uncertainty (each simulation scales the clusters'
        deviations from delta_hat by w, w^2 = kappa nu / chi2_nu on the pilot's Imbens-Kolesar df
        nu; Julious and Owen 2006), ``"plug_in"`` takes it as known (the plain cluster bootstrap).
        See the module docstring.
    n_sims : int
        Simulated benchmarks per grid point in the search, and again for the final check.
    n_resamples : int
        Bootstrap draws of each wild test (``test="wild"`` only; 199 makes alpha (B + 1) whole at 5%).
    max_clusters : int
        The largest G' searched; beyond it N* is inf with a warning.
    ddof : int
        Of the IID variance sigma_D^2 behind ``n_star_iid`` and ``n_star_formula`` (0: the 0/1 plug-in
        (b + c)/N - delta^2; 1 for graded scores).
    rng : int, numpy.random.Generator or numpy.random.SeedSequence
        The source of the draws (required: the same seed gives the same N*).

    Returns
    -------
    ClusterNStar

    Notes
    -----
    The bootstrap world is the observed clusters: a benchmark of G' clusters is G' draws from them
    with replacement, its gap estimated by sum S*/sum m* and tested by ``test``; the power is the
    share of simulations that reject in the direction of delta_hat. The search, the common random
    numbers and the final check are described in the module docstring. The answer inherits the
    pilot's noise: with G = 14 observed clusters the between-cluster variance, hence N*, is
    uncertain by tens of percent. ``pilot="plug_in"`` ignores that and under-powers on average;
    ``pilot="expected"`` averages the power over the variance's posterior, so that its N* reaches
    ``power`` on average over pilots when delta_hat is right (``scripts/cluster_nstar_validity.py``
    measures both in the bootstrap world, where the plug-in N* is right by construction, and in
    the population over pilots). Neither allows for the noise of delta_hat itself: plan for a gap
    you care about (re-centre the clusters, ``S_g + m_g (delta - delta_hat)``) when the pilot's
    is not it.
    With delta_hat = 0 (or against ``alternative``) N* is inf; when every cluster has the same mean
    gap (no variation between clusters) NaN with a warning.

    References
    ----------
    Davison & Hinkley (1997); Field & Welsh (2007); Arnold et al. (2011); Landau & Stahl (2013);
    Julious & Owen (2006); Box & Tiao (1973) -- see the module docstring.

    Examples
    --------
    Model A beats model B by 4.4 points on 430 questions in 8 subjects; how many subjects of this
    kind does a benchmark need for the CR2 test to detect that gap with power 0.8?

    >>> import numpy as np
    >>> from llm_power._kernel.cluster_nstar import bootstrap_n_star
    >>> s = np.array([4.0, 1.0, 6.0, -2.0, 5.0, 2.0, 0.0, 3.0])
    >>> q = np.array([9.0, 11, 6, 8, 8, 9, 5, 7])  # discordant items per subject
    >>> m = np.array([50, 80, 30, 60, 45, 70, 40, 55])
    >>> res = bootstrap_n_star(s, q, m, rng=0)
    >>> int(res.n_clusters), round(float(res.n_star)), round(float(res.design_effect), 2)
    (18, 968, 1.66)
    >>> round(float(res.n_star_formula)), round(float(res.achieved_power), 2)  # today's formula; the check
    (1005, 0.79)

    Eighteen subjects (968 items) give the CR2 test power 0.8 on average over what 8 subjects leave
    uncertain about the between-subject variance (the check, 0.79, is within its Monte-Carlo error
    of 0.80 at n_sims=1000); today's formula, whose t quantiles on the pilot's Imbens-Kolesar df
    make the same allowance (Julious and Owen 2006), asks for 1,005. Taking the 8 subjects' variance
    as known gives fewer, but powers the real benchmark at 0.80 only if that variance is right:

    >>> plug = bootstrap_n_star(s, q, m, pilot="plug_in", rng=0)
    >>> int(plug.n_clusters), round(float(plug.n_star)), round(float(plug.achieved_power), 2)
    (13, 699, 0.83)
    """
    alpha, power = check_alpha_power(alpha, power)
    check_alternative(alternative)
    check_option(test, "test", TESTS)
    check_option(pilot, "pilot", PILOTS)
    check_int_at_least(n_sims, "n_sims", 10)
    check_int_at_least(n_resamples, "n_resamples", 1)
    check_int_at_least(max_clusters, "max_clusters", 2)
    check_int_at_least(ddof, "ddof", 0, maximum=1)
    s, sq, m, shape = _inputs(cluster_sums, cluster_sumsq, sizes)
    gen = as_rng(rng)
    n = float(m.sum())
    delta = s.sum(axis=0) / n
    ss = sq.sum(axis=0) - n * delta * delta
    var = np.maximum(ss, 0.0) / (n - ddof)
    resid = s - m[:, None] * delta
    resid_sq = sq - 2.0 * delta * s + m[:, None] * delta * delta
    formula = _formula(n, delta, ss, var, m, resid, resid_sq, alpha=alpha, power=power, alternative=alternative,
                       ddof=ddof)
    n_iid = plugin_verdict(delta, var, n, _q.k_constant(alpha, power, alternative), alternative)[0]
    flat = np.all(np.abs(resid) <= 1e-12 * np.maximum(np.abs(s) + m[:, None] * np.abs(delta), 1e-300), axis=0)
    sign = _direction(s, m, alternative)
    if np.any(flat & (sign != 0)):
        warn(f"{int(np.sum(flat & (sign != 0))):,} of {flat.size:,} pairs have the same mean gap in every "
             "cluster (no variation between clusters to resample): their bootstrap N* is NaN.",
             DegenerateDataWarning)
    grid = cluster_grid(max_clusters)
    spec = _Test(test, alpha, alternative, n_resamples)
    todo = np.nonzero((sign != 0) & ~flat)[0]
    nu, kappa = _pilot_uncertainty(s, sq, m) if pilot == "expected" else (None, None)
    found = np.full((4, s.shape[1]), np.nan)  # G'*, search power, G' below, power below
    search_rng, check_rng = gen.spawn(2)
    blocks = list(range(0, todo.size, PAIR_BLOCK))
    for start, block_rng in zip(blocks, search_rng.spawn(len(blocks)), strict=True):
        cols = todo[start:start + PAIR_BLOCK]
        guess = np.where(np.isfinite(formula[cols]), formula[cols] / m.mean(), grid[-1])
        scales = None if nu is None or kappa is None else (nu[cols], kappa[cols])
        found[:, cols] = _search(s[:, cols], sq[:, cols], m, sign[cols], guess, grid, spec, power, n_sims,
                                 block_rng, scales)
    g_star = np.where(sign == 0, np.inf, np.where(flat, np.nan, found[0]))
    if np.any(np.isinf(found[0][todo])):
        warn(f"{int(np.sum(np.isinf(found[0][todo]))):,} pairs do not reach power {power:g} even with "
             f"{grid[-1]:,} clusters: their bootstrap N* is inf.", InfeasibleDesignWarning)
    achieved, achieved_se = np.full(s.shape[1], np.nan), np.full(s.shape[1], np.nan)
    done = np.nonzero(np.isfinite(g_star))[0]
    if done.size:
        achieved[done], achieved_se[done] = cluster_bootstrap_power(
            s[:, done], sq[:, done], m, g_star[done].astype(np.int64), alpha=alpha, alternative=alternative,
            test=test, pilot=pilot, n_sims=n_sims, n_resamples=n_resamples, rng=check_rng)
    n_star = g_star * m.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        de = np.where(np.isfinite(n_iid) & (n_iid > 0), n_star / n_iid, np.nan)

    def out(x: np.ndarray) -> Any:
        return np.asarray(x, dtype=float).reshape(shape)[()]

    return ClusterNStar(n_clusters=out(g_star), n_star=out(n_star), n_star_iid=out(n_iid),
                        n_star_formula=out(formula), design_effect=out(de), achieved_power=out(achieved),
                        achieved_power_se=out(achieved_se), search_power=out(found[1]), below_power=out(found[3]),
                        n_clusters_below=out(found[2]), test=test, alpha=alpha, power=power,
                        alternative=alternative, pilot=pilot, n_sims=n_sims, n_resamples=n_resamples)


def _formula(n: float, delta: np.ndarray, ss: np.ndarray, var: np.ndarray, m: np.ndarray, resid: np.ndarray,  # noqa: PLR0913, PLR0917
             resid_sq: np.ndarray, *, alpha: float, power: float, alternative: str, ddof: int) -> np.ndarray:
    """Today's clustered N*: max(DE_CR2, 1) K_df sigma^2 / delta^2 (:func:`.verdict.cluster_verdict_from_variance`)."""
    mv = mean_variance_from_sums(int(round(n)), delta, ss, m, resid, resid_sq, kind="cr2", ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = cluster_verdict_from_variance(delta, var, n, mv.variance, mv.design_effect, mv.df,
                                            np.ones(delta.shape, dtype=bool), n_clusters=m.size, alpha=alpha,
                                            power=power, alternative=alternative).n_star
    return np.asarray(out, dtype=float)


def _search(s: np.ndarray, sq: np.ndarray, m: np.ndarray, sign: np.ndarray, guess: np.ndarray,  # noqa: PLR0913, PLR0917
            grid: np.ndarray, test: _Test, target: float, n_sims: int, rng: np.random.Generator,
            scales: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Bracket (halve or double from the guess) then bisect on the grid index, all pairs of the block
    at once on shared nested draws (and, with ``scales`` = (nu, kappa), one w per simulation drawn
    before its clusters); returns (G'*, its power, the G' below, its power), (4, P).
    """
    p = s.shape[1]
    top = grid.size - 1
    lo, hi = np.full(p, -1), np.full(p, -1)  # grid indices: lo fails, hi passes (-1: not yet known)
    lo_pow, hi_pow = np.full(p, np.nan), np.full(p, np.nan)
    nxt = np.clip(np.searchsorted(grid, np.maximum(guess, 2.0)), 0, top)
    w = None if scales is None else _pilot_scales(rng.random(n_sims), *scales)
    paths = _Paths(m.size, n_sims, rng)
    active = np.ones(p, dtype=bool)
    while np.any(active):
        for k in np.unique(nxt[active]):
            cols = np.nonzero(active & (nxt == k))[0]
            rate = _rates(paths.at(int(grid[k])), s[:, cols], sq[:, cols], m, sign[cols], test, rng,
                          None if w is None else w[:, cols])
            ok = rate >= target
            hi[cols[ok]], hi_pow[cols[ok]] = k, rate[ok]
            lo[cols[~ok]], lo_pow[cols[~ok]] = k, rate[~ok]
        done = ((hi == 0) | ((lo >= 0) & (hi >= 0) & (hi - lo <= 1))) | ((hi < 0) & (lo == top))
        active &= ~done
        up = active & (hi < 0)
        down = active & (lo < 0)
        both = active & (hi >= 0) & (lo >= 0)
        nxt = np.where(up, np.minimum(np.searchsorted(grid, 2 * grid[np.maximum(lo, 0)]), top), nxt)
        nxt = np.where(down, np.minimum(np.searchsorted(grid, grid[np.maximum(hi, 0)] / 2.0), np.maximum(hi, 1) - 1),
                       nxt)
        nxt = np.where(both, (lo + hi) // 2, nxt)
        paths.keep({int(grid[i]) for i in np.concatenate([lo[active], hi[active]]) if i >= 0})
    g_star = np.where(hi >= 0, grid[np.maximum(hi, 0)], np.inf).astype(float)
    g_below = np.where((hi > 0) & (lo >= 0), grid[np.maximum(lo, 0)], np.nan).astype(float)
    below_pow = np.where(np.isfinite(g_below), lo_pow, np.nan)
    return np.stack([g_star, np.where(hi >= 0, hi_pow, np.nan), g_below, below_pow])
