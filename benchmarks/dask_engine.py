"""The Dask engine against the local one on lm-eval ``--log_samples`` folders, end to end.

``diagnose_files(folder, engine=...)`` with 14 clusters, Holm and the anytime regime: "local"
reads the files in worker processes into one long table, aligns it and diagnoses the matrix;
"dask" starts a 2-worker ``LocalCluster``, reads and aligns item shards on the workers and
reduces them to sufficient statistics (the driver never holds the matrix). Each engine runs in a
fresh interpreter; the script checks that both give the same diagnosis.

Run: ``.venv/bin/python benchmarks/dask_engine.py [M [FOLDER]]`` (default 100 folders; FOLDER:
write the data there once and reuse it, as ``benchmarks/ingest.py`` does).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import make  # noqa: E402 - the same generated folders

CASE = r"""
import json, resource, sys, time, warnings
import numpy as np

def main():
    import llm_power as lp
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    diag = lp.diagnose_files([sys.argv[1]], engine=sys.argv[2], n_workers=2, cluster="type", correction="holm",
                             anytime=True, rng=0)
    elapsed = time.perf_counter() - start
    cols = {k: v.tolist() for k, v in diag.columns.items() if v.dtype.kind in "fiub"}
    print(json.dumps({"seconds": elapsed, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "n": diag.n, "models": diag.models, "unresolved": diag.n_unresolved, "columns": cols}))

if __name__ == "__main__":
    main()
"""


def run(folder: Path, engine: str) -> dict:
    """One engine in a fresh interpreter (the worker processes are its children)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(CASE)
    out = subprocess.run([sys.executable, fh.name, str(folder), engine], capture_output=True, text=True, check=True)
    Path(fh.name).unlink()
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    """Print the comparison."""
    models = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    keep = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(keep or tmp)
        size = make(folder, models)
        local, dask = run(folder, "local"), run(folder, "dask")
    assert local["models"] == dask["models"] and local["unresolved"] == dask["unresolved"], "the engines disagree"
    assert local["columns"] == dask["columns"], "the engines disagree"  # 0/1 scores: equal, not merely close
    print(f"{models} folders, {size:,.0f} MB of JSONL, {local['n']:,} items: the same diagnosis from both engines")
    for name, res in (("local (2 reader processes)", local), ("dask (LocalCluster, 2 workers)", dask)):
        print(f"  {name:<32} {res['seconds']:6.1f} s  {size / res['seconds']:6.1f} MB/s  driver peak RSS "
              f"{res['rss_mb']:,.0f} MB")


if __name__ == "__main__":
    main()
