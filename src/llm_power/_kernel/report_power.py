r"""The resolved gaps a future *report* will count: its own ranking's adjacent gaps, planned from a pilot.

:mod:`.leaderboard_power` plans a fixed family -- the pilot's adjacent pairs. A report ranks its own
benchmark, and where models are close a new ranking reorders near-ties, so the gaps it shows (and
resolves) are not the pilot's. This module follows the report: with N items the models' observed means
tend to

    M ~ N(mu, Sigma / N),   Sigma = the models' per-item covariance (the pilot's),

and each draw of M is ranked (best first, ties by model order, as ``diagnose`` ranks), its m - 1
adjacent gaps :math:`d_r = M_{(r)} - M_{(r+1)} \ge 0` studentised by their per-item SDs
:math:`\sigma_r^2 = \Sigma_{aa} + \Sigma_{bb} - 2\Sigma_{ab}` (the pilot's, the plug-in's limit), and
judged by the package's verdict under the correction (:func:`.leaderboard_power.decide`). R(N) is the
number of the report's adjacent gaps resolved -- the report's headline count -- and V(N) those resolved
whose two models are not in that order in mu (a tie or a reversal: a false claim).

**Common random numbers.** W ~ N(0, Sigma) is drawn in blocks from the generators ``[seed, block]``
and reused for every N: M(N) = mu + W / sqrt(N). The ranking itself changes with N, so R(N) is not
monotone on every draw; the search for items checks its evaluated points (as
:func:`.leaderboard_power.items_for_leaderboard`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.validation import check_alpha_power, check_int_at_least, check_option, fail
from . import quantiles as _q
from .leaderboard_power import (
    BAND,
    LEADERBOARD_CORRECTIONS,
    LeaderboardItems,
    LeaderboardPower,
    decide,
    parse_goal,
    rank_levels,
    search_items,
)

__all__ = ["items_for_report", "report_power"]

#: draws x models elements held at once
_BLOCK_ELEMENTS = 2_000_000
#: the models a report is planned for (a models x models covariance and draws x models blocks)
MAX_REPORT_MODELS = 5_000


class _Report:
    """Validated inputs: means, the covariance's root, levels and K, the seed."""

    def __init__(self, means: Any, cov: Any, *, alpha: float, power: float, correction: str, n_simulations: int,
                 rng: Any) -> None:
        alpha, power = check_alpha_power(alpha, power)
        self.correction = check_option(correction, "correction", tuple(c for c in LEADERBOARD_CORRECTIONS
                                                                         if c != "dunnett"))
        self.sims = check_int_at_least(n_simulations, "n_simulations", 2)
        mu = np.asarray(means, dtype=float)
        if mu.ndim != 1 or mu.size < 2 or mu.size > MAX_REPORT_MODELS or not np.all(np.isfinite(mu)):
            name = "means"
            raise fail(name, f"a 1-d array of 2 to {MAX_REPORT_MODELS:,} finite model means", means)
        sigma = np.asarray(cov, dtype=float)
        if sigma.shape != (mu.size, mu.size) or not np.all(np.isfinite(sigma)) or not np.allclose(sigma, sigma.T):
            msg = f"`cov` must be a finite symmetric {mu.size} x {mu.size} covariance; got shape {sigma.shape}."
            raise ValueError(msg)
        vals, vecs = np.linalg.eigh(sigma)
        if vals.min() < -1e-10 * max(vals.max(), 1e-300):
            msg = "`cov` must be positive semi-definite."
            raise ValueError(msg)
        self.mu, self.sigma = mu, sigma
        self.root = vecs * np.sqrt(np.clip(vals, 0.0, None))  # Sigma = root root^T
        self.alpha, self.power = alpha, power
        m = mu.size - 1
        self.levels = rank_levels(alpha, m, self.correction)
        self.k = np.asarray(_q.k_constant(self.levels, power, "two-sided"), dtype=float)
        self.seed = int(np.random.default_rng(rng).integers(2**63)) if not isinstance(rng, int) else int(rng)

    def judge(self, n: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(resolved count, per-position resolved flags, false count) per draw at N = ``n``."""
        m = self.mu.size
        rows = max(1, _BLOCK_ELEMENTS // m)
        count = np.empty(self.sims, dtype=np.int64)
        false = np.empty(self.sims, dtype=np.int64)
        flags_all = np.empty((self.sims, m - 1), dtype=bool)
        for block, start in enumerate(range(0, self.sims, rows)):
            size = min(rows, self.sims - start)
            w = np.random.default_rng([self.seed, block]).standard_normal((size, m)) @ self.root.T
            means = self.mu + w / math.sqrt(n)
            order = np.argsort(-means, axis=1, kind="stable")  # best first; ties by model order
            a, b = order[:, :-1], order[:, 1:]
            gap = np.take_along_axis(means, a, axis=1) - np.take_along_axis(means, b, axis=1)
            var = self.sigma[a, a] + self.sigma[b, b] - 2.0 * self.sigma[a, b]
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(var > 0, gap * math.sqrt(n) / np.sqrt(np.maximum(var, 0.0)), 0.0)
            flags = decide(z, self.levels, self.k, self.correction)
            wrong = self.mu[a] <= self.mu[b]  # the report's order is not the truth's: a tie or a reversal
            sl = slice(start, start + size)
            flags_all[sl] = flags
            count[sl] = flags.sum(axis=1)
            false[sl] = (flags & wrong).sum(axis=1)
        return count, flags_all, false


def report_power(means: Any, cov: Any, n_items: Any, *, alpha: float = 0.05, power: float = 0.8,  # noqa: PLR0913
                 correction: str = "holm", n_simulations: int = 10_000, rng: Any) -> LeaderboardPower:
    r"""How many adjacent gaps a report of N items will resolve: its own ranking's, as ``diagnose`` counts.

    Parameters
    ----------
    means : array of m floats
        The models' true means (a pilot's).
    cov : m x m array
        The models' per-item covariance (a pilot's, ddof 0).
    n_items : int or 1-d array
        The numbers of items.
    alpha, power, correction, n_simulations
        As :func:`.leaderboard_power.leaderboard_power` (not "dunnett": a report's pairs are not
        many-to-one).
    rng : int or numpy.random.Generator
        The seed of the blocks of draws.

    Returns
    -------
    LeaderboardPower
        Over the report's m - 1 adjacent gaps: E[R] (resolved, whatever their order in ``means``) with
        its SE and band, P(all), P(R >= k), each rank position's probability (``each_resolved``: the
        gap between the report's r-th and (r+1)-th model), and ``false_resolved`` / ``fdr``: resolved
        gaps whose models are tied or reversed in ``means``.

    Examples
    --------
    Five models 2 points apart, per-item variance 0.2 and covariance 0.1:

    >>> import numpy as np
    >>> cov = np.full((5, 5), 0.1) + 0.1 * np.eye(5)
    >>> res = report_power([0.70, 0.68, 0.66, 0.64, 0.62], cov, [2000, 8000], rng=1)
    >>> np.round(res.expected_resolved, 1).tolist()
    [0.4, 3.5]
    """
    rep = _Report(means, cov, alpha=alpha, power=power, correction=correction, n_simulations=n_simulations, rng=rng)
    ns = np.asarray(n_items, dtype=float)
    if ns.ndim > 1 or ns.size == 0 or not np.all(np.isfinite(ns) & (ns > 0)):
        name = "n_items"
        raise fail(name, "a positive finite number of items (or a 1-d array of them)", n_items)
    flat = np.atleast_1d(ns)
    m, sims = rep.mu.size - 1, rep.sims
    mean, se, lo, hi, p_all, false_mean, fdr, fdr_se = (np.empty(flat.size) for _ in range(8))
    at_least = np.empty((flat.size, m + 1))
    each = np.empty((flat.size, m))
    for t, n in enumerate(flat.tolist()):
        count, flags, false = rep.judge(n)
        mean[t], se[t] = count.mean(), count.std(ddof=1) / math.sqrt(sims)
        lo[t], hi[t] = np.quantile(count, BAND, method="inverted_cdf")
        tail = np.cumsum(np.bincount(count, minlength=m + 1)[::-1])[::-1] / sims
        at_least[t], p_all[t], each[t] = tail, tail[m], flags.mean(axis=0)
        share = false / np.maximum(count, 1)
        false_mean[t], fdr[t], fdr_se[t] = false.mean(), share.mean(), share.std(ddof=1) / math.sqrt(sims)

    def shape(v: np.ndarray) -> Any:
        return float(v[0]) if ns.ndim == 0 else v

    each_out = each[0] if ns.ndim == 0 else each

    return LeaderboardPower(n_items=float(ns) if ns.ndim == 0 else ns, expected_resolved=shape(mean),
                            expected_resolved_se=shape(se), band_low=shape(lo), band_high=shape(hi),
                            all_resolved=shape(p_all), all_resolved_se=shape(np.sqrt(p_all * (1 - p_all) / sims)),
                            at_least=at_least[0] if ns.ndim == 0 else at_least,
                            each_resolved=each_out, n_pairs=m, correction=rep.correction,
                            alpha=rep.alpha, power=rep.power, n_simulations=sims, false_resolved=shape(false_mean),
                            fdr=shape(fdr), fdr_se=shape(fdr_se))


def items_for_report(means: Any, cov: Any, *, at_least: int | str | None = None,  # noqa: PLR0913
                     expected: float | None = None, probability: float = 0.8, alpha: float = 0.05,
                     power: float = 0.8, correction: str = "holm", n_simulations: int = 10_000,
                     max_items: int = 100_000_000, rng: Any) -> LeaderboardItems:
    """The smallest integer N at which a report's own count reaches a goal (``at_least`` k of its m - 1
    adjacent gaps with ``probability``, "all" by default, or ``expected`` on average); as
    :func:`.leaderboard_power.items_for_leaderboard`, on :func:`report_power`'s draws.

    Examples
    --------
    >>> import numpy as np
    >>> cov = np.full((5, 5), 0.1) + 0.1 * np.eye(5)
    >>> res = items_for_report([0.70, 0.68, 0.66, 0.64, 0.62], cov, expected=3, rng=1)
    >>> res.value >= 3 > res.value_below
    True
    """
    rep = _Report(means, cov, alpha=alpha, power=power, correction=correction, n_simulations=n_simulations, rng=rng)
    m = rep.mu.size - 1
    max_items = check_int_at_least(max_items, "max_items", 1)
    criterion, k, target = parse_goal(at_least, expected, probability, m, m,
                                      expected_what="the report's adjacent gaps", unreachable="")

    def value(n: int) -> float:
        count = rep.judge(float(n))[0]
        return float(count.mean() if k is None else np.mean(count >= k))

    hi, seen, monotone, below = search_items(value, target, max_items)
    return LeaderboardItems(n_items=int(hi), criterion=criterion, k=k, target=target, value=seen[hi],
                            value_below=below, evaluated=tuple(sorted(seen.items())), monotone=monotone, n_pairs=m,
                            correction=rep.correction, alpha=rep.alpha, power=rep.power, n_simulations=rep.sims)
