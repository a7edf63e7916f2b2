"""Small calls: one McNemar test and one Wilson interval, llm-power against statsmodels, interleaved
in one process (each figure the best of 7 rounds of 2,000 calls, per call).

- McNemar, one pair of 1,000 items (numpy 0/1 float vectors; and bool vectors): ``lp.mcnemar(a, b)``
  (the exact test) against statsmodels' ``mcnemar(table, exact=True)`` on the 2x2 table the user
  first builds with ``pd.crosstab``-free numpy (``np.histogram2d`` is slower still), the cheapest
  way to statsmodels' input.
- Wilson: ``lp.proportion_ci(k, n)`` against ``proportion_confint(k, n, method="wilson")``.

Run: ``python benchmarks/small_calls.py [--load K]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, loaded, md_table  # noqa: E402

CALLS, ROUNDS = 2_000, 7


def per_call(fn) -> float:  # noqa: ANN001
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    return (time.perf_counter() - start) / CALLS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=16)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
    from statsmodels.stats.proportion import proportion_confint

    import llm_power as lp

    rng = np.random.default_rng(0)
    a = (rng.random(1_000) < 0.7).astype(float)
    b = (rng.random(1_000) < 0.65).astype(float)
    ab, bb = a.astype(bool), b.astype(bool)

    def sm_test():  # noqa: ANN202
        table = np.array([[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
                          [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]])
        return sm_mcnemar(table, exact=True).pvalue

    jobs = {
        "McNemar, 1,000 items (float 0/1)": (lambda: lp.mcnemar(a, b).pvalue, sm_test),
        "McNemar, 1,000 items (bool)": (lambda: lp.mcnemar(ab, bb).pvalue, sm_test),
        "Wilson interval, k = 783 of n = 1,000": (lambda: lp.proportion_ci(783, 1000),
                                                   lambda: proportion_confint(783, 1000, method="wilson")),
    }
    assert abs(lp.mcnemar(a, b).pvalue - sm_test()) < 1e-12
    ci = lp.proportion_ci(783, 1000)
    assert np.allclose([ci.low, ci.high], proportion_confint(783, 1000, method="wilson"), rtol=0, atol=1e-12)
    rows = []
    for load in (None, args.load):
        with loaded(load):
            best = {name: [float("inf"), float("inf")] for name in jobs}
            for _ in range(ROUNDS):
                for name, (ours, theirs) in jobs.items():
                    best[name][0] = min(best[name][0], per_call(ours))
                    best[name][1] = min(best[name][1], per_call(theirs))
        for name, (t_ours, t_sm) in best.items():
            rows.append([name, "loaded" if load else "idle", fmt_s(t_ours), fmt_s(t_sm), f"{t_ours / t_sm:.2f}x"])
    print("### One McNemar test, one Wilson interval\n")
    print(md_table(["call", "machine", "llm-power", "statsmodels", "llm-power / statsmodels"], rows))
    print("\nThe p-values and bounds agree to 1e-12 (asserted before timing).")


if __name__ == "__main__":
    main()
