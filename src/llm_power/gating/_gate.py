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

``anytime=True`` replaces the fixed-n bounds by confidence sequences (each side at level
:math:`\alpha`, tuned for ``horizon`` items): a gate checked again and again as items accumulate
keeps each error at most :math:`\alpha` over all the looks, where the fixed-n gate's grows with
every look. Without clusters the sequences are *betting* sequences for bounded differences
(Waudby-Smith & Ramdas 2024; :mod:`llm_power._kernel.betting`), valid at any stopping time with no
variance plugged in: a run that shows no change yet (every difference 0) gets a wide sequence, not
a zero-width one, and PASSes only once enough items have been seen (about 1,200 identical 0/1 items
for a 1-point margin at alpha = 0.05). With clusters: the normal-mixture sequence on the
cluster-robust variance (design effect floored at 1), never below the variance at the null
(approximate; its size is simulated in ``tests/test_gate.py``, numbers in ``docs/integrations.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core.clusters import code_labels, require_clusters
from .._core.errors import DegenerateDataWarning, warn
from .._core.format import fmt_gap
from .._core.options import CLUSTER_METHODS
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.validation import (
    check_int_at_least,
    check_open_unit,
    check_option,
    check_paired,
    check_run_pair,
    fail,
    is_binary,
)
from .._kernel.betting import bets, betting_bound, betting_pvalue
from .._kernel.crossed import crossed_mean_squares, gap_run_variance
from .._kernel.paired_intervals import tango_null_variance, tango_z
from .._kernel.quantiles import critical_values, interval_half_width, normal_pvalue, t_pvalue, z_quantile
from .._kernel.variance import mean_variance
from .._kernel.verdict import run_verdict, spread
from ..paired import paired_difference_ci_from_counts
from ..sequential import anytime_critical_value, normal_mixture_boundary

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
        ``anytime``, the two one-sided confidence sequences, each at 1 - alpha).
    pvalue_noninferiority, pvalue_inferiority : float
        One-sided p-values of H0: delta <= -m and of H0: delta >= -m (with ``anytime``,
        anytime-valid p-values 1/sup E of the e-process behind each sequence: at most alpha
        exactly when that sequence's bound clears -m).
    n : int
        Items.
    n_star : float
        Items at which the one-sided test of the observed gap against -m has the requested
        power (inf when the gap is exactly at the margin); ``more_items`` = max(n_star - n, 0).
    test : str
        "tango" (0/1 scores), "paired_t" (graded) or "cluster_t"; with ``anytime``, "betting" or
        "cluster_normal_mixture"; "run_t" with several runs per model.
    runs_baseline, runs_candidate, run_df : int, int, float or None
        With several runs per model: the runs of each, and the df of the run test (Satterthwaite's,
        conservative for few runs).
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
    binary: bool = True
    runs_baseline: int | None = None
    runs_candidate: int | None = None
    run_df: float | None = None

    _repr_fields: ClassVar[tuple[str, ...]] = ("verdict", "delta", "margin", "ci_low", "ci_high", "n")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval the verdict reads (the 1 - 2 alpha interval, or the anytime-valid sequence):
        ``(ci_low, ci_high)``; ``confidence_level`` must be that level (or None).
        """
        return stored_interval(self.ci_low, self.ci_high, 1.0 - 2.0 * self.alpha, confidence_level,
                               recompute="run gate(..., alpha=(1 - confidence_level) / 2)")

    @property
    def exit_code(self) -> int:
        """The command line's exit code: 0 PASS, 3 INCONCLUSIVE, 4 FAIL."""
        return EXIT_CODES[self.verdict]

    def outlook(self) -> str:
        """What more items would do, in words (the INCONCLUSIVE sentence's ending)."""
        if math.isnan(self.more_items):
            return "the differences show no spread yet: run more items before planning how many"
        if not math.isfinite(self.more_items):
            return "no number of items decides a gap exactly at the margin"
        if self.more_items == 0:
            return "a gap of this size is decided at about this many items: run a few more"
        more = f"{self.more_items:,.0f} more item{'' if round(self.more_items) == 1 else 's'}"
        return f"about {more} like these would decide a gap of this size"

    def sentence(self, baseline: str = "baseline", candidate: str = "candidate") -> str:
        """The one-line verdict the command line prints first (names as given: escape for your medium)."""
        points = self.binary
        gap = f"{fmt_gap(self.delta, True)} points" if points else f"{self.delta:+.4g}"
        level = f"{1 - 2 * self.alpha:.0%}"
        ci = f"[{fmt_gap(self.ci_low, True)}, {fmt_gap(self.ci_high, True)}]" if points else \
            f"[{self.ci_low:+.4g}, {self.ci_high:+.4g}]"
        pts = 100 * self.margin
        margin = f"{pts:g} point{'' if pts == 1 else 's'}" if points else f"{self.margin:g}"
        kind = " anytime-valid" if self.anytime else ""
        improvement = "" if self.higher_is_better else " improvement (lower is better)"
        where = f"{candidate} vs {baseline}:{improvement} {gap}, {level}{kind} CI {ci}, margin {margin}"
        if self.verdict == "PASS":
            return f"PASS  {where} -- not worse by more than the margin"
        if self.verdict == "FAIL":
            return f"FAIL  {where} -- worse by more than the margin"
        return f"INCONCLUSIVE  {where} -- {self.outlook()}"

    def summary(self) -> str:
        """The verdict line and the tests behind it."""
        lines = [self.sentence(),
                 f"  n = {self.n:,} items; test {self.test}; one-sided p: non-inferiority "
                 f"{self.pvalue_noninferiority:.3g}, inferiority {self.pvalue_inferiority:.3g} "
                 f"(alpha = {self.alpha:g})"]
        if self.n_clusters:
            lines.append(f"  {self.n_clusters} clusters, design effect {self.design_effect:.2f}")
        if self.runs_baseline is not None:
            lines.append(f"  {self.runs_baseline} baseline and {self.runs_candidate} candidate runs: run-to-run "
                         f"variance included ({self.run_df:.3g} df, conservative Satterthwaite)")
        return "\n".join(lines)


@public(upper={"alpha": (0.5, "each bound of the gate is a one-sided test at alpha, so the interval "
                                   "between them has level 1 - 2 alpha")})
def gate(baseline: Any, candidate: Any, *, margin: float = 0.01, alpha: float = 0.05, power: float = 0.8,
         cluster: Any = None, anytime: bool = False, horizon: int | None = None,
         higher_is_better: bool = True, score_range: Any = None, run_pairing: str = "independent",
         cluster_method: str = "cr2") -> GateResult:
    r"""Regression gate of a candidate against a baseline on the same items.

    Parameters
    ----------
    baseline, candidate : array_like, shape (n,) or (n, n_runs)
        Per-item scores on the same items in the same order (0/1 or graded). Two-dimensional:
        several runs per model (seeds, templates; at least 2 each, run independently): the gate
        tests delta + m over items *and* runs (:func:`llm_power.diagnose`'s run regime, test
        "run_t"), so run-to-run noise cannot make a regression pass; ``run_pairing="matched"`` when
        column r of both is the same prompt template.
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
    cluster_method : {"cr2", "cv3"}, default "cr2"
        With ``cluster``: the variance of the clustered t test -- CR2 on Imbens-Kolesar df, or the
        cluster jackknife (CV3) on G - 1 df (:func:`~llm_power.compare`'s ``cluster_method``). The
        wild cluster bootstrap is two-sided, and each bound of the gate is a one-sided test, so it is
        refused here.
    anytime : bool, default False
        Use confidence sequences instead of the fixed-n bounds, for a gate that is checked again
        as items accumulate (any number of looks; each error at most alpha overall): betting
        sequences for bounded scores, computed over the items in the order given (the order they
        arrived); with ``cluster``, the normal-mixture sequence on the cluster-robust variance.
    horizon : int, optional
        With ``anytime``: the number of items the sequence is tuned for (default: this run's n;
        set the planned final number of items when looks come before it).
    higher_is_better : bool, default True
        False for error scores (0/1 error flags, error counts, loss): the gap and its interval are
        then reported as improvement, baseline - candidate, so that "worse" keeps its meaning.
        0/1 error flags are gated as the correctness flags 1 - x (Tango's test, as for accuracy).
    score_range : (float, float), optional
        With ``anytime`` and scores outside [0, 1]: the range any per-item score can take, on the
        scale given (the betting sequence needs bounded differences). When given, every score must
        lie in it, whatever the mode.
    run_pairing : {"independent", "matched"}, default "independent"
        With several runs per model: run independently (seeds), or matched (column r of both is the
        same prompt template: the variance comes from the per-run differences).

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
        msg = f"`margin` must be a finite number >= 0; got {margin!r}."
        raise ValueError(msg)
    if np.ndim(baseline) == 2 or np.ndim(candidate) == 2:  # several runs per model: the run test decides
        if cluster is not None or anytime:
            msg = "the gate takes several runs, or cluster labels / anytime, not both"
            raise ValueError(msg)
        return _gate_runs(baseline, candidate, margin=margin, alpha=alpha, power=power,
                          higher_is_better=higher_is_better, run_pairing=run_pairing)
    b_arr, c_arr = check_paired(baseline, candidate, a_name="baseline", b_name="candidate")
    binary = is_binary(b_arr, c_arr)
    bounds = None
    if anytime or score_range is not None:  # checked on the scores as given, in every mode when declared
        bounds = _score_range(b_arr, c_arr, score_range)
    if not higher_is_better:  # error scores: the gate runs on the improvement (baseline - candidate)
        # 0/1 error flags become 0/1 correctness flags (1 - x: the same differences, and Tango's test
        # as for correctness); other error scores their negatives (and so does their range)
        b_arr, c_arr = (1.0 - b_arr, 1.0 - c_arr) if binary else (-b_arr, -c_arr)
        if bounds is not None:
            bounds = (1.0 - bounds[1], 1.0 - bounds[0]) if binary else (-bounds[1], -bounds[0])
    d = c_arr - b_arr
    n = d.size
    delta = float(d.mean())
    n_clusters: int | None = None
    de: float | None = None
    codes, g = None, 0
    cluster_method = check_option(cluster_method, "cluster_method", CLUSTER_METHODS)
    if cluster_method != "cr2" and (cluster is None or anytime or cluster_method == "wild"):
        msg = (f"cluster_method={cluster_method!r}: the gate's clustered test takes 'cr2' or 'cv3' (each bound is "
               "a one-sided test; the wild cluster bootstrap is two-sided), with `cluster` labels and without "
               "anytime")
        raise ValueError(msg)
    if cluster is not None:
        codes, g = code_labels(cluster, n)
        require_clusters(g)
        n_clusters = g
    if anytime:
        horizon = n if horizon is None else check_int_at_least(horizon, "horizon", 1)
        if codes is None:
            test, p_non, p_inf, lo, hi = _anytime_betting(d, b_arr, c_arr, margin=margin, alpha=alpha,
                                                          horizon=horizon, score_range=bounds)
            var_alt, var_null = _variances(d, b_arr, c_arr, binary=binary, margin=margin)
        else:
            test, p_non, p_inf, lo, hi, var_alt, var_null, de = _anytime_clustered(
                d, b_arr, c_arr, codes, g, binary=binary, margin=margin, alpha=alpha, horizon=horizon)
        z_a, z_b = float(anytime_critical_value(alpha)[0]), float(z_quantile(power))
    else:
        test, p_non, p_inf, lo, hi, z_a, z_b = _fixed(d, b_arr, c_arr, binary=binary, margin=margin, alpha=alpha,
                                                      power=power, warn_degenerate=codes is None)
        if codes is not None:
            test, p_non, p_inf, lo, hi, df, de = _clustered(d, codes, g, binary=binary, margin=margin, alpha=alpha,
                                                            iid=(p_non, p_inf, lo, hi), method=cluster_method)
            z_a, z_b = critical_values(alpha, power, "greater", df)
        var_alt, var_null = _variances(d, b_arr, c_arr, binary=binary, margin=margin)
        if de is not None:
            floor = max(de, 1.0) if math.isfinite(de) else 1.0
            var_alt, var_null = floor * var_alt, floor * var_null
    # one verdict: each bound is its test inverted, so PASS (FAIL) exactly when that test rejects
    verdict = "PASS" if p_non <= alpha and p_inf > alpha else ("FAIL" if p_inf <= alpha and p_non > alpha
                                                               else "INCONCLUSIVE")
    n_star = _n_star(delta + margin, var_alt, var_null, float(z_a), float(z_b))
    return GateResult(verdict=verdict, delta=delta, margin=float(margin), ci_low=float(lo), ci_high=float(hi),
                      pvalue_noninferiority=float(p_non), pvalue_inferiority=float(p_inf), n=n, n_star=n_star,
                      more_items=max(math.ceil(n_star - n), 0) if math.isfinite(n_star) else n_star, test=test,
                      alpha=alpha, power=power, anytime=bool(anytime), horizon=horizon if anytime else None,
                      n_clusters=n_clusters, design_effect=de, higher_is_better=bool(higher_is_better),
                      binary=bool(binary))


def _gate_runs(baseline: Any, candidate: Any, *, margin: float, alpha: float, power: float,  # noqa: PLR0913
               higher_is_better: bool, run_pairing: str) -> GateResult:
    """The gate with several runs per model (items x runs each): the one-sided t test of
    delta + m over items and runs -- the run regime's variance s2_D/n + s2_run,base/R_base +
    s2_run,cand/R_cand on the run test's conservative Satterthwaite df (:mod:`llm_power._kernel.crossed`)
    -- and the interval that inverts it, so PASS (FAIL) exactly when a bound clears -m. Its variance is
    never below the paired t variance of the run means, nor its df above n - 1: never less strict than
    the gate on the run means.
    """
    base, cand, run_pairing = check_run_pair(baseline, candidate, names=("baseline", "candidate"),
                                             run_pairing=run_pairing)
    blocks = [base, cand] if higher_is_better else [-base, -cand]
    ms = crossed_mean_squares([blocks[1], blocks[0]])  # candidate first: delta = candidate - baseline
    n = ms.n
    d = ms.item_means[:, 0] - ms.item_means[:, 1]
    delta = float(d.mean())
    s2_d = float(np.var(d, ddof=1))
    pv = gap_run_variance(np.array([s2_d]), n, ms, np.array([0]), np.array([1]),
                          [blocks[1], blocks[0]] if run_pairing == "matched" else None)
    df, variance = float(pv.df[0]), float(pv.variance[0])
    if variance > 0:
        t = (delta + margin) / math.sqrt(variance)
        p_non, p_inf = float(t_pvalue(t, df, "greater")), float(t_pvalue(t, df, "less"))
        half = float(interval_half_width(math.sqrt(variance), 1.0 - alpha, "greater", df))
        lo, hi = delta - half, delta + half
    else:
        p_non = p_inf = 1.0
        lo = hi = math.nan
    verdict = "PASS" if p_non <= alpha and p_inf > alpha else ("FAIL" if p_inf <= alpha and p_non > alpha
                                                               else "INCONCLUSIVE")
    rv = run_verdict(np.array([delta + margin]), np.array([s2_d]), pv.run_part, n, pv.df, np.array([True]),
                     alpha=alpha, power=power, alternative="greater")
    n_star = float(rv.n_star[0]) if delta + margin > 0 else math.inf
    binary = all(bool(np.all((b == 0) | (b == 1) | (b == -1))) for b in blocks)
    return GateResult(verdict=verdict, delta=delta, margin=float(margin), ci_low=float(lo), ci_high=float(hi),
                      pvalue_noninferiority=p_non, pvalue_inferiority=p_inf, n=n, n_star=n_star,
                      more_items=max(math.ceil(n_star - n), 0) if math.isfinite(n_star) else n_star, test="run_t",
                      alpha=alpha, power=power, anytime=False, higher_is_better=bool(higher_is_better),
                      binary=binary, runs_baseline=int(ms.runs[1]), runs_candidate=int(ms.runs[0]), run_df=df)


def _fixed(d: np.ndarray, b_arr: np.ndarray, c_arr: np.ndarray, *, binary: bool, margin: float, alpha: float,
           power: float, warn_degenerate: bool) -> tuple[Any, ...]:
    """The fixed-n IID test of the gate: Tango's score test (0/1) or the shifted paired t (graded), with
    the interval that inverts it; (test, p_non, p_inf, low, high, z_alpha, z_power).
    """
    n = d.size
    delta = float(d.mean())
    if binary:
        n10 = int(np.sum((c_arr == 1) & (b_arr == 0)))  # candidate right, baseline wrong
        n01 = int(np.sum((c_arr == 0) & (b_arr == 1)))
        n11 = int(np.sum((c_arr == 1) & (b_arr == 1)))
        test = "tango"
        z = tango_z(-margin, n10, n01, n)
        p_non, p_inf = float(normal_pvalue(z, "greater")), float(normal_pvalue(z, "less"))
        ci = paired_difference_ci_from_counts(n11, n10, n01, n - n11 - n10 - n01, method="tango",
                                              confidence_level=1.0 - 2.0 * alpha)
        lo, hi = float(ci.low), float(ci.high)
        z_a, z_b = critical_values(alpha, power, "greater")
    else:
        test = "paired_t"
        scale = math.sqrt(float(np.mean(b_arr * b_arr))) + math.sqrt(float(np.mean(c_arr * c_arr)))
        se = math.sqrt(float(spread(d.var(ddof=1), scale)) / n) if n > 1 else 0.0
        if se > 0:
            t = (delta + margin) / se
            p_non, p_inf = float(t_pvalue(t, n - 1, "greater")), float(t_pvalue(t, n - 1, "less"))
            half = float(interval_half_width(se, 1.0 - alpha, "greater", n - 1))
            lo, hi = delta - half, delta + half
        else:  # every difference the same: no variance to test with (never a zero-width interval)
            if warn_degenerate:
                warn("every paired difference is the same: the paired t test is undefined (NaN bounds, "
                              "INCONCLUSIVE)", DegenerateDataWarning)
            p_non = p_inf = 1.0
            lo = hi = math.nan
        z_a, z_b = critical_values(alpha, power, "greater", max(n - 1, 1))
    return test, p_non, p_inf, lo, hi, z_a, z_b


def _n_star(gap: float, var_alt: float, var_null: float, z_a: float, z_b: float) -> float:
    """Items at which the one-sided test of a gap ``gap`` above -margin has the requested power:
    N* = (z_a sigma_0 + z_b sigma_1)^2 / gap^2 (sigma_0 under the null at the margin, sigma_1 at the
    observed gap); inf at the margin, NaN when neither variance is known (no spread yet).
    """
    if gap == 0:
        return math.inf
    s0 = math.sqrt(var_null) if math.isfinite(var_null) else math.nan
    s1 = math.sqrt(var_alt)
    if not (s0 > 0 or s1 > 0):
        return math.nan
    s0 = s0 if math.isfinite(s0) else s1
    return float((z_a * s0 + z_b * s1) ** 2 / (gap * gap))


def _variances(d: np.ndarray, b_arr: np.ndarray, c_arr: np.ndarray, *, binary: bool,
               margin: float) -> tuple[float, float]:
    """(per-item variance of d at the observed gap, at the null gap -margin): for 0/1 scores the
    plug-in (n10 + n01)/n - delta^2 and Tango's restricted MLE; graded: the sample variance, twice.
    """
    n = d.size
    if binary:
        n10 = int(np.sum((c_arr == 1) & (b_arr == 0)))
        n01 = int(np.sum((c_arr == 0) & (b_arr == 1)))
        delta = (n10 - n01) / n
        return max((n10 + n01) / n - delta * delta, 0.0), tango_null_variance(-margin, n10, n01, n)
    var = float(d.var(ddof=1)) if n > 1 else 0.0
    return var, var


def _score_range(b_arr: np.ndarray, c_arr: np.ndarray, score_range: Any) -> tuple[float, float]:
    """The range [low, high] every per-item score lies in (the anytime sequence needs it)."""
    if score_range is None:
        if np.all((b_arr >= 0) & (b_arr <= 1)) and np.all((c_arr >= 0) & (c_arr <= 1)):
            return 0.0, 1.0
        msg = ("`anytime=True` needs scores in a known range; these lie outside [0, 1] (min "
               f"{min(b_arr.min(), c_arr.min()):g}, max {max(b_arr.max(), c_arr.max()):g}): give "
               "`score_range=(low, high)` (--score-range LOW HIGH), the range any score can take")
        raise ValueError(msg)
    try:
        low, high = (float(v) for v in score_range)
    except (TypeError, ValueError):
        name = "score_range"
        raise fail(name, "a pair (low, high) of numbers", score_range) from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        name = "score_range"
        raise fail(name, "finite (low, high) with low < high", score_range)
    if min(b_arr.min(), c_arr.min()) < low or max(b_arr.max(), c_arr.max()) > high:
        msg = (f"a score lies outside `score_range` [{low:g}, {high:g}] (min {min(b_arr.min(), c_arr.min()):g}, "
               f"max {max(b_arr.max(), c_arr.max()):g})")
        raise ValueError(msg)
    return low, high


def _anytime_betting(d: np.ndarray, b_arr: np.ndarray, c_arr: np.ndarray, *, margin: float, alpha: float,
                     horizon: int, score_range: Any) -> tuple[str, float, float, float, float]:
    """The anytime gate without clusters: betting confidence sequences (one-sided, each at level
    alpha) for the mean difference in [-w, w], in the items' order; no plug-in variance.
    """
    low, high = _score_range(b_arr, c_arr, score_range)
    w = high - low  # d lies in [-w, w]
    y = (d + w) / (2.0 * w)
    m0 = (w - margin) / (2.0 * w)
    if m0 <= 0:  # a margin of the whole range: nothing can be worse than that
        return "betting", 0.0, 1.0, -w, w
    lam = bets(y, alpha, horizon)
    p_non = betting_pvalue(y, lam, m0, "greater")
    p_inf = betting_pvalue(y, lam, m0, "less")
    lo = 2.0 * w * betting_bound(y, lam, alpha, "lower") - w
    hi = 2.0 * w * betting_bound(y, lam, alpha, "upper") - w
    if p_non <= alpha:  # the bound and the test are one computation: keep them exactly in step
        lo = max(lo, -margin + 1e-12 * w)
    if p_inf <= alpha:
        hi = min(hi, -margin - 1e-12 * w)
    return "betting", p_non, p_inf, lo, hi


def _anytime_clustered(d: np.ndarray, b_arr: np.ndarray, c_arr: np.ndarray, codes: np.ndarray, g: int, *,
                       binary: bool, margin: float, alpha: float, horizon: int) -> tuple[Any, ...]:
    """The anytime gate with clusters: the normal-mixture sequence on the cluster-robust variance
    (design effect floored at 1), never below the variance at the null (Tango's restricted MLE for
    0/1 scores); zero spread gives no verdict. Approximate (the sequence assumes sub-Gaussian
    increments); its size is simulated in tests/test_gate.py.
    """
    n = d.size
    delta = float(d.mean())
    cr = mean_variance(d, codes, g, kind="cr2", ddof=0 if binary else 1)
    var_alt, var_null = _variances(d, b_arr, c_arr, binary=binary, margin=margin)
    de = float(cr.design_effect[0])
    floor = max(de, 1.0) if math.isfinite(de) else 1.0
    var = floor * max(var_alt, var_null)
    se = math.sqrt(var / n)
    if se == 0:
        warn("every paired difference is the same: the clustered sequence has no variance to test with "
                      "(NaN bounds, INCONCLUSIVE)", DegenerateDataWarning)
        return "cluster_normal_mixture", 1.0, 1.0, math.nan, math.nan, 0.0, 0.0, de
    half = anytime_half_width(n, horizon, 2.0 * alpha) * se  # each side at alpha
    p_any = anytime_pvalue(delta + margin, se, n, horizon, 2.0 * alpha) / 2.0
    p_non, p_inf = (p_any, 1.0) if delta > -margin else ((1.0, p_any) if delta < -margin else (1.0, 1.0))
    return ("cluster_normal_mixture", min(p_non, 1.0), min(p_inf, 1.0), delta - half, delta + half,
            floor * var_alt, floor * var_null, de)


def _clustered(d: np.ndarray, codes: np.ndarray, g: int, *, binary: bool, margin: float, alpha: float,  # noqa: PLR0913
               iid: tuple[float, float, float, float], method: str = "cr2") -> tuple[Any, ...]:
    """The cluster-robust branch of :func:`gate`: the kernel's CR2 variance with Imbens-Kolesar df,
    combined with the IID test ``iid`` = (p_non, p_inf, low, high) as an intersection-union test: each
    verdict needs both tests to reject (its p-value is the larger one, its bound the more cautious one),
    so clustering only adds caution. No variance at all (every difference equal): NaN bounds, no verdict.
    """
    delta = float(d.mean())
    cr = mean_variance(d, codes, g, kind="cr2", ddof=0 if binary else 1)
    df, de = float(cr.df[0]), float(cr.design_effect[0])
    variance = float(cr.variance[0])
    test = "cluster_t"
    if method == "cv3":  # the cluster jackknife on G - 1 df; its design effect against the same IID variance
        from .._kernel.wild_cluster import cv3_variance

        v_cv3 = float(np.asarray(cv3_variance(np.bincount(codes, weights=d, minlength=g),
                                              np.bincount(codes, minlength=g))).reshape(-1)[0])
        de = de * v_cv3 / variance if variance > 0 else de
        variance, df, test = v_cv3, float(g - 1), "cluster_cv3"
    p_non_i, p_inf_i, lo_i, hi_i = iid
    if not (hi_i > lo_i):  # the IID test has no variance either (graded, every difference the same)
        warn("every paired difference is the same: the clustered gate has no variance to test with "
                      "(NaN bounds, INCONCLUSIVE)", DegenerateDataWarning)
        return test, 1.0, 1.0, math.nan, math.nan, df, de
    se = math.sqrt(max(variance, 0.0))
    gap = delta + margin
    t = gap / se if se > 0 else (math.copysign(math.inf, gap) if gap else 0.0)
    half = float(interval_half_width(se, 1.0 - alpha, "greater", df))
    return (test, max(float(t_pvalue(t, df, "greater")), p_non_i), max(float(t_pvalue(t, df, "less")), p_inf_i),
            min(delta - half, lo_i), max(delta + half, hi_i), df, de)


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
               horizon: int | None = None, higher_is_better: bool = True, score_range: Any = None,
               cluster_method: str = "cr2") -> TaskGateResult:
    """:func:`gate` on each task (one label per item in ``tasks``), and one verdict over them
    (``cluster_method`` as :func:`gate`'s).

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
    from ..multiplicity import adjust_pvalues

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
                             horizon=None if horizon is None else max(1, round(horizon * keep.mean())),
                             higher_is_better=higher_is_better, score_range=score_range,
                             cluster_method=cluster_method)
    adjusted = adjust_pvalues([results[t].pvalue_inferiority for t in names], method="holm")
    holm = {t: float(p) for t, p in zip(names, np.atleast_1d(adjusted), strict=True)}
    if all(r.verdict == "PASS" for r in results.values()):
        verdict = "PASS"
    elif not anytime and any(holm[t] <= alpha and results[t].ci_high < -margin for t in names):
        verdict = "FAIL"
    elif anytime and any(_anytime_fail(b_arr, c_arr, text == t, clusters, margin=margin, alpha=alpha / len(names),
                                       power=power, horizon=horizon, higher_is_better=higher_is_better,
                                       score_range=score_range)
                         for t in names if results[t].verdict == "FAIL"):
        verdict = "FAIL"  # anytime: Bonferroni over the tasks' confidence sequences (valid at every look)
    else:
        verdict = "INCONCLUSIVE"
    return TaskGateResult(verdict=verdict, tasks=results, pvalue_inferiority_holm=holm, margin=float(margin),
                          alpha=alpha)


def _anytime_fail(b_arr: np.ndarray, c_arr: np.ndarray, keep: np.ndarray, clusters: np.ndarray | None, *,  # noqa: PLR0913
                  margin: float, alpha: float, power: float, horizon: int | None, higher_is_better: bool,
                  score_range: Any) -> bool:
    """Whether one task's anytime gate FAILs at the (Bonferroni) level ``alpha``."""
    res = gate(b_arr[keep], c_arr[keep], margin=margin, alpha=alpha, power=power,
               cluster=None if clusters is None else clusters[keep], anytime=True,
               horizon=None if horizon is None else max(1, round(horizon * keep.mean())),
               higher_is_better=higher_is_better, score_range=score_range)
    return res.verdict == "FAIL"

