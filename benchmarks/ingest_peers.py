"""Ingest side by side: lm-eval ``--log_samples`` folders into a models x items score matrix, by
llm-power against polars ``scan_ndjson`` and a plain orjson loop, on the same files in one run.

The folders are those of ``benchmarks/ingest.py`` (12,032 docs per model, lines shaped like the real
lm-eval file). Every path ends with the same matrix (checked):

- llm-power: ``read_frame(folder, cluster="type")`` + ``align_results`` (what ``llm-power diagnose``
  runs: format detection, the per-item metric, the category as cluster, validation, alignment).
- polars: ``pl.scan_ndjson`` of every samples file with the three needed fields in an explicit
  schema (``doc_id``, ``exact_match``, ``doc.type``), the model taken from the folder, then a
  pivot to the matrix (no validation, no clusters coded).
- orjson: one process, ``orjson.loads`` per line, the three fields picked out, filled into a
  preallocated matrix (the fastest plain parse in Python).

Each path runs in a fresh interpreter; wall time and CPU seconds (the process and its children)
are reported; the loaded rows run under 16 busy processes. ``CPU / MB`` is what a shared runner
pays; the ratio column is the peer's CPU over llm-power's (above 1: llm-power uses less).

``--real-lines``: every line is a line of the real lm-eval file in ../shared/data/formats/lm_eval
(3.7 KB on average: a model's long response, JSON escapes, LaTeX, the document's nested fields),
cycled with the doc id and the score rewritten (``ingest.make(..., real=True)``).

Run: ``python benchmarks/ingest_peers.py [M [FOLDER]] [--real-lines] [--rounds R] [--no-loaded]``
(default 200 folders, 1.7 GB; with ``--real-lines`` 100 folders, 4.5 GB).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _common import loaded, md_table  # noqa: E402
from ingest import ITEMS, make  # noqa: E402

PRELUDE = r"""
import json, resource, sys, time
from pathlib import Path
import numpy as np
folder = Path(sys.argv[1])
files = sorted(folder.glob("*/samples_*.jsonl"))
def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
start, cpu0 = time.perf_counter(), cpu()
"""
CASES = {
    "llm-power": r"""
from llm_power.io import align_results
from llm_power.io.harness import read_frame
aligned = align_results(read_frame(folder, cluster="type"))
x = aligned.scores
""",
    "polars scan_ndjson": r"""
import polars as pl
schema = {"doc_id": pl.Int64, "exact_match": pl.Float64, "doc": pl.Struct({"type": pl.String})}
frames = [pl.scan_ndjson(f, schema=schema).select(pl.col("doc_id"), pl.col("exact_match"),
          pl.col("doc").struct.field("type").alias("type")).with_columns(pl.lit(f.parent.name).alias("model"))
          for f in files]
df = pl.concat(frames).collect()
wide = df.pivot(on="model", index="doc_id", values="exact_match").sort("doc_id")
x = wide.drop("doc_id").to_numpy()
""",
    "orjson loop": r"""
import orjson
x = np.full((12032, len(files)), np.nan)
for j, f in enumerate(files):
    with open(f, "rb") as fh:
        for line in fh:
            rec = orjson.loads(line)
            x[rec["doc_id"], j] = rec["exact_match"]
            rec["doc"]["type"]
""",
}
EPILOGUE = r"""
elapsed, used = time.perf_counter() - start, cpu() - cpu0
x = np.asarray(x, dtype=float)
digest = float(np.nansum(np.sort(x, axis=1) * np.arange(1, x.shape[1] + 1)))
print(json.dumps({"seconds": elapsed, "cpu": used, "shape": list(x.shape), "digest": digest}))
"""


def run(folder: Path, name: str) -> dict[str, float]:
    code = PRELUDE + CASES[name] + EPILOGUE
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, check=True)  # noqa: S603
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="?", type=int, default=None, help="model folders (default 200; 100 "
                        "with --real-lines)")
    parser.add_argument("folder", nargs="?", default=None, help="write the data there once and reuse it")
    parser.add_argument("--real-lines", action="store_true", help="lines of the real lm-eval file (3.7 KB each, "
                        "responses, escapes, LaTeX) instead of the 700-byte synthetic ones")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds on the idle machine (each "
                        "path's best is reported, every round's CPU ratio is printed)")
    parser.add_argument("--no-loaded", action="store_true", help="skip the run under 16 busy processes")
    args = parser.parse_args()
    models = args.models or (100 if args.real_lines else 200)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.folder or tmp)
        size = make(folder, models, real=args.real_lines)
        rows, rounds = [], []
        for load in (None,) if args.no_loaded else (None, 16):
            with loaded(load):
                best: dict[str, dict[str, float]] = {}
                for _ in range(args.rounds if not load else 1):  # interleaved; best of the rounds
                    cpu = {}
                    for name in CASES:
                        res = run(folder, name)
                        cpu[name] = res["cpu"]
                        if name not in best or res["cpu"] < best[name]["cpu"]:
                            best[name] = res
                    rounds.append(("loaded" if load else "idle", cpu))
            digests = {r["digest"] for r in best.values()}
            assert len(digests) == 1 and len({tuple(r["shape"]) for r in best.values()}) == 1, best
            ours = best["llm-power"]
            for name, res in best.items():
                rows.append([name, "loaded" if load else "idle", f"{res['seconds']:.2f} s", f"{res['cpu']:.2f} s",
                             f"{size / res['cpu']:.0f} MB", f"{res['cpu'] / ours['cpu']:.2f}x",
                             f"{res['seconds'] / ours['seconds']:.2f}x"])
    kind = "real lm-eval lines" if args.real_lines else "synthetic lines"
    print(f"### {models} lm-eval folders x {ITEMS:,} docs, {kind} ({size:,.0f} MB of JSONL) into the score matrix\n")
    print(md_table(["path", "machine", "wall", "CPU (incl. children)", "MB per CPU-second",
                    "CPU / llm-power's", "wall / llm-power's"], rows))
    print("\nAll three paths give the same matrix (checked). llm-power's CPU over polars', round by round: "
          + ", ".join(f"{machine} {cpu['llm-power'] / cpu['polars scan_ndjson']:.2f}x" for machine, cpu in rounds)
          + ".")


if __name__ == "__main__":
    main()
