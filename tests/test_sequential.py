"""Anytime-valid tests: time-uniform type-I error by simulation, and the streaming monitor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from llm_power import SequentialMonitor, anytime_critical_value
from llm_power.sequential import beta_mixture_log_evalue, normal_mixture_boundary, normal_mixture_log_evalue

ALPHA = 0.05


def test_critical_value_is_the_minimum_over_the_mixture_ratio():
    z, r = anytime_critical_value(ALPHA)
    grid = np.exp(np.linspace(-8, 3, 20001))
    brute = np.sqrt((1 + grid) * np.log((1 + grid) / (grid * ALPHA**2)))
    assert z == pytest.approx(brute.min(), rel=1e-6)
    assert z > special.ndtri(1 - ALPHA / 2)  # the price of looking at any time
    v = 1000.0
    assert normal_mixture_boundary(v, alpha=ALPHA, rho=r * v) / math.sqrt(v) == pytest.approx(z, rel=1e-9)


def test_beta_mixture_evalue_by_direct_integration():
    from scipy import integrate

    for b, c, a in [(5, 2, 0.5), (22, 8, 5.0), (0, 7, 2.0)]:
        integrand = lambda t: t**b * (1 - t) ** c * t ** (a - 1) * (1 - t) ** (a - 1) / special.beta(a, a)  # noqa: E731
        direct = integrate.quad(integrand, 0, 1)[0] / 0.5 ** (b + c)
        assert math.exp(beta_mixture_log_evalue(b, c, a=a)) == pytest.approx(direct, rel=1e-8)


def test_normal_mixture_evalue_by_direct_integration():
    from scipy import integrate

    rho = 50.0
    for s, v in [(10.0, 100.0), (-30.0, 400.0), (0.0, 10.0)]:
        f = lambda lam: math.exp(lam * s - lam**2 * v / 2) * math.sqrt(rho / (2 * math.pi)) * math.exp(-rho * lam**2 / 2)  # noqa: E731
        direct = integrate.quad(f, -5, 5, points=[s / (v + rho)])[0]
        assert math.exp(normal_mixture_log_evalue(s, v, rho=rho)) == pytest.approx(direct, rel=1e-7)


def test_time_uniform_type_one_error_binary_e_process():
    # 4,000 streams of 2,000 items under H0 (p10 = p01 = 0.15): the chance that the e-process
    # EVER reaches 1/alpha is at most alpha (MC SE 0.0034); repeated fixed-n z tests every 50
    # items inflate it several-fold.
    rng = np.random.default_rng(60)
    reps, horizon = 4000, 2000
    u = rng.random((reps, horizon))
    d = np.where(u < 0.15, 1, np.where(u < 0.30, -1, 0))
    b = np.cumsum(d > 0, axis=1)
    c = np.cumsum(d < 0, axis=1)
    a = 0.5 * (anytime_critical_value(ALPHA)[1] * 0.3 * 1000 - 1)
    log_e = np.where(b + c > 0, beta_mixture_log_evalue(b, c, a=a), 0.0)
    ever = np.mean(np.max(log_e, axis=1) >= math.log(1 / ALPHA))
    assert ever <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    looks = np.arange(49, horizon, 50)
    m = (b + c)[:, looks]
    z = np.where(m > 0, (b - c)[:, looks] / np.sqrt(np.maximum(m, 1)), 0.0)
    naive = np.mean(np.any(np.abs(z) >= 1.96, axis=1))
    assert naive > 3 * ALPHA


def test_time_uniform_type_one_error_graded_normal_mixture():
    rng = np.random.default_rng(61)
    reps, horizon = 4000, 1500
    a = rng.beta(2, 2, size=(reps, horizon))
    b = rng.beta(2, 2, size=(reps, horizon))
    s = np.cumsum(a - b, axis=1)
    v = np.arange(1, horizon + 1) * 1.0  # variance proxy (range of scores)^2 = 1
    rho = anytime_critical_value(ALPHA)[1] * 1000
    crossed = np.any(np.abs(s) >= normal_mixture_boundary(v, alpha=ALPHA, rho=rho), axis=1)
    assert np.mean(crossed) <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_confidence_sequence_covers_uniformly():
    rng = np.random.default_rng(62)
    reps, horizon = 2000, 1000
    a = rng.beta(3, 2, size=(reps, horizon))  # mean 0.6
    b = rng.beta(2, 2, size=(reps, horizon))  # mean 0.5
    s = np.cumsum(a - b - 0.1, axis=1)
    v = np.arange(1, horizon + 1) * 1.0
    rho = anytime_critical_value(ALPHA)[1] * 500
    miss = np.any(np.abs(s) > normal_mixture_boundary(v, alpha=ALPHA, rho=rho), axis=1)
    assert np.mean(miss) <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_monitor_matches_direct_computation_and_is_valid():
    rng = np.random.default_rng(63)
    decided = 0
    reps = 400
    for r in range(reps):
        mon = SequentialMonitor(tuned_for=1000, method="mixture")
        for _ in range(10):
            x = (rng.random(100) < 0.7).astype(int)
            y = np.where(rng.random(100) < 0.6, x, (rng.random(100) < 0.7).astype(int))
            state = mon.update(x, y)
        decided += state.verdict != "undecided"
        assert state.n == 1000
        assert state.e_value == pytest.approx(math.exp(beta_mixture_log_evalue(state.b, state.c, a=mon.beta_a)))
    assert decided / reps <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_monitor_detects_a_real_gap_and_is_sticky():
    rng = np.random.default_rng(64)
    mon = SequentialMonitor(tuned_for=2000)
    states = []
    for _ in range(20):
        x = (rng.random(200) < 0.75).astype(int)
        y = np.where(rng.random(200) < 0.6, x, (rng.random(200) < 0.60).astype(int))
        states.append(mon.update(x, y))
    assert states[-1].verdict == "A better"
    first = next(s for s in states if s.verdict != "undecided")
    assert all(s.verdict == "A better" and s.decided_at == first.decided_at for s in states[states.index(first):])
    lo, hi = states[-1].confidence_interval()
    assert lo < states[-1].delta < hi


def test_monitor_graded_and_validation():
    mon = SequentialMonitor(binary=False, score_range=(0, 10))
    st = mon.update([7.5, 8.0, 6.0], [7.0, 7.5, 6.5])
    assert st.n == 3 and st.b is None
    with pytest.raises(ValueError, match=r"scores must lie in `score_range`"):
        mon.update([11.0], [5.0])
    with pytest.raises(ValueError, match=r"same number of new items"):
        mon.update([1.0, 2.0], [1.0])
    binary = SequentialMonitor()
    binary.update([1, 0], [0, 0])
    with pytest.raises(ValueError, match=r"0/1 correctness; got a graded score"):
        binary.update([0.5], [1])


@pytest.mark.parametrize("reps", [60, pytest.param(300, marks=pytest.mark.slow)])
def test_leaderboard_monitor_family_wise_error_and_power(reps):
    """The fast tier runs the first 60 of the slow tier's 300 boards (the same draws), then the power part."""
    from llm_power import LeaderboardMonitor

    rng = np.random.default_rng(65)
    any_decided = 0
    for _ in range(reps):
        board = LeaderboardMonitor(["a", "b", "c", "d"], tuned_for=1000)
        base = rng.random((1000, 1)) < 0.6  # shared item difficulty: correlated models, all equal
        x = np.where(rng.random((1000, 4)) < 0.7, base, rng.random((1000, 4)) < 0.6).astype(int)
        for k in range(5):
            state = board.update(x[200 * k:200 * (k + 1)])
        any_decided += bool(state.decided)
        assert state.alpha_per_pair == pytest.approx(ALPHA / 6)
    # P(any of the 6 pairs is ever declared different) <= alpha (Bonferroni over time-uniform tests)
    assert any_decided / reps <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    # a clearly better model is found, and agrees with the per-pair monitor
    board = LeaderboardMonitor(["x", "y", "z"], tuned_for=3000)
    for _ in range(15):
        state = board.update((rng.random((200, 3)) < [0.80, 0.70, 0.69]).astype(int))
    assert state.models[0] == "x" and ("x", "z") in state.decided and ("x", "y") in state.decided
    assert state.pairs[("x", "y")].verdict == "A better"


def test_leaderboard_monitor_input_checks():
    pd = pytest.importorskip("pandas")
    from llm_power import LeaderboardMonitor

    board = LeaderboardMonitor(["a", "b"])
    state = board.update(pd.DataFrame({"b": [1, 0], "a": [1, 1]}))  # columns by name
    assert state.n == 2 and state.means == [1.0, 0.5] and state.models == ["a", "b"]
    with pytest.raises(ValueError, match=r"must have shape \(n_new, 2\)"):
        board.update(np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"no column for model 'a'"):
        board.update(pd.DataFrame({"b": [1]}))
    with pytest.raises(ValueError, match=r"at least 2 distinct models"):
        LeaderboardMonitor(["a"])
