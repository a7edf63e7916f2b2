"""Options validated once, at the public edge (issue 39, point 2).

Derived from the public API rather than a hand list: every public function, constructor and result
method that takes ``alpha``, ``power``, ``confidence_level`` or ``alternative`` rejects an out-of-range
value with one error that names *its own* parameter -- before it looks at anything else (so the test
calls it with ``None`` for everything it needs) -- and ``power`` at or below the tests' level is
refused everywhere for one reason. On the command line the error names the flag (exit 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect

import numpy as np
import pytest

import llm_power as lp
from llm_power._core.params import POWER_REASON, VOCABULARY
from llm_power.cli.main import _parsers, build_parser, main

CHECKED = ("alpha", "power", "confidence_level", "alternative")
BAD = {"alpha": 1.5, "power": 0.0, "confidence_level": 1.0, "alternative": "sideways"}


def _public_callables() -> list[tuple[str, object]]:
    out = []
    for name in sorted(lp.__all__):
        obj = getattr(lp, name)
        if isinstance(obj, type):
            members = [] if dataclasses.is_dataclass(obj) else [("__init__", obj.__dict__.get("__init__"))]
            members += [(k, v) for k, v in vars(obj).items() if not k.startswith("_") and inspect.isfunction(v)]
            out += [(f"{name}.{k}", v) for k, v in members if v is not None]
        elif callable(obj):
            out.append((name, obj))
    return [(n, f) for n, f in out if any(p in CHECKED for p in _signature(f).parameters)]


def _signature(fn: object) -> inspect.Signature:
    try:
        return inspect.signature(fn)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return inspect.Signature()


def _call(fn: object, **given: object) -> None:
    """Call with None for every required parameter and ``given`` for the rest."""
    args, kwargs = [], {}
    for p in _signature(fn).parameters.values():
        if p.name in given or p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = None
        else:
            args.append(None)
    fn(*args, **kwargs, **given)  # type: ignore[operator]


PUBLIC = _public_callables()


def test_the_api_has_the_vocabulary():
    names = {n for n, _ in PUBLIC}
    assert {"compare", "gate", "arena_diagnose", "rank_intervals", "sample_size", "noise",
            "subset_plan", "LeaderboardMonitor.__init__", "Comparison.confidence_interval"} <= names
    assert len(PUBLIC) > 60


@pytest.mark.parametrize("fn", [lp.diagnose, lp.diagnose_files], ids=["diagnose", "diagnose_files"])
@pytest.mark.parametrize("option", ["alpha", "power", "confidence_level"])
def test_diagnose_takes_its_declared_options_by_keyword_and_checks_them_first(fn, option):
    """diagnose's options are declared once by the regimes (DiagnoseOptions) and passed by keyword: the
    same checks, first, naming the keyword -- and an unknown keyword is a TypeError listing the known."""
    with pytest.raises(ValueError) as info:
        fn(None, **{option: BAD[option]})
    assert str(info.value).startswith(f"`{option}`")
    with pytest.raises(ValueError, match=r"^`power` must be greater than `alpha`"):
        fn(None, alpha=0.3, power=0.2)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'alpah'.*alpha"):
        fn(None, alpah=0.1)
    opts = lp.DiagnoseOptions.create(alpha=0.1, correction="holm")
    assert (opts.alpha, opts.correction, opts.power) == (0.1, "holm", 0.8)
    assert opts.replace(anytime=True).anytime and not opts.anytime  # frozen: replace gives a checked copy
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.alpha = 0.2


@pytest.mark.parametrize(("name", "fn"), PUBLIC, ids=[n for n, _ in PUBLIC])
def test_every_public_function_checks_its_options_at_the_edge(name, fn):
    params = _signature(fn).parameters
    assert getattr(fn, "__llm_power_public__", False), f"{name} is not wrapped in _core.params.public"
    for option in (p for p in CHECKED if p in params):
        with pytest.raises((ValueError, TypeError)) as info:
            _call(fn, **{option: BAD[option]})
        assert str(info.value).startswith(f"`{option}`"), (name, option, str(info.value))


POWERED = [(n, f) for n, f in PUBLIC if "power" in _signature(f).parameters
           and ({"alpha", "confidence_level"} & set(_signature(f).parameters))]


@pytest.mark.parametrize(("name", "fn"), POWERED, ids=[n for n, _ in POWERED])
def test_power_at_or_below_the_level_is_refused_everywhere_for_one_reason(name, fn):
    params = _signature(fn).parameters
    level = {"alpha": 0.3} if "alpha" in params else {"confidence_level": 0.7}
    with pytest.raises(ValueError) as info:
        _call(fn, power=0.2, **level)
    assert str(info.value).startswith("`power` must be greater than") and POWER_REASON in str(info.value), name


def test_the_issue_cases():
    x = np.ones(10)
    with pytest.raises(ValueError, match=r"^`alpha` must be in \(0, 0.5\)"):
        lp.gate(x, x, alpha=0.5)  # was a complaint about `confidence_level`, which gate has not
    for call in (lambda: lp.gate(x, x, alpha=0.3, power=0.2),
                 lambda: lp.arena_diagnose(None, alpha=0.5, power=0.3),
                 lambda: lp.diagnose(np.eye(3), alpha=0.5, power=0.3)):
        with pytest.raises(ValueError, match=r"^`power` must be greater than `alpha`"):
            call()
    with pytest.raises(ValueError, match=r"^`method` must be one of"):
        lp.rank_intervals(np.eye(3), method="boot")  # was `rank_method`


def test_defaults_are_not_rechecked_and_good_values_pass():
    res = lp.compare(np.r_[np.ones(60), np.zeros(40)], np.r_[np.ones(50), np.zeros(50)], alpha=0.1, power=0.9)
    assert res.alpha == 0.1 and res.power == 0.9
    assert lp.sample_size(0.65, 0.60, rho=0.3, alpha=0.05, power=0.8) == 1028  # SPEC section 5
    assert set(VOCABULARY) >= set(CHECKED)


def _flagged_commands() -> list[tuple[list[str], str]]:
    """(the words that select a subcommand, its flag) for every command with a vocabulary flag."""
    out = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:  # noqa: SLF001
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for word, child in action.choices.items():
                    walk(child, [*words, word])
            for flag in ("--alpha", "--power", "--confidence-level"):
                if flag in action.option_strings:
                    out.append((words, flag))

    walk(build_parser(), [])
    return out


FLAGGED = _flagged_commands()


def test_every_parser_checks_the_vocabulary_flags():
    assert len(FLAGGED) > 20
    for parser in _parsers(build_parser()):
        for action in parser._actions:  # noqa: SLF001
            if {"--alpha", "--power", "--confidence-level"} & set(action.option_strings):
                assert getattr(action.type, "__name__", "") in {"alpha", "power", "confidence_level"}


@pytest.mark.parametrize(("words", "flag"), FLAGGED, ids=[" ".join(w) + " " + f for w, f in FLAGGED])
def test_the_command_line_names_the_flag(words, flag, capsys):
    with pytest.raises(SystemExit) as info:
        main([*words, flag, "1.5"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: must be in (0, 1); got 1.5." in err


def test_the_command_line_refuses_power_at_the_level(capsys):
    with pytest.raises(SystemExit) as info:
        main(["plan", "sample-size", "--pa", "0.6", "--pb", "0.5", "--alpha", "0.3", "--power", "0.2"])
    assert info.value.code == 2
    assert "argument --power: must be greater than --alpha (0.3)" in capsys.readouterr().err
