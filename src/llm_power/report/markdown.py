"""Markdown rendering of a resolution report (for READMEs, PR comments, papers)."""

from __future__ import annotations

import re

from .._format import fmt_gap, fmt_n_star, fmt_p
from ..resolution import Diagnosis
from .terminal import safe_text

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
    """A Markdown summary: verdict counts, the pairs table, ties."""
    s = diag.settings
    m = len(diag.pairs)
    lines = [f"# {md_text(title)}", "",
             f"{len(diag.models)} models on the same {diag.n:,} items; {m} {s['pairs']} pairs "
             f"(α = {s['alpha']:g}, power = {s['power']:g}).", ""]
    for key, count in diag.n_unresolved.items():
        lines.append(f"- **{key}**: {count} of {m} pairs unresolved")
    unit = "pts" if s.get("binary") else "score"
    extra = diag.regimes[1:]  # the stress regimes computed, in the registry's order
    clustered = "cluster" in diag.n_unresolved
    header = f"| # | model A | model B | gap ({unit}) | p | N* | q | resolved |"
    header += "".join(f" q {r.label(s)} | {r.label(s)} |" for r in extra) + (" p cluster |" if clustered else "")
    lines += ["", header, "|---" * (header.count("|") - 1) + "|"]
    for p in diag.pairs:
        row = (f"| {p.rank_a} | {md_text(p.model_a)} | {md_text(p.model_b)} | "
               f"{fmt_gap(p.delta, bool(s.get('binary')))} | "
               f"{fmt_p(p.pvalue, 2)} | {fmt_n_star(p.n_star)} | {p.q:.2f} | {'yes' if p.resolved else 'no'} |")
        for regime in extra:
            row += f" {getattr(p, regime.q_field):.2f} | {'yes' if getattr(p, regime.resolved_field) else 'no'} |"
        if clustered:
            row += f" {fmt_p(p.pvalue_cluster, 2)} |"
        lines.append(row)
    regime = "cluster" if "cluster" in diag.tie_groups else "iid"
    ties = [g for g in diag.tie_groups[regime] if len(g) > 1]
    if ties:
        lines += ["", f"Statistical ties ({regime}): " + "; ".join(" ≈ ".join(md_text(m) for m in g) for g in ties)]
    lines += ["", "Resolved: q = N/N* ≥ 1 and the pair's test rejects at α; otherwise the benchmark is too small "
              "to tell (which does not mean the models are equal).", ""]
    return "\n".join(lines)
