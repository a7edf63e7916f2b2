"""Noise beyond the items: flaky items, signal-to-noise, and template sensitivity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least
from .._kernel.binomial import wilson_bounds
from .._kernel.crossed import chi2_variance_interval, crossed_mean_squares, matched_run_variance, pair_run_variance
from .._kernel.crossed_pairs import matched_pair_mean_squares, pair_difference_variance
from .._kernel.quantiles import interval_half_width, upper_quantile
from ._variance import RunVarianceResult, as_run_scores, decomposition

__all__ = ["NoiseReport", "noise"]


@dataclass(frozen=True, slots=True, repr=False)
class NoiseReport(Result):
    """Run-to-run noise of a benchmark (see :func:`noise`).

    Attributes
    ----------
    variance : RunVarianceResult
        Item, run and item x run components of each model's score and each adjacent gap.
    flakiness : list of dict
        Per model: ``unstable_share`` (items whose score differs between runs; 1 - the total
        agreement rate), ``flip_rate`` (mean over items of the chance that two runs disagree,
        2 c (R - c) / (R (R - 1)) for 0/1 scores; for graded scores the mean over items of the
        within-item variance) with its t interval over items, and for 0/1 scores
        ``best_possible`` / ``worst_possible`` (an item counted right when any / every run is).
    flaky_items : list of dict
        The most unstable (model, item) pairs: runs right, share right with its Wilson interval.
    signal, noise, snr : float
        Signal: the spread (max - min) of the models' observed scores. Noise: the pooled run-to-run
        standard deviation of one run's score on these items, sqrt(MS_run / n) pooled over models
        (Heineman et al. 2025 use the same ratio of dispersion to run-to-run deviation). The observed
        spread over-states the true one when models are close (the largest of noisy gaps).
    snr_ci : (float, float)
        Confidence interval of the *true* ratio -- the spread of the models' expected scores (over items
        and runs) over the true run-to-run SD sqrt(s2_run + s2_res/n) -- not of the observed one: the
        spread between simultaneous (Bonferroni) bounds from every pair's run-regime interval at level
        1 - (1 - ``confidence_level``)/2, over the chi-square bounds of the pooled noise variance (on the
        sum of R_m - 1 df) at the same level; the two halves of the error add up to
        1 - ``confidence_level``.
    resolvable_models : float
        spread / the median run-regime MDE (sqrt(K) x SE over items and runs) of the adjacent gaps + 1:
        how many models, evenly spread
        over the observed range, the benchmark can tell apart under run noise.
    templates : dict or None
        When runs are prompt templates (the same labels for every model): each model's spread
        over templates (``spread``), the pairs of models whose observed order flips between templates
        (``flipping_pairs``), and the rank agreement between templates:

        - ``kendall_tau``: the mean over pairs of templates of Kendall's tau-a between the models'
          *observed* per-template scores (a tie counts 0). Noise alone reorders close models, so it
          under-states the agreement of the templates' true rankings when models are close.
        - ``kendall_tau_ci``: a confidence interval at ``confidence_level`` for the estimand, the mean
          tau-a between the templates' *true* rankings (of the models' expected scores under each
          template): every template's pairwise gaps get simultaneous intervals (an items bootstrap of the
          largest studentised deviation, ``critical_value``, ``n_resamples`` resamples), the sign of a
          gap is settled where its interval excludes 0 (``settled_share`` of them), and the interval
          is the range of the mean tau-a over all rankings consistent with the settled signs. When the
          templates reorder nothing the interval reaches 1; when no sign is settled it is the whole
          range. It contains ``kendall_tau``.
    """

    models: list[Any]
    n_items: int
    runs: np.ndarray
    binary: bool
    variance: RunVarianceResult
    flakiness: list[dict[str, Any]]
    flaky_items: list[dict[str, Any]]
    signal: float
    noise: float
    snr: float
    snr_ci: tuple[float, float]
    resolvable_models: float
    templates: dict[str, Any] | None
    confidence_level: float
    runs_by: str = "run"

    _repr_fields = ("models", "n_items", "runs", "signal", "noise", "snr")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the true signal-to-noise ratio (the field ``snr_ci``)."""
        return stored_interval(*self.snr_ci, self.confidence_level, confidence_level,
                               recompute="run noise(..., confidence_level=confidence_level)")
    _title = "Run-to-run noise"

    def summary(self) -> str:
        """The decomposition, flaky items and signal-to-noise, as text."""
        lines = [self.variance.summary(), "",
                 f"Signal-to-noise: spread of scores {self.signal:.4g} / run-to-run SD {self.noise:.4g} = "
                 f"{self.snr:.3g} ({self.confidence_level:.0%} CI of the true ratio {self.snr_ci[0]:.3g} to "
                 f"{self.snr_ci[1]:.3g}); "
                 f"about {self.resolvable_models:.3g} evenly spread models resolvable", "", "Flakiness:"]
        for f in self.flakiness:
            extra = (f", best/worst possible {f['best_possible']:.4f}/{f['worst_possible']:.4f}"
                     if "best_possible" in f else "")
            lines.append(f"  {str(f['model'])[:24]:<24} unstable items {f['unstable']:,} of {self.n_items:,} "
                         f"({f['unstable_share']:.1%}), flip rate {f['flip_rate']:.4f}{extra}")
        if self.flaky_items:
            lines.append("Most unstable items:")
            for it in self.flaky_items:
                lines.append(f"  {str(it['model'])[:24]:<24} {str(it['item'])[:32]:<32} {it['right']}/{it['runs']} "
                             f"runs right")
        if self.templates:
            t = self.templates
            lo, hi = t["kendall_tau_ci"]
            lines.append(f"Templates: mean Kendall tau-a between the templates' observed rankings "
                         f"{t['kendall_tau']:.3f}; of their true rankings {lo:.3f} to {hi:.3f} "
                         f"({self.confidence_level:.0%} CI); {len(t['flipping_pairs'])} pair(s) flip")
        return "\n".join(lines)


def _top_unstable(flip: np.ndarray, unstable: np.ndarray, top: int) -> np.ndarray:
    """The items (ascending) among a model's ``top`` most unstable: the largest flip rates, ties to the
    earlier item.
    """
    idx = np.flatnonzero(unstable)
    if idx.size <= top:
        return idx
    f = flip[idx]
    kth = np.partition(f, f.size - top)[f.size - top]  # the top-th largest flip rate
    above = idx[f > kth]
    return np.sort(np.concatenate([above, idx[f == kth][:top - above.size]]))


def _flakiness(rs: Any, binary: bool, level: float, top: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    per_model = []
    cand_flip, cand_model, cand_item = [], [], []
    for m, (name, blk) in enumerate(zip(rs.models, rs.blocks, strict=True)):
        r = blk.shape[1]
        if binary:
            c = blk.sum(axis=1)
            unstable = (c > 0) & (c < r)  # some run right, some wrong
            flip = 2.0 * c * (r - c) / (r * (r - 1.0))  # unbiased for 2 p (1 - p): two runs disagree
        else:
            unstable = np.ptp(blk, axis=1) > 0
            flip = blk.var(axis=1, ddof=1)  # within-item (item x run) variance
        n = flip.size
        mean = float(flip.mean())
        half = float(interval_half_width(flip.std(ddof=1) / np.sqrt(n), level, "two-sided", n - 1)) if n > 1 else np.nan
        share = float(unstable.mean())
        row = {"model": name, "runs": int(r), "unstable": int(unstable.sum()), "unstable_share": share,
               "total_agreement": float(1.0 - share), "flip_rate": mean,
               "flip_rate_ci": (max(mean - half, 0.0), mean + half)}
        if binary:
            row["best_possible"] = float((c > 0).mean())  # some run right
            row["worst_possible"] = float((c == r).mean())  # every run right
        per_model.append(row)
        if top:
            keep = _top_unstable(flip, unstable, top)
            cand_flip.append(flip[keep])
            cand_model.append(np.full(keep.size, m))
            cand_item.append(keep)
    items: list[dict[str, Any]] = []
    if not cand_flip:
        return per_model, items
    flips, owners, rows = np.concatenate(cand_flip), np.concatenate(cand_model), np.concatenate(cand_item)
    # the most unstable first; ties in model order, then item order
    for p in np.lexsort((rows, owners, -flips))[:top].tolist():
        name, k, flip_k = rs.models[owners[p]], int(rows[p]), float(flips[p])
        row_scores = rs.blocks[owners[p]][k]
        r = row_scores.size
        right = float(row_scores.sum())
        item = {"model": name, "item": rs.items[k], "runs": int(r), "flip_rate": flip_k,
                "mean": float(row_scores.mean())}
        if binary:
            lo, hi = wilson_bounds(np.array([right]), np.array([float(r)]), level)
            item.update(right=int(right), ci=(float(lo[0]), float(hi[0])))
        else:
            item.update(right=f"{row_scores.min():.3g}..{row_scores.max():.3g}", ci=None)
        items.append(item)
    return per_model, items


def _kendall(scores: np.ndarray) -> float:
    """Mean Kendall tau-a between the model rankings of every pair of templates (scores: templates x models):
    per pair of templates, the mean over pairs of models of sign(gap in one) x sign(gap in the other), a
    tie counting 0 (tau-a; equal to tau-b when no template ties two models).
    """
    t, m = scores.shape
    if t < 2 or m < 2:
        return float("nan")
    s = np.sign(scores[:, :, None] - scores[:, None, :])  # (T, M, M)
    iu = np.triu_indices(m, 1)
    s = s[:, iu[0], iu[1]]  # (T, P)
    taus = [float(np.mean(s[a] * s[b])) for a in range(t) for b in range(a + 1, t)]
    return float(np.mean(taus))


def _tau_bounds(known: np.ndarray) -> tuple[float, float]:
    """The smallest and largest mean tau-a over the templates' rankings consistent with the settled signs.

    ``known`` (templates x pairs of models): +1 / -1 where the sign of a pair's gap in a template is settled,
    0 where it is not (either sign possible). Per pair of models, with k+ and k- settled signs and u
    unsettled, sum_{t < t'} s_t s_t' = ((sum_t s_t)^2 - T)/2 for signs s_t = +-1, and |sum_t s_t| ranges
    from max(|k+ - k-| - u, T mod 2) to |k+ - k-| + u; the pairs are bounded one by one (transitivity is
    ignored, which only widens the range), and a tie (s_t = 0) lies between the two signs, so the range
    also holds for true rankings with ties.
    """
    t = known.shape[0]
    plus, minus = np.sum(known > 0, axis=0), np.sum(known < 0, axis=0)
    free = t - plus - minus
    net = np.abs(plus - minus)
    low_sum, high_sum = np.maximum(net - free, t % 2), net + free
    scale = t * (t - 1.0)
    return float(np.mean((low_sum**2 - t) / scale)), float(np.mean((high_sum**2 - t) / scale))


def _max_t_critical(cube: np.ndarray, gaps: np.ndarray, se: np.ndarray, iu: tuple[np.ndarray, np.ndarray], *,
                    level: float, n_boot: int, gen: np.random.Generator) -> float:
    """The ``level`` quantile of max over (template, pair) of |gap* - gap| / se in an items bootstrap:
    the critical value of simultaneous intervals gap +- c se for every template's pairwise gaps.
    Resamples are drawn as multinomial item counts, in blocks (a resample is a weighted mean of the items).
    """
    n, m = cube.shape[0], cube.shape[2]
    flat = cube.reshape(n, -1)  # items x (templates * models)
    scale = np.where(se > 0, se, np.inf)  # a pair without spread (se = 0) deviates by 0
    # the pairs (a, b > a) of model a: a contiguous run of the pairs (iu is row-major)
    bounds = np.searchsorted(iu[0], np.arange(m + 1))
    stats = np.empty(n_boot)
    block = max(1, min(n_boot, (1 << 22) // max(n, 1)))
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        counts = gen.multinomial(n, np.full(n, 1.0 / n), size=size).astype(float)  # resamples x items
        means = (counts @ flat / n).reshape(size, *cube.shape[1:])  # resamples x templates x models
        worst = np.zeros(size)
        for a in range(m - 1):
            seg = slice(bounds[a], bounds[a + 1])
            dev = means[:, :, a:a + 1] - means[:, :, a + 1:]  # resamples x templates x pairs of a
            dev -= gaps[:, seg]
            np.abs(dev, out=dev)
            dev /= scale[:, seg]
            np.maximum(worst, dev.max(axis=(1, 2)), out=worst)
        stats[start:start + size] = worst
    return float(np.quantile(stats, level))


def _templates(rs: Any, level: float, n_boot: int, gen: np.random.Generator) -> dict[str, Any] | None:
    """Template sensitivity: spreads, the observed tau-a and an interval for the tau-a of the true rankings."""
    labels = rs.run_labels[0]
    if any(lab != labels for lab in rs.run_labels) or len(labels) < 2 or rs.n_models < 2:
        return None
    cube = np.stack(rs.blocks, axis=2)  # items x templates x models
    per = cube.mean(axis=0)  # templates x models
    tau = _kendall(per)
    m = rs.n_models
    iu = np.triu_indices(m, 1)
    # every template's pairwise gaps, paired over the same items (from cross-products: no items x pairs array)
    gaps = per[:, iu[0]] - per[:, iu[1]]
    se = np.sqrt(np.stack([pair_difference_variance(cube[:, t, :], *iu) for t in range(cube.shape[1])])) / np.sqrt(rs.n)
    crit = _max_t_critical(cube, gaps, se, iu, level=level, n_boot=n_boot, gen=gen)
    # a sign is settled where the simultaneous interval excludes 0 (an exactly known nonzero gap, se = 0, too)
    known = np.where(np.abs(gaps) > crit * se, np.sign(gaps), 0.0)
    lo, hi = _tau_bounds(known)
    wins, losses = per[:, iu[0]] > per[:, iu[1]], per[:, iu[0]] < per[:, iu[1]]  # templates x pairs
    flipping = np.flatnonzero(wins.any(axis=0) & losses.any(axis=0)).tolist()  # in pair order, as (a, b > a)
    flips = [{"model_a": rs.models[iu[0][p]], "model_b": rs.models[iu[1][p]], "share_a_ahead": float(wins[:, p].mean()),
              "templates_a_ahead": [labels[k] for k in np.flatnonzero(wins[:, p])]} for p in flipping]
    spread = [{"model": name, "min": float(per[:, k].min()), "max": float(per[:, k].max()),
               "spread": float(np.ptp(per[:, k])), "sd": float(per[:, k].std(ddof=1))}
              for k, name in enumerate(rs.models)]
    return {"templates": list(labels), "scores": per.tolist(), "spread": spread, "kendall_tau": tau,
            "kendall_tau_ci": (lo, hi), "settled_share": float(np.mean(known != 0)), "critical_value": crit,
            "n_resamples": n_boot, "flipping_pairs": flips}


def _signal_interval(rs: Any, ms: Any, level: float, matched: bool) -> tuple[float, float]:
    """Simultaneous (Bonferroni) bounds at ``level`` of the true spread max_m mu_m - min_m mu_m, mu_m the
    score expected over items and runs: every pair's gap on the run test's variance and df (as
    diagnose's run regime), the spread at least the largest distance of a pair's interval from 0 and at
    most the largest |bound|.
    """
    m = rs.n_models
    if m < 2:
        return 0.0, 0.0
    i, j = np.triu_indices(m, 1)
    # every pair from cross-products of the models' columns (no items x pairs array)
    s2_d = pair_difference_variance(ms.item_means, i, j)
    if matched:
        pv = matched_run_variance(s2_d, rs.n, *matched_pair_mean_squares(rs.blocks, i, j), float(rs.runs[0]))
    else:
        pv = pair_run_variance(s2_d, rs.n, ms, i, j)
    tail = (1.0 - level) / (2.0 * i.size)
    half = np.asarray(upper_quantile(tail, pv.df)) * np.sqrt(pv.variance)
    gap = ms.mean[i] - ms.mean[j]
    low, high = gap - half, gap + half
    near = np.where(low > 0, low, np.where(high < 0, -high, 0.0))
    return float(np.max(near)), float(np.max(np.maximum(np.abs(low), np.abs(high))))


def _ratio(num: float, den: float) -> float:
    """The ratio num / den, with 0 / 0 = 0 (no spread, no noise) and x / 0 = inf."""
    if num == 0:
        return 0.0
    return num / den if den > 0 else float("inf")


@public
def noise(data: Any, *, models: Any = None, run: str = "run", templates: bool | None = None, top: int = 10,  # noqa: PLR0913
          confidence_level: float = 0.95, alpha: float = 0.05, power: float = 0.8, n_resamples: int = 1000,
          run_pairing: str = "auto", rng: SeedLike = None) -> NoiseReport:
    r"""Run-to-run noise of a benchmark: the decomposition, flaky items, signal-to-noise, templates.

    Parameters
    ----------
    data : RunScores, DataFrame, array_like (n_items, n_runs, n_models) or dict
        At least 2 runs per model (:func:`llm_power.read_runs`; a long DataFrame
        ``model, <run>, item, score``).
    models : sequence of str, optional
        Model names for an array.
    run : str, default "run"
        The run column of a DataFrame.
    templates : bool, optional
        Whether runs are prompt templates shared by every model (default: when every model has the
        same run labels and ``runs_by`` is "template"). Adds the template sensitivity.
    top : int, default 10
        How many of the most unstable (model, item) pairs to list.
    confidence_level, alpha, power : float
    n_resamples : int, default 1000
        Bootstrap resamples of the items for the simultaneous intervals behind the Kendall tau interval
        (templates).
    run_pairing : {"auto", "independent", "matched"}, default "auto"
        How the gaps' variances treat the runs (as for :func:`llm_power.diagnose`).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    NoiseReport

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> p = 1 / (1 + np.exp(-(rng.normal(1, 1.5, (300, 1, 1)) + rng.normal(0, 0.1, (1, 5, 3)))))
    >>> rep = lp.noise((rng.random((300, 5, 3)) < p).astype(int), models=["a", "b", "c"])
    >>> 0 < rep.flakiness[0]["unstable_share"] < 1, rep.snr > 0
    (True, True)
    """
    from .._core.validation import check_alpha_power

    level = check_confidence_level(confidence_level)
    alpha, power = check_alpha_power(alpha, power)
    top = check_int_at_least(top, "top", 0)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    rs = as_run_scores(data, models=models, min_runs=2, run=run)
    binary = rs.binary
    matched = rs.matched(run_pairing)
    ms = crossed_mean_squares(rs.blocks)
    var = decomposition(rs, ms, level, "adjacent", matched)
    flak, items = _flakiness(rs, binary, level, top)
    df_run = ms.runs - 1.0
    pooled = float(np.sum(df_run * ms.ms_run) / np.sum(df_run)) / rs.n  # Var of one run's score (items fixed)
    half_level = 1.0 - (1.0 - level) / 2.0  # the error split between the spread and the noise (Bonferroni)
    lo_v, hi_v = chi2_variance_interval(pooled, float(np.sum(df_run)), half_level)
    signal = float(np.ptp(ms.mean))
    signal_lo, signal_hi = _signal_interval(rs, ms, half_level, matched)
    noise_sd = float(np.sqrt(pooled))
    snr = signal / noise_sd if noise_sd > 0 else float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        snr_ci = (_ratio(signal_lo, float(np.sqrt(hi_v))), _ratio(signal_hi, float(np.sqrt(lo_v))))
    from .._kernel.quantiles import k_constant

    ses = np.array([p["se"] for p in var.pairs])
    dfs = np.array([p["df"] for p in var.pairs])
    k = np.asarray(k_constant(alpha, power, "two-sided", dfs), dtype=float)  # t quantiles, as the run regime's MDE
    mde = float(np.median(np.sqrt(k) * ses)) if ses.size else float("nan")
    resolvable = signal / mde + 1.0 if mde > 0 else float("inf")
    use_templates = (rs.runs_by == "template") if templates is None else bool(templates)
    tmpl = _templates(rs, level, n_resamples, as_rng(rng)) if use_templates else None
    if use_templates and tmpl is None and templates:
        msg = "templates=True needs every model run on the same templates (the same run labels), at least 2"
        raise ValueError(msg)
    return NoiseReport(models=list(rs.models), n_items=rs.n, runs=rs.runs, binary=binary, variance=var,
                       flakiness=flak, flaky_items=items, signal=signal, noise=noise_sd, snr=snr, snr_ci=snr_ci,
                       resolvable_models=resolvable, templates=tmpl, confidence_level=level, runs_by=rs.runs_by)
