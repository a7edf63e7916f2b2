"""Which leaderboard gaps are real? (llm-power quick tour, part 4)

Runs the resolution report on MMLU-Pro per-item results (../shared/data/mmlu_pro_tiger) when
they are present, else on a synthetic leaderboard of the same shape.
"""

import csv
import gzip
from pathlib import Path

import numpy as np

import llm_power as lp

path = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
if path.exists():
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    x = np.array([[np.nan if v == "" else float(v) for v in r[2:]] for r in rows[1:]])
    names = np.array(rows[0][2:])
    keep = ~np.isnan(x).any(axis=0)
    x, names = x[:, keep], names[keep]
    cluster = np.array([r[1] for r in rows[1:]])
else:
    rng = np.random.default_rng(0)
    cluster = rng.integers(0, 14, size=12_032)
    x = (rng.random((12_032, 12)) < np.linspace(0.6, 0.4, 12)).astype(float)
    names = np.array([f"model_{k}" for k in range(12)])

top = np.argsort(-x.mean(axis=0))[:10]
res = lp.diagnose(x[:, top], models=list(names[top]), cluster=cluster, correction="holm", anytime=True, rng=0)
print(res.summary())
print("ties under clustering:", [g for g in res.tie_groups["cluster"] if len(g) > 1])

# Is N* right? Resample a real pair to N* items and count rejections.
cal = lp.calibrate(x[:, top[2]], x[:, top[3]], rng=0)
print(f"calibration: empirical power at N* = {cal['n']:,} is {cal['empirical_power']:.3f} (target 0.8)")

# Five benchmarks, one question: on how many is A really better than B?
pvals = [0.001, 0.03, 0.2, 0.004, 0.6]
eff = lp.count_effects(pvals)
print(f"A is better on at least {eff.k} of {len(pvals)} benchmarks (identified: {eff.identified.tolist()});",
      "Holm-adjusted p:", lp.adjust_pvalues(pvals, method="holm").round(3).tolist())
