"""Bad input to the paired functions gets a clear error naming the problem."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from llm_power import (
    ApproximationWarning,
    DegenerateDataWarning,
    cochran_q,
    compare,
    five_by_two_cv,
    mcnemar,
    mcnemar_from_counts,
    paired_bootstrap,
    paired_difference_ci,
    paired_t,
    permutation_test,
    sign_test,
    unpaired_z,
    wilcoxon,
)

PAIRED = [mcnemar, paired_t, sign_test, wilcoxon, compare, paired_difference_ci]


@pytest.mark.parametrize("func", PAIRED + [paired_bootstrap, permutation_test])
def test_different_lengths(func):
    with pytest.raises(ValueError, match=r"(same length|same shape).*(got 3 and 4|got \(3,\) and \(4,\))"):
        func([1, 0, 1], [1, 0, 1, 1])


@pytest.mark.parametrize("func", PAIRED + [paired_bootstrap, permutation_test])
def test_nan_scores(func):
    with pytest.raises(ValueError, match=r"`a` must contain finite .*NaN"):
        func([1, np.nan, 1, 0], [1, 0, 1, 1])


@pytest.mark.parametrize("func", [paired_t, sign_test, wilcoxon, compare, paired_bootstrap, permutation_test])
def test_fewer_than_two_items(func):
    with pytest.raises(ValueError, match=r"need at least 2 items; got 1"):
        func([1.0], [0.0])


@pytest.mark.parametrize("func", [mcnemar, paired_difference_ci])
def test_non_binary_where_mcnemar_needs_0_1(func):
    with pytest.raises(ValueError, match=r"`b` must be 0/1 per-item correctness .*; got 0\.5 at index 1"):
        func([1, 0, 1], [1, 0.5, 1])


def test_compare_mcnemar_on_graded_scores():
    with pytest.raises(ValueError, match=r"`method` 'mcnemar_exact' needs 0/1 scores"):
        compare([0.1, 0.5, 0.9], [0.2, 0.4, 0.9], method="mcnemar_exact")


def test_unknown_methods_list_valid_ones():
    with pytest.raises(ValueError, match=r"`method` must be one of 'asymptotic', 'exact', 'mid_p'; got 'chi2'"):
        mcnemar([1, 0], [0, 1], method="chi2")
    with pytest.raises(ValueError, match=r"`method` must be one of 'auto', 'bootstrap', .*'wilcoxon'; got 'ttest'"):
        compare([1, 0], [0, 1], method="ttest")
    with pytest.raises(ValueError, match=r"`statistic` must be one of 'mean'; got 'median'"):
        paired_bootstrap([1, 0], [0, 1], statistic="median")
    with pytest.raises(TypeError, match=r"`statistic` must be 'mean' or a callable"):
        permutation_test([1, 0], [0, 1], statistic=3)


def test_mcnemar_no_discordant_pairs_gives_p_one_with_warning():
    with pytest.warns(DegenerateDataWarning, match=r"b \+ c = 0"):
        res = mcnemar([1, 1, 0], [1, 1, 0])
    assert res.pvalue == 1.0 and res.b == res.c == 0
    with pytest.warns(DegenerateDataWarning):
        assert mcnemar([1, 0], [1, 0], method="asymptotic").pvalue == 1.0


def test_mcnemar_tiny_discordance_warns():
    with pytest.warns(ApproximationWarning, match=r"only b \+ c = 3 discordant items: no two-sided p-value can fall below 0\.25"):
        mcnemar_from_counts(3, 0)
    with pytest.warns(ApproximationWarning, match=r"b \+ c = 12 < 25 .* use method='exact'"):
        mcnemar_from_counts(10, 2, method="asymptotic")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcnemar_from_counts(10, 2)  # exact with 12 discordant items: no warning


def test_mcnemar_from_counts_validation():
    with pytest.raises(ValueError, match=r"`b` must be a non-negative integer count; got -1"):
        mcnemar_from_counts(-1, 3)
    with pytest.raises(ValueError, match=r"`n` must be at least b \+ c = 7; got 5"):
        mcnemar_from_counts(4, 3, n=5)


def test_resampling_parameter_validation():
    with pytest.raises(ValueError, match=r"`n_resamples` must be a positive integer; got 0"):
        paired_bootstrap([1, 0, 1], [0, 1, 1], n_resamples=0)
    with pytest.raises(TypeError, match=r"`rng` must be None, an int seed or a numpy.random.Generator"):
        paired_bootstrap([1, 0, 1], [0, 1, 1], rng="seed")
    with pytest.raises(ValueError, match=r"`cluster` must have one label per item \(3\); got shape \(2,\)"):
        paired_bootstrap([1, 0, 1], [0, 1, 1], cluster=[1, 2])


def test_unpaired_z_warns_on_paired_data():
    with pytest.warns(ApproximationWarning, match="ignores the pairing"):
        unpaired_z([1, 0, 1, 1], [0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unpaired_z([1, 0, 1, 1], [0, 0, 1])  # different lengths: genuinely unpaired


def test_cochran_q_and_five_by_two_validation():
    with pytest.raises(ValueError, match=r"`scores` must be a 2-D \(n_items, n_models\) matrix; got shape \(3,\)"):
        cochran_q([1, 0, 1])
    with pytest.raises(ValueError, match=r"`scores` must be 0/1 per-item correctness"):
        cochran_q([[1, 0.5], [0, 1]])
    with pytest.raises(ValueError, match=r"`scores_a` must have shape \(5, 2\)"):
        five_by_two_cv(np.zeros((5, 3)), np.zeros((5, 2)))


def test_compare_alpha_power_validation():
    with pytest.raises(ValueError, match=r"`power` must be greater than `alpha` \(0\.05\); got 0\.04"):
        compare([1, 0, 1], [0, 1, 1], power=0.04)
    with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\); got 0\.0"):
        compare([1, 0, 1], [0, 1, 1], alpha=0.0)


def test_correction_keyword_is_deprecated_but_still_works():
    # SPEC §2 (2026-11-30): `correction` renamed `continuity_correction`; the old keyword one
    # release with a DeprecationWarning, giving the same answer
    from llm_power import mcnemar_from_counts, simulated_power, wilcoxon

    new = mcnemar_from_counts(33, 25, method="asymptotic", continuity_correction=False)
    with pytest.warns(DeprecationWarning, match="renamed `continuity_correction`"):
        old = mcnemar_from_counts(33, 25, method="asymptotic", correction=False)
    assert old.pvalue == new.pvalue and old.continuity_correction is False
    a = [1.0, 2.5, 3.0, 0.2, 4.1, 2.2, 0.7, 3.3, 1.9, 2.8]
    b = [0.8, 2.9, 2.0, 0.1, 3.0, 2.5, 0.1, 2.0, 1.0, 2.0]
    with pytest.warns(DeprecationWarning):
        assert wilcoxon(a, b, method="approx", correction=True).pvalue == wilcoxon(
            a, b, method="approx", continuity_correction=True).pvalue
    with pytest.warns(DeprecationWarning):
        simulated_power(50, 0.7, 0.6, method="mcnemar_asymptotic", correction=False, n_sims=20, rng=0)
    # and `test=` -> `method=` (one vocabulary with compare and the CLI)
    with pytest.warns(DeprecationWarning, match="renamed `method`"):
        old = simulated_power(60, 0.7, 0.6, test="sign", n_sims=50, rng=1)
    assert old.power == simulated_power(60, 0.7, 0.6, method="sign", n_sims=50, rng=1).power
