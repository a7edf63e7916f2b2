"""Win rates against a baseline (AlpacaEval, judge A/B tests) and paired comparisons of two
models' win rates on the same instructions.

A preference is a number in [0, 1] per judged instruction: 1 = the model's output preferred,
0 = the baseline's, 1/2 = a tie; continuous values (a judge's probability) are allowed. The win
rate is their mean. Its standard error is the plain one (sd with ddof = 1 over sqrt(n), what the
AlpacaEval leaderboard prints) or cluster-robust when several judgments share a prompt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core.clusters import code_labels, require_clusters
from .._core.errors import DataError
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least, check_option
from .._kernel.quantiles import interval_half_width
from .._kernel.variance import mean_variance

__all__ = ["WinRateComparison", "WinRateResult", "compare_win_rates", "win_rate"]


@dataclass(frozen=True, repr=False)
class WinRateResult(Result):
    """Result of :func:`win_rate`.

    ``estimate`` in [0, 1]; ``standard_error``; ``n`` preferences used (after dropping missing
    ones and, with ``ties="exclude"``, ties); ``n_clusters`` when clustered; ``method`` of the
    interval (``"wilson"``, ``"exact"``, ``"t"``, ``"cluster-t"``, ``"bootstrap"`` or
    ``"cluster-bootstrap"``); ``df`` of the t interval; ``replicates``: the bootstrap means.
    """

    estimate: float
    standard_error: float
    n: int
    n_ties: int
    n_clusters: int | None
    method: str
    df: float | None
    confidence_level: float
    replicates: np.ndarray | None = None

    _repr_fields: ClassVar[tuple[str, ...]] = ("estimate", "standard_error", "n", "method")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Interval of the win rate (``method``; Wilson and exact for 0/1 preferences)."""
        from ..intervals import proportion_ci

        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        if self.method in {"wilson", "exact"}:
            k = round(self.estimate * self.n)
            lo, hi = proportion_ci(k, self.n, confidence_level=level,
                                   method="wilson" if self.method == "wilson" else "clopper_pearson")
            return ConfidenceInterval(float(lo), float(hi))
        if self.replicates is not None:  # percentile bootstrap
            tail = (1.0 - level) / 2.0
            lo, hi = np.quantile(self.replicates, [tail, 1.0 - tail])
            return ConfidenceInterval(float(lo), float(hi))
        df = self.df if self.df is not None else math.inf
        half = float(interval_half_width(self.standard_error, level, "two-sided", df))
        return ConfidenceInterval(max(0.0, self.estimate - half), min(1.0, self.estimate + half))


def _preferences(values: Any, name: str = "preferences") -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        msg = f"{name} must be 1-D (one preference per judged instruction); got shape {x.shape}"
        raise ValueError(msg)
    bad = np.isfinite(x) & ((x < 0) | (x > 1))
    if bad.any():
        i = int(np.argmax(bad))
        msg = (f"{name}[{i}] = {float(x[i])!r} is outside [0, 1] (1 = the model wins, 1/2 = tie; "
               "AlpacaEval's 1-2 scale: subtract 1)")
        raise DataError(msg)
    return x


def _clustered_se(x: np.ndarray, codes: np.ndarray, g: int) -> tuple[float, int, float]:
    """The kernel's cluster-robust standard error of the mean (CR2), its clusters and Imbens-Kolesar df."""
    v = mean_variance(x, codes, g, kind="cr2")
    return math.sqrt(float(v.variance[0])), g, float(v.df[0])


def _cluster_labels(cluster: Any, size: int) -> tuple[np.ndarray, int] | None:
    """Codes and count of the preferences' clusters, by the package's one coder (missing: DataError)."""
    if cluster is None:
        return None
    codes, g = code_labels(cluster, size, unit="preference")
    require_clusters(g, unit="preference")
    return codes, g


@public
def win_rate(preferences: Any, *, ties: str = "half", cluster: Any = None, method: str = "auto",  # noqa: PLR0913
             confidence_level: float = 0.95, n_resamples: int = 2000, rng: SeedLike = None) -> WinRateResult:
    """Win rate against a baseline with a standard error and interval.

    Parameters
    ----------
    preferences : array_like of float in [0, 1]
        1 = the model preferred, 0 = the baseline, 1/2 = tie, anything between for a judge's
        probability; NaN = not judged (dropped).
    ties : {"half", "exclude"}, default "half"
        ``"exclude"`` drops exact ties (1/2) before averaging.
    cluster : array_like, optional
        One label per preference (the prompt when several judgments or samples share it):
        cluster-robust standard error (the package's CR2, Imbens-Kolesar degrees of freedom; CR1 with
        G - 1 for equal cluster sizes), t interval; a missing label is a DataError.
    method : {"auto", "wilson", "exact", "t", "bootstrap"}, default "auto"
        ``"auto"``: Wilson for 0/1 preferences without clusters, else t (n - 1 df, or the cluster df with
        clusters; the interval is clipped to [0, 1]). ``"exact"``: Clopper-Pearson (0/1
        preferences only). ``"bootstrap"``: percentile interval of ``n_resamples`` resampled
        means (whole clusters resampled with ``cluster``).
    confidence_level : float, default 0.95
        In (0, 1): the default level of ``confidence_interval()``.
    n_resamples : int, default 2000
        Bootstrap resamples with ``method="bootstrap"`` (2 to 10,000,000).
    rng : seed or Generator, optional
        For ``method="bootstrap"``.

    Returns
    -------
    WinRateResult
        ``estimate`` (the mean preference, in [0, 1]), ``standard_error`` (sd with ddof = 1 over
        sqrt(n), or cluster-robust), ``n`` (preferences used), ``n_ties`` (exact ties among the
        judged ones, counted before ``ties="exclude"`` drops them), ``n_clusters`` (None without
        clusters), ``method`` (``"wilson"``, ``"exact"``, ``"t"``, ``"bootstrap"``, ``"cluster-t"``
        or ``"cluster-bootstrap"``), ``df`` and ``replicates`` (the bootstrap means, or None);
        ``confidence_interval()`` gives the interval. Fewer than two judged preferences is a
        DataError.

    Examples
    --------
    AlpacaEval's published win rate is 100 x this estimate, its standard error 100 x this one:

    >>> from llm_power import win_rate
    >>> res = win_rate([1, 0, 0.5, 1, 0.8, 0.1, 1, 0.6])
    >>> round(res.estimate, 4), round(res.standard_error, 4)
    (0.625, 0.1424)
    """
    check_option(ties, "ties", ("half", "exclude"))
    check_option(method, "method", ("auto", "wilson", "exact", "t", "bootstrap"))
    level = check_confidence_level(confidence_level)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 2, maximum=10_000_000)
    x = _preferences(preferences)
    coded = _cluster_labels(cluster, x.size)
    keep = np.isfinite(x)
    n_ties = int(np.sum(x[keep] == 0.5))
    if ties == "exclude":
        keep &= x != 0.5
    x = x[keep]
    labels = None if coded is None else np.unique(coded[0][keep], return_inverse=True)[1]
    if x.size < 2:
        msg = f"a win rate needs at least two judged preferences; got {x.size}"
        raise DataError(msg)
    binary = bool(np.all((x == 0) | (x == 1)))
    if method in {"wilson", "exact"} and (not binary or labels is not None):
        msg = f"method={method!r} needs 0/1 preferences (ties='exclude' drops ties) and no clusters"
        raise DataError(msg)
    est = float(x.mean())
    reps = _bootstrap_means(x, labels, n_resamples, as_rng(rng)) if method == "bootstrap" else None
    if labels is not None:
        g_kept = int(labels.max()) + 1
        if g_kept < 2:
            msg = "a clustered win rate needs at least two clusters (after dropping missing preferences)"
            raise DataError(msg)
        se, g, df = _clustered_se(x, labels, g_kept)
        return WinRateResult(estimate=est, standard_error=se, n=int(x.size), n_ties=n_ties, n_clusters=g,
                             method="cluster-bootstrap" if reps is not None else "cluster-t", df=df,
                             confidence_level=level, replicates=reps)
    se = float(x.std(ddof=1) / math.sqrt(x.size))
    chosen = ("wilson" if binary else "t") if method == "auto" else method
    return WinRateResult(estimate=est, standard_error=se, n=int(x.size), n_ties=n_ties, n_clusters=None,
                         method=chosen, df=float(x.size - 1), confidence_level=level, replicates=reps)


def _bootstrap_means(x: np.ndarray, labels: np.ndarray | None, n_resamples: int,
                     gen: np.random.Generator) -> np.ndarray:
    """Means of resampled preferences (or of whole resampled clusters), in blocks of bounded memory."""
    if labels is None:
        sums, sizes = x, np.ones(x.size)
    else:
        sums, sizes = np.bincount(labels, weights=x), np.bincount(labels).astype(float)
    units = sums.size
    out = np.empty(n_resamples)
    block = max(1, 4_000_000 // units)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        weights = gen.multinomial(units, np.full(units, 1.0 / units), size=rows).astype(float)
        out[start:start + rows] = (weights @ sums) / (weights @ sizes)
    return out


@dataclass(frozen=True, repr=False)
class WinRateComparison(Result):
    """Result of :func:`compare_win_rates`: the difference of two models' win rates on the same
    instructions (A - B), its paired standard error, t interval and p-value.
    """

    difference: float
    standard_error: float
    ci: ConfidenceInterval
    pvalue: float
    df: float
    n: int
    n_clusters: int | None
    win_rate_a: float
    win_rate_b: float
    correlation: float
    confidence_level: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("difference", "standard_error", "pvalue", "n")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The t interval of the difference (``ci``; the field was named ``confidence_interval``
        before 0.1, which this method now is).
        """
        return stored_interval(*self.ci, self.confidence_level, confidence_level,
                               recompute="run compare_win_rates(..., confidence_level=confidence_level)")


@public
def compare_win_rates(preferences_a: Any, preferences_b: Any, *, cluster: Any = None, confidence_level: float = 0.95,
                      alternative: str = "two-sided") -> WinRateComparison:
    """Paired comparison of two models' win rates against the same baseline on the same instructions.

    Both models were judged on the same instructions (position i = instruction i), so the test
    is on the per-instruction differences (paired t; cluster-robust t with ``cluster``). Two
    unpaired standard errors combined would ignore the (usually positive) correlation of the two
    models' preferences and overstate the uncertainty — ``correlation`` reports it. Instructions
    where either preference is missing (NaN) are dropped.

    Parameters
    ----------
    preferences_a, preferences_b : array_like of float in [0, 1]
        Model A's and model B's preference against the baseline per instruction, aligned
        (position i = instruction i, same length): 1 = the model preferred, 0 = the baseline,
        1/2 = tie; NaN = not judged. At least two instructions judged for both are needed.
    cluster : array_like, optional
        One label per instruction (the prompt when several instructions share it): cluster-robust
        standard error of the mean difference (CR2, Imbens-Kolesar degrees of freedom), at least
        two clusters; a missing label is a DataError. Default None: independent instructions.
    confidence_level : float, default 0.95
        Level of ``confidence_interval``, in (0, 1).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: A's win rate is higher than B's (one-sided p-value, interval ``[low, inf)``);
        ``"less"``: lower (interval ``(-inf, high]``).

    Returns
    -------
    WinRateComparison
        ``difference`` (win rate A - B), its paired ``standard_error``, ``ci`` (also ``confidence_interval()``)
        (Student t), ``pvalue`` (t test of no difference), ``df`` (n - 1, or the cluster df),
        ``n`` (instructions used), ``n_clusters`` (or None), ``win_rate_a``, ``win_rate_b`` and
        ``correlation`` (Pearson, of the two models' preferences; NaN when either is constant).

    Examples
    --------
    >>> from llm_power import compare_win_rates
    >>> res = compare_win_rates([1, 1, 0.5, 1, 0, 1, 1, 0.5], [1, 0, 0.5, 0, 0, 1, 0.5, 0])
    >>> round(res.difference, 4), round(res.pvalue, 4)
    (0.375, 0.0479)
    """
    check_option(alternative, "alternative", ("two-sided", "greater", "less"))
    level = check_confidence_level(confidence_level)
    a, b = _preferences(preferences_a, "preferences_a"), _preferences(preferences_b, "preferences_b")
    if a.shape != b.shape:
        msg = f"preferences_a and preferences_b must cover the same instructions; got {a.size} and {b.size}"
        raise ValueError(msg)
    coded = _cluster_labels(cluster, a.size)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    labels = None if coded is None else np.unique(coded[0][keep], return_inverse=True)[1]
    if a.size < 2:
        msg = f"a paired comparison needs at least two instructions judged for both models; got {a.size}"
        raise DataError(msg)
    d = a - b
    if labels is None:
        se, df, g = float(d.std(ddof=1) / math.sqrt(d.size)), float(d.size - 1), None
    else:
        g_kept = int(labels.max()) + 1
        if g_kept < 2:
            msg = "a clustered comparison needs at least two clusters (after dropping missing preferences)"
            raise DataError(msg)
        se, g, df = _clustered_se(d, labels, g_kept)
    delta = float(d.mean())
    from .._kernel.verdict import t_interval, t_test

    _, p = t_test(np.array([delta]), np.array([se * se]), df, alternative)
    lo, hi = t_interval(np.array([delta]), np.array([se * se]), df, level, alternative)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else math.nan
    return WinRateComparison(difference=delta, standard_error=se, ci=ConfidenceInterval(
        float(lo[0]), float(hi[0])), pvalue=float(p[0]), df=df, n=int(d.size), n_clusters=g,
        win_rate_a=float(a.mean()), win_rate_b=float(b.mean()), correlation=corr, confidence_level=level)


