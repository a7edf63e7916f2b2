"""Binomial confidence bounds, vectorised and unvalidated: the one implementation behind
:func:`llm_power.proportion_ci` (every method), the Wilson margins of Newcombe's paired interval
and the per-model intervals of the resolution report.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .quantiles import level_quantile

__all__ = ["binomial_bounds", "wilson_bounds", "wilson_scalar"]


def wilson_bounds(k: np.ndarray, n: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilson bounds for arrays of counts, unvalidated (the package's vectorised kernel)."""
    low, high = binomial_bounds(np.asarray(k, dtype=float), np.asarray(n, dtype=float), "wilson", confidence_level,
                        "two-sided")
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


@functools.lru_cache(maxsize=64)
def _z(confidence_level: float, alternative: str) -> float:
    """Normal quantile: two-sided z_{1-alpha/2}, one-sided z_{1-alpha} (cached: a handful of levels)."""
    return float(level_quantile(confidence_level, alternative))


def wilson_scalar(k: int, n: int, confidence_level: float, alternative: str, clip: bool = True) -> tuple[float, float]:
    """:func:`binomial_bounds` with ``method="wilson"`` for one count, in Python floats: the same
    operations in the same order, so the same bits, without array overhead (a small call's cost).
    """
    kf, nf = float(k), float(n)
    z = _z(confidence_level, alternative)
    z2 = z * z
    denom = nf + z2
    center = (kf + z2 / 2.0) / denom
    half = z / denom * math.sqrt(kf * (nf - kf) / nf + z2 / 4.0)
    low, high = center - half, center + half
    if kf <= 0:
        low = 0.0
    if kf >= nf:
        high = 1.0
    if clip:
        low, high = min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)
    if alternative == "less":
        low = 0.0
    elif alternative == "greater":
        high = 1.0
    return low, high


def binomial_bounds(
    k: np.ndarray,
    n: np.ndarray,
    method: str,
    confidence_level: float,
    alternative: str,
    clip: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds for (possibly non-integer) ``k`` out of ``n``, no validation.

    For a one-sided ``alternative`` both bounds are computed at the one-sided level; the caller
    replaces the unused side by 0 or 1.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    alpha = 1.0 - confidence_level
    tail = alpha / 2.0 if alternative == "two-sided" else alpha
    at_zero = k <= 0
    at_n = k >= n
    with np.errstate(divide="ignore", invalid="ignore"):
        phat = k / n
        if method in ("wald", "agresti_coull", "wilson"):
            z = _z(confidence_level, alternative)
            z2 = z * z
            if method == "wald":
                half = z * np.sqrt(phat * (1.0 - phat) / n)
                low, high = phat - half, phat + half
            elif method == "agresti_coull":
                n_tilde = n + z2
                p_tilde = (k + z2 / 2.0) / n_tilde
                half = z * np.sqrt(p_tilde * (1.0 - p_tilde) / n_tilde)
                low, high = p_tilde - half, p_tilde + half
            else:  # wilson
                denom = n + z2
                center = (k + z2 / 2.0) / denom
                half = z / denom * np.sqrt(k * (n - k) / n + z2 / 4.0)
                low, high = center - half, center + half
                # Exact limits at the boundaries (the formula gives them up to rounding).
                low = np.where(at_zero, 0.0, low)
                high = np.where(at_n, 1.0, high)
        elif method == "clopper_pearson":
            low = special.betaincinv(np.where(at_zero, 1.0, k), n - k + 1.0, tail)
            high = special.betaincinv(k + 1.0, np.where(at_n, 1.0, n - k), 1.0 - tail)
            low = np.where(at_zero, 0.0, low)
            high = np.where(at_n, 1.0, high)
        elif method == "jeffreys":
            a, b = k + 0.5, n - k + 0.5
            low = special.betaincinv(a, b, tail)
            high = special.betaincinv(a, b, 1.0 - tail)
            # Brown, Cai & DasGupta (2001): lower 0 at k = 0 and upper 1 at k = n.
            low = np.where(at_zero, 0.0, low)
            high = np.where(at_n, 1.0, high)
        else:  # pragma: no cover - validated by callers
            raise ValueError(method)
    if clip:
        low = np.clip(low, 0.0, 1.0)
        high = np.clip(high, 0.0, 1.0)
    if alternative == "less":
        low = np.zeros_like(high)
    elif alternative == "greater":
        high = np.ones_like(low)
    return low, high
