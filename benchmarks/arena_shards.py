"""Bradley-Terry at 10^8 battles x 300 models with the prompt-clustered sandwich, from shards generated
on the fly (``lp.bradley_terry_shards``), on this machine and on a local Dask cluster; the in-memory
``lp.bradley_terry`` at 10^7 for comparison.

Synthetic LMArena-like battles: 300 models with normal log-strengths, uneven exposure (Dirichlet
model weights), 10% ties, and prompts of 5 battles on average (10^8 battles: 2 x 10^7 prompts, the
clusters). A shard is 10^6 battles of its own prompts, generated from (seed, shard number) when it is
asked for -- the battles never sit in memory together -- with the columns a Parquet file of battles
would give: dictionary-encoded (categorical) model and winner columns, int64 prompt ids. Each row is
measured in a fresh process: wall time of the fit, CPU time (the driver's, plus the workers' with
Dask), and peak resident memory (``ru_maxrss``: the driver's, and the largest worker's with Dask).

Run: ``python benchmarks/arena_shards.py [--sizes 10000000,100000000] [--engines local,dask]
[--in-memory 10000000]`` (10^8 takes several minutes per engine on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, machine, md_table  # noqa: E402

MODELS = 300
SHARD = 1_000_000
BATTLES_PER_PROMPT = 5


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` of the arena with seed ``seed``: ``n`` battles over its own ``n / 5`` prompts."""

    seed: int
    k: int
    n: int = SHARD
    m: int = MODELS

    def __call__(self):  # noqa: ANN204
        import pandas as pd

        world = np.random.default_rng(self.seed)
        theta = world.normal(0, 1, self.m)
        exposure = world.dirichlet(np.full(self.m, 2.0))
        rng = np.random.default_rng([self.seed, self.k])
        n = self.n
        a = rng.choice(self.m, n, p=exposure)
        b = rng.choice(self.m, n, p=exposure)
        same = a == b
        b[same] = (a[same] + 1 + rng.integers(0, self.m - 1, int(same.sum()))) % self.m
        p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
        outcome = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
        prompts = n // BATTLES_PER_PROMPT
        names = [f"model-{j:03d}" for j in range(self.m)]
        return pd.DataFrame({
            "model_a": pd.Categorical.from_codes(a.astype(np.int16), categories=names),
            "model_b": pd.Categorical.from_codes(b.astype(np.int16), categories=names),
            "winner": pd.Categorical.from_codes(outcome.astype(np.int8), categories=["model_a", "model_b", "tie"]),
            "prompt": self.k * prompts + rng.integers(0, prompts, n)})


def shards(n: int, seed: int = 0) -> list[Shard]:
    return [Shard(seed, k, min(SHARD, n - k * SHARD)) for k in range(-(-n // SHARD))]


def child(n: int, engine: str) -> dict[str, float]:
    """One measured fit in this (fresh) process."""
    import resource
    import time
    import warnings

    import llm_power as lp

    warnings.simplefilter("ignore")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    out: dict[str, float] = {}
    if engine == "in-memory":
        import pandas as pd

        frame = pd.concat([s() for s in shards(n)], ignore_index=True)
        start = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu0 = usage.ru_utime + usage.ru_stime
        res = lp.bradley_terry(frame, cluster="prompt")
    elif engine == "local":
        start = time.perf_counter()
        res = lp.bradley_terry_shards(shards(n), cluster="prompt")
    else:
        from distributed import Client, LocalCluster

        def worker_usage() -> list[float]:
            import resource as r

            u = r.getrusage(r.RUSAGE_SELF)
            return [u.ru_utime + u.ru_stime, u.ru_maxrss / 1024]

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1") as cluster, Client(cluster) as client:
            before = client.run(worker_usage)
            start = time.perf_counter()
            res = lp.bradley_terry_shards(shards(n), cluster="prompt", engine="dask", scheduler=client)
            wall = time.perf_counter() - start
            after = client.run(worker_usage)
        out["workers_cpu"] = sum(after[w][0] - before[w][0] for w in after)
        out["worker_rss"] = max(after[w][1] for w in after)
        start = time.perf_counter() - wall
    out["wall"] = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu"] = usage.ru_utime + usage.ru_stime - cpu0 + out.get("workers_cpu", 0.0)
    out["rss"] = usage.ru_maxrss / 1024
    out["clusters"] = float(res.n_clusters or 0)
    out["battles"] = float(res.n_battles)
    out["ratings"] = res.ratings.tolist()  # type: ignore[assignment]
    out["se01"] = res.difference_se(res.models[0], res.models[1])
    return out


def measure(n: int, engine: str) -> dict[str, float]:
    run = subprocess.run([sys.executable, __file__, "--child", str(n), engine], capture_output=True, text=True,  # noqa: S603
                         check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000000,100000000")
    parser.add_argument("--engines", default="local,dask")
    parser.add_argument("--in-memory", type=int, default=10_000_000)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return
    rows, ref = [], {}
    jobs = [(args.in_memory, "in-memory")] if args.in_memory else []
    jobs += [(int(float(s)), e) for s in args.sizes.split(",") for e in args.engines.split(",")]
    for n, engine in jobs:
        r = measure(n, engine)
        print(f"{n:,} {engine}: {r['wall']:.1f} s", file=sys.stderr, flush=True)
        agree = ""
        if n in ref:
            agree = f"{np.max(np.abs(np.array(r['ratings']) - ref[n])):.0e}"
        else:
            ref[n] = np.array(r["ratings"])
        rss = f"{r['rss']:,.0f} MB" + (f" (workers {r['worker_rss']:,.0f} MB each at most)" if "worker_rss" in r else "")
        what = "`bradley_terry` (one table)" if engine == "in-memory" else f"`bradley_terry_shards`, {engine}"
        rows.append([f"{n:,} x {MODELS}", what, f"{-(-n // SHARD)}", fmt_s(r["wall"]), fmt_s(r["cpu"]), rss,
                     f"{int(r['clusters']):,}", agree])
    print(f"### Bradley-Terry with the prompt-clustered sandwich, {MODELS} models, 5 battles per prompt\n")
    print(md_table(["battles x models", "fit", "shards", "wall", "CPU", "peak RSS", "prompts",
                    "max rating diff vs first row of its size"], rows))
    print(f"\n{machine()}. Each row in a fresh process; shards of {SHARD:,} battles generated when read. The "
          "in-memory row holds the whole table (built before the clock starts; its memory counts).")


if __name__ == "__main__":
    main()
