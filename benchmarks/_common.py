"""Shared helpers of the side-by-side benchmarks: interleaved best-of timing, a loaded machine, and
Markdown output.

Two conditions are measured: an idle machine and a loaded one. ``loaded(k)`` starts ``k`` busy
processes (default 16 on this 2-core machine: a load average of about 16, as on a shared CI
runner) for the duration of the block; only the ratios measured in the same run count.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["best_of", "interleaved", "loaded", "md_table", "peak_rss_mb", "ratio"]

SPIN = "import os\nos.nice(0)\nwhile True:\n    pass\n"


@contextlib.contextmanager
def loaded(k: int | None) -> Iterator[None]:
    """``k`` busy processes for the duration of the block (``None`` or 0: an idle machine)."""
    if not k:
        yield
        return
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(k)]  # noqa: S603
    try:
        time.sleep(2.0)  # let the load settle
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The best wall-clock time of ``repeat`` calls and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def interleaved(jobs: dict[str, Callable[[], Any]], repeat: int = 3) -> tuple[dict[str, float], dict[str, Any]]:
    """Each job ``repeat`` times, round-robin (so a change of machine load hits all of them alike):
    the best time of each and its last result.
    """
    times = {name: float("inf") for name in jobs}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in jobs.items():
            start = time.perf_counter()
            results[name] = fn()
            times[name] = min(times[name], time.perf_counter() - start)
    return times, results


def ratio(ours: float, theirs: float) -> str:
    """'0.25x' style: our time over theirs (below 1: llm-power is faster)."""
    return f"{ours / theirs:.2f}x"


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_s(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def machine() -> str:
    import numpy as np

    return f"{os.cpu_count()} cores, numpy {np.__version__}, Python {sys.version.split()[0]}"
