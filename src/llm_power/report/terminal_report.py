"""Terminal rendering of a resolution report (rich tables)."""

from __future__ import annotations

import math

from ..intervals import proportion_ci
from ..resolution import Diagnosis
from .terminal import print_table

__all__ = ["print_report"]


def _mark(flag):
    return "" if flag is None else ("✓" if flag else "✗")


def print_report(diag: Diagnosis, *, note: str = "") -> None:
    n = diag.n
    binary = bool(diag.settings.get("binary"))
    rows = []
    for k, name in enumerate(diag.models):
        mean = float(diag.means[k])
        if binary:
            lo, hi = proportion_ci(int(round(mean * n)), n)
            rows.append([str(k + 1), name, f"{100 * mean:.2f}%", f"{100 * lo:.1f} – {100 * hi:.1f}%"])
        else:
            rows.append([str(k + 1), name, f"{mean:.4g}", ""])
    print_table(f"Models ({n:,} items)", ["#", "model", "score", "95% Wilson interval"], rows, right_align=(0, 2, 3))
    s = diag.settings
    cols = ["#", "model A", "model B", "gap (pts)", "p", "N*", "q", "IID"]
    extra = [(k, q, r) for k, q, r in (("corrected", "q_corrected", "resolved_corrected"),
                                       ("cluster", "q_cluster", "resolved_cluster"),
                                       ("anytime", "q_anytime", "resolved_anytime")) if k in diag.n_unresolved]
    labels = {"corrected": str(s.get("correction")), "cluster": "cluster", "anytime": "anytime"}
    for k, _, _ in extra:
        cols += [f"q {labels[k]}", labels[k]]
    table = []
    for p in diag.pairs:
        row = [str(p.rank_a), p.model_a, p.model_b, f"{100 * p.delta:+.2f}", f"{p.pvalue:.2g}",
               "∞" if math.isinf(p.n_star) else f"{int(p.n_star):,}", f"{p.q:.2f}", _mark(p.resolved)]
        for _, qk, rk in extra:
            row += [f"{getattr(p, qk):.2f}", _mark(getattr(p, rk))]
        table.append(row)
    m = len(diag.pairs)
    verdicts = "; ".join(f"{key}: {count} of {m} unresolved" for key, count in diag.n_unresolved.items())
    print_table(f"Resolution of {m} {s['pairs']} pairs (α = {s['alpha']:g}, power {s['power']:g})", cols, table,
                right_align=tuple(k for k, c in enumerate(cols) if c not in ("model A", "model B")),
                caption=f"{verdicts}. q = N/N* ≥ 1: resolved (✓); q < 1: the benchmark is too small to tell (✗), "
                        "which does not mean the models are equal.")
    if diag.cluster_robustness:
        cr = diag.cluster_robustness
        print(f"Cluster bootstrap ({cr['n_resamples']} resamples of the {s['n_clusters']} clusters): unresolved "
              f"count median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}].")
    regime = "cluster" if "cluster" in diag.tie_groups else "iid"
    ties = [g for g in diag.tie_groups[regime] if len(g) > 1]
    if ties:
        print(f"Statistical ties ({regime}): " + "; ".join(" ≈ ".join(g) for g in ties))
    if note:
        print(note)
