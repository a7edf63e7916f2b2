"""A live arena (``lp.ArenaMonitor``): CPU per look against what users run at each look today -- the
fixed-n report of every battle so far (``lp.arena_diagnose``) or the bare fit (``lp.bradley_terry``),
which is not valid when read again and again (issue 46).

Synthetic arena: M models with normal log-strengths, uneven exposure (Dirichlet model weights), 10%
ties and prompts of 5 battles; a look after every batch of battles. Per case the CPU seconds
(``time.process_time``) of each look, their median and the last look's, for

- ``ArenaMonitor`` (asymptotic, e-BH), without and with prompt clusters, and with Bonferroni;
- ``ArenaMonitor(method="betting")`` (exact sequences of each pair's direct battles; no clusters);
- ``arena_diagnose`` of all battles so far (pairs="all", the clusters when the case has them);
- ``bradley_terry`` of all battles so far (the sandwich fit alone).

Run: ``python benchmarks/arena_monitor.py [--quick]`` (50 models x 20 looks of 5,000 battles, and 300
models x 10 looks of 100,000 battles; ``--quick`` only the first).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

os.environ.setdefault("LLM_POWER_MAX_MONITOR_PAIRS", "100000")  # 300 models: 44,850 pairs
sys.path.insert(0, os.path.dirname(__file__))
from _common import machine, md_table  # noqa: E402


def arena(m: int, looks: int, batch: int, seed: int = 0) -> list:
    import pandas as pd

    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.6, m)
    exposure = rng.dirichlet(np.full(m, 2.0))
    names = np.array([f"model-{j:03d}" for j in range(m)])
    out = []
    for look in range(looks):
        a = rng.choice(m, batch, p=exposure)
        b = rng.choice(m, batch, p=exposure)
        same = a == b
        b[same] = (a[same] + 1 + rng.integers(0, m - 1, int(same.sum()))) % m
        p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
        winner = np.where(rng.random(batch) < 0.1, "tie", np.where(rng.random(batch) < p, "model_a", "model_b"))
        prompt = look * batch // 5 + rng.integers(0, batch // 5, batch)
        out.append(pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner, "prompt": prompt}))
    return out


def per_look(kind: str, batches: list, m: int) -> list[float]:
    import pandas as pd

    import llm_power as lp

    times = []
    seen: list = []
    if kind.startswith("monitor"):
        opts = {"monitor": {}, "monitor, prompts": {"cluster": "prompt"},
                "monitor, Bonferroni": {"correction": "bonferroni", "max_models": m},
                "monitor, betting": {"method": "betting"}}[kind]
        mon = lp.ArenaMonitor(tuned_for=sum(len(b) for b in batches), **opts)
    for batch in batches:
        seen.append(batch)
        t = time.process_time()
        if kind.startswith("monitor"):
            mon.update(batch)
        else:
            frame = pd.concat(seen, ignore_index=True)
            if kind == "arena_diagnose":
                lp.arena_diagnose(frame, pairs="all", cluster="prompt")
            else:
                lp.bradley_terry(frame)
        times.append(time.process_time() - t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    cases = [(50, 20, 5_000)] + ([] if args.quick else [(300, 10, 100_000)])
    kinds = ["monitor", "monitor, prompts", "monitor, Bonferroni", "monitor, betting", "arena_diagnose",
             "bradley_terry"]
    rows = []
    for m, looks, batch in cases:
        batches = arena(m, looks, batch)
        for kind in kinds:
            if m > 100 and kind == "monitor, betting":
                continue  # a Python sequence per pair: 44,850 of them
            times = per_look(kind, batches, m)
            rows.append([f"{m} x {looks} looks of {batch:,}", kind, f"{1000 * statistics.median(times):.1f}",
                         f"{1000 * times[-1]:.1f}", f"{sum(times):.2f}"])
            print(rows[-1], flush=True)
    print()
    print(f"CPU seconds on {machine()}.")
    print(md_table(["arena", "per look", "median ms", "last look ms", "all looks CPU-s"], rows))


if __name__ == "__main__":
    main()
