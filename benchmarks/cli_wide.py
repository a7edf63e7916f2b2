"""The command line on a wide Parquet leaderboard: M models x N items, adjacent pairs, every regime.

Writes a wide Parquet table (an item column, a category column with 14 clusters and one 0/1
column per model) and runs ``llm-power diagnose FILE --cluster category --correction holm
--anytime --quiet --parquet pairs.parquet`` in a fresh process; reports the wall time and the
command's peak RSS (its own process: it reads a wide table without worker processes).

Run: ``.venv/bin/python benchmarks/cli_wide.py [M [N]]`` (default 4,500 x 12,032, the issue's
target: at most 30 s and 2 GB).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    """Print time and peak RSS of the command."""
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 4_500
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 12_032
    rng = np.random.default_rng(0)
    skill = rng.uniform(0.3, 0.8, m)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "leaderboard.parquet"
        columns = {"item": pa.array([f"q{i}" for i in range(n)]),
                   "category": pa.array([f"c{i % 14}" for i in range(n)])}
        for k in range(m):
            columns[f"org/model-{k:04d}"] = pa.array((rng.random(n) < skill[k]).astype(np.int8))
        pq.write_table(pa.table(columns), path)
        cli = Path(sys.executable).with_name("llm-power")
        start = time.perf_counter()
        subprocess.run([str(cli), "diagnose", str(path), "--cluster", "category", "--correction", "holm", "--anytime",
                        "--quiet", "--parquet", str(Path(tmp) / "pairs.parquet")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # notes (few clusters) not shown
        elapsed = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size = path.stat().st_size / 1e6
    print(f"{m:,} models x {n:,} items ({size:.0f} MB Parquet), adjacent pairs, Holm + 14 clusters (1,000 "
          f"resamples) + anytime: {elapsed:.1f} s, peak RSS {rss:,.0f} MB")


if __name__ == "__main__":
    main()
