"""Rank intervals at leaderboard scale (issue 43): ``lp.rank_intervals`` (the normal-limit max-t
over every pair, ``method="auto"``) against ``lp.diagnose(pairs="all")`` on the same synthetic 0/1
matrix (uint8), 1,000 and 4,500 models x 12,032 items, CPU seconds (``time.process_time``: the
machine is shared), interleaved in one process, best of ``--repeat``; and the Monte-Carlo spread of
the critical value over seeds (its standard error at the documented number of draws).

Run: ``python benchmarks/rank_scale.py [--models 1000 4500] [--repeat 2] [--seeds 5]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import md_table, peak_rss_mb  # noqa: E402

N_ITEMS = 12_032


def cpu(fn):  # noqa: ANN001, ANN201
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def main() -> None:
    import llm_power as lp

    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, nargs="+", default=[1000, 4500])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for m in args.models:
        gen = np.random.default_rng(m)
        x = (gen.random((N_ITEMS, m), dtype=np.float32) < np.linspace(0.3, 0.85, m, dtype=np.float32)).astype(np.uint8)
        best = {"diagnose(pairs='all')": np.inf, "rank_intervals": np.inf}
        res = None
        for _ in range(args.repeat):  # interleaved: a change of load hits both alike
            t, _d = cpu(lambda x=x, m=m: lp.diagnose(x, pairs="all", max_pairs=m * (m - 1) // 2))
            del _d
            best["diagnose(pairs='all')"] = min(best["diagnose(pairs='all')"], t)
            t, res = cpu(lambda x=x: lp.rank_intervals(x, rng=0))
            best["rank_intervals"] = min(best["rank_intervals"], t)
        crits = [res.critical_value] + [lp.rank_intervals(x, method="gaussian", rng=s).critical_value
                                        for s in range(1, args.seeds)]
        base = best["diagnose(pairs='all')"]
        rows.append([f"{m:,} x {N_ITEMS:,}", f"{base:.2f}", f"{best['rank_intervals']:.2f}",
                     f"{best['rank_intervals'] / base:.1f}x", res.method,
                     f"{np.mean(crits):.3f} +- {np.std(crits, ddof=1):.3f}", f"{peak_rss_mb():,.0f}"])
        print(rows[-1], flush=True)
    print(md_table(["models x items", "diagnose all pairs CPU-s", "rank_intervals CPU-s", "ratio", "method",
                    f"critical value over {args.seeds} seeds (mean +- sd)", "peak RSS MB"], rows))


if __name__ == "__main__":
    main()
