"""The ``TESTS`` registry: every item-level paired test of :func:`~llm_power.compare`, with what it
needs (0/1 scores?), whether it can use cluster labels, and how it runs on one pair.

``compare(method=...)`` validates against it and dispatches through it; the decision tree
(:func:`llm_power._kernel.verdict.choose_iid_test`) names one of its entries; the option tuples of
``llm_power._core.options`` (kept for a light ``--help``) are tested equal to its keys. Adding a
paired test is adding an entry here (and its test).

Each test returns a :class:`TestRun`: the statistic, the p-value, the interval that inverts it (a
spec that :func:`interval_at` evaluates at any level) and the interval's name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._core.results import ConfidenceInterval
from .._kernel.paired_intervals import mcnemar_interval
from .._kernel.pvalues import mcnemar_pvalue
from .._kernel.quantiles import t_pvalue
from .._kernel.verdict import floor_pvalue, paired_t_test, t_interval
from ._permutation import permutation_interval, permutation_test
from ._resampling import paired_bootstrap
from ._tests import ASYMPTOTIC_MIN_DISCORDANT, mcnemar_from_counts, sign_test, wilcoxon

__all__ = ["COMPARE_METHODS", "DEFAULT_RESAMPLES", "MCNEMAR_INTERVALS", "SIMULATION_TESTS", "TESTS", "PairData",
           "PairedTest", "TestRun", "interval_at"]

#: bootstrap resamples when ``n_resamples`` is not given
DEFAULT_RESAMPLES = 10_000

#: how the interval that inverts each McNemar variant is named
MCNEMAR_INTERVALS = {"exact": "exact McNemar's (Fay-Lumbard melded)", "mid_p": "mid-p McNemar's (melded)",
                     "asymptotic": "McNemar's (null variance, continuity-corrected)"}


@dataclass(frozen=True)
class PairData:
    """One pair, as every test of the registry sees it."""

    a: np.ndarray
    b: np.ndarray
    delta: float
    variance: float  # per-item variance of the differences: plug-in for 0/1 scores (N*, q), ddof 1 for graded
    n: int
    n_b: int | None  # discordant counts (0/1 scores only)
    n_c: int | None
    alternative: str
    n_resamples: int | None
    gen: np.random.Generator

    @property
    def sample_variance(self) -> float:
        """The sample variance of the differences (ddof 1): what a t test and its interval use, as
        :func:`~llm_power.paired_t` and scipy's ``ttest_rel`` do (0/1 scores: the plug-in one x n/(n-1)).
        """
        if self.n_b is None:
            return self.variance
        return self.variance * self.n / (self.n - 1) if self.n > 1 else math.nan


@dataclass(frozen=True)
class TestRun:
    """What a test reports: statistic, p-value, the interval that inverts it, its name, the test's name."""

    statistic: float
    pvalue: float
    interval: tuple[Any, ...]  # a spec for :func:`interval_at`
    interval_name: str
    name: str


@dataclass(frozen=True)
class PairedTest:
    """One entry of :data:`TESTS`."""

    name: str
    summary: str
    run: Callable[[PairData], TestRun]
    binary_only: bool = False  # needs 0/1 scores
    clusters: bool = False  # can use cluster labels (resamples whole clusters)
    #: vectorised p-values of many 0/1 data sets from their discordant counts (b, c, n, alternative,
    #: continuity_correction): how :func:`~llm_power.simulated_power` runs the test without items
    from_counts: Callable[[np.ndarray, np.ndarray, int, str, bool], np.ndarray] | None = None
    #: the p-value of one simulated data set (x, y, alternative, n_resamples, generator), when the
    #: test needs the items
    on_items: Callable[[np.ndarray, np.ndarray, str, int, np.random.Generator], float] | None = None


def _mcnemar(variant: str | None) -> Callable[[PairData], TestRun]:
    def run(p: PairData) -> TestRun:
        nb, nc = cast(int, p.n_b), cast(int, p.n_c)  # McNemar runs only on 0/1 scores, where they are counted
        chosen = variant or ("exact" if nb + nc < ASYMPTOTIC_MIN_DISCORDANT else "asymptotic")
        test = mcnemar_from_counts(nb, nc, n=p.n, method=chosen, alternative=p.alternative)
        return TestRun(test.statistic, float(floor_pvalue(test.pvalue)), ("mcnemar", (nb, nc, p.n, chosen)),
                       MCNEMAR_INTERVALS[chosen], f"mcnemar_{chosen}")
    return run


def _t_spec(p: PairData) -> tuple[Any, ...]:
    """The paired t interval's spec: NaN bounds where the differences show no spread (never zero width)."""
    var = p.sample_variance
    return ("t", (p.delta, var / p.n if var > 0 else math.nan, p.n - 1))


def _paired_t(p: PairData) -> TestRun:
    var = p.sample_variance
    stat, pv = paired_t_test(np.array([p.delta]), np.array([var]), p.n, p.alternative)
    return TestRun(float(stat[0]), float(floor_pvalue(pv[0])), _t_spec(p), "paired t", "paired_t")


def _of_median(name: str, test: Callable[..., Any]) -> Callable[[PairData], TestRun]:
    def run(p: PairData) -> TestRun:
        res = test(p.a, p.b, alternative=p.alternative)
        return TestRun(res.statistic, float(floor_pvalue(res.pvalue)), _t_spec(p),
                       f"paired t of the mean (the {name} test is of the median)", name)
    return run


def _permutation(p: PairData) -> TestRun:
    seed = int(p.gen.integers(2**62))  # one seed: the test and its inversion see the same sign patterns
    p_perm, _, _ = permutation_interval(p.a, p.b, alternative=p.alternative, n_resamples=p.n_resamples, rng=seed)
    return TestRun(p.delta, float(floor_pvalue(p_perm)), ("permutation", (p.a, p.b, p.n_resamples, seed)),
                   "inverted permutation test", "permutation")


def _bootstrap(p: PairData) -> TestRun:
    b_count = DEFAULT_RESAMPLES if p.n_resamples is None else p.n_resamples
    boot = paired_bootstrap(p.a, p.b, n_resamples=b_count, confidence_level=0.95, alternative=p.alternative,
                            rng=p.gen)
    return TestRun(boot.estimate, float(floor_pvalue(boot.percentile_pvalue())), ("bootstrap", boot),
                   "bootstrap percentile", "bootstrap")


def _counts_mcnemar(variant: str) -> Callable[[np.ndarray, np.ndarray, int, str, bool], np.ndarray]:
    def pvalues(b: np.ndarray, c: np.ndarray, n: int, alternative: str,  # noqa: ARG001 - the recipe's signature
                continuity_correction: bool) -> np.ndarray:
        return np.asarray(mcnemar_pvalue(b, c, method=variant, continuity_correction=continuity_correction,
                                         alternative=alternative)[1])
    return pvalues


def _counts_paired_t(b: np.ndarray, c: np.ndarray, n: int, alternative: str, _: bool) -> np.ndarray:
    """Paired t p-values of 0/1 data from the discordant counts (vectorised over data sets)."""
    mean = (b - c) / n
    var = ((b + c) - (b - c) ** 2 / n) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
        t = np.where(var > 0, t, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    return np.asarray(t_pvalue(t, n - 1, alternative))


def _items_bootstrap(x: np.ndarray, y: np.ndarray, alternative: str, n_resamples: int,
                     gen: np.random.Generator) -> float:
    return float(paired_bootstrap(x, y, n_resamples=n_resamples, alternative=alternative, rng=gen).pvalue)


def _items_permutation(x: np.ndarray, y: np.ndarray, alternative: str, n_resamples: int,
                       gen: np.random.Generator) -> float:
    return float(permutation_test(x, y, n_resamples=n_resamples, alternative=alternative, rng=gen).pvalue)


def _items_wilcoxon(x: np.ndarray, y: np.ndarray, alternative: str, n_resamples: int,  # noqa: ARG001
                    gen: np.random.Generator) -> float:  # noqa: ARG001 - the recipe's signature
    return float(wilcoxon(x, y, alternative=alternative).pvalue) if np.any(x != y) else 1.0


#: name -> :class:`PairedTest`: every item-level test ``compare`` can run
TESTS: dict[str, PairedTest] = {t.name: t for t in (
    PairedTest("bootstrap", "paired bootstrap of the mean difference (of clusters with labels)", _bootstrap,
               clusters=True, on_items=_items_bootstrap),
    PairedTest("mcnemar", "McNemar's test, exact below 25 discordant items, else asymptotic", _mcnemar(None),
               binary_only=True),
    PairedTest("mcnemar_asymptotic", "McNemar's chi-square test (continuity-corrected)", _mcnemar("asymptotic"),
               binary_only=True, from_counts=_counts_mcnemar("asymptotic")),
    PairedTest("mcnemar_exact", "McNemar's exact (conditional binomial) test", _mcnemar("exact"), binary_only=True,
               from_counts=_counts_mcnemar("exact")),
    PairedTest("mcnemar_mid_p", "McNemar's mid-p test", _mcnemar("mid_p"), binary_only=True,
               from_counts=_counts_mcnemar("mid_p")),
    PairedTest("paired_t", "paired t test of the mean difference", _paired_t, from_counts=_counts_paired_t),
    PairedTest("permutation", "sign-flip permutation test", _permutation, on_items=_items_permutation),
    PairedTest("sign", "sign test (of the median difference)", _of_median("sign", sign_test),
               from_counts=_counts_mcnemar("exact")),  # on 0/1 data the sign test is the exact McNemar test
    PairedTest("wilcoxon", "Wilcoxon signed-rank test (of the median difference)", _of_median("wilcoxon", wilcoxon),
               on_items=_items_wilcoxon),
)}

#: the values of ``compare(method=...)``: "auto" and every test of the registry ("cluster_t" with clusters)
COMPARE_METHODS = tuple(sorted(("auto", *TESTS)))  # == llm_power._core.options.COMPARE_METHOD_NAMES (a test)
#: the tests :func:`~llm_power.simulated_power` can simulate (those with a data-set recipe)
SIMULATION_TESTS = tuple(sorted(name for name, test in TESTS.items() if test.from_counts or test.on_items))


def interval_at(spec: tuple[Any, ...], level: float, alternative: str) -> ConfidenceInterval:
    """The interval described by ``spec`` at ``level`` (one-sided per ``alternative``)."""
    kind, data = spec
    if kind == "bootstrap":
        return cast(ConfidenceInterval, data.confidence_interval(level))
    if kind == "mcnemar":
        b, c, n, variant = data
        return ConfidenceInterval(*mcnemar_interval(b, c, n, variant=variant, level=level, alternative=alternative))
    if kind == "permutation":  # the sign-flip test inverted, with the reported test's own patterns
        a_arr, b_arr, n_resamples, seed = data
        _, low, high = permutation_interval(a_arr, b_arr, confidence_level=level, alternative=alternative,
                                            n_resamples=n_resamples, rng=seed)
        return ConfidenceInterval(low, high)
    if kind == "wild":  # the wild cluster bootstrap test inverted, with the reported test's own draws
        from .._kernel.wild_cluster import wild_cluster_interval

        cluster_sums, sizes, n_resamples, seed = data
        ci = wild_cluster_interval(cluster_sums, sizes, confidence_level=level, n_resamples=n_resamples,
                                   rng=np.random.default_rng(seed))
        return ConfidenceInterval(float(np.asarray(ci.low).reshape(-1)[0]), float(np.asarray(ci.high).reshape(-1)[0]))
    delta, variance, df = data
    lo, hi = t_interval(delta, variance, df, level, alternative)
    return ConfidenceInterval(float(lo), float(hi))
