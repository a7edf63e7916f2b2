"""Simulation-based power for designs without a closed form.

A vectorised simulator of correlated paired 0/1 outcomes -- from two margins and rho, or from
the cell frequencies of a pilot 2x2 table -- and the empirical power of any paired test on them.
McNemar variants, the sign test and the paired t test are computed for all simulated data sets
at once from their 2x2 tables; the resampling tests and Wilcoxon run per data set.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._results import Result
from ._validation import as_rng, check_alternative, check_open_unit, check_option
from .paired import mcnemar_pvalue, wilcoxon
from .planning import cells_from_margins
from .resampling import paired_bootstrap, permutation_test

__all__ = ["SIMULATION_TESTS", "PowerSimulation", "simulate_pairs", "simulated_power"]

SIMULATION_TESTS = (
    "bootstrap",
    "mcnemar_asymptotic",
    "mcnemar_exact",
    "mcnemar_mid_p",
    "paired_t",
    "permutation",
    "sign",
    "wilcoxon",
)


def _cells(p_a: float | None, p_b: float | None, rho: float, table: Any) -> np.ndarray:
    if table is not None:
        cells = np.asarray(table, dtype=float).reshape(-1)
        if cells.size != 4 or np.any(cells < 0) or not np.all(np.isfinite(cells)) or cells.sum() <= 0:
            raise ValueError("`table` must be 4 non-negative counts (both right, A only, B only, neither); "
                             f"got {table!r}.")
        return cells / cells.sum()
    if p_a is None or p_b is None:
        raise TypeError("give `p_a` and `p_b` (with `rho`), or a pilot `table`.")
    return np.array(cells_from_margins(p_a, p_b, rho))


def _check_n(n: Any, minimum: int = 2) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"`n` must be an integer >= {minimum}; got {n!r}.")
    return int(n)


def simulate_pairs(
    n: int,
    p_a: float | None = None,
    p_b: float | None = None,
    *,
    rho: float = 0.0,
    table: Any = None,
    n_sims: int = 1000,
    rng: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate ``n_sims`` data sets of n correlated paired 0/1 outcomes.

    Returns
    -------
    (a, b) : two int8 arrays of shape (n_sims, n)

    Examples
    --------
    >>> from llm_power import simulate_pairs
    >>> a, b = simulate_pairs(1000, 0.7, 0.6, rho=0.5, n_sims=200, rng=0)
    >>> a.shape, round(float(a.mean()), 2), round(float(b.mean()), 2)
    ((200, 1000), 0.7, 0.6)
    """
    n = _check_n(n, 1)
    cells = _cells(p_a, p_b, rho, table)
    gen = as_rng(rng)
    codes = gen.choice(4, size=(_check_n(n_sims, 1), n), p=cells)
    a = ((codes == 0) | (codes == 1)).astype(np.int8)
    b = ((codes == 0) | (codes == 2)).astype(np.int8)
    return a, b


@dataclass(frozen=True, slots=True, repr=False)
class PowerSimulation(Result):
    """Empirical power from :func:`simulated_power`."""

    power: float
    standard_error: float
    n: int
    n_sims: int
    test: str
    alpha: float

    _repr_fields = ("power", "standard_error", "n", "n_sims", "test")


def simulated_power(
    n: int,
    p_a: float | None = None,
    p_b: float | None = None,
    *,
    rho: float = 0.0,
    table: Any = None,
    test: str = "mcnemar_exact",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    continuity_correction: bool = True,
    n_sims: int = 2000,
    n_resamples: int = 999,
    rng: Any = None,
    correction: bool | None = None,
) -> PowerSimulation:
    """Empirical power of a paired test on simulated correlated 0/1 data.

    Parameters
    ----------
    n : int
        Items per data set.
    p_a, p_b, rho : float
        Margins and phi correlation; or ``table``: a pilot 2x2 table (both right, A only, B
        only, neither) whose cell frequencies are used.
    test : str, default "mcnemar_exact"
        One of ``"bootstrap"``, ``"mcnemar_asymptotic"``, ``"mcnemar_exact"``, ``"mcnemar_mid_p"``,
        ``"paired_t"``, ``"permutation"``, ``"sign"``, ``"wilcoxon"``.
    continuity_correction : bool, default True
        Continuity correction of ``"mcnemar_asymptotic"`` (Connor's sample size models the
        uncorrected test).
    correction : bool, optional
        Deprecated name of ``continuity_correction`` (one release, DeprecationWarning).
    n_sims : int, default 2000
    n_resamples : int, default 999
        For the bootstrap and permutation tests.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    PowerSimulation
        ``power`` and its Monte-Carlo ``standard_error``.

    Examples
    --------
    >>> from llm_power import power, simulated_power
    >>> sim = simulated_power(400, 0.75, 0.70, rho=0.0, n_sims=4000, rng=1)
    >>> exact = power(400, 0.75, 0.70, method="exact")
    >>> round(exact, 3), abs(sim.power - exact) < 3 * sim.standard_error
    (0.324, True)
    """
    n = _check_n(n)
    test = check_option(test, "test", SIMULATION_TESTS)
    from .paired import _renamed_correction

    continuity_correction = _renamed_correction(continuity_correction, correction, stacklevel=2)
    alpha = check_open_unit(alpha, "alpha")
    alternative = check_alternative(alternative)
    sims = _check_n(n_sims, 1)
    cells = _cells(p_a, p_b, rho, table)
    gen = as_rng(rng)
    if test in ("mcnemar_exact", "mcnemar_asymptotic", "mcnemar_mid_p", "sign", "paired_t"):
        counts = gen.multinomial(n, cells, size=sims)
        b, c = counts[:, 1].astype(float), counts[:, 2].astype(float)
        if test == "paired_t":
            pvals = _paired_t_from_counts(b, c, n, alternative)
        else:
            method = {"mcnemar_exact": "exact", "sign": "exact", "mcnemar_mid_p": "mid_p"}.get(test, "asymptotic")
            pvals = mcnemar_pvalue(b, c, method=method, continuity_correction=continuity_correction,
                                   alternative=alternative)[1]
    else:
        a_sims, b_sims = simulate_pairs(n, table=cells, n_sims=sims, rng=gen)
        pvals = np.empty(sims)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(sims):
                x, y = a_sims[i].astype(float), b_sims[i].astype(float)
                if test == "bootstrap":
                    pvals[i] = paired_bootstrap(x, y, n_resamples=n_resamples, alternative=alternative, rng=gen).pvalue
                elif test == "permutation":
                    pvals[i] = permutation_test(x, y, n_resamples=n_resamples, alternative=alternative, rng=gen).pvalue
                else:
                    pvals[i] = wilcoxon(x, y, alternative=alternative).pvalue if np.any(x != y) else 1.0
    rate = float(np.mean(pvals <= alpha))
    return PowerSimulation(power=rate, standard_error=math.sqrt(rate * (1 - rate) / sims), n=n, n_sims=sims,
                           test=test, alpha=alpha)


def _paired_t_from_counts(b: np.ndarray, c: np.ndarray, n: int, alternative: str) -> np.ndarray:
    """Paired t p-values for 0/1 data from the discordant counts (vectorised)."""
    mean = (b - c) / n
    var = ((b + c) - (b - c) ** 2 / n) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    t = np.where(var > 0, t, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    if alternative == "greater":
        return stats.t.sf(t, n - 1)
    if alternative == "less":
        return stats.t.cdf(t, n - 1)
    return np.minimum(1.0, 2 * stats.t.sf(np.abs(t), n - 1))
