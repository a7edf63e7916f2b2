"""The kernel's binomial(m, 1/2) tails equal scipy.stats.binom bit for bit (they are what McNemar's
exact and mid-p p-values are made of)."""

import numpy as np
import pytest
from scipy import stats

from llm_power._kernel.pvalues import binom_half


@pytest.mark.parametrize("kind", ["cdf", "sf", "pmf"])
def test_binom_half_is_scipy_bit_for_bit(kind):
    for m in (0, 1, 2, 3, 7, 10, 25, 100, 1001, 4096):
        k = np.r_[np.arange(-3, m + 4), np.arange(-3, m + 4) + 0.5]
        mm = np.full(k.shape, float(m))
        expected = getattr(stats.binom, kind)(k, mm, 0.5)
        assert np.array_equal(binom_half(kind, k, mm), expected), (kind, m)


def test_binom_half_keeps_shapes_and_broadcasts():
    k = np.arange(6.0).reshape(2, 3)
    assert binom_half("cdf", k, 5.0).shape == (2, 3)
    assert np.array_equal(binom_half("sf", 2.0, np.array([4.0, 6.0])), stats.binom.sf(2, [4, 6], 0.5))
    assert binom_half("pmf", 3, 6).shape == ()
    assert float(binom_half("pmf", 3, 6)) == stats.binom.pmf(3, 6, 0.5)
