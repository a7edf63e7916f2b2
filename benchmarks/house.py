"""Before/after timings of the re-layout (issue 25): the same jobs on two checkouts of the package,
interleaved in fresh processes, best of N. Only the layout changed, so the ratios should be ~1.

Run: ``.venv/bin/python benchmarks/house.py OLD_SRC NEW_SRC`` (each a ``src`` folder; e.g. a
``git worktree`` of the commit before the change).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

JOBS = {
    "import llm_power": "import llm_power",
    "first use of lp.read_results (imports)": "import llm_power as lp; lp.read_results",
    "first use of lp.bradley_terry (imports)": "import llm_power as lp; lp.bradley_terry",
    "first use of lp.diagnose (imports)": "import llm_power as lp; lp.diagnose",
    "first use of lp.compare (imports)": "import llm_power as lp; lp.compare",
    "diagnose all pairs, MMLU-Pro 26 models x 12,032": (
        "import llm_power as lp\nfrom llm_power.io.demo import load_mmlu_pro\nd = load_mmlu_pro()\n"
        "x, m = (d.scores, d.models) if hasattr(d, 'scores') else (d[2], d[1])\n"
        "lp.diagnose(x, models=m, pairs='all', correction='holm')\n"
        "import time; t = time.perf_counter(); lp.diagnose(x, models=m, pairs='all', correction='holm')\n"
        "print('T', time.perf_counter() - t)"),
    "diagnose all pairs, 300 synthetic models x 12,032 (44,850 pairs)": (
        "import numpy as np, llm_power as lp\nrng = np.random.default_rng(0)\n"
        "x = (rng.random((12032, 300)) < np.linspace(0.3, 0.8, 300)).astype(float)\n"
        "lp.diagnose(x[:, :20], pairs='all')\n"
        "import time; t = time.perf_counter(); lp.diagnose(x, pairs='all', correction='holm')\n"
        "print('T', time.perf_counter() - t)"),
    "diagnose adjacent + 14 clusters + anytime, MMLU-Pro": (
        "import llm_power as lp\nfrom llm_power.io.demo import load_mmlu_pro\nd = load_mmlu_pro()\n"
        "x, m, c = (d.scores, d.models, d.clusters) if hasattr(d, 'scores') else (d[2], d[1], d[3])\n"
        "lp.diagnose(x, models=m, cluster=c, anytime=True, correction='holm', rng=0)\n"
        "import time; t = time.perf_counter(); lp.diagnose(x, models=m, cluster=c, anytime=True, correction='holm', "
        "rng=0)\nprint('T', time.perf_counter() - t)"),
    "compare one pair (auto), 12,032 items": (
        "import llm_power as lp\nfrom llm_power.io.demo import load_mmlu_pro\nd = load_mmlu_pro()\n"
        "x = d.scores if hasattr(d, 'scores') else d[2]\n"
        "lp.compare(x[:, 0], x[:, 1])\nimport time; t = time.perf_counter()\n"
        "for _ in range(200): lp.compare(x[:, 0], x[:, 1])\n"
        "print('T', (time.perf_counter() - t) / 200)"),
    "bradley_terry, MT-Bench swap battles": (
        "import llm_power as lp, pandas as pd\nfrom importlib import resources\n"
        "f = pd.read_csv(resources.files('llm_power') / 'data' / 'mtbench_swap_battles.csv.gz')\n"
        "lp.bradley_terry(f)\nimport time; t = time.perf_counter(); lp.bradley_terry(f)\n"
        "print('T', time.perf_counter() - t)"),
    "read_results, lm-eval fixtures": (
        "import llm_power as lp, time\nlp.read_results('tests/fixtures/lm_eval')\n"
        "t = time.perf_counter(); lp.read_results('tests/fixtures/lm_eval')\n"
        "print('T', time.perf_counter() - t)"),
}


def _once(src: str, code: str) -> float:
    env = {**os.environ, "PYTHONPATH": src, "LLM_POWER_PROGRESS_DELAY": "1e9"}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    inner = [float(line.split()[1]) for line in out.splitlines() if line.startswith("T ")]
    return inner[0] if inner else wall


def main(old: str, new: str, repeats: int = 5) -> None:
    print("| job | before (s) | after (s) | after / before |\n| --- | --- | --- | --- |")
    for name, code in JOBS.items():
        best = {"old": float("inf"), "new": float("inf")}
        for _ in range(repeats):
            for key, src in (("old", old), ("new", new)):
                best[key] = min(best[key], _once(src, code))
        print(f"| {name} | {best['old']:.4g} | {best['new']:.4g} | {best['new'] / best['old']:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
