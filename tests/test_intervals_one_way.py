"""Intervals are reached one way: ``result.confidence_interval()`` on every result that reports one
(the fields and the older method names stay, and give the same numbers).
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pandas as pd
import pytest

import llm_power as lp


def test_every_result_with_interval_fields_has_confidence_interval():
    for name in lp.__all__:
        obj = getattr(lp, name)
        if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
            fields = {f.name for f in dataclasses.fields(obj)}
            if {"ci_low", "ci_high"} <= fields:
                assert hasattr(obj, "confidence_interval"), name


def test_the_intervals_equal_the_fields_they_come_from():
    rng = np.random.default_rng(5)
    a = (rng.random(800) < 0.72).astype(float)
    b = np.where(rng.random(800) < 0.25, 1.0 - a, a)
    res = lp.gate(a, b, margin=0.02)
    assert tuple(res.confidence_interval()) == (res.ci_low, res.ci_high)
    pair = lp.diagnose(np.c_[a, b]).pairs[0]
    assert tuple(pair.confidence_interval()) == (pair.ci_low, pair.ci_high)
    x = (rng.random((200, 10)) < 0.6).astype(float)
    y = (rng.random((200, 10)) < 0.5).astype(float)
    cmp = lp.compare_pass_at_k(x, y, [1, 5], n_resamples=200, rng=0)
    np.testing.assert_array_equal(cmp.confidence_interval().low, cmp.ci_low)
    np.testing.assert_array_equal(cmp.confidence_interval(simultaneous=True).high, cmp.band_high)


def test_bradley_terry_gap_and_rating_intervals():
    rng = np.random.default_rng(2)
    models = np.array(["a", "b", "c"])
    i, j = rng.integers(0, 3, 600), rng.integers(0, 3, 600)
    keep = i != j
    skill = np.array([0.6, 0.0, -0.6])
    win = rng.random(keep.sum()) < 1 / (1 + np.exp(-(skill[i[keep]] - skill[j[keep]])))
    battles = pd.DataFrame({"model_a": models[i[keep]], "model_b": models[j[keep]],
                            "winner": np.where(win, "model_a", "model_b")})
    fit = lp.bradley_terry(battles)
    assert tuple(fit.confidence_interval("a", "c")) == tuple(fit.difference_ci("a", "c"))
    np.testing.assert_array_equal(fit.confidence_interval().low, fit.rating_ci().low)
    with pytest.raises(ValueError, match="name both models"):
        fit.confidence_interval("a")
