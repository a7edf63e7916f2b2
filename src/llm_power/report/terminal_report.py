"""Terminal rendering of a resolution report (rich tables) from its :class:`~.view.ReportView`."""

from __future__ import annotations

from ..resolution import Diagnosis
from .terminal import print_table, safe_text
from .view import build_view

__all__ = ["print_report"]


def _mark(flag: bool) -> str:
    return "✓" if flag else "✗"


def print_report(diag: Diagnosis, *, note: str = "") -> None:
    """Print the resolution report as terminal tables (names escaped)."""
    view = build_view(diag)
    rows = [[str(m.rank), m.name, m.score, m.interval] for m in view.models]
    print_table(f"Models ({view.n:,} items)",
                ["#", "model", view.score_word, f"{view.level} {view.interval_name} interval"], rows,
                right_align=(0, 2, 3))
    cols = view.pair_header()
    table = [view.pair_cells(row, _mark) for row in view.pairs]
    verdicts = "; ".join(f"{key}: {count} of {view.n_pairs} unresolved" for key, _, count in view.counts)
    title = f"Resolution of {view.n_pairs} {view.pairs_kind} {view.pairs_word} (α = {view.alpha}, power {view.power})"
    print_table(title, cols,
                table, right_align=tuple(k for k, c in enumerate(cols) if c not in ("model A", "model B")),
                caption=f"{verdicts}. {view.verdict_note}")
    if view.robustness:
        print(view.robustness)
    if view.ties:
        print(safe_text(f"Statistical ties ({view.ties_regime}): " + "; ".join(" ≈ ".join(g) for g in view.ties)))
    if note:
        print(safe_text(note))
