r"""A regression gate: is a candidate model not worse than a baseline by more than a margin?

One verdict per gate, from two one-sided tests of the paired gap
:math:`\delta = \text{mean}(\text{candidate} - \text{baseline})` on the same items against the
margin :math:`m \ge 0`, each at level :math:`\alpha`:

- **PASS** — non-inferiority: :math:`H_0: \delta \le -m` is rejected (the lower confidence bound
  of the gap is above :math:`-m`);
- **FAIL** — inferiority: :math:`H_0: \delta \ge -m` is rejected (the upper bound is below
  :math:`-m`: worse by more than the margin);
- **INCONCLUSIVE** — neither; the result says how many items a gap of this size needs (N* of the
  one-sided test of the observed gap against the margin).

Both bounds are those of one interval at level :math:`1 - 2\alpha`, so at most one test rejects
and the printed interval never contradicts the verdict. The test: Tango's score test of a
difference of paired proportions against :math:`-m` for 0/1 scores (McNemar's z when
:math:`m = 0`), the paired t test of the shifted differences for graded scores, a cluster-robust
t test (CR2 variance, Imbens-Kolesar degrees of freedom) with clusters.

``anytime=True`` replaces the fixed-n bounds by a normal-mixture confidence sequence (two-sided
at level :math:`\alpha`, tuned for ``horizon`` items): a gate checked again and again as items
accumulate keeps its error rate at most :math:`\alpha` over all the looks, where the fixed-n gate's
grows with every look (simulated in ``tests/test_gate.py``; numbers in ``docs/integrations.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from ._format import fmt_gap
from ._results import Result
from ._validation import check_open_unit, check_paired, is_binary
from ._verdict import check_cluster_labels, cluster_verdict, pair_sums, require_clusters
from .effects import _tango_z, paired_difference_ci_from_counts
from .sequential import anytime_critical_value, normal_mixture_boundary

__all__ = ["EXIT_CODES", "GateResult", "TaskGateResult", "gate", "gate_tasks"]

#: the command line's exit code of each verdict (usage errors exit 2, bad input 1)
EXIT_CODES = {"PASS": 0, "INCONCLUSIVE": 3, "FAIL": 4}


@dataclass(frozen=True)
class GateResult(Result):
    """Result of :func:`gate`.

    Attributes
    ----------
    verdict : {"PASS", "FAIL", "INCONCLUSIVE"}
    delta : float
        Mean of candidate - baseline (positive: the candidate is better; with
        ``higher_is_better=False``, baseline - candidate).
    margin : float
        The tolerated regression m (the candidate passes when shown to be above -m).
    ci_low, ci_high : float
        Confidence bounds of delta at level 1 - 2 alpha (each one-sided at 1 - alpha; with
        ``anytime``, the confidence sequence at level 1 - alpha).
    pvalue_noninferiority, pvalue_inferiority : float
        One-sided p-values of H0: delta <= -m and of H0: delta >= -m (with ``anytime``,
        anytime-valid p-values 1/E of the normal-mixture e-process behind the sequence: at most
        alpha exactly when the sequence's bound clears -m).
    n : int
        Items.
    n_star : float
        Items at which the one-sided test of the observed gap against -m has the requested
        power (inf when the gap is exactly at the margin); ``more_items`` = max(n_star - n, 0).
    test : str
        "tango" (0/1 scores), "paired_t" (graded) or "cluster_t".
    """

    verdict: str
    delta: float
    margin: float
    ci_low: float
    ci_high: float
    pvalue_noninferiority: float
    pvalue_inferiority: float
    n: int
    n_star: float
    more_items: float
    test: str
    alpha: float
    power: float
    anytime: bool
    horizon: int | None = None
    n_clusters: int | None = None
    design_effect: float | None = None
    higher_is_better: bool = True

    _repr_fields: ClassVar[tuple[str, ...]] = ("verdict", "delta", "margin", "ci_low", "ci_high", "n")

    @property
    def exit_code(self) -> int:
        """The command line's exit code: 0 PASS, 3 INCONCLUSIVE, 4 FAIL."""
        return EXIT_CODES[self.verdict]

    def sentence(self, baseline: str = "baseline", candidate: str = "candidate") -> str:
        """The one-line verdict the command line prints first (names as given: escape for your medium)."""
        gap = f"{fmt_gap(self.delta, True)} points" if self.test != "paired_t" else f"{self.delta:+.4g}"
        level = f"{1 - (self.alpha if self.anytime else 2 * self.alpha):.0%}"
        ci = f"[{fmt_gap(self.ci_low, True)}, {fmt_gap(self.ci_high, True)}]" if self.test != "paired_t" else \
            f"[{self.ci_low:+.4g}, {self.ci_high:+.4g}]"
        points = 100 * self.margin
        margin = f"{points:g} point{'' if points == 1 else 's'}" if self.test != "paired_t" else f"{self.margin:g}"
        kind = " anytime-valid" if self.anytime else ""
        improvement = "" if self.higher_is_better else " improvement (lower is better)"
        where = f"{candidate} vs {baseline}:{improvement} {gap}, {level}{kind} CI {ci}, margin {margin}"
        if self.verdict == "PASS":
            return f"PASS  {where} -- not worse by more than the margin"
        if self.verdict == "FAIL":
            return f"FAIL  {where} -- worse by more than the margin"
        more = ("no number of items decides a gap exactly at the margin" if not math.isfinite(self.more_items)
                else f"about {self.more_items:,.0f} more items like these would decide a gap of this size")
        return f"INCONCLUSIVE  {where} -- {more}"

    def summary(self) -> str:
        """The verdict line and the tests behind it."""
        lines = [self.sentence(),
                 f"  n = {self.n:,} items; test {self.test}; one-sided p: non-inferiority "
                 f"{self.pvalue_noninferiority:.3g}, inferiority {self.pvalue_inferiority:.3g} "
                 f"(alpha = {self.alpha:g})"]
        if self.n_clusters:
            lines.append(f"  {self.n_clusters} clusters, design effect {self.design_effect:.2f}")
        return "\n".join(lines)


def gate(baseline: Any, candidate: Any, *, margin: float = 0.01, alpha: float = 0.05, power: float = 0.8,
         cluster: Any = None, anytime: bool = False, horizon: int | None = None,
         higher_is_better: bool = True) -> GateResult:
    r"""Regression gate of a candidate against a baseline on the same items.

    Parameters
    ----------
    baseline, candidate : array_like, shape (n,)
        Per-item scores on the same items in the same order (0/1 or graded).
    margin : float, default 0.01
        The regression tolerated, in score units (0.01 = 1 point of accuracy). 0 asks the
        candidate to be significantly better to pass.
    alpha : float, default 0.05
        Level of each one-sided test (PASS and FAIL are each wrong with probability at most
        alpha).
    power : float, default 0.8
        Power of the items estimate N* reported when the gate is inconclusive.
    cluster : array_like, optional
        One cluster label per item: the cluster-robust t test (CR2, Imbens-Kolesar df).
    anytime : bool, default False
        Use a normal-mixture confidence sequence instead of the fixed-n bounds, for a gate that
        is checked again as items accumulate (any number of looks; error at most alpha overall).
    horizon : int, optional
        With ``anytime``: the number of items the sequence is tuned for (default: this run's n;
        set the planned final number of items when looks come before it).
    higher_is_better : bool, default True
        False for error scores (error counts, loss, latency): the gap and its interval are then reported as
        improvement, baseline - candidate, so that "worse" keeps its meaning.

    Returns
    -------
    GateResult

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import gate
    >>> rng = np.random.default_rng(0)
    >>> base = (rng.random(5000) < 0.70).astype(int)
    >>> redo = rng.random(5000) < 0.1                       # 10% of the items answered afresh,
    >>> cand = np.where(redo, rng.random(5000) < 0.70, base).astype(int)  # as accurately
    >>> res = gate(base, cand, margin=0.02)
    >>> res.verdict, res.exit_code
    ('PASS', 0)
    >>> gate(base, cand, margin=0.0).verdict              # margin 0: only a better candidate passes
    'INCONCLUSIVE'
    """
    alpha = check_open_unit(alpha, "alpha")
    power = check_open_unit(power, "power")
    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin >= 0):
        msg = f"`margin` (--margin) must be a finite number >= 0; got {margin!r}."
        raise ValueError(msg)
    b_arr, c_arr = check_paired(baseline, candidate, a_name="baseline", b_name="candidate")
    if not higher_is_better:  # error scores: the gate runs on their negatives (improvement is positive)
        b_arr, c_arr = -b_arr, -c_arr
    d = c_arr - b_arr
    n = d.size
    binary = higher_is_better and is_binary(b_arr, c_arr)
    delta = float(d.mean())
    n_clusters = de = None
    if cluster is not None:
        test, p_non, p_inf, lo, hi, k, var_nstar, n_clusters, de = _clustered(d, cluster, binary=binary, margin=margin,
                                                                             alpha=alpha, power=power)
    elif binary:
        n10 = int(np.sum((c_arr == 1) & (b_arr == 0)))  # candidate right, baseline wrong
        n01 = int(np.sum((c_arr == 0) & (b_arr == 1)))
        n11 = int(np.sum((c_arr == 1) & (b_arr == 1)))
        test = "tango"
        z = _tango_z(-margin, n10, n01, n)
        p_non, p_inf = float(special.ndtr(-z)), float(special.ndtr(z))
        ci = paired_difference_ci_from_counts(n11, n10, n01, n - n11 - n10 - n01, method="tango",
                                              confidence_level=1.0 - 2.0 * alpha)
        lo, hi = float(ci.low), float(ci.high)
        k = float((special.ndtri(1.0 - alpha) + special.ndtri(power)) ** 2)
        var_nstar = max((n10 + n01) / n - delta * delta, 0.0)
    else:
        test = "paired_t"
        sd = float(d.std(ddof=1))
        se = sd / math.sqrt(n)
        t = (delta + margin) / se if se > 0 else math.copysign(math.inf, delta + margin)
        p_non, p_inf = float(stats.t.sf(t, n - 1)), float(stats.t.cdf(t, n - 1))
        half = float(stats.t.isf(alpha, n - 1)) * se
        lo, hi = delta - half, delta + half
        k = float((stats.t.isf(alpha, n - 1) + stats.t.ppf(power, n - 1)) ** 2)
        var_nstar = sd * sd
    if anytime:
        horizon = n if horizon is None else int(horizon)
        se_cs = math.sqrt(max(de or 1.0, 1.0) * float(d.var(ddof=1 if n > 1 else 0)) / n)
        half = anytime_half_width(n, horizon, alpha) * se_cs
        lo, hi = delta - half, delta + half
        p_any = anytime_pvalue(delta + margin, se_cs, n, horizon, alpha)
        # the anytime p-values: the same e-process as the sequence, so p <= alpha exactly when a bound clears
        p_non, p_inf = (p_any, 1.0) if delta > -margin else ((1.0, p_any) if delta < -margin else (1.0, 1.0))
        z_any = anytime_critical_value(alpha)[0]
        k = float((z_any + special.ndtri(power)) ** 2)
    verdict = "PASS" if lo > -margin else ("FAIL" if hi < -margin else "INCONCLUSIVE")
    if not anytime:  # the bounds invert the tests: the same verdict from either (one verdict)
        verdict = "PASS" if p_non <= alpha and lo > -margin else ("FAIL" if p_inf <= alpha and hi < -margin
                                                                  else "INCONCLUSIVE")
    gap = delta + margin
    n_star = math.inf if gap == 0 else k * var_nstar / (gap * gap)
    return GateResult(verdict=verdict, delta=delta, margin=float(margin), ci_low=lo, ci_high=hi,
                      pvalue_noninferiority=p_non, pvalue_inferiority=p_inf, n=n, n_star=n_star,
                      more_items=max(math.ceil(n_star - n), 0) if math.isfinite(n_star) else math.inf, test=test,
                      alpha=alpha, power=power, anytime=bool(anytime), horizon=horizon if anytime else None,
                      n_clusters=n_clusters, design_effect=de, higher_is_better=bool(higher_is_better))


def _clustered(d: np.ndarray, cluster: Any, *, binary: bool, margin: float, alpha: float,
               power: float) -> tuple[Any, ...]:
    """The cluster-robust branch of :func:`gate`: CR2 variance with Imbens-Kolesar df."""
    n = d.size
    delta = float(d.mean())
    codes, g = check_cluster_labels(cluster, n)
    require_clusters(g, stacklevel=4)
    sums = pair_sums(d[:, None], codes, g)
    var_item = float(sums.ss[0] / (n if binary else n - 1))
    cv = cluster_verdict(sums, np.array([var_item]), np.array([True]), alpha=alpha, power=power,
                         alternative="greater", design_effect="robust")
    variance, df = float(cv.variance[0]), float(cv.df[0])
    de = float(cv.design_effect[0])
    t = (delta + margin) / math.sqrt(variance) if variance > 0 else math.copysign(math.inf, delta + margin)
    half = float(stats.t.isf(alpha, df)) * math.sqrt(variance)
    k = float((stats.t.isf(alpha, df) + stats.t.ppf(power, df)) ** 2)
    return ("cluster_t", float(stats.t.sf(t, df)), float(stats.t.cdf(t, df)), delta - half, delta + half, k,
            max(de, 1.0) * var_item, g, de)


def anytime_pvalue(gap: float, se: float, n: int, horizon: int, alpha: float) -> float:
    """Anytime-valid p-value min(1, 1/E) of a zero ``gap`` from the normal-mixture e-process of the
    standardised sum S = gap / se * sqrt(n) at intrinsic time n (rho tuned as in
    :func:`anytime_half_width`): at most alpha exactly when that sequence excludes the zero gap.
    """
    r = anytime_critical_value(alpha)[1]
    rho = r * max(horizon, 1)
    s = math.copysign(math.inf, gap) if se == 0 and gap != 0 else (0.0 if se == 0 else gap / se * math.sqrt(n))
    log_e = 0.5 * math.log(rho / (n + rho)) + s * s / (2.0 * (n + rho))
    return float(min(1.0, math.exp(-log_e)))


def anytime_half_width(n: int, horizon: int, alpha: float) -> float:
    """Half-width, in standard errors, of the normal-mixture confidence sequence at n items when
    tuned for ``horizon`` items (standardised sums: intrinsic time n, rho = r * horizon with the
    ratio r that minimises the boundary at the horizon). Valid simultaneously over all n.
    """
    r = anytime_critical_value(alpha)[1]
    return float(normal_mixture_boundary(float(n), alpha=alpha, rho=r * horizon)) / math.sqrt(n)


@dataclass(frozen=True)
class TaskGateResult(Result):
    """Result of :func:`gate_tasks`: one gate per task and the verdict over all of them.

    PASS when every task passes (an intersection-union test: each at level alpha, no adjustment
    needed); FAIL when some task is worse by more than the margin with its inferiority p-value
    Holm-adjusted over the tasks at most alpha (family-wise error at most alpha; with ``anytime``,
    its confidence sequence at alpha / tasks); INCONCLUSIVE otherwise. ``tasks`` maps each task
    to its :class:`GateResult`; ``pvalue_inferiority_holm`` to its Holm-adjusted inferiority
    p-value.
    """

    verdict: str
    tasks: dict[str, GateResult]
    pvalue_inferiority_holm: dict[str, float]
    margin: float
    alpha: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("verdict", "margin", "alpha")

    @property
    def exit_code(self) -> int:
        """The command line's exit code: 0 PASS, 3 INCONCLUSIVE, 4 FAIL."""
        return EXIT_CODES[self.verdict]

    def sentence(self, baseline: str = "baseline", candidate: str = "candidate") -> str:
        """The one-line verdict over the tasks."""
        counts = {v: sum(r.verdict == v for r in self.tasks.values()) for v in EXIT_CODES}
        failing = [t for t, p in self.pvalue_inferiority_holm.items() if p <= self.alpha]
        what = {"PASS": "not worse by more than the margin on any task",
                "FAIL": f"worse by more than the margin on {', '.join(failing)} (Holm over {len(self.tasks)} tasks)",
                "INCONCLUSIVE": "not shown within the margin on every task, nor worse beyond it on any"}[self.verdict]
        return (f"{self.verdict}  {candidate} vs {baseline} on {len(self.tasks)} tasks ({counts['PASS']} pass, "
                f"{counts['FAIL']} fail, {counts['INCONCLUSIVE']} inconclusive alone) -- {what}")


def gate_tasks(baseline: Any, candidate: Any, tasks: Any, *, margin: float = 0.01, alpha: float = 0.05,
               power: float = 0.8, cluster: Any = None, anytime: bool = False,
               horizon: int | None = None) -> TaskGateResult:
    """:func:`gate` on each task (one label per item in ``tasks``), and one verdict over them.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.gating import gate_tasks
    >>> rng = np.random.default_rng(2)
    >>> base = (rng.random(6000) < 0.7).astype(int)
    >>> cand = np.where(rng.random(6000) < 0.05, rng.random(6000) < 0.7, base).astype(int)
    >>> res = gate_tasks(base, cand, np.repeat(["math", "code", "qa"], 2000), margin=0.03)
    >>> res.verdict, sorted(res.tasks)
    ('PASS', ['code', 'math', 'qa'])
    """
    from .multiplicity import adjust_pvalues

    labels = np.asarray(tasks, dtype=object)
    b_arr, c_arr = check_paired(baseline, candidate, a_name="baseline", b_name="candidate")
    if labels.shape != b_arr.shape:
        msg = f"`tasks` must have one label per item ({b_arr.size}); got shape {labels.shape}."
        raise ValueError(msg)
    clusters = None if cluster is None else np.asarray(cluster, dtype=object)
    names = sorted({str(t) for t in labels.tolist()})
    text = np.array([str(t) for t in labels.tolist()], dtype=object)
    results = {}
    for name in names:
        keep = text == name
        results[name] = gate(b_arr[keep], c_arr[keep], margin=margin, alpha=alpha, power=power,
                             cluster=None if clusters is None else clusters[keep], anytime=anytime,
                             horizon=None if horizon is None else max(1, round(horizon * keep.mean())))
    adjusted = adjust_pvalues([results[t].pvalue_inferiority for t in names], method="holm")
    holm = {t: float(p) for t, p in zip(names, np.atleast_1d(adjusted), strict=True)}
    if all(r.verdict == "PASS" for r in results.values()):
        verdict = "PASS"
    elif not anytime and any(holm[t] <= alpha and results[t].ci_high < -margin for t in names):
        verdict = "FAIL"
    elif anytime and any(_anytime_fail(b_arr, c_arr, text == t, clusters, margin=margin, alpha=alpha / len(names),
                                       power=power, horizon=horizon) for t in names if results[t].verdict == "FAIL"):
        verdict = "FAIL"  # anytime: Bonferroni over the tasks' confidence sequences (valid at every look)
    else:
        verdict = "INCONCLUSIVE"
    return TaskGateResult(verdict=verdict, tasks=results, pvalue_inferiority_holm=holm, margin=float(margin),
                          alpha=alpha)


def _anytime_fail(b_arr: np.ndarray, c_arr: np.ndarray, keep: np.ndarray, clusters: np.ndarray | None, *,
                  margin: float, alpha: float, power: float, horizon: int | None) -> bool:
    """Whether one task's anytime gate FAILs at the (Bonferroni) level ``alpha``."""
    res = gate(b_arr[keep], c_arr[keep], margin=margin, alpha=alpha, power=power,
               cluster=None if clusters is None else clusters[keep], anytime=True,
               horizon=None if horizon is None else max(1, round(horizon * keep.mean())))
    return res.verdict == "FAIL"

