"""noise() as it was before issue 43 (part 4), kept as the reference of the fast one: the same report --
flakiness, the most unstable items, signal-to-noise and its interval, the templates' tau interval -- on
random run scores (0/1 and graded, with and without templates, ties in instability, identical and nearly
identical models), equal to 1e-12 and, for counts, labels and orders, exactly.

The old functions below are copied verbatim from src/llm_power/runs/_noise.py at d520675 (only renamed,
the relative imports made absolute): a Python list of every unstable (model, item) cell sorted for the top
ones, an items x pairs array of differences for every pair's variance, the matched pairs' per-run
differences built pair by pair (``gap_run_variance`` with blocks), an items x templates x pairs array for
the templates' gaps and the flipping pairs in a double loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import llm_power as lp
from llm_power._core.typing import SeedLike
from llm_power._core.validation import as_rng, check_confidence_level, check_int_at_least
from llm_power._kernel.binomial import wilson_bounds
from llm_power._kernel.crossed import chi2_variance_interval, crossed_mean_squares, gap_run_variance
from llm_power._kernel.quantiles import interval_half_width, upper_quantile
from llm_power.matrix import RunScores
from llm_power.runs._noise import NoiseReport, _kendall, _ratio, _tau_bounds
from llm_power.runs._variance import as_run_scores, run_variance


def _old_flakiness(rs: Any, binary: bool, level: float, top: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    per_model, candidates = [], []
    for name, blk in zip(rs.models, rs.blocks, strict=True):
        r = blk.shape[1]
        unstable = np.ptp(blk, axis=1) > 0
        if binary:
            c = blk.sum(axis=1)
            flip = 2.0 * c * (r - c) / (r * (r - 1.0))  # unbiased for 2 p (1 - p): two runs disagree
        else:
            flip = blk.var(axis=1, ddof=1)  # within-item (item x run) variance
        n = flip.size
        mean = float(flip.mean())
        half = float(interval_half_width(flip.std(ddof=1) / np.sqrt(n), level, "two-sided", n - 1)) if n > 1 else np.nan
        row = {"model": name, "runs": int(r), "unstable": int(unstable.sum()), "unstable_share": float(unstable.mean()),
               "total_agreement": float(1.0 - unstable.mean()), "flip_rate": mean,
               "flip_rate_ci": (max(mean - half, 0.0), mean + half)}
        if binary:
            row["best_possible"] = float((blk.max(axis=1) == 1).mean())
            row["worst_possible"] = float((blk.min(axis=1) == 1).mean())
        per_model.append(row)
        for k in np.flatnonzero(unstable):
            candidates.append((float(flip[k]), name, k, blk[k]))
    candidates.sort(key=lambda t: -t[0])
    items = []
    for flip, name, k, row_scores in candidates[:top]:
        r = row_scores.size
        right = float(row_scores.sum())
        item = {"model": name, "item": rs.items[k], "runs": int(r), "flip_rate": flip,
                "mean": float(row_scores.mean())}
        if binary:
            lo, hi = wilson_bounds(np.array([right]), np.array([float(r)]), level)
            item.update(right=int(right), ci=(float(lo[0]), float(hi[0])))
        else:
            item.update(right=f"{row_scores.min():.3g}..{row_scores.max():.3g}", ci=None)
        items.append(item)
    return per_model, items


def _old_max_t_critical(cube: np.ndarray, gaps: np.ndarray, se: np.ndarray, iu: tuple[np.ndarray, np.ndarray], *,
                    level: float, n_boot: int, gen: np.random.Generator) -> float:
    """The ``level`` quantile of max over (template, pair) of |gap* - gap| / se in an items bootstrap:
    the critical value of simultaneous intervals gap +- c se for every template's pairwise gaps.
    Resamples are drawn as multinomial item counts, in blocks (a resample is a weighted mean of the items).
    """
    n = cube.shape[0]
    flat = cube.reshape(n, -1)  # items x (templates * models)
    usable = se > 0
    stats = np.empty(n_boot)
    block = max(1, min(n_boot, (1 << 22) // max(n, 1)))
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        counts = gen.multinomial(n, np.full(n, 1.0 / n), size=size).astype(float)  # resamples x items
        means = (counts @ flat / n).reshape(size, *cube.shape[1:])  # resamples x templates x models
        star = means[:, :, iu[0]] - means[:, :, iu[1]]
        with np.errstate(divide="ignore", invalid="ignore"):
            dev = np.where(usable, np.abs(star - gaps) / np.where(usable, se, 1.0), 0.0)
        stats[start:start + size] = dev.reshape(size, -1).max(axis=1)
    return float(np.quantile(stats, level))


def _old_templates(rs: Any, level: float, n_boot: int, gen: np.random.Generator) -> dict[str, Any] | None:
    """Template sensitivity: spreads, the observed tau-a and an interval for the tau-a of the true rankings."""
    labels = rs.run_labels[0]
    if any(lab != labels for lab in rs.run_labels) or len(labels) < 2 or rs.n_models < 2:
        return None
    cube = np.stack(rs.blocks, axis=2)  # items x templates x models
    per = cube.mean(axis=0)  # templates x models
    tau = _kendall(per)
    m = rs.n_models
    iu = np.triu_indices(m, 1)
    diffs = cube[:, :, iu[0]] - cube[:, :, iu[1]]  # items x templates x pairs: paired over the same items
    gaps = diffs.mean(axis=0)
    se = diffs.std(axis=0, ddof=1) / np.sqrt(rs.n)
    crit = _old_max_t_critical(cube, gaps, se, iu, level=level, n_boot=n_boot, gen=gen)
    # a sign is settled where the simultaneous interval excludes 0 (an exactly known nonzero gap, se = 0, too)
    known = np.where(np.abs(gaps) > crit * se, np.sign(gaps), 0.0)
    lo, hi = _tau_bounds(known)
    flips = []
    for a in range(m):
        for b in range(a + 1, m):
            wins = per[:, a] > per[:, b]
            losses = per[:, a] < per[:, b]
            if wins.any() and losses.any():
                flips.append({"model_a": rs.models[a], "model_b": rs.models[b],
                              "share_a_ahead": float(wins.mean()), "templates_a_ahead": [labels[k] for k in
                                                                                         np.flatnonzero(wins)]})
    spread = [{"model": name, "min": float(per[:, k].min()), "max": float(per[:, k].max()),
               "spread": float(np.ptp(per[:, k])), "sd": float(per[:, k].std(ddof=1))}
              for k, name in enumerate(rs.models)]
    return {"templates": list(labels), "scores": per.tolist(), "spread": spread, "kendall_tau": tau,
            "kendall_tau_ci": (lo, hi), "settled_share": float(np.mean(known != 0)), "critical_value": crit,
            "n_resamples": n_boot, "flipping_pairs": flips}


def _old_signal_interval(rs: Any, ms: Any, level: float, matched: bool) -> tuple[float, float]:
    """Simultaneous (Bonferroni) bounds at ``level`` of the true spread max_m mu_m - min_m mu_m, mu_m the
    score expected over items and runs: every pair's gap on the run test's variance and df (as
    diagnose's run regime), the spread at least the largest distance of a pair's interval from 0 and at
    most the largest |bound|.
    """
    m = rs.n_models
    if m < 2:
        return 0.0, 0.0
    i, j = np.triu_indices(m, 1)
    d = ms.item_means[:, i] - ms.item_means[:, j]
    pv = gap_run_variance(d.var(axis=0, ddof=1), rs.n, ms, i, j, rs.blocks if matched else None)
    tail = (1.0 - level) / (2.0 * i.size)
    half = np.asarray(upper_quantile(tail, pv.df)) * np.sqrt(pv.variance)
    gap = d.mean(axis=0)
    low, high = gap - half, gap + half
    near = np.where(low > 0, low, np.where(high < 0, -high, 0.0))
    return float(np.max(near)), float(np.max(np.maximum(np.abs(low), np.abs(high))))


def old_noise(data: Any, *, models: Any = None, run: str = "run", templates: bool | None = None, top: int = 10,  # noqa: PLR0913
          confidence_level: float = 0.95, alpha: float = 0.05, power: float = 0.8, n_resamples: int = 1000,
          run_pairing: str = "auto", rng: SeedLike = None) -> NoiseReport:
    """The old noise(), as it was before issue 43."""
    from llm_power._core.validation import check_alpha_power

    level = check_confidence_level(confidence_level)
    alpha, power = check_alpha_power(alpha, power)
    top = check_int_at_least(top, "top", 0)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 1)
    rs = as_run_scores(data, models=models, min_runs=2, run=run)
    binary = rs.binary
    var = run_variance(rs, confidence_level=level, run_pairing=run_pairing)
    ms = crossed_mean_squares(rs.blocks)
    flak, items = _old_flakiness(rs, binary, level, top)
    df_run = ms.runs - 1.0
    pooled = float(np.sum(df_run * ms.ms_run) / np.sum(df_run)) / rs.n  # Var of one run's score (items fixed)
    half_level = 1.0 - (1.0 - level) / 2.0  # the error split between the spread and the noise (Bonferroni)
    lo_v, hi_v = chi2_variance_interval(pooled, float(np.sum(df_run)), half_level)
    signal = float(np.ptp(ms.mean))
    signal_lo, signal_hi = _old_signal_interval(rs, ms, half_level, rs.matched(run_pairing))
    noise_sd = float(np.sqrt(pooled))
    snr = signal / noise_sd if noise_sd > 0 else float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        snr_ci = (_ratio(signal_lo, float(np.sqrt(hi_v))), _ratio(signal_hi, float(np.sqrt(lo_v))))
    from llm_power._kernel.quantiles import k_constant

    ses = np.array([p["se"] for p in var.pairs])
    dfs = np.array([p["df"] for p in var.pairs])
    k = np.asarray(k_constant(alpha, power, "two-sided", dfs), dtype=float)  # t quantiles, as the run regime's MDE
    mde = float(np.median(np.sqrt(k) * ses)) if ses.size else float("nan")
    resolvable = signal / mde + 1.0 if mde > 0 else float("inf")
    use_templates = (rs.runs_by == "template") if templates is None else bool(templates)
    tmpl = _old_templates(rs, level, n_resamples, as_rng(rng)) if use_templates else None
    if use_templates and tmpl is None and templates:
        msg = "templates=True needs every model run on the same templates (the same run labels), at least 2"
        raise ValueError(msg)
    return NoiseReport(models=list(rs.models), n_items=rs.n, runs=rs.runs, binary=binary, variance=var,
                       flakiness=flak, flaky_items=items, signal=signal, noise=noise_sd, snr=snr, snr_ci=snr_ci,
                       resolvable_models=resolvable, templates=tmpl, confidence_level=level, runs_by=rs.runs_by)


# ------------------------------------------------------------------------------------------ the tests

def _same(new: Any, old: Any, where: str = "") -> None:
    """Equal: floats to 1e-12 relative (1e-15 absolute near 0), everything else exactly."""
    if isinstance(old, dict):
        assert isinstance(new, dict) and list(new) == list(old), where
        for k in old:
            _same(new[k], old[k], f"{where}.{k}")
    elif isinstance(old, (list, tuple)):
        assert type(new) is type(old) and len(new) == len(old), where
        for k, (a, b) in enumerate(zip(new, old, strict=True)):
            _same(a, b, f"{where}[{k}]")
    elif isinstance(old, np.ndarray):
        assert new.dtype == old.dtype and new.shape == old.shape, where
        np.testing.assert_allclose(new, old, rtol=1e-12, atol=1e-15, err_msg=where)
    elif isinstance(old, float):
        assert isinstance(new, float), where
        assert new == pytest.approx(old, rel=1e-12, abs=1e-15, nan_ok=True), where
    else:
        assert type(new) is type(old) and new == old, where


def _same_report(new: NoiseReport, old: NoiseReport) -> None:
    for field in ("models", "n_items", "runs", "binary", "flakiness", "flaky_items", "signal", "noise", "snr",
                  "snr_ci", "resolvable_models", "templates", "confidence_level", "runs_by"):
        _same(getattr(new, field), getattr(old, field), field)
    _same(new.variance.to_dict(), old.variance.to_dict(), "variance")


def _scores(seed: int, *, n: int, m: int, r: int, binary: bool, templates: bool) -> RunScores:
    """Random run scores: models of spread abilities, items of spread difficulty, a template effect shared in
    part by the models; model 1 a copy of model 0 (their pair cancels exactly) and model 2 model 0 with one
    score changed (nearly cancels). Graded scores on a coarse grid, so flip rates tie."""
    gen = np.random.default_rng(seed)
    ability, difficulty = gen.normal(0, 0.6, m), gen.normal(0, 1.5, n)
    shift = gen.normal(0, 0.3, (r, 1)) + gen.normal(0, 0.1, (r, m))
    logit = ability[None, None, :] - difficulty[:, None, None] + (shift if templates else 0.0 * shift)[None]
    p = 1.0 / (1.0 + np.exp(-logit))
    y = (gen.random((n, r, m)) < p).astype(float) if binary else np.round(4 * gen.beta(4 * p + 0.1, 4 * (1 - p) + 0.1)) / 4
    y[:, :, 1] = y[:, :, 0]
    y[:, :, 2] = y[:, :, 0]
    y[0, 0, 2] = 1.0 - y[0, 0, 0] if binary else (y[0, 0, 0] + 0.25) % 1.25
    return RunScores.from_array(y, models=[f"m{k}" for k in range(m)], runs_by="template" if templates else "seed")


CASES = [(binary, templates, pairing) for binary in (True, False) for templates in (False, True)
         for pairing in ("auto", "independent")]


@pytest.mark.parametrize(("binary", "templates", "pairing"), CASES)
def test_noise_equals_the_old_implementation(binary: bool, templates: bool, pairing: str) -> None:
    """The fast noise() gives the old one's report on the same seed: 0/1 and graded scores, runs as seeds and
    as templates shared by every model (matched or independent pairs), ties in the flip rates."""
    for seed in range(3):
        rs = _scores(seed, n=80, m=7, r=4, binary=binary, templates=templates)
        kw: dict[str, Any] = {"n_resamples": 200, "run_pairing": pairing, "top": 12}
        new, old = lp.noise(rs, rng=seed, **kw), old_noise(rs, rng=seed, **kw)
        _same_report(new, old)
        flips = [it["flip_rate"] for it in new.flaky_items]
        assert len(set(flips)) < len(flips)  # the top items tie (broken by model, then item, as before)


@pytest.mark.parametrize("top", [0, 1, 3, 10_000])
def test_flaky_items_equal_the_old_sort_for_every_top(top: int) -> None:
    """Ties at the cut (flip rates take R/2 + 1 values with 0/1 scores), none listed, all listed."""
    rs = _scores(5, n=60, m=5, r=3, binary=True, templates=False)
    level = 0.9
    from llm_power.runs._noise import _flakiness

    _same(_flakiness(rs, True, level, top), _old_flakiness(rs, True, level, top))


def test_noise_equals_the_old_one_with_many_models_and_templates() -> None:
    """More pairs than items (40 models, 780 pairs, 30 items, 6 templates), every score 0/1: the cross-product
    path of every pair and the bootstrap's per-model loop against the items x pairs arrays."""
    rs = _scores(11, n=30, m=40, r=6, binary=True, templates=True)
    _same_report(lp.noise(rs, rng=3, n_resamples=100), old_noise(rs, rng=3, n_resamples=100))


def test_pair_kernels_equal_the_direct_differences() -> None:
    """pair_difference_variance and matched_pair_mean_squares against the differences themselves, with a pair
    of identical models (exactly 0, as directly) and one nearly identical (recomputed directly)."""
    from llm_power._kernel.crossed import matched_pair_run_variance
    from llm_power._kernel.crossed_pairs import matched_pair_mean_squares, pair_difference_variance

    rs = _scores(7, n=50, m=6, r=5, binary=False, templates=True)
    i, j = np.triu_indices(rs.n_models, 1)
    ms = crossed_mean_squares(rs.blocks)
    direct = (ms.item_means[:, i] - ms.item_means[:, j]).var(axis=0, ddof=1)
    fast = pair_difference_variance(ms.item_means, i, j)
    np.testing.assert_allclose(fast, direct, rtol=1e-12, atol=0)
    assert fast[0] == 0.0  # models 0 and 1 are the same
    ms_run, ms_res = matched_pair_mean_squares(rs.blocks, i, j)
    pv = matched_pair_run_variance(direct, rs.n, rs.blocks, i, j)
    np.testing.assert_allclose(ms_run, pv.ms_run_matched, rtol=1e-12, atol=0)
    np.testing.assert_allclose(ms_res, pv.s2_res, rtol=1e-12, atol=0)
    assert ms_run[0] == 0.0 and ms_res[0] == 0.0


def test_pair_kernels_recompute_the_pairs_that_cancel() -> None:
    """Two models 1e-6 apart: from the Gram matrix alone their variance would be off by ~1e-4 relative (and
    their residual mean square by ~4e-4); recomputed directly, they equal the differences themselves."""
    from llm_power._kernel.crossed import matched_pair_run_variance
    from llm_power._kernel.crossed_pairs import matched_pair_mean_squares, pair_difference_variance

    gen = np.random.default_rng(0)
    x = gen.normal(0, 1, (3000, 3))
    x[:, 1] = x[:, 0] + 1e-6 * gen.normal(0, 1, 3000)
    i, j = np.triu_indices(3, 1)
    direct = (x[:, i] - x[:, j]).var(axis=0, ddof=1)
    np.testing.assert_allclose(pair_difference_variance(x, i, j), direct, rtol=1e-12, atol=0)
    blocks = [gen.normal(0, 1, (500, 4)) for _ in range(3)]
    blocks[1] = blocks[0] + 1e-6 * gen.normal(0, 1, (500, 4))
    pv = matched_pair_run_variance(direct, 500, blocks, i, j)
    ms_run, ms_res = matched_pair_mean_squares(blocks, i, j)
    np.testing.assert_allclose(ms_run, pv.ms_run_matched, rtol=1e-12, atol=0)
    np.testing.assert_allclose(ms_res, pv.s2_res, rtol=1e-12, atol=0)
