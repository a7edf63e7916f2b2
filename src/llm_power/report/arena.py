"""Arena resolution report: terminal, Markdown and self-contained HTML views of an
:class:`~llm_power.ArenaDiagnosis`. Every rendering shows the same rows and the same words.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.progress import step
from .._version import __version__
from ..preferences import ArenaDiagnosis
from .terminal import safe_text

__all__ = ["arena_header", "arena_legend", "arena_ranking_lines", "arena_rows", "arena_sentences", "arena_style_view",
           "arena_test_label", "forest_svg", "monitor_caption", "monitor_header", "monitor_rows", "monitor_sentences",
           "print_arena_monitor", "rank_header", "rank_rows", "rank_table", "render_arena_html",
           "render_arena_markdown", "style_caption", "style_header", "style_rows", "style_sentences"]

MAX_TABLE_PAIRS = 40
#: pairs listed in the terminal and Markdown reports (every pair is in the JSON)
MAX_TERMINAL_ROWS = 40
#: shortened names in the gaps table are never shorter than this (below it the table names models by rank)
MIN_NAME = 16
MAX_MARKDOWN_ROWS = 1_000


def _interval(low: float, high: float) -> str:
    """[low, high] in Elo points: one decimal for small gaps, none once a bound reaches 10 (the table
    stays narrow; an Elo point is already a fine unit).
    """
    digits = 0 if max(abs(low), abs(high)) >= 10 else 1
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _fmt_n(value: float) -> str:
    if math.isnan(value):
        return "—"
    if not math.isfinite(value):
        return "∞"
    return f"{math.ceil(value):,}"


def _fmt(value: float, spec: str) -> str:
    """A number, ±∞ for a rating without a finite estimate, or — where it could not be estimated."""
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return format(value, spec)


def _strictest(diag: ArenaDiagnosis) -> tuple[str, str]:
    """(label, suffix) of the headline regime: the strictest one that could be estimated."""
    label, col = diag.headline()
    return label, col.removeprefix("resolved")


def _clustered(diag: ArenaDiagnosis) -> bool:
    """Whether the pairs table shows the cluster regime's interval and test (clusters, estimable somewhere)."""
    c = diag.columns
    return "cluster_estimable" in c and bool(np.any(c["cluster_estimable"]))


def rank_rows(diag: ArenaDiagnosis) -> list[list[str]]:
    """The ranking table: model, Elo, rank, simultaneous rank interval, the ties it is in."""
    r = diag.ranks
    def span(k: int) -> str:
        low, high = r["rank_ci_low"][k], r["rank_ci_high"][k]
        if low is None or high is None:  # the covariance could not be estimated
            return "—"
        return f"{low}–{high}" if low != high else str(low)

    def ties(k: int) -> str:
        return ", ".join(str(g) for g in r["tie_groups"][k]) or "—"

    return [[str(r["model"][k]), _fmt(r["elo"][k], ".1f"), str(r["rank"][k]), span(k), ties(k)]
            for k in range(len(r["model"]))]


def rank_header(diag: ArenaDiagnosis) -> list[str]:
    """Column names of the ranking table (every rendering): a raw Elo column with style control, the
    monitor's status of each model with a monitor.
    """
    raw = ["raw Elo"] if "raw_elo" in diag.ranks else []
    status = ["monitor"] if diag.monitor is not None else []
    return ["rank", "model", "Elo", *raw, "rank interval", "ties", *status]


def rank_table(diag: ArenaDiagnosis) -> list[list[str]]:
    """Rows of the ranking table in :func:`rank_header`'s order."""
    raw = diag.ranks.get("raw_elo")
    status: dict[str, str] = {}
    if diag.monitor is not None:
        status = dict(zip(diag.monitor.models, diag.monitor.status, strict=True))
    return [[r[2], r[0], r[1], *([_fmt(raw[k], ".1f")] if raw is not None else []), r[3], r[4],
             *([status.get(r[0], "—")] if diag.monitor is not None else [])]
            for k, r in enumerate(rank_rows(diag))]


def monitor_header(diag: ArenaDiagnosis) -> list[str]:  # noqa: ARG001 - one signature for every renderer
    """Column names of the live monitor's table."""
    return ["A", "B", "gap (Elo)", "anytime interval", "e-value", "verdict", "since"]


def _monitor_pairs(diag: ArenaDiagnosis) -> list[tuple[int, float]]:
    """For each pair of the report's table, the monitor's row and the sign that turns its gap into A − B."""
    mon = diag.monitor
    c = mon.columns
    where = {(str(a), str(b)): k for k, (a, b) in enumerate(zip(c["model_a"], c["model_b"], strict=True))}
    out = []
    for a, b in zip(diag.columns["model_a"], diag.columns["model_b"], strict=True):
        if (str(a), str(b)) in where:
            out.append((where[str(a), str(b)], 1.0))
        elif (str(b), str(a)) in where:
            out.append((where[str(b), str(a)], -1.0))
        else:  # a model the monitor never saw (cannot happen for the battles it replayed)
            out.append((-1, 1.0))
    return out


def monitor_rows(diag: ArenaDiagnosis, limit: int | None = None, *, name_width: int | None = None) -> list[list[str]]:
    """Per pair of the report's table (A ranked above B), the monitor's gap, anytime interval (the one
    its decision is read from: it leaves out 0 exactly for a decided pair), e-value, verdict and the
    battles at which it was reached.
    """
    mon = diag.monitor
    if mon is None:
        return []
    from .._core.format import unique_short_names

    c = mon.columns
    short = dict(zip(diag.models, unique_short_names(diag.models, name_width) if name_width else diag.models,
                     strict=True))
    rows = []
    for (k, sign), a, b in list(zip(_monitor_pairs(diag), diag.columns["model_a"], diag.columns["model_b"],
                                    strict=True))[:limit]:
        if k < 0:
            rows.append([str(short[a]), str(short[b]), "—", "—", "—", "undecided", "—"])
            continue
        lo, hi = float(c["elo_ci_low"][k]), float(c["elo_ci_high"][k])
        lo, hi = (lo, hi) if sign > 0 else (-hi, -lo)
        interval = _interval(lo, hi) if math.isfinite(lo) and math.isfinite(hi) else "[−∞, ∞]"
        verdict = str(c["verdict"][k])
        if sign < 0 and verdict in ("A better", "B better"):
            verdict = "B better" if verdict == "A better" else "A better"
        since = f"{int(c['decided_at'][k]):,}" if bool(c["decided"][k]) else "—"
        rows.append([str(short[a]), str(short[b]), _fmt(sign * float(c["estimate_elo"][k]), "+.1f"), interval,
                     _fmt(float(c["e_value"][k]), ".3g"), verdict, since])
    return rows


def _monitor_words(diag: ArenaDiagnosis) -> str:
    mon = diag.monitor
    how = {"asymptotic": "asymptotic confidence sequences of the Bradley–Terry fit",
           "betting": "betting confidence sequences of each pair's direct battles"}[mon.method]
    corr = {"e-bh": f"e-BH at FDR {mon.alpha:g}", "bonferroni": f"Bonferroni, family-wise {mon.alpha:g}",
            None: f"each pair at {mon.alpha:g}"}[mon.correction]
    unit = f", time in {mon.n_clusters:,} clusters" if mon.n_clusters is not None else ""
    return f"{how}, {corr}{unit}; {mon.looks:,} looks over {mon.n_battles:,} battles"


def monitor_caption(diag: ArenaDiagnosis) -> str:
    """What the monitor's table is (the same sentence in every rendering)."""
    mon = diag.monitor
    shared = ("the anytime interval (Elo) holds at every look at once, whenever one stops; a pair is decided "
              "while it leaves out 0 (e-value ≥ 1/level)")
    sticky = "; a decision is kept" if mon.correction != "e-bh" else "; e-BH decisions are the current ones"
    return (f"Live monitor ({_monitor_words(diag)}): {shared}{sticky}; since: battles when first decided. "
            "Decided is not resolved: resolved asks for q ≥ 1 at a planned power, decided only that the "
            "sequence leaves out 0.")


def monitor_sentences(diag: ArenaDiagnosis) -> list[str]:
    """The monitor in words: decided pairs of the table, and the provisional models (names raw)."""
    mon = diag.monitor
    if mon is None:
        return []
    rows = monitor_rows(diag)
    decided = sum(r[5] != "undecided" for r in rows)
    words = "adjacent pairs" if diag.settings["pairs"] == "adjacent" else "pairs"
    out = [f"Live monitor: {decided} of {len(rows)} {words} decided after {mon.looks:,} looks "
           f"({len(mon.decided)} of {mon.columns['estimate'].size} pairs in all)."]
    provisional = [m for m, st in zip(mon.models, mon.status, strict=True) if st == "provisional"]
    if provisional:
        out.append(f"Provisional ({len(provisional)}): " + ", ".join(provisional)
                   + " — too few battles, or joined late with a neighbouring gap still undecided.")
    return out


def print_arena_monitor(diag: ArenaDiagnosis, stream: Any = None) -> None:
    """``llm-power arena --monitor``: the live monitor's table on the terminal -- whole names, shorter
    unique names, then the models by rank; one paragraph per pair when no layout fits.
    """
    import sys

    from .terminal import say
    from .terminal_report import print_fitted_table

    if diag.monitor is None:
        return
    out = sys.stdout if stream is None else stream
    header = monitor_header(diag)
    position = {name: str(k + 1) for k, name in enumerate(diag.ranks["model"])}
    rows = monitor_rows(diag, MAX_TERMINAL_ROWS)
    by_rank = [[position[a], position[b], *rest] for (a, b, *rest) in rows]
    variants: list[tuple[list[str], list[list[str]], tuple[int, ...]]] = [
        (header, monitor_rows(diag, MAX_TERMINAL_ROWS, name_width=w), (0, 1)) for w in (None, 24, MIN_NAME)]
    variants.append((header, by_rank, ()))
    title = "Live monitor" + (f" (the first {len(rows)} of {diag.n_pairs:,} pairs)" if len(rows) < diag.n_pairs else "")
    if not print_fitted_table(title, variants, caption=monitor_caption(diag), stream=out):
        say(title, out)
        for row in rows:
            say(f"{row[0]} − {row[1]}: " + ", ".join(f"{name} {cell}" for name, cell in zip(header[2:], row[2:],
                                                                                         strict=True)), out)
        say(monitor_caption(diag), out)


def style_header(diag: ArenaDiagnosis) -> list[str]:  # noqa: ARG001 - one signature for every renderer
    """Column names of the style-control table."""
    return ["covariate", "Elo per unit", "interval", "p"]


def style_rows(diag: ArenaDiagnosis) -> list[list[str]]:
    """One row per covariate: its coefficient in Elo points per unit, interval and p (empty without
    style control).
    """
    st = diag.style
    if not st:
        return []
    rows = []
    for k, name in enumerate(st["covariate"]):
        lo, hi = float(st["elo_ci_low"][k]), float(st["elo_ci_high"][k])
        interval = _interval(lo, hi) if math.isfinite(lo) and math.isfinite(hi) else "—"
        rows.append([str(name), _fmt(float(st["coefficient_elo"][k]), "+.1f"), interval,
                     _fmt(float(st["pvalue"][k]), ".2g")])
    return rows


def style_caption(diag: ArenaDiagnosis) -> str:
    """What the style-control table and the raw Elo column are (the same sentence everywhere)."""
    s, st = diag.settings, diag.style or {}
    level = f"{100 * s['confidence_level']:g}%"
    weights = s.get("weights")
    weighted = (f" Battles weighted by {weights!r} (e.g. inverse sampling probabilities); the sandwich "
                "accounts for the weights." if weights else "")
    if not st.get("covariate"):
        return "Raw Elo: the fit with every battle weighing 1." + weighted
    test = st["test"] + (f", t on {st['df']:g} df" if math.isfinite(st["df"]) else "")
    raw = "without them" + (" and without the weights" if weights else "")
    return ("Elo, gaps and verdicts are style-controlled: Bradley–Terry with the covariates (model_a minus "
            f"model_b per battle); raw Elo: the fit {raw}. A coefficient: the Elo points one unit of its "
            f"covariate adds to model_a's side of a battle; its {level} interval and p: {test}." + weighted)


def style_sentences(diag: ArenaDiagnosis) -> list[str]:
    """The largest moves from raw to style-controlled ratings, in words (none without style control)."""
    raw = diag.ranks.get("raw_elo")
    if raw is None:
        return []
    elo = np.asarray(diag.ranks["elo"], dtype=float)
    shift = elo - np.asarray(raw, dtype=float)
    if not np.any(np.isfinite(shift)):
        return []
    raw_rank = np.argsort(np.argsort(-np.asarray(raw, dtype=float), kind="stable"), kind="stable") + 1
    k = int(np.nanargmax(np.abs(shift)))
    moved = int(np.sum(raw_rank != np.arange(1, len(elo) + 1)))
    what = ", ".join(map(str, (diag.style or {}).get("covariate") or [])) or "the weights"
    return [f"Controlling for {what} moves {moved} of {len(elo)} models in the ranking; the largest change of "
            f"rating is {diag.models[k]} ({float(raw[k]):.0f} → {float(elo[k]):.0f} Elo)."]


def arena_header(diag: ArenaDiagnosis) -> list[str]:  # noqa: ARG001 - one signature for every renderer
    """Column names of the pairs table (terminal, Markdown and HTML alike); :func:`arena_legend` says
    which regime each column is computed under.
    """
    return ["A", "B", "gap (Elo)", "interval", "p", "battles", "N*", "q", "resolved"]


def arena_test_label(diag: ArenaDiagnosis) -> str:
    """Which test the pairs table's interval and p are (one test per row: the cluster-robust one when
    clustered), for the table's title.
    """
    if _clustered(diag):
        return f"interval and p cluster-robust (CR1, t on {diag.settings['cluster_df']:g} df)"
    return "interval and p: Wald, battles independent"


def arena_legend(diag: ArenaDiagnosis) -> str:
    """What the pairs table's columns are (the same sentence under every rendering)."""
    label, _ = _strictest(diag)
    s = diag.settings
    level = f"{100 * s['confidence_level']:g}%"
    if _clustered(diag):
        test = (f"interval and p: the cluster-robust Wald test (CR1 sandwich, Student t on "
                f"{s['cluster_df']:g} degrees of freedom) and its {level} interval (the IID test, battles "
                "independent, is in the JSON report)")
    else:
        test = f"interval and p: the Wald test (battles independent) and its {level} interval"
    note = ""
    if s.get("cluster_not_estimable"):
        note = f" Cluster regime: not estimable (—): {s['cluster_not_estimable']}."
    if s.get("separated"):
        note += (f" {len(s['separated'])} model(s) never win or never lose against the rest: no finite rating, their "
                 "gaps are not estimable (—).")
    return (f"gap: A − B in Elo points; {test}; battles: between A and B; N*: battles in the whole arena needed to "
            f"separate the pair ({label}, the headline regime) if new battles are spread over pairs as these "
            f"were; q = N/N*; resolved (q ≥ 1 and the test rejects) under "
            f"{' · '.join(name for name, _ in diag.regimes())}.{note}")


def _interval_columns(diag: ArenaDiagnosis) -> tuple[np.ndarray, np.ndarray]:
    c = diag.columns
    if _clustered(diag):
        return np.asarray(c["cluster_elo_ci_low"], dtype=float), np.asarray(c["cluster_elo_ci_high"], dtype=float)
    return np.asarray(c["elo_ci_low"], dtype=float), np.asarray(c["elo_ci_high"], dtype=float)


def arena_rows(diag: ArenaDiagnosis, limit: int | None = None, *, name_width: int | None = None) -> list[list[str]]:
    """Rows of the pairs table: names, gap, the interval and p of one test (cluster-robust when
    clustered), direct battles, N* and q of the headline regime, a mark per regime; — for what could
    not be estimated.
    """
    from .._core.format import unique_short_names

    c = diag.columns
    _, suffix = _strictest(diag)
    low, high = _interval_columns(diag)
    clustered = _clustered(diag)
    short = dict.fromkeys(diag.models)
    for name, cut in zip(diag.models, unique_short_names(diag.models, name_width) if name_width else diag.models,
                         strict=True):
        short[name] = cut
    rows = []
    for k in range(diag.n_pairs if limit is None else min(limit, diag.n_pairs)):
        marks = " ".join("✓" if c[col][k] else "✗" for _, col in diag.regimes())
        interval = _interval(float(low[k]), float(high[k])) if np.isfinite(low[k]) and np.isfinite(high[k]) else "—"
        tests = [_fmt(float(c["pvalue_cluster" if clustered else "pvalue"][k]), ".2g")]
        rows.append([str(short[c["model_a"][k]]), str(short[c["model_b"][k]]), _fmt(float(c["gap_elo"][k]), "+.1f"),
                     interval, *tests, f"{int(c['battles'][k]):,}", _fmt_n(float(c[f"n_star{suffix}"][k])),
                     _fmt(float(c[f"q{suffix}"][k]), ".2f"), marks])
    return rows


def arena_sentences(diag: ArenaDiagnosis) -> list[str]:
    """The verdict in words, one sentence per regime, then the next step."""
    n_pairs = diag.n_pairs
    words = "adjacent pairs" if diag.settings["pairs"] == "adjacent" else "pairs"
    s = diag.settings
    out = []
    cluster_none = "cluster_estimable" in diag.columns and not np.any(diag.columns["cluster_estimable"])
    for label, count in diag.unresolved().items():
        if label == "cluster" and cluster_none:
            out.append(f"cluster: not estimable — {s['cluster_not_estimable']}.")
            continue
        out.append(f"{count:,} of {n_pairs:,} {words} unresolved ({label}).")
    label, suffix = _strictest(diag)
    need = np.asarray(diag.columns[f"n_star{suffix}"], dtype=float)
    resolved = np.asarray(diag.columns[dict(diag.regimes())[label]], dtype=bool)
    todo = need[~resolved]
    finite = todo[np.isfinite(todo)]
    unknown = int(np.isnan(todo).sum())
    if todo.size == 0:
        out.append(f"Every displayed gap is separated ({label}).")
    elif finite.size:
        nearest = (f"the nearest to separation needs about {_fmt_n(float(finite.min()))}, "
                   if finite.size > 1 else "")
        zero = todo.size - finite.size - unknown
        out.append(f"Unresolved gaps ({label}): {nearest}separating every one takes about "
                   f"{_fmt_n(float(finite.max()))} battles in the arena (now {diag.n_battles:,}), if new battles are "
                   "spread over pairs as these were"
                   + (f"; {zero} gap(s) are exactly 0 and never separate" if zero else "")
                   + (f"; {unknown} gap(s) are not estimable" if unknown else "") + ".")
    return out


def arena_ranking_lines(diag: ArenaDiagnosis, esc: Any = str, prose: Any = str) -> list[str]:
    """Who can be #1 and the winner's Elo corrected for selection, in words (``esc`` escapes the
    untrusted names for a medium, ``prose`` the package's own words); none without a covariance.
    """
    r = diag.ranks
    best = r.get("best_set")
    level = f"{100 * diag.settings['confidence_level']:g}%"
    tail = f" ({level} simultaneous rank intervals over {len(diag.models)} models)."
    out = [(prose("#1 is ") if len(best) == 1 else prose("#1 is one of: ")) + ", ".join(esc(m) for m in best)
           + prose(tail)] if best else []
    win = r.get("winner")
    if win:
        lo, hi = win["hybrid_ci"]
        out.append(esc(win["selected"][0]) + prose(
            f" rates {win['estimate']:.0f} Elo because the same battles picked it as the best; corrected for that "
            f"selection: {win['hybrid_estimate']:.0f} (hybrid {level} interval {lo:.0f} – {hi:.0f})."))
    fr = r.get("fragility")
    if fr and math.isfinite(fr["battles_to_flip_top"]):
        out.append(prose(f"Removing {int(fr['battles_to_flip_top']):,} of {diag.n_battles:,} battles "
                         f"({100 * fr['share_top']:.2g}%) lets ") + esc(fr["challenger"])
                   + prose(" tie or overtake #1 (checked by refitting)"
                           + (f": fragile (at most {100 * fr['fragile_share']:g}% of the battles)."
                              if fr["fragile_top"] else ".")))
    return out


def render_arena_markdown(diag: ArenaDiagnosis, *, title: str = "Arena resolution report") -> str:
    """GitHub-flavoured Markdown: the verdict sentences and the pairs table (names escaped)."""
    from .markdown import md_prose, md_text

    lines = [f"## {md_text(title)}", "", f"{len(diag.models)} models, {diag.n_battles:,} battles.", ""]
    lines += [f"- {md_prose(s)}" for s in arena_sentences(diag)]
    lines += [f"- {line}" for line in arena_ranking_lines(diag, md_text, md_prose)]
    header = arena_header(diag)
    lines += ["", "| " + " | ".join(md_prose(h) for h in header) + " |",
              "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|"]
    lines += ["| " + " | ".join(md_text(cell) if i < 2 else cell for i, cell in enumerate(row)) + " |"
              for row in arena_rows(diag, MAX_MARKDOWN_ROWS)]
    if diag.n_pairs > MAX_MARKDOWN_ROWS:
        lines += ["", f"The first {MAX_MARKDOWN_ROWS:,} of {diag.n_pairs:,} pairs; every pair is in the JSON report."]
    lines += ["", md_prose(arena_legend(diag))]
    if diag.monitor is not None:
        head = monitor_header(diag)
        lines += ["", "### Live monitor", ""] + [f"- {md_text(s)}" for s in monitor_sentences(diag)]
        lines += ["", "| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
        lines += ["| " + " | ".join(md_text(cell) if i < 2 else cell for i, cell in enumerate(row)) + " |"
                  for row in monitor_rows(diag, MAX_MARKDOWN_ROWS)]
        lines += ["", md_prose(monitor_caption(diag))]
    if "raw_elo" in diag.ranks:
        lines += ["", "### Style control", ""] + [f"- {md_text(s)}" for s in style_sentences(diag)]
        if style_rows(diag):
            head = style_header(diag)
            lines += ["", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
            lines += ["| " + md_text(row[0]) + " | " + " | ".join(row[1:]) + " |" for row in style_rows(diag)]
        lines += ["", md_prose(style_caption(diag))]
    return "\n".join(lines) + "\n"


def forest_svg(diag: ArenaDiagnosis, limit: int) -> str:
    """The forest plot of the first ``limit`` gaps (Elo, under the strictest regime) as inline SVG."""
    import matplotlib

    from .._core.format import unique_short_names
    from .html import BAD, FIG_WIDTH, OK, figure_svg, subplots

    c = diag.columns
    k = min(limit, diag.n_pairs)
    # each model shortened once (16 characters, as the leaderboard's forest plot): 48-character labels made
    # the figure wide, so a phone scaled its text down to 7 px
    models = sorted({str(m) for m in c["model_a"][:k]} | {str(m) for m in c["model_b"][:k]})
    short = dict(zip(models, unique_short_names([safe_text(m) for m in models], 16), strict=True))
    names = [f"{short[str(a)]} − {short[str(b)]}" for a, b in zip(c["model_a"][:k], c["model_b"][:k], strict=True)]
    low, high = (v[:k] for v in _interval_columns(diag))
    gap = np.asarray(c["gap_elo"], dtype=float)[:k]
    label, _ = _strictest(diag)
    resolved = np.asarray(c[dict(diag.regimes())[label]], dtype=bool)[:k]
    drawn = np.isfinite(low) & np.isfinite(high) & np.isfinite(gap)
    kind = "cluster-robust (CR1, t)" if _clustered(diag) else "Wald (battles independent)"
    level = f"{100 * diag.settings['confidence_level']:g}%"
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 12, "svg.hashsalt": "llm-power"}):
        fig, ax = subplots(FIG_WIDTH, 0.9 + 0.38 * k)
        y = np.arange(k)[::-1]
        colours = np.array([OK if r else BAD for r in resolved], dtype=object)
        ax.hlines(y[drawn], low[drawn], high[drawn], colors=list(colours[drawn]), linewidth=2)
        ax.scatter(gap[drawn], y[drawn], color=list(colours[drawn]), zorder=3, s=22)
        for yk in y[~drawn]:
            ax.text(0.0, yk, "not estimable", va="center", ha="center", fontsize=9, color="#57606a")
        ax.axvline(0.0, color="#57606a", linestyle="--", linewidth=1)
        ax.set_yticks(y, names, parse_math=False)  # names are data: a "$" is not mathtext
        ax.set_xlabel(f"rating gap (Elo), {level} {kind} interval\ncolour: {label} verdict")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        return figure_svg(fig, f"Forest plot of {k} rating gaps with {kind} intervals; "
                               f"blue resolved ({label}), orange not")


@step("HTML report: charts")
def render_arena_html(diag: ArenaDiagnosis, *, title: str = "Arena resolution report", source: str = "",
                      note: str = "") -> str:
    """One self-contained HTML page (inline CSS and SVG; nothing fetched)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    s = diag.settings
    level = f"{100 * s['confidence_level']:g}%"
    cards = [{"num": f"{diag.n_battles:,}", "label": f"battles × {len(diag.models)} models"}]
    cluster_none = "cluster_estimable" in diag.columns and not np.any(diag.columns["cluster_estimable"])
    cards += [{"num": "—" if label == "cluster" and cluster_none else f"{n} / {diag.n_pairs}",
               "label": "cluster: not estimable" if label == "cluster" and cluster_none else f"unresolved ({label})"}
              for label, n in diag.unresolved().items()]
    header = arena_header(diag)
    rows = [[(cell, "l" if i < 2 else "") for i, cell in enumerate(row)] for row in arena_rows(diag, MAX_TABLE_PAIRS)]
    clustered = s.get("n_clusters") is not None
    explanations = [
        {"title": "Rating gaps and their intervals",
         "text": "Bradley–Terry fits P(A beats B) = 1/(1 + exp(−(θA − θB))) to every battle at once; a tie counts as "
                 "half a win for each side" + (" (Davidson's tie model)" if s["ties"] == "davidson" else "") + ". "
                 "The gap of two ratings needs no anchor; its standard error is the sandwich (robust) one"
                 + (", summed within clusters of battles that share a prompt or voter" if clustered else "") + "."},
        {"title": "N* and q",
         "text": "The variance of a gap shrinks like 1/N when the arena grows with the same mix of pairs (and the same "
                 "cluster structure), so N* = (z(1−α/2) + z(power))² × N × se² / gap². q = N/N* < 1: the arena is too "
                 "small to separate that gap reliably even if it is real."},
        {"title": f"{s['correction_label']}, cluster and anytime regimes",
         "text": f"{s['correction_label']}: the family of {diag.n_pairs} pairs is tested together. "
                 + ("Cluster: battles on one prompt (or by one voter) are not independent; their cluster-robust "
                    "(CR1) variance with Student-t quantiles on clusters − 1 degrees of freedom replaces the IID one, "
                    "never making a gap look more certain than IID does; with no more clusters than free ratings "
                    "it cannot be estimated, and the regime says so (—) instead of printing a number. "
                    if clustered else "")
                 + "Anytime: a live arena is looked at again and again; the normal-mixture boundary "
                   f"(z = {s['z_anytime']:.2f} instead of {s['z_fixed']:.2f}) keeps the error "
                   "rate valid however often you look."},
    ]
    env = Environment(loader=PackageLoader("llm_power.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["visible"] = safe_text
    settings = (f"alpha = {s['alpha']:g}, power = {s['power']:g}, pairs = {s['pairs']}, ties = {s['ties']}, "
                f"correction = {s['correction']}" + (f", {s['n_clusters']} clusters" if clustered else ""))
    return env.get_template("arena.html.j2").render(
        title=title, subtitle=f"{len(diag.models)} models, {diag.n_battles:,} battles; {diag.n_pairs} "
                              f"{'adjacent pairs' if s['pairs'] == 'adjacent' else 'pairs'}.",
        version=__version__, cards=cards, note=note,
        sentences=arena_sentences(diag) + style_sentences(diag) + monitor_sentences(diag) + arena_ranking_lines(diag),
        monitor_header=monitor_header(diag), monitor_rows=monitor_rows(diag, MAX_TABLE_PAIRS),
        monitor_caption=monitor_caption(diag) if diag.monitor is not None else "",
        rank_header=rank_header(diag), rank_rows=rank_table(diag), level=level, style_header=style_header(diag),
        style_rows=style_rows(diag), style_caption=style_caption(diag) if "raw_elo" in diag.ranks else "",
        cov_note=", cluster-robust" if clustered else "", pair_kind="adjacent" if s["pairs"] == "adjacent" else "all",
        forest=forest_svg(diag, MAX_TABLE_PAIRS), forest_note=" (cluster-robust)" if _clustered(diag) else "",
        shown_pairs=len(rows), n_pairs=diag.n_pairs, pair_header=header, pair_rows=rows, legend=arena_legend(diag),
        strictest=_strictest(diag)[0], headline_note="the headline regime",
        explanations=explanations,
        source=source or "an in-memory table", settings=settings)


def arena_ranks_view(diag: ArenaDiagnosis, *, confidence_level: float) -> Any:
    """``llm-power arena``: the ranks table (rank, model, Elo, rank interval, ties)."""
    from .tables import TableView

    header = rank_header(diag)
    raw = " Raw Elo: without style control (the style table below)." if "raw_elo" in diag.ranks else ""
    return TableView(f"Arena: {len(diag.models)} models, {diag.n_battles:,} battles", header, rank_table(diag),
                     caption=f"Elo: 400/ln 10 × Bradley–Terry log-strength, mean 1000. Rank intervals: simultaneous "
                             f"{confidence_level:.0%} (max-t over all pairs). Ties: the statistical ties (numbered) a "
                             "model is in, runs of ranks holding no resolved pair of the headline regime." + raw,
                     right_align=(0, 2, 3) if raw else (0, 2))


def arena_style_view(diag: ArenaDiagnosis) -> Any:
    """``llm-power arena --covariate``: the covariates' coefficients (None without style control)."""
    from .tables import TableView

    if not diag.style:
        return None
    return TableView("Style control", style_header(diag), style_rows(diag), caption=style_caption(diag),
                     right_align=(1, 3))


def print_arena_gaps(diag: ArenaDiagnosis, pairs: str, stream: Any = None) -> None:
    """The rating gaps on the terminal: whole names, then shorter unique names, then headers on two
    lines, then the models by their rank in the ranks table -- the first layout that fits, no row
    wrapped, no number cut; narrower than every layout, one paragraph per pair.
    """
    import sys

    from rich.console import Console

    from .terminal import say, terminal_width
    from .terminal_report import fit_table

    out = sys.stdout if stream is None else stream
    header = arena_header(diag)
    rows = arena_rows(diag, MAX_TERMINAL_ROWS)
    title = f"Rating gaps, {pairs} pairs; {arena_test_label(diag)}" + (
        f" (the first {len(rows)} of {diag.n_pairs:,}; --json FILE has every pair)" if len(rows) < diag.n_pairs else "")
    width = terminal_width(out)
    position = {name: str(k + 1) for k, name in enumerate(diag.ranks["model"])}
    by_rank = [[position[a], position[b], *rest] for (a, b, *rest) in rows]
    two = [h.replace(" ", "\n", 1) for h in header]
    variants: list[tuple[list[str], list[list[str]], tuple[int, ...]]] = [
        (head, arena_rows(diag, MAX_TERMINAL_ROWS, name_width=w), (0, 1)) for head in (header, two)
        for w in (None, 24, MIN_NAME)]
    variants += [(head, by_rank, ()) for head in (header, two)]
    table, chosen = fit_table(variants, width)
    say(title, out)
    if table is None:  # narrower than every table: one paragraph per pair, whole names, nothing cut
        for row in rows:
            say(f"{row[0]} − {row[1]}: " + ", ".join(f"{name} {cell}" for name, cell in zip(header[2:], row[2:],
                                                                                         strict=True)), out)
    else:
        Console(file=out, width=width, highlight=False, emoji=False, soft_wrap=False).print(table)
        if chosen >= len(variants) - 2:  # the rank layout
            say("A, B: the models' ranks in the table above (names in full there).", out)
