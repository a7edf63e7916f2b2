"""Power at the bootstrap N* (issue 44): is a benchmark of N* clusters powered at 0.80 for the CR2 test?

For each design a population of G_POP clusters of paired 0/1 items is generated: cluster g has
m_g items (equal, log-normal or very unequal sizes) and cells p10_g = 0.12 + gap/2 + a_g,
p01_g = 0.12 - gap/2 - a_g (clipped to [0.005, 0.6]) with a cluster random effect a_g ~ N(0, sd^2),
so the paired difference D has a between-cluster share (ICC, ANOVA, measured on the population)
of about 4 sd^2 / 0.24; each cluster's (n10, n01, rest) is one multinomial draw. Then per pilot:

1. a pilot benchmark of G = 14 clusters is drawn from the population (without replacement) and
   its bootstrap N* (:func:`llm_power._kernel.cluster_nstar.bootstrap_n_star`, CR2 test, 1,000
   simulations) with ``pilot="plug_in"`` (the observed clusters as the truth) and with
   ``pilot="expected"`` (the expected power over the pilot variance's posterior), the plug-in G'*
   times the Julious-Owen (2006) factor (:func:`julious_owen`), and today's formula
   N* = max(DE, 1) K_df sigma^2 / delta^2 are computed;
2. **the bootstrap world** (where the plug-in N* is right by construction when the code is right):
   the power at the plug-in G'* clusters drawn from the pilot's clusters, re-estimated on
   ``n_check`` fresh simulations,
   and at the grid point below; "within 3 SE" means power(G'*) >= 0.80 - 3 SE and
   power(below) <= 0.80 + 3 SE, SE combining the search's and the check's Monte-Carlo error (the
   answer is the smallest G' reaching 0.80 up to that noise); the expected-power variant's own
   check (``achieved_power``, its world averaged over w) is reported beside it;
3. **the population**: the power of the CR2 test on G'* clusters drawn from the population, for
   each planner (today's formula in clusters: ceil(N* / mean pilot size)), over the
   pilots -- mean, SD, 10/50/90% quantiles and the Monte-Carlo SE of the mean over pilots. Both inherit the pilot's noise in delta-hat (a
   14-cluster pilot of a gap that needs ~100 clusters barely sees it), so they are also reported
   with the pilot's clusters re-centred on the true gap (S_g + m_g (delta - delta_hat)): what is
   left is the noise of the between-cluster variance alone. ``oracle`` is the population's own
   bootstrap N* (4,000 simulations).

Run: python scripts/cluster_nstar_validity.py [pilots [sims [check sims]]] (100, 1,000, 10,000 by default).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from llm_power._core.errors import DegenerateDataWarning, InfeasibleDesignWarning
from llm_power._kernel import cluster_nstar
from llm_power._kernel.cluster_nstar import bootstrap_n_star, cluster_bootstrap_power
from llm_power._kernel.variance import cluster_design_effects

G_POP = 800
G_PILOT = 14
TARGET = 0.8
BASE = 0.12


@dataclass(frozen=True)
class Design:
    """One population design."""

    name: str
    sizes: str  # "equal", "lognormal", "very_unequal"
    sd: float  # of the cluster effect a_g
    gap: float


DESIGNS = (
    Design("lognormal, ICC~.05", "lognormal", 0.055, 0.06),
    Design("lognormal, ICC~.10", "lognormal", 0.078, 0.08),
    Design("very unequal, ICC~.05", "very_unequal", 0.055, 0.06),
    Design("equal 50, ICC~.08", "equal", 0.07, 0.06),
)


def population(design: Design, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(per-cluster sums of D, of D^2, sizes) of a population of G_POP clusters."""
    if design.sizes == "equal":
        m = np.full(G_POP, 50.0)
    elif design.sizes == "lognormal":
        m = np.clip(np.round(np.exp(rng.normal(math.log(50.0), 0.7, G_POP))), 8, 400)
    else:
        m = np.round(np.exp(rng.uniform(math.log(10.0), math.log(600.0), G_POP)))
    a = rng.normal(0.0, design.sd, G_POP)
    p10 = np.clip(BASE + design.gap / 2 + a, 0.005, 0.6)
    p01 = np.clip(BASE - design.gap / 2 - a, 0.005, 0.6)
    cells = np.stack([p10, p01, 1.0 - p10 - p01], axis=1)
    n = np.array([rng.multinomial(int(mm), c) for mm, c in zip(m, cells, strict=True)])
    return (n[:, 0] - n[:, 1]).astype(float), (n[:, 0] + n[:, 1]).astype(float), m


def icc(s: np.ndarray, sq: np.ndarray, m: np.ndarray) -> float:
    """The ANOVA ICC of D (the kernel's)."""
    n = m.sum()
    mean = s.sum() / n
    r = s - m * mean
    eff = cluster_design_effects(n, m.size, np.ones(1), np.array([np.sum(r**2)]), np.array([np.sum(r**2)]),
                                 np.array([np.sum(r**2 / m)]), float(np.sum(m**2)),
                                 np.array([np.sum(sq - s * s / m)]))
    return float(eff.icc[0])


def _quiet() -> Any:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore", DegenerateDataWarning)
    warnings.simplefilter("ignore", InfeasibleDesignWarning)
    return ctx


def julious_owen(g_star: float, s: np.ndarray, sq: np.ndarray, m: np.ndarray) -> float:
    """The plug-in G'* times the Julious-Owen (2006) factor: ``kappa (t'_{nu, power}(z) / (z + z_power))^2``,
    t' the noncentral t quantile on the pilot's Imbens-Kolesar df nu with noncentrality z = z_{1-alpha/2}
    (the normal-test approximation of the expected power over the posterior of the variance), kappa the
    CR2 correction of the bootstrap world's between-cluster variance (:func:`cluster_nstar._pilot_uncertainty`).
    """
    if not math.isfinite(g_star):
        return g_star
    nu, kappa = cluster_nstar._pilot_uncertainty(s[:, None], sq[:, None], m)  # noqa: SLF001
    z, z_p = stats.norm.ppf(0.975), stats.norm.ppf(TARGET)
    factor = float(kappa[0]) * (float(stats.nct.ppf(TARGET, float(nu[0]), z)) / (z + z_p)) ** 2
    return float(math.ceil(g_star * factor))


def _variants(s: np.ndarray, sq: np.ndarray, m: np.ndarray, n_sims: int, rng: np.random.Generator,
              world: dict[str, list[float]]) -> dict[str, float]:
    """G' of every planner on this pilot (clusters); records the pilot's own checks in ``world``."""
    plug = bootstrap_n_star(s, sq, m, n_sims=n_sims, pilot="plug_in", rng=rng)
    expected = bootstrap_n_star(s, sq, m, n_sims=n_sims, pilot="expected", rng=rng)
    world["expected"].append(float(expected.achieved_power))
    g_f = float(plug.n_star_formula) / m.mean()
    out = {"boot": float(plug.n_clusters), "expected": float(expected.n_clusters),
           "julious_owen": julious_owen(float(plug.n_clusters), s, sq, m),
           "formula": float(math.ceil(g_f)) if math.isfinite(g_f) else math.inf}
    for name, planner in EXTRA.items():
        out[name] = planner(s, sq, m, n_sims, rng)
    world["_plug"] = [float(plug.n_clusters), float(plug.n_clusters_below)]
    return out


#: more planners to measure: name -> f(s, sq, m, n_sims, rng) -> G' (for experiments)
EXTRA: dict[str, Any] = {}


def run(designs: Any = DESIGNS, *, n_pilots: int = 100, n_sims: int = 1000, n_check: int = 10000,  # noqa: PLR0914
        n_population: int = 2000, oracle_sims: int = 4000, seed: int = 0) -> list[dict[str, Any]]:
    """One row of results per design (see the module docstring)."""
    rows = []
    for d_i, design in enumerate(designs):
        rng = np.random.default_rng([seed, d_i])
        ps, psq, pm = population(design, rng)
        true_gap = ps.sum() / pm.sum()
        ctx = _quiet()
        oracle = bootstrap_n_star(ps, psq, pm, n_sims=oracle_sims, pilot="plug_in", rng=rng)
        memo: dict[int, float] = {}

        def pop_power(g: float, memo: dict[int, float] = memo, ps: np.ndarray = ps, psq: np.ndarray = psq,
                      pm: np.ndarray = pm, rng: np.random.Generator = rng) -> float:
            if not math.isfinite(g):
                return math.nan
            key = max(int(g), 2)
            if key not in memo:
                memo[key] = float(cluster_bootstrap_power(ps, psq, pm, key, n_sims=n_population, pilot="plug_in",
                                                          rng=rng)[0])
            return memo[key]

        world: dict[str, list[float]] = {"plug_in": [], "expected": []}
        inside: list[bool] = []
        g_all: dict[str, list[float]] = {}
        pw: dict[str, list[float]] = {}
        for _ in range(n_pilots):
            pick = rng.choice(G_POP, G_PILOT, replace=False)
            s, sq, m = ps[pick], psq[pick], pm[pick]
            centred = s + m * (true_gap - s.sum() / m.sum())
            for suffix, sums in (("", s), ("_true_gap", centred)):
                gs = _variants(sums, sq, m, n_sims, rng, world)
                for name, g in gs.items():
                    g_all.setdefault(name + suffix, []).append(g)
                    pw.setdefault(name + suffix, []).append(pop_power(g))
                if suffix:
                    continue
                g_star, below = world.pop("_plug")
                if math.isfinite(g_star):  # the plug-in's bootstrap world
                    at = cluster_bootstrap_power(s, sq, m, int(g_star), n_sims=n_check, pilot="plug_in", rng=rng)[0]
                    se = math.sqrt(TARGET * (1 - TARGET) * (1 / n_sims + 1 / n_check))
                    ok = float(at) >= TARGET - 3 * se
                    if math.isfinite(below):
                        at_below = float(cluster_bootstrap_power(s, sq, m, int(below), n_sims=n_check, pilot="plug_in",
                                                                 rng=rng)[0])
                        ok &= at_below <= TARGET + 3 * se
                    world["plug_in"].append(float(at))
                    inside.append(ok)
            world.pop("_plug", None)
        ctx.__exit__(None, None, None)

        def summary(values: list[float]) -> dict[str, float]:
            v = np.array([x for x in values if math.isfinite(x)])
            if not v.size:
                return {"finite": 0.0}
            return {"finite": v.size / len(values), "mean": float(v.mean()), "sd": float(v.std()),
                    "q10": float(np.quantile(v, 0.1)), "q50": float(np.quantile(v, 0.5)),
                    "q90": float(np.quantile(v, 0.9))}

        gb = np.array(g_all["boot"])
        rows.append({"design": design.name, "icc": icc(ps, psq, pm), "gap": true_gap, "mean_size": float(pm.mean()),
                     "oracle_g": float(oracle.n_clusters), "oracle_power": float(oracle.achieved_power),
                     "pilots": n_pilots, "boot_finite": float(np.mean(np.isfinite(gb))),
                     "boot_g_median": float(np.median(gb)), "formula_g_median": float(np.median(g_all["formula"])),
                     "g_median": {k: float(np.median(v)) for k, v in g_all.items()},
                     "boot_world_mean": float(np.mean(world["plug_in"])) if world["plug_in"] else math.nan,
                     "boot_world_sd": float(np.std(world["plug_in"])) if world["plug_in"] else math.nan,
                     "expected_world_mean": float(np.nanmean(world["expected"])) if world["expected"] else math.nan,
                     "within_3se": float(np.mean(inside)) if inside else math.nan,
                     "n_population": n_population,
                     **{f"pop_{k}": summary(v) for k, v in pw.items()}})
    return rows


def _fmt(x: dict[str, float]) -> str:
    if "mean" not in x:
        return "no finite N*"
    return (f"{x['mean']:.3f} (sd {x['sd']:.3f}; {x['q10']:.2f}/{x['q50']:.2f}/{x['q90']:.2f}; "
            f"finite {100 * x['finite']:.0f}%)")


LABELS = {"boot": "bootstrap N*, plug-in", "expected": "bootstrap N*, expected power",
          "julious_owen": "plug-in x Julious-Owen", "formula": "today's formula N*"}


def main(argv: list[str]) -> None:
    pilots = int(argv[0]) if argv else 100
    sims = int(argv[1]) if len(argv) > 1 else 1000
    check = int(argv[2]) if len(argv) > 2 else 10000
    t0 = time.perf_counter()
    rows = run(DESIGNS, n_pilots=pilots, n_sims=sims, n_check=check)
    for r in rows:
        print(f"\n{r['design']}: population ICC {r['icc']:.3f}, gap {r['gap']:.4f}, mean size {r['mean_size']:.0f}; "
              f"population's own bootstrap N* {r['oracle_g']:.0f} clusters (power {r['oracle_power']:.3f})")
        print(f"  pilots {r['pilots']} of {G_PILOT} clusters: median G' " + ", ".join(
            f"{k} {v:.0f}" for k, v in r["g_median"].items() if not k.endswith("_true_gap")))
        print(f"  plug-in bootstrap world: power at N* {r['boot_world_mean']:.4f} mean (sd {r['boot_world_sd']:.4f}), "
              f"within 3 SE {100 * r['within_3se']:.0f}% of pilots; expected-power world {r['expected_world_mean']:.4f}")
        for suffix, label in (("", "estimated gap"), ("_true_gap", "true gap")):
            print(f"  population power with the {label} (mean (sd; q10/q50/q90); MC SE of the mean over pilots):")
            for key in r["g_median"]:
                if key.endswith("_true_gap") or key + suffix not in r["g_median"]:
                    continue
                x = r[f"pop_{key}{suffix}"]
                se = x.get("sd", math.nan) / math.sqrt(max(x.get("finite", 0) * r["pilots"], 1))
                print(f"    {LABELS.get(key, key):32s} {_fmt(x)}  SE {se:.3f}")
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
