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
