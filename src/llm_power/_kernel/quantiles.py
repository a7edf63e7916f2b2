r"""Normal and Student-t quantiles, critical values, the constant K and z/t p-values: the only copy.

Quantiles are taken in the upper tail as ``-ndtri(tail)`` (exact for tails down to 1e-300) and
``t.isf(tail, df)``; ``df = inf`` (or None) is the normal. Everything is vectorised: scalars in,
floats out; arrays in, arrays out.

    K = (c_{1-alpha/2} + c_{power})^2    (c_{1-alpha} one-sided; c = z, or t on df degrees of freedom)

is the constant of every sample-size formula (7.84888 at 0.05 / 0.8, two-sided, normal).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "chi2_upper",
    "critical_values",
    "f_upper",
    "interval_half_width",
    "k_constant",
    "level_quantile",
    "mixture_tuning",
    "normal_pvalue",
    "t_pvalue",
    "tail_level",
    "upper_quantile",
    "z_quantile",
]


def mixture_tuning(alpha: float) -> tuple[float, float]:
    r"""The two-sided normal-mixture boundary in z units at the time it is tuned for, and the tuning.

    With :math:`\rho = r v`, :math:`u(v)/\sqrt v = \sqrt{(1+r)\log((1+r)/(r\alpha^2))}` depends on r
    only; it is minimised over r. Returns ``(z, r)`` (the public face is
    :func:`llm_power.sequential.anytime_critical_value`, which validates ``alpha`` and caches).
    """
    from scipy import optimize

    log_alpha = math.log(alpha)

    def z2(log_r: float) -> float:  # in logs: alpha * alpha underflows to 0 below 1e-162
        r = math.exp(log_r)
        return (1 + r) * (math.log1p(r) - log_r - 2.0 * log_alpha)

    res = optimize.minimize_scalar(z2, bounds=(-12.0, 5.0), method="bounded", options={"xatol": 1e-10})
    return math.sqrt(res.fun), math.exp(res.x)


def _out(value: Any) -> Any:
    arr = np.asarray(value, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


def tail_level(alpha: Any, alternative: str = "two-sided") -> Any:
    """The tail probability of a level-``alpha`` test: alpha / 2 two-sided, alpha one-sided."""
    return np.asarray(alpha, dtype=float) / 2.0 if alternative == "two-sided" else np.asarray(alpha, dtype=float)


def z_quantile(p: Any) -> Any:
    """The standard normal p-quantile (``ndtri``), e.g. z_{power} = z_quantile(0.8) = 0.8416."""
    return _out(special.ndtri(np.asarray(p, dtype=float)))


#: Student-t quantiles of one probability over many degrees of freedom (a leaderboard's pairs each
#: have their own), kept for the next call with the same ones: the cluster regime asks for the same
#: t_{df, 1 - alpha/2} for its test's N*, its MDE and its interval (0.18 CPU-s per 500,000 pairs)
_MEMO: dict[tuple[float, int, bytes], np.ndarray] = {}
_MEMO_MIN, _MEMO_SIZE = 10_000, 4


def _quantile(p: Any, df: Any) -> Any:
    """The p-quantile of the normal (``df`` None or inf) or of Student t on ``df`` degrees of freedom."""
    p = np.asarray(p, dtype=float)
    z = special.ndtri(p)
    if df is None:
        return _out(z)
    dfa = np.asarray(df, dtype=float)
    if not np.any(np.isfinite(dfa)):
        return _out(np.broadcast_to(z, np.broadcast(z, dfa).shape))
    key = None
    if p.ndim == 0 and dfa.size >= _MEMO_MIN:
        # p to 15 digits: alpha / 2 and (1 - level) / 2 differ in the last bit for alpha = 1 - level
        digest = hashlib.blake2b(np.ascontiguousarray(dfa).tobytes(), digest_size=20).digest()
        key = (round(float(p), 15), dfa.size, digest)
        kept = _MEMO.get(key)
        if kept is not None and kept.shape == dfa.shape:
            return kept.copy()
    with np.errstate(invalid="ignore"):
        t = special.stdtrit(np.where(np.isfinite(dfa), dfa, 1.0), p)
    out = _out(np.where(np.isfinite(dfa), t, z))
    if key is not None:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = np.array(out)
    return out


def upper_quantile(tail: Any, df: Any = None) -> Any:
    """The upper-``tail`` quantile: z_{1-tail} (``df`` None or inf) or t_{df, 1-tail}, taken as minus the
    ``tail`` quantile (no loss of precision for tiny tails).

    Examples
    --------
    >>> from llm_power._kernel.quantiles import upper_quantile
    >>> round(upper_quantile(0.025), 4), round(upper_quantile(0.025, 9), 4)
    (1.96, 2.2622)
    """
    return _out(-np.asarray(_quantile(tail, df)))


def level_quantile(confidence_level: Any, alternative: str = "two-sided", df: Any = None) -> Any:
    """The quantile that sets an interval at ``confidence_level``: c_{1-(1-level)/2} two-sided,
    c_{level} one-sided (z, or t on ``df``).
    """
    return upper_quantile(tail_level(1.0 - np.asarray(confidence_level, dtype=float), alternative), df)


def interval_half_width(se: Any, confidence_level: float, alternative: str = "two-sided", df: Any = None) -> Any:
    """``level_quantile(...) * se``: the half-width of a Wald / t interval."""
    return _out(level_quantile(confidence_level, alternative, df) * np.asarray(se, dtype=float))


def critical_values(alpha: Any, power: float, alternative: str = "two-sided", df: Any = None) -> tuple[Any, Any]:
    """(c_{1-alpha/2}, c_{power}) -- c_{1-alpha} one-sided; z, or Student t with ``df`` degrees of freedom."""
    return upper_quantile(tail_level(alpha, alternative), df), _quantile(power, df)


def k_constant(alpha: Any = 0.05, power: float = 0.8, alternative: str = "two-sided", df: Any = None) -> Any:
    """K = (c_{1-alpha/2} + c_{power})^2; vectorised over ``alpha`` (per-pair levels) and ``df``.

    Examples
    --------
    >>> from llm_power._kernel.quantiles import k_constant
    >>> round(k_constant(0.05, 0.8), 5)
    7.84888
    """
    a, b = critical_values(alpha, power, alternative, df)
    return _out((np.asarray(a) + np.asarray(b)) ** 2)


def normal_pvalue(z: Any, alternative: str = "two-sided") -> Any:
    """p-value of a z statistic against ``alternative`` ("greater": large z is evidence)."""
    z = np.asarray(z, dtype=float)
    if alternative == "greater":
        p = special.ndtr(-z)
    elif alternative == "less":
        p = special.ndtr(z)
    else:
        p = np.minimum(1.0, 2.0 * special.ndtr(-np.abs(z)))
    return _out(np.where(np.isnan(z), 1.0, p))


def t_pvalue(t: Any, df: Any, alternative: str = "two-sided") -> Any:
    """p-value of a t statistic on ``df`` degrees of freedom (``df = inf``: the normal)."""
    t = np.asarray(t, dtype=float)
    dfa = np.broadcast_to(np.asarray(df, dtype=float), np.broadcast(t, np.asarray(df)).shape)
    finite = np.isfinite(dfa)
    safe = np.where(finite, dfa, 1.0)
    with np.errstate(invalid="ignore"):
        if alternative == "greater":
            p = np.where(finite, special.stdtr(safe, -t), special.ndtr(-t))
        elif alternative == "less":
            p = np.where(finite, special.stdtr(safe, t), special.ndtr(t))
        else:
            p = np.minimum(1.0, 2.0 * np.where(finite, special.stdtr(safe, -np.abs(t)), special.ndtr(-np.abs(t))))
    return _out(np.where(np.isnan(t), 1.0, p))


def chi2_upper(tail: Any, df: Any) -> Any:
    """The upper-``tail`` quantile of chi-square on ``df`` degrees of freedom (``chdtri``: P(X > x) = tail).

    Examples
    --------
    >>> from llm_power._kernel.quantiles import chi2_upper
    >>> round(chi2_upper(0.025, 4), 4), round(chi2_upper(0.975, 4), 4)
    (11.1433, 0.4844)
    """
    return _out(special.chdtri(np.asarray(df, dtype=float), np.asarray(tail, dtype=float)))


def f_upper(tail: Any, df1: Any, df2: Any) -> Any:
    """The upper-``tail`` quantile of F(``df1``, ``df2``); ``df2 = inf`` is chi-square(df1) / df1.

    Examples
    --------
    >>> from llm_power._kernel.quantiles import f_upper
    >>> round(f_upper(0.05, 4, 20), 4), round(f_upper(0.05, 4, float("inf")), 4)
    (2.8661, 2.3719)
    """
    tail = np.asarray(tail, dtype=float)
    d1, d2 = np.asarray(df1, dtype=float), np.asarray(df2, dtype=float)
    finite = np.isfinite(d2)
    with np.errstate(invalid="ignore"):
        f = special.fdtri(d1, np.where(finite, d2, 1.0), 1.0 - tail)
    return _out(np.where(finite, f, special.chdtri(d1, tail) / d1))
