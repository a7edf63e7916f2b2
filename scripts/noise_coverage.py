"""Coverage of noise()'s two intervals for their stated estimands: the working tree against 7302bb3.

- Template Kendall tau: models scored with T prompt templates shared by all; the estimand is the mean
  Kendall tau-a between the templates' *true* rankings (of each model's expected score under each
  template). 0/1 scores through a logit link (the expected accuracy under a template is monotone in the
  model's latent skill plus its template effect, so the true ranking is that of the latent values) and
  graded normal scores. Designs where the templates reorder nothing (true tau = 1; models 0.5 points
  apart, as in the audit) and where they reorder some pairs (tau < 1).
- Signal-to-noise: the estimand is the spread of the models' expected scores (over items and runs)
  over the true run-to-run SD of one run's score, sqrt(s2_run + s2_res / n) (graded normal scores, runs
  independent per model).

Run from the repository root:

    .venv/bin/python scripts/noise_coverage.py --reps 400
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

import llm_power as lp

OLD_COMMIT = "7302bb3"


def old_noise(commit: str = OLD_COMMIT) -> types.ModuleType:
    """runs/_noise.py as it was at ``commit``, loaded beside the current one (its relative imports resolve
    to the current kernel and _variance)."""
    root = Path(__file__).resolve().parents[1]
    path = "src/llm_power/runs/_noise.py"
    source = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True, text=True,
                            check=True).stdout
    name = f"llm_power.runs._noise_{commit}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "llm_power.runs"
    sys.modules[name] = module
    exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)  # noqa: S102 - our own history
    return module


def true_tau(latent: np.ndarray) -> float:
    """Mean tau-a between the rankings of every pair of templates; latent: templates x models."""
    t, m = latent.shape
    iu = np.triu_indices(m, 1)
    s = np.sign(latent[:, iu[0]] - latent[:, iu[1]])
    return float(np.mean([np.mean(s[a] * s[b]) for a, b in itertools.combinations(range(t), 2)]))


TAU_DESIGNS = {
    # name: (binary, n items, templates, model skills (accuracy or score), template x model SD, common SD)
    "0/1, tau = 1, models 0.5 points apart": (True, 500, 4, 0.70 + 0.005 * np.arange(5), 0.0, 0.3),
    "0/1, tau = 1, models 5 points apart": (True, 500, 4, 0.55 + 0.05 * np.arange(5), 0.0, 0.3),
    "0/1, tau < 1 (template x model 0.15 logit)": (True, 1000, 5, 0.60 + 0.02 * np.arange(6), 0.15, 0.3),
    "graded, tau = 1, close models": (False, 300, 4, 0.02 * np.arange(6), 0.0, 0.2),
    "graded, tau < 1 (template x model 0.05)": (False, 400, 4, 0.05 * np.arange(6), 0.05, 0.2),
}


def tau_replication(rng: np.random.Generator, design: tuple, old: types.ModuleType | None) -> tuple[float, ...]:
    """(truth, estimate, low, high) of one replication (of the old module's noise when ``old`` given)."""
    binary, n, t, skill, inter, common = design
    m = skill.size
    latent = (np.log(skill / (1 - skill)) if binary else skill) + rng.normal(0, inter, (t, m))  # templates x models
    shift = rng.normal(0, common, (t, 1))
    item = rng.normal(0, 1.5 if binary else 1.0, (n, 1, 1))
    if binary:
        p = 1 / (1 + np.exp(-(latent[None] + shift[None] + item)))
        y = (rng.random((n, t, m)) < p).astype(float)
    else:
        y = latent[None] + shift[None] + item + rng.normal(0, 0.5, (n, 1, m)) + rng.normal(0, 0.3, (n, t, m))
    board = lp.RunScores.from_array(y, models=[f"m{k}" for k in range(m)], runs_by="template")
    fn = lp.noise if old is None else old.noise
    rep = fn(board, n_resamples=400, rng=int(rng.integers(2**31)))
    lo, hi = rep.templates["kendall_tau_ci"]
    return true_tau(latent), rep.templates["kendall_tau"], lo, hi


def snr_replication(rng: np.random.Generator, design: tuple, old: types.ModuleType | None) -> tuple[float, ...]:
    """(truth, estimate, low, high) of the signal-to-noise ratio in one replication."""
    n, r, means, s_run, s_res = design
    m = means.size
    y = (means + rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.4, (n, 1, m)) + rng.normal(0, s_run, (1, r, m))
         + rng.normal(0, s_res, (n, r, m)))
    fn = lp.noise if old is None else old.noise
    rep = fn(y, models=[f"m{k}" for k in range(m)])
    truth = np.ptp(means) / np.sqrt(s_run**2 + s_res**2 / n)
    return truth, rep.snr, rep.snr_ci[0], rep.snr_ci[1]


SNR_DESIGNS = {
    # name: (n items, runs, true means, run SD per model, residual SD)
    "5 close models, 300 items x 5 runs": (300, 5, 0.01 * np.arange(5), 0.02, 0.5),
    "3 spread models, 300 items x 3 runs": (300, 3, np.array([0.0, 0.1, 0.25]), 0.03, 0.5),
    "10 models, 1000 items x 4 runs": (1000, 4, 0.01 * np.arange(10), 0.01, 0.5),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    old = old_noise()
    se = np.sqrt(0.95 * 0.05 / args.reps)
    print(f"coverage at 95% ({args.reps} replications per design, MC SE {se:.3f} at 0.95)")
    for kind, designs, fn in (("template Kendall tau", TAU_DESIGNS, tau_replication),
                              ("signal-to-noise", SNR_DESIGNS, snr_replication)):
        print(f"\n{kind}")
        for k, (name, design) in enumerate(designs.items()):
            row = [name]
            for label, module in (("now", None), ("7302bb3", old)):
                rng = np.random.default_rng([args.seed, k, len(kind)])
                out = np.array([fn(rng, design, module) for _ in range(args.reps)])
                truth, est, lo, hi = out.T
                cover = np.mean((lo <= truth) & (truth <= hi))
                row.append(f"{label}: truth {truth.mean():.3f}, estimate {est.mean():.3f}, interval "
                           f"[{lo.mean():.3f}, {hi.mean():.3f}] on average, coverage {cover:.3f}")
            print("  " + "\n    ".join(row), flush=True)


if __name__ == "__main__":
    main()
