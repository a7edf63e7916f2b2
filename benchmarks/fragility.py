"""Fragility at leaderboard scale (issue 43): ``lp.fragility`` against ``lp.diagnose`` of the same pairs, and
against the path it replaced (diagnose the scores, then -- for 0/1 scores -- diagnose every pair for #1's
discordant counts), on the same synthetic 0/1 matrix (uint8, as the readers give), 300 and 1,000 models x
12,032 items, adjacent and all pairs. CPU seconds (``time.process_time``: the machine is shared), the three
interleaved in one process, best of ``--repeat``; every run checks that the two fragility paths agree.

Run: ``python benchmarks/fragility.py [--models 300 1000] [--pairs adjacent all] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import md_table  # noqa: E402

N_ITEMS = 12_032


def cpu(fn):  # noqa: ANN001, ANN201
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def old_path(x, pairs, max_pairs):  # noqa: ANN001, ANN201
    """The implementation before issue 43: ``diagnose(scores)``, each shown pair from its discordant counts,
    and #1's pairs from ``diag.all_pairs()`` (every pair of the models, diagnosed)."""
    import llm_power as lp
    from llm_power._kernel.ranks import binary_items_to_flip

    diag = lp.diagnose(x, pairs=pairs, cluster_resamples=0, rng=0, max_pairs=max_pairs)
    every = diag.all_pairs().columns
    cols, n = diag.columns, diag.n
    flips = binary_items_to_flip(cols["b"], cols["c"], n)
    first = np.asarray(every["rank_a"]) == 1
    top = binary_items_to_flip(np.asarray(every["b"])[first], np.asarray(every["c"])[first], n)
    k = int(np.argmin(top))
    return flips, float(top[k]), diag.models[k + 1]


def main() -> None:
    import llm_power as lp

    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--pairs", nargs="+", default=["adjacent", "all"])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    warm = (np.random.default_rng(0).random((500, 20)) < 0.6).astype(np.uint8)  # imports and lazy loads, untimed
    old_path(warm, "all", 190)
    lp.fragility(warm)
    rows = []
    for m in args.models:
        gen = np.random.default_rng(m)
        x = (gen.random((N_ITEMS, m), dtype=np.float32) < np.linspace(0.3, 0.85, m, dtype=np.float32)).astype(np.uint8)
        for pairs in args.pairs:
            cap = max(m * (m - 1) // 2, 1)
            jobs = {"diagnose": lambda x=x, p=pairs, c=cap: lp.diagnose(x, pairs=p, cluster_resamples=0, rng=0,
                                                                           max_pairs=c),
                    "old": lambda x=x, p=pairs, c=cap: old_path(x, p, c),
                    "fragility": lambda x=x, p=pairs, c=cap: lp.fragility(x, pairs=p, max_pairs=c)}
            best = dict.fromkeys(jobs, np.inf)
            out = {}
            for _ in range(args.repeat):  # interleaved: a change of load hits all three alike
                for name, fn in jobs.items():
                    t, out[name] = cpu(fn)
                    best[name] = min(best[name], t)
            new, (flips, top, challenger) = out["fragility"], out["old"]
            assert np.array_equal(new.items_to_flip, flips) and (new.items_to_flip_top, new.challenger) == (
                top, challenger)
            base = best["diagnose"]
            rows.append([f"{m:,} x {N_ITEMS:,}", pairs, f"{base:.2f}", f"{best['old']:.2f}",
                         f"{best['old'] / base:.1f}x", f"{best['fragility']:.3f}", f"{best['fragility'] / base:.2f}x"])
            print(rows[-1], flush=True)
            out.clear()
    print(md_table(["models x items", "pairs", "diagnose CPU-s", "before: fragility CPU-s", "before / diagnose",
                    "after: fragility CPU-s", "after / diagnose"], rows))


if __name__ == "__main__":
    main()
