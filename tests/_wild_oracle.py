"""The wild cluster bootstrap oracle of the tests: the `wildboottest` package's restricted p-value."""

from __future__ import annotations

import warnings

import numpy as np


def wildboottest_pvalue(d: np.ndarray, codes: np.ndarray) -> float:
    """wildboottest's WCR p-value (Rademacher, CR1, all 2^G sign vectors), the tied draws left out
    (the constant sign vectors give |t*| = |t| exactly; the kernel never counts them)."""
    from wildboottest.wildboottest import WildboottestCL

    wb = WildboottestCL(X=np.ones((d.size, 1)), Y=d, cluster=codes, R=np.array([1.0]), B=9999, seed=0,
                        parallel=False)
    wb.get_scores(bootstrap_type="11", impose_null=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wb.get_weights(weights_type="rademacher")
    wb.get_numer()
    wb.get_denom()
    wb.get_tboot()
    wb.get_vcov()
    wb.get_tstat()
    t, t_boot = float(np.asarray(wb.t_stat).ravel()[0]), np.asarray(wb.t_boot).ravel()
    tie = np.isclose(np.abs(t_boot), abs(t), rtol=1e-9, atol=0)
    return float(np.sum(~tie & (np.abs(t_boot) > abs(t))) / t_boot.size)
