"""Terminal rendering of a resolution report from its :class:`~.view.ReportView`.

Verdict first: one sentence per regime, then the leaderboard, then a compact pairs table that fits
the terminal (80 columns when output is piped, unless ``COLUMNS`` says otherwise) without cutting
any number: long model names are shortened to unique forms (``Mistral…t-v0.1``), optional columns
are dropped before names get too short, and ``wide=True`` shows every column at its full width.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .._core.format import unique_short_names
from ..rankings import RankReport
from ..resolution import Diagnosis
from .terminal import safe_text, terminal_width
from .view import ReportView, build_view

__all__ = ["fit_table", "print_fitted_table", "print_report", "terminal_width"]

#: names are not shortened below this many characters (columns are dropped first)
MIN_NAME = 10
#: optional compact columns keep names at least this long
COMFORT_NAME = 20
#: pairs shown in the terminal before "… N more" (all of them with wide=True)
MAX_ROWS = 40


def _mark(flag: bool) -> str:
    return "✓" if flag else "✗"


def _console(out: TextIO, width: int) -> Any:
    from rich.console import Console

    return Console(file=out, width=width, highlight=False, emoji=False, color_system=None if not (
        hasattr(out, "isatty") and out.isatty()) else "auto", soft_wrap=False)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int], *,
           fold: Sequence[int] = ()) -> Any:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for i, name in enumerate(header):
        label = "\n".join(escape(safe_text(part)) for part in name.split("\n"))
        table.add_column(label, justify="left" if i in left else "right", no_wrap=i not in fold, overflow="fold")
    for row in rows:
        table.add_row(*(escape(safe_text(cell)) for cell in row))
    return table


def _width_of(table: Any) -> int:
    buf = io.StringIO()
    _console(buf, 10_000).print(table)
    return max((len(line.rstrip()) for line in buf.getvalue().splitlines()), default=0)


#: the caption of the narrow layout, where models are named by their rank in the Models table
_RANKS = {"model_a": "rank_a", "model_b": "rank_b"}
RANKS_CAPTION = "A, B: the models' ranks in the Models table above (names in full there)."


def _compact(view: ReportView, rows: list[Any], width: int) -> tuple[Any, str | None]:  # noqa: C901
    """The widest compact table that fits ``width``, and its caption (or None). In order of
    preference: whole names (optional columns dropped first); names shortened to unique forms
    of at least :data:`COMFORT_NAME` characters; headers on two lines; then, when names still do
    not fit, the models by their rank in the Models table (which has every name whole). A
    terminal narrower than even that gets one paragraph per pair (a list of lines). Numbers are
    never cut and a row is never wrapped.
    """
    names = [safe_text(m.name) for m in view.models]
    longest = max((len(s) for s in names), default=1)
    optional = ([view.strictest.n_star_field] + (["pvalue_cluster"] if view.has_cluster_p else [])
                + (["pvalue_run"] if view.has_run_p and view.strictest.key == "runs" else []))
    choices: tuple[list[str], ...] = (optional, optional[:1], [])

    def headers(keys: list[str], two_lines: bool) -> list[str]:
        return [h.replace(" ", "\n", 1) if two_lines and k not in ("model_a", "model_b") else h
                for k, h in zip(keys, view.header(keys), strict=True)]

    def named(keys: list[str], header: list[str], name_width: int) -> Any:
        short = dict(zip((m.name for m in view.models), unique_short_names(names, name_width), strict=True))
        return _table(header, [view.cells(r, keys, _mark, short) for r in rows], left=(1, 2))

    for extra in choices:  # whole names, before any name is shortened (optional columns go first)
        keys = view.columns(wide=False, optional=extra)
        table = named(keys, headers(keys, False), longest)
        if _width_of(table) <= width:
            return table, None
    for two_lines in (False, True):
        for extra in choices:
            keys = view.columns(wide=False, optional=extra)
            header = headers(keys, two_lines)
            floor = min(longest, COMFORT_NAME)
            if _width_of(named(keys, header, floor)) > width:
                continue
            # the table's width grows with the names' width: bisect for the widest names that fit (a few
            # renders, not one per character of a 10,000-character name)
            lo, hi = floor, max(floor, min(longest, width))
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if _width_of(named(keys, header, mid)) <= width else (lo, mid - 1)
            return named(keys, header, lo), None
    for two_lines in (False, True):
        for extra in choices:
            keys = [_RANKS.get(k, k) for k in view.columns(wide=False, optional=extra)]
            table = _table(headers(keys, two_lines), [view.cells(r, keys, _mark) for r in rows], left=())
            if _width_of(table) <= width:
                return table, RANKS_CAPTION
    # narrower than every table: one pair per paragraph, wrapped between words (nothing is cut)
    keys = [_RANKS.get(k, k) for k in view.columns(wide=False)]
    labels = view.header(keys)
    lines = []
    for r in rows:
        cells = view.cells(r, keys, _mark)
        lines.append(f"{cells[0]}. #{cells[1]} vs #{cells[2]}: " + ", ".join(
            f"{label} {cell}" for label, cell in zip(labels[3:], cells[3:], strict=True)))
    return lines, RANKS_CAPTION


def fit_table(variants: Sequence[tuple[Sequence[str], Sequence[Sequence[str]], Sequence[int]]],
              width: int) -> tuple[Any, int]:
    """The first of ``variants`` (header, rows, left-aligned columns), in order of preference, whose
    table fits ``width`` without wrapping a row, and its index; ``(None, -1)`` when none fits (the
    caller prints one paragraph per row instead).
    """
    for k, (header, rows, left) in enumerate(variants):
        table = _table(header, rows, left)
        if _width_of(table) <= width:
            return table, k
    return None, -1


def print_fitted_table(title: str, variants: Sequence[tuple[Sequence[str], Sequence[Sequence[str]], Sequence[int]]],
                       *, caption: str | None = None, stream: TextIO | None = None) -> bool:
    """Print ``title`` and the first of ``variants`` (header, rows, left-aligned columns; cells are
    escaped here) that fits the terminal without wrapping a row, then ``caption`` wrapped at that
    width; False (nothing printed) when none fits.
    """
    out = sys.stdout if stream is None else stream
    width = terminal_width(out)
    table, _ = fit_table(variants, width)
    if table is None:
        return False
    console = _console(out, width)
    console.print(safe_text(title), style="bold", overflow="fold", markup=False)
    console.print(table)
    if caption:
        import textwrap

        for line in textwrap.wrap(safe_text(caption), width=width, subsequent_indent="  ", break_long_words=False,
                                  break_on_hyphens=False):  # as every footnote (terminal.say)
            console.print(line, markup=False, highlight=False)
    return True


def _print_rankings(console: Any, view: ReportView) -> None:
    """The rankings section: who can be #1, the winner corrected for selection, fragility."""
    if view.ranking is None:
        return
    console.print("Rankings", style="bold")
    for line in view.ranking.lines():
        console.print(safe_text(line), markup=False)
    console.print()


def print_report(diag: Diagnosis, *, note: str = "", cluster_name: str = "cluster", wide: bool = False,
                 stream: TextIO | None = None, width: int | None = None,
                 rankings: RankReport | None = None) -> ReportView:
    """Print the resolution report: the verdict in words, the rankings (``rankings``:
    :func:`~llm_power.rank_report` of the same diagnosis), the models, the pairs, what to do next.

    Names are escaped; nothing is truncated. Returns the view it printed.
    """
    out = sys.stdout if stream is None else stream
    width = terminal_width(out) if width is None else width
    view = build_view(diag, cluster_name=cluster_name, max_rows=None if wide else MAX_ROWS, rankings=rankings)
    console = _console(out, width)
    console.print("Verdict", style="bold")
    for line in view.sentences:
        console.print(safe_text(line), markup=False)
    console.print()
    _print_rankings(console, view)
    ranked = view.ranking is not None
    models = [[str(m.rank), m.name, m.score, m.interval] + ([m.ranks] if ranked else []) for m in view.models]
    console.print(f"Models ({view.n:,} items)", style="bold", markup=False)
    console.print(_table(["#", "model", view.score_word, f"{view.level} {view.interval_name} interval"]
                         + (["ranks"] if view.ranking is not None else []), models,
                         left=(1,), fold=(1,)))
    console.print()
    title = f"Resolution of {view.pairs_phrase} (α = {view.alpha}, power {view.power})"
    console.print(title, style="bold", markup=False)
    rows = view.pairs
    if wide:
        keys = view.columns(wide=True)
        _console(out, 10_000).print(_table(view.header(keys), [view.cells(r, keys, _mark) for r in rows],
                                           left=(1, 2)))
    else:
        table, caption = _compact(view, rows, width)
        if isinstance(table, list):
            import textwrap

            for line in table:
                console.print("\n".join(textwrap.wrap(safe_text(line), width=width, subsequent_indent="   ",
                                                      break_long_words=False)), markup=False)
        else:
            console.print(table)
        if caption:
            console.print(caption, markup=False)
    if len(rows) < view.n_pairs:
        console.print(f"… {view.n_pairs - len(rows):,} more pairs: --wide lists them all (or --json / --markdown).",
                      markup=False)
    console.print(safe_text(view.verdict_note), markup=False)
    if not wide and view.strictest.key != "iid":
        console.print(f"q {view.strictest.label}: q of the strictest regime; --wide shows N*, q and p of every "
                      "regime.", markup=False)
    if view.robustness:
        console.print(view.robustness, markup=False)
    if view.ties:
        ties_label = next((r.label for r in view.regimes if r.key == view.ties_regime), view.ties_regime)
        console.print(safe_text(f"Statistical ties ({ties_label}): "
                                + "; ".join(" ≈ ".join(g) for g in view.ties)), markup=False)
    if note:
        console.print(safe_text(note), markup=False)
    for line in view.next_steps:
        console.print(safe_text(f"next: {line}"), markup=False)
    return view
