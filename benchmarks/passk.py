"""pass@k intervals: llm-power against a naive numpy bootstrap and scorio, side by side in one
process (interleaved, best of 3).

10,000 problems x 200 samples (a bool matrix; each problem its own pass rate, Beta(0.5, 0.5)),
k = 10, 2,000 bootstrap resamples.

- llm-power ``pass_at_k_ci(x, 10, method="bayesian_bootstrap", n_resamples=2000)`` on the bool
  matrix (and on the same matrix as float64), and the default t interval. The Bayesian bootstrap
  against the ordinary one it replaced, in CPU time: ``benchmarks/passk_bootstrap.py``.
- naive: what a user writes -- the unbiased per-problem pass@k (``1 - C(n-c, k) / C(n, k)``),
  then 2,000 resamples of problem indices and the 2.5/97.5 percentiles.
- scorio ``eval.pass_at_k_ci`` (its Bayesian Beta-posterior interval; a different interval, timed
  as the interval another library gives for the same question).

Run: ``python benchmarks/passk.py [--load K]`` from the bench environment.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, interleaved, loaded, md_table  # noqa: E402

N_PROBLEMS, N_SAMPLES, K, B = 10_000, 200, 10, 2_000


def data() -> np.ndarray:
    rng = np.random.default_rng(0)
    p = rng.beta(0.5, 0.5, N_PROBLEMS)
    return rng.random((N_PROBLEMS, N_SAMPLES)) < p[:, None]


def naive(x: np.ndarray) -> tuple[float, float]:
    from scipy.special import comb

    n = x.shape[1]
    c = x.sum(axis=1)
    per_problem = 1.0 - comb(n - c, K) / comb(n, K)
    gen = np.random.default_rng(0)
    means = per_problem[gen.integers(0, per_problem.size, size=(B, per_problem.size))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=16)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import llm_power as lp

    x = data()
    xf = x.astype(float)
    jobs = {
        "llm-power Bayesian bootstrap (bool input)": lambda: lp.pass_at_k_ci(x, K, method="bayesian_bootstrap", n_resamples=B, rng=0),
        "llm-power Bayesian bootstrap (float input)": lambda: lp.pass_at_k_ci(xf, K, method="bayesian_bootstrap", n_resamples=B, rng=0),
        "llm-power t interval (bool input)": lambda: lp.pass_at_k_ci(x, K),
        "naive numpy bootstrap": lambda: naive(x),
    }
    try:
        from scorio.eval import pass_at_k_ci as scorio_ci

        jobs["scorio pass_at_k_ci (Bayesian)"] = lambda: scorio_ci(x.astype(np.int64), K)
    except ImportError:  # pragma: no cover
        pass
    jobs["llm-power Bayesian bootstrap (bool input)"]()  # imports
    rows = []
    for load in (None, args.load):
        with loaded(load):
            times, results = interleaved(jobs, repeat=3)
        base = times["naive numpy bootstrap"]
        for name, t in times.items():
            rows.append([name, "loaded" if load else "idle", fmt_s(t), f"{base / t:.1f}x"])
    ours = results["llm-power Bayesian bootstrap (bool input)"].confidence_interval()
    low, high = results["naive numpy bootstrap"]
    print(f"### pass@{K}, {N_PROBLEMS:,} problems x {N_SAMPLES} samples, {B:,} resamples\n")
    print(md_table(["interval", "machine", "time", "naive / this"], rows))
    print(f"\nThe intervals: llm-power [{float(ours.low):.4f}, {float(ours.high):.4f}], naive [{low:.4f}, {high:.4f}] "
          "(the same first-order distribution, other draws).")


if __name__ == "__main__":
    main()
