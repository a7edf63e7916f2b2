"""Reference values for the interval functions.

Sources: SPEC.md §5 (the project's published table) and R values printed in other projects'
test suites (tests/reference/r_binom_confint.json, provenance in each source block).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import load_reference
from llm_power import DegenerateDataWarning, half_width, proportion_ci, rule_of_three

# --- SPEC.md §5, "Reference values", to 4 decimals --------------------------------------------

SPEC_INTERVALS = [
    # (k, n, method, low, high)   SPEC §5 rows "Wilson 95%, 17/20", "98/100", "0/100", "10/10"
    (17, 20, "wilson", 0.6396, 0.9476),
    (17, 20, "clopper_pearson", 0.6211, 0.9679),
    (17, 20, "agresti_coull", 0.6312, 0.9561),
    (17, 20, "jeffreys", 0.6514, 0.9559),
    (17, 20, "wald", 0.6935, 1.0),
    (98, 100, "wald", 0.9526, 1.0),
    (98, 100, "wilson", 0.9300, 0.9945),
    (98, 100, "clopper_pearson", 0.9296, 0.9976),
    (98, 100, "agresti_coull", 0.9256, 0.9989),
    (98, 100, "jeffreys", 0.9374, 0.9958),
    (0, 100, "wald", 0.0, 0.0),
]


@pytest.mark.parametrize(("k", "n", "method", "low", "high"), SPEC_INTERVALS)
@pytest.mark.filterwarnings("ignore::llm_power.DegenerateDataWarning")
def test_spec_intervals(k, n, method, low, high):
    ci = proportion_ci(k, n, method=method)
    assert round(ci.low, 4) == pytest.approx(low, abs=1e-12)
    assert round(ci.high, 4) == pytest.approx(high, abs=1e-12)


def test_spec_wald_raw_upper_leaves_unit_interval():
    # SPEC §5: Wald raw [0.6935, 1.0065] -> clipped upper 1
    raw = proportion_ci(17, 20, method="wald", clip=False)
    assert (round(raw.low, 4), round(raw.high, 4)) == (0.6935, 1.0065)
    assert proportion_ci(17, 20, method="wald").high == 1.0


@pytest.mark.parametrize(
    ("method", "upper"),
    [("wilson", 0.03699), ("clopper_pearson", 0.03622), ("agresti_coull", 0.04441), ("jeffreys", 0.02475)],
)
def test_spec_zero_of_hundred(method, upper):
    # SPEC §5 row "0/100": upper bounds to 5 decimals, lower bound 0
    ci = proportion_ci(0, 100, method=method)
    assert ci.low == 0.0
    assert round(ci.high, 5) == pytest.approx(upper, abs=1e-12)


def test_spec_rule_of_three():
    # SPEC §5 row "0/100": rule of three 0.03
    assert round(rule_of_three(100), 4) == 0.03


@pytest.mark.parametrize(("method", "lower"), [("wilson", 0.7225), ("clopper_pearson", 0.6915)])
def test_spec_ten_of_ten(method, lower):
    # SPEC §5 row "10/10"
    ci = proportion_ci(10, 10, method=method)
    assert round(ci.low, 4) == pytest.approx(lower, abs=1e-12)
    assert ci.high == 1.0


@pytest.mark.parametrize(
    ("n", "points"), [(30, 13.9), (80, 8.7), (164, 6.1), (198, 5.6), (1319, 2.2), (14042, 0.7)]
)
def test_spec_half_widths(n, points):
    # SPEC §5 row "Wilson half-width at p̂=0.8" (in points, 1 decimal)
    assert round(100 * half_width(n, 0.8), 1) == pytest.approx(points, abs=1e-9)


def test_rule_of_three_against_exact_clopper_pearson():
    # The exact one-sided bound is 1 - alpha**(1/n) (CP upper at k = 0); rule of three is its
    # first-order expansion -ln(alpha)/n, within O(1/n^2).
    n = np.array([50, 100, 1000, 10000])
    exact = 1 - 0.05 ** (1 / n)
    assert np.allclose(rule_of_three(n), exact, rtol=3 / n)
    cp = proportion_ci(0, n, method="clopper_pearson", alternative="less").high
    assert np.allclose(cp, exact, rtol=1e-10)


# --- R values printed in other projects' test suites ----------------------------------------

def _r_cases():
    ref = load_reference("r_binom_confint.json")
    for source in ref["sources"]:
        tag = source["source"].split()[0]
        for i, case in enumerate(source["cases"]):
            yield pytest.param(case, id=f"{tag}-{case['method']}-{case['k']}/{case['n']}-{i}")


R_CASES = list(_r_cases())


def test_enough_r_cases_for_every_method():
    methods = [c.values[0]["method"] for c in R_CASES]
    for m in ("wald", "wilson", "clopper_pearson", "agresti_coull", "jeffreys"):
        assert methods.count(m) >= 5, m


@pytest.mark.parametrize("case", R_CASES)
def test_r_reference_values(case):
    clipped = bool(case.get("clipped", False))
    tol = float(case["tolerance_abs"]) if "tolerance_abs" in case else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # Wald at k = 0 or n
        ci = proportion_ci(case["k"], case["n"], method=case["method"],
                           confidence_level=case["confidence_level"], clip=clipped)
    if tol is not None:
        assert ci.low == pytest.approx(case["low"], abs=tol)
        assert ci.high == pytest.approx(case["high"], abs=tol)
    else:
        # Values are printed with 7 or more significant digits.
        assert ci.low == pytest.approx(case["low"], rel=2e-6, abs=1e-7)
        assert ci.high == pytest.approx(case["high"], rel=2e-6, abs=1e-7)
