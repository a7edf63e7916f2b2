"""Bradley-Terry with the prompt-clustered sandwich on battle Parquet files: DuckDB
(``llm_power.engines.bradley_terry_table``: SQL counts of the outcome cells, then the battles in shards
by ``hash(prompt) mod K`` for the clustered meat) against ``lp.bradley_terry_shards`` (engine local) on
the same files, one file a shard.

The battles are those of benchmarks/arena_shards.py (300 models, uneven exposure, 10% ties, prompts
of 5 battles: the clusters), written once as Parquet files of 10^6 battles (dictionary-encoded model
and winner columns, int64 prompt ids) before anything is timed. Each row is measured in a fresh
process: wall time, CPU time (user + system, every thread), peak resident memory (``ru_maxrss``).

Run: ``python benchmarks/arena_engines.py [--sizes 10000000,100000000] [--engines duckdb,local]
[--folder DIR]`` (``LLM_POWER_DUCKDB_MEMORY`` bounds DuckDB, default 1GB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, machine, md_table  # noqa: E402
from arena_shards import shards  # noqa: E402


def write(n: int, folder: Path) -> list[str]:
    """The battles as Parquet files of 10^6 (written once per size)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = folder / f"battles-{n}"
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for shard in shards(n):
        path = out / f"part-{shard.k:04d}.parquet"
        if not path.exists():
            pq.write_table(pa.Table.from_pandas(shard(), preserve_index=False), path)
        paths.append(str(path))
    return paths


def child(folder: str, engine: str, cluster: bool) -> dict[str, float]:
    """One measured fit in this (fresh) process."""
    import resource
    import time
    import warnings

    warnings.simplefilter("ignore")
    paths = sorted(str(p) for p in Path(folder).glob("*.parquet"))
    start = time.perf_counter()
    if engine == "duckdb":
        from llm_power.engines import bradley_terry_table

        res = bradley_terry_table(folder, cluster="prompt" if cluster else None)
    else:
        import llm_power as lp

        res = lp.bradley_terry_shards(paths, cluster="prompt" if cluster else None)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024,
            "battles": float(res.n_battles), "clusters": float(res.n_clusters or 0),
            "ratings": res.ratings.tolist(), "se": np.sqrt(np.diag(np.asarray(res.covariance))).tolist()}  # type: ignore[dict-item]


def measure(folder: str, engine: str, cluster: bool) -> dict[str, float]:
    code = (f"import sys, json; sys.path.insert(0, {os.path.dirname(__file__)!r}); from arena_engines import child; "
            f"print(json.dumps(child({folder!r}, {engine!r}, {cluster!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000000")
    parser.add_argument("--engines", default="duckdb,local")
    parser.add_argument("--folder", default=None, help="where the Parquet files are written (default: a temp dir)")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="arena-engines-"))
    print(machine())
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        paths = write(n, folder)
        data = str(Path(paths[0]).parent)
        size = sum(Path(p).stat().st_size for p in paths) / 2**20
        got = {}
        for cluster in (False, True):
            for engine in args.engines.split(","):
                r = measure(data, engine, cluster)
                got[engine, cluster] = r
                rows.append([f"{n:,} x 300 ({size:,.0f} MB Parquet)", engine, "prompt" if cluster else "none",
                             fmt_s(r["wall"]), fmt_s(r["cpu"]), f"{r['rss']:,.0f} MB",
                             f"{int(r['clusters']):,}" if cluster else "-"])
            if ("duckdb", cluster) in got and ("local", cluster) in got:
                a, b = got["duckdb", cluster], got["local", cluster]
                ra, rb = np.asarray(a["ratings"]), np.asarray(b["ratings"])
                sa, sb = np.asarray(a["se"]), np.asarray(b["se"])
                print(f"n={n:,} cluster={cluster}: max |rating diff| {np.max(np.abs(ra - rb)):.2e}, "
                      f"max relative se diff {np.max(np.abs(sa - sb) / sb):.2e}", flush=True)
    print(md_table(["battles", "engine", "cluster", "wall", "CPU", "peak RSS", "clusters"], rows))


if __name__ == "__main__":
    main()
