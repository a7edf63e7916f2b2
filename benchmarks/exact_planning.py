"""Exact N* and exact MDE of McNemar's exact test: the bracketed search vs the scan it replaced.

Cases
-----
- exact N* (``sample_size(..., method="exact")``) for 0.5-point gaps, where N* is 29,000-157,000
  items, and for a 5-point gap (N* about 1,000);
- exact MDE (``mde(..., method="exact")``) at n = 10,000, 50,000 and 200,000.

Competitors
-----------
- "before": the implementation before issue 13, copied below -- every n scanned upward from half
  of Connor's N* (one convolution step per n, a BLAS dot product per n), and for the MDE a full
  exact-power evaluation at every root-finding step;
- Connor's normal approximation, for scale (what the exact N* is compared with).

Both exact N* versions return the same integers (checked here and, on many designs, in
``tests/planning/test_planning.py``); the exact MDEs agree to about 1e-15 relative (the new power sums
only the counts with probability >= 1e-290).

Run: ``.venv/bin/python benchmarks/exact_planning.py`` (several minutes: the old scan is slow).
The old scan's time depends on the machine's load: its per-n BLAS dot product runs OpenBLAS
threads, which on a busy 2-core machine cost 10-50x more than the arithmetic; run with
``OPENBLAS_NUM_THREADS=1`` to see the scan's own O(N*^2) cost. The new search uses no BLAS call
in its loops and is unaffected.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import optimize, stats

import llm_power as lp
from llm_power._kernel.exact import exact_power_paired, rejection_probability
from llm_power.planning import discordance_from_baseline
from llm_power.planning._designs import paired_parameters


def old_exact_sample_size(p_a: float, p_b: float, rho: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The pre-issue-13 exact N* (two-sided), verbatim apart from the parameter handling."""
    p_d, delta, p10, _ = paired_parameters(p_a, p_b, rho, None)
    z_a, z_b = -stats.norm.ppf(alpha / 2), stats.norm.ppf(power)
    connor = (z_a * math.sqrt(p_d) + z_b * math.sqrt(p_d - delta * delta)) ** 2 / (delta * delta)
    start = max(1, int(0.5 * connor))
    size = 4 * start + 64
    reject = rejection_probability(np.arange(size), p10 / p_d, alpha, "two-sided")
    pmf = np.zeros(size)
    pmf[: start + 1] = stats.binom.pmf(np.arange(start + 1), start, p_d)
    n = start
    while True:
        if float(pmf[: n + 1] @ reject[: n + 1]) >= power:
            return n
        n += 1
        if n + 1 >= size:
            size *= 2
            reject = rejection_probability(np.arange(size), p10 / p_d, alpha, "two-sided")
            pmf = np.concatenate([pmf, np.zeros(size - pmf.size)])
        shifted = pmf[:n] * p_d
        pmf[: n + 1] *= 1.0 - p_d
        pmf[1 : n + 1] += shifted


def old_exact_mde(n: int, p: float, rho: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The pre-issue-13 exact MDE: root-finding with a full exact-power evaluation per step."""
    p_d = discordance_from_baseline(p, rho)

    def shortfall(d: float) -> float:
        return power - float(exact_power_paired(np.array([n]), p_d, (p_d + d) / 2.0, alpha, "two-sided")[0])

    return float(optimize.brentq(shortfall, 1e-9, p_d - 1e-12, xtol=1e-12, rtol=1e-12))


def timed(func, *args, repeat: int = 1, **kwargs) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}, llm-power {lp.__version__}")
    print("\nexact N* (two-sided, alpha 0.05, power 0.8)")
    print(f"  {'design (p_A, p_B, rho)':<24}{'Connor':>9}{'exact N*':>10}{'new (s)':>10}{'before (s)':>12}{'speed-up':>10}")
    for p_a, p_b, rho in [(0.65, 0.60, 0.3), (0.90, 0.895, 0.5), (0.80, 0.795, 0.7), (0.80, 0.795, 0.55),
                          (0.80, 0.795, 0.5), (0.70, 0.695, 0.5), (0.50, 0.495, 0.0)]:
        connor = lp.sample_size(p_a, p_b, rho=rho, method="connor")
        t_new, n_new = timed(lp.sample_size, p_a, p_b, rho=rho, method="exact", repeat=3)
        t_old, n_old = timed(old_exact_sample_size, p_a, p_b, rho)
        same = "" if n_new == n_old else f"  DIFFERENT: before {n_old}"
        print(f"  ({p_a:.3f}, {p_b:.3f}, {rho:.2f})    {connor:>9,}{n_new:>10,}{t_new:>10.3f}{t_old:>12.2f}"
              f"{t_old / t_new:>9.0f}x{same}")
    print("\nexact MDE (two-sided, alpha 0.05, power 0.8)")
    print(f"  {'n, p, rho':<24}{'MDE (pts)':>10}{'new (s)':>10}{'before (s)':>12}{'speed-up':>10}{'rel. diff':>11}")
    for n, p, rho in [(10_000, 0.8, 0.5), (50_000, 0.8, 0.5), (200_000, 0.8, 0.5)]:
        t_new, d_new = timed(lp.mde, n, p=p, rho=rho, method="exact", repeat=3)
        t_old, d_old = timed(old_exact_mde, n, p, rho)
        diff = abs(d_new - d_old) / d_old
        print(f"  {f'{n:,}, {p}, {rho}':<24}{100 * d_new:>10.4f}{t_new:>10.3f}{t_old:>12.2f}{t_old / t_new:>9.0f}x"
              f"{diff:>11.1e}")


if __name__ == "__main__":
    main()
