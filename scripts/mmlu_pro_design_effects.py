"""Design effects of the MMLU-Pro top-10 adjacent pairs under each model (docs/resolution.md).

Run: python scripts/mmlu_pro_design_effects.py  (uses the bundled data; prints a Markdown table).
"""

from __future__ import annotations

import warnings

import numpy as np

from llm_power import diagnose
from llm_power.io.demo import load_mmlu_pro


def main() -> None:
    data = load_mmlu_pro()
    models, x, category = data.models, data.scores, data.clusters
    top = np.argsort(-x.mean(axis=0), kind="stable")[:10]
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode in ("robust", "cr1", "anova", "paper"):
            runs[mode] = diagnose(x[:, top], models=[models[k] for k in top], cluster=category,
                                  design_effect=mode, cluster_resamples=0)
    base = runs["robust"]
    print("| # | A | B | gap | DE CR2 (default) | DE CR1 | DE Kish (ANOVA) | DE paper | df | q IID | "
          "q CR2 | q CR1 | q Kish | q paper |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, p in enumerate(base.pairs):
        qs = " | ".join(f"{runs[m].pairs[k].q_cluster:.2f}" for m in ("robust", "cr1", "anova", "paper"))
        print(f"| {p.rank_a} | {p.model_a} | {p.model_b} | {100 * p.delta:+.2f} | {p.design_effect_robust:.1f} | "
              f"{p.design_effect_cr1:.1f} | {p.design_effect_anova:.1f} | {p.design_effect_paper:.1f} | "
              f"{p.cluster_df:.1f} | {p.q:.2f} | {qs} |")
    counts = ", ".join(f"{m} {runs[m].n_unresolved['cluster']}" for m in ("robust", "cr1", "anova", "paper"))
    print(f"\nClustered unresolved (of 9): {counts}; IID {base.n_unresolved['iid']}.")


if __name__ == "__main__":
    main()
