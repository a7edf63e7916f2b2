"""Sequential subsets. Oracles: the without-replacement capital of Waudby-Smith & Ramdas (2020),
computed here term by term (the bet against the mean of the values not yet drawn); exactness at
the last item; batching invariance; and validity by simulation on real MMLU-Pro results (random
orders of a model's 12,032 items, looks every 100 items): the sequence misses the full-benchmark
mean anywhere on the path in at most alpha + 3 SE of the streams."""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_power as lp
from llm_power._kernel.betting import BettingSequence, bets


def test_without_replacement_capital_is_the_papers():
    rng = np.random.default_rng(0)
    big_n, n, grid = 50, 30, 101
    pop = (rng.random(big_n) < 0.6).astype(float)
    y = pop[rng.permutation(big_n)[:n]]
    seq = BettingSequence(0.0, 1.0, alpha_lower=0.05, alpha_upper=0.05, horizon=n, grid=grid, track_all=True,
                          population=big_n)
    seq.extend(y)
    lam = bets(y, 0.05, n)
    checked = 0
    for k in range(grid):
        m = k / (grid - 1)
        log_k, low_out, high_out = 0.0, False, False
        for i in range(n):
            m_i = (big_n * m - y[:i].sum()) / (big_n - i)  # the mean of the values not yet drawn
            low_out |= m_i < 0
            high_out |= m_i > 1
            log_k += math.log1p(lam[i] * (y[i] - m_i))
        if low_out:  # the values drawn already sum past N m: rejected from below, outright
            assert seq.log_up[k] == math.inf
        elif high_out:  # the rest would have to average above 1
            assert seq.log_down[k] == math.inf
        else:
            checked += 1
            assert seq.log_up[k] == pytest.approx(log_k, rel=1e-9, abs=1e-9)
    assert checked > 20


def test_the_last_item_gives_the_mean_and_batching_changes_nothing():
    rng = np.random.default_rng(1)
    pop = rng.random(400)
    order = pop[rng.permutation(400)]
    one = lp.SubsetSequence(400, target="benchmark")
    for v in order:
        res_one = one.add([v])
    many = lp.SubsetSequence(400, target="benchmark")
    for start in range(0, 400, 37):
        res_many = many.add(order[start:start + 37])
    assert (res_one.ci.low, res_one.ci.high) == pytest.approx((res_many.ci.low, res_many.ci.high), abs=1e-12)
    assert res_one.ci.low == res_one.ci.high == pytest.approx(pop.mean())
    at_once, in_fours = lp.SubsetSequence(400, target="benchmark"), lp.SubsetSequence(400, target="benchmark")
    for start in range(0, 200, 50):
        res = in_fours.add(order[start:start + 50])
    assert res.ci == at_once.add(order[:200]).ci  # a look's interval: the grid's, bit for bit
    assert res_one.stop
    with pytest.raises(ValueError, match="benchmark of 400"):
        one.add([0.5])


def test_a_decided_verdict_is_final_and_a_narrow_interval_stops():
    rng = np.random.default_rng(2)
    pop = (rng.random(5000) < 0.8).astype(float)
    seq = lp.SubsetSequence(5000, against=0.7, target="benchmark")
    first = None
    for start in range(0, 5000, 50):
        res = seq.add(pop[start:start + 50])
        if res.decided and first is None:
            first = res.n
        if first is not None:
            assert res.decided and res.verdict == "above 0.7"
    assert first is not None and first < 1000
    seq = lp.SubsetSequence(5000, half_width=0.05)
    res = seq.add(pop[:50])
    while not res.stop:
        res = seq.add(pop[res.n:res.n + 50])
    assert (res.ci.high - res.ci.low) / 2 <= 0.05 and not res.decided and res.verdict == ""


@pytest.mark.parametrize("target", ["benchmark", "population"])
def test_anytime_coverage_on_real_results(target):
    """400 random orders of one MMLU-Pro model's items (benchmark target: the full-benchmark mean;
    population target: the same mean, which it must cover too, being wider), 20 looks each."""
    from llm_power.io.demo import load_mmlu_pro

    d = load_mmlu_pro()
    y = np.asarray(d.scores, dtype=float)[:, 7]
    truth = y.mean()
    rng = np.random.default_rng(3)
    streams, missed = 400, 0
    for _ in range(streams):
        seq = lp.SubsetSequence(y.size, confidence_level=0.9, target=target, horizon=1000)
        order = y[rng.permutation(y.size)]
        out = False
        for start in range(0, 2000, 100):
            res = seq.add(order[start:start + 100])
            out |= not (res.ci.low <= truth <= res.ci.high)
        missed += out
    assert missed / streams <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / streams)


@pytest.mark.slow
def test_anytime_coverage_of_many_streams_and_a_tight_population():
    """1,000 streams from a 600-item benchmark run to the end, a look after every 5 items: the
    without-replacement sequence closes in on the mean and never misses it in more than
    alpha + 3 SE of the streams, even as it gets narrow."""
    rng = np.random.default_rng(4)
    pop = (rng.random(600) < rng.beta(2, 2, 600)).astype(float)
    streams, missed, widths = 1000, 0, []
    for _ in range(streams):
        seq = lp.SubsetSequence(600, confidence_level=0.9, target="benchmark", horizon=300)
        order = pop[rng.permutation(600)]
        out = False
        for k in range(0, 600, 5):
            res = seq.add(order[k:k + 5])
            out |= not (res.ci.low <= pop.mean() <= res.ci.high)
            if k == 495:
                widths.append(res.ci.high - res.ci.low)
        missed += out
    assert missed / streams <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / streams)
    iid = BettingSequence(0.0, 1.0, alpha_lower=0.05, alpha_upper=0.05, horizon=300)
    iid.extend(pop[rng.permutation(600)][:500])
    assert np.median(widths) < 0.8 * (iid.bounds()[1] - iid.bounds()[0])  # sampling without replacement pays


def test_sequence_argument_errors():
    with pytest.raises(ValueError, match="outside"):
        lp.SubsetSequence(100, against=2.0)
    with pytest.raises(ValueError, match="half_width"):
        lp.SubsetSequence(100, half_width=0.0)
    with pytest.raises(ValueError, match="target"):
        lp.SubsetSequence(100, target="all")
    with pytest.raises(ValueError, match="outside the sequence's range"):
        lp.SubsetSequence(100).add([1.5])
