"""pass@k with intervals for new questions and for these questions, and two checkpoints compared
at every k (the data: examples/passk_samples.csv, simulated; see scripts/make_passk_example.py)."""

from pathlib import Path

import llm_power as lp
from llm_power.io import read_samples, sample_matrices

frame = read_samples(Path(__file__).with_name("passk_samples.csv"))
runs = {model: wide.to_numpy(dtype=float) for model, wide in sample_matrices(frame).items()}
for model, x in runs.items():
    new = lp.pass_at_k_ci(x, [1, 4, 8])
    fixed = lp.pass_at_k_ci(x, [1, 4, 8], population="fixed_questions")
    for k, est, se_new, se_fixed in zip(new.k, new.estimate, new.standard_error, fixed.standard_error, strict=True):
        print(f"{model:6s} pass@{k:<2d} {100 * est:5.1f}%  SE new questions {100 * se_new:4.1f}  "
              f"SE these questions {100 * se_fixed:4.1f}")
res = lp.compare_pass_at_k(runs["tuned"], runs["base"], [1, 4, 8], rng=0)
print(res.to_frame().round(3).to_string(index=False))
