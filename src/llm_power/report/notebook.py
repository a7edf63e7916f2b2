"""Results in notebooks and files: ``_repr_html_`` for Jupyter and ``to_html`` / ``to_markdown`` /
``to_json`` on every result.

The notebook view of a leaderboard (:class:`~llm_power.Diagnosis`) is built from the same
:class:`~.view.ReportView` as the HTML report -- the verdict sentences, the models and the pairs
with one verdict per regime -- with the report's leaderboard chart and chart of the gaps as inline
SVG; an arena's from the same rows and forest plot as its report. A result whose command prints a
table of its own (``compare``, ``rank``, ``noise``, ``passk``, ``subset plan``, ``plan runs``) shows
that table (the views of :mod:`.tables`), with every field one click away; any other result shows
its summary, its numbers by name and its per-model / per-pair / per-k arrays as columns. Fragments
carry their own scoped styles and no script; every name is escaped. ``to_html(path)`` writes the
full self-contained report (the one ``--html`` writes) for a leaderboard or an arena.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from .tables import TableView
from .terminal import safe_text
from .view import in_points

__all__ = ["fragment", "html_document", "json_text", "markdown_text", "write"]

#: pairs shown in a notebook before "… N more" (every pair is in to_json / to_frame)
MAX_NOTEBOOK_PAIRS = 40

_STYLE = ("<style>.llmp{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2328;max-width:100%;"
          "overflow-x:auto}.llmp h3{margin:.2em 0 .4em;font-size:1.1em}.llmp p{margin:.2em 0}"
          ".llmp table{border-collapse:collapse;margin:.4em 0;font-size:.92em}.llmp th,.llmp td{padding:.2em .6em;"
          "border-bottom:1px solid #d0d7de;text-align:right;white-space:nowrap}.llmp th{font-weight:600}"
          ".llmp td.l,.llmp th.l{text-align:left}.llmp .ok{color:#1a7f37;font-weight:700}"
          ".llmp .no{color:#57606a}.llmp pre{white-space:pre-wrap;font-size:.9em;margin:.3em 0}"
          ".llmp .chart svg{max-width:100%;height:auto}</style>")


def _e(text: Any) -> str:
    """Untrusted text for HTML: control characters shown as escapes, then HTML-escaped."""
    return escape(safe_text(text))


def _table(header: list[str], rows: list[list[str]], left: tuple[int, ...] = ()) -> str:
    head = "".join(f"<th class=\"l\">{_e(h)}</th>" if i in left else f"<th>{_e(h)}</th>" for i, h in enumerate(header))
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = "l" if i in left else ("ok" if cell == "✓" else "no" if cell == "✗" else "")
            cells.append(f"<td class=\"{cls}\">{_e(cell)}</td>" if cls else f"<td>{_e(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _mark(flag: bool) -> str:
    return "✓" if flag else "✗"


def _diagnosis_fragment(diag: Any) -> str:
    from .view import build_view

    view = build_view(diag, max_rows=MAX_NOTEBOOK_PAIRS)
    parts = [f"<h3>Leaderboard resolution: {_e(view.n_models)} models on {view.n:,} items</h3>"]
    parts += [f"<p>{_e(line)}</p>" for line in view.sentences]
    parts.append(_table(["#", "model", view.score_word, f"{view.level} {view.interval_name} interval"],
                        [[str(m.rank), m.name, m.score, m.interval] for m in view.models], left=(1,)))
    parts.append(_charts(diag))
    keys = view.columns(wide=False, ci=True, optional=[view.strictest.n_star_field])
    parts.append(f"<p><b>Resolution of {_e(view.pairs_phrase)}</b> (α = {_e(view.alpha)}, power {_e(view.power)})</p>")
    parts.append(_table(view.header(keys), [view.cells(r, keys, _mark) for r in view.pairs], left=(1, 2)))
    if len(view.pairs) < view.n_pairs:
        parts.append(f"<p>… {view.n_pairs - len(view.pairs):,} more pairs: <code>to_frame()</code> or "
                     "<code>to_json()</code> has them all.</p>")
    if view.robustness:  # the cluster resamples, whether clustering matters, the caution
        parts.append(f"<p>{_e(view.robustness)}</p>")
    parts.append(f"<p>{_e(view.verdict_note)}</p>")
    parts += [f"<p>next: {_e(line)}</p>" for line in view.next_steps]
    return "".join(parts)


def _charts(diag: Any) -> str:
    """The report's leaderboard chart and its chart of the gaps (a forest plot, or the pair matrix
    for many pairs), as inline SVG: the same figures the HTML report draws.
    """
    from .html import draw_plots

    plots = draw_plots(diag, in_points(diag.settings), None)
    shown = [plots["leaderboard"], plots.get("forest") or plots.get("matrix") or ""]
    return "".join(f"<div class=\"chart\">{svg}</div>" for svg in shown if svg)


def _arena_chart(diag: Any) -> str:
    """The arena report's forest plot of the gaps (inline SVG), when the fit has gaps to draw."""
    from .arena import MAX_TABLE_PAIRS, forest_svg

    svg = forest_svg(diag, MAX_TABLE_PAIRS) if diag.n_pairs else ""
    return f"<div class=\"chart\">{svg}</div>" if svg else ""


def _arena_fragment(diag: Any) -> str:
    from .arena import (
        MAX_TERMINAL_ROWS,
        arena_header,
        arena_legend,
        arena_ranking_lines,
        arena_rows,
        arena_sentences,
        monitor_caption,
        monitor_header,
        monitor_rows,
        monitor_sentences,
        rank_header,
        rank_table,
        style_caption,
        style_header,
        style_rows,
        style_sentences,
    )

    parts = [f"<h3>Arena: {len(diag.models):,} models, {diag.n_battles:,} battles</h3>"]
    parts.append(_table(rank_header(diag), rank_table(diag), left=(1,)))
    if "raw_elo" in diag.ranks:
        if style_rows(diag):
            parts.append(_table(style_header(diag), style_rows(diag), left=(0,)))
        parts.append(f"<p>{_e(style_caption(diag))}</p>")
        parts += [f"<p>{_e(line)}</p>" for line in style_sentences(diag)]
    if diag.monitor is not None:
        parts.append(_table(monitor_header(diag), monitor_rows(diag, MAX_TERMINAL_ROWS), left=(0, 1)))
        parts.append(f"<p>{_e(monitor_caption(diag))}</p>")
        parts += [f"<p>{_e(line)}</p>" for line in monitor_sentences(diag)]
    rows = arena_rows(diag, MAX_TERMINAL_ROWS)
    parts.append(_table(arena_header(diag), rows, left=(0, 1)))
    if len(rows) < diag.n_pairs:
        parts.append(f"<p>… {diag.n_pairs - len(rows):,} more pairs: <code>to_json()</code> has them all.</p>")
    parts.append(f"<p>{_e(arena_legend(diag))}</p>")
    parts.append(_arena_chart(diag))
    parts += [f"<p>{_e(line)}</p>" for line in arena_sentences(diag) + arena_ranking_lines(diag)]
    return "".join(parts)


def _scalar(value: Any) -> str | None:
    """A field shown in the generic table: numbers, text, booleans and intervals (arrays and nested
    data: no -- the columns table takes the arrays).
    """
    from .._core.results import ConfidenceInterval

    if isinstance(value, (bool, np.bool_)) or value is None:
        return "—" if value is None else str(bool(value))
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return "—" if math.isnan(v) else f"{v:.4g}"
    if isinstance(value, str):
        return value
    if isinstance(value, ConfidenceInterval) and _scalar(value.low) is not None and _scalar(value.high) is not None:
        return f"[{_scalar(value.low)}, {_scalar(value.high)}]"
    if (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, (float, np.floating)) for v in value)):
        return f"[{_scalar(value[0])}, {_scalar(value[1])}]"  # an interval kept as a pair of floats
    return None


def _column(value: Any) -> list[Any] | None:
    """A field that is one value per model, pair or k: a 1-D array or a list of scalars."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return list(value.tolist())
    if isinstance(value, list) and value and all(_scalar(v) is not None for v in value):
        return value
    return None


def _columns_view(result: Any, limit: int = MAX_NOTEBOOK_PAIRS) -> TableView | None:
    """The result's per-model / per-pair / per-k fields side by side: the longest run of fields of one
    length (the first ``limit`` rows; the rest are in ``to_dict()``).
    """
    groups: dict[int, list[tuple[str, list[Any]]]] = {}
    for name in result.fields():
        col = _column(getattr(result, name))
        if col is not None and len(col) > 1:
            groups.setdefault(len(col), []).append((name, col))
    if not groups:
        return None
    length, cols = max(groups.items(), key=lambda kv: (len(kv[1]), kv[0]))
    if len(cols) < 2:
        return None
    rows = [[_scalar(c[k]) or "—" for _, c in cols] for k in range(min(length, limit))]
    more = f"… {length - limit:,} more rows: to_dict() or to_json() has them all." if length > limit else None
    return TableView("", [name for name, _ in cols], rows, caption=more)


def _own_views(result: Any) -> list[TableView]:
    """The tables a command prints for this kind of result (the CLI's own views), if it has them."""
    from . import tables

    kind = type(result).__name__
    if kind == "Comparison":
        return [tables.comparison_view(result, ("A", "B"))]
    if kind == "PassAtKComparison":
        return [tables.passk_comparison_view(result, [int(k) for k in result.k], "A", "B")]
    if kind == "NoiseReport":
        return tables.noise_views(result, runs_by=str(getattr(result, "runs_by", "run")))
    one: dict[str, Callable[[Any], TableView]] = {"SubsetPlan": tables.subset_plan_view,
                                                  "RunPlanResult": tables.runs_plan_view,
                                                  "LeaderboardPlan": tables.leaderboard_plan_view,
                                                  "RankIntervalsResult": tables.rank_intervals_view}
    if kind in one:
        return [one[kind](result)]
    if kind == "RankReport" and getattr(result, "ranks", None) is not None:
        return [tables.rank_intervals_view(result.ranks)]
    return []


def _view_html(view: TableView) -> str:
    parts = [f"<p><b>{_e(view.title)}</b></p>"] if view.title else []
    right = set(view.right_align)  # as on the terminal: the columns a view does not right-align are left
    left = tuple(k for k in range(len(view.columns)) if k not in right)
    parts.append(_table(list(view.columns), [list(r) for r in view.rows], left=left))
    if view.caption:
        parts.append(f"<p>{_e(view.caption)}</p>")
    return "".join(parts)


def _lines(text: str) -> str:
    """Preformatted text, each line escaped on its own (a newline stays a newline, not an escape)."""
    return "\n".join(_e(line) for line in str(text).splitlines())


def _generic_fragment(result: Any) -> str:
    parts = [f"<h3>{_e(result.report_title())}</h3>", f"<pre>{_lines(result.summary())}</pre>"]
    own = _own_views(result)
    parts += [_view_html(view) for view in own]
    rows = []
    for name in result.fields():
        shown = _scalar(getattr(result, name))
        if shown is not None:
            rows.append([name, shown])
    if rows and own:  # the command's own tables say it; every field is one click away
        parts.append(f"<details><summary>all fields</summary>{_table(['field', 'value'], rows, left=(0,))}</details>")
    elif rows:
        parts.append(_table(["field", "value"], rows, left=(0,)))
    columns = None if own else _columns_view(result)
    if columns is not None:
        parts.append(_view_html(columns))
    return "".join(parts)


def fragment(result: Any) -> str:
    """The notebook view of ``result``: a self-contained HTML fragment (scoped styles, no script)."""
    views = {"diagnosis": _diagnosis_fragment, "arena": _arena_fragment}
    body = views.get(getattr(result, "view_kind", "generic"), _generic_fragment)(result)
    return f"<div class=\"llmp\">{_STYLE}{body}</div>"


def html_document(result: Any, *, title: str | None = None) -> str:
    """A self-contained HTML page: the full report for a leaderboard or an arena (what ``--html``
    writes), the notebook view on a page for any other result.
    """
    kind = getattr(result, "view_kind", "generic")
    if kind == "diagnosis":
        from .html import render_html

        return render_html(result, title=title) if title else render_html(result)
    if kind == "arena":
        from .arena import render_arena_html

        return render_arena_html(result, title=title) if title else render_arena_html(result)
    name = title or result.report_title()
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
            f"content=\"width=device-width, initial-scale=1\"><title>{_e(name)}</title></head><body>"
            f"{fragment(result)}</body></html>\n")


def markdown_text(result: Any) -> str:
    """GitHub-flavoured Markdown of ``result`` (the ``--markdown`` report for a leaderboard or an
    arena; the summary and the numbers otherwise). Names are escaped.
    """
    kind = getattr(result, "view_kind", "generic")
    if kind == "diagnosis":
        from .markdown import render_markdown

        return render_markdown(result)
    if kind == "arena":
        from .arena import render_arena_markdown

        return render_arena_markdown(result)
    from .markdown import md_prose, md_text
    from .terminal import safe_text

    title = result.report_title()
    summary = "\n".join(safe_text(line) for line in result.summary().splitlines())  # no control byte from a name
    lines = [f"## {md_prose(title)}", "", "```", summary.replace("```", "'''"), "```", "",
             "| field | value |", "| --- | ---: |"]
    for name in result.fields():
        shown = _scalar(getattr(result, name))
        if shown is not None:
            lines.append(f"| {md_prose(name)} | {md_text(shown)} |")
    return "\n".join(lines) + "\n"


def json_text(result: Any) -> str:
    """``result.to_dict()`` as deterministic JSON (sorted keys, NaN as null)."""
    from .._core.results import to_plain

    return json.dumps(to_plain(result.to_dict()), indent=2, sort_keys=True, allow_nan=False) + "\n"


def write(path: str | Path | None, text: str, *, inputs: tuple[Any, ...] = ()) -> str:
    """Write ``text`` to ``path`` atomically under the output rules (no symlink followed, never
    over a non-regular file, never over or inside one of ``inputs``) when a path is given;
    returns the text.
    """
    if path is not None:
        from .files import write_atomic

        write_atomic(path, text, inputs=inputs)
    return text
