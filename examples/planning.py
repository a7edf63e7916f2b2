"""How many items does an eval need? (llm-power quick tour, part 3)"""

import math

import llm_power as lp

# 1. Two models expected at 65% and 60%, per-item correlation 0.3.
print("paired N*:", {m: lp.sample_size(0.65, 0.60, rho=0.3, method=m) for m in ("wald", "connor", "exact")})
print("unpaired, per group:", lp.sample_size(0.65, 0.60, design="unpaired"))
print("the shortcut (wrong):", lp.sample_size_shortcut(0.65, 0.60, rho=0.3))

# 2. Which gap can GSM8K's 1,319 items detect near 80%, for models with rho = 0.7?
print(f"MDE: {100 * lp.mde(1319, p=0.8, rho=0.7, method='connor'):.2f} points")

# 3. Forty model pairs compared at family-wise alpha = 0.05, items clustered in subjects.
de = lp.design_effect(mean_cluster_size=50, icc=0.02)
n = lp.sample_size(0.65, 0.60, rho=0.3, alpha=0.05 / 40, design_effect=de)
print(f"with Bonferroni over 40 pairs (x{lp.bonferroni_factor(40):.2f}) and DE = {de:.2f}: {n:,} items")

# 4. Exact power curve and a simulation check.
for items in (400, 800, 1069):
    print(f"exact power at {items}: {lp.power(items, 0.65, 0.60, rho=0.3, method='exact'):.3f}")
sim = lp.simulated_power(1069, 0.65, 0.60, rho=0.3, n_sims=20_000, rng=1)
print(f"simulated power at 1069: {sim.power:.3f} ± {sim.standard_error:.3f}")

# 5. Type S / Type M for a 1-point gap on 1,000 items with p_d = 0.2.
se = math.sqrt((0.2 - 0.01**2) / 1000)
print(lp.type_s_m(0.01, se))

# 6. Eight samples per item at temperature 0.7: items versus samples.
plan = lp.repeated_sampling_plan(0.02, between=0.03, within=0.15, cost_per_item=5, max_samples_per_item=10)
print(plan.summary())
