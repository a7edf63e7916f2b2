"""pass@k resampling intervals: the Bayesian bootstrap of ``pass_at_k_ci`` against a naive numpy
bootstrap, the ordinary bootstrap it replaced and the default t interval, CPU seconds in one process
(interleaved, best of 7).

1,000 questions x 20 samples (a bool matrix; each question its own pass rate, Beta(0.5, 0.5)),
k = 1, 5, 10 at once, 2,000 resamples.

- naive: what a user writes -- the unbiased per-question pass@k (``1 - C(n-c, k) / C(n, k)``), then
  2,000 resamples of question indices and the 2.5/97.5 percentiles.
- old opt-in: the ordinary bootstrap that ``method="bootstrap"`` gave before (multinomial counts of
  the distinct per-question values, numpy's exact binomial draws), through the same steps as
  ``pass_at_k_ci``; it still gives ``compare_pass_at_k``'s band.
- ``pass_at_k_ci(x, [1, 5, 10], method="bayesian_bootstrap", n_resamples=2000)``: Dirichlet weights
  on the distinct per-question values, one Gamma draw each.
- ``pass_at_k_ci(x, [1, 5, 10])``: the default t interval.

CPU time (``time.process_time``), not wall time: the machine may be shared. Run:
``python benchmarks/passk_bootstrap.py [--repeat R] [--questions Q --samples S]`` (``--questions
10000 --samples 200`` is the size of ``benchmarks/passk.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, md_table  # noqa: E402

N_QUESTIONS, N_SAMPLES, KS, B = 1_000, 20, (1, 5, 10), 2_000


def data(questions: int, samples: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    p = rng.beta(0.5, 0.5, questions)
    return rng.random((questions, samples)) < p[:, None]


def naive(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy.special import comb

    n = x.shape[1]
    c = x.sum(axis=1)
    ks = np.array(KS)
    per_question = 1.0 - comb(n - c[:, None], ks) / comb(n, ks)
    gen = np.random.default_rng(0)
    means = per_question[gen.integers(0, per_question.shape[0], size=(B, per_question.shape[0]))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975], axis=0)
    return low, high


def old_bootstrap(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The steps of the former ``pass_at_k_ci(method="bootstrap")``: the ordinary bootstrap of the
    distinct per-question values (multinomial counts).
    """
    from llm_power.samples._passk import k_values, mean_and_se, per_question_values, sample_counts
    from llm_power.samples._resampling import bootstrap_means

    n, c = sample_counts(x)
    ks = k_values(list(KS), n)
    values = per_question_values("pass@k", n, c, ks)
    mean_and_se(values, None)
    reps = bootstrap_means(values, None, B, np.random.default_rng(0))
    low, high = np.quantile(reps, [0.025, 0.975], axis=0)
    return low, high


def cpu_interleaved(jobs: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Each job ``repeat`` times, round-robin: its best CPU time and its last result."""
    times = {name: float("inf") for name in jobs}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in jobs.items():
            start = time.process_time()
            results[name] = fn()
            times[name] = min(times[name], time.process_time() - start)
    return times, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--questions", type=int, default=N_QUESTIONS)
    parser.add_argument("--samples", type=int, default=N_SAMPLES)
    args = parser.parse_args()
    import llm_power as lp

    x = data(args.questions, args.samples)
    ks = list(KS)
    jobs: dict[str, Callable[[], Any]] = {
        "naive numpy bootstrap": lambda: naive(x),
        "old opt-in bootstrap (multinomial)": lambda: old_bootstrap(x),
        "llm-power Bayesian bootstrap": lambda: lp.pass_at_k_ci(x, ks, method="bayesian_bootstrap", n_resamples=B,
                                                                rng=0).confidence_interval(),
        "llm-power t interval (default)": lambda: lp.pass_at_k_ci(x, ks).confidence_interval(),
    }
    for fn in jobs.values():  # imports and first-call costs out of the timings
        fn()
    times, results = cpu_interleaved(jobs, args.repeat)
    base = times["naive numpy bootstrap"]
    rows = [[name, fmt_s(t), f"{base / t:.1f}x"] for name, t in times.items()]
    print(f"### pass@k at k = {', '.join(map(str, KS))}: {args.questions:,} questions x {args.samples} samples, "
          f"{B:,} resamples (CPU time, best of {args.repeat})\n")
    print(md_table(["interval", "CPU time", "naive / this"], rows))
    print("\nThe 95% intervals (low, high per k):")
    for name, (low, high) in results.items():
        pairs = ", ".join(f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(np.asarray(low), np.asarray(high), strict=True))
        print(f"- {name}: {pairs}")


if __name__ == "__main__":
    main()
