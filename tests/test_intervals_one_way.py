"""Intervals are reached one way: ``result.confidence_interval()`` on every result that reports one
(the fields and the older method names stay, and give the same numbers).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
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
    np.testing.assert_array_equal(cmp.confidence_interval(simultaneous=True).high, cmp.band_ci_high)


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


# -- one naming of intervals (issue 41) ---------------------------------------------------------
#: the convention (docs/reference/index.md), written here rather than imported: a stored interval is
#: ``ci`` or ``<quantity>_ci``; bounds kept as columns are ``[<regime>_][<quantity>_]ci_low/_high``
_NAMED_ONE_WAY = re.compile(r"^(?:[a-z0-9]+_)*ci(?:_low|_high)?$")
#: what looks like an interval or one of its bounds (``ci_method`` names how, not an interval)
_LOOKS_LIKE_AN_INTERVAL = re.compile(r"(^|_)(ci|low|high|lower|upper|lo|hi)(_|$)")


def _misnamed(names) -> list[str]:
    return sorted(n for n in names if _LOOKS_LIKE_AN_INTERVAL.search(n) and not _NAMED_ONE_WAY.match(n)
                  and not n.endswith("_method"))


def test_every_result_field_that_holds_an_interval_is_named_one_way():
    misnamed = {}
    for cls in _results():
        if not dataclasses.is_dataclass(cls) or cls.__name__ == "PairedBoundsResult":  # ranges, not intervals
            continue
        bad = _misnamed(f.name for f in dataclasses.fields(cls))
        if bad:
            misnamed[cls.__name__] = bad
    assert misnamed == {}


def _battles(n=900, seed=3):
    rng = np.random.default_rng(seed)
    models = np.array(["a", "b", "c", "d"])
    i, j = rng.integers(0, 4, n), rng.integers(0, 4, n)
    keep = i != j
    skill = np.array([0.8, 0.3, 0.0, -0.6])
    win = rng.random(keep.sum()) < 1 / (1 + np.exp(-(skill[i[keep]] - skill[j[keep]])))
    return pd.DataFrame({"model_a": models[i[keep]], "model_b": models[j[keep]],
                         "winner": np.where(win, "model_a", "model_b"),
                         "question_id": rng.integers(0, 40, keep.sum())})


def _keys(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(str(k))
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def test_columns_tables_and_json_name_their_intervals_one_way(tmp_path, capsys):
    """The columns of the diagnosis and the arena, the rank tables and every command's JSON."""
    from llm_power.cli.main import main

    rng = np.random.default_rng(11)
    x = (rng.random((300, 4)) < [0.8, 0.7, 0.6, 0.55]).astype(float)
    cluster = np.repeat(np.arange(30), 10)
    diag = lp.diagnose(x, models=list("wxyz"), cluster=cluster, pairs="all")
    arena = lp.arena_diagnose(_battles(), cluster="question_id")
    fit = lp.bradley_terry(_battles())
    cmp = lp.compare_pass_at_k((rng.random((60, 6)) < 0.6).astype(float), (rng.random((60, 6)) < 0.5).astype(float),
                               [1, 3], n_resamples=100, rng=0)
    names = set(diag.columns) | set(arena.columns) | set(arena.ranks) | set(fit.rank_intervals().columns) | set(
        cmp.to_frame().columns)
    assert {"cluster_ci_low", "elo_ci_low", "cluster_elo_ci_high", "rank_ci_low", "band_ci_high"} <= names
    assert _misnamed(names) == []
    frame = pd.DataFrame(x, columns=list("wxyz")).assign(item_id=np.arange(300), subject=cluster.astype(str))
    frame.to_csv(tmp_path / "x.csv", index=False)
    _battles().to_csv(tmp_path / "battles.csv", index=False)
    keys: set[str] = set()
    for argv in (["diagnose", str(tmp_path / "x.csv"), "--cluster", "subject", "--pairs", "all"],
                 ["rank", str(tmp_path / "x.csv"), "--cluster", "subject"],
                 ["arena", str(tmp_path / "battles.csv"), "--cluster", "question_id"]):
        assert main([*argv, "--format", "json"]) == 0
        keys |= _keys(json.loads(capsys.readouterr().out), set())
    assert {"cluster_ci_low", "rank_ci_low", "elo_ci_low"} <= keys
    assert _misnamed(keys) == []


def test_the_old_interval_names_still_read_for_one_release_with_a_warning():
    rng = np.random.default_rng(2)
    x = (rng.random((400, 4)) < [0.8, 0.7, 0.6, 0.5]).astype(float)
    ranks = lp.rank_intervals(x, models=list("abcd"), n_resamples=200, rng=0)
    for old, new in (("rank_low", "rank_ci_low"), ("rank_high", "rank_ci_high"),
                     ("max_t_low", "max_t_rank_ci_low"), ("max_t_high", "max_t_rank_ci_high")):
        with pytest.warns(DeprecationWarning, match=f"`{old}` was renamed `{new}`"):
            np.testing.assert_array_equal(getattr(ranks, old), getattr(ranks, new))
        assert old not in ranks.to_dict()
    cmp = lp.compare_pass_at_k(x[:, :2].repeat(2, axis=1), x[:, 2:].repeat(2, axis=1), [1, 2], n_resamples=100,
                               rng=0)
    with pytest.warns(DeprecationWarning, match="`band_low` was renamed `band_ci_low`"):
        np.testing.assert_array_equal(cmp.band_low, cmp.band_ci_low)
    arena = lp.arena_diagnose(_battles())
    with pytest.warns(DeprecationWarning, match="'ci_low_elo' was renamed 'elo_ci_low'"):
        np.testing.assert_array_equal(arena.columns["ci_low_elo"], arena.columns["elo_ci_low"])
    with pytest.warns(DeprecationWarning, match="'rank_high' was renamed 'rank_ci_high'"):
        assert arena.ranks["rank_high"] == arena.ranks["rank_ci_high"]
    assert "ci_low_elo" not in arena.columns and "ci_low_elo" not in json.dumps(json.loads(arena.to_json()))
    with pytest.raises(KeyError):
        arena.columns["no_such_column"]
