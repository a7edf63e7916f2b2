"""A live subset estimate (``SubsetSequence``) by the number of items added: linear, not quadratic.

``SubsetSequence(target="benchmark")`` bets on the items without replacement (Waudby-Smith &
Ramdas 2024): each bet needs the mean of the items not yet drawn, S_(i-1). Before issue 40 it was
summed once per block of 128 rows (quadratic: 10^6 items took 42 s); now the drawn items' running
sum is formed once per ``add``. Cases: 10^4 ... 10^6 items of a 0/1 benchmark, added in one call
and in calls of 1,000 items (a live run), with the time per item, which stays flat when the cost is
linear. The numbers of the two ways of adding are checked equal.

Run: ``.venv/bin/python benchmarks/subset_sequence.py`` (under a minute).
"""

from __future__ import annotations

import time

import numpy as np
from _common import md_table

import llm_power as lp


def run(n: int, step: int | None) -> tuple[float, object]:
    x = (np.random.default_rng(n).random(n) < 0.7).astype(float)
    seq = lp.SubsetSequence(n, half_width=1e-9, target="benchmark")
    start = time.process_time()
    if step is None:
        res = seq.add(x)
    else:
        for k in range(0, n, step):
            res = seq.add(x[k:k + step])
    return time.process_time() - start, res


def main() -> None:
    rows = []
    for n in (10_000, 100_000, 300_000, 1_000_000):
        whole, r1 = run(n, None)
        live, r2 = run(n, 1000)
        assert (r1.ci.low, r1.ci.high) == (r2.ci.low, r2.ci.high)
        rows.append([f"{n:,}", f"{whole:.3f}", f"{1e6 * whole / n:.2f}", f"{live:.3f}", f"{1e6 * live / n:.2f}"])
    print(md_table(["items", "one add (CPU-s)", "µs per item", "adds of 1,000 (CPU-s)", "µs per item"], rows))


if __name__ == "__main__":
    main()
