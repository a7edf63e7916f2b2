"""Markdown rendering of a resolution report (for READMEs, PR comments, papers)."""

from __future__ import annotations

import re

from ..rankings import RankReport
from ..resolution import Diagnosis
from .terminal import safe_text
from .view import build_view

__all__ = ["md_text", "render_markdown"]

#: pairs listed in a Markdown report (a table of millions of rows is no report)
MAX_ROWS = 1_000

# CommonMark lets a backslash escape any ASCII punctuation; these are the ones that can start
# markup in a table cell: emphasis, code, links and images, raw HTML, table pipes, headings
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~&])")
# our own prose (labels, sentences) never starts a line and holds no link: only what could
# still be read as emphasis, code, HTML or a table pipe is escaped
_MD_PROSE = re.compile(r"([\\`*_<>|])")


def md_prose(text: object) -> str:
    """The package's own words (no untrusted text) as literal Markdown inside a line."""
    return _MD_PROSE.sub(r"\\\1", str(text))


#: what GitHub turns into a ping or a link by itself: @user, @org/team, bare URLs, www. and e-mail
#: addresses (an @ already covers those); a zero-width space entity after the trigger breaks it
_MD_AUTO = re.compile(r"(@)|((?:https?|ftp):)(//)|\b(www)(\.)", re.IGNORECASE)


def _inert(match: re.Match[str]) -> str:
    if match.group(1):
        return "@&#8203;"
    if match.group(2):
        return f"{match.group(2)}&#8203;{match.group(3)}"
    return f"{match.group(4)}&#8203;{match.group(5)}"


def md_text(text: object) -> str:
    """Untrusted text (model names) as literal text in a Markdown table cell: control characters
    visible, line breaks removed, every markup character backslash-escaped, and mentions
    (``@user``, ``@org/team``) and autolinks (``https://``, ``www.``, e-mail addresses) made inert
    with a zero-width space (GitHub would otherwise ping a team or link a beacon on every PR).
    """
    return _MD_AUTO.sub(_inert, _MD_SPECIAL.sub(r"\\\1", safe_text(text)))


def render_markdown(diag: Diagnosis, *, title: str = "Leaderboard resolution report",
                    cluster_name: str = "cluster", rankings: RankReport | None = None) -> str:
    """A Markdown summary: the verdict in words, the rankings (``rankings``: :func:`~llm_power.rank_report`
    of the same diagnosis), the pairs table (every column), ties, next steps (names escaped).
    """
    view = build_view(diag, cluster_name=cluster_name, max_rows=MAX_ROWS, rankings=rankings)
    lines = [f"# {md_text(title)}", "",
             f"{view.n_models} models on the same {view.n:,} items; {view.pairs_phrase} "
             f"(α = {view.alpha}, power = {view.power}).", ""]
    lines += [f"- {md_prose(line)}" for line in view.sentences]
    if view.ranking is not None:
        lines += ["", "Rankings:", ""] + [f"- {line}" for line in view.ranking.lines(md_text, md_prose)]
    keys = view.columns(wide=True, ci=True)
    header = view.header(keys)
    lines += ["", "| " + " | ".join(md_prose(h) for h in header) + " |", "|" + "---|" * len(header)]
    shown = len(view.pairs)
    for row in view.pairs:
        cells = [md_text(cell) if key in ("model_a", "model_b") else md_prose(cell)
                 for key, cell in zip(keys, view.cells(row, keys, lambda flag: "✓" if flag else "✗"), strict=True)]
        lines.append("| " + " | ".join(cells) + " |")
    if shown < view.n_pairs:
        lines += ["", f"The first {shown:,} of {view.n_pairs:,} pairs; every pair is in the JSON (--json) and "
                      "Parquet (--parquet) reports."]
    if view.robustness:  # the cluster resamples, whether clustering matters, the caution where no test held
        lines += ["", md_prose(view.robustness)]
    if view.ties:
        ties_label = next((r.label for r in view.regimes if r.key == view.ties_regime), view.ties_regime)
        lines += ["", f"Statistical ties ({ties_label}): "
                  + "; ".join(" ≈ ".join(md_text(m) for m in g) for g in view.ties)]
    lines += ["", md_prose(view.verdict_note)]
    lines += [f"\nNext: {step.text(md_text, md_prose)}" for step in view.steps]
    lines += [f"\nNext: {md_prose(view.settled)}"] if not view.steps and view.settled else []
    lines += [""]
    return "\n".join(lines)
