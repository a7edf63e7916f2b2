"""Paired tests and intervals: reference values with provenance.

Sources: SPEC.md §5; R values printed in other projects' test suites and published worked
examples collected in tests/reference/paired_reference.json (each source block names repository,
path and commit); statsmodels as an independent implementation.
"""

from __future__ import annotations

import warnings
from decimal import Decimal

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from conftest import load_reference, table_arrays
from llm_power import (
    effect_sizes,
    mcnemar,
    mcnemar_from_counts,
    paired_difference_ci,
    paired_difference_ci_from_counts,
    unpaired_z,
)


def half_unit(value: float) -> float:
    """Half a unit in the last digit of a value as printed (e.g. 0.03469 -> 5e-6)."""
    return 0.5 * 10.0 ** Decimal(repr(float(value))).as_tuple().exponent


# --- SPEC §5 --------------------------------------------------------------------------------------

def test_spec_mcnemar_b9_c1():
    # SPEC §5: McNemar b=9, c=1 (A 150/200, B 142/200): chi2 cc p = 0.0269; exact p = 0.0215;
    # unpaired z p = 0.368
    a, b = table_arrays(141, 9, 1, 49)
    assert a.sum() == 150 and b.sum() == 142
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert round(mcnemar(a, b, method="asymptotic").pvalue, 4) == 0.0269
        assert round(unpaired_z(a, b).pvalue, 3) == 0.368
    assert round(mcnemar(a, b).pvalue, 4) == 0.0215


def test_spec_mcnemar_b33_c25():
    # SPEC §5: McNemar b=33, c=25: chi2 cc p = 0.358; exact p = 0.358
    assert round(mcnemar_from_counts(33, 25, method="asymptotic").pvalue, 3) == 0.358
    assert round(mcnemar_from_counts(33, 25).pvalue, 3) == 0.358


@pytest.mark.parametrize(("table", "ratio", "phi"), [((141, 9, 1, 49), 0.35, 0.88), ((117, 33, 25, 25), 0.86, 0.27)])
def test_spec_se_ratio_and_phi(table, ratio, phi):
    # SPEC §5: SE ratio paired/unpaired ≈ 0.35 and ≈ 0.86 (≈ sqrt(1 − φ), φ = 0.88 and 0.27);
    # both tables have A 150/200, B 142/200 (the same 4-point gap).
    a, b = table_arrays(*table)
    assert a.mean() == 0.75 and b.mean() == 0.71
    es = effect_sizes(a, b)
    assert round(es.se_ratio, 2) == ratio
    assert round(es.phi, 2) == phi
    assert abs(es.se_ratio - np.sqrt(1 - es.phi)) < 0.02


# --- R values in other projects' suites ----------------------------------------------------------

def _mcnemar_cases():
    ref = load_reference("paired_reference.json")["mcnemar"]
    for source in ref["sources"]:
        tag = source["source"].split()[0]
        for i, case in enumerate(source["cases"]):
            yield pytest.param(case, id=f"{tag}-{case['variant']}-{case['b']}-{case['c']}-{i}")


@pytest.mark.parametrize("case", list(_mcnemar_cases()))
def test_mcnemar_published_values(case):
    method, correction = {
        "exact": ("exact", True),
        "mid_p": ("mid_p", True),
        "asymptotic_cc": ("asymptotic", True),
        "asymptotic": ("asymptotic", False),
    }[case["variant"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mcnemar_from_counts(case["b"], case["c"], method=method, continuity_correction=correction)
    # Values are printed rounded: allow half a unit in the last printed digit.
    assert res.pvalue == pytest.approx(case["pvalue"], abs=half_unit(case["pvalue"]), rel=1e-12)
    stat = case.get("statistic")
    if stat is not None and method == "asymptotic":
        kind = case.get("statistic_kind", "chi2")
        ours = np.sqrt(res.statistic) if kind.startswith("z") else res.statistic
        assert ours == pytest.approx(abs(stat), abs=half_unit(stat), rel=1e-12)


def test_mcnemar_equals_statsmodels_on_random_tables():
    rng = np.random.default_rng(7)
    for _ in range(400):
        b, c = (int(x) for x in rng.integers(0, 120, size=2))
        if b + c == 0:
            continue
        for exact in (True, False):
            for correction in (True, False):
                sm = sm_mcnemar([[5, b], [c, 5]], exact=exact, correction=correction)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ours = mcnemar_from_counts(b, c, method="exact" if exact else "asymptotic",
                                               continuity_correction=correction)
                if not exact and correction and b == c:
                    # statsmodels gives (0 - 1)^2/(b + c); R (and we) never correct past 0.
                    assert ours.statistic == 0.0 and ours.pvalue == 1.0
                    continue
                assert ours.pvalue == pytest.approx(sm.pvalue, rel=1e-10, abs=1e-14)
                assert ours.statistic == pytest.approx(sm.statistic, rel=1e-10, abs=1e-14)


# --- Newcombe and Tango ----------------------------------------------------------------------------

def _ci_cases():
    ref = load_reference("paired_reference.json")["paired_difference_ci"]
    for source in ref["sources"]:
        tag = source["source"].split()[0]
        for i, case in enumerate(source["cases"]):
            yield pytest.param(case, id=f"{tag}-{case['method']}-{case['a']}-{case['b']}-{case['c']}-{case['d']}-{i}")


@pytest.mark.parametrize("case", list(_ci_cases()))
def test_paired_difference_ci_published_values(case):
    # a = both, b = first only, c = second only, d = neither; difference p1 - p2 = (b - c)/n.
    ci = paired_difference_ci_from_counts(case["a"], case["b"], case["c"], case["d"], method=case["method"],
                                          confidence_level=case["confidence_level"])
    for ours, ref in ((ci.low, case["low"]), (ci.high, case["high"])):
        # values are printed rounded to 3-4 decimals: half a unit in the last printed digit
        assert ours == pytest.approx(ref, abs=half_unit(ref) + 1e-9)


def test_paired_difference_ci_from_arrays_equals_counts():
    a, b = table_arrays(59, 6, 16, 80)
    for method in ("newcombe", "tango", "wald"):
        assert paired_difference_ci(a, b, method=method) == paired_difference_ci_from_counts(59, 6, 16, 80, method=method)
