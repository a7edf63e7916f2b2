"""The package's parameter vocabulary, declared once, and the check every public function runs at its edge.

Every public function that takes one of these parameters -- ``alpha``, ``power``,
``confidence_level``, ``alternative``, ``n_resamples``, ``rng`` -- is wrapped in :func:`public`,
which checks the values the caller gave, by parameter name, before the function runs: the error
names the caller's own parameter (never one the function passes on to another), and the same rule
holds everywhere. One joint rule: ``power`` must exceed the level of the test it plans for
(``alpha``, or ``1 - confidence_level`` where the level is set by an interval), refused everywhere
for one reason (:data:`POWER_REASON`).

The command line takes the same vocabulary (:data:`llm_power._core.options.FLAGS` names the
flags); :func:`cli_type` turns a check into an argparse type whose message names the flag.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, overload

from .validation import ALTERNATIVES, check_option, fail

__all__ = ["POWER_REASON", "VOCABULARY", "Param", "check_param", "check_power_above", "cli_type", "public"]

P = ParamSpec("P")
R = TypeVar("R")

#: why power must exceed alpha (the one reason, everywhere)
POWER_REASON = ("a test at level alpha already rejects with probability alpha when there is no gap, so a "
                "power at or below it asks for nothing (N* would be 0 items)")


def _open_unit(value: Any, name: str) -> float:
    if type(value) is float and 0.0 < value < 1.0:  # the common case, without the ABC checks
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise fail(name, "a number in (0, 1)", value, exc=TypeError)
    out = float(value)
    if not 0.0 < out < 1.0:  # NaN fails too
        raise fail(name, "in (0, 1)", value)
    return out


def _alternative(value: Any, name: str) -> str:
    return check_option(value, name, ALTERNATIVES)


def _resamples(value: Any, name: str) -> int:
    """A whole number >= 0 (0: no resampling, where a function allows it; each function refines the minimum)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise fail(name, "a non-negative integer", value, exc=TypeError)
    if value < 0:
        raise fail(name, "a non-negative integer", value)
    return int(value)


def _rng(value: Any, name: str) -> Any:
    if type(value) is int or value is None:
        return value
    import numpy as np

    if isinstance(value, (np.random.Generator, np.random.SeedSequence)) or (
            isinstance(value, numbers.Integral) and not isinstance(value, bool)):
        return value  # checked, not converted: the function draws from it as documented
    raise fail(name, "None, an int seed or a numpy.random.Generator", value, exc=TypeError)


@dataclass(frozen=True)
class Param:
    """One parameter of the vocabulary: its check (value, name) -> checked value, and what it means."""

    name: str
    check: Callable[[Any, str], Any]
    meaning: str


#: the vocabulary: every public function that has a parameter of this name gets this check
VOCABULARY: dict[str, Param] = {p.name: p for p in (
    Param("alpha", _open_unit, "level of the tests, in (0, 1)"),
    Param("power", _open_unit, "target power of N* and the MDE, in (0, 1), above the tests' level"),
    Param("confidence_level", _open_unit, "level of every interval reported, in (0, 1)"),
    Param("alternative", _alternative, "'two-sided', 'less' or 'greater'"),
    Param("n_resamples", _resamples, "resamples of a bootstrap or permutation, a non-negative integer"),
    Param("rng", _rng, "None, an int seed or a numpy.random.Generator"),
)}


def check_param(name: str, value: Any) -> Any:
    """Check one value of the vocabulary (the message names ``name``)."""
    return VOCABULARY[name].check(value, name)


def check_power_above(power: float, level: float, *, level_name: str = "alpha") -> None:
    """``power`` must exceed the tests' level (``level_name`` says where the level comes from)."""
    if not power > level:
        shown = f"`{level_name}`" if level_name == "alpha" else f"1 - `{level_name}`"
        msg = f"`power` must be greater than {shown} ({level:g}); got {power:g}: {POWER_REASON}."
        raise ValueError(msg)


@dataclass(frozen=True)
class _Slot:
    name: str
    position: int | None  # in *args, None when keyword-only
    default: Any
    nullable: bool
    upper: tuple[float, str] | None


@overload
def public(fn: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def public(*, nullable: tuple[str, ...] = (), upper: dict[str, tuple[float, str]] | None = None
           ) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def public(fn: Any = None, /, *, nullable: tuple[str, ...] = (),
           upper: dict[str, tuple[float, str]] | None = None) -> Any:
    """Check the vocabulary's parameters of a public function at its edge, by name, before it runs.

    ``nullable``: parameters for which None is a meaning (besides those whose default is None);
    ``upper``: a tighter upper bound of a parameter for this function and why (the gate's
    one-sided ``alpha`` below 0.5). Values left at their defaults are not checked (they are the function's
    own). With ``power`` and ``alpha`` (or ``confidence_level``, whose complement is then the
    tests' level), ``power`` must exceed that level.
    """
    def wrap(func: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(func)
        slots = []
        positional = True
        for position, p in enumerate(sig.parameters.values()):
            if p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY, p.VAR_KEYWORD):
                positional = False
            if p.name in VOCABULARY:
                default = None if p.default is p.empty else p.default
                slots.append(_Slot(p.name, position if positional and p.kind != p.KEYWORD_ONLY else None, default,
                                   p.name in nullable or (p.default is None),
                                   (upper or {}).get(p.name)))
        named = {s.name: s for s in slots}
        joint = "power" in named and ("alpha" in named or "confidence_level" in named)

        @functools.wraps(func)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            given: dict[str, Any] = {}
            for slot in slots:
                if slot.name in kwargs:
                    value = kwargs[slot.name]
                elif slot.position is not None and slot.position < len(args):
                    value = args[slot.position]
                else:
                    continue
                if value is None and slot.nullable:
                    given[slot.name] = None
                    continue
                value = VOCABULARY[slot.name].check(value, slot.name)
                if slot.upper is not None and not value < slot.upper[0]:
                    msg = f"`{slot.name}` must be in (0, {slot.upper[0]:g}); got {value:g}: {slot.upper[1]}."
                    raise ValueError(msg)
                given[slot.name] = value
            if joint and given:
                _joint(named, given)
            return func(*args, **kwargs)

        checked.__llm_power_public__ = True  # type: ignore[attr-defined]
        return checked

    return wrap if fn is None else wrap(fn)


def _joint(named: dict[str, _Slot], given: dict[str, Any]) -> None:
    """``power`` above the tests' level, from the values given or the defaults."""
    def value(name: str) -> Any:
        return given[name] if name in given else named[name].default

    power = value("power")
    if power is None:
        return
    if "alpha" in named and value("alpha") is not None:
        check_power_above(power, value("alpha"))
    elif "confidence_level" in named and value("confidence_level") is not None:
        check_power_above(power, 1.0 - value("confidence_level"), level_name="confidence_level")


def cli_type(name: str) -> Callable[[str], Any]:
    """An argparse type for a flag of the vocabulary (argparse names the flag in its message; exit 2)."""
    import argparse

    def parse(text: str) -> Any:
        try:
            value: Any = float(text) if name != "alternative" else text
            if name == "n_resamples":
                value = int(text)
        except ValueError:
            msg = f"must be a number; got {text!r}"
            raise argparse.ArgumentTypeError(msg) from None
        try:
            return check_param(name, value)
        except (TypeError, ValueError) as exc:  # argparse prefixes "argument --flag: "
            raise argparse.ArgumentTypeError(str(exc).replace(f"`{name}` ", "", 1)) from None

    parse.__name__ = name  # argparse names the type in "invalid <name> value"
    return parse
