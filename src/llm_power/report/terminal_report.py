"""Terminal rendering of a resolution report (rich tables)."""

from __future__ import annotations

from .._format import fmt_gap, fmt_n_star, fmt_p, fmt_score
from ..resolution import Diagnosis
from .terminal import print_table, safe_text

__all__ = ["print_report"]

def _mark(flag):
    return "" if flag is None else ("✓" if flag else "✗")


def interval_label(diag: Diagnosis) -> str:
    level = f"{100 * diag.settings.get('confidence_level', 0.95):g}%"
    return f"{level} {'Wilson' if diag.settings.get('binary') else 't'} interval"


def print_report(diag: Diagnosis, *, note: str = "") -> None:
    """Print the resolution report as terminal tables (names escaped)."""
    n = diag.n
    binary = bool(diag.settings.get("binary"))
    rows = []
    for k, name in enumerate(diag.models):
        mean = float(diag.means[k])
        lo, hi = float(diag.model_ci_low[k]), float(diag.model_ci_high[k])
        interval = f"{100 * lo:.1f} – {100 * hi:.1f}%" if binary else f"{lo:.4g} – {hi:.4g}"
        rows.append([str(k + 1), name, fmt_score(mean, binary), interval])
    print_table(f"Models ({n:,} items)", ["#", "model", "score" if binary else "mean score", interval_label(diag)],
                rows, right_align=(0, 2, 3))
    s = diag.settings
    unit = "pts" if binary else "score"
    cols = ["#", "model A", "model B", f"gap ({unit})", "p", "N*", "q", "IID"]
    extra = diag.regimes[1:]  # the stress regimes computed, in the registry's order
    if "cluster" in diag.n_unresolved:
        cols.insert(5, "p cluster")
    for regime in extra:
        cols += [f"q {regime.label(s)}", regime.label(s)]
    table = []
    for p in diag.pairs:
        row = [str(p.rank_a), p.model_a, p.model_b, fmt_gap(p.delta, binary), fmt_p(p.pvalue, 2),
               fmt_n_star(p.n_star), f"{p.q:.2f}", _mark(p.resolved)]
        if "cluster" in diag.n_unresolved:
            row.insert(5, fmt_p(p.pvalue_cluster, 2))
        for regime in extra:
            row += [f"{getattr(p, regime.q_field):.2f}", _mark(getattr(p, regime.resolved_field))]
        table.append(row)
    m = len(diag.pairs)
    verdicts = "; ".join(f"{key}: {count} of {m} unresolved" for key, count in diag.n_unresolved.items())
    print_table(f"Resolution of {m} {s['pairs']} pairs (α = {s['alpha']:g}, power {s['power']:g})", cols, table,
                right_align=tuple(k for k, c in enumerate(cols) if c not in ("model A", "model B")),
                caption=f"{verdicts}. Resolved (✓): q = N/N* ≥ 1 and the pair's test rejects at α; otherwise the "
                        "benchmark is too small to tell (✗), which does not mean the models are equal.")
    if diag.cluster_robustness:
        cr = diag.cluster_robustness
        print(f"Cluster bootstrap ({cr['n_resamples']} resamples of the {s['n_clusters']} clusters): unresolved "
              f"count median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}].")
    regime = "cluster" if "cluster" in diag.tie_groups else "iid"
    ties = [g for g in diag.tie_groups[regime] if len(g) > 1]
    if ties:
        print(safe_text(f"Statistical ties ({regime}): " + "; ".join(" ≈ ".join(g) for g in ties)))
    if note:
        print(safe_text(note))
