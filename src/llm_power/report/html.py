"""The self-contained HTML resolution report (inline CSS and SVG plots, nothing fetched)."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from .._core.format import fmt_gap, fmt_score, unique_short_names
from .._core.options import CLUSTER_METHOD_LABELS
from .._core.progress import step
from .._version import __version__
from ..rankings import RankIntervalsResult, RankReport
from ..resolution import Diagnosis
from .terminal import safe_text
from .view import ReportView, build_view, in_points

__all__ = ["draw_plots", "render_html"]

#: the clustered test (``settings["cluster_method"]``), as the report's explanation says it
_CLUSTER_TESTS = {
    "cr2": "the cluster-robust t test (Imbens–Kolesár degrees of freedom, G − 1 for equal clusters)",
    "cv3": "the cluster jackknife (CV3) t test on G − 1 degrees of freedom",
    "wild": ("the restricted wild cluster bootstrap (CR1-studentised; Webb's weights up to 11 clusters) "
             "and its inverted interval"),
}

OK, BAD, GREY = "#0072B2", "#D55E00", "#57606a"  # Okabe-Ito blue / vermillion: colour-blind safe
#: the name of the report's step in progress reports (its charts take most of its time)
TASK = "HTML report: charts"


def figure_svg(fig: Any, label: str) -> str:
    """Figure -> inline <svg> with role="img", a <title> text alternative and no XML prolog."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = text.replace("<svg ", f'<svg role="img" aria-label="{_esc(label)}" ', 1)  # no regex: names hold "\\"
    close = text.index(">") + 1
    return text[:close] + f"<title>{_esc(label)}</title>" + text[close:]


def _esc(text: str) -> str:
    """Untrusted text for HTML: control characters made visible, then entity-escaped."""
    return safe_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def draw_plots(diag: Diagnosis, binary: bool, rankings: RankReport | None) -> dict[str, str]:
    """Every chart of the report as inline SVG, by name ("leaderboard", "forest" or "matrix", "q", "ranks", "mde")."""
    import matplotlib

    # Figure objects and an rc context: the caller's backend, pyplot state and rcParams are untouched
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 12, "svg.hashsalt": "llm-power"}):
        return _draw(diag, binary, rankings)


def subplots(width: float, height: float) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    # constrained: long tick labels take room from the axes, never widen the figure (a phone scales
    # the whole figure down, so a wider figure means smaller text)
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


#: reports with more pairs than this show a pair matrix instead of one row per pair in the plots,
#: and the first MAX_TABLE_PAIRS pairs in the table
MAX_PLOT_PAIRS = 40
MAX_TABLE_PAIRS = 40
#: models drawn in the leaderboard plot (the best ones; the table lists them all)
MAX_PLOT_MODELS = 60
#: figure width (inches): fills a laptop column, stays legible scaled to a phone
FIG_WIDTH = 6.4


def _draw(diag: Diagnosis, binary: bool, rankings: RankReport | None) -> dict[str, str]:
    names = [safe_text(m) for m in diag.models]  # control characters visible in the plots too
    short = unique_short_names(names, 24)
    means = np.asarray(diag.means)
    plots = {}
    scale = 100.0 if binary else 1.0  # accuracies in percent / points; graded scores in their own units
    level = f"{100 * diag.settings.get('confidence_level', 0.95):g}%"

    # leaderboard with intervals (the best MAX_PLOT_MODELS: a plot of thousands of rows is no plot)
    names, short, means = names[:MAX_PLOT_MODELS], short[:MAX_PLOT_MODELS], means[:MAX_PLOT_MODELS]
    height = max(2.0, 0.32 * len(names) + 0.8)
    fig, ax = subplots(FIG_WIDTH, height)
    y = np.arange(len(names))[::-1]
    lo = np.asarray(diag.model_ci_low)[:MAX_PLOT_MODELS]
    hi = np.asarray(diag.model_ci_high)[:MAX_PLOT_MODELS]
    ax.errorbar(scale * means, y, xerr=[scale * (means - lo), scale * (hi - means)], fmt="o", color=OK, ecolor=OK,
                capsize=3)
    ax.set_yticks(y, short, parse_math=False)  # names are data: a "$" is not mathtext
    ax.set_xlabel(f"score (%), {level} interval" if binary else f"mean score ({level} interval)")
    ax.grid(axis="x", color="#e5e7eb")
    ax.spines[["top", "right"]].set_visible(False)
    plots["leaderboard"] = figure_svg(fig, "Leaderboard: " + "; ".join(
        f"{m} {fmt_score(s, binary)}" for m, s in zip(names, means, strict=True)))

    if rankings is not None and rankings.ranks is not None:
        plots["ranks"] = _rank_plot(diag, short, rankings.ranks)
    if len(diag.columns["delta"]) > MAX_PLOT_PAIRS:
        plots["matrix"] = _matrix(diag, short)
    else:
        plots.update(_pair_plots(diag, diag.pairs, binary, level))
    plots.update(_mde_plot(diag, binary))
    return plots


def _rank_plot(diag: Diagnosis, short: list[str], ranks: RankIntervalsResult) -> str:
    """The simultaneous rank intervals, best first, the models that can be #1 filled."""
    k = min(len(diag.models), MAX_PLOT_MODELS)
    low, high = np.asarray(ranks.rank_ci_low[:k], dtype=float), np.asarray(ranks.rank_ci_high[:k], dtype=float)
    best = set(ranks.best_set)
    fig, ax = subplots(FIG_WIDTH, max(2.0, 0.32 * k + 0.8))
    y = np.arange(k)[::-1]
    rank = np.arange(1, k + 1)
    ax.hlines(y, low, high, color=GREY, linewidth=3, alpha=0.6)
    first = np.array([m in best for m in diag.models[:k]])
    ax.plot(rank[first], y[first], "o", color=OK, label="can be #1")
    ax.plot(rank[~first], y[~first], "o", mfc="white", color=GREY, label="cannot be #1")
    ax.set_yticks(y, short[:k], parse_math=False)
    ax.set_xlim(0.5, len(diag.models) + 0.5)
    ax.invert_xaxis()
    ax.set_xlabel(f"rank ({100 * ranks.confidence_level:g}% simultaneous interval; 1 = best)")
    ax.grid(axis="x", color="#e5e7eb")
    ax.spines[["top", "right"]].set_visible(False)
    # above the axes: an interval may reach any corner (a model low in the table that can still be #1)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=10)
    return figure_svg(fig, "Rank intervals: " + "; ".join(
        f"{m} {int(a)}" + (f"-{int(b)}" if b != a else "") for m, a, b in zip(short[:k], low, high, strict=True)))


def _pair_plots(diag: Diagnosis, pairs: list[Any], binary: bool, level: str) -> dict[str, str]:
    """The forest plot of the gaps and the bar chart of q, one row per pair, both under the headline
    regime (the strictest one, as the headline card and the table's verdict columns), labelled.
    """
    plots = {}
    scale = 100.0 if binary else 1.0
    unit = "points" if binary else "score units"
    view = build_view(diag, max_rows=0)
    regime = view.strictest
    cols = diag.columns
    index = {m: k for k, m in enumerate(diag.models)}
    shorter = unique_short_names([safe_text(m) for m in diag.models], 16)
    labels = [f"{shorter[index[p.model_a]]} − {shorter[index[p.model_b]]}" for p in pairs]
    resolved = np.asarray(cols[regime.resolved_field], dtype=bool)[:len(pairs)]
    clustered = regime.key == "cluster" and "cluster_ci_low" in cols
    over_runs = regime.key == "runs" and "run_ci_low" in cols  # the interval of the run regime's own test
    prefix = "cluster_" if clustered else "run_" if over_runs else ""
    low = np.asarray(cols[f"{prefix}ci_low"], dtype=float)[:len(pairs)]
    high = np.asarray(cols[f"{prefix}ci_high"], dtype=float)[:len(pairs)]
    kind = (CLUSTER_METHOD_LABELS.get(diag.settings.get("cluster_method", "cr2"), "cluster-robust t") if clustered
            else "items-and-runs t" if over_runs else "paired")
    height = max(2.0, 0.3 * len(pairs) + 0.8)
    # forest plot
    fig, ax = subplots(FIG_WIDTH, height)
    y = np.arange(len(pairs))[::-1]
    for k, p in enumerate(pairs):
        color = OK if resolved[k] else BAD
        marker = "o" if resolved[k] else "s"
        lo_, hi_ = (low[k], high[k]) if np.isfinite(low[k]) and np.isfinite(high[k]) else (p.delta, p.delta)
        ax.plot([scale * lo_, scale * hi_], [y[k], y[k]], color=color, lw=2)
        ax.plot(scale * p.delta, y[k], marker, color=color)
    ax.axvline(0, color=GREY, lw=1)
    ax.set_yticks(y, labels, parse_math=False)
    ax.set_xlabel(f"gap A − B ({unit}), {level} {kind} CI; colour: {regime.label} verdict")
    ax.spines[["top", "right"]].set_visible(False)
    plots["forest"] = figure_svg(fig, f"Forest plot of the gaps ({kind} intervals, {regime.label} verdicts): "
                                 + "; ".join(
        f"{lab}: {fmt_gap(p.delta, binary)} {unit}" for lab, p in zip(labels, pairs, strict=False)))

    # q on a log scale
    fig, ax = subplots(FIG_WIDTH, height)
    q = np.asarray(cols[regime.q_field], dtype=float)[:len(pairs)]
    q_plot = np.clip(np.nan_to_num(q, nan=1e-4), 1e-4, 1e4)
    for k in range(len(pairs)):
        ax.barh(y[k], q_plot[k], color=OK if resolved[k] else BAD, height=0.6,
                hatch=None if resolved[k] else "//", edgecolor="white")
    ax.set_xscale("log")
    ax.axvline(1, color="black", ls="--", lw=1.2)
    ax.text(1, y.max() + 0.7, " q = 1", va="bottom", fontsize=9)
    ax.set_yticks(y, labels, parse_math=False)
    name = "q" if regime.key == "iid" else f"q {regime.label}"
    ax.set_xlabel(f"{name} = N / N*  (log scale; ≥ 1 resolved)")
    ax.spines[["top", "right"]].set_visible(False)
    plots["q"] = figure_svg(fig, f"Resolution ratio per pair ({regime.label}): " + "; ".join(
        f"{lab}: q = {q[k]:.3g} ({'resolved' if resolved[k] else 'unresolved'})"
        for k, lab in enumerate(labels)))
    plots["_regime"] = regime.label
    return plots


#: colours of log10 q in the pair matrix, from q <= 1e-4 to q >= 1e4 (the last four: q >= 1)
MATRIX_COLOURS = ("#a63603", "#D55E00", "#fdae6b", "#fee6ce", "#c6dbef", "#6baed6", "#2171b5", "#0072B2")

#: the pair matrix draws at most this many models a side; more are pooled into blocks
MATRIX_SIDE = 60


def _luminance(rgb: Any) -> float:
    """WCAG relative luminance of an sRGB colour (components in [0, 1])."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(float(c)) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _ink(background: Any) -> str:
    """White or near-black text, whichever has the higher WCAG contrast ratio on ``background``."""
    lum = _luminance(background)
    dark = 0.0144  # #1f2328
    return "white" if (1.05 / (lum + 0.05)) >= ((lum + 0.05) / (dark + 0.05)) else "#1f2328"


def _matrix(diag: Diagnosis, short: list[str]) -> str:
    """All pairs at a glance: q of the strictest regime per pair (model A's row, model B's column),
    the resolved ones ticked; for reports with too many pairs to draw one row each. Beyond
    :data:`MATRIX_SIDE` models a cell pools a block of consecutive ranks and shows its smallest q
    (the hardest pair in the block), without ticks.
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap

    view = build_view(diag, max_rows=0)
    cols, m = diag.columns, len(diag.models)
    q = np.asarray(cols[view.strictest.q_field], dtype=float)
    flags = np.asarray(cols[view.strictest.resolved_field], dtype=bool)
    ra, rb = np.asarray(cols["rank_a"]) - 1, np.asarray(cols["rank_b"]) - 1
    block = max(1, -(-m // MATRIX_SIDE))  # ranks per cell
    side = -(-m // block)
    logq = np.log10(np.clip(np.nan_to_num(q, nan=1e-4), 1e-4, 1e4))
    grid = np.full((side, side), np.inf)
    np.minimum.at(grid, (np.minimum(ra, rb) // block, np.maximum(ra, rb) // block), logq)
    grid[np.isinf(grid)] = np.nan
    size = max(4.0, min(FIG_WIDTH + 2, 0.24 * side + 2.2))
    fig, ax = subplots(size, size)
    bounds = [-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4]
    cmap = ListedColormap(list(MATRIX_COLOURS))
    image = ax.imshow(grid, cmap=cmap, norm=BoundaryNorm(bounds, cmap.N))
    if block == 1:
        for a, b, ok in zip(ra, rb, flags, strict=True):
            if ok:  # the tick in whichever of white or near-black contrasts more with its cell
                cell = image.cmap(image.norm(grid[min(a, b) // block, max(a, b) // block]))
                ax.text(max(a, b), min(a, b), "✓", ha="center", va="center", fontsize=8, color=_ink(cell))
        ticks = np.arange(m)
        ax.set_xticks(ticks, [str(k + 1) for k in ticks], fontsize=8)
        ax.set_yticks(ticks, [f"{short[k]} {k + 1}" for k in ticks], fontsize=8, parse_math=False)
        ax.set_xlabel("model B (rank)")
        ax.set_ylabel("model A")
    else:
        ticks = np.arange(0, side, max(1, side // 10))
        ax.set_xticks(ticks, [str(k * block + 1) for k in ticks], fontsize=8)
        ax.set_yticks(ticks, [str(k * block + 1) for k in ticks], fontsize=8)
        ax.set_xlabel(f"model B (rank; a cell pools {block} ranks a side, smallest q shown)")
        ax.set_ylabel("model A (rank)")
    bar = fig.colorbar(image, ax=ax, shrink=0.6, ticks=bounds)
    bar.ax.set_yticklabels(["≤ 1e-4", "0.01", "0.1", "0.3", "1", "3", "10", "100", "≥ 1e4"])
    bar.set_label(("q" if view.strictest.key == "iid" else f"q {view.strictest.label}") + " (≥ 1: big enough)")
    n_ok = int(flags.sum())
    return figure_svg(fig, f"Pair matrix of {len(q):,} pairs: {n_ok:,} resolved ({view.strictest.label}), "
                     f"{len(q) - n_ok:,} unresolved; colour is q = N/N*"
                     + (", a tick marks a resolved pair" if block == 1 else f", each cell the smallest q of a "
                                                                            f"{block} x {block} block of ranks"))


def _mde_plot(diag: Diagnosis, binary: bool) -> dict[str, str]:
    """The minimum detectable gap against the number of items, this benchmark marked."""
    plots = {}
    n, scale = diag.n, (100.0 if binary else 1.0)
    unit = "points" if binary else "score units"
    # MDE curve
    grid = np.unique(np.logspace(1.5, math.log10(max(100 * n, 1000)), 200).astype(int))
    curve = diag.mde_curve(grid)
    now = float(diag.mde_curve(np.array([n]))[0])
    fig, ax = subplots(FIG_WIDTH, 3.4)
    ax.plot(grid, scale * curve, color=OK)
    ax.plot([n], [scale * now], "o", color=BAD, ms=8)
    ax.annotate(f"{n:,} items: {fmt_gap(now, binary, sign=False)} {unit}", (n, scale * now), textcoords="offset points",
                xytext=(8, 8))
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    # plain numbers at 1-2-5 steps (a decade of gaps shows more than "10^0, 10^1"); items with commas
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.set_xlabel("items")
    ax.set_ylabel(f"minimum detectable gap ({unit}), IID")
    ax.grid(color="#e5e7eb", which="both")
    ax.spines[["top", "right"]].set_visible(False)
    plots["mde"] = figure_svg(fig, f"Minimum detectable effect (IID regime) against items; at {n:,} items it is "
                             f"{fmt_gap(now, binary, sign=False)} {unit}")
    plots["_mde_now"] = fmt_gap(now, binary, sign=False)
    return plots


@step(TASK)
def render_html(
    diag: Diagnosis,
    *,
    title: str = "Leaderboard resolution report",
    source: str = "",
    scores: np.ndarray | None = None,
    score_models: list[str] | None = None,
    clusters: Any = None,
    cluster_name: str = "cluster",
    note: str = "",
    rankings: RankReport | None = None,
) -> str:
    """Render a :class:`~llm_power.Diagnosis` as one self-contained HTML page.

    ``scores`` (items x models, columns named by ``score_models`` in any order; default: the
    report's ranking) and ``clusters`` add the per-cluster table; ``rankings``
    (:func:`~llm_power.rank_report` of the same diagnosis) the rankings section.
    """
    if scores is not None and score_models is not None:
        column = {name: k for k, name in enumerate(score_models)}
        scores = np.asarray(scores)[:, [column[name] for name in diag.models]]
    from jinja2 import Environment, PackageLoader, select_autoescape

    binary = in_points(diag.settings)
    s = diag.settings
    plots = draw_plots(diag, binary, rankings)
    level = f"{100 * s.get('confidence_level', 0.95):g}%"
    view = build_view(diag, cluster_name=cluster_name, max_rows=MAX_TABLE_PAIRS, rankings=rankings)
    header, rows = _pair_table(view)
    cards = [{"num": f"{diag.n:,}", "label": f"items × {len(diag.models)} models"}]
    cards += [{"num": f"{r.unresolved} / {view.n_pairs}", "label": f"unresolved ({r.label})"} for r in view.regimes]
    settings = (f"alpha = {s['alpha']:g}, power = {s['power']:g}, pairs = {s['pairs']}, test = {s['test']}"
                + (f", correction = {s['correction']}" if s.get("correction") else "")
                + (f", {s['n_clusters']} clusters" if s.get("n_clusters") else ""))
    env = Environment(loader=PackageLoader("llm_power.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["visible"] = safe_text  # control characters of untrusted names shown, then autoescaped
    return env.get_template("report.html.j2").render(
        title=title, subtitle=f"{len(diag.models)} models on the same {diag.n:,} items; {view.pairs_phrase}.",
        plotted=(f" (the best {MAX_PLOT_MODELS} of {len(diag.models):,} models; the table lists them all)"
                 if len(diag.models) > MAX_PLOT_MODELS else ""),
        version=__version__, cards=cards, sentences=view.sentences, next_steps=view.next_steps,
        ties=" ; ".join(" ≈ ".join(g) for g in view.ties), ties_regime=view.ties_regime, note=note,
        robustness=view.robustness or "",
        models=view.models, plots=plots, pair_kind="adjacent" if s["pairs"] == "adjacent" else "all pairs of",
        level=level, interval_name=(view.interval_name if "n_clusters" in s or "runs_by" in s
                                    else ("Wilson" if binary else "Student t")),
        unit_label="points" if binary else "score units",
        score_word="score" if binary else "mean score", power_pct=f"{100 * s['power']:g}%",
        de_method=str(s.get("design_effect", "robust")), verdict_note=view.verdict_note,
        strictest=view.strictest.label, pair_header=header, pair_rows=rows, shown_pairs=len(rows),
        n_pairs=view.n_pairs, alpha=f"{s['alpha']:g}", n_items=f"{diag.n:,}", mde_now=plots["_mde_now"],
        clusters=_cluster_table(diag, binary, scores, clusters), cluster_name=cluster_name,
        clustered_models="n_clusters" in s, runs_models="runs_by" in s,
        explanations=_explanations(s, level), source=source or "an in-memory matrix", settings=settings,
        ranking=view.ranking, ranking_lines=view.ranking.lines() if view.ranking is not None else [],
        rank_method=view.ranking.method if view.ranking is not None else "",
    )


def _pair_table(view: ReportView) -> tuple[list[str], list[list[tuple[str, str]]]]:
    """Header and rows (cell, CSS class) of the compact pairs table: every regime's verdict, the
    strictest regime's q and N*; the first :data:`MAX_TABLE_PAIRS` pairs.
    """
    keys = view.columns(wide=False, ci=True, optional=[view.strictest.n_star_field])
    rows = []
    for row in view.pairs[:MAX_TABLE_PAIRS]:
        cells = view.cells(row, keys, _mark)
        rows.append([(cell, "v") if key in row.flags else (_esc(cell), "l" if key in ("model_a", "model_b") else "")
                     for key, cell in zip(keys, cells, strict=True)])
    return view.header(keys), rows


def _cluster_table(diag: Diagnosis, binary: bool, scores: np.ndarray | None, clusters: Any) -> dict[str, Any] | None:
    if scores is None or clusters is None:
        return None
    labels_arr = np.asarray(clusters)
    groups = sorted(set(labels_arr.tolist()))
    shown = diag.models[: min(8, len(diag.models))]
    rows = []
    for g in groups:
        mask = labels_arr == g
        rows.append({"name": g, "n": int(mask.sum()),
                     "cells": [f"{100 * scores[mask, k].mean():.1f}" if binary else f"{scores[mask, k].mean():.4g}"
                               for k in range(len(shown))]})
    return {"n": len(groups), "models": shown, "rows": rows}


def _explanations(s: dict[str, Any], level: str) -> list[dict[str, Any]]:
    k_any = s.get("z_anytime")
    return [
        {"title": "q = N / N*: resolved or not",
         "text": ("N* is the number of items a benchmark needs to detect a gap of the observed size with "
                  f"{100 * s['power']:.0f}% power at α = {s['alpha']:g}, given how often the two models disagree "
                  "item by item. q = N/N*. A gap is resolved when q ≥ 1 (this benchmark is big enough for a gap "
                  "that size) and the test reported beside it rejects at α. Otherwise it is too small to tell — "
                  "which does not mean the models are equal, and q is not 'observed power'. With few discordant "
                  "items N* comes from the exact McNemar test.")},
        {"title": "Multiplicity",
         "text": ("A leaderboard makes many comparisons at once. Under a correction (Bonferroni, Holm step-down, "
                  "Benjamini–Hochberg step-up, or Benjamini–Yekutieli, BH's false discovery rate under any "
                  "dependence) each pair must clear a stricter level α′, so N* grows and fewer gaps are resolved. "
                  "BH assumes the gaps' statistics are positively dependent; the report says where they are not.")},
        {"title": "Clustered items",
         "text": ("Items from the same subject or source are correlated, so N items carry less information than N "
                  "independent ones. The design effect DE is measured per pair: the cluster-robust variance of the "
                  "gap (CR2, bias-reduced) over its IID variance. The clustered verdict uses "
                  + _CLUSTER_TESTS.get(s.get("cluster_method", "cr2"), _CLUSTER_TESTS["cr2"])
                  + " and N*_cluster = max(DE, 1)·K·σ²/δ² with t quantiles.")},
        {"title": "Anytime-valid",
         "text": ("A leaderboard updated continuously and re-tested at every update needs a time-uniform test. "
                  f"The critical value {k_any:.2f} (instead of {s.get('z_fixed', 1.96):.2f}, the fixed-n one at α = "
                  f"{s['alpha']:g}) comes from a normal-mixture confidence sequence "
                  "(Robbins 1970; Howard et al. 2021)." if k_any else
                  "Not computed for this report (use --anytime).")},
        {"title": "Paired tests and intervals",
         "text": ("Both models answered the same items, so the gaps are tested with paired methods: McNemar's "
                  "test on the discordant items for 0/1 scores (exact below 25 discordant items), the paired t "
                  "test otherwise; the gap intervals are Newcombe's paired score intervals (0/1) or paired t "
                  f"intervals, all at {level}.")},
    ]


def _mark(flag: bool | None) -> str:
    if flag is None:
        return ""
    if flag:
        return '<span class="ok" title="resolved" aria-label="resolved">✓</span>'
    return '<span class="bad" title="too small to tell" aria-label="too small to tell">✗</span>'
