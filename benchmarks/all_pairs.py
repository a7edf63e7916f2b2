"""diagnose on all pairs against its bounds, measured in the same process: the float32 GEMM (X'X, the
cost of forming every pair's 2x2 table) for the IID run, and the IID run for the clustered one.

Synthetic 0/1 scores (each model its own accuracy), 12,032 items. Each case runs in a fresh
interpreter; inside it the two jobs alternate (best of 3; clustered cases best of 1 at 1,000
models). The loaded rows run under 16 busy processes on the 2 cores.

- IID: ``lp.diagnose(x, pairs="all")`` at 4,500 models (10,122,750 pairs) against ``xf.T @ xf``
  with ``xf = x.astype(np.float32)`` (conversion included, as the GEMM needs it).
- clustered: ``lp.diagnose(x, pairs="all", cluster=labels, rng=0)`` with 14 clusters and the
  default 1,000 cluster resamples, against the same call without ``cluster``.

Run: ``python benchmarks/all_pairs.py [--load K]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, loaded, md_table  # noqa: E402

CASE = r"""
import json, sys, time, warnings
import numpy as np
import llm_power as lp
warnings.simplefilter("ignore")
m, mode, repeat = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
n = 12_032
rng = np.random.default_rng(0)
x = (rng.random((n, m)) < rng.uniform(0.2, 0.8, m)).astype(np.float64)
cl = rng.integers(0, 14, n)
lp.diagnose(x[:300, :10], cluster=cl[:300], cluster_resamples=10)  # imports and BLAS warm-up
ours, bound = [], []
for _ in range(repeat):
    start = time.perf_counter()
    if mode == "iid":
        d = lp.diagnose(x, pairs="all", max_pairs=20_000_000)
    else:
        d = lp.diagnose(x, pairs="all", max_pairs=20_000_000, cluster=cl, rng=0)
    ours.append(time.perf_counter() - start)
    del d
    start = time.perf_counter()
    if mode == "iid":
        xf = x.astype(np.float32)
        g = xf.T @ xf
        del xf, g
    else:
        d = lp.diagnose(x, pairs="all", max_pairs=20_000_000)
        del d
    bound.append(time.perf_counter() - start)
print(json.dumps({"ours": min(ours), "bound": min(bound)}))
"""


def case(m: int, mode: str, repeat: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CASE, str(m), mode, str(repeat)], capture_output=True, text=True,  # noqa: S603
                         check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=16)
    args = parser.parse_args()
    rows = []
    plan = [(4_500, "iid", 3, "float32 GEMM X'X"), (300, "clustered", 3, "the same, IID"),
            (1_000, "clustered", 1, "the same, IID")]
    for load in (None, args.load):
        with loaded(load):
            for m, mode, repeat, bound in plan:
                if load and mode == "clustered" and m == 1_000:
                    continue  # about 4 minutes under this load; the idle row gives the ratio
                res = case(m, mode, repeat)
                label = f"all pairs, {m:,} models" + (", 14 clusters, 1,000 resamples" if mode == "clustered" else "")
                rows.append([label, "loaded" if load else "idle", fmt_s(res["ours"]), bound, fmt_s(res["bound"]),
                             f"{res['ours'] / res['bound']:.1f}x"])
    print("### diagnose all pairs, 12,032 items, against its bounds\n")
    print(md_table(["job", "machine", "llm-power", "bound", "bound time", "llm-power / bound"], rows))


if __name__ == "__main__":
    main()
