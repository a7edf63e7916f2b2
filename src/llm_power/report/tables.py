"""The tables of the commands, as views: each builder turns a result (or the plain numbers a
command computed) into a :class:`TableView` -- title, columns, rows of text, caption, which columns
align right -- and the renderers print it (:func:`print_view` for the terminal; Markdown and notebooks
can take the same view). ``cli/`` lays out no table of its own (the layering test forbids it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .._core.format import fmt_gap, fmt_margins, fmt_n_star, fmt_p, fmt_score, items_text
from .._core.options import CLUSTER_METHOD_LABELS

__all__ = [
    "TableView",
    "adjust_view",
    "aggregate_pairs_view",
    "aggregate_scores_views",
    "comparison_view",
    "coverage_view",
    "error_bars_view",
    "fmt_p_short",
    "gate_markdown",
    "gate_tasks_markdown",
    "interval_view",
    "judges_markdown",
    "judges_views",
    "mde_grid_view",
    "mde_view",
    "noise_units",
    "noise_views",
    "one_model_html",
    "one_model_markdown",
    "one_model_view",
    "passk_comparison_view",
    "passk_model_view",
    "power_view",
    "ppi_caption",
    "ppi_markdown",
    "ppi_plan_line",
    "ppi_view",
    "print_view",
    "rank_intervals_view",
    "ranks_view",
    "runs_plan_view",
    "sample_size_grid_view",
    "sample_size_view",
    "shortcut_view",
    "subset_estimate_view",
    "subset_gap_text",
    "subset_gap_variants",
    "subset_plan_view",
]


@dataclass(frozen=True)
class TableView:
    """One table: what every medium shows (cells are text, already formatted; names unescaped --
    each renderer escapes for its medium).
    """

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    caption: str | None = None
    right_align: Sequence[int] = field(default_factory=tuple)
    #: the columns that may wrap when the table is wider than the terminal (names); None: every column but
    #: the first. Numbers and intervals outside it never split across lines.
    wrap: Sequence[int] | None = None


def print_view(view: TableView, stream: TextIO | None = None) -> None:
    """The table on the terminal (rich; plain text when the stream is not a terminal)."""
    from .terminal import print_table

    print_table(view.title, view.columns, view.rows, caption=view.caption, right_align=view.right_align,
                stream=stream, wrap=view.wrap)


# ---- adjust, ci, coverage ------------------------------------------------------------------------------------

def adjust_view(pvalues: Sequence[float], adjusted: Any, rejected: Sequence[bool], *, method: str,
                alpha: float) -> TableView:
    """``llm-power adjust``: each p-value, adjusted, and whether it is rejected."""
    rows = [[str(k + 1), fmt_p(p, 4), fmt_p(a, 4), "yes" if r else "no"]
            for k, (p, a, r) in enumerate(zip(pvalues, adjusted, rejected, strict=False))]
    return TableView(f"{method} adjusted p-values ({len(rows)} tests)",
                     ["#", "p", "adjusted p", f"rejected at α = {alpha:g}"], rows, right_align=(0, 1, 2),
                     caption=f"{sum(rejected)} of {len(rows)} rejected.")


def interval_view(payload: dict[str, Any], *, k: int, n: int, confidence_level: float, alternative: str) -> TableView:
    """``llm-power ci``: the interval of each method."""
    level = f"{100 * confidence_level:g}%"
    side = {"two-sided": "two-sided", "less": "upper bound", "greater": "lower bound"}[alternative]
    rows = [[r["method"], f"{r['low']:.4f}", f"{r['high']:.4f}", f"{100 * r['low']:.1f}% – {100 * r['high']:.1f}%",
             r["note"]] for r in payload["intervals"]]
    return TableView(f"{k}/{n} = {100 * payload['estimate']:.2f}%  ({level} {side})",
                     ["method", "low", "high", "in points", "note"], rows, right_align=(1, 2, 3),
                     caption="Wilson is the default; Clopper–Pearson never under-covers; avoid Wald near 0/1 "
                             "and at small N.")


def coverage_view(records: Sequence[dict[str, Any]], methods: Sequence[str], nominal: float) -> TableView:
    """``llm-power coverage``: exact coverage per method, flagged more than a point below nominal."""
    rows = []
    for r in records:
        cells = []
        for m in methods:
            c = r["coverage"][m]
            cells.append(f"{c:.4f}{' ✗' if c < nominal - 0.01 else ''}")
        rows.append([str(r["n"]), f"{r['p']:g}", *cells])
    return TableView(f"Exact coverage (nominal {nominal:g})", ["N", "p", *methods], rows,
                     right_align=tuple(range(len(methods) + 2)),
                     caption="✗ = more than 1 point below nominal. Coverage is exact (binomial sum), not simulated.")


# ---- plan ----------------------------------------------------------------------------------------------------

def sample_size_view(rows: Sequence[dict[str, Any]], extra: dict[str, Any], skipped: dict[str, str], *, p_a: float,
                     p_b: float, rho: float, design: str, alpha: float, power: float,
                     discordance: float | None) -> TableView:
    """``llm-power plan sample-size``: N* by method, with the unpaired size and the shortcut for contrast."""
    unit = "items (total)" if design == "paired" else "items per group"
    table_rows = [[r["method"], f"{r['n']:,}", f"{r['raw']:,.2f}"] for r in rows]
    caption = (f"Gap {100 * (p_a - p_b):+.3g} points at α = {alpha:g}, power {power:g}"
               f"{'' if discordance is None else f', discordance {discordance:g}'}.")
    if extra:
        table_rows.append(["unpaired (per group)", f"{extra['unpaired_per_group']:,}", "for contrast"])
        table_rows.append(["shortcut (wrong)", f"{extra['shortcut']:,}", "unpaired Cohen-h size × (1 − ρ)"])
    for method, why in skipped.items():
        table_rows.append([method, "—", "skipped: n too large for the exact scan"])
        caption += f" {method}: {why}."
    return TableView(f"Sample size: A {p_a:g} vs B {p_b:g}, ρ = {rho:g} ({design})", ["method", unit, "unrounded"],
                     table_rows, right_align=(1, 2), caption=caption)


def sample_size_grid_view(rows: Sequence[dict[str, Any]], unpaired_n: int, unpaired_raw: float, *, p: float,
                          delta: float, method: str, alpha: float, power: float) -> TableView:
    """``llm-power plan sample-size --table``: items needed over the correlation ρ."""
    table_rows = [[f"{r['rho']:g}", f"{r['discordance']:.4f}", f"{r['n']:,}", f"{r['raw']:,.1f}"] for r in rows]
    table_rows.append(["unpaired", "", f"{unpaired_n:,}", f"{unpaired_raw:,.1f} per group"])
    return TableView(f"Items needed to detect {100 * delta:g} points at p = {p:g} ({method}, α = {alpha:g}, "
                     f"power {power:g})", ["ρ", "p_d = 2p(1−p)(1−ρ)", "n", "unrounded"], table_rows,
                     right_align=(0, 1, 2, 3))


def mde_grid_view(rows: Sequence[dict[str, Any]], rhos: Sequence[float], *, p: float, method: str, alpha: float,
                  power: float) -> TableView:
    """``llm-power plan mde --table``: the MDE over items and ρ."""
    cols = ["items", "unpaired"] + [f"paired ρ = {rho:g}" for rho in rhos]
    table_rows = [[f"{r['n']:,}"] + [f"{100 * r[k]:.2f}" for k in r if k != "n"] for r in rows]
    return TableView(f"Minimum detectable effect (points) at p = {p:g} ({method}, α = {alpha:g}, power {power:g})",
                     cols, table_rows, right_align=tuple(range(len(cols))))


def mde_view(rows: Sequence[dict[str, Any]], *, p: float, rho: float, design: str, method: str) -> TableView:
    """``llm-power plan mde``: the MDE at each number of items."""
    return TableView(f"Minimum detectable effect at p = {p:g}, ρ = {rho:g} ({design}, {method})",
                     ["items", "MDE (points)"], [[f"{r['n']:,}", f"{100 * r['mde']:.2f}"] for r in rows],
                     right_align=(0, 1))


def power_view(rows: Sequence[dict[str, Any]], *, p_a: float, p_b: float, rho: float, design: str,
               method: str) -> TableView:
    """``llm-power plan power``: the power at each number of items."""
    return TableView(f"Power: A {p_a:g} vs B {p_b:g}, ρ = {rho:g} ({design}, {method})", ["items", "power"],
                     [[f"{r['n']:,}", f"{r['power']:.4f}"] for r in rows], right_align=(0, 1))


def _prescreen_text(delta: float, p_mid: float) -> str:
    """The prescreen gap in points, or "every possible gap" when it exceeds the largest gap two
    accuracies with this midpoint can have (2 min(p, 1 - p)).
    """
    largest = 2 * min(p_mid, 1 - p_mid)
    if math.isinf(delta) or delta >= largest:
        return f"every possible gap (≤ {100 * largest:.1f} points)"
    return f"{100 * delta:.1f} points"


def shortcut_view(payload: dict[str, Any], *, p_a: float, p_b: float, rho: float) -> TableView:
    """``llm-power plan shortcut``: the shortcut's size against the paired N*."""
    p_mid = (p_a + p_b) / 2
    residual = payload["second_order_residual"]
    rows = [["shortcut n_h = (1 − ρ)·K/h²", f"{payload['shortcut']:,}"], ["paired N* (wald)", f"{payload['n_star']:,}"],
            ["ratio n_h / N*", f"{payload['ratio']:.4f}"],
            ["expansion to gap²: ½ + c₂·gap²", f"{payload['second_order']:.4f}"],
            ["expansion to gap⁴: ½ + c₂·gap² + c₄·gap⁴", f"{payload['fourth_order']:.4f}"],
            ["ratio − expansion to gap²", "0.0000" if abs(residual) < 5e-5 else f"{residual:+.4f}".replace("-", "−")],
            ["error constant C(p, ρ): ratio ≈ ½ ± C·gap²", f"{payload['error_constant']:.4f}"],
            ["gap below which ratio ≈ ½ ± 0.05", _prescreen_text(payload["prescreen_delta_at_0_05"], p_mid)]]
    return TableView(f"The shortcut vs the paired N*: A {p_a:g} vs B {p_b:g}, ρ = {rho:g}", ["", "value"], rows,
                     right_align=(1,), caption=f"The recipe asks for {100 * payload['ratio']:.1f}% of the paired N* "
                                               "(→ 50% as the gap shrinks).")


def runs_plan_view(plan: Any) -> TableView:
    """``llm-power plan runs``: items and runs needed for a gap, and the cheapest design."""
    def num(x: float) -> str:
        return "∞" if not math.isfinite(x) else f"{x:,.0f}"

    scale, unit = (100.0, "points") if plan.binary else (1.0, "score units")

    def sd(var: float) -> str:  # a variance component, shown as its SD in the score's unit
        return f"{scale * math.sqrt(max(var, 0.0)):.3g}"

    rows = [["items at the pilot's runs", num(plan.items_needed)],
            ["runs per model at the pilot's items", num(plan.runs_needed)],
            ["cheapest: items", num(plan.best_items)], ["cheapest: runs per model", num(plan.best_runs)],
            ["cheapest: cost per model", num(plan.best_cost)]]
    return TableView(f"Runs for a gap of {fmt_gap(plan.delta, plan.binary)} {unit}: {plan.model_a} vs "
                     f"{plan.model_b} (pilot {items_text(plan.n_items)} x {plan.runs_a}/{plan.runs_b} runs)",
                     ["", "value"], rows, right_align=(1,),
                     caption=f"The gap's per-item difference varies by SD {sd(plan.var_item)} between items, "
                             f"{sd(plan.var_res)} between runs of an item and {sd(plan.var_run)} between runs "
                             f"({unit}); α = {plan.alpha:g}, power {plan.power:g}; cost per model = "
                             f"{plan.cost_per_item:g} per item and run + {plan.cost_per_run:g} per run.")


def leaderboard_plan_view(plan: Any) -> TableView:
    """``llm-power plan leaderboard``: the family's resolved gaps at each number of items, and the goal's N."""
    import numpy as np

    pw, items = plan.power, plan.items
    m = len(plan.pairs)
    k = None if items is None or items.criterion != "at_least" else int(items.k)
    sel = plan.selection
    fdr = plan.null_below is not None
    exact = pw.all_resolved_exact is not None
    head = (["items", "resolved (mean)", "90% band", "P(all)"] + (["P(all), exact"] if exact else [])
            + ([f"P(>= {k})"] if k is not None else []) + (["false (mean)", "FDR"] if fdr else [])
            + (["P(best)"] if sel is not None else []))
    rows = []
    for t, n in enumerate(np.atleast_1d(pw.n_items).tolist()):
        row = [f"{n:,.0f}" + (" (pilot)" if int(n) == plan.n_pilot else ""),
               f"{np.atleast_1d(pw.expected_resolved)[t]:.2f}",
               f"{np.atleast_1d(pw.band_low)[t]:.0f}-{np.atleast_1d(pw.band_high)[t]:.0f}",
               f"{np.atleast_1d(pw.all_resolved)[t]:.3f}"]
        if exact:
            row.append(f"{np.atleast_1d(pw.all_resolved_exact)[t]:.3f}")
        if k is not None:
            row.append(f"{np.atleast_1d(pw.probability_at_least(k))[t]:.3f}")
        if fdr:
            row += [f"{np.atleast_1d(pw.false_resolved)[t]:.2f}", f"{np.atleast_1d(pw.fdr)[t]:.4f}"]
        if sel is not None:
            row.append(f"{sel['probability'][t]:.3f}")
        rows.append(row)
    family = {"adjacent": "adjacent gaps", "all": "gaps between all pairs",
              "many_to_one": f"gaps of {plan.pairs[0][0]} to each model" if plan.pairs else "gaps"}[plan.family]
    correction = {"none": "no correction", "bonferroni": "Bonferroni", "holm": "Holm", "bh": "BH",
                  "by": "BY", "ebh": "e-BH", "dunnett": "Dunnett, one-sided"}[pw.correction]
    dep = plan.dependence
    real = int(np.count_nonzero(plan.delta))
    gains = pw.correction == "dunnett"
    countable = int(np.count_nonzero(plan.delta > 0)) if gains else real
    caption = ""
    if fdr:
        ties = m - real
        caption += (f"{ties} of the {m} pilot gaps {'is' if ties == 1 else 'are'} below {100 * plan.null_below:g} "
                    f"points and planned as {'a true null' if ties == 1 else 'true nulls'}; 'resolved' counts the "
                    f"{countable} real {'gains' if gains else 'gaps'}, 'false' the nulls resolved and real gaps "
                    "resolved the wrong way, FDR = E[false / all resolved]. ")
    if items is not None:
        goal = (f"at least {k} of {m} resolved with probability {items.target:g}" if k is not None
                else f"{items.target:g} of {countable} resolved on average")
        caption += (f"{goal[0].upper()}{goal[1:]}: {items.n_items:,} items ({items.value:.4f} there, "
                    f"{items.value_below:.4f} with one fewer). ")
    jung = plan.discoveries
    if jung is not None:
        caption += (f"Jung's closed form (2005; independent statistics): {jung['n_items']:,} items, each gap "
                    f"judged at α′ = {jung['level']:.2g}, FDR ≈ {jung['fdr']:.2g}; the plan is the simulated "
                    f"number{'' if jung['dependence_ok'] else ', under the negative correlations below'}. ")
    if dep.get("minimum") is not None:
        caption += (f"The gaps' statistics correlate from {dep['minimum']:+.2f} to {dep['maximum']:+.2f}"
                    f"{'' if dep['prds_plausible'] else ' (some negatively: gaps that share a model)'}. ")
    if plan.count == "report":
        caption += ("Counted as a report counts: each simulated benchmark ranked anew and its own adjacent gaps "
                    "judged (near-ties reorder, so fewer than the pilot's gaps where models are close). ")
    if plan.clusters is not None:
        de = [v for v in plan.clusters["design_effect"] if v is not None]
        df = [v for v in plan.clusters["df"] if v is not None]
        span = (f"{min(df):.0f}" if round(min(df)) == round(max(df)) else f"{min(df):.0f}-{max(df):.0f}") if df else "?"
        caption += (f"Clustered: items drawn in clusters like the pilot's {plan.clusters['n_clusters']:,}, each gap "
                    f"judged by the clustered test (design effects {min(de):.2f}-{max(de):.2f}, floored at 1; t on "
                    f"{span} df at the pilot's items, in proportion at others; P(best) is the IID one). " if de else
                    "Clustered: each gap judged by the clustered test. ")
    if pw.correction == "dunnett":
        caption += f"'All' is every gain of {plan.pairs[0][0]} (a one-sided test never resolves a loss). "
    if exact:
        caption += "P(all), exact: the multivariate normal CDF of the same limit. "
    if sel is not None:
        lead = ("every other model behind by the indifference zone" if sel["lead"] == "indifference"
                else "the pilot's leads")
        caption += f"P(best): {sel['best']} observed best ({lead})"
        caption += (f"; with probability {sel['target']:g} after {sel['items']:,.0f} items. " if sel.get("items")
                    else ". ")
    judged = {"dunnett": "by Dunnett's simultaneous one-sided test of the gains (q >= 1 and p <= α′",
              "ebh": "by e-BH on the anytime regime's normal-mixture e-values (q >= 1 and e >= m/(α·rank)"}.get(
        pw.correction, f"as diagnose judges it (q >= 1 and p <= α′, {correction}")
    counted = ("a gap counts only when resolved in the pilot's direction" if plan.count == "pilot" else
               f"the report counts every gap it resolves ({np.atleast_1d(pw.false_resolved)[0]:.2f} on average at "
               f"{np.atleast_1d(pw.n_items)[0]:,.0f} items between models the pilot orders the other way)")
    caption += (f"Each gap judged {judged}; α = {pw.alpha:g}, power {pw.power:g}) in the joint normal limit, "
                f"{pw.n_simulations:,} draws; {counted}.")
    return TableView(f"Resolving the {m} {family} of {len(plan.models)} models ({correction}; pilot "
                     f"{items_text(plan.n_pilot)})", head, rows, right_align=tuple(range(len(head))), caption=caption)


# ---- aggregate -----------------------------------------------------------------------------------------------

def _num(value: float | None, spec: str) -> str:
    """A number of a JSON payload (None: infinite N* or undefined) for a table."""
    if value is None:
        return "∞"
    return format(value, spec) if math.isfinite(value) else "∞"


def aggregate_scores_views(scores: Sequence[dict[str, Any]], short: dict[str, str], *, confidence_level: float,
                           alpha: float, power: float) -> list[TableView]:
    """``llm-power aggregate``: each score with its interval, items and MDE. One task and metric (a
    leaderboard): one table, the task in its title; one model: its name in the title; several models on
    several tasks: a table per model (a row of model, task, metric and five numbers does not fit 80
    columns). The caption is under the last table.
    """
    def row(s: dict[str, Any]) -> list[str]:
        lo, hi, detect = s["ci_low"], s["ci_high"], s["mde_rho0"]
        if s["interval"] in ("wilson", "wilson bound"):  # accuracies in percent and points, as the gaps beside
            places = 2 if 100 * (hi - lo) < 1 else 1
            score, interval = f"{100 * s['value']:.2f}%", f"{100 * lo:.{places}f} – {100 * hi:.{places}f}%"
        else:  # other metrics as given
            score, interval = f"{s['value']:.4g}", f"{lo:.4g} – {hi:.4g}" if math.isfinite(lo) else "—"
        metric = f"{s['metric']},{s['filter']}" if s["filter"] else s["metric"]
        return [short[s["model"]], s["task"], metric, score, interval, f"{s['n']:,}",
                f"{100 * detect:.2f}" if math.isfinite(detect) else "—"]

    header = ["model", "task", "metric", "score", "interval", "items", "MDE (pts)"]
    models = list(dict.fromkeys(s["model"] for s in scores))
    kinds = list(dict.fromkeys((s["task"], s["metric"], s["filter"]) for s in scores))
    caption = (f"{confidence_level:.0%} intervals (Wilson for accuracies; for a score given without "
               "its standard error, the Wilson interval at its value, which bounds any score in [0, 1]). "
               "MDE: the paired gap (points) "
               f"detectable at alpha = {alpha:g}, power {power:g}, against a model whose "
               "errors are independent of this one's (correlated errors: smaller); —: none detectable "
               "(a score near 0 or 1 leaves too few items to disagree on). A score outside [0, 1] without its "
               "standard error has no interval (—).")
    if len(kinds) == 1 and len(models) > 1:  # a leaderboard of one task: the task and metric in the title
        task, metric, filt = kinds[0]
        views = [TableView(f"Scores on {task} ({metric}{',' + filt if filt else ''})",
                           [header[0], *header[3:]], [[r[0], *r[3:]] for r in map(row, scores)],
                           right_align=(1, 2, 3, 4), wrap=(0,))]
    else:
        views = [TableView(f"Scores of {model}", header[1:], [row(s)[1:] for s in scores if s["model"] == model],
                           right_align=(2, 4, 5), wrap=(0, 1)) for model in models]
    last = views[-1]
    views[-1] = TableView(last.title, last.columns, last.rows, caption=caption, right_align=last.right_align,
                          wrap=last.wrap)
    return views


def aggregate_pairs_view(pairs: Sequence[dict[str, Any]], name_a: str, name_b: str) -> TableView:
    """``llm-power aggregate`` with two models: McNemar's test over the joint tables their scores allow."""
    rows = [[p["task"], f"{100 * (p['p_a'] - p['p_b']):+.2f} pts",
             f"{_num(p['pvalue_low'], '.2g')} – {_num(p['pvalue_high'], '.2g')}",
             f"{_num(p['n_star_low'], ',.0f')} – {_num(p['n_star_high'], ',.0f')}", p["verdict"]] for p in pairs]
    return TableView(f"{name_a} vs {name_b}: McNemar's test over every joint table the two scores allow",
                     ["task", "gap", "p (range)", "N* (range)", "verdict"], rows,
                     caption="Ranges over the Fréchet bounds of the disagreement rate (the least disagreement "
                             "gives the smallest p and N*).", right_align=(1,))


# ---- demo --error-bars -----------------------------------------------------------------------------------------

def error_bars_view(payload: dict[str, Any], *, confidence_level: float) -> TableView:
    """``llm-power demo --error-bars``: the error bar of one score on benchmarks of familiar sizes."""
    from .._core.format import fmt_margins

    rows = [[r["benchmark"], f"{r['n']:,}", *(fmt_margins(0.0, -r[f"below_at_{k}"], r[f"above_at_{k}"], scale=100.0)
                                              for k in ("0_8", "0_5"))] for r in payload["benchmarks"]]
    return TableView(f"Error bars of one benchmark score ({100 * confidence_level:g}% Wilson interval, in points)",
                     ["benchmark (example)", "items", "score 80%", "score 50%"], rows, right_align=(1, 2, 3))


# ---- passk -----------------------------------------------------------------------------------------------------

def _fmt_ci(lo: float, hi: float) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "—"
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def passk_model_view(model: str, ks: Sequence[int], new: Any, fixed: Any, *, kind: str, n_questions: int,
                     samples: tuple[int, int], confidence_level: float) -> TableView:
    """``llm-power passk``: one model's pass@k with the interval for new questions and for these ones."""
    level = f"{confidence_level:.0%}"
    lo_n, hi_n = new.confidence_interval()
    lo_f, hi_f = fixed.confidence_interval()
    rows = [[str(k), f"{100 * e:.1f}", _fmt_ci(a, b), _fmt_ci(c, d),
             f"{se_n / se_f:.1f}×" if se_f > 0 and se_n > 0 else "—"]
            for k, e, a, b, c, d, se_n, se_f in zip(ks, new.estimate, lo_n, hi_n, lo_f, hi_f, new.standard_error,
                                                   fixed.standard_error, strict=True)]
    least, most = samples
    spread = (f"{least} sample{'s' if least > 1 else ''} per question" if least == most
              else f"{least}–{most} samples per question")
    return TableView(f"{model}: {kind} on {n_questions:,} questions, {spread}",
                     ["k", kind, f"{level} CI, new questions", f"{level} CI, these questions", "ratio"], rows,
                     caption=_passk_clusters(new, "New questions"), right_align=(0, 1, 2, 3, 4))


def _passk_clusters(res: Any, what: str) -> str | None:
    """The clusters and the clustered test behind a pass@k interval (None without clusters)."""
    if not getattr(res, "n_clusters", None):
        return None
    return (f"{what}: {res.n_clusters} clusters of questions, "
            f"{CLUSTER_METHOD_LABELS.get(res.cluster_method or 'cr2', 'cluster-robust t')}.")


def passk_comparison_view(cmp: Any, ks: Sequence[int], name_a: str, name_b: str) -> TableView:
    """``llm-power passk`` with two models: the paired difference at each k, and the band over every k."""
    rows = [[str(k), f"{100 * d:+.1f}", _fmt_ci(lo, hi), _fmt_ci(bl, bh), f"{p:.2g}", "✓" if r else "✗"]
            for k, d, lo, hi, bl, bh, p, r in zip(ks, cmp.difference, cmp.ci_low, cmp.ci_high, cmp.band_ci_low,
                                                  cmp.band_ci_high, cmp.pvalue, cmp.band_excludes_zero, strict=True)]
    clusters = _passk_clusters(cmp, "Interval and p")
    return TableView(f"{name_a} − {name_b}, same questions",
                     ["k", "difference", "interval", "band (all k)", "p", "band ≠ 0"], rows,
                     caption="Paired over questions (new questions). " + (clusters + " " if clusters else "")
                             + "Band: holds for every k shown at once "
                             "(max-t bootstrap); band ≠ 0: the band excludes 0, a difference at this k that "
                             "holds jointly over every k shown.", right_align=(0, 1, 2, 3, 4))


# ---- compare ---------------------------------------------------------------------------------------------------

#: the note beside q, by the part of the verdict's rule that decides it (``Comparison.verdict_reason``)
VERDICT_NOTES = {"resolved": "resolved: q ≥ 1 and the test rejects at α",
                 "too_small": "NOT resolved: the benchmark is too small to tell",
                 "no_rejection": "NOT resolved: q ≥ 1 but the test does not reject at α",
                 "unreachable": "NOT resolved: N* is infinite (no number of items like these resolves it)",
                 "undefined": "no verdict: the differences have no variance",
                 "iid_unresolved": "NOT resolved: this test's rule holds, the IID verdict does not"}


def comparison_view(res: Any, names: Sequence[str]) -> TableView:
    """``llm-power compare``: the two scores, the gap and its interval, the test, N*, q and the MDE."""
    ci = res.confidence_interval()
    binary = res.binary
    unit = "points" if binary else "score units"
    scale = 100 if binary else 1
    verdict = VERDICT_NOTES[res.verdict_reason]
    rows = [
        ["A", names[0], fmt_score(res.mean_a, binary)],
        ["B", names[1], fmt_score(res.mean_b, binary)],
        ["gap A − B", f"{fmt_gap(res.delta, binary)} {unit}",
         f"{100 * res.confidence_level:g}% CI [{fmt_gap(ci.low, binary)}, {fmt_gap(ci.high, binary)}] "
         f"({res.ci_method})"],
        ["test", res.method, res.reason],
        ["p-value", fmt_p(res.pvalue, 4), f"{res.alternative}; statistic {res.statistic:.4g}"],
    ]
    if res.b is not None:
        rows.append(["discordant items", f"b = {res.b}, c = {res.c}", "A only right / B only right"])
    if res.n_clusters:
        wild = res.method == "cluster_wild"
        rows.append(["clusters", f"{res.n_clusters}", f"design effect {res.design_effect:.3g} "
                     f"({res.design_effect_method}), t with {res.cluster_df:.3g} df"
                     + (" for N*" if wild else "")])
        rows.append(["SE cluster-robust", f"{scale * float(res.se_cluster or math.nan):.4g} {unit}",
                     "CR1: it studentises the bootstrap test above" if wild else
                     "the SE of the test and interval above"])
    rows += [
        ["SE paired / unpaired", f"{scale * res.se_paired:.4g} / {scale * res.se_unpaired:.4g} {unit}",
         ("IID; " if res.n_clusters else "")
         + ((f"φ = {res.phi:.2f}: " if math.isfinite(res.phi) else "")  # no "φ = nan": a constant model
            + f"pairing keeps {res.se_paired / res.se_unpaired:.0%} of the unpaired SE" if res.se_unpaired > 0
            else "")],
        ["N* for this gap", fmt_n_star(res.n_star), f"items to detect it at α = {res.alpha:g}, power {res.power:g} "
         f"({res.regime})"],
        ["q = N / N*", f"{res.q:.3g}", verdict],
        ["MDE", f"{fmt_gap(res.mde, binary, sign=False)} {unit}",
         f"smallest gap these {items_text(res.n)} detect with power {res.power:g}" if math.isfinite(res.mde)
         else f"no gap is detectable with power {res.power:g} at these {items_text(res.n)} (too few disagreements); "
              "N* above counts the items that would carry enough of them"],
    ]
    return TableView(f"Paired comparison on {res.n:,} items", ["", "value", "note"], rows)


# ---- rank ------------------------------------------------------------------------------------------------------

def ranks_view(view: Any, ranks: Any, *, n_items: int) -> TableView:
    """``llm-power rank``: every model's simultaneous rank interval (rows of the report's view)."""
    level = f"{100 * ranks.confidence_level:g}%"
    regimes = ", ".join(r.label for r in view.regimes)
    rows = [[str(m.rank), m.name, m.score, m.ranks] for m in view.models]
    how = (f"bootstrap of the {ranks.resampled}, {ranks.n_resamples:,} resamples" if ranks.method == "bootstrap"
           else "over the paired differences, normal limit" + (" over clusters" if ranks.resampled == "clusters"
                                                              else ""))
    return TableView(f"Ranks with {level} simultaneous coverage ({n_items:,} items)", ["#", "model", "score", "rank"],
                     rows, right_align=(0, 2, 3),
                     caption=f"Every model's true rank lies in its interval at once with probability {level} (max-t "
                             + how + f", critical value {ranks.critical_value:.3g}; Mogstad, Romano, Shaikh and "
                                     "Wilhelm 2024); "
                             f"a pair separates two ranks only when it is also resolved under every regime "
                             f"({regimes}), as in diagnose.")


def rank_intervals_view(ranks: Any, limit: int = 40) -> TableView:
    """A :class:`~llm_power.RankIntervalsResult` on its own (a notebook): each model's mean score, its
    simultaneous rank interval and whether it can be #1 (the first ``limit`` models).
    """
    level = f"{100 * ranks.confidence_level:g}%"
    best = set(map(str, ranks.best_set))
    rows = []
    for k, (name, mean) in enumerate(zip(ranks.models[:limit], ranks.means[:limit], strict=False)):
        lo, hi = int(ranks.rank_ci_low[k]), int(ranks.rank_ci_high[k])
        rows.append([str(k + 1), str(name), f"{float(mean):.4f}", str(lo) if lo == hi else f"{lo}–{hi}",
                     "yes" if str(name) in best else ""])
    more = len(ranks.models) - len(rows)
    how = (f"bootstrap of the {ranks.resampled}, {ranks.n_resamples:,} resamples" if ranks.method == "bootstrap"
           else "normal limit" + (" over clusters" if ranks.resampled == "clusters" else ""))
    return TableView(f"Ranks with {level} simultaneous coverage ({ranks.n_items:,} items)",
                     ["#", "model", "mean score", "rank", "can be #1"], rows, right_align=(0, 2, 3),
                     caption=(f"Every model's true rank lies in its interval at once with probability {level} "
                              f"(max-t, {how}, critical value {ranks.critical_value:.3g})."
                              + (f" … {more:,} more models: to_dict() has them all." if more > 0 else "")))


# ---- noise -----------------------------------------------------------------------------------------------------

def _noise_num(x: float, fmt: str = ".4f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, fmt)


def noise_units(rep: Any) -> tuple[Any, str]:
    """How ``noise`` shows a score: (format one number, the unit) -- 0/1 scores in points with 2
    decimals, graded ones in their units with 4 (a row fits 80 columns).
    """
    scale, fmt = (100.0, ".2f") if rep.binary else (1.0, ".4f")

    def num(x: float) -> str:
        return _noise_num(scale * x, fmt)

    return num, "points" if rep.binary else "score units"


def noise_views(rep: Any, *, runs_by: str) -> list[TableView]:
    """``llm-power noise``: the scores over items and runs, the adjacent gaps, flakiness and the most
    unstable items.
    """
    views: list[TableView] = []
    v = rep.variance
    level = f"{100 * v.confidence_level:g}%"
    num, unit = noise_units(rep)
    scale, fmt = (100.0, ".2f") if rep.binary else (1.0, ".4f")

    def sd_ci(k: int) -> str:
        return f"[{num(math.sqrt(v.var_run_ci[0][k]))}, {num(math.sqrt(v.var_run_ci[1][k]))}]"

    rows = [[m, f"{int(v.runs[k])}", num(v.mean[k]), num(v.se_items[k]), num(v.se[k]),
             num(math.sqrt(v.var_run[k])), sd_ci(k), f"{v.run_share[k]:.0%}"] for k, m in enumerate(v.models)]
    each = "" if runs_by == "run" else f"; a run is one {runs_by}"  # not "runs by run"
    views.append(TableView(f"Score over items and runs ({items_text(rep.n_items)}{each}; {unit})",
                ["model", "runs", "score", "SE items", "SE +runs", "run SD", f"{level} CI", "run share"], rows,
                right_align=(1, 2, 3, 4, 5, 6, 7),
                caption="SE items: the IID error of the run-averaged score; SE +runs adds the run-to-run variance "
                        "(crossed items x runs). run SD: of one run's score (its MLS interval); run share: of the "
                        "score's variance."))
    if v.pairs:
        prow = [[p["model_a"], p["model_b"], f"{scale * p['delta']:+{fmt}}", num(p["se_items"]),
                 num(p["se"]), f"{p['run_share']:.0%}", f"{p['rerun_removable_share']:.0%}"] for p in v.pairs]
        views.append(TableView("Adjacent gaps over items and runs",
                               ["model A", "model B", "gap", "SE items", "SE +runs", "run share", "reruns remove"],
                               prow,
                    right_align=(2, 3, 4, 5, 6),
                    caption="reruns remove: the share of the gap's variance infinitely many runs at these items "
                            "would remove (run shifts and item x run noise); the rest needs more items."))
    def pct(x: float | None) -> str:
        return "—" if x is None or not math.isfinite(x) else f"{100.0 * x:.1f}%"

    frow = [[f["model"], f"{f['unstable']:,}", f"{f['unstable_share']:.1%}", pct(f["flip_rate"]),
             num(f.get("best_possible", math.nan)), num(f.get("worst_possible", math.nan))]
            for f in rep.flakiness]
    views.append(TableView(f"Flakiness ({unit})",
                           ["model", "unstable items", "share", "flip rate", "best possible", "worst possible"], frow,
                right_align=(1, 2, 3, 4, 5),
                caption="unstable: the item's score differs between runs. flip rate: chance two runs disagree "
                        "(0/1 scores). best / worst possible: the score if every unstable item were right / "
                        "wrong (right in any / every run)."))
    if rep.flaky_items:
        irow = [[it["model"], it["item"], f"{it['right']}/{it['runs']}",
                 "" if it["ci"] is None else f"{100 * it['ci'][0]:.0f}–{100 * it['ci'][1]:.0f}%"]
                for it in rep.flaky_items]
        views.append(TableView("Most unstable items", ["model", "item", "runs right", f"{level} Wilson"], irow,
                               right_align=(2, 3)))
    return views


# ---- subset ----------------------------------------------------------------------------------------------------

def fmt_p_short(p: float) -> str:
    """A p-value of the subset tables: four decimals, "<0.0001" below, "n/a" for NaN."""
    return "<0.0001" if p < 1e-4 else f"{p:.4f}" if not math.isnan(p) else "n/a"


def subset_plan_view(plan: Any) -> TableView:
    """``llm-power subset plan``: the allocation of the items over the strata."""
    rows = [[a["stratum"], f"{a['items']:,}", f"{a['run']:,}", f"{a['sd']:.3f}"] for a in plan.allocation]
    return TableView(f"Plan: {plan.n:,} of {plan.n_items:,} items ({plan.allocation_method} allocation)",
                     ["stratum", "items", "run", "sd"], rows, right_align=(1, 2, 3))


def subset_estimate_view(out: dict[str, Any], *, confidence_level: float) -> TableView:
    """``llm-power subset estimate``: each model's full-benchmark score from the subset (0/1 scores in
    points, graded ones in their units).
    """
    level = f"{100 * confidence_level:g}%"
    binary = bool(out.get("binary"))
    scale, spec = (100.0, ".2f") if binary else (1.0, ".4f")

    def num(x: float) -> str:
        return format(scale * x, spec)

    rows = []
    for m in out["models"]:
        ci = m["ci"]
        rows.append([m["model"], num(m["estimate"]), f"{num(ci['low'])} – {num(ci['high'])}", num(m["se"]),
                     f"{num(m['plain_estimate'])} ({num(m['plain_se'])})", f"{m['variance_reduction']:.2f}x"])
    method = out["models"][0]["method"] if out["models"] else ""
    unit = "points" if binary else "score units"
    return TableView(f"Scores from {out['n']:,} of {items_text(out['n_items'])} ({method}; {unit})",
                     ["model", "score", f"{level} CI", "SE", "subset mean (SE)", "worth"], rows,
                     right_align=(1, 2, 3, 4, 5),
                     caption=("Intervals of the score on the population of questions the items stand for (as "
                              "compare and diagnose), " if out["target"] == "population" else
                              "Intervals of the score over exactly the benchmark's items, ")
                     + "valid for the plan's random draw of the items. worth: how many times more items the "
                       "estimate is worth than the plain subset mean (its variance reduction).")


def subset_gap_text(gap: dict[str, Any], binary: bool) -> str:
    """One gap and its interval, in points for 0/1 scores: "+13.20 [+9.00, +17.30]"."""
    ci = gap["ci"]
    return (f"{fmt_gap(gap['gap'], binary)} [{fmt_gap(ci['low'], binary)}, {fmt_gap(ci['high'], binary)}]"
            if binary else f"{gap['gap']:+.3f} [{ci['low']:+.3f}, {ci['high']:+.3f}]")


def subset_gap_variants(gaps: Sequence[dict[str, Any]], *, binary: bool = False) -> list[Any]:
    """``llm-power subset estimate``'s gaps, laid out four ways (whole names, then unique short forms of
    18, 14 and 10 characters): the terminal prints the widest that fits.
    """
    from .._core.format import unique_short_names

    names = sorted({g["model"] for g in gaps} | {g["against"] for g in gaps})
    variants = []
    for width in (None, 18, 14, 10):
        short = dict(zip(names, names if width is None else unique_short_names(names, width), strict=True))
        rows = []
        for g in gaps:
            ci = g["ci"]
            verdict = ("ahead" if g["gap"] > 0 else "behind") if g["decided"] else "not decided"
            gap, lo, hi = ((fmt_gap(g["gap"], True), fmt_gap(ci["low"], True), fmt_gap(ci["high"], True)) if binary
                           else (f"{g['gap']:+.3f}", f"{ci['low']:+.3f}", f"{ci['high']:+.3f}"))
            rows.append([short[g["model"]], short[g["against"]], gap, f"[{lo}, {hi}]", fmt_p_short(g["pvalue"]),
                         verdict])
        variants.append((["model", "against", "gap", "interval", "p", "verdict"], rows, (0, 1, 5)))
    return variants


# ---- ppi -------------------------------------------------------------------------------------------------------

def _ppi_fmt(value: float, binary: bool) -> str:
    return f"{100 * value:.2f}%" if binary else f"{value:.4g}"


def _ppi_rows(out: dict[str, Any]) -> list[list[str]]:
    b = out["binary"]
    rows = [["PPI++ (judge + labels)", _ppi_fmt(out["estimate"], b),
             f"{_ppi_fmt(out['ci_low'], b)} – {_ppi_fmt(out['ci_high'], b)}", f"{out['lam']:.2f}",
             f"{out['effective_labels']:,.0f}"],
            ["labels only", _ppi_fmt(out["classical_estimate"], b),
             f"{_ppi_fmt(out['classical_ci_low'], b)} – {_ppi_fmt(out['classical_ci_high'], b)}", "0",
             f"{out['n_labeled']:,}"]]
    return rows


_PPI_HEADER = ["estimate of the human score", "value", "interval", "λ", "worth labels"]


def ppi_caption(out: dict[str, Any]) -> str:
    """The sentence under the PPI table: the intervals, λ, and what the judge's means say."""
    level = f"{100 * out['confidence_level']:g}%"
    return (f"{level} Student-t intervals on {out['n_labeled'] - 1} degrees of freedom. λ: the judge's weight "
            "(power-tuned: never worse than the labels alone); worth labels: how many labels alone would give "
            f"this precision. The judge's mean is {_ppi_fmt(out['judge_mean_unlabeled'], out['binary'])} on the "
            f"unlabelled items and {_ppi_fmt(out['judge_mean_labeled'], out['binary'])} on the labelled ones "
            f"(its bias is measured there); correlation with the labels {out['correlation']:.2f}.")


def ppi_markdown(out: dict[str, Any]) -> str:
    """The PPI report as GitHub-flavoured Markdown."""
    from .markdown import md_prose

    lines = ["# Prediction-powered inference", "",
             md_prose(f"{out['n_labeled']:,} human-labelled items, {out['n_unlabeled']:,} judged only."), "",
             "| " + " | ".join(md_prose(h) for h in _PPI_HEADER) + " |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += ["| " + " | ".join(md_prose(c) for c in row) + " |" for row in _ppi_rows(out)]
    lines += ["", md_prose(ppi_caption(out))]
    if "plan" in out:
        lines += ["", md_prose(ppi_plan_line(out))]
    return "\n".join(lines) + "\n"


def ppi_plan_line(out: dict[str, Any]) -> str:
    """The labels a target half-width needs, with this judge and without it."""
    p = out["plan"]
    h = f"±{100 * p['half_width']:g} points" if out["binary"] else f"±{p['half_width']:g}"
    return (f"plan: {p['labels_needed']:,} human labels for {h} with this judge (correlation {p['correlation']:.2f}, "
            f"label sd {p['sd']:.3g}); {p['labels_needed_without_judge']:,} without it.")


def ppi_view(out: dict[str, Any]) -> TableView:
    """``llm-power ppi``: the human score from the judge and the labels, against the labels alone."""
    return TableView(f"{out['n_labeled']:,} human-labelled items, {out['n_unlabeled']:,} judged only", _PPI_HEADER,
                     _ppi_rows(out), right_align=(1, 2, 3, 4))


# ---- one model ---------------------------------------------------------------------------------------------------

def _one_model_cells(summary: dict[str, Any]) -> tuple[str, str, str]:
    """(score, interval, half-width) as shown, in points for 0/1 scores; the same in every medium."""
    binary, lo, hi = summary["binary"], summary["low"], summary["high"]
    interval = f"{100 * lo:.1f} – {100 * hi:.1f}%" if binary else f"{lo:.4g} – {hi:.4g}"
    mean = summary["mean"]  # the reach below and above the score: "−15.2 / +12.6" when asymmetric (Wilson)
    half = (fmt_margins(mean, lo, hi, scale=100.0) + " points" if binary
            else fmt_margins(mean, lo, hi, decimals=max(0, 2 - math.floor(math.log10(abs(hi - lo) / 2)))
                             if hi > lo else 3))
    return fmt_score(summary["mean"], binary), interval, half


def one_model_markdown(summary: dict[str, Any]) -> str:
    """The one-model report as GitHub-flavoured Markdown (the name escaped)."""
    from .markdown import md_prose, md_text

    score, interval, half = _one_model_cells(summary)
    level = f"{100 * summary['confidence_level']:g}%"
    return (f"## One model: {md_text(summary['model'])}\n\n"
            + md_prose(f"Nothing to compare: its score on {summary['n']:,} items and {level} interval.") + "\n\n"
            f"| score | {level} interval | ± | method |\n| ---: | ---: | ---: | --- |\n"
            f"| {score} | {interval} | {half} | {md_prose(summary['method'])} |\n")


def one_model_html(summary: dict[str, Any]) -> str:
    """The one-model report as a self-contained HTML page (no script; the name escaped)."""
    from html import escape

    score, interval, half = _one_model_cells(summary)
    level = f"{100 * summary['confidence_level']:g}%"
    name = escape(str(summary["model"]))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
            "content=\"width=device-width, initial-scale=1\"><title>One model: " + name + "</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1f2328}"
            "table{border-collapse:collapse}th,td{padding:.3rem .8rem;border-bottom:1px solid #d0d7de;"
            "text-align:right}td:last-child,th:last-child{text-align:left}</style></head><body>"
            f"<h1>One model: {name}</h1><p>Nothing to compare: its score on {summary['n']:,} items and its "
            f"{level} interval. Add a second model's results to compare them.</p><table><thead><tr><th>score</th>"
            f"<th>{level} interval</th><th>±</th><th>method</th></tr></thead><tbody><tr><td>{escape(score)}</td>"
            f"<td>{escape(interval)}</td><td>{escape(half)}</td><td>{escape(summary['method'])}</td></tr></tbody>"
            "</table></body></html>\n")


def one_model_view(summary: dict[str, Any]) -> TableView:
    """``llm-power diagnose`` with one model: its score and interval (the name is in the sentence above the
    table: a long one would squeeze the numbers).
    """
    binary, level = summary["binary"], summary["confidence_level"]
    score, interval, half = _one_model_cells(summary)
    return TableView(f"{summary['n']:,} items",
                     ["score" if binary else "mean score", f"{100 * level:g}% interval", "±", "method"],
                     [[score, interval, half, summary["method"]]], right_align=(0, 1, 2))


# ---- judges ------------------------------------------------------------------------------------------------------

def _judge_ci(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "—"
    return f"[{low:.2f}, {high:.2f}]"


def _judge_f(value: Any, spec: str = ".2f") -> str:
    return "—" if value is None or (isinstance(value, float) and not math.isfinite(value)) else format(value, spec)


#: humans listed one per row in the judges table; more are one row (the JSON lists every one)
MAX_HUMAN_ROWS = 12


def _judge_tables(out: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, header, rows, caption) of every table, the same in the terminal and in Markdown."""
    level = f"{100 * out['confidence_level']:g}%"
    judges = [j for j in out["judges"] if not j["human"]]
    humans = [j for j in out["judges"] if j["human"]]
    rows = [[j["judge"], f"{j['verdicts']:,}", f"{j['items']:,}", "judge"] for j in judges]
    if len(humans) > MAX_HUMAN_ROWS:  # a crowd is one row: 124 workers one per line say nothing more
        least, most = min(j["items"] for j in humans), max(j["items"] for j in humans)
        rows.append([f"{len(humans):,} humans", f"{sum(j['verdicts'] for j in humans):,}",
                     f"{least:,}–{most:,} each" if least != most else f"{least:,} each", "human"])
    else:
        rows += [[j["judge"], f"{j['verdicts']:,}", f"{j['items']:,}", "human"] for j in humans]
    tables = [("Judges", ["judge", "verdicts", "items", "kind"], rows,
               f"items: {out['item_column']}; {out['n_battles']:,} verdicts"
               + (f"; the humans are {', '.join(str(j['judge']) for j in humans[:3])}, … (every one in --json)"
                  if len(humans) > MAX_HUMAN_ROWS else "") + ".")]
    agreement_header = ["n", "agree", "κ", f"κ {level}", "α", f"α {level}"]

    def numbers(r: dict[str, Any]) -> list[str]:
        return [f"{r['n']:,}", _judge_f(r["agreement"]), _judge_f(r["kappa"]), _judge_ci(*r["kappa_ci"]),
                _judge_f(r["alpha"]), _judge_ci(*r["alpha_ci"])]

    if out["vs_human_majority"]:
        rows = [[r["judge"], *numbers(r)] if r.get("n") else [r["judge"], "0", "—", "—", "—", "—", "—"]
                for r in out["vs_human_majority"]]
        tables.append((f"Each judge against the majority of {len(out['humans'])} humans", ["judge", *agreement_header],
                       rows, "agree: share of items with the same winner; κ: Cohen's kappa; α: Krippendorff's "
                             "alpha (nominal); intervals: bootstrap over items. The majority is the strict "
                             "plurality of the humans' winners (no strict plurality: a tie)."))
    if out["pairwise"]:
        tables.append(("Agreement between judges, on the items both labelled",
                       ["judge A", "judge B", *agreement_header],
                       [[r["judge_a"], r["judge_b"], *numbers(r)] for r in out["pairwise"]],
                       "Same columns as above; pairs with fewer than 2 shared items are left out."))
    if out.get("swap"):
        tables.append(("Position swap: each pair judged in both orders", ["judge", "n", "flips", f"{level} CI",
                                                                          "1st wins", "p position"],
                       [[str(r["judge"]), f"{int(r['n']):,}", f"{100 * r['rate']:.1f}%",
                         f"{100 * r['ci_low']:.1f}–{100 * r['ci_high']:.1f}%",
                         "—" if not math.isfinite(r["first_share"]) else f"{100 * r['first_share']:.1f}%",
                         f"{r['pvalue_position']:.2g}"] for r in out["swap"]],
                       "flips: the verdict changes when the answers swap places (Wilson interval); 1st wins: of "
                       "the flips that follow the position, the share won by the answer shown first; p position: "
                       "exact binomial test of 50% (no position bias)."))
    if out.get("length_bias"):
        lb = out["length_bias"]
        tables.append(("Length bias", ["longer answer wins", "p", "per doubling of length (log-odds)", "p"],
                       [[f"{100 * lb['longer_win_rate']:.1f}%", f"{lb['pvalue_longer']:.2g}",
                         f"{lb['coefficient']:+.3f}", f"{lb['pvalue']:.2g}"]],
                       "The log-odds effect holds the models fixed (Bradley–Terry with a length covariate)."))
    return tables


def judges_markdown(out: dict[str, Any]) -> str:
    """The audit as GitHub-flavoured Markdown (judge names escaped)."""
    from .markdown import md_prose, md_text

    lines = ["# Judge audit", ""]
    for title, header, rows, caption in _judge_tables(out):
        lines += [f"## {md_prose(title)}", "", "| " + " | ".join(md_prose(h) for h in header) + " |",
                  "| " + " | ".join("---" for _ in header) + " |"]
        lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
        lines += ["", md_prose(caption), ""]
    return "\n".join(lines)


def judges_views(out: dict[str, Any]) -> list[TableView]:
    """``llm-power judges``: the judges, their agreement with the human majority and each other, position
    swaps and length bias (each view's caption is printed under it as a sentence).
    """
    names = ("judge", "judge A", "judge B")
    return [TableView(title, header, rows, caption=caption,
                      right_align=tuple(i for i, h in enumerate(header) if h not in (*names, "kind")),
                      wrap=tuple(i for i, h in enumerate(header) if h in names))  # names fold, intervals never
            for title, header, rows, caption in _judge_tables(out)]


# ---- gate (pull-request comments) ----------------------------------------------------------------------------

def gate_markdown(res: Any, names: Sequence[str], *, outcome: Any = None, flips: Any = None,
                  max_flips: int = 20) -> str:
    """A pull-request comment: the verdict, the numbers and what they mean (names escaped); with
    ``outcome`` (a :class:`~llm_power.gating.GateOutcome`) what the INCONCLUSIVE policy did, with
    ``flips`` (a :class:`~llm_power.gating.FlipTable`) the items that flipped, the first ``max_flips``
    of each side listed.
    """
    from .markdown import md_text

    base, cand = md_text(names[0]), md_text(names[1])
    scale, unit = (100.0, " pts") if res.binary else (1.0, "")
    level = f"{1 - 2 * res.alpha:.0%}"
    more = res.outlook()
    meaning = {"PASS": "the candidate is not worse than the baseline by more than the margin.",
               "FAIL": "the candidate is worse than the baseline by more than the margin.",
               "INCONCLUSIVE": f"the benchmark cannot tell yet: {more}."}[res.verdict]
    rows = [("gap (candidate - baseline)", f"{scale * res.delta:+.2f}{unit}"),
            (f"{level}{' anytime-valid' if res.anytime else ''} interval",
             f"[{scale * res.ci_low:+.2f}, {scale * res.ci_high:+.2f}]{unit}"),
            ("margin", f"{scale * res.margin:g}{unit}"), ("items", f"{res.n:,}"), ("test", res.test),
            ("one-sided p: non-inferiority / inferiority",
             f"{res.pvalue_noninferiority:.3g} / {res.pvalue_inferiority:.3g}")]
    if res.n_clusters:
        rows.append(("clusters, design effect", f"{res.n_clusters}, {res.design_effect:.2f}"))
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return (f"### llm-power gate: **{res.verdict}**\n\n{cand} vs {base}: {meaning}\n\n| | |\n| --- | --- |\n{table}\n\n"
            f"<sub>PASS needs the interval's lower bound above -margin, FAIL its upper bound below it (each a "
            f"one-sided test at alpha = {res.alpha:g}). Generated by llm-power.</sub>\n"
            + _gate_extras_markdown(outcome, flips, max_flips))


#: an item id longer than this is cut in the comment (the JSON keeps it whole)
MAX_ID_CHARS = 80


def _ids_markdown(ids: Sequence[str], total: int, max_flips: int) -> str:
    from .markdown import md_text

    shown = [md_text(i if len(i) <= MAX_ID_CHARS else f"{i[:MAX_ID_CHARS - 1]}…") for i in ids[:max_flips]]
    rest = total - len(shown)
    return ", ".join(shown) + (f" and {rest:,} more" if rest > 0 else "") if shown else ("—" if not total else
                                                                                         f"{total:,} not listed")


def _gate_extras_markdown(outcome: Any = None, flips: Any = None, max_flips: int = 20) -> str:
    """The comment's tail: what the INCONCLUSIVE policy did to the check, and the items that flipped."""
    parts = []
    if outcome is not None and outcome.verdict == "INCONCLUSIVE":
        did = {"block": "the check fails (exit 3)", "warn": "the check passes with a warning (neutral)",
               "pass": "the check passes"}[outcome.inconclusive]
        parts.append(f"\nPolicy for INCONCLUSIVE: **{outcome.inconclusive}** -- {did}.\n")
    if flips is not None:
        limit = max(int(max_flips), 0)
        rows = [("correct in baseline, wrong in candidate", flips.n_regressed, flips.regressed),
                ("wrong in baseline, correct in candidate", flips.n_fixed, flips.fixed)]
        table = "\n".join(f"| {label} | {count:,} | {_ids_markdown(ids, count, limit)} |" for label, count, ids in rows)
        parts.append(f"\n#### Items that flipped ({flips.n_regressed + flips.n_fixed:,} of {flips.n:,})\n\n"
                     f"| | items | ids (first {limit:,}) |\n| --- | ---: | --- |\n{table}\n")
    return "".join(parts)


def gate_tasks_markdown(res: Any, line: str, *, outcome: Any = None, flips: Any = None, max_flips: int = 20) -> str:
    """``llm-power gate --per-task`` as a pull-request comment: the verdict line and one row per task (and
    the tail of :func:`gate_markdown`).
    """
    from .markdown import md_text

    rows = "\n".join(f"| {md_text(t)} | {r.verdict} | {100 * r.delta:+.2f} | [{100 * r.ci_low:+.2f}, "
                     f"{100 * r.ci_high:+.2f}] | {r.n:,} | {res.pvalue_inferiority_holm[t]:.3g} |"
                     for t, r in res.tasks.items())
    return (f"### llm-power gate: **{res.verdict}**\n\n{md_text(line)}\n\n| task | verdict | gap | interval | "
            f"items | inferiority p (Holm) |\n| --- | --- | --- | --- | --- | --- |\n{rows}\n"
            + _gate_extras_markdown(outcome, flips, max_flips))

