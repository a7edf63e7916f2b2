"""The small-call fast paths (one count for Wilson, clean numpy 0/1 vectors for McNemar) give the same
bits as the general path they skip, and leave every error to the general path's checks."""

import numpy as np
import pytest

import llm_power as lp


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("clip", [True, False])
def test_wilson_of_one_count_equals_the_array_path(alternative, clip):
    for n in (1, 2, 3, 10, 37, 100, 1000, 12_032, 10**7):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for level in (0.5, 0.9, 0.95, 0.99):
                fast = lp.proportion_ci(k, n, confidence_level=level, alternative=alternative, clip=clip)
                slow = lp.proportion_ci(np.array([k]), np.array([n]), confidence_level=level,
                                        alternative=alternative, clip=clip)
                assert type(fast.low) is float and type(fast.high) is float
                assert (fast.low, fast.high) == (slow.low[0], slow.high[0]), (k, n, level)
    fast = lp.proportion_ci(np.int64(7), np.int32(20), alternative=alternative, clip=clip)
    slow = lp.proportion_ci(np.array([7]), np.array([20]), alternative=alternative, clip=clip)
    assert (fast.low, fast.high) == (slow.low[0], slow.high[0])


@pytest.mark.parametrize(("k", "n", "match"), [(5, 3, "must not exceed"), (-1, 3, "k"), (2, 0, "n"),
                                               (True, 3, "k")])
def test_wilson_bad_counts_still_get_the_general_errors(k, n, match):
    with pytest.raises((ValueError, TypeError), match=match):
        lp.proportion_ci(k, n)


@pytest.mark.parametrize("dtype", [bool, np.int8, np.int64, np.float32, float])
@pytest.mark.parametrize("method", ["exact", "mid_p", "asymptotic"])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_mcnemar_on_numpy_vectors_equals_the_list_path(dtype, method, alternative):
    rng = np.random.default_rng(3)
    a = rng.random(1000) < 0.7
    b = rng.random(1000) < 0.65
    fast = lp.mcnemar(a.astype(dtype), b.astype(dtype), method=method, alternative=alternative)
    slow = lp.mcnemar(a.astype(int).tolist(), b.astype(int).tolist(), method=method, alternative=alternative)
    assert (fast.b, fast.c, fast.n) == (int(np.sum(a & ~b)), int(np.sum(~a & b)), 1000)
    assert (fast.statistic, fast.pvalue) == (slow.statistic, slow.pvalue)


@pytest.mark.parametrize(("bad", "match"), [(np.nan, "finite"), (2.0, "0/1"), (-1.0, "0/1")])
def test_mcnemar_fast_path_leaves_bad_values_to_the_checks(bad, match):
    a = np.ones(10)
    a[4] = bad
    with pytest.raises(ValueError, match=match) as info:
        lp.mcnemar(a, np.zeros(10))
    assert "index 4" in str(info.value)
    with pytest.raises(ValueError, match="same length"):
        lp.mcnemar(np.ones(10), np.ones(9))
