r"""The power of a whole family of paired comparisons (a leaderboard), planned from a pilot: the only copy.

Pair k of a family (adjacent pairs of a ranking, all pairs, ...) has a true gap :math:`\delta_k` and a
per-item standard deviation :math:`\sigma_k` of its differences; the family's statistics have the
correlation matrix R (:func:`llm_power._kernel.family.family_correlation`). With N paired items the
vector of z statistics tends to

    Z ~ N(mu, R),   mu_k = delta_k sqrt(N) / sigma_k,

and this module judges Z **through the package's verdict** (:func:`.verdict.plugin_verdict` for q and
:func:`.verdict.resolved` for the rule): pair k is resolved at level a when q = N / N* >= 1 and its
test rejects at a, which for the plug-in verdict of a z statistic is :math:`Z_k^2 \ge K(a)` and
:math:`|Z_k| \ge z_{1-a/2}`, i.e.

    |Z_k| >= max(z_{1-a/2} + z_{power}, z_{1-a/2})      (K = k_constant(a, power, "two-sided")).

The per-pair levels a are those of the multiplicity correction (as in the resolution regime's
``_corrected``), from the ranks of the p-values :math:`2\Phi(-|Z_k|)`, i.e. of :math:`|Z_k|`:

- ``"none"``: a = alpha; ``"bonferroni"``: a = alpha / m;
- ``"holm"``: the pair of rank r at alpha / (m - r + 1), stepping down until the first failure;
- ``"bh"``: the largest rank j* whose pair passes at j* alpha / m; every pair of rank <= j* is then
  judged at j* alpha / m (and passes, its |Z| being at least the j*-th); ``"by"``: the same at
  alpha / (1 + 1/2 + ... + 1/m);
- ``"ebh"``: e-BH (Wang & Ramdas 2022) on the normal-mixture e-values of the anytime regime
  (:func:`llm_power.sequential.normal_mixture_log_evalue` with :math:`\rho = r v`, r from
  :func:`llm_power.sequential.anytime_critical_value`): in the limit
  :math:`\log E_k = \tfrac12\log(r/(1+r)) + Z_k^2/(2(1+r))`, so e-BH's step-up "the j largest e-values
  are each >= m/(alpha j)" is a step-up on |Z| with critical values
  :math:`c_j^2 = 2(1+r)[\log(m/(\alpha j)) + \tfrac12\log((1+r)/r)]`, judged as the level
  :math:`a_j = 2\Phi(-c_j)` (valid under any dependence);
- ``"dunnett"``: Dunnett's single-step many-to-one test, **one-sided** (pair k's first model better):
  every pair at the level :math:`a = \Phi(-c)`, c the joint critical value of
  :func:`.family.dunnett_critical_value` for R, with the one-sided q (K = (c + z_{power})^2), so a pair
  is resolved when :math:`Z_k \ge c + z_{power}`.

A resolution counts only when the sign of :math:`Z_k` is the sign of :math:`\delta_k` (a gap
"resolved" the wrong way round is an error, not power). R(N) is the number of such resolutions.
The others are **false resolutions** V(N): a pair with :math:`\delta_k = 0` (a true null) resolved
either way, or a real gap resolved the wrong way round; the false discovery rate is
:math:`E[V / \max(R + V, 1)]` (directional, so never smaller than the usual one).

**Exact P(all).** For the single-step procedures (``"none"``, ``"bonferroni"``, ``"dunnett"``) pair k
is resolved in its direction exactly when :math:`s_k Z_k \ge t` (t the procedure's threshold), so
P(all real gaps resolved) is an orthant probability of N(mu, R), computed by the multivariate normal CDF
(Genz) for families of up to :data:`MAX_EXACT_PAIRS` pairs (``all_resolved_exact``).

**Common random numbers.** One set of standard normal draws W ~ N(0, R) (``n_simulations`` x m,
from ``rng``) is reused for every N: Z(N) = mu(N) + W, so the curves over N are smooth and a search
over N is a deterministic function of the draws.

**Monotonicity.** On one draw, :math:`s_k Z_k(N) = |\mu_k(N)| + s_k W_k` (s_k = sign delta_k) rises
with N, so with ``"none"`` or ``"bonferroni"`` each pair's correct resolution, hence R(N), is
non-decreasing in N on every draw; Holm's and BH's rejections grow when every |Z| grows, but a
statistic on the wrong side of 0 has a |Z| that *shrinks* as N grows and can end a step-down earlier,
so with a correction R(N) is non-decreasing only up to such (rare) draws. The search for the items
needed assumes the criterion is non-decreasing in N, checks it on every N it evaluated, and warns
(:class:`ApproximationWarning`) when it is not.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Stat. 6, 65-70.
Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57, 289-300.
Dunnett, C. W. (1955). A multiple comparison procedure for comparing several treatments with a
control. JASA 50, 1096-1121.
Wang, R. and Ramdas, A. (2022). False discovery rate control with e-values. JRSS B 84, 822-852.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special

from .._core.errors import ApproximationWarning
from .._core.validation import as_rng, check_alpha_power, check_int_at_least, check_open_unit, check_option, fail
from . import quantiles as _q
from .family import check_correlation
from .verdict import floor_pvalue, plugin_verdict, resolved

__all__ = ["LEADERBOARD_CORRECTIONS", "DiscoveryItems", "LeaderboardItems", "LeaderboardPower", "decide",
           "ebh_critical_values", "items_for_discoveries", "items_for_leaderboard", "leaderboard_power", "parse_goal",
           "rank_levels", "search_items"]

#: the multiplicity procedures a leaderboard is planned under (the package's corrections and "none")
LEADERBOARD_CORRECTIONS = ("bh", "bonferroni", "by", "dunnett", "ebh", "holm", "none")
#: the single-step procedures (every pair at one threshold): P(all) is an orthant probability
SINGLE_STEP = ("bonferroni", "dunnett", "none")
#: the step-up procedures (BH's shape)
STEP_UP = ("bh", "by", "ebh")
#: P(all) by the multivariate normal CDF up to this many pairs (Genz's integration grows with them)
MAX_EXACT_PAIRS = 25
#: lower and upper quantiles of the simulated count reported as its band
BAND = (0.05, 0.95)
#: draws x pairs elements judged at once (bounded memory)
_BLOCK_ELEMENTS = 2_000_000


# ----------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, slots=True)
class LeaderboardPower:
    """The power of a family of comparisons as a function of the number of items N.

    Fields are scalars for a scalar ``n_items``, arrays over ``n_items`` otherwise; ``at_least`` has
    one more axis, k = 0..m (``at_least[..., k]`` = P(R >= k)), and ``each_resolved`` one axis over
    the m pairs. ``band_low``/``band_high``: the 5% / 95% quantiles of the simulated count R.
    ``false_resolved``: E[V], the false resolutions (true nulls resolved, real gaps resolved the wrong
    way); ``fdr`` (with ``fdr_se``): E[V / max(R + V, 1)]. ``all_resolved_exact``: P(all) by the
    multivariate normal CDF for a single-step procedure of up to :data:`MAX_EXACT_PAIRS` pairs, else None.
    """

    n_items: Any
    expected_resolved: Any
    expected_resolved_se: Any
    band_low: Any
    band_high: Any
    all_resolved: Any
    all_resolved_se: Any
    at_least: np.ndarray
    each_resolved: np.ndarray
    n_pairs: int
    correction: str
    alpha: float
    power: float
    n_simulations: int
    false_resolved: Any = None
    fdr: Any = None
    fdr_se: Any = None
    all_resolved_exact: Any = None

    def __repr__(self) -> str:
        return (f"LeaderboardPower(n_pairs={self.n_pairs}, n_items={_short(self.n_items)}, "
                f"expected_resolved={_short(self.expected_resolved)}, all_resolved={_short(self.all_resolved)}, "
                f"correction={self.correction!r})")

    def probability_at_least(self, k: int) -> Any:
        """P(at least ``k`` gaps resolved) at each N (k = 0..n_pairs)."""
        k = check_int_at_least(k, "k", 0, maximum=self.n_pairs)
        out = np.asarray(self.at_least)[..., k]
        return float(out) if out.ndim == 0 else out

    def summary(self) -> str:
        """A table: N, E[R] (SE), band, P(all)."""
        ns = np.atleast_1d(self.n_items)
        rows = [f"{'N':>10} {'E[resolved]':>12} {'SE':>7} {'5%-95%':>8} {'P(all)':>7}"]
        for t, n in enumerate(ns):
            e, se = np.atleast_1d(self.expected_resolved)[t], np.atleast_1d(self.expected_resolved_se)[t]
            lo, hi = np.atleast_1d(self.band_low)[t], np.atleast_1d(self.band_high)[t]
            pa = np.atleast_1d(self.all_resolved)[t]
            rows.append(f"{float(n):>10,.0f} {e:>12.3f} {se:>7.3f} {int(lo):>3}-{int(hi):<4} {pa:>7.3f}")
        return "\n".join([f"{self.n_pairs} gaps, correction {self.correction!r}, alpha {self.alpha:g}, "
                          f"power {self.power:g}, {self.n_simulations:,} draws", *rows])

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {"n_items": _plain(self.n_items), "expected_resolved": _plain(self.expected_resolved),
                "expected_resolved_se": _plain(self.expected_resolved_se), "band_low": _plain(self.band_low),
                "band_high": _plain(self.band_high), "all_resolved": _plain(self.all_resolved),
                "all_resolved_se": _plain(self.all_resolved_se), "at_least": _plain(self.at_least),
                "each_resolved": _plain(self.each_resolved), "n_pairs": self.n_pairs,
                "correction": self.correction, "alpha": self.alpha, "power": self.power,
                "n_simulations": self.n_simulations, "false_resolved": _plain(self.false_resolved),
                "fdr": _plain(self.fdr), "fdr_se": _plain(self.fdr_se),
                "all_resolved_exact": _optional(self.all_resolved_exact, _plain)}


@dataclass(frozen=True, slots=True)
class LeaderboardItems:
    """The smallest integer N whose criterion reaches its target.

    ``criterion`` is ``"at_least"`` (P(R >= ``k``) >= ``target``) or ``"expected"`` (E[R] >= ``target``);
    ``value`` is the criterion at ``n_items`` and ``value_below`` at ``n_items - 1``; ``evaluated``
    the (N, value) pairs the search computed, and ``monotone`` whether they were non-decreasing in N.
    """

    n_items: int
    criterion: str
    k: int | None
    target: float
    value: float
    value_below: float
    evaluated: tuple[tuple[int, float], ...]
    monotone: bool
    n_pairs: int
    correction: str
    alpha: float
    power: float
    n_simulations: int

    def __repr__(self) -> str:
        goal = (f"P(R >= {self.k}) >= {self.target:g}" if self.criterion == "at_least"
                else f"E[R] >= {self.target:g}")
        return (f"LeaderboardItems(n_items={self.n_items}, goal={goal!r}, value={self.value:.4g}, "
                f"correction={self.correction!r})")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {"n_items": self.n_items, "criterion": self.criterion, "k": self.k, "target": self.target,
                "value": self.value, "value_below": self.value_below,
                "evaluated": [[n, v] for n, v in self.evaluated], "monotone": self.monotone,
                "n_pairs": self.n_pairs, "correction": self.correction, "alpha": self.alpha,
                "power": self.power, "n_simulations": self.n_simulations}


def _plain(value: Any) -> Any:
    arr = np.asarray(value)
    return arr.tolist() if arr.ndim else (int(arr) if np.issubdtype(arr.dtype, np.integer) else float(arr))


def _optional(value: Any, convert: Any) -> Any:
    """``convert(value)``, or None for None."""
    return None if value is None else convert(value)


def _short(value: Any) -> str:
    arr = np.asarray(value, dtype=float)
    return f"{float(arr):.4g}" if arr.ndim == 0 else f"array(shape={arr.shape})"


# ----------------------------------------------------------------------------------------------
# the family's draws and its verdicts


@dataclass(frozen=True, slots=True)
class _Family:
    """Validated inputs: unit means (mu at N = 1), signs, the draws W ~ N(0, R) and per-rank levels."""

    unit: np.ndarray  # delta / sigma
    sign: np.ndarray  # sign of delta (0: a true null, never resolved the right way)
    corr: np.ndarray  # R
    draws: np.ndarray  # n_simulations x m
    levels: np.ndarray  # the level of the pair of rank r (1..m) in the correction's first pass
    k: np.ndarray  # K at those levels
    power: float
    correction: str
    alternative: str  # "two-sided", or "greater" for Dunnett's one-sided test
    df_per_item: np.ndarray | None = None  # clustered tests: each pair's t df per item (df = this x N)


def _reachable(fam: _Family) -> int:
    """The gaps that can be resolved in their direction: the real ones (the gains, for a one-sided test)."""
    return int(np.count_nonzero(fam.sign > 0 if fam.alternative == "greater" else fam.sign))


def _verdict(z: np.ndarray, level: np.ndarray, k: np.ndarray, alternative: str = "two-sided",
             df: Any = None) -> np.ndarray:
    """The package's verdict of z statistics at ``level``: the plug-in q of a gap Z with unit variance on
    one item (q = Z^2 / K) and the p-value (two-sided 2 Phi(-|Z|), or one-sided Phi(-Z); Student t on
    ``df`` when given, K then on the same df), judged by :func:`.verdict.resolved` (q >= 1 and
    p <= level, i.e. |Z| >= z_{1-a/2} + z_{power} two-sided).
    """
    n_star, q, _ = plugin_verdict(z, np.ones_like(z), 1.0, k, alternative)
    pvalue = _q.normal_pvalue(z, alternative) if df is None else _q.t_pvalue(z, df, alternative)
    return resolved(q, n_star, pvalue=floor_pvalue(pvalue), alpha=level)


def ebh_critical_values(alpha: float, m: int) -> np.ndarray:
    """|Z| thresholds c_j (j = 1..m) of e-BH on the anytime regime's normal-mixture e-values tuned as
    :func:`llm_power.sequential.anytime_critical_value` tunes them (rho = r v): the j largest e-values
    pass when each is >= m / (alpha j), i.e. |Z| >= c_j (module docstring).
    """
    _, r = _q.mixture_tuning(alpha)
    j = np.arange(1, m + 1, dtype=float)
    return np.sqrt(2.0 * (1.0 + r) * (np.log(m / (alpha * j)) + 0.5 * math.log((1.0 + r) / r)))


def rank_levels(alpha: float, m: int, correction: str, corr: np.ndarray | None = None) -> np.ndarray:
    """Per-rank levels (rank 1 = the smallest p-value) of the correction's first pass."""
    ranks = np.arange(1, m + 1, dtype=float)
    if correction == "none":
        return np.full(m, alpha)
    if correction == "bonferroni":
        return np.full(m, alpha / m)
    if correction == "holm":
        return alpha / (m - ranks + 1)
    if correction == "dunnett":
        from .family import dunnett_critical_value

        c = dunnett_critical_value(np.eye(m) if corr is None else corr, alpha, "greater")
        return np.full(m, float(special.ndtr(-c)))
    if correction == "ebh":
        return np.asarray(2.0 * special.ndtr(-ebh_critical_values(alpha, m)), dtype=float)
    return ranks * _step_up_alpha(alpha, m, correction) / m


def _step_up_alpha(alpha: float, m: int, correction: str) -> float:
    """BH's alpha, or BY's alpha / (1 + 1/2 + ... + 1/m)."""
    return alpha / float(np.sum(1.0 / np.arange(1, m + 1))) if correction == "by" else alpha


def _family(delta: Any, sd: Any, corr: Any, *, alpha: float, power: float, correction: str,  # noqa: PLR0913
            n_simulations: int, rng: Any, df_per_item: Any = None) -> _Family:
    alpha, power = check_alpha_power(alpha, power)
    correction = check_option(correction, "correction", LEADERBOARD_CORRECTIONS)
    n_simulations = check_int_at_least(n_simulations, "n_simulations", 2)
    d = np.atleast_1d(np.asarray(delta, dtype=float))
    if d.ndim != 1 or not np.all(np.isfinite(d)):
        name = "delta"
        raise fail(name, "a 1-d array of finite gaps, one per pair", delta)
    s = np.atleast_1d(np.asarray(sd, dtype=float))
    if s.shape != d.shape:
        msg = f"`sd` must hold one value per pair ({d.size}); got shape {s.shape}."
        raise ValueError(msg)
    if not np.all(np.isfinite(s) & (s > 0)):
        name = "sd"
        raise fail(name, "positive and finite (the per-item SD of each pair's differences)", sd)
    r = check_correlation(corr)
    if r.shape[0] != d.size:
        msg = f"`corr` must be {d.size} x {d.size} (one row per pair); got shape {r.shape}."
        raise ValueError(msg)
    gen = as_rng(rng)
    vals, vecs = np.linalg.eigh(r)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))  # R = root root^T (positive semi-definite R allowed)
    draws = gen.standard_normal((n_simulations, d.size)) @ root.T
    alternative = "greater" if correction == "dunnett" else "two-sided"
    levels = rank_levels(alpha, d.size, correction, r)
    k = np.asarray(_q.k_constant(levels, power, alternative), dtype=float)
    per_item = None
    if df_per_item is not None:
        per_item = np.broadcast_to(np.asarray(df_per_item, dtype=float), d.shape).copy()
        if not np.all(np.isfinite(per_item) & (per_item > 0)):
            name = "df_per_item"
            raise fail(name, "positive and finite (each pair's degrees of freedom per item)", df_per_item)
    return _Family(unit=d / s, sign=np.sign(d), corr=r, draws=draws, levels=levels, k=k, power=power,
                   correction=correction, alternative=alternative, df_per_item=per_item)


def decide(z: np.ndarray, levels: np.ndarray, k: np.ndarray, correction: str, alternative: str = "two-sided",  # noqa: PLR0913
           *, df: np.ndarray | None = None, k_table: np.ndarray | None = None) -> np.ndarray:
    """The correction's verdicts of statistics ``z`` (draws x pairs): per-rank ``levels`` and ``k`` from
    :func:`rank_levels` (single-step: every pair at ``levels``); with ``df`` (per pair) t quantiles, K from
    ``k_table`` (rank x pair). Flags before any direction check.
    """
    m = z.shape[1]
    if correction in SINGLE_STEP:
        return _verdict(z, levels, k if k_table is None else k_table[0], alternative, df)
    # rank 1: the smallest p-value (the largest |Z| when every pair has the same df)
    key = np.abs(z) if df is None else -_q.t_pvalue(z, df)
    order = np.argsort(-key, axis=1, kind="stable")
    z_sorted = np.take_along_axis(z, order, axis=1)
    df_sorted = None if df is None else df[order]
    k_sorted = k if k_table is None else k_table[np.arange(m)[None, :], order]
    passes = _verdict(z_sorted, levels, k_sorted, df=df_sorted)
    if correction == "holm":  # step down: stop at the first failure
        flags_sorted = np.logical_and.accumulate(passes, axis=1)
    else:  # step up: ranks <= j* are judged again at j*'s level
        j_star = np.where(passes.any(axis=1), m - np.argmax(passes[:, ::-1], axis=1), 0)
        star = np.maximum(j_star, 1) - 1
        level = levels[star][:, None]
        k_star = k[star][:, None] if k_table is None else k_table[star[:, None], order]
        flags_sorted = _verdict(z_sorted, level, k_star, df=df_sorted) & (np.arange(m) < j_star[:, None])
    flags = np.empty_like(flags_sorted)
    np.put_along_axis(flags, order, flags_sorted, axis=1)
    return flags


def _judge(fam: _Family, n: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count of correct resolutions per draw, per-pair correct-resolution flags, count of false
    resolutions per draw) at N = ``n``.

    As ``resolution._regimes._corrected``: the pairs ordered by p-value (|Z| descending, stable), each
    judged by :func:`_verdict` at its rank's level; Holm keeps the passes up to the first failure; BH,
    BY and e-BH find the largest passing rank j* and judge every pair of rank <= j* at j*'s level; the
    single-step procedures judge every pair at its one level.
    """
    m = fam.unit.size
    out_count = np.empty(fam.draws.shape[0], dtype=np.int64)
    out_false = np.empty(fam.draws.shape[0], dtype=np.int64)
    out_flags = np.empty(fam.draws.shape, dtype=bool)
    rows = max(1, _BLOCK_ELEMENTS // m)
    mu = fam.unit * math.sqrt(n)
    df = None if fam.df_per_item is None else np.maximum(fam.df_per_item * n, 1.0)
    k_table = None
    if df is not None:  # K at (the level of rank r, the df of pair p): an m x m table (m x 1 single-step)
        lv = fam.levels[:1] if fam.correction in SINGLE_STEP else fam.levels
        k_table = np.asarray(_q.k_constant(lv[:, None], fam.power, fam.alternative, df[None, :]), dtype=float)
    for start in range(0, fam.draws.shape[0], rows):
        sl = slice(start, start + rows)
        z = fam.draws[sl] + mu
        flags = decide(z, fam.levels, fam.k, fam.correction, fam.alternative, df=df, k_table=k_table)
        right = np.sign(z) == fam.sign  # a gap resolved the wrong way round (or a null resolved) is false
        out_false[sl] = (flags & ~right).sum(axis=1)
        flags &= right
        out_flags[sl] = flags
        out_count[sl] = flags.sum(axis=1)
    return out_count, out_flags, out_false


def _exact_all(fam: _Family, ns: np.ndarray) -> np.ndarray | None:
    """P(all resolved in their directions) by the multivariate normal CDF, for a single-step procedure:
    pair k is resolved exactly when s_k Z_k >= t_k, t_k = z_{1-a} + z_{power} (one-sided) or
    z_{1-a/2} + z_{power} (two-sided) -- the square root of its K.
    """
    from .family import orthant_below

    m = fam.unit.size
    if fam.correction not in SINGLE_STEP or m > MAX_EXACT_PAIRS or fam.df_per_item is not None:
        return None
    # "all": every real gap (a true null is never resolved in its direction; a one-sided test, every gain)
    real = fam.sign > 0 if fam.alternative == "greater" else fam.sign != 0
    if not real.any():
        return np.ones(ns.size)  # nothing to resolve
    t = np.sqrt(fam.k)[real]
    s = fam.sign[real]
    rs = fam.corr[np.ix_(real, real)] * np.outer(s, s)
    out = np.empty(ns.size)
    for idx, n in enumerate(ns.tolist()):
        smu = np.abs(fam.unit[real]) * math.sqrt(n)
        # P(s Z >= t for all k) = P(-s Z + t <= 0), -s Z + t ~ N(t - s mu, S R S)
        out[idx] = min(max(orthant_below(0.0, t - smu, rs), 0.0), 1.0) if s.size > 1 else \
            float(special.ndtr(smu[0] - t[0]))
    return out


def parse_goal(at_least: Any, expected: Any, probability: float, m: int, reachable: int, *,  # noqa: PLR0913
               expected_what: str, unreachable: str) -> tuple[str, int | None, float]:
    """A planner's goal, checked: ("expected", None, r) for ``expected=r``, or ("at_least", k, probability)
    for ``at_least=k`` ("all", the default: every one of the ``reachable`` gaps out of ``m``).
    """
    if at_least is not None and expected is not None:
        msg = "give one goal: `at_least` (with `probability`) or `expected`, not both."
        raise ValueError(msg)
    if expected is not None:
        target = float(expected)
        if not (math.isfinite(target) and 0 < target <= reachable):
            name = "expected"
            raise fail(name, f"in (0, {reachable}] ({expected_what})", expected)
        return "expected", None, target
    goal: Any = reachable if at_least is None or (isinstance(at_least, str) and at_least == "all") else at_least
    if isinstance(goal, str):
        name = "at_least"
        raise fail(name, "an integer k or 'all'", at_least)
    k = check_int_at_least(goal, "at_least", 1, maximum=m)
    if k > reachable:
        msg = f"`at_least`={k} cannot be reached: only {reachable} of the {m} gaps are {unreachable}"
        raise ValueError(msg)
    return "at_least", k, check_open_unit(probability, "probability")


def search_items(value: Any, target: float, max_items: int) -> tuple[int, dict[int, float], bool, float]:
    """The smallest integer N whose ``value(N)`` reaches ``target``: doubling from 1, then bisection over
    integers (assuming ``value`` rises with N; checked on every evaluated N, with a warning). Returns
    (N, the evaluated {N: value}, whether they were non-decreasing, value(N - 1)).
    """
    seen: dict[int, float] = {}

    def reached(n: int) -> bool:
        if n not in seen:
            seen[n] = value(n)
        return seen[n] >= target

    lo, hi = 0, 1  # invariant: lo fails (N = 0 has no items), hi is being tested
    while not reached(hi):
        if hi >= max_items:
            msg = (f"the goal is not reached by `max_items`={max_items:,} items (value {seen[hi]:.4g} < "
                   f"{target:g}); raise `max_items` or lower the goal.")
            raise ValueError(msg)
        lo, hi = hi, min(2 * hi, max_items)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reached(mid):
            hi = mid
        else:
            lo = mid
    values = np.array([v for _, v in sorted(seen.items())])
    monotone = bool(np.all(np.diff(values) >= 0))
    if not monotone:
        warnings.warn("the criterion was not non-decreasing over the evaluated numbers of items (a wrong-sign "
                      "statistic ended a step-down earlier at a larger N); the answer is the smallest N the "
                      "bisection found, check it with leaderboard_power on a grid", ApproximationWarning,
                      stacklevel=3)
    below = seen.get(hi - 1, value(hi - 1) if hi > 1 else 0.0)
    return hi, seen, monotone, float(below)


def _check_n_items(n_items: Any) -> np.ndarray:
    arr = np.asarray(n_items, dtype=float)
    if arr.ndim > 1 or arr.size == 0 or not np.all(np.isfinite(arr) & (arr > 0)):
        name = "n_items"
        raise fail(name, "a positive finite number of items (or a 1-d array of them)", n_items)
    return arr


# ----------------------------------------------------------------------------------------------
# public functions


def leaderboard_power(delta: Any, sd: Any, corr: Any, n_items: Any, *, alpha: float = 0.05,  # noqa: PLR0913
                      power: float = 0.8, correction: str = "holm", n_simulations: int = 10_000,
                      rng: Any, df_per_item: Any = None) -> LeaderboardPower:
    r"""The power of a whole family of paired comparisons at N items: how many gaps the verdict resolves.

    Parameters
    ----------
    delta : array of m floats
        The true gaps (pair k: model i_k minus model j_k), e.g. a pilot's observed gaps.
    sd : array of m positive floats
        The per-item standard deviation :math:`\sigma_k` of each pair's differences.
    corr : m x m array
        The correlation of the pairs' statistics (:func:`.family.family_correlation` or
        :func:`.family.correlation_from_covariance` on the pilot); positive semi-definite.
    n_items : int or 1-d array
        The numbers of items N to evaluate.
    alpha : float
        The verdict's level (the family's, before the correction).
    power : float
        The verdict's power, used inside q = N / N*.
    correction : {"none", "bonferroni", "holm", "bh", "by", "ebh", "dunnett"}
        The multiplicity procedure over the family (as ``diagnose(..., correction=...)``; "ebh" and
        "dunnett" as the module docstring says).
    n_simulations : int
        Draws of :math:`Z \sim N(\mu, R)`, shared by every N (common random numbers).
    rng : int, numpy.random.Generator or SeedSequence
        The source of the draws (required: the answer is a simulation).
    df_per_item : array of m positive floats, optional
        Clustered tests: each pair's degrees of freedom per item (the pilot's Imbens-Kolesar df over its
        items: at N items the test has df = this x N, at least 1). Each statistic is then judged on t
        quantiles (its p-value and K), as the clustered regime judges it; the statistics themselves stay
        normal (the noise of the variance estimate is not drawn: drawn as independent chi-square per
        pair it over-corrected on the designs of ``tests/kernel/test_cluster_family.py``). Default: the
        normal limit.

    Returns
    -------
    LeaderboardPower
        E[R(N)] with its Monte-Carlo SE, the 5%/95% band of R, P(all resolved) (with SE),
        P(R >= k) for k = 0..m and each pair's probability, at each N.

    Notes
    -----
    See the module docstring: the normal limit :math:`Z \sim N(\delta\sqrt N/\sigma, R)`, judged by
    the package's verdict rule with the correction's per-pair levels, counting only resolutions in
    the direction of the true gap.

    Examples
    --------
    Three adjacent gaps of 2 points, per-item SD 0.45, neighbours correlated -0.5:

    >>> import numpy as np
    >>> r = np.eye(3) - 0.5 * (np.eye(3, k=1) + np.eye(3, k=-1))
    >>> res = leaderboard_power([0.02] * 3, [0.45] * 3, r, [2000, 8000], correction="holm", rng=1)
    >>> np.round(res.expected_resolved, 1).tolist(), np.round(res.all_resolved, 2).tolist()
    ([0.3, 2.6], [0.0, 0.65])
    """
    fam = _family(delta, sd, corr, alpha=alpha, power=power, correction=correction, n_simulations=n_simulations,
                  rng=rng, df_per_item=df_per_item)
    ns = _check_n_items(n_items)
    m, sims = fam.unit.size, fam.draws.shape[0]
    reachable = _reachable(fam)  # "all": every real gap (a true null is never resolved rightly)
    flat = np.atleast_1d(ns)
    mean, se, lo, hi, p_all, false_mean, fdr, fdr_se = (np.empty(flat.size) for _ in range(8))
    at_least = np.empty((flat.size, m + 1))
    each = np.empty((flat.size, m))
    for t, n in enumerate(flat):
        count, per_pair, false = _judge(fam, float(n))
        mean[t] = count.mean()
        se[t] = count.std(ddof=1) / math.sqrt(sims)
        lo[t], hi[t] = np.quantile(count, BAND, method="inverted_cdf")
        tail = np.cumsum(np.bincount(count, minlength=m + 1)[::-1])[::-1] / sims  # P(R >= k)
        at_least[t] = tail
        p_all[t] = tail[reachable]
        each[t] = per_pair.mean(axis=0)
        share = false / np.maximum(count + false, 1)  # V / max(R + V, 1) per draw
        false_mean[t], fdr[t], fdr_se[t] = false.mean(), share.mean(), share.std(ddof=1) / math.sqrt(sims)
    se_all = np.sqrt(p_all * (1.0 - p_all) / sims)
    exact = _exact_all(fam, flat)

    def shape(v: np.ndarray) -> Any:
        return float(v[0]) if ns.ndim == 0 else v

    each_out = each[0] if ns.ndim == 0 else each
    return LeaderboardPower(n_items=float(ns) if ns.ndim == 0 else ns, expected_resolved=shape(mean),
                            expected_resolved_se=shape(se), band_low=shape(lo), band_high=shape(hi),
                            all_resolved=shape(p_all), all_resolved_se=shape(se_all),
                            at_least=at_least[0] if ns.ndim == 0 else at_least,
                            each_resolved=each_out, n_pairs=m, correction=fam.correction,
                            alpha=float(alpha), power=float(power), n_simulations=sims,
                            false_resolved=shape(false_mean), fdr=shape(fdr), fdr_se=shape(fdr_se),
                            all_resolved_exact=_optional(exact, shape))


def items_for_leaderboard(delta: Any, sd: Any, corr: Any, *, at_least: int | str | None = None,  # noqa: PLR0913
                          expected: float | None = None, probability: float = 0.8, alpha: float = 0.05,
                          power: float = 0.8, correction: str = "holm", n_simulations: int = 10_000,
                          max_items: int = 100_000_000, rng: Any, df_per_item: Any = None) -> LeaderboardItems:
    r"""The smallest integer number of items N at which a family of comparisons reaches a goal.

    The goal is one of: ``at_least=k`` (P(at least k gaps resolved) >= ``probability``),
    ``at_least="all"`` (the default when neither is given: P(all resolved) >= ``probability``), or
    ``expected=r`` (E[R] >= r). Other parameters as :func:`leaderboard_power`; ``max_items`` bounds
    the search.

    Returns
    -------
    LeaderboardItems
        ``n_items`` (an int), the criterion there and at ``n_items - 1``, and the search's points.

    Notes
    -----
    The criterion is computed on one set of draws for every N (common random numbers), so it is a
    deterministic step function of N. The search brackets the answer by doubling N from 1, then
    bisects on integers: the answer is the smallest N >= 1 at which the criterion reaches the target
    **if the criterion is non-decreasing in N** (see the module docstring: guaranteed on every draw
    without a correction, up to rare draws with Holm or BH). Every evaluated (N, value) is checked
    for that; a violation sets ``monotone=False`` and warns.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.eye(3) - 0.5 * (np.eye(3, k=1) + np.eye(3, k=-1))
    >>> res = items_for_leaderboard([0.02] * 3, [0.45] * 3, r, at_least=2, rng=1)
    >>> res.value >= 0.8 > res.value_below
    True
    """
    fam = _family(delta, sd, corr, alpha=alpha, power=power, correction=correction, n_simulations=n_simulations,
                  rng=rng, df_per_item=df_per_item)
    m = fam.unit.size
    reachable = _reachable(fam)
    max_items = check_int_at_least(max_items, "max_items", 1)
    unreachable = ("gains (Dunnett's one-sided test never resolves a loss)." if fam.alternative == "greater"
                   else "non-zero (a gap of 0 is never resolved in its direction).")
    criterion, k, target = parse_goal(at_least, expected, probability, m, reachable,
                                      expected_what="the pairs with a non-zero gap", unreachable=unreachable)

    def value(n: int) -> float:
        count = _judge(fam, float(n))[0]
        return float(count.mean() if k is None else np.mean(count >= k))

    hi, seen, monotone, below = search_items(value, target, max_items)
    points = tuple(sorted(seen.items()))
    return LeaderboardItems(n_items=int(hi), criterion=criterion, k=k, target=target, value=seen[hi],
                            value_below=below, evaluated=points, monotone=monotone, n_pairs=m,
                            correction=fam.correction, alpha=float(alpha), power=float(power),
                            n_simulations=fam.draws.shape[0])


@dataclass(frozen=True, slots=True)
class DiscoveryItems:
    """Jung's (2005) closed-form plan of a step-up procedure: the items after which ``discoveries`` of
    the family's real gaps are expected to be resolved.

    ``level`` is the per-pair level alpha* every resolved pair is judged at once ``discoveries`` true
    and ``n_nulls`` * alpha* false resolutions are expected (the fixed point alpha* = a(r1 + m0 alpha*)
    of the procedure's rank levels a(j)); ``expected`` the expected true resolutions at ``n_items``
    (>= ``discoveries``) and ``expected_below`` at ``n_items - 1``; ``fdr`` the FDR the approximation
    implies, m0 alpha* / (m0 alpha* + r1).
    """

    n_items: int
    discoveries: float
    level: float
    expected: float
    expected_below: float
    fdr: float
    n_real: int
    n_nulls: int
    correction: str
    alpha: float
    power: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {"n_items": self.n_items, "discoveries": self.discoveries, "level": self.level,
                "expected": self.expected, "expected_below": self.expected_below, "fdr": self.fdr,
                "n_real": self.n_real, "n_nulls": self.n_nulls, "correction": self.correction,
                "alpha": self.alpha, "power": self.power}


def _rank_level_curve(alpha: float, m: int, correction: str) -> Any:
    """The step-up procedure's level a(j) as a continuous function of the rank j (BH: j alpha / m)."""
    if correction == "ebh":
        _, r = _q.mixture_tuning(alpha)

        def level(j: float) -> float:
            c2 = 2.0 * (1.0 + r) * (math.log(m / (alpha * j)) + 0.5 * math.log((1.0 + r) / r))
            return float(2.0 * special.ndtr(-math.sqrt(max(c2, 0.0))))
        return level
    step = _step_up_alpha(alpha, m, correction)
    return lambda j: j * step / m


def items_for_discoveries(delta: Any, sd: Any, *, discoveries: float, alpha: float = 0.05, power: float = 0.8,
                          correction: str = "bh", max_items: int = 100_000_000) -> DiscoveryItems:
    r"""The items after which a step-up procedure is expected to resolve ``discoveries`` real gaps: the
    closed form of Jung (2005) for independent (or positively dependent) statistics.

    A family of m pairs holds m1 real gaps (``delta`` != 0) and m0 true nulls (``delta`` == 0). A
    step-up procedure that resolves R pairs judges each at the level a(R) of its rank (BH: R alpha / m;
    BY: at alpha / (1 + ... + 1/m); e-BH: :func:`ebh_critical_values`), by the verdict: resolved when
    :math:`|Z| \ge t(a) = z_{1-a/2} + z_{power}` (q >= 1 and the test rejects). When r1 real gaps are
    resolved on average, :math:`m_0 \pi_0(\alpha^*)` nulls are too, :math:`\pi_0(a) = 2\Phi(-t(a))`, so
    the level solves

    .. math:: \alpha^* = a(r_1 + m_0 \pi_0(\alpha^*))

    -- Jung's (2005) equation, whose test alone (:math:`\pi_0(a) = a`) gives for BH
    :math:`\alpha^* = r_1 \alpha / (m - m_0 \alpha)`, his :math:`r_1 f / (m_0 (1 - f))` at the FDR
    :math:`f = \alpha m_0 / m` BH attains. N is then the smallest integer with
    :math:`\sum_k \Phi(\sqrt N |\delta_k| / \sigma_k - t(\alpha^*)) \ge r_1`.

    An approximation for large families whose statistics are independent or positively dependent;
    under negative dependence plan by simulation (:func:`items_for_leaderboard` with ``expected``),
    which this is checked against (``tests/kernel/test_leaderboard_fdr.py``).

    Parameters
    ----------
    delta, sd : arrays of m floats
        The gaps (0 for a true null) and per-item SDs of the pairs.
    discoveries : float
        r1: the expected number of real gaps resolved, in (0, m1).
    alpha : float
        The FDR level of the procedure.
    power : float
        The power inside the verdict's q.
    correction : {"bh", "by", "ebh"}
        The step-up procedure.
    max_items : int
        The largest N searched.

    Returns
    -------
    DiscoveryItems

    Examples
    --------
    Ten real gaps of 2 points among 40 comparisons (per-item SD 0.4): items for 8 resolved on average,
    FDR 5% by BH:

    >>> res = items_for_discoveries([0.02] * 10 + [0.0] * 30, [0.4] * 40, discoveries=8)
    >>> res.n_items, round(res.level, 4), round(res.fdr, 3)
    (7254, 0.01, 0.002)
    """
    alpha, power = check_alpha_power(alpha, power)
    correction = check_option(correction, "correction", STEP_UP)
    max_items = check_int_at_least(max_items, "max_items", 1)
    d = np.atleast_1d(np.asarray(delta, dtype=float))
    s = np.atleast_1d(np.asarray(sd, dtype=float))
    if d.ndim != 1 or s.shape != d.shape or not np.all(np.isfinite(d)) or not np.all(np.isfinite(s) & (s > 0)):
        msg = ("`delta` and `sd` must be 1-d arrays of one finite gap and one positive SD per pair; got shapes "
               f"{d.shape}, {s.shape}.")
        raise ValueError(msg)
    real = d != 0
    m, m1 = d.size, int(real.sum())
    m0 = m - m1
    r1 = float(discoveries)
    if not (math.isfinite(r1) and 0 < r1 < m1):
        name = "discoveries"
        raise fail(name, f"in (0, {m1}) (the real gaps; all {m1} are reached only as N grows without bound)",
                   discoveries)
    level_at = _rank_level_curve(alpha, m, correction)
    z_power = float(special.ndtri(power))

    def threshold(a: float) -> float:  # the verdict's |Z| threshold at level a: q >= 1 and the test rejects
        z = float(-special.ndtri(a / 2.0))
        return max(z + z_power, z)

    def null_rate(a: float) -> float:  # a true null resolved (either way) at level a
        return float(2.0 * special.ndtr(-threshold(a)))

    a_star = level_at(r1) if m0 == 0 else float(optimize.brentq(
        lambda a: level_at(r1 + m0 * null_rate(a)) - a, 1e-300, level_at(float(m)), xtol=1e-300, rtol=1e-12))
    t = threshold(a_star)
    ratio = np.abs(d[real]) / s[real]

    def expected(n: int) -> float:
        return float(special.ndtr(math.sqrt(n) * ratio - t).sum())

    if expected(max_items) < r1:
        msg = f"{r1:g} discoveries are not expected by `max_items`={max_items:,} items; raise it or lower the goal."
        raise ValueError(msg)
    from .family import smallest_items

    n = smallest_items(lambda k: expected(k) >= r1, 1, max_items)
    false = m0 * null_rate(a_star)
    return DiscoveryItems(n_items=int(n), discoveries=r1, level=a_star, expected=expected(n),
                          expected_below=expected(n - 1) if n > 1 else 0.0, fdr=false / (false + r1), n_real=m1,
                          n_nulls=m0, correction=correction, alpha=float(alpha), power=float(power))
