"""The table engines against the local path on long Parquet boards, end to end (issue 48).

A board of M models x 12,032 items (MMLU-Pro's size) with 0/1 scores and 14 subject clusters is
written once as long Parquet (``model, item, score, subject``; 12 files, rows shuffled). Each engine
then runs ``llm-power diagnose BOARD --cluster subject --json OUT`` in a fresh process: "local" reads
the files with the local reader (columns, since this issue) and aligns the whole long table in
memory; "duckdb" reads them out of core with DuckDB and aligns item shards; "spark" and "ray" do the
same on a local Spark session / Ray cluster of 2 cores. Every engine's JSON must be the local one,
byte for byte (checked). Measured: wall time, and the CPU time and peak memory (PSS) of the whole
process tree (sampled: Spark's JVM and Python workers, Ray's raylet and workers included).

``--rows 100000000`` adds the DuckDB-only row of the issue: a 10^8-row long Parquet (1,000 models x
100,000 items) through DuckDB, whose peak RSS must stay below 2 GB.

Run: ``.venv/bin/python benchmarks/engines.py [--models 1000,4500] [--engines local,duckdb,spark,ray]
[--rows 100000000] [--folder DIR]`` (DIR keeps the generated boards between runs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, machine, md_table  # noqa: E402

ITEMS = 12_032
SUBJECTS = 14
FILES = 12


def make_board(folder: Path, models: int, items: int = ITEMS, seed: int = 0) -> Path:
    """The long Parquet board (written once; model by model so memory stays one model's rows x files)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = folder / f"board-{models}x{items}"
    if (out / "done").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    ability = np.linspace(0.3, 0.8, models)
    difficulty = rng.normal(0.0, 0.2, items)
    item_ids = pa.array([f"item-{i:05d}" for i in range(items)]).dictionary_encode()
    subject = pa.array([f"subject-{i % SUBJECTS:02d}" for i in range(items)]).dictionary_encode()
    writers = [pq.ParquetWriter(out / f"part-{k:02d}.parquet",
                                pa.schema([("model", pa.dictionary(pa.int32(), pa.string())),
                                           ("item", pa.dictionary(pa.int32(), pa.string())),
                                           ("score", pa.int8()),
                                           ("subject", pa.dictionary(pa.int32(), pa.string()))]))
               for k in range(FILES)]
    file_of_item = rng.integers(0, FILES, items)
    for start in range(0, models, 50):
        stop = min(models, start + 50)
        p = np.clip(ability[None, start:stop] - difficulty[:, None], 0.02, 0.98)
        x = (rng.random(p.shape) < p).astype(np.int8)  # items x block of models
        for k in range(FILES):
            rows = np.flatnonzero(file_of_item == k)
            m = stop - start
            names = pa.array([f"model-{j:05d}" for j in range(start, stop)]).dictionary_encode()
            table = pa.table({
                "model": names.take(pa.array(np.repeat(np.arange(m), rows.size))),
                "item": item_ids.take(pa.array(np.tile(rows, m))),
                "score": pa.array(x[rows].T.reshape(-1)),
                "subject": subject.take(pa.array(np.tile(rows, m))),
            })
            writers[k].write_table(table, row_group_size=1_000_000)
    for w in writers:
        w.close()
    (out / "done").write_text("ok\n")
    return out


CHILD = r"""
import json, resource, sys, time, contextlib, io, os
engine, board, out = sys.argv[1], sys.argv[2], sys.argv[3]
from pathlib import Path
from llm_power.cli.main import main
files = sorted(str(p) for p in Path(board).glob("*.parquet"))
args = ["diagnose", *(files if engine == "local" else [board]), "--cluster", "subject", "--json", out, "--quiet",
        "--engine", engine]
if engine == "spark":
    args += ["--master", "local[2]"]
if engine in ("ray",):
    args += ["--workers", "2"]
t0 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(args)
wall = time.perf_counter() - t0
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall": wall, "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
                  "rss": max(me.ru_maxrss, kids.ru_maxrss) / 1024}))
"""


def measure(engine: str, board: Path, out: Path, timeout: float) -> dict[str, float] | None:
    """Wall time, CPU time and peak memory of one run in a fresh process; None past ``timeout``.

    Memory and CPU are those of the whole process tree, sampled every 0.2 s (psutil): Spark's JVM and
    Python workers and Ray's raylet and workers count, not only the driver. Memory is the sum of the
    processes' proportional set sizes (PSS: a page shared by k processes counts 1/k in each, so Ray's
    shared-memory object store counts once). Without psutil: the driver's
    own ``ru_maxrss`` and CPU (and its reaped children's).
    """
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", PYTHONWARNINGS="ignore")
    proc = subprocess.Popen([sys.executable, "-c", CHILD, engine, str(board), str(out)],  # noqa: S603
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak, cpu, start = 0.0, {}, time.perf_counter()
    try:
        import psutil
    except ImportError:  # pragma: no cover - the benchmark venv has it
        psutil = None
    while proc.poll() is None:
        if time.perf_counter() - start > timeout:
            for child in (psutil.Process(proc.pid).children(recursive=True) if psutil else []):
                child.kill()
            proc.kill()
            proc.wait()
            return None
        if psutil is not None:
            try:
                tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
                total = 0.0
                for p in tree:
                    with contextlib.suppress(psutil.Error):
                        total += p.memory_full_info().pss  # shared pages (Ray's object store) counted once
                        t = p.cpu_times()
                        cpu[p.pid] = t.user + t.system
                peak = max(peak, total / 2**20)
            except psutil.Error:
                pass
        time.sleep(0.2)
    stdout, stderr = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"{engine} failed:\n{stderr[-3000:]}")
    r = json.loads(stdout.strip().splitlines()[-1])
    if psutil is not None and cpu:
        r["cpu"], r["rss"] = max(r["cpu"], sum(cpu.values())), max(r["rss"], peak)
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="1000,4500")
    parser.add_argument("--engines", default="local,duckdb,spark,ray")
    parser.add_argument("--rows", type=int, default=0, help="add the DuckDB row at this many rows (10^8)")
    parser.add_argument("--folder", default=None)
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per run before it is stopped")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="llm-power-engines-"))
    engines = args.engines.split(",")
    rows = []
    for m in (int(v) for v in args.models.split(",")):
        t0 = time.perf_counter()
        board = make_board(folder, m)
        print(f"board {m} x {ITEMS}: {m * ITEMS:,} rows ({time.perf_counter() - t0:.0f} s to write)", flush=True)
        reference = None
        for engine in engines:
            out = folder / f"{engine}-{m}.json"
            r = measure(engine, board, out, args.timeout)
            if r is None:
                rows.append([f"{m:,} x {ITEMS:,}", f"{m * ITEMS / 1e6:.0f} M", engine, f"> {args.timeout:.0f} s", "", "",
                             "(stopped)"])
                print(rows[-1], flush=True)
                continue
            data = json.dumps({k: v for k, v in json.loads(out.read_bytes()).items() if k != "source"}).encode()
            reference = reference if reference is not None else (engine, data)
            same = data == reference[1] if engine != reference[0] else True
            rows.append([f"{m:,} x {ITEMS:,}", f"{m * ITEMS / 1e6:.0f} M", engine, fmt_s(r["wall"]), fmt_s(r["cpu"]),
                         f"{r['rss']:,.0f} MB", "yes" if same else "NO"])
            print(rows[-1], flush=True)
            if not same:
                raise SystemExit(f"{engine}'s report differs from {reference[0]}'s")
    if args.rows:
        m, n = 1000, args.rows // 1000
        board = make_board(folder, m, items=n)
        r = measure("duckdb", board, folder / "duckdb-big.json", args.timeout)
        assert r is not None, "the 10^8-row DuckDB run did not finish in time"
        rows.append([f"{m:,} x {n:,}", f"{m * n / 1e6:.0f} M", "duckdb", fmt_s(r["wall"]), fmt_s(r["cpu"]),
                     f"{r['rss']:,.0f} MB", "(no local run)"])
        print(rows[-1], flush=True)
    print()
    print(machine())
    print(md_table(["board", "rows", "engine", "wall", "CPU (all processes)", "peak RSS (all processes)",
                    "report = local's"], rows))


if __name__ == "__main__":
    main()
