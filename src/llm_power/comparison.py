"""`compare`: the one-line paired comparison of two models on the same items."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ._results import ConfidenceInterval, Result
from ._validation import (
    as_rng,
    check_alternative,
    check_confidence_level,
    check_option,
    check_paired,
    is_binary,
)
from .effects import effect_sizes, paired_counts, paired_difference_ci_from_counts
from .paired import ASYMPTOTIC_MIN_DISCORDANT, mcnemar_from_counts, paired_t, sign_test, wilcoxon
from .planning import _check_alpha_power, ceil_items, mde_from_variance, n_star_from_variance
from .resampling import paired_bootstrap, permutation_test

__all__ = ["COMPARE_METHODS", "Comparison", "compare"]

COMPARE_METHODS = (
    "auto",
    "bootstrap",
    "mcnemar",
    "mcnemar_asymptotic",
    "mcnemar_exact",
    "mcnemar_mid_p",
    "paired_t",
    "permutation",
    "sign",
    "wilcoxon",
)
#: graded scores: below this many items the auto rule checks normality instead of relying on the CLT
CLT_MIN_ITEMS = 30


@dataclass(frozen=True, slots=True, repr=False)
class Comparison(Result):
    """Result of :func:`compare`.

    Attributes
    ----------
    n : int
        Number of items.
    mean_a, mean_b : float
        Mean scores (accuracies for 0/1 data).
    delta : float
        mean_a - mean_b.
    method : str
        The test used (chosen by the decision tree when ``method="auto"``).
    reason : str
        Why that test (for ``"auto"``), or "requested".
    statistic, pvalue : float
    alternative : str
    se_paired, se_unpaired : float
        Plug-in standard errors of delta using and ignoring the pairing.
    phi : float
        Correlation of the two models' per-item scores.
    n_star : float
        Items needed to resolve a gap of size delta at (alpha, power) with the observed
        per-item variance, rounded up; ``inf`` when delta = 0.
    mde : float
        Minimum detectable effect of this benchmark: sqrt(K sigma_D^2 / n).
    q : float
        Resolution ratio n / N* (unrounded N*) = T^2 / K; q >= 1: resolved.
    resolved : bool
    b, c : int or None
        Discordant counts for 0/1 data (A only right, B only right).
    confidence_level, alpha, power : float
    ci_method : str
        How :meth:`confidence_interval` is computed.
    n_clusters : int or None
    """

    n: int
    mean_a: float
    mean_b: float
    delta: float
    method: str
    reason: str
    statistic: float
    pvalue: float
    alternative: str
    se_paired: float
    se_unpaired: float
    phi: float
    n_star: float
    mde: float
    q: float
    resolved: bool
    b: int | None
    c: int | None
    confidence_level: float
    alpha: float
    power: float
    ci_method: str
    n_clusters: int | None = None
    _interval: Callable[[float], ConfidenceInterval] | None = field(default=None, compare=False)

    _repr_fields = ("n", "delta", "method", "pvalue", "n_star", "q", "resolved")
    _title = "Paired comparison of A and B on the same items"

    def _fields(self) -> tuple[str, ...]:
        return tuple(name for name in Result._fields(self) if not name.startswith("_"))

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Confidence interval for delta = mean_a - mean_b (method in ``ci_method``)."""
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        assert self._interval is not None  # set by compare()
        return self._interval(level)

    def to_dict(self) -> dict[str, Any]:
        out = Result.to_dict(self)
        ci = self.confidence_interval()
        out["confidence_interval"] = {"low": ci.low, "high": ci.high}
        return out

    def summary(self) -> str:
        ci = self.confidence_interval()
        level = f"{100 * self.confidence_level:g}%"
        verdict = "resolved" if self.resolved else "NOT resolved (the benchmark is too small to tell)"
        counts = f"  discordant items: b = {self.b} (A only), c = {self.c} (B only)\n" if self.b is not None else ""
        n_star = "inf" if math.isinf(self.n_star) else f"{int(self.n_star):,}"
        return (
            f"A {self.mean_a:.2%} vs B {self.mean_b:.2%} on {self.n:,} items: "
            f"delta = {100 * self.delta:+.2f} points, {level} CI "
            f"[{100 * ci.low:+.2f}, {100 * ci.high:+.2f}] ({self.ci_method})\n"
            f"{counts}"
            f"  test: {self.method} ({self.reason}); p = {self.pvalue:.4g}\n"
            f"  SE paired {100 * self.se_paired:.2f} vs unpaired {100 * self.se_unpaired:.2f} points "
            f"(phi = {self.phi:.2f})\n"
            f"  resolution: N* = {n_star} items for this gap at alpha = {self.alpha:g}, power = "
            f"{self.power:g}; q = N/N* = {self.q:.3g} -> {verdict}; MDE = {100 * self.mde:.2f} points"
        )


def compare(
    a: Any,
    b: Any,
    *,
    method: str = "auto",
    cluster: Any = None,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
    n_resamples: int = 10_000,
    rng: Any = None,
) -> Comparison:
    r"""Compare two models scored on the same items: test, interval, effect sizes and resolution.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores of model A and model B (0/1 correctness or graded scores).
    method : str, default "auto"
        ``"auto"`` follows the decision tree below. Explicit choices: ``"mcnemar"`` (exact when
        b + c < 25, else asymptotic), ``"mcnemar_exact"``, ``"mcnemar_asymptotic"``,
        ``"mcnemar_mid_p"``, ``"paired_t"``, ``"bootstrap"``, ``"permutation"``, ``"sign"``,
        ``"wilcoxon"``.
    cluster : array_like, optional
        One cluster label per item (subject, source document). The test is then the cluster
        (block) bootstrap.
    alternative : {"two-sided", "less", "greater"}
        "greater": A scores higher than B.
    confidence_level : float, default 0.95
    alpha, power : float, default 0.05 and 0.8
        Thresholds of the resolution verdict (N*, MDE, q).
    n_resamples : int, default 10_000
        For the bootstrap and Monte Carlo permutation tests. At the default, the permutation test
        is exact when at most 20 items differ (all 2^m sign patterns); any other value is passed
        on as the number of random patterns.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Comparison

    Notes
    -----
    Decision tree for ``method="auto"`` (after Dror et al. 2018, "The Hitchhiker's Guide to
    Testing Statistical Significance in NLP"):

    1. cluster labels given -> cluster bootstrap (items are not independent);
    2. 0/1 scores -> McNemar: exact when b + c < 25, else the continuity-corrected chi-square;
    3. graded scores, n >= 30 -> paired t test (the mean difference is approximately normal by the
       central limit theorem);
    4. graded scores, n < 30 -> paired t if a Shapiro-Wilk test does not reject normality of the
       differences (p >= 0.05), else the sign-flip permutation test (no distributional assumption,
       exact for few items).

    Dror et al. also list the sign test and Wilcoxon for large samples of unknown distribution,
    mainly because resampling is expensive there; here resampling is vectorised and the mean
    gap is the reported quantity, so they are available only on request (they test the median /
    symmetry of the differences, not the mean).

    Resolution (the plug-in quantities of :mod:`llm_power.planning`): with
    :math:`\hat\sigma_D^2 = (b+c)/N - ((b-c)/N)^2` for 0/1 data and the sample variance of D
    (ddof = 1) otherwise, :math:`N^* = K\hat\sigma_D^2/\hat\delta^2`,
    :math:`\mathrm{MDE} = \sqrt{K\hat\sigma_D^2/N}`, :math:`q = N/N^* = T^2/K`. q is not
    "observed power": it says whether this benchmark is big enough for a gap of the size
    observed; q < 1 does not mean the models are equal.

    References
    ----------
    .. [1] Dror, R., Baumer, G., Shlomov, S. & Reichart, R. (2018). The Hitchhiker's Guide to
       Testing Statistical Significance in Natural Language Processing. ACL, 1383-1392.

    Examples
    --------
    A 75% vs B 71% on the same 200 items, disagreeing on only 10 of them:

    >>> import numpy as np
    >>> from llm_power import compare
    >>> a = np.r_[np.ones(150), np.zeros(50)]
    >>> b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    >>> res = compare(a, b)
    >>> res.method, res.b, res.c, round(res.pvalue, 4)
    ('mcnemar_exact', 9, 1, 0.0215)
    >>> res.n_star, round(res.q, 2), res.resolved   # significant, yet below the MDE at 80% power
    (238.0, 0.84, False)
    """
    method = check_option(method, "method", COMPARE_METHODS)
    alternative = check_alternative(alternative)
    confidence_level = check_confidence_level(confidence_level)
    alpha, power = _check_alpha_power(alpha, power)
    a_arr, b_arr = check_paired(a, b)
    gen = as_rng(rng)
    n = a_arr.size
    binary = is_binary(a_arr, b_arr)
    d = a_arr - b_arr
    delta = float(d.mean())

    chosen, reason = _choose(method, binary, cluster, d)
    if chosen.startswith("mcnemar") and not binary:
        raise ValueError(f"`method` {method!r} needs 0/1 scores; these scores are graded. "
                         "Use 'paired_t', 'bootstrap' or 'permutation'.")

    n_b = n_c = None
    if binary:
        n11, n_b, n_c, n00 = paired_counts(a_arr, b_arr)
        variance = (n_b + n_c) / n - delta * delta
    else:
        variance = float(d.var(ddof=1))

    interval: Callable[[float], ConfidenceInterval]
    n_clusters = None
    if chosen.startswith("mcnemar"):
        variant = chosen.removeprefix("mcnemar_") if chosen != "mcnemar" else (
            "exact" if n_b + n_c < ASYMPTOTIC_MIN_DISCORDANT else "asymptotic")
        chosen = f"mcnemar_{variant}"
        test = mcnemar_from_counts(n_b, n_c, n=n, method=variant, alternative=alternative, _stacklevel=3)
        statistic, pvalue = test.statistic, test.pvalue
    elif chosen == "paired_t":
        test = _quiet(paired_t, a_arr, b_arr, alternative=alternative)
        statistic, pvalue = test.statistic, test.pvalue
    elif chosen == "sign":
        test = _quiet(sign_test, a_arr, b_arr, alternative=alternative)
        statistic, pvalue = test.statistic, test.pvalue
    elif chosen == "wilcoxon":
        test = _quiet(wilcoxon, a_arr, b_arr, alternative=alternative)
        statistic, pvalue = test.statistic, test.pvalue
    elif chosen == "permutation":
        test = _quiet(permutation_test, a_arr, b_arr, alternative=alternative, rng=gen,
                      n_resamples=None if n_resamples == 10_000 else n_resamples)
        statistic, pvalue = test.estimate, test.pvalue
    else:  # bootstrap
        boot = paired_bootstrap(a_arr, b_arr, n_resamples=n_resamples, cluster=cluster,
                                confidence_level=confidence_level, alternative=alternative, rng=gen)
        statistic, pvalue = boot.estimate, boot.pvalue
        n_clusters = boot.n_clusters

    if chosen == "bootstrap":
        interval, ci_method = boot.confidence_interval, "bootstrap percentile"
    elif binary:
        counts = (n11, n_b, n_c, n00)

        def interval(level: float) -> ConfidenceInterval:
            return paired_difference_ci_from_counts(*counts, method="newcombe", confidence_level=level)

        ci_method = "Newcombe paired score"
    else:
        interval = _t_interval(delta, math.sqrt(variance / n), n - 1)
        ci_method = "paired t"

    es = effect_sizes(a_arr, b_arr)
    n_star_raw = float(n_star_from_variance(variance, delta, alpha=alpha, power=power, alternative=alternative))
    if variance == 0.0 and delta != 0.0:
        warnings.warn("every item has the same difference: zero variance, N* = 0 (any n resolves it).",
                      stacklevel=2)
    q = n / n_star_raw if n_star_raw > 0 else (math.inf if delta != 0 else 0.0)
    if math.isinf(n_star_raw):
        q = 0.0
    mde = float(mde_from_variance(n, variance, alpha=alpha, power=power, alternative=alternative))
    return Comparison(
        n=n, mean_a=float(a_arr.mean()), mean_b=float(b_arr.mean()), delta=delta, method=chosen,
        reason=reason, statistic=float(statistic), pvalue=float(pvalue), alternative=alternative,
        se_paired=es.se_paired, se_unpaired=es.se_unpaired, phi=es.phi, n_star=ceil_items(n_star_raw),
        mde=mde, q=float(q), resolved=bool(q >= 1.0), b=n_b, c=n_c, confidence_level=confidence_level,
        alpha=alpha, power=power, ci_method=ci_method, n_clusters=n_clusters, _interval=interval,
    )


def _quiet(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a test whose degenerate-data warnings compare() reports through its fields."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _choose(method: str, binary: bool, cluster: Any, d: np.ndarray) -> tuple[str, str]:
    if method != "auto":
        return method, "requested"
    if cluster is not None:
        return "bootstrap", "items are clustered: the cluster (block) bootstrap resamples whole clusters"
    if binary:
        m = int(np.count_nonzero(d))
        if m < ASYMPTOTIC_MIN_DISCORDANT:
            return "mcnemar_exact", f"0/1 scores, b + c = {m} < {ASYMPTOTIC_MIN_DISCORDANT} discordant items"
        return "mcnemar_asymptotic", f"0/1 scores, b + c = {m} >= {ASYMPTOTIC_MIN_DISCORDANT} discordant items"
    n = d.size
    if n >= CLT_MIN_ITEMS:
        return "paired_t", f"graded scores, mean difference over n = {n} >= {CLT_MIN_ITEMS} items (CLT)"
    if n >= 3 and np.ptp(d) > 0:
        p_norm = float(stats.shapiro(d).pvalue)
        if p_norm >= 0.05:
            return "paired_t", f"graded scores, n = {n} < {CLT_MIN_ITEMS}, differences look normal (Shapiro-Wilk p = {p_norm:.2f})"
        return "permutation", f"graded scores, n = {n} < {CLT_MIN_ITEMS}, differences not normal (Shapiro-Wilk p = {p_norm:.2g})"
    return "permutation", f"graded scores, n = {n}: too few items to check normality"


def _t_interval(delta: float, se: float, df: int) -> Callable[[float], ConfidenceInterval]:
    def interval(level: float) -> ConfidenceInterval:
        t = float(stats.t.ppf(1.0 - (1.0 - level) / 2.0, df))
        return ConfidenceInterval(delta - t * se, delta + t * se)

    return interval
