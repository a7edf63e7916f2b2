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
  alpha / (1 + 1/2 + ... + 1/m).

A resolution counts only when the sign of :math:`Z_k` is the sign of :math:`\delta_k` (a gap
"resolved" the wrong way round is an error, not power). R(N) is the number of such resolutions.

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
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.errors import ApproximationWarning
from .._core.validation import as_rng, check_alpha_power, check_int_at_least, check_open_unit, check_option, fail
from . import quantiles as _q
from .family import check_correlation
from .verdict import floor_pvalue, plugin_verdict, resolved

__all__ = ["LEADERBOARD_CORRECTIONS", "LeaderboardItems", "LeaderboardPower", "items_for_leaderboard",
           "leaderboard_power"]

#: the multiplicity procedures a leaderboard is planned under (the package's corrections and "none")
LEADERBOARD_CORRECTIONS = ("bh", "bonferroni", "by", "holm", "none")
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
                "n_simulations": self.n_simulations}


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


def _short(value: Any) -> str:
    arr = np.asarray(value, dtype=float)
    return f"{float(arr):.4g}" if arr.ndim == 0 else f"array(shape={arr.shape})"


# ----------------------------------------------------------------------------------------------
# the family's draws and its verdicts


@dataclass(frozen=True, slots=True)
class _Family:
    """Validated inputs: unit means (mu at N = 1), signs, the draws W ~ N(0, R) and per-rank levels."""

    unit: np.ndarray  # delta / sigma
    sign: np.ndarray  # sign of delta (0: a gap of 0 is never resolved the right way)
    draws: np.ndarray  # n_simulations x m
    levels: np.ndarray  # the level of the pair of rank r (1..m) in the correction's first pass
    k: np.ndarray  # K at those levels
    power: float
    correction: str


def _verdict(z: np.ndarray, level: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The package's verdict of z statistics at ``level``: the plug-in q of a gap Z with unit variance on
    one item (q = Z^2 / K) and the two-sided p-value 2 Phi(-|Z|), judged by :func:`.verdict.resolved`
    (q >= 1 and p <= level, i.e. |Z| >= max(z_{1-a/2} + z_{power}, z_{1-a/2})).
    """
    n_star, q, _ = plugin_verdict(z, np.ones_like(z), 1.0, k, "two-sided")
    pvalue = floor_pvalue(_q.normal_pvalue(z, "two-sided"))
    return resolved(q, n_star, pvalue=pvalue, alpha=level)


def _rank_levels(alpha: float, m: int, correction: str) -> np.ndarray:
    """Per-rank levels (rank 1 = the smallest p-value) of the correction's first pass."""
    ranks = np.arange(1, m + 1, dtype=float)
    if correction == "none":
        return np.full(m, alpha)
    if correction == "bonferroni":
        return np.full(m, alpha / m)
    if correction == "holm":
        return alpha / (m - ranks + 1)
    return ranks * _step_up_alpha(alpha, m, correction) / m


def _step_up_alpha(alpha: float, m: int, correction: str) -> float:
    """BH's alpha, or BY's alpha / (1 + 1/2 + ... + 1/m)."""
    return alpha / float(np.sum(1.0 / np.arange(1, m + 1))) if correction == "by" else alpha


def _family(delta: Any, sd: Any, corr: Any, *, alpha: float, power: float, correction: str,  # noqa: PLR0913
            n_simulations: int, rng: Any) -> _Family:
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
    levels = _rank_levels(alpha, d.size, correction)
    k = np.asarray(_q.k_constant(levels, power, "two-sided"), dtype=float)
    return _Family(unit=d / s, sign=np.sign(d), draws=draws, levels=levels, k=k, power=power, correction=correction)


def _judge(fam: _Family, n: float) -> tuple[np.ndarray, np.ndarray]:
    """(count of correct resolutions per draw, per-pair correct-resolution flags) at N = ``n``.

    As ``resolution._regimes._corrected``: the pairs ordered by p-value (|Z| descending, stable), each
    judged by :func:`_verdict` at its rank's level; Holm keeps the passes up to the first failure; BH
    and BY find the largest passing rank j* and judge every pair of rank <= j* at j*'s level.
    """
    m = fam.unit.size
    out_count = np.empty(fam.draws.shape[0], dtype=np.int64)
    out_flags = np.empty(fam.draws.shape, dtype=bool)
    rows = max(1, _BLOCK_ELEMENTS // m)
    mu = fam.unit * math.sqrt(n)
    for start in range(0, fam.draws.shape[0], rows):
        sl = slice(start, start + rows)
        z = fam.draws[sl] + mu
        if fam.correction in {"none", "bonferroni"}:
            flags = _verdict(z, fam.levels, fam.k)
        else:
            order = np.argsort(-np.abs(z), axis=1, kind="stable")  # rank 1: the largest |Z|, the smallest p
            z_sorted = np.take_along_axis(z, order, axis=1)
            passes = _verdict(z_sorted, fam.levels, fam.k)
            if fam.correction == "holm":  # step down: stop at the first failure
                flags_sorted = np.logical_and.accumulate(passes, axis=1)
            else:  # step up: ranks <= j* are judged again at j*'s level
                j_star = np.where(passes.any(axis=1), m - np.argmax(passes[:, ::-1], axis=1), 0)
                level = fam.levels[np.maximum(j_star, 1) - 1][:, None]
                k_star = fam.k[np.maximum(j_star, 1) - 1][:, None]
                flags_sorted = _verdict(z_sorted, level, k_star) & (np.arange(m) < j_star[:, None])
            flags = np.empty_like(flags_sorted)
            np.put_along_axis(flags, order, flags_sorted, axis=1)
        flags &= np.sign(z) == fam.sign  # a gap resolved the wrong way round is not power
        out_flags[sl] = flags
        out_count[sl] = flags.sum(axis=1)
    return out_count, out_flags


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
                      rng: Any) -> LeaderboardPower:
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
    correction : {"none", "bonferroni", "holm", "bh", "by"}
        The multiplicity procedure over the family (as ``diagnose(..., correction=...)``).
    n_simulations : int
        Draws of :math:`Z \sim N(\mu, R)`, shared by every N (common random numbers).
    rng : int, numpy.random.Generator or SeedSequence
        The source of the draws (required: the answer is a simulation).

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
                  rng=rng)
    ns = _check_n_items(n_items)
    m, sims = fam.unit.size, fam.draws.shape[0]
    flat = np.atleast_1d(ns)
    mean, se, lo, hi, p_all = (np.empty(flat.size) for _ in range(5))
    at_least = np.empty((flat.size, m + 1))
    each = np.empty((flat.size, m))
    for t, n in enumerate(flat):
        count, per_pair = _judge(fam, float(n))
        mean[t] = count.mean()
        se[t] = count.std(ddof=1) / math.sqrt(sims)
        lo[t], hi[t] = np.quantile(count, BAND, method="inverted_cdf")
        tail = np.cumsum(np.bincount(count, minlength=m + 1)[::-1])[::-1] / sims  # P(R >= k)
        at_least[t] = tail
        p_all[t] = tail[m]
        each[t] = per_pair.mean(axis=0)
    se_all = np.sqrt(p_all * (1.0 - p_all) / sims)

    def shape(v: np.ndarray) -> Any:
        return float(v[0]) if ns.ndim == 0 else v

    each_out = each[0] if ns.ndim == 0 else each
    return LeaderboardPower(n_items=float(ns) if ns.ndim == 0 else ns, expected_resolved=shape(mean),
                            expected_resolved_se=shape(se), band_low=shape(lo), band_high=shape(hi),
                            all_resolved=shape(p_all), all_resolved_se=shape(se_all),
                            at_least=at_least[0] if ns.ndim == 0 else at_least,
                            each_resolved=each_out, n_pairs=m, correction=fam.correction,
                            alpha=float(alpha), power=float(power), n_simulations=sims)


def items_for_leaderboard(delta: Any, sd: Any, corr: Any, *, at_least: int | str | None = None,  # noqa: PLR0913
                          expected: float | None = None, probability: float = 0.8, alpha: float = 0.05,
                          power: float = 0.8, correction: str = "holm", n_simulations: int = 10_000,
                          max_items: int = 100_000_000, rng: Any) -> LeaderboardItems:
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
                  rng=rng)
    m = fam.unit.size
    reachable = int(np.count_nonzero(fam.sign))
    max_items = check_int_at_least(max_items, "max_items", 1)
    if at_least is not None and expected is not None:
        msg = "give one goal: `at_least` (with `probability`) or `expected`, not both."
        raise ValueError(msg)
    if expected is not None:
        target = float(expected)
        if not (math.isfinite(target) and 0 < target <= reachable):
            name = "expected"
            raise fail(name, f"in (0, {reachable}] (the pairs with a non-zero gap)", expected)
        criterion, k = "expected", None

        def value(n: int) -> float:
            return float(_judge(fam, float(n))[0].mean())
    else:
        goal: int | str = m if at_least is None or (isinstance(at_least, str) and at_least == "all") else at_least
        if isinstance(goal, str):
            name = "at_least"
            raise fail(name, "an integer k or 'all'", at_least)
        k = check_int_at_least(goal, "at_least", 1, maximum=m)
        if k > reachable:
            msg = (f"`at_least`={k} cannot be reached: only {reachable} of the {m} gaps are non-zero "
                   "(a gap of 0 is never resolved in its direction).")
            raise ValueError(msg)
        target = check_open_unit(probability, "probability")
        criterion = "at_least"

        def value(n: int) -> float:
            return float(np.mean(_judge(fam, float(n))[0] >= k))

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
    points = tuple(sorted(seen.items()))
    values = np.array([v for _, v in points])
    monotone = bool(np.all(np.diff(values) >= 0))
    if not monotone:
        warnings.warn("the criterion was not non-decreasing over the evaluated numbers of items (a wrong-sign "
                      "statistic ended a step-down earlier at a larger N); the answer is the smallest N the "
                      "bisection found, check it with leaderboard_power on a grid", ApproximationWarning,
                      stacklevel=2)
    below = seen.get(hi - 1, value(hi - 1) if hi > 1 else 0.0)
    return LeaderboardItems(n_items=int(hi), criterion=criterion, k=k, target=target, value=seen[hi],
                            value_below=float(below), evaluated=points, monotone=monotone, n_pairs=m,
                            correction=fam.correction, alpha=float(alpha), power=float(power),
                            n_simulations=fam.draws.shape[0])
