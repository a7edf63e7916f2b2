"""How uncertain is one benchmark score? (llm-power quick tour, part 1)

A model scored 87.5% on an 80-item benchmark and 99% on a 100-item safety suite. What do those
numbers really say, and which interval should be reported?
"""

import warnings

from llm_power import DegenerateDataWarning, coverage, half_width, n_for_half_width, proportion_ci, rule_of_three

# 1. 70 of 80 items correct: Wilson (the default) and Clopper-Pearson.
for method in ("wilson", "clopper_pearson"):
    lo, hi = proportion_ci(70, 80, method=method)
    print(f"70/80 = 87.5%  {method:>15}: [{lo:.1%}, {hi:.1%}]")

# 2. The Wald interval breaks at the boundary: 100/100 gives the single point {1}.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", DegenerateDataWarning)
    print("100/100 Wald:", proportion_ci(100, 100, method="wald"), "<- claims certainty;", caught[0].message)
print("100/100 Wilson:", tuple(round(x, 4) for x in proportion_ci(100, 100)))
print(f"0 failures in 100 prompts: failure rate up to {rule_of_three(100):.1%} (rule of three)")

# 3. Why Wilson: exact coverage of the nominal 95% intervals on a 10-item task at p = 0.02.
for method in ("wald", "wilson", "clopper_pearson"):
    print(f"coverage n=10, p=0.02, {method:>15}: {coverage(10, 0.02, method=method):.3f}")

# 4. Error bars of benchmark sizes, and the items needed for +-1 point at 80%.
for n in (80, 164, 1319, 14042):
    print(f"{n:>6} items at 80%: +-{100 * half_width(n, 0.8):.1f} points")
print("items for +-1 point at 80%:", n_for_half_width(0.01, 0.8))
