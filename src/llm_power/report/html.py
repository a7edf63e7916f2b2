"""The self-contained HTML resolution report (inline CSS and SVG plots, nothing fetched)."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from .. import __version__
from .._format import fmt_gap, fmt_score
from ..resolution import Diagnosis
from .terminal import safe_text
from .view import ReportView, build_view

__all__ = ["render_html"]

OK, BAD, GREY = "#0072B2", "#D55E00", "#57606a"  # Okabe-Ito blue / vermillion: colour-blind safe


def _svg(fig: Any, label: str) -> str:
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


def _plots(diag: Diagnosis, binary: bool) -> dict[str, str]:
    import matplotlib

    # Figure objects and an rc context: the caller's backend, pyplot state and rcParams are untouched
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 10, "svg.hashsalt": "llm-power"}):
        return _draw(diag, binary)


def _subplots(width: float, height: float) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    return fig, fig.subplots()


def _draw(diag: Diagnosis, binary: bool) -> dict[str, str]:
    names = [safe_text(m) for m in diag.models]  # control characters visible in the plots too
    n = diag.n
    means = np.asarray(diag.means)
    plots = {}
    scale = 100.0 if binary else 1.0  # accuracies in percent / points; graded scores in their own units
    unit = "points" if binary else "score units"
    level = f"{100 * diag.settings.get('confidence_level', 0.95):g}%"

    # leaderboard with intervals
    height = max(2.0, 0.32 * len(names) + 0.8)
    fig, ax = _subplots(7.5, height)
    y = np.arange(len(names))[::-1]
    lo, hi = np.asarray(diag.model_ci_low), np.asarray(diag.model_ci_high)
    ax.errorbar(scale * means, y, xerr=[scale * (means - lo), scale * (hi - means)], fmt="o", color=OK, ecolor=OK,
                capsize=3)
    ax.set_yticks(y, [m[:40] for m in names], parse_math=False)  # names are data: a "$" is not mathtext
    ax.set_xlabel(f"score (%), {level} interval" if binary else f"mean score ({level} interval)")
    ax.grid(axis="x", color="#e5e7eb")
    ax.spines[["top", "right"]].set_visible(False)
    plots["leaderboard"] = _svg(fig, "Leaderboard: " + "; ".join(
        f"{m} {fmt_score(s, binary)}" for m, s in zip(names, means, strict=True)))

    pairs = diag.pairs
    labels = [f"{safe_text(p.model_a)[:22]} − {safe_text(p.model_b)[:22]}" for p in pairs]
    height = max(2.0, 0.3 * len(pairs) + 0.8)
    # forest plot
    fig, ax = _subplots(7.5, height)
    y = np.arange(len(pairs))[::-1]
    for k, p in enumerate(pairs):
        color = OK if p.resolved else BAD
        marker = "o" if p.resolved else "s"
        lo_, hi_ = (p.ci_low, p.ci_high) if p.ci_low is not None and p.ci_high is not None else (p.delta, p.delta)
        ax.plot([scale * lo_, scale * hi_], [y[k], y[k]], color=color, lw=2)
        ax.plot(scale * p.delta, y[k], marker, color=color)
    ax.axvline(0, color=GREY, lw=1)
    ax.set_yticks(y, labels, parse_math=False)
    ax.set_xlabel(f"gap A − B ({unit}), paired {level} CI")
    ax.spines[["top", "right"]].set_visible(False)
    plots["forest"] = _svg(fig, "Forest plot of the gaps: " + "; ".join(
        f"{lab}: {fmt_gap(p.delta, binary)} {unit}" for lab, p in zip(labels, pairs, strict=False)))

    # q on a log scale
    fig, ax = _subplots(7.5, height)
    q = np.array([p.q for p in pairs], dtype=float)
    q_plot = np.clip(np.nan_to_num(q, nan=1e-4), 1e-4, 1e4)
    for k, p in enumerate(pairs):
        ax.barh(y[k], q_plot[k], color=OK if p.resolved else BAD, height=0.6,
                hatch=None if p.resolved else "//", edgecolor="white")
    ax.set_xscale("log")
    ax.axvline(1, color="black", ls="--", lw=1.2)
    ax.text(1, y.max() + 0.7, " q = 1", va="bottom", fontsize=9)
    ax.set_yticks(y, labels, parse_math=False)
    ax.set_xlabel("q = N / N*  (log scale; ≥ 1 resolved)")
    ax.spines[["top", "right"]].set_visible(False)
    plots["q"] = _svg(fig, "Resolution ratio per pair: " + "; ".join(
        f"{lab}: q = {p.q:.3g} ({'resolved' if p.resolved else 'unresolved'})"
        for lab, p in zip(labels, pairs, strict=True)))

    # MDE curve
    grid = np.unique(np.logspace(1.5, math.log10(max(100 * n, 1000)), 200).astype(int))
    curve = diag.mde_curve(grid)
    now = float(diag.mde_curve(np.array([n]))[0])
    fig, ax = _subplots(7.5, 3.2)
    ax.plot(grid, scale * curve, color=OK)
    ax.plot([n], [scale * now], "o", color=BAD, ms=8)
    ax.annotate(f"{n:,} items: {fmt_gap(now, binary, sign=False)} {unit}", (n, scale * now), textcoords="offset points",
                xytext=(8, 8))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items")
    ax.set_ylabel(f"minimum detectable gap ({unit})")
    ax.grid(color="#e5e7eb", which="both")
    ax.spines[["top", "right"]].set_visible(False)
    plots["mde"] = _svg(fig, f"Minimum detectable effect against items; at {n:,} items it is "
                             f"{fmt_gap(now, binary, sign=False)} {unit}")
    plots["_mde_now"] = fmt_gap(now, binary, sign=False)
    return plots


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
) -> str:
    """Render a :class:`~llm_power.Diagnosis` as one self-contained HTML page.

    ``scores`` (items x models, columns named by ``score_models`` in any order; default: the
    report's ranking) and ``clusters`` add the per-cluster table.
    """
    if scores is not None and score_models is not None:
        column = {name: k for k, name in enumerate(score_models)}
        scores = np.asarray(scores)[:, [column[name] for name in diag.models]]
    from jinja2 import Environment, PackageLoader, select_autoescape

    binary = bool(diag.settings.get("binary"))
    s = diag.settings
    plots = _plots(diag, binary)
    level = f"{100 * s.get('confidence_level', 0.95):g}%"
    view = build_view(diag)
    header, rows = _pair_table(view)
    cards, headline = _cards(diag)
    ties_regime = "cluster" if "cluster" in diag.tie_groups else "iid"
    ties = "; ".join(" ≈ ".join(g) for g in diag.tie_groups[ties_regime] if len(g) > 1)
    settings = (f"alpha = {s['alpha']:g}, power = {s['power']:g}, pairs = {s['pairs']}, test = {s['test']}"
                + (f", correction = {s['correction']}" if s.get("correction") else "")
                + (f", {s['n_clusters']} clusters" if s.get("n_clusters") else ""))
    env = Environment(loader=PackageLoader("llm_power.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["visible"] = safe_text  # control characters of untrusted names shown, then autoescaped
    return env.get_template("report.html.j2").render(
        title=title, subtitle=f"{len(diag.models)} models on the same {diag.n:,} items; {len(diag.pairs)} "
                              f"{s['pairs']} pairs.",
        version=__version__, cards=cards, headline=headline, ties=ties, ties_regime=ties_regime, note=note,
        models=view.models, plots=plots,
        pair_kind="adjacent" if s["pairs"] == "adjacent" else "all pairs of",
        level=level, interval_name="Wilson" if binary else "Student t",
        unit_label="points" if binary else "score units",
        score_word="score" if binary else "mean score", power_pct=f"{100 * s['power']:g}%",
        de_method=str(s.get("design_effect", "robust")),
        pair_header=header, pair_rows=rows, alpha=f"{s['alpha']:g}", n_items=f"{diag.n:,}", mde_now=plots["_mde_now"],
        clusters=_cluster_table(diag, binary, scores, clusters), cluster_name=cluster_name,
        explanations=_explanations(s, level), source=source or "an in-memory matrix", settings=settings,
    )


def _pair_table(view: ReportView) -> tuple[list[str], list[list[str]]]:
    rows = []
    for row in view.pairs:
        cells = view.pair_cells(row, _mark, ci=True)
        cells[1], cells[2] = _esc(cells[1]), _esc(cells[2])
        rows.append(cells)
    return view.pair_header(ci=True), rows


def _cards(diag: Diagnosis) -> tuple[list[dict[str, Any]], str]:
    s, m = diag.settings, len(diag.pairs)
    labels = {r.key: f"unresolved ({s.get('correction') if r.key == 'corrected' else r.title})" for r in diag.regimes}
    cards = [{"num": f"{diag.n:,}", "label": f"items × {len(diag.models)} models"}]
    cards += [{"num": f"{diag.n_unresolved[r.key]} / {m}", "label": labels[r.key]} for r in diag.regimes]
    worst = max(diag.n_unresolved, key=lambda key: diag.n_unresolved[key])
    headline = (f"{diag.n_unresolved['iid']} of {m} displayed gaps are not resolved by this benchmark if items are "
                f"independent; {diag.n_unresolved[worst]} of {m} under the strictest regime computed "
                f"({labels[worst].split('(')[1].rstrip(')')}).")
    return cards, headline


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
         "text": ("A leaderboard makes many comparisons at once. Under a correction (Bonferroni, Holm step-down or "
                  "Benjamini–Hochberg step-up) each pair must clear a stricter level α′, so N* grows and fewer gaps "
                  "are resolved.")},
        {"title": "Clustered items",
         "text": ("Items from the same subject or source are correlated, so N items carry less information than N "
                  "independent ones. The design effect DE is measured per pair: the cluster-robust variance of the "
                  "gap (CR2, bias-reduced) over its IID variance. The clustered verdict uses the cluster-robust t "
                  "test (Imbens–Kolesár degrees of freedom, G − 1 for equal clusters) and "
                  "N*_cluster = max(DE, 1)·K·σ²/δ² with t quantiles.")},
        {"title": "Anytime-valid",
         "text": ("A leaderboard updated continuously and re-tested at every update needs a time-uniform test. "
                  f"The critical value {k_any:.2f} (instead of 1.96) comes from a normal-mixture confidence sequence "
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
        return '<span class="ok" title="resolved">✓ resolved</span>'
    return '<span class="bad" title="unresolved">✗ too small</span>'
