"""Intervals are reached one way: ``result.confidence_interval()`` on every result that reports one
(the fields and the older method names stay, and give the same numbers).
"""

from __future__ import annotations

import dataclasses
import inspect
import re

import numpy as np
import pandas as pd
import pytest

import llm_power as lp


#: the names of interval fields (and of columns of intervals) across the families
_INTERVAL_FIELD = re.compile(r"(^|_)ci($|_)|_low$|_high$|^confidence_sequence$")


def _results() -> list[type]:
    from llm_power._core.results import Result

    for name in lp.__all__:  # every family loaded, so every result class exists
        getattr(lp, name)
    seen, todo = [], list(Result.__subclasses__())
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo += cls.__subclasses__()
    return sorted(set(seen), key=lambda c: c.__name__)


def test_every_result_with_an_interval_answers_confidence_interval_at_a_level():
    """One way to an interval: every result class with an interval field has
    ``confidence_interval(confidence_level=None, *, <which one>)`` (5 forms before issue 41: no level,
    a level, ``simultaneous`` only, two positional model names, and a plain field)."""
    carrying = []
    for cls in _results():
        fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
        if cls.__name__ == "PairedBoundsResult":  # ranges over the admissible 2x2 tables, not intervals
            continue
        if any(_INTERVAL_FIELD.search(f) for f in fields) or cls.__name__ in {"Diagnosis", "ArenaDiagnosis"}:
            carrying.append(cls.__name__)
            method = getattr(cls, "confidence_interval", None)
            assert callable(method), cls.__name__
            params = list(inspect.signature(method).parameters.values())[1:]
            assert params and params[0].name == "confidence_level" and params[0].default is None, cls.__name__
            assert all(p.kind is p.KEYWORD_ONLY for p in params[1:]), cls.__name__
    assert len(carrying) >= 20, carrying
    for cls in _results():  # and every other result that answers it (a recipe instead of fields)
        method = getattr(cls, "confidence_interval", None)
        if callable(method):
            first = list(inspect.signature(method).parameters.values())[1]
            assert first.name == "confidence_level" and first.default is None, cls.__name__


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
    assert tuple(fit.confidence_interval(a="a", b="c")) == tuple(fit.difference_ci("a", "c"))
    assert tuple(fit.confidence_interval(0.9, a="a", b="c")) == tuple(fit.difference_ci("a", "c", 0.9))
    np.testing.assert_array_equal(fit.confidence_interval().low, fit.rating_ci().low)
    with pytest.raises(ValueError, match="name both models"):
        fit.confidence_interval(a="a")
    with pytest.raises(TypeError, match="confidence_level"):  # the level first, as on every result
        fit.confidence_interval("a", "c")


def test_a_kept_interval_is_given_at_its_level_and_refused_at_another():
    rng = np.random.default_rng(7)
    a = (rng.random(600) < 0.7).astype(float)
    b = np.where(rng.random(600) < 0.2, 1.0 - a, a)
    res = lp.gate(a, b, margin=0.02, alpha=0.05)
    assert tuple(res.confidence_interval()) == tuple(res.confidence_interval(0.9)) == (res.ci_low, res.ci_high)
    with pytest.raises(ValueError, match=r"computed at the 0.9 level.*gate\(\.\.\., alpha="):
        res.confidence_interval(0.95)
    diag = lp.diagnose(np.c_[a, b, np.roll(a, 7)], models=["a", "b", "c"])
    models = diag.confidence_interval()
    np.testing.assert_array_equal(models.low, diag.model_ci_low)
    pairs = diag.confidence_interval(0.95, of="pairs")
    np.testing.assert_array_equal(pairs.high, diag.columns["ci_high"])
    with pytest.raises(ValueError, match="`of` must be one of 'models', 'pairs'"):
        diag.confidence_interval(of="items")
    with pytest.raises(ValueError, match="confidence_level=0.8, run diagnose"):
        diag.confidence_interval(0.8)
    win = lp.compare_win_rates(a, np.roll(b, 3), confidence_level=0.9)
    assert tuple(win.confidence_interval()) == tuple(win.ci)
    with pytest.raises(ValueError, match="must be in \\(0, 1\\)"):
        win.confidence_interval(1.5)
