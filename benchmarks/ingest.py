"""Reading lm-eval ``--log_samples`` folders into the score matrix: the columnar reader in
parallel processes vs the line-by-line reader, end to end (read_results + align_results).

Generates M model folders of one samples file each (12,032 docs, lines shaped like the real
lm-eval file in ../shared/data/formats/lm_eval: a document, arguments, responses, a per-item
metric) in a temporary folder, then times each path in a fresh interpreter and reports MB/s and
peak RSS. Both paths give the same matrix (checked here and in tests/test_scale.py).

Run: ``.venv/bin/python benchmarks/ingest.py [M [FOLDER]]`` (default 40 folders, about 340 MB of JSONL;
FOLDER: write the data there once and reuse it).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ITEMS = 12_032
#: the real lm-eval samples file whose lines ``make(..., real=True)`` repeats (10 lines, 2.1-6.2 KB each)
REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "formats" / "lm_eval"
CASE = r"""
import json, resource, sys, time
from pathlib import Path
import numpy as np
from llm_power.io import align_results, harness
from llm_power.io.harness import read_frame
folder, mode = Path(sys.argv[1]), sys.argv[2]
if mode == "line":
    harness._columns_fast = lambda *a, **k: None
    harness.PARALLEL_MIN_BYTES = 1 << 62
start = time.perf_counter()
aligned = align_results(read_frame(folder, cluster="type"))
elapsed = time.perf_counter() - start
digest = float(np.nansum(aligned.scores * np.arange(1, aligned.scores.shape[1] + 1)))
print(json.dumps({"seconds": elapsed, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "child_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "shape": list(aligned.scores.shape), "digest": digest}))
"""


def make(folder: Path, models: int, *, real: bool = False) -> float:
    """Write the folders (or reuse those already there); returns the megabytes of JSONL.

    ``real``: every line is a line of the real lm-eval file in :data:`REAL` (a model's response,
    JSON escapes, LaTeX, the document's nested fields: 3.7 KB on average), cycled to 12,032 docs with
    the doc id and the score rewritten in place; the bytes between them are the real ones.
    """
    rng = random.Random(0)
    total = 0
    lines = _real_lines() if real else _synthetic_lines()
    for k in range(models):
        sub = folder / f"org__model-{k:04d}"
        path = sub / "samples_mmlu_2026-01-21T03-44-18.458309.jsonl"
        if not path.exists():
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "results_2026-01-21T03-44-18.458309.json").write_text(
                json.dumps({"model_name": f"org/model-{k:04d}"}))
            p = 0.3 + 0.4 * k / models
            with open(path, "w") as fh:
                fh.write("".join(line + ("1.0}\n" if rng.random() < p else "0.0}\n") for line in lines))
        total += path.stat().st_size
    return total / 1e6


def _synthetic_lines() -> list[str]:
    """Every line is the same short JSON (about 700 bytes) but for the doc id, the category and the
    score (left off: the caller appends it).
    """
    lines = []
    for i in range(ITEMS):
        rec = {"doc_id": i, "doc": {"question": f"Question {i}: " + "which of these " * 8, "type": f"T{i % 14}",
                                    "choices": ["alpha", "beta", "gamma", "delta"]},
               "target": str(i % 4), "arguments": {"gen_args_0": {"arg_0": "Answer the question. " * 10}},
               "resps": [["The answer is " + "because " * 10]], "filtered_resps": ["B"], "filter": "none",
               "metrics": ["exact_match"], "exact_match": 0.0}
        lines.append(json.dumps(rec)[:-len("0.0}")])
    return lines


def _real_lines() -> list[str]:
    """The real file's lines cycled to ITEMS docs: ``{"doc_id": <i>, ... "exact_match": `` (the score
    left off: the caller appends it); everything else is the real line's text.
    """
    (source,) = sorted(REAL.glob("samples_*.jsonl"))
    real = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = []
    for i in range(ITEMS):
        line = real[i % len(real)]
        head = re.match(r'^\{"doc_id": \d+, ', line)
        tail = re.search(r'"exact_match": [0-9.]+\}$', line)
        assert head and tail, "the real lines start with the doc id and end with the score"
        lines.append(f'{{"doc_id": {i}, ' + line[head.end():tail.start()] + '"exact_match": ')
    return lines


def run(folder: Path, mode: str) -> dict[str, float]:
    """One path in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CASE, str(folder), mode], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    """Print the comparison."""
    models = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    keep = sys.argv[2] if len(sys.argv) > 2 else None  # a folder to write once and reuse
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(keep or tmp)
        size = make(folder, models)
        fast, line = run(folder, "fast"), run(folder, "line")
    assert fast["digest"] == line["digest"] and fast["shape"] == line["shape"], "the two paths disagree"
    print(f"{models} folders x {ITEMS:,} docs, {size:,.0f} MB of JSONL; matrix {fast['shape']}")
    for name, res in (("columnar, parallel processes", fast), ("line by line, one process", line)):
        print(f"  {name:<30} {res['seconds']:6.2f} s  {size / res['seconds']:6.1f} MB/s  peak RSS "
              f"{res['rss_mb']:,.0f} MB (largest worker process {res['child_rss_mb']:,.0f} MB)")
    print(f"  ratio: {line['seconds'] / fast['seconds']:.1f}x")


if __name__ == "__main__":
    main()
