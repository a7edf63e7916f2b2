"""Every per-pair quantity of 0/1 pairs in one pass over blocks of pairs.

With millions of pairs (all pairs of thousands of models) the cost is not the arithmetic but the
memory it walks through: each intermediate array of 10 million pairs is 80 MB written and read
again. Here the discordant counts, the McNemar test, the interval that inverts it, N*, q, MDE and
the verdict of a block of ``_verdict.PAIR_BLOCK`` pairs are computed while the block is in cache,
and only the result columns are full length. The formulas are those of the per-quantity
functions it calls (:func:`~llm_power._kernel.verdict.mcnemar_test`,
:func:`~llm_power._kernel.paired_intervals.mcnemar_interval`, the IID verdict), block by block.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._core.progress import advance
from . import verdict as _verdict
from .paired_intervals import mcnemar_interval
from .quantiles import k_constant, level_quantile
from .verdict import EXACT_MAX_DISCORDANT, PVALUE_FLOOR, iid_verdict_block, mcnemar_test, resolved

__all__ = ["TASK", "binary_pair_columns"]

#: the name of this pass in progress reports
TASK = "pairs: tests, intervals, N* and q"

#: the result columns and their types
COLUMNS = {"b": np.int64, "c": np.int64, "delta": float, "ss": float, "var": float, "pvalue": float, "exact": bool,
           "ci_low": float, "ci_high": float, "n_star": float, "q": float, "mde": float, "resolved": bool,
           "regime": np.int8}


def binary_pair_columns(both: np.ndarray, right: np.ndarray, i: np.ndarray, j: np.ndarray, n: int, *,
                        confidence_level: float, alpha: float, power: float) -> dict[str, np.ndarray]:
    """The IID columns of 0/1 pairs (ranks ``i`` above ``j``): ``both`` items both got right,
    ``right`` each model's correct answers (by rank).

    Returns b, c (discordant counts, int64), delta, ss (sum of squared deviations of D), var
    (plug-in variance of D), pvalue and exact (McNemar, exact below 25 discordant items),
    ci_low/ci_high (the interval that inverts the pair's McNemar test, at ``confidence_level``),
    n_star (unrounded), q, mde, resolved and regime (codes of ``REGIME_NAMES``).

    Every pair is first computed as an asymptotic (plug-in) pair, with the constants of the level
    (K, z) formed once and every result written straight into its column; the few pairs with
    fewer than 25 discordant items (or a zero plug-in variance) are then recomputed by the exact
    test, interval and N* of the per-quantity functions. The same operations as those functions,
    so the same bits.
    """
    size = i.size
    out = {name: np.empty(size, dtype=dtype) for name, dtype in COLUMNS.items()}
    block_size = _verdict.PAIR_BLOCK  # read when called (tests shrink it)
    k = float(k_constant(alpha, power, "two-sided"))
    z_level = float(level_quantile(confidence_level, "two-sided"))
    root2 = math.sqrt(2.0)
    if size > block_size:
        advance(TASK, 0, size)
    for start in range(0, size, block_size):
        sl = slice(start, start + block_size)
        ii, jj, bo = i[sl], j[sl], both[sl]
        b = right[ii] - bo
        c = right[jj] - bo
        disc = b + c
        delta = np.divide(b - c, n, out=out["delta"][sl])
        delta_sq = delta * delta
        var = np.maximum(np.subtract(disc / n, delta_sq, out=out["var"][sl]), 0.0, out=out["var"][sl])
        np.subtract(disc, n * delta * delta, out=out["ss"][sl])
        exact = np.less(disc, EXACT_MAX_DISCORDANT, out=out["exact"][sl])
        out["b"][sl], out["c"][sl] = b, c
        with np.errstate(divide="ignore", invalid="ignore"):
            # McNemar's asymptotic test with continuity correction (mcnemar_pvalue's expressions):
            # p = erfc(|z| / sqrt 2), |z| = max(|b - c| - 1, 0) / sqrt(b + c), floored
            z_abs = np.maximum(np.abs(b - c) - 1.0, 0.0) / np.sqrt(disc)
            pvalue = np.maximum(special.erfc(z_abs / root2), PVALUE_FLOOR, out=out["pvalue"][sl])
            # the interval that inverts it (mcnemar_interval's asymptotic one)
            half = (z_level * np.sqrt(disc) + 1.0) / n
            np.clip(delta - half, -1.0, 1.0, out=out["ci_low"][sl])
            np.clip(delta + half, -1.0, 1.0, out=out["ci_high"][sl])
            # the plug-in verdict (plugin_verdict's expressions, K once)
            ok = delta != 0
            pos = var > 0
            fine = ok & pos
            n_star = np.where(fine, k * var / delta_sq, np.where(ok & (var == 0), np.nan, np.inf))
            q = np.where(fine, n * delta * delta / (var * k), np.where(ok & (var == 0), np.nan, 0.0))
            out["n_star"][sl], out["q"][sl] = n_star, q
            out["mde"][sl] = np.where(pos, np.sqrt(k * var / n), np.nan)
        resolved(q, n_star, pvalue=pvalue, alpha=alpha, out=out["resolved"][sl])
        out["regime"][sl] = 0
        redo = np.nonzero(exact | ~pos)[0]
        if redo.size:
            _exact_pairs(out, start + redo, exact[redo], n, confidence_level=confidence_level, alpha=alpha,
                         power=power)
        if size > block_size:
            advance(TASK, min(start + block_size, size), size)
    return out


def _exact_pairs(out: dict[str, np.ndarray], at: np.ndarray, exact: np.ndarray, n: int, *, confidence_level: float,
                 alpha: float, power: float) -> None:
    """Recompute the pairs ``at`` by the exact per-quantity functions: the exact McNemar test and
    its interval where ``exact`` (fewer than 25 discordant items), the IID verdict (exact N* where
    the plug-in one fails) for all of them.
    """
    b, c = out["b"][at].astype(float), out["c"][at].astype(float)
    few = at[exact]
    if few.size:
        out["pvalue"][few] = mcnemar_test(b[exact], c[exact], "mcnemar_exact", "two-sided")[1]
        out["ci_low"][few], out["ci_high"][few] = mcnemar_interval(b[exact], c[exact], n, variant="exact",
                                                                   level=confidence_level)
    verdict = iid_verdict_block(out["delta"][at], out["var"][at], n, out["pvalue"][at],
                                alpha=np.full(at.size, alpha), power=power, alternative="two-sided", b=b, c=c)
    out["n_star"][at], out["q"][at], out["mde"][at] = verdict.n_star, verdict.q, verdict.mde
    out["resolved"][at], out["regime"][at] = verdict.resolved, verdict.regime
