"""Bad input gets a clear error naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

from llm_power import DataError, LLMPowerError, coverage, half_width, n_for_half_width, proportion_ci, rule_of_three


@pytest.mark.parametrize(
    ("k", "n", "exc", "match"),
    [
        (21, 20, ValueError, r"`k` must not exceed `n`; got k=21 > n=20\."),
        ([1, 30], [20, 20], ValueError, r"`k` must not exceed `n`; got k=30 > n=20 at index 1\."),
        (-1, 20, ValueError, r"`k` must be non-negative; got -1\."),
        (2.5, 20, ValueError, r"`k` must be whole numbers; got 2\.5\."),
        (np.nan, 20, ValueError, r"`k` must be whole numbers; got nan\."),
        (3, 0, ValueError, r"`n` must be >= 1; got 0\."),
        (3, -5, ValueError, r"`n` must be >= 1; got -5\."),
        ("3", 20, TypeError, r"`k` must be an integer or an array of integers; got '3'\."),
        (True, 20, TypeError, r"`k` must be an integer"),
        ([1, 2], [10, 10, 10], ValueError, r"`k` and `n` must have broadcastable shapes"),
    ],
)
def test_proportion_ci_counts(k, n, exc, match):
    with pytest.raises(exc, match=match):
        proportion_ci(k, n)


def test_whole_floats_are_accepted():
    assert proportion_ci(17.0, 20.0) == proportion_ci(17, 20)


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.2, 95])
def test_confidence_level_outside_unit_interval(level):
    with pytest.raises(ValueError, match=r"`confidence_level` must be in \(0, 1\); got"):
        proportion_ci(17, 20, confidence_level=level)


def test_confidence_level_wrong_type():
    with pytest.raises(TypeError, match=r"`confidence_level` must be a number in \(0, 1\)"):
        proportion_ci(17, 20, confidence_level="0.95")


def test_unknown_method_lists_valid_ones_sorted():
    with pytest.raises(
        ValueError,
        match=r"`method` must be one of 'agresti_coull', 'clopper_pearson', 'jeffreys', 'wald', "
        r"'wilson'; got 'wilsn'\.",
    ):
        proportion_ci(17, 20, method="wilsn")


def test_method_is_case_sensitive_and_not_silently_accepted():
    with pytest.raises(ValueError, match="`method` must be one of"):
        proportion_ci(17, 20, method="Wilson")
    with pytest.raises(TypeError, match="`method` must be one of"):
        proportion_ci(17, 20, method=None)


def test_unknown_alternative():
    with pytest.raises(ValueError, match=r"`alternative` must be one of 'greater', 'less', 'two-sided'; got 'two_sided'"):
        proportion_ci(17, 20, alternative="two_sided")


def test_coverage_validation():
    with pytest.raises(ValueError, match=r"`p` must be in \[0, 1\]; got 1\.2"):
        coverage(10, 1.2, method="wilson")
    with pytest.raises(ValueError, match=r"`n` must be >= 1; got 0"):
        coverage(0, 0.5, method="wilson")
    with pytest.raises(ValueError, match=r"`method` must be one of"):
        coverage(10, 0.5, method="exact")
    with pytest.raises(TypeError):
        coverage(10, 0.5)  # method is required: there is no silent default


def test_rule_of_three_and_half_width_validation():
    with pytest.raises(ValueError, match=r"`n` must be >= 1; got 0"):
        rule_of_three(0)
    with pytest.raises(ValueError, match=r"`confidence_level` must be in \(0, 1\)"):
        rule_of_three(10, confidence_level=1.0)
    with pytest.raises(ValueError, match=r"`p` must be in \[0, 1\]; got -0\.1"):
        half_width(100, -0.1)
    with pytest.raises(ValueError, match=r"`width` must be positive and finite; got 0\.0"):
        n_for_half_width(0.0)
    with pytest.raises(ValueError, match=r"`width` must be at most 0\.5 \(a proportion, not points\); got 2\.0"):
        n_for_half_width(2.0)


def test_wald_zero_width_warns():
    from llm_power import DegenerateDataWarning

    with pytest.warns(DegenerateDataWarning, match="zero width"):
        ci = proportion_ci(0, 50, method="wald")
    assert ci == (0.0, 0.0)


def test_error_classes_refine_builtins():
    assert issubclass(DataError, ValueError) and issubclass(DataError, LLMPowerError)
    err = DataError("not a number", file="scores.csv", record=12, field="score")
    assert str(err) == "scores.csv, record 12, field 'score': not a number"
