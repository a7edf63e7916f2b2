"""Validity of the clustering-level test (:mod:`llm_power._kernel.cluster_level`) by vectorised
simulation: replications are the "pairs" axis of one kernel call. Prints a markdown table. Usage::

    PYTHONPATH=src .venv/bin/python scripts/cluster_level_validity.py            # full (minutes)
    PYTHONPATH=src .venv/bin/python scripts/cluster_level_validity.py --quick    # a smoke run

Designs
-------
* Items vs clusters (H0 item level, ICC 0; power at ICC 0.02, 0.05, 0.1) at G = 10, 14, 20, 40 with
  equal sizes (50 items) and unequal sizes (log-spaced 20..400, the spread the SPEC's clustering note
  cites), and MMLU-Pro's 14 real category sizes (12,032 items). Paired 0/1 items (discordance 0.3,
  gap 0.02; a cluster effect z_g moves p10 up and p01 down by the same amount, so the discordance
  stays 0.3 and ICC(D) = 4 sigma^2 / sigma_D^2) and graded items (normal D).
* Coarse vs fine: MMLU-Pro's 14 categories each split into as many fine clusters as it has `src`
  labels (91 in all; fine sizes a fixed Dirichlet(2) split of the category's items). Size when the
  fine level is right (a fine random effect of ICC 0.05, coarse clusters otherwise independent);
  power when the coarse is (a coarse effect of ICC 0.02, 0.05, 0.1 on top of that fine effect).

The bound for size is 5% + 3 Monte Carlo standard errors of the replications used.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np

from llm_power._kernel.cluster_level import clustering_level_test, item_level_test

#: MMLU-Pro's 14 category sizes (items.csv of the bundled data; `load_mmlu_pro().clusters`)
MMLU_PRO_SIZES = np.array([717, 789, 1132, 410, 844, 969, 818, 381, 1101, 1351, 924, 499, 1299, 798])
#: the number of `src` labels inside each category (same order), 91 in all
MMLU_PRO_FINE = np.array([4, 5, 9, 6, 4, 10, 8, 4, 3, 9, 10, 5, 11, 3])
P10, P01 = 0.16, 0.14  # paired 0/1 items: discordance 0.3, gap 0.02
SIGMA_D2 = (P10 + P01) - (P10 - P01) ** 2


def _sizes(kind: str, g: int) -> np.ndarray:
    if kind == "equal":
        return np.full(g, 50)
    if kind == "unequal":
        return np.rint(np.geomspace(20, 400, g)).astype(int)
    return MMLU_PRO_SIZES.copy()


def _items(rng: np.random.Generator, m: int, effect: np.ndarray, binary: bool) -> np.ndarray:
    """(m, R) differences of one cluster with per-replication cluster effects ``effect`` (R,) on D."""
    reps = effect.size
    if not binary:
        return effect + rng.normal(size=(m, reps))
    shift = effect / 2.0  # D's mean moves by p10_g - p01_g - (P10 - P01) = 2 shift / 2
    p10 = np.clip(P10 + shift, 0.0, P10 + P01)
    u = rng.random((m, reps))
    return np.where(u < p10, 1.0, np.where(u < P10 + P01, -1.0, 0.0))


def _sigma_between(icc: float, binary: bool) -> float:
    """SD of the cluster effect on D giving intraclass correlation ``icc``."""
    within = SIGMA_D2 if binary else 1.0
    return math.sqrt(icc / (1.0 - icc) * within)


def simulate_item_level(sizes: np.ndarray, *, icc: float, binary: bool, reps: int, seed: int, method: str,
                        n_resamples: int = 199, alpha: float = 0.05) -> float:
    """Rejection rate of the item-level null at ``alpha`` (``method``: "asymptotic" or "chi_square" from
    power sums; "bootstrap" the wild bootstrap on the items)."""
    rng = np.random.default_rng(seed)
    sd = _sigma_between(icc, binary)
    g = sizes.size
    if method == "bootstrap":
        blocks = [_items(rng, int(m), sd * rng.normal(size=reps), binary) for m in sizes]
        d = np.concatenate(blocks)
        codes = np.repeat(np.arange(g), sizes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = clustering_level_test(d, np.ones(d.shape[0]), codes, method="bootstrap",
                                      n_resamples=n_resamples, rng=seed + 1).pvalue
    else:
        ps = np.zeros((4, g, reps))
        for k, m in enumerate(sizes):
            block = _items(rng, int(m), sd * rng.normal(size=reps), binary)
            for j in range(4):
                ps[j, k] = np.sum(block ** (j + 1), axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = item_level_test(ps, sizes.astype(float), method=method).pvalue
    return float(np.mean(np.nan_to_num(p, nan=1.0) <= alpha))


def _fine_design(seed: int = 20261201) -> tuple[np.ndarray, np.ndarray]:
    """Fine cluster sizes and their coarse cluster: MMLU-Pro's categories split like its `src` labels."""
    rng = np.random.default_rng(seed)
    sizes, coarse = [], []
    for k, (m, f) in enumerate(zip(MMLU_PRO_SIZES, MMLU_PRO_FINE, strict=True)):
        share = rng.dirichlet(np.full(f, 2.0))
        part = np.maximum(1, np.floor(share * m).astype(int))
        part[-1] += m - part.sum()
        sizes.extend(part.tolist())
        coarse.extend([k] * f)
    return np.array(sizes), np.array(coarse)


def simulate_coarse_fine(*, icc_fine: float, icc_coarse: float, binary: bool, reps: int, seed: int, method: str,
                         n_resamples: int = 199, alpha: float = 0.05) -> float:
    """Rejection rate of H0 "fine level" (91 fine in 14 coarse) at ``alpha``."""
    rng = np.random.default_rng(seed)
    fine_sizes, coarse_of = _fine_design()
    sd_f, sd_c = _sigma_between(icc_fine, binary), _sigma_between(icc_coarse, binary)
    coarse_effect = sd_c * rng.normal(size=(MMLU_PRO_SIZES.size, reps))
    sums = np.empty((fine_sizes.size, reps))
    for h, (m, k) in enumerate(zip(fine_sizes, coarse_of, strict=True)):
        sums[h] = _items(rng, int(m), coarse_effect[k] + sd_f * rng.normal(size=reps), binary).sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = clustering_level_test(sums, fine_sizes, coarse_of, method=method, n_resamples=n_resamples,
                                  rng=seed + 1).pvalue
    return float(np.mean(np.nan_to_num(p, nan=1.0) <= alpha))


def _bound(reps: int) -> float:
    return 0.05 + 3.0 * math.sqrt(0.05 * 0.95 / reps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    args = parser.parse_args(argv)
    reps_fast, reps_boot, n_boot = (400, 200, 99) if args.quick else (10_000, 2000, 199)
    designs = [(kind, g) for kind in ("equal", "unequal") for g in (10, 14, 20, 40)] + [("mmlu_pro", 14)]
    methods = [("asymptotic", reps_fast), ("chi_square", reps_fast), ("bootstrap", reps_boot)]
    print("### Items vs clusters: rejection rate of H0 'item level' at alpha = 0.05\n")
    print("| sizes | G | N | data | method | reps | size (ICC 0) | bound | ok | ICC .02 | ICC .05 | ICC .1 |")
    print("|---|---:|---:|---|---|---:|---:|---:|---|---:|---:|---:|")
    seed = 0
    start = time.perf_counter()
    for kind, g in designs:
        sizes = _sizes(kind, g)
        for binary in (True, False):
            for method, reps in methods:
                if method == "bootstrap" and kind == "mmlu_pro":
                    reps_here = reps // 4
                else:
                    reps_here = reps
                seed += 10
                rates = [simulate_item_level(sizes, icc=icc, binary=binary, reps=reps_here if icc == 0 else
                                             max(reps_here // 4, 100), seed=seed + i, method=method,
                                             n_resamples=n_boot)
                         for i, icc in enumerate((0.0, 0.02, 0.05, 0.1))]
                bound = _bound(reps_here)
                print(f"| {kind} | {g} | {sizes.sum()} | {'0/1' if binary else 'graded'} | {method} | {reps_here} "
                      f"| {rates[0]:.4f} | {bound:.4f} | {'yes' if rates[0] <= bound else '**no**'} "
                      f"| {rates[1]:.3f} | {rates[2]:.3f} | {rates[3]:.3f} |", flush=True)
    print("\n### Coarse (14 MMLU-Pro categories) vs fine (91 src-like clusters), alpha = 0.05\n")
    print("| data | method | reps | size (fine ICC .05) | bound | ok | coarse ICC .02 | .05 | .1 |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|")
    for binary in (True, False):
        for method, reps in (("asymptotic", reps_fast), ("bootstrap", reps_boot)):
            seed += 10
            size = simulate_coarse_fine(icc_fine=0.05, icc_coarse=0.0, binary=binary, reps=reps, seed=seed,
                                        method=method, n_resamples=n_boot)
            power = [simulate_coarse_fine(icc_fine=0.05, icc_coarse=icc, binary=binary, reps=max(reps // 4, 100),
                                          seed=seed + i + 1, method=method, n_resamples=n_boot)
                     for i, icc in enumerate((0.02, 0.05, 0.1))]
            bound = _bound(reps)
            print(f"| {'0/1' if binary else 'graded'} | {method} | {reps} | {size:.4f} | {bound:.4f} "
                  f"| {'yes' if size <= bound else '**no**'} | {power[0]:.3f} | {power[1]:.3f} | {power[2]:.3f} |",
                  flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s; power columns use a quarter of the replications)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
