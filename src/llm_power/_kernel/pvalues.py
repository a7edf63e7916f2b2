"""Vectorised test p-values from sufficient statistics, unvalidated: the one implementation
behind :func:`llm_power.mcnemar`, the verdict of every pair (``diagnose``, ``compare``, the gate, the
arena), the exact power and the validity simulations.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special, stats

__all__ = ["mcnemar_pvalue"]


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
                tail = stats.binom.cdf(statistic, m, 0.5)
                point = stats.binom.pmf(statistic, m, 0.5)
            elif alternative == "greater":  # A better: many b; P(X >= b)
                tail = stats.binom.sf(b - 1, m, 0.5)
                point = stats.binom.pmf(b, m, 0.5)
            else:
                tail = stats.binom.cdf(b, m, 0.5)
                point = stats.binom.pmf(b, m, 0.5)
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
