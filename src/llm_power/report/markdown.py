"""Markdown rendering of a resolution report (for READMEs, PR comments, papers)."""

from __future__ import annotations

import re

from ..resolution import Diagnosis
from .terminal import safe_text
from .view import build_view

__all__ = ["md_text", "render_markdown"]

# CommonMark lets a backslash escape any ASCII punctuation; these are the ones that can start
# markup in a table cell: emphasis, code, links and images, raw HTML, table pipes, headings
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~&])")


def md_text(text: object) -> str:
    """Untrusted text (model names) as literal text in a Markdown table cell: control characters
    visible, line breaks removed, every markup character backslash-escaped.
    """
    return _MD_SPECIAL.sub(r"\\\1", safe_text(text))


def render_markdown(diag: Diagnosis, *, title: str = "Leaderboard resolution report") -> str:
    """A Markdown summary: verdict counts, the pairs table, ties (names escaped)."""
    view = build_view(diag)
    lines = [f"# {md_text(title)}", "",
             f"{view.n_models} models on the same {view.n:,} items; {view.n_pairs} {view.pairs_kind} {view.pairs_word} "
             f"(α = {view.alpha}, power = {view.power}).", ""]
    lines += [f"- **{key}**: {count} of {view.n_pairs} {view.pairs_word} unresolved" for key, _, count in view.counts]
    header = view.pair_header()
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in view.pairs:
        cells = view.pair_cells(row, lambda flag: "yes" if flag else "no")
        cells[1], cells[2] = md_text(cells[1]), md_text(cells[2])
        lines.append("| " + " | ".join(cells) + " |")
    if view.ties:
        lines += ["", f"Statistical ties ({view.ties_regime}): "
                  + "; ".join(" ≈ ".join(md_text(m) for m in g) for g in view.ties)]
    lines += ["", view.verdict_note, ""]
    return "\n".join(lines)
