"""Vectorised test p-values from sufficient statistics, unvalidated: the one implementation
behind :func:`llm_power.mcnemar`, the verdict of every pair (``diagnose``, ``compare``, the gate, the
arena), the exact power and the validity simulations.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

try:  # the ufuncs scipy.stats.binom evaluates, without its per-call argument machinery (~50 us a call)
    from scipy.special._ufuncs import _binom_cdf, _binom_pmf, _binom_sf
except ImportError:  # pragma: no cover - older scipy: the public distribution
    _binom_cdf = _binom_pmf = _binom_sf = None  # type: ignore[assignment]

__all__ = ["binom_half", "mcnemar_pvalue"]


def binom_half(kind: str, k: Any, m: Any) -> np.ndarray:
    """``scipy.stats.binom.<kind>(k, m, 0.5)`` for kind in cdf, sf, pmf, bit for bit (the same ufuncs
    inside the support, the same values outside it), at a fraction of the cost of a small call.
    """
    k_arr = np.asarray(k, dtype=float)
    k_arr, m_arr = np.broadcast_arrays(k_arr if kind == "pmf" else np.floor(k_arr), np.asarray(m, dtype=float))
    if _binom_cdf is None:  # pragma: no cover
        from scipy import stats

        return np.asarray(getattr(stats.binom, kind)(k_arr, m_arr, 0.5), dtype=float)
    shape = k_arr.shape
    k_arr, m_arr = k_arr.reshape(-1), m_arr.reshape(-1)
    if kind == "pmf":
        inside = (k_arr >= 0) & (k_arr <= m_arr) & (k_arr == np.floor(k_arr))
        out = np.zeros(k_arr.shape)
        out[inside] = _binom_pmf(k_arr[inside], m_arr[inside], 0.5)
    else:
        inside = (k_arr >= 0) & (k_arr < m_arr)
        out = (k_arr >= m_arr if kind == "cdf" else k_arr < 0).astype(float)
        out[inside] = (_binom_cdf if kind == "cdf" else _binom_sf)(k_arr[inside], m_arr[inside], 0.5)
    return out.reshape(shape)


def mcnemar_pvalue(b: Any, c: Any, *, method: str = "exact", continuity_correction: bool = True,
                   alternative: str = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """Vectorised McNemar statistic and p-value from discordant counts (no validation).

    Used by :func:`mcnemar`, the planning module and the validity simulations. With
    ``b + c = 0`` the p-value is 1.
    """
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    m = b + c
    with np.errstate(divide="ignore", invalid="ignore"):
        if method in ("exact", "mid_p"):
            statistic = np.minimum(b, c)
            if alternative == "two-sided":
                tail = binom_half("cdf", statistic, m)
                point = binom_half("pmf", statistic, m)
            elif alternative == "greater":  # A better: many b; P(X >= b)
                tail = binom_half("sf", b - 1, m)
                point = binom_half("pmf", b, m)
            else:
                tail = binom_half("cdf", b, m)
                point = binom_half("pmf", b, m)
            if method == "mid_p":
                tail = tail - 0.5 * point
            p = 2.0 * tail if alternative == "two-sided" else tail
        elif method == "asymptotic":
            diff = b - c
            corr = 1.0 if continuity_correction else 0.0
            # the correction never moves the statistic past zero (as R's mcnemar.test)
            shrunk = np.sign(diff) * np.maximum(np.abs(diff) - corr, 0.0)
            z = shrunk / np.sqrt(m)
            statistic = z * z
            # chi-square(1) and normal tails by the special functions themselves (scipy.stats' frozen
            # distributions cost ~10x more per element on millions of pairs): P(chi2_1 > z^2) = erfc(|z|/sqrt 2)
            if alternative == "two-sided":
                p = special.erfc(np.abs(z) / math.sqrt(2.0))
            elif alternative == "greater":
                p = special.ndtr(-z)
            else:
                p = special.ndtr(z)
        else:  # pragma: no cover - validated by callers
            raise ValueError(method)
    p = np.where(m == 0, 1.0, np.clip(p, 0.0, 1.0))
    statistic = np.where(m == 0, 0.0, statistic)
    return statistic, p
