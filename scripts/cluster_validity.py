"""Size and coverage of the few-cluster methods for a paired gap (issue 44): which one is the default?

For each design -- G clusters (5, 8, 10, 14, 20, 40), cluster sizes equal (100 items each), MMLU-Pro's
(its 14 real category sizes at G = 14, their quantiles at other G) or very unequal (geometric, 20 to
1,000 items), paired 0/1 items or graded scores, intraclass correlation of the paired difference
0, 0.05, 0.1, 0.2 -- replications of the per-cluster sums are simulated directly (no item-level
loop) and each method tests H0: mu = mu_true at 5% (two-sided) and forms a 95% interval:

- ``CR2-IK``: t = delta / se_CR2 on Imbens-Kolesar df (the package default since 2026-11-30);
- ``CR1``: G/(G-1) sandwich on G - 1 df; ``CV3``: the cluster jackknife on G - 1 df;
- ``WCR rad`` / ``WCR webb``: the restricted wild cluster bootstrap p-value (CR1-studentised,
  symmetric), Rademacher (all 2^G sign vectors when 2^G <= B) or Webb's six-point weights;
- coverage of ``WCR inv`` (the set of mu0 the WCR test with ``weights="auto"`` does not reject) and
  ``WCU t`` (the unrestricted bootstrap-t, symmetric, ``weights="auto"``). The t intervals cover
  exactly when their tests do not reject, so their coverage is 1 - size.

Paired 0/1 items: cluster g has a shared difficulty c_g ~ N(0, 0.5^2) and an advantage of A over B
a_g ~ N(0, s_a^2); item i a shared latent difficulty e_i ~ N(0, 1) (the two models' correctness is
correlated through it); A is right when 0.5 + a_g/2 - c_g - e_i + eps_A > 0, B when
0.3 - a_g/2 - c_g - e_i + eps_B > 0, eps ~ N(0, 1). Given (c_g, a_g) the items of a cluster are iid,
so the cluster's discordant counts are one multinomial draw with probabilities from Gauss-Hermite
quadrature over e; mu_true and the ICC of D (between-cluster share of Var D) come from quadrature
over (c, a), and s_a is solved for the target ICC (ICC 0: no cluster effects at all). Graded scores:
D_i = mu + b_g + e_i, e_i ~ N(0, 1), b_g = tau (chi2_4 - 4) / sqrt(8) (skewed), tau^2 = ICC / (1 - ICC).

Run: python scripts/cluster_validity.py [replications [bootstrap draws [outcome...]]] (4,000 and 399
by default: the Monte-Carlo SE of a 5% size is 0.34 points, and alpha (B + 1) = 20 is a whole number,
so B adds noise to each p-value but no bias to the size; 2-4 s a design on one free core).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from llm_power._kernel.variance import mean_variance_from_sums
from llm_power._kernel.wild_cluster import cv3_variance, wild_cluster_interval, wild_cluster_test

GS = (5, 8, 10, 14, 20, 40)
PATTERNS = ("equal", "mmlu_pro", "very_unequal")
OUTCOMES = ("binary", "graded")
ICCS = (0.0, 0.05, 0.1, 0.2)
TESTS = ("CR2-IK", "CR1", "CV3", "WCR rad", "WCR webb")
INTERVALS = ("WCR inv", "WCU t")
ALPHA = 0.05
#: the binary design's parameters: latent abilities of A and B, the spread of the cluster difficulty
THETA_A, THETA_B, SD_DIFFICULTY = 0.5, 0.3, 0.5
GRADED_MU = 0.02
_E_NODES, _E_WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_E_WEIGHTS = _E_WEIGHTS / _E_WEIGHTS.sum()


@dataclass(frozen=True)
class Design:
    """One simulated design."""

    g: int
    pattern: str
    outcome: str
    icc: float


def mmlu_pro_sizes() -> np.ndarray:
    """MMLU-Pro's 14 category sizes (381 to 1,351 questions), from the bundled demo data."""
    from llm_power.io.demo import load_mmlu_pro

    _, counts = np.unique(np.asarray(load_mmlu_pro().clusters), return_counts=True)
    return np.sort(counts.astype(float))[::-1]


def design_sizes(pattern: str, g: int) -> np.ndarray:
    """The cluster sizes of a pattern with g clusters."""
    if pattern == "equal":
        return np.full(g, 100.0)
    if pattern == "mmlu_pro":
        real = mmlu_pro_sizes()
        return real if g == real.size else np.round(np.quantile(real, np.linspace(0, 1, g)))
    return np.round(20.0 * 50.0 ** np.linspace(0, 1, g))  # 20 .. 1,000 items


def _pair_probabilities(c: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(A right, B wrong) and P(A wrong, B right) of an item of a cluster with difficulty c, advantage a."""
    e = _E_NODES
    pa = special.ndtr(THETA_A + a[..., None] / 2 - c[..., None] - e)
    pb = special.ndtr(THETA_B - a[..., None] / 2 - c[..., None] - e)
    return np.sum(_E_WEIGHTS * pa * (1 - pb), axis=-1), np.sum(_E_WEIGHTS * (1 - pa) * pb, axis=-1)


def binary_moments(sd_a: float, sd_c: float) -> tuple[float, float]:
    """(mu_true, ICC of D) of the binary design, by Gauss-Hermite quadrature over (c, a)."""
    x, w = np.polynomial.hermite_e.hermegauss(30)
    w = w / w.sum()
    c, a = np.meshgrid(sd_c * x, sd_a * x, indexing="ij")
    ww = np.outer(w, w)
    p10, p01 = _pair_probabilities(c, a)
    delta = p10 - p01
    mu = float(np.sum(ww * delta))
    between = float(np.sum(ww * delta**2)) - mu**2
    total = float(np.sum(ww * (p10 + p01))) - mu**2
    return mu, between / total


def binary_sd_a(icc: float) -> tuple[float, float, float]:
    """(sd of a_g, sd of c_g, mu_true) giving the target ICC of D."""
    if icc == 0:
        return 0.0, 0.0, binary_moments(0.0, 0.0)[0]
    sd = optimize.brentq(lambda s: binary_moments(s, SD_DIFFICULTY)[1] - icc, 0.0, 10.0, xtol=1e-10)
    return sd, SD_DIFFICULTY, binary_moments(sd, SD_DIFFICULTY)[0]


def simulate(design: Design, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(sizes, cluster sums S (G, R), per-cluster sums of (D - mean)^2 (G, R), mu_true) of ``reps`` replications."""
    m = design_sizes(design.pattern, design.g)
    g = m.size
    if design.outcome == "binary":
        sd_a, sd_c, mu = binary_sd_a(design.icc)
        p10, p01 = _pair_probabilities(sd_c * rng.normal(size=(g, reps)), sd_a * rng.normal(size=(g, reps)))
        pvals = np.stack([p10, p01, np.maximum(1.0 - p10 - p01, 0.0)], axis=-1)
        counts = rng.multinomial(np.broadcast_to(m[:, None], (g, reps)).astype(np.int64), pvals)
        s = counts[..., 0] - counts[..., 1]
        mean = s.sum(axis=0) / m.sum()
        sq = counts[..., 0] + counts[..., 1] - 2.0 * mean * s + m[:, None] * mean**2
        return m, s.astype(float), sq, mu
    tau = math.sqrt(design.icc / (1.0 - design.icc))
    b = tau * (rng.chisquare(4, size=(g, reps)) - 4.0) / math.sqrt(8.0)
    s = m[:, None] * (GRADED_MU + b) + np.sqrt(m)[:, None] * rng.normal(size=(g, reps))
    within = rng.chisquare(np.broadcast_to(m[:, None] - 1.0, (g, reps)))
    mean = s.sum(axis=0) / m.sum()
    sq = within + m[:, None] * (s / m[:, None] - mean) ** 2
    return m, s, sq, GRADED_MU


def evaluate(design: Design, reps: int, n_resamples: int, seed: int) -> dict[str, float]:
    """Rejection rates of the tests (at mu_true) and coverage rates of the intervals, over ``reps``."""
    rng = np.random.default_rng(seed)
    m, s, sq, mu = simulate(design, reps, rng)
    n = float(m.sum())
    g = m.size
    est = s.sum(axis=0) / n
    resid = s - m[:, None] * est
    out: dict[str, float] = {}
    for name, kind in (("CR2-IK", "cr2"), ("CR1", "cr1")):
        mv = mean_variance_from_sums(int(n), est, sq.sum(axis=0), m, resid, sq, kind=kind)
        t = (est - mu) / np.sqrt(mv.variance)
        out[name] = float(np.mean(2 * stats.t.sf(np.abs(t), mv.df) <= ALPHA))
    t = (est - mu) / np.sqrt(cv3_variance(s, m))
    out["CV3"] = float(np.mean(2 * stats.t.sf(np.abs(t), g - 1) <= ALPHA))
    for name, weights in (("WCR rad", "rademacher"), ("WCR webb", "webb")):
        p = wild_cluster_test(s, m, mu, weights=weights, n_resamples=n_resamples, rng=rng).pvalue
        out[name] = float(np.mean(p <= ALPHA))
    for name, method in (("WCR inv", "restricted"), ("WCU t", "unrestricted")):
        ci = wild_cluster_interval(s, m, method=method, n_resamples=n_resamples, rng=rng, xtol=1e-3)
        out[name] = float(np.mean((ci.low <= mu) & (mu <= ci.high)))
    return out


def designs(outcomes: tuple[str, ...] = OUTCOMES) -> list[Design]:
    """Every design of the table (of these outcomes)."""
    return [Design(g, p, o, icc) for o in outcomes for p in PATTERNS for g in GS for icc in ICCS]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def main(reps: int = 4000, n_resamples: int = 399, outcomes: tuple[str, ...] = OUTCOMES) -> None:
    """Print the markdown table and the summary of sizes."""
    se_size = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    lo, hi = ALPHA - 3 * se_size, ALPHA + 3 * se_size
    print(f"{reps:,} replications a design, B = {n_resamples:,} bootstrap draws; Monte-Carlo SE of a 5% size "
          f"{100 * se_size:.2f} points (band 5% +- 3 SE = [{100 * lo:.2f}, {100 * hi:.2f}]); sizes and "
          "coverages in %.\n")
    head = ["outcome", "sizes", "G", "ICC", *[f"size {t}" for t in TESTS], *[f"cover {c}" for c in INTERVALS]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    rows = []
    start = time.perf_counter()
    for k, d in enumerate(designs()):
        if d.outcome not in outcomes:
            continue
        res = evaluate(d, reps, n_resamples, seed=20261201 + k)
        rows.append((d, res))
        cells = [d.outcome, d.pattern, str(d.g), f"{d.icc:g}", *[_pct(res[t]) for t in TESTS],
                 *[_pct(res[c]) for c in INTERVALS]]
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)\n")
    print("| method | designs with G >= 8 outside the band | worst size, G >= 8 | mean abs(size - 5%), G >= 8 | "
          "outside the band, G = 5 |")
    print("|---|---|---|---|---|")
    for t in (*TESTS, *INTERVALS):
        sizes = [(d, r[t] if t in TESTS else 1.0 - r[t]) for d, r in rows]
        big = [x for d, x in sizes if d.g >= 8]
        out = sum(1 for x in big if not lo <= x <= hi)
        worst = max(big, key=lambda x: abs(x - ALPHA))
        small = sum(1 for d, x in sizes if d.g == 5 and not lo <= x <= hi)
        print(f"| {t} | {out} of {len(big)} | {_pct(worst)} | {100 * np.mean([abs(x - ALPHA) for x in big]):.2f} "
              f"| {small} of {sum(1 for d, _ in sizes if d.g == 5)} |")
    print("\n(intervals: 1 - coverage is the size of the test they invert)")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*(int(a) for a in args[:2]), outcomes=tuple(args[2:]) or OUTCOMES)
