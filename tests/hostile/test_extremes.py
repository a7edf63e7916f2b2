"""Issue 40, extreme arguments: overflow and underflow are answers or one-line errors, never a traceback.
Each fails on 7302bb3 (OverflowError from SubsetSequence's half-width, ZeroDivisionError from the
anytime critical value below alpha = 1e-162, a range high - low of inf accepted).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_power as lp
from llm_power.sequential import anytime_critical_value


@pytest.mark.parametrize("alpha", [0.05, 1e-10, 1e-200, 1e-300])
def test_anytime_critical_value_at_any_level(alpha):
    """The minimum over r of (1 + r) log((1 + r) / (r alpha^2)), by a grid search over log r written out
    here in logs (the closed form of Howard et al.'s normal mixture boundary)."""
    log_r = np.linspace(-14.0, 5.0, 400_001)
    r = np.exp(log_r)
    z2 = (1 + r) * (np.log1p(r) - log_r - 2.0 * math.log(alpha))
    z, ratio = anytime_critical_value(alpha)
    assert z == pytest.approx(math.sqrt(z2.min()), rel=1e-9)
    assert ratio == pytest.approx(r[np.argmin(z2)], rel=1e-3)


def test_subset_sequence_with_a_vanishing_half_width_runs_every_item():
    seq = lp.SubsetSequence(1000, half_width=1e-300, target="benchmark")
    res = seq.add(np.r_[np.ones(500), np.zeros(499)])
    assert not res.stop and res.ci.low < res.ci.high
    assert seq.add([1.0]).stop  # every item run: the benchmark's mean is known


def test_an_infinite_range_is_refused():
    with pytest.raises(ValueError, match="finite range"):
        lp.SubsetSequence(1000, low=-1e308, high=1e308)


def _shift_cases():
    x = np.random.default_rng(0).random(200)
    return {"exact shift": (np.full(200, 1.0), np.full(200, 0.5)),  # every difference exactly 0.5
            "rounded shift": (x + 0.1, x),  # every difference 0.1 up to the last bit of a double
            "rounded constants": (np.full(200, 0.6), np.full(200, 0.5))}


@pytest.mark.parametrize("case", ["exact shift", "rounded shift", "rounded constants"])
def test_a_constant_shift_is_degenerate_through_every_entry_point(case):
    """Every item differs by the same amount: the sample SD of the differences is 0 (the rounded
    shifts differ from it only in the last bit; their variance near 1e-34 gave N* = 1e-30 items,
    q = 1e32 and a zero-width interval). Each entry point says so, the same way."""
    a, b = _shift_cases()[case]
    with pytest.warns(lp.DegenerateDataWarning, match="same amount on every item"):
        res = lp.compare(a, b)
    assert math.isnan(res.n_star) and math.isnan(res.q) and not res.resolved
    ci = res.confidence_interval()
    assert math.isnan(ci.low) and math.isnan(ci.high)
    with pytest.warns(lp.DegenerateDataWarning, match="same amount on every item"):
        diag = lp.diagnose(np.c_[a, b], models=["a", "b"])
    row = diag.to_frame().iloc[0]
    assert math.isnan(row["n_star"]) and not row["resolved"] and math.isnan(row["ci_low"])
    with pytest.warns(lp.DegenerateDataWarning):
        assert lp.gate(a, b, margin=0.01).verdict == "INCONCLUSIVE"


def test_a_model_compared_with_itself_says_so():
    x = np.random.default_rng(1).random(200)
    with pytest.warns(lp.DegenerateDataWarning, match="same on every item"):
        res = lp.compare(x, x.copy())
    assert res.pvalue == 1.0 and not res.resolved and math.isinf(res.n_star)
    assert math.isnan(res.confidence_interval().low)


def test_a_tiny_genuine_spread_is_not_rounding():
    """A difference whose SD is 1e-9 of the scores' size is data, not rounding: N* follows it."""
    x = np.random.default_rng(2).random(200)
    d = 0.01 + 1e-9 * np.random.default_rng(3).standard_normal(200)
    res = lp.compare(x + d, x)
    assert res.resolved and res.n_star == 1 and res.q > 1e10
