"""Betting confidence sequences on a live pair and a live leaderboard (Waudby-Smith & Ramdas 2024):
the monitor against the capital process written from the paper, time-uniform type-I error and
coverage by vectorised simulation, one verdict (decided exactly when the sequence excludes 0), the
e-BH false discovery rate at a data-dependent stopping time with betting e-values, and how much
tighter betting is than the mixtures on the designs it replaces them in."""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_power as lp
from llm_power._kernel.betting import BettingSequence, bets, betting_bound

ALPHA = 0.05


def _log_capitals(d: np.ndarray, w: float, alpha: float, horizon: int, m: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """log K+_t(m), log K-_t(m) along the last axis, for differences ``d`` in [-w, w] (WSR 2024,
    predictable plug-in bets tuned for ``horizon`` values, capped at 1/2, each side at alpha/2):
    y = (d + w) / 2w; mu_i = (1/2 + sum_{j<=i} y_j) / (i + 1);
    s2_i = (1/4 + sum_{j<=i} (y_j - mu_{j-1})^2) / (i + 1);
    lambda_i = min(1/2, sqrt(2 log(2/alpha) / (s2_{i-1} horizon)));
    K+-_t = prod_{i<=t} (1 +- lambda_i (y_i - (m + w) / 2w)).
    """
    y = (d + w) / (2 * w)
    i = np.arange(1, y.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(y, axis=-1)) / (i + 1)
    prev_mu = np.concatenate([np.full(y.shape[:-1] + (1,), 0.5), mu[..., :-1]], axis=-1)
    s2 = (0.25 + np.cumsum((y - prev_mu) ** 2, axis=-1)) / (i + 1)
    prev_s2 = np.concatenate([np.full(y.shape[:-1] + (1,), 0.25), s2[..., :-1]], axis=-1)
    lam = np.minimum(0.5, np.sqrt(2 * math.log(2 / alpha) / (prev_s2 * horizon)))
    y0 = (m + w) / (2 * w)
    return np.cumsum(np.log1p(lam * (y - y0)), axis=-1), np.cumsum(np.log1p(-lam * (y - y0)), axis=-1)


def _paired(rng: np.random.Generator, shape: tuple[int, ...], design: str, delta: float) -> tuple[np.ndarray, ...]:
    """(a, b) per-item scores: 0/1 with a share of discordant items, or graded scores in [0, 1]."""
    if design.startswith("binary"):
        disc = float(design.split("-")[1])
        a = (rng.random(shape) < 0.7).astype(float)
        flip = rng.random(shape) < disc
        win = (rng.random(shape) < 0.5 + delta / (2 * disc)).astype(float)
        return np.where(flip, win, a), np.where(flip, 1 - win, a)
    z = rng.normal(0.6, 0.15, shape)
    return (np.clip(z + rng.normal(delta / 2, 0.1, shape), 0, 1), np.clip(z + rng.normal(-delta / 2, 0.1, shape), 0, 1))


def test_extend_is_one_update_per_value() -> None:
    rng = np.random.default_rng(0)
    x = np.clip(rng.uniform(-1, 1, 700) * (rng.random(700) < 0.4) + 0.05, -1, 1)
    one = BettingSequence(-1, 1, alpha_lower=0.02, alpha_upper=0.03, horizon=300, null=0.0)
    many = BettingSequence(-1, 1, alpha_lower=0.02, alpha_upper=0.03, horizon=300, null=0.0)
    for v in x:
        one.update(float(v))
    cuts = np.sort(rng.choice(np.arange(1, 700), 6, replace=False))
    for part in np.split(x, cuts):
        many.extend(part)
    assert one.bounds() == many.bounds()
    assert one.null_e_value() == pytest.approx(many.null_e_value(), rel=1e-10)
    # a drift (300 differences of +1, then 300 of -1) empties the sequence: its bounds still do not
    # depend on the batching nor on keeping every capital, and stay off the rejected null
    drift = np.r_[np.ones(300), -np.ones(300)]
    seqs = [BettingSequence(-1, 1, alpha_lower=0.025, alpha_upper=0.025, horizon=1000, null=0.0, track_all=t)
            for t in (False, False, True)]
    for v in drift:
        seqs[0].update(float(v))
    seqs[1].extend(drift)
    seqs[2].extend(drift)
    assert seqs[0].bounds() == seqs[1].bounds() == seqs[2].bounds() and seqs[0].bounds()[0] > 0
    with pytest.raises(ValueError, match="must be a candidate of the grid"):
        BettingSequence(-1, 1, alpha_lower=0.025, alpha_upper=0.025, horizon=10, null=0.0, grid=2000)
    with pytest.raises(ValueError, match="outside the sequence's range"):
        many.extend(np.array([0.0, 1.5]))


@pytest.mark.parametrize("design", ["binary-0.25", "graded"])
def test_monitor_equals_the_capital_process_of_the_paper(design: str) -> None:
    """e-value max(K+, K-)/2 at 0 (at most the average of two test martingales), the first item where either capital reaches 2/alpha (the decision)
    and its side, and the sequence: the running intersection of the batch betting bounds (bisection,
    another code path), conservative by at most the grid's spacing."""
    rng = np.random.default_rng(1)
    for rep in range(12):
        delta = (0.0, 0.03, -0.05)[rep % 3]
        a, b = _paired(rng, (1500,), design, delta)
        mon = lp.SequentialMonitor(tuned_for=800, method="betting")
        cuts = np.sort(rng.choice(np.arange(1, 1500), 9, replace=False))
        for xa, xb in zip(np.split(a, cuts), np.split(b, cuts), strict=True):
            state = mon.update(xa, xb)
        w = 1.0
        up, dn = _log_capitals(a - b, w, ALPHA, 800)
        assert state.e_value == pytest.approx(0.5 * math.exp(max(up[-1], dn[-1])), rel=1e-9)
        hit = np.flatnonzero((up >= math.log(2 / ALPHA)) | (dn >= math.log(2 / ALPHA)))
        if hit.size:
            side = "A better" if up[hit[0]] >= math.log(2 / ALPHA) else "B better"
            assert (state.decided_at, state.verdict) == (hit[0] + 1, side)
        else:
            assert (state.decided_at, state.verdict) == (None, "undecided")
        y = (a - b + w) / (2 * w)
        lam = bets(y, ALPHA / 2, 800)
        lo = 2 * w * betting_bound(y, lam, ALPHA / 2, "lower", running=True) - w
        hi = 2 * w * betting_bound(y, lam, ALPHA / 2, "upper", running=True) - w
        spacing = 2 * w / 2000
        got = state.confidence_interval()
        assert lo - spacing - 1e-9 <= got.low <= lo + 1e-9 and hi - 1e-9 <= got.high <= hi + spacing + 1e-9


@pytest.mark.parametrize("design", ["binary-0.3", "binary-0.08", "graded"])
def test_time_uniform_type_one_error_and_coverage(design: str) -> None:
    """4,000 streams of 2,000 items with equal models, looked at after every item: the chance that
    the pair is ever declared different is at most alpha + 3 MC SE; with a true gap of 3 points,
    the chance that the sequence ever excludes the true gap is too. The monitor's decisions on 100
    of the streams are the simulated ones."""
    rng = np.random.default_rng(2)
    reps, n = 4000, 2000
    tol = 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    for delta in (0.0, 0.03):
        a, b = _paired(rng, (reps, n), design, delta)
        d = a - b
        true = delta if design == "graded" else delta  # E[a - b] by construction (graded: clipping aside)
        if design == "graded":
            big_a, big_b = _paired(np.random.default_rng(99), (2_000_000,), design, delta)
            true = float(np.mean(big_a - big_b))  # the clipping moves the mean a little: measured
        up, dn = _log_capitals(d, 1.0, ALPHA, 1000, m=true)
        ever = np.mean(np.max(np.maximum(up, dn), axis=1) >= math.log(2 / ALPHA))
        assert ever <= ALPHA + tol, (delta, ever)
        if delta == 0.0:  # the package on 100 of the streams: its decisions are those of the capitals at 0
            up0, dn0 = _log_capitals(d[:100], 1.0, ALPHA, 1000, m=0.0)
            for r in range(100):
                mon = lp.SequentialMonitor(tuned_for=1000)
                state = mon.update(a[r], b[r])
                assert (state.verdict != "undecided") == bool(np.max(np.maximum(up0[r], dn0[r])) >= math.log(2 / ALPHA))


def test_one_verdict_decided_exactly_when_the_sequence_excludes_zero() -> None:
    rng = np.random.default_rng(3)
    seen = set()
    for rep in range(60):
        mon = lp.SequentialMonitor(tuned_for=500, binary=rep % 2 == 0, score_range=(0, 1))
        delta = (0.0, 0.04, -0.06)[rep % 3]
        a, b = _paired(rng, (1200,), "binary-0.2" if rep % 2 == 0 else "graded", delta)
        last = "undecided"
        for k in range(12):
            state = mon.update(a[100 * k:100 * (k + 1)], b[100 * k:100 * (k + 1)])
            lo, hi = state.confidence_interval()
            excludes = lo > 0 or hi < 0
            assert (state.verdict != "undecided") == excludes
            assert state.verdict == "undecided" or (state.verdict == "A better") == (lo > 0)
            assert last in ("undecided", state.verdict)  # sticky
            last = state.verdict
            seen.add(state.verdict)
    assert seen == {"undecided", "A better", "B better"}


def test_betting_is_tighter_than_the_mixtures() -> None:
    """At 1,000 items the betting sequence is at least 2x narrower than the mixture's on 0/1 items
    (a quarter discordant) and 4x on graded ones, and it decides a 4-point graded gap within 2,000
    items in most streams where the mixture (Hoeffding's variance proxy) decides none."""
    rng = np.random.default_rng(4)
    for design, ratio in (("binary-0.25", 2.0), ("graded", 4.0)):
        width = {"betting": [], "mixture": []}
        decided = {"betting": 0, "mixture": 0}
        for _ in range(30):
            a, b = _paired(rng, (2000,), design, 0.04)
            for method in width:
                mon = lp.SequentialMonitor(tuned_for=1000, method=method)
                lo, hi = mon.update(a[:1000], b[:1000]).confidence_interval()
                width[method].append(hi - lo)
                decided[method] += mon.update(a[1000:], b[1000:]).verdict == "A better"
        assert np.mean(width["mixture"]) > ratio * np.mean(width["betting"]), design
        if design == "graded":
            assert decided["betting"] >= 27 and decided["mixture"] == 0


def test_e_bh_fdr_with_betting_e_values_under_optional_stopping() -> None:
    """Six models (four equal, 15 pairs of which 6 null), 600 leaderboards, a look after every
    batch of 50 items (40 looks), stopping at the first look with a discovery: the false discovery
    rate of e-BH on the pairs' betting e-values is at most q + 3 MC SE, and the monitor's
    discoveries are those e-BH finds on the simulated e-values."""
    truth = np.array([0.7, 0.7, 0.7, 0.7, 0.64, 0.58])
    reps, q, batch, looks = 600, 0.1, 50, 40
    i, j = np.triu_indices(truth.size, 1)
    null = truth[i] == truth[j]
    rng = np.random.default_rng(5)
    x = (rng.random((reps, batch * looks, truth.size)) < truth).astype(float)
    d = np.moveaxis(x[:, :, i] - x[:, :, j], 1, 2)  # (reps, pairs, items)
    up, dn = _log_capitals(d, 1.0, q, 1000)
    e = 0.5 * np.exp(np.minimum(np.maximum(up, dn), 700))[:, :, batch - 1::batch]
    fdp, made = np.zeros(reps), np.zeros(reps)
    for rep in range(reps):
        for t in range(looks):
            found = lp.e_bh(e[rep, :, t], q=q)
            if found.any() or t == looks - 1:
                fdp[rep], made[rep] = np.sum(found & null) / max(found.sum(), 1), found.sum()
                break
    se = max(float(np.std(fdp)), math.sqrt(q * (1 - q))) / math.sqrt(reps)
    assert float(np.mean(fdp)) <= q + 3 * se
    assert np.mean(made > 0) > 0.9
    names = [f"m{k}" for k in range(truth.size)]
    for rep in range(3):
        board = lp.LeaderboardMonitor(names, correction="e-bh", alpha=q, tuned_for=1000)
        for t in range(looks):
            state = board.update(x[rep, batch * t:batch * (t + 1)])
        found = lp.e_bh(e[rep, :, -1], q=q)
        keys = [(names[a], names[b]) for a, b in zip(i, j, strict=True)]
        assert [state.pairs[k].e_value for k in keys] == pytest.approx(e[rep, :, -1], rel=1e-9)
        assert {k for k, f in zip(keys, found, strict=True) if f} == {
            (a, b) if (a, b) in state.pairs else (b, a) for a, b in state.decided}
        # e-BY: every pair's interval at q x discoveries / pairs from the current capitals -- it
        # leaves out 0 exactly for the discoveries; its bounds equal the capitals of the paper
        level = q * max(found.sum(), 1) / len(keys)
        for k, f, pair in zip(keys, found, range(len(keys)), strict=True):
            lo, hi = state.pairs[k].confidence_interval()
            assert (lo > 0 or hi < 0) == bool(f)
            grid = np.linspace(-1, 1, 501)[::10]  # every 10th candidate of the monitor's grid
            up_m, dn_m = (np.array([_log_capitals(d[rep, pair], 1.0, q, 1000, m=g)[side][-1] for g in grid])
                          for side in (0, 1))
            inside = np.maximum(up_m, dn_m) < math.log(2 / level)
            assert np.array_equal((grid > lo) & (grid < hi), inside)


def test_leaderboard_verdicts_agree_with_their_intervals_on_drifting_streams() -> None:
    """e-BH discovers a pair from the side of its larger capital, which the plain mean need not
    share (A right on the first 300 items and wrong on the rest, B the reverse: mean difference 0 or
    negative, the evidence on A's side): the verdict and its direction are the interval's, on these
    and on random leaderboards."""
    a, b = np.r_[np.ones(300), np.zeros(310)], np.r_[np.zeros(300), np.ones(310)]
    boards = [np.c_[a[:600], b[:600], np.zeros(600)], np.c_[a, b, np.zeros(610)]]
    rng = np.random.default_rng(6)
    boards += [(rng.random((800, 5)) < rng.uniform(0.5, 0.8, 5)).astype(float) for _ in range(20)]
    seen = set()
    for x in boards:
        names = [f"m{k}" for k in range(x.shape[1])]
        board = lp.LeaderboardMonitor(names, correction="e-bh", alpha=0.05, tuned_for=1000)
        for part in np.array_split(x, 4):
            state = board.update(part)
            for (m1, m2), st in state.pairs.items():
                lo, hi = st.confidence_interval()
                assert (st.verdict != "undecided") == (lo > 0 or hi < 0)
                if st.verdict != "undecided":
                    assert (st.verdict == "A better") == (lo > 0)
                    assert ((m1, m2) if lo > 0 else (m2, m1)) in state.decided
                seen.add(st.verdict)
    first = state = None
    board = lp.LeaderboardMonitor(["A", "B", "C"], correction="e-bh", tuned_for=1000)
    state = board.update(boards[0])
    first = state.pairs[("A", "B")]
    assert first.delta == 0 and first.verdict == "A better" and ("A", "B") in state.decided
    assert seen == {"undecided", "A better", "B better"}
