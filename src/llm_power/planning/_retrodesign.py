"""Retrospective design analysis: Type S (sign) and Type M (magnitude) errors (Gelman & Carlin 2014)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, stats

from .._core.params import public
from .._core.results import Result
from .._core.validation import check_open_unit, check_positive, fail
from .._kernel.quantiles import upper_quantile

__all__ = ["TypeSMResult", "type_s_m"]


@dataclass(frozen=True, slots=True, repr=False)
class TypeSMResult(Result):
    """Power, Type S error rate and exaggeration ratio (Gelman & Carlin 2014)."""

    effect: float
    standard_error: float
    power: float
    type_s: float
    exaggeration: float

    _repr_fields = ("power", "type_s", "exaggeration")


@public
def type_s_m(effect: float, standard_error: float, *, alpha: float = 0.05, df: float | None = None) -> TypeSMResult:
    r"""Type S (sign) and Type M (magnitude) errors of a design (Gelman & Carlin 2014).

    For a true effect A estimated with standard error s: the power, the probability that a
    significant estimate has the wrong sign, and the expected exaggeration
    E(|estimate| / A | significant). Computed exactly (normal; or t with ``df`` by numerical
    integration), not by simulation.

    Parameters
    ----------
    effect : float
        The true effect A (e.g. a planned gap of 0.02), non-zero.
    standard_error : float
        Its standard error s (for a paired design: sigma_D / sqrt(n)).
    alpha : float, default 0.05
        Two-sided significance level, in (0, 1): an estimate is significant when
        |estimate| / s exceeds the upper alpha/2 quantile.
    df : float, optional
        Degrees of freedom of a t reference distribution; None for normal.

    Returns
    -------
    TypeSMResult
        ``effect`` and ``standard_error`` (as given, as floats); ``power``: the probability of a
        significant estimate in either direction, in (alpha, 1]; ``type_s``: the probability that
        a significant estimate has the sign opposite to ``effect``, in [0, 0.5); ``exaggeration``:
        the expected ratio |estimate| / |effect| given significance, >= 1 (close to 1 when power is
        high, large when it is low). All three depend on effect and s only through |effect| / s.

    References
    ----------
    .. [1] Gelman, A. & Carlin, J. (2014). Beyond power calculations: assessing Type S (sign)
       and Type M (magnitude) errors. Perspectives on Psychological Science 9(6), 641-651.

    Examples
    --------
    A 1-point true gap measured with a 1-point standard error:

    >>> from llm_power import type_s_m
    >>> res = type_s_m(0.01, 0.01)
    >>> round(res.power, 3), round(res.type_s, 4), round(res.exaggeration, 2)
    (0.17, 0.009, 2.49)
    """
    alpha = check_open_unit(alpha, "alpha")
    a = float(effect)
    s = float(check_positive(standard_error, "standard_error"))
    if a == 0 or not math.isfinite(a):
        msg = "effect"
        raise fail(msg, "a finite non-zero true effect", effect)
    dist = stats.norm if df is None else stats.t(float(check_positive(df, "df")))
    z = float(upper_quantile(alpha / 2, df))
    lam = abs(a) / s
    p_hi = float(dist.sf(z - lam))
    p_lo = float(dist.cdf(-z - lam))
    pw = p_hi + p_lo
    if df is None:
        # E[|X| 1{|X| > z}] for X ~ N(lam, 1), in units of s
        upper = lam * stats.norm.sf(z - lam) + stats.norm.pdf(z - lam)
        lower = -lam * stats.norm.cdf(-z - lam) + stats.norm.pdf(-z - lam)
        e_abs = upper + lower
    else:
        f = dist.pdf
        e_abs = (integrate.quad(lambda t: (lam + t) * f(t), z - lam, np.inf)[0]
                 + integrate.quad(lambda t: -(lam + t) * f(t), -np.inf, -z - lam)[0])
    return TypeSMResult(effect=a, standard_error=s, power=pw, type_s=p_lo / pw,
                        exaggeration=float(e_abs / pw / lam))
