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

from typing import Any

import numpy as np

from .._core.progress import advance
from . import verdict as _verdict
from .paired_intervals import mcnemar_interval
from .verdict import EXACT_MAX_DISCORDANT, iid_verdict_block, mcnemar_test

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
    """
    size = i.size
    out = {name: np.empty(size, dtype=dtype) for name, dtype in COLUMNS.items()}
    block_size = _verdict.PAIR_BLOCK  # read when called (tests shrink it)
    for start in range(0, size, block_size):
        sl = slice(start, start + block_size)
        ii, jj, bo = i[sl], j[sl], both[sl]
        b = right[ii] - bo
        c = right[jj] - bo
        disc = b + c
        delta = (b - c) / n
        var = np.maximum(disc / n - delta * delta, 0.0)
        exact = disc < EXACT_MAX_DISCORDANT
        pvalue = np.empty(bo.size)
        for variant, sel in (("mcnemar_exact", exact), ("mcnemar_asymptotic", ~exact)):
            if sel.all():
                pvalue = mcnemar_test(b, c, variant, "two-sided")[1]
            elif sel.any():
                pvalue[sel] = mcnemar_test(b[sel], c[sel], variant, "two-sided")[1]
        low, high = mcnemar_interval(b, c, n, variant="asymptotic", level=confidence_level)
        if exact.any():
            low[exact], high[exact] = mcnemar_interval(b[exact], c[exact], n, variant="exact", level=confidence_level)
        verdict = iid_verdict_block(delta, var, n, pvalue, alpha=np.full(bo.size, alpha), power=power,
                               alternative="two-sided", b=b, c=c)
        block: dict[str, Any] = {
            "b": b, "c": c, "delta": delta, "ss": disc - n * delta * delta, "var": var, "pvalue": pvalue,
            "exact": exact, "ci_low": low, "ci_high": high, "n_star": verdict.n_star, "q": verdict.q,
            "mde": verdict.mde, "resolved": verdict.resolved, "regime": verdict.regime}
        for name, values in block.items():
            out[name][sl] = values
        if size > block_size:
            advance(TASK, min(start + block_size, size), size)
    return out
