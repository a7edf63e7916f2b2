"""Adjusted p-values for 10^6 tests: llm-power vs statsmodels' ``multipletests``.

Cases
-----
1. 10^6 uniform p-values (no ties);
2. 10^6 p-values rounded to 3 decimals (every value tied about 1,000 times).

Competitors
-----------
- ``statsmodels.stats.multitest.multipletests(p, method=...)`` (bonferroni, holm,
  simes-hochberg, fdr_bh, fdr_by), adjusted p-values only;
- "before": llm-power's implementation before issue 13 (a stable argsort), copied below.

Every result is checked against statsmodels (largest relative difference printed) and against
"before" (must be identical).

Run: ``.venv/bin/python benchmarks/adjust.py`` (about a minute).
"""

from __future__ import annotations

import time

import numpy as np
from statsmodels.stats.multitest import multipletests

import llm_power as lp
from llm_power.multiplicity import _pvalues

M = 1_000_000
SM = {"bonferroni": "bonferroni", "holm": "holm", "hochberg": "simes-hochberg", "bh": "fdr_bh", "by": "fdr_by"}


def before(p: np.ndarray, method: str) -> np.ndarray:
    """llm-power's adjust_pvalues before issue 13 (stable argsort), verbatim."""
    p = _pvalues(p)
    m = p.shape[-1]
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, axis=-1, kind="stable")
    ps = np.take_along_axis(p, order, axis=-1)
    ranks = np.arange(1, m + 1, dtype=float)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - ranks + 1) * ps), axis=-1)
    elif method == "hochberg":
        adj = np.minimum.accumulate(((m - ranks + 1) * ps)[..., ::-1], axis=-1)[..., ::-1]
    else:
        factor = float(np.sum(1.0 / ranks)) if method == "by" else 1.0
        adj = np.minimum.accumulate((factor * m / ranks * ps)[..., ::-1], axis=-1)[..., ::-1]
    adj = np.minimum(1.0, adj)
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=-1)
    return out


def timed(func, *args, repeat: int = 5, **kwargs) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def run_case(p: np.ndarray, label: str) -> None:
    print(f"\n{label}: m = {p.size:,}, {np.unique(p).size:,} distinct values")
    print(f"  {'method':<12}{'llm-power (s)':>14}{'statsmodels (s)':>17}{'ratio':>8}{'before (s)':>12}{'ratio':>8}"
          f"{'max rel. diff vs sm':>21}")
    for method, sm_name in SM.items():
        t_lp, ours = timed(lp.adjust_pvalues, p, method=method)
        t_sm, sm_out = timed(multipletests, p, method=sm_name)
        ref = sm_out[1]
        t_old, old = timed(before, p, method)
        assert np.array_equal(ours, old), method
        rel = float(np.max(np.abs(ours - ref) / np.maximum(ref, 1e-300)))
        print(f"  {method:<12}{t_lp:>14.4f}{t_sm:>17.4f}{t_sm / t_lp:>7.2f}x{t_old:>12.4f}{t_old / t_lp:>7.2f}x"
              f"{rel:>21.1e}")


def main() -> None:
    import statsmodels

    print(f"numpy {np.__version__}, statsmodels {statsmodels.__version__}, llm-power {lp.__version__}; "
          "best of 5; ratio = other time / llm-power time")
    rng = np.random.default_rng(0)
    run_case(rng.random(M), "uniform")
    run_case(np.round(rng.random(M), 3), "tied (rounded to 3 decimals)")


if __name__ == "__main__":
    main()
