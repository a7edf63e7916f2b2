"""Runs as a factor: seeds, prompt templates and engines shift every item at once.

Part 1 -- real reruns bundled with the package: gpt-3.5-turbo (10 runs) and gpt-4o (5 runs) on the
same 500 BIG-Bench Hard items at temperature 0 (Atil et al. 2024). Part 2 -- a leaderboard of six
models, each evaluated with four prompt templates, where the template moves a model's score by
about a point: gaps the items resolve are still inside template noise.
"""

import numpy as np

import llm_power as lp
from llm_power.io.demo import load_reruns

# --- part 1: serving non-determinism ----------------------------------------------------------
runs = load_reruns()
noise = lp.noise(runs)
for f in noise.flakiness:
    print(f"{f['model']:<14} {f['runs']:>2} runs: {f['unstable']:>3} of {runs.n} items change between runs, "
          f"flip rate {f['flip_rate']:.3f}, best/worst possible {f['best_possible']:.3f}/{f['worst_possible']:.3f}")
var = lp.run_variance(runs)
for k, m in enumerate(var.models):
    print(f"{m:<14} score {var.mean[k]:.4f}: SE over items {var.se_items[k]:.4f}, over items and runs "
          f"{var.se[k]:.4f} (run SD {np.sqrt(var.var_run[k]):.4f})")

# --- part 2: prompt templates ----------------------------------------------------------------
rng = np.random.default_rng(2026)
n_items, n_templates = 2000, 4
names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
skill = np.array([0.78, 0.765, 0.75, 0.70, 0.69, 0.60])
logit = np.log(skill / (1 - skill))
difficulty = rng.normal(0, 1.5, (n_items, 1, 1))
template = (rng.normal(0, 0.08, (1, n_templates, len(names)))  # template x model: ~1.5 points
            + rng.normal(0, 0.25, (1, n_templates, 1)))  # and a shift common to every model
p = 1 / (1 + np.exp(-(logit + difficulty + template)))
scores = (rng.random((n_items, n_templates, len(names))) < p).astype(int)
board = lp.RunScores.from_array(scores, models=names, runs_by="template")

diag = lp.diagnose(board)  # templates every model shares: matched runs (the common shift cancels)
print()
print(diag.summary())
print("as unrelated runs (run_pairing='independent'):", lp.diagnose(board, run_pairing="independent").n_unresolved)
for pair in diag.pairs:
    print(f"{pair.model_a} vs {pair.model_b}: gap {100 * pair.delta:+.1f} pts, IID {'resolved' if pair.resolved else 'open'}"
          f", runs {'resolved' if pair.resolved_run else 'open'} (SE {100 * pair.se:.2f} -> {100 * pair.se_run:.2f} pts, "
          f"runs needed {pair.runs_needed:g})")
rep = lp.noise(board, rng=0)
t = rep.templates
print(f"Kendall tau between the templates' rankings {t['kendall_tau']:.2f} "
      f"[{t['kendall_tau_ci'][0]:.2f}, {t['kendall_tau_ci'][1]:.2f}]; pairs that flip: "
      + ", ".join(f"{f['model_a']}/{f['model_b']}" for f in t["flipping_pairs"]))
plan = lp.plan_runs(board, 0.015, pair=("alpha", "bravo"), cost_per_item=1, cost_per_run=200)
print(plan.summary())
