"""Simulation-based power for designs without a closed form.

A vectorised simulator of correlated paired 0/1 outcomes -- from two margins and rho, or from
the cell frequencies of a pilot 2x2 table -- and the empirical power of any paired test on them.
McNemar variants, the sign test and the paired t test are computed for all simulated data sets
at once from their 2x2 tables; the resampling tests and Wilcoxon run per data set.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy import special

from .._core.errors import warn
from .._core.params import public
from .._core.results import Result
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_alternative, check_int_at_least, check_open_unit, check_option
from .._kernel.pvalues import mcnemar_pvalue
from ..paired import SIMULATION_TESTS, TESTS
from ._designs import cells_from_margins

__all__ = ["SIMULATION_TESTS", "CalibrationResult", "PowerSimulationResult", "calibrate", "simulate_pairs",
           "simulated_power"]

#: the paired tests, one registry: compare's methods are these plus "auto" and "mcnemar"


def _renamed_test(method: str, test: str | None) -> str:
    """The deprecated ``test=`` keyword (one release) -> ``method``, the package's one word for it."""
    if test is None:
        return method
    warn("`test` was renamed `method` (one vocabulary with compare and the CLI); the old name will be "
                  "removed in the next release.", DeprecationWarning)
    return test


def _cells(p_a: float | None, p_b: float | None, rho: float, table: Any) -> np.ndarray:
    if table is not None:
        cells = np.asarray(table, dtype=float).reshape(-1)
        if cells.size != 4 or np.any(cells < 0) or not np.all(np.isfinite(cells)) or cells.sum() <= 0:
            msg = (
                "`table` must be 4 non-negative counts (both right, A only, B only, neither); "
                             f"got {table!r}."
            )
            raise ValueError(msg)
        return np.asarray(cells / cells.sum())
    if p_a is None or p_b is None:
        msg = "give `p_a` and `p_b` (with `rho`), or a pilot `table`."
        raise TypeError(msg)
    return np.array(cells_from_margins(p_a, p_b, rho))


def _check_n(n: Any, minimum: int = 2) -> int:
    return check_int_at_least(n, "n", minimum)


@public
def simulate_pairs(
    n: int,
    p_a: float | None = None,
    p_b: float | None = None,
    *,
    rho: float = 0.0,
    table: Any = None,
    n_sims: int = 1000,
    rng: SeedLike = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate ``n_sims`` data sets of n correlated paired 0/1 outcomes.

    Parameters
    ----------
    n : int
        Items per data set, a whole number >= 1.
    p_a : float, optional
        Accuracy of model A, a proportion strictly inside (0, 1); required (with ``p_b``) unless
        ``table`` is given.
    p_b : float, optional
        Accuracy of model B, a proportion strictly inside (0, 1).
    rho : float, default 0.0
        Phi correlation of the two models' per-item correctness, inside :func:`rho_bounds` of the
        margins; ignored when ``table`` is given.
    table : array_like, optional
        A pilot 2x2 table of 4 non-negative counts (both right, A only, B only, neither), with a
        positive total; its cell frequencies are the per-item probabilities, and ``p_a``, ``p_b``
        and ``rho`` are ignored. Neither margins nor a table is a ``TypeError``.
    n_sims : int, default 1000
        Number of simulated data sets, a whole number >= 1.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Source of randomness; an int seed makes the result reproducible.

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
class PowerSimulationResult(Result):
    """Empirical power from :func:`simulated_power`."""

    power: float
    standard_error: float
    n: int
    n_sims: int
    test: str
    alpha: float

    _repr_fields = ("power", "standard_error", "n", "n_sims", "test")


@public
def simulated_power(
    n: int,
    p_a: float | None = None,
    p_b: float | None = None,
    *,
    rho: float = 0.0,
    table: Any = None,
    method: str = "mcnemar_exact",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    continuity_correction: bool = True,
    n_sims: int = 2000,
    n_resamples: int = 999,
    rng: SeedLike = None,
    correction: bool | None = None,
    test: str | None = None,
) -> PowerSimulationResult:
    """Empirical power of a paired test on simulated correlated 0/1 data.

    Parameters
    ----------
    n : int
        Items per data set.
    p_a, p_b, rho : float
        Margins and phi correlation; or ``table``: a pilot 2x2 table (both right, A only, B
        only, neither) whose cell frequencies are used.
    table : array_like of 4 counts, optional
        The pilot 2x2 table (n11, n10, n01, n00) instead of ``p_a, p_b, rho``.
    alpha : float, default 0.05
        Level of each simulated test.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        Alternative of each simulated test.
    method : str, default "mcnemar_exact"
        The paired test (the registry shared with :func:`llm_power.compare`): one of
        ``"bootstrap"``, ``"mcnemar_asymptotic"``, ``"mcnemar_exact"``, ``"mcnemar_mid_p"``,
        ``"paired_t"``, ``"permutation"``, ``"sign"``, ``"wilcoxon"``.
    continuity_correction : bool, default True
        Continuity correction of ``"mcnemar_asymptotic"`` (Connor's sample size models the
        uncorrected test).
    correction : bool, optional
        Deprecated name of ``continuity_correction`` (one release, DeprecationWarning).
    test : str, optional
        Deprecated name of ``method`` (one release, DeprecationWarning).
    n_sims : int, default 2000
    n_resamples : int, default 999
        For the bootstrap and permutation tests.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    PowerSimulationResult
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
    test = check_option(_renamed_test(method, test), "method", SIMULATION_TESTS)
    from .._core.validation import renamed_correction

    continuity_correction = renamed_correction(continuity_correction, correction)
    alpha = check_open_unit(alpha, "alpha")
    alternative = check_alternative(alternative)
    sims = _check_n(n_sims, 1)
    cells = _cells(p_a, p_b, rho, table)
    gen = as_rng(rng)
    entry = TESTS[test]
    if entry.from_counts is not None:  # 0/1 data sets as multinomial 2x2 tables: no items needed
        counts = gen.multinomial(n, cells, size=sims)
        b, c = counts[:, 1].astype(float), counts[:, 2].astype(float)
        pvals = entry.from_counts(b, c, n, alternative, continuity_correction)
    else:
        on_items = cast(Callable[..., float], entry.on_items)  # SIMULATION_TESTS: tests with a recipe
        a_sims, b_sims = simulate_pairs(n, table=cells, n_sims=sims, rng=gen)
        pvals = np.empty(sims)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(sims):
                pvals[i] = on_items(a_sims[i].astype(float), b_sims[i].astype(float), alternative, n_resamples,
                                          gen)
    rate = float(np.mean(pvals <= alpha))
    return PowerSimulationResult(power=rate, standard_error=math.sqrt(rate * (1 - rate) / sims), n=n, n_sims=sims,
                           test=test, alpha=alpha)


# =================================================================================================
# Calibration: is N* right on real data?
# =================================================================================================

@dataclass(frozen=True, slots=True, repr=False)
class CalibrationResult(Result):
    """Result of :func:`calibrate`: the empirical power at ``n`` items of a real pair."""

    n: int
    empirical_power: float
    standard_error: float
    target: float
    delta: float
    n_sims: int
    test: str

    _repr_fields = ("n", "empirical_power", "target")

    def __getitem__(self, key: str) -> Any:
        """``res["n"]``: the mapping access of the dict :func:`calibrate` used to return."""
        if key not in self._fields():
            raise KeyError(key)
        return getattr(self, key)


@public
def calibrate(
    a: Any,
    b: Any,
    *,
    n: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    n_sims: int = 2000,
    method: str = "z",
    rng: SeedLike = None,
    test: str | None = None,
) -> CalibrationResult:
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
    method : {"z", "mcnemar_exact"}, default "z"
        ``"z"``: the paired z test with the plug-in variance, the test whose power N* models;
        ``"mcnemar_exact"``: the exact McNemar test (0/1 data; conservative, slightly lower power).
    alpha : float, default 0.05
        Level of the test N* is planned for and of each simulated test.
    power : float, default 0.8
        The power N* is planned for (the target the empirical power is compared with).
    n_sims : int, default 2000
        Resampled data sets (the Monte-Carlo standard error of the empirical power is about
        sqrt(power (1 - power) / n_sims)).
    rng : None, int or numpy.random.Generator
        Seed or generator of the resampling; the same seed gives the same numbers.
    test : str, optional
        Deprecated name of ``method`` (one release, DeprecationWarning).

    Returns
    -------
    CalibrationResult
        ``n``, ``empirical_power``, ``standard_error``, ``target``, ``delta``, ``n_sims``, ``test``
        (also readable as ``res["n"]``, as when this returned a dict).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import calibrate
    >>> a = np.r_[np.ones(700), np.ones(60), np.zeros(40), np.zeros(200)]
    >>> b = np.r_[np.ones(700), np.zeros(60), np.ones(40), np.zeros(200)]
    >>> res = calibrate(a, b, n_sims=4000, rng=0)
    >>> res["n"], abs(res["empirical_power"] - 0.8) < 0.03
    (1955, True)
    """
    from .._core.validation import check_alpha_power, check_paired, is_binary
    from .._kernel.sizes import k_factor

    x, y = check_paired(a, b)
    alpha, power = check_alpha_power(alpha, power)
    test = check_option(_renamed_test(method, test), "method", ("mcnemar_exact", "z"))
    gen = as_rng(rng)
    d = x - y
    n_items = d.size
    delta = float(d.mean())
    binary = is_binary(x, y)
    var = float(d.var()) if binary else float(d.var(ddof=1))
    if delta == 0 or var == 0:
        msg = "the pair has no gap (or no variance): N* is undefined."
        raise ValueError(msg)
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
            msg = "`test` 'mcnemar_exact' needs 0/1 scores."
            raise ValueError(msg)
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
    return CalibrationResult(n=n_use, empirical_power=rate, standard_error=math.sqrt(rate * (1 - rate) / sims),
                             target=power, delta=delta, n_sims=sims, test=test)
