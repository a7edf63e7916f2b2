"""Peak memory of reading a 200 MB lm-eval samples file (streamed line by line).

Writes a synthetic ``samples_<task>_<date>.jsonl`` of about 200 MB (10,000 docs with long prompts
and responses, as lm-eval writes with --log_samples) to a temporary folder, then reads it with
``read_results`` in a fresh process and reports the peak resident memory (ru_maxrss) next to a
baseline process that only imports llm-power and pandas.

Run: ``.venv/bin/python benchmarks/read_memory.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys, time
import pandas, llm_power
t0 = time.perf_counter()
if sys.argv[1] != "baseline":
    df = llm_power.read_results(sys.argv[1])
    assert len(df) == int(sys.argv[2])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.perf_counter() - t0)
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "samples_big_2026-01-01T00-00-00.000000.jsonl"
        blob = "lorem ipsum " * 800  # ~10 KB of prompt/response text per doc
        docs = 10_000
        with open(path, "w") as fh:
            for i in range(docs):
                fh.write(json.dumps({"doc_id": i, "doc": {"question": blob}, "target": "A",
                                     "arguments": {"gen_args_0": {"arg_0": blob}}, "resps": [[blob[:2000]]],
                                     "filtered_resps": [blob[:2000]], "filter": "none", "metrics": ["acc"],
                                     "acc": float(i % 3 == 0)}) + "\n")
        size = path.stat().st_size / 2**20
        base = subprocess.run([sys.executable, "-c", CHILD, "baseline"], capture_output=True, text=True, check=True)
        run = subprocess.run([sys.executable, "-c", CHILD, str(path), str(docs)], capture_output=True, text=True,
                             check=True)
        base_mb = float(base.stdout.split()[0])
        peak_mb, secs = (float(v) for v in run.stdout.split())
        print(f"file: {size:.0f} MB, {docs:,} lines")
        print(f"peak RSS reading it: {peak_mb:.0f} MB (baseline after imports: {base_mb:.0f} MB; "
              f"+{peak_mb - base_mb:.0f} MB) in {secs:.1f} s")


if __name__ == "__main__":
    main()
