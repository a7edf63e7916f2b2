"""Diagnosis -> ReportView: everything a renderer shows, computed (and worded) once.

The terminal, Markdown and HTML renderers format a :class:`ReportView`; none of them looks into
a Diagnosis for numbers or decides on a column, a unit or a label. Names stay raw here (they are
untrusted text): each renderer escapes them for its own medium.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._format import fmt_gap, fmt_n_star, fmt_p, fmt_score
from ..resolution import Diagnosis

__all__ = ["PairRow", "ReportView", "build_view"]

#: how a verdict is explained next to every pairs table
VERDICT_NOTE = ("Resolved: q = N/N* ≥ 1 and the pair's test rejects at α; otherwise the benchmark is too small to "
                "tell, which does not mean the models are equal.")


@dataclass(frozen=True)
class ModelRow:
    """One model of the leaderboard table."""

    rank: int
    name: str
    score: str
    interval: str
    half: str


@dataclass(frozen=True)
class PairRow:
    """One pair of the pairs table: formatted cells; verdicts stay booleans (each medium marks them)."""

    rank: int
    model_a: str
    model_b: str
    gap: str
    ci: str
    p: str
    p_cluster: str | None
    n_star: str
    q: str
    resolved: bool
    regimes: list[tuple[str, bool]] = field(default_factory=list)  # (q, resolved) per stress regime


@dataclass(frozen=True)
class ReportView:
    """What every renderer shows."""

    n: int
    n_models: int
    n_pairs: int
    pairs_kind: str
    binary: bool
    alpha: str
    power: str
    level: str
    unit: str  # "pts" or "score"
    unit_long: str  # "points" or "score units"
    interval_name: str  # "Wilson" or "t"
    score_word: str  # "score" or "mean score"
    models: list[ModelRow]
    regime_labels: list[str]  # the stress regimes' short labels, in the registry's order
    pairs: list[PairRow]
    counts: list[tuple[str, str, int]]  # (key, label, unresolved) per regime
    ties_regime: str
    ties: list[list[str]]
    robustness: str | None
    verdict_note: str = VERDICT_NOTE

    @property
    def pairs_word(self) -> str:
        """The noun for the pairs: "pair" or "pairs", agreeing with their number."""
        return "pair" if self.n_pairs == 1 else "pairs"

    def pair_header(self, *, ci: bool = False) -> list[str]:
        """Columns of the pairs table; the renderers add no others."""
        head = ["#", "model A", "model B", f"gap ({self.unit})"] + ([f"{self.level} CI"] if ci else []) + ["p"]
        head += ["p cluster"] if any(p.p_cluster is not None for p in self.pairs) else []
        head += ["N*", "q", "IID"]
        for label in self.regime_labels:
            head += [f"q {label}", label]
        return head

    def pair_cells(self, row: PairRow, mark: Callable[[bool], str], *, ci: bool = False) -> list[str]:
        """Cells of one pair in :meth:`pair_header` order; ``mark`` renders a verdict for the medium."""
        cells = [str(row.rank), row.model_a, row.model_b, row.gap] + ([row.ci] if ci else []) + [row.p]
        cells += [row.p_cluster] if row.p_cluster is not None else []
        cells += [row.n_star, row.q, mark(row.resolved)]
        for q, flag in row.regimes:
            cells += [q, mark(flag)]
        return cells


def build_view(diag: Diagnosis) -> ReportView:
    """The view of a Diagnosis: every number formatted in its units, every label from the result."""
    s = diag.settings
    binary = bool(s.get("binary"))
    level = f"{100 * s.get('confidence_level', 0.95):g}%"
    models = []
    ci_low, ci_high = np.asarray(diag.model_ci_low), np.asarray(diag.model_ci_high)
    for k, name in enumerate(diag.models):
        lo, hi = float(ci_low[k]), float(ci_high[k])
        if binary:
            interval, half = f"{100 * lo:.1f} – {100 * hi:.1f}%", f"±{100 * (hi - lo) / 2:.1f}"
        else:
            interval, half = f"{lo:.4g} – {hi:.4g}", f"±{(hi - lo) / 2:.3g}"
        models.append(ModelRow(k + 1, name, fmt_score(diag.means[k], binary), interval, half))
    extra = diag.regimes[1:]  # the stress regimes computed, in the registry's order
    clustered = "cluster" in diag.n_unresolved
    pairs = [PairRow(
        rank=p.rank_a, model_a=p.model_a, model_b=p.model_b, gap=fmt_gap(p.delta, binary),
        ci=f"[{fmt_gap(p.ci_low, binary)}, {fmt_gap(p.ci_high, binary)}]" if p.ci_low is not None else "",
        p=fmt_p(p.pvalue, 2), p_cluster=fmt_p(p.pvalue_cluster, 2) if clustered else None,
        n_star=fmt_n_star(p.n_star), q=f"{p.q:.2f}", resolved=bool(p.resolved),
        regimes=[(f"{getattr(p, r.q_field):.2f}", bool(getattr(p, r.resolved_field))) for r in extra],
    ) for p in diag.pairs]
    labels = {r.key: (s.get("correction") if r.key == "corrected" else r.title) for r in diag.regimes}
    counts = [(r.key, str(labels[r.key]), int(diag.n_unresolved[r.key])) for r in diag.regimes]
    ties_regime = "cluster" if "cluster" in diag.tie_groups else "iid"
    robustness = None
    if diag.cluster_robustness:
        cr = diag.cluster_robustness
        robustness = (f"Cluster bootstrap ({cr['n_resamples']} resamples of the {s['n_clusters']} clusters): "
                      f"unresolved count median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}].")
    return ReportView(
        n=diag.n, n_models=len(diag.models), n_pairs=len(diag.pairs), pairs_kind=str(s["pairs"]), binary=binary,
        alpha=f"{s['alpha']:g}", power=f"{s['power']:g}", level=level, unit="pts" if binary else "score",
        unit_long="points" if binary else "score units", interval_name="Wilson" if binary else "t",
        score_word="score" if binary else "mean score", models=models,
        regime_labels=[r.label(s) for r in extra], pairs=pairs, counts=counts, ties_regime=ties_regime,
        ties=[g for g in diag.tie_groups[ties_regime] if len(g) > 1], robustness=robustness,
    )
