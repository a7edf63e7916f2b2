"""Diagnosis -> ReportView: everything a renderer shows, computed (and worded) once.

The terminal, Markdown and HTML renderers format a :class:`ReportView`; none of them looks into
a Diagnosis for numbers or decides on a column, a label, a unit or a sentence. The column labels
(:meth:`ReportView.labels`) are the same in every medium and in the JSON report. Names stay raw
here (they are untrusted text): each renderer escapes them for its own medium.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.format import fmt_gap, fmt_margins, fmt_n_star, fmt_p, fmt_score, table_decimals
from .._core.options import CLUSTER_METHOD_LABELS
from ..rankings import FragilityResult, RankReport
from ..resolution import Diagnosis

__all__ = ["NextStep", "PairRow", "RankingView", "ReportView", "build_view", "fmt_share", "in_points"]

#: how a verdict is explained next to every pairs table
VERDICT_NOTE = ("Resolved (✓): q = N/N* ≥ 1 and the pair's test rejects at α; otherwise (✗) the benchmark is too "
                "small to tell, which does not mean the models are equal.")


@dataclass(frozen=True)
class ModelRow:
    """One model of the leaderboard table."""

    rank: int
    name: str
    score: str
    interval: str
    half: str
    ranks: str = ""  # the simultaneous rank interval, "1" or "2–4" ("" without the rankings)


@dataclass(frozen=True)
class PairRow:
    """One pair of the pairs table: formatted cells by column key; verdicts stay booleans (each
    medium marks them).
    """

    cells: dict[str, str]
    flags: dict[str, bool]

    @property
    def model_a(self) -> str:
        """Model A's full (raw) name."""
        return self.cells["model_a"]

    @property
    def model_b(self) -> str:
        """Model B's full (raw) name."""
        return self.cells["model_b"]


@dataclass(frozen=True)
class NextStep:
    """The closest unresolved gap of one regime and the items that would resolve it."""

    regime: str  # "" for IID, else the regime's label
    model_a: str
    model_b: str
    gap: str  # formatted, with its unit
    n_star: str
    more: int
    clustered: bool
    binary: bool = True
    runs_needed: float | None = None  # the run regime: runs per model that would resolve it at these items
    runs_now: str = ""  # "5" or "3-10": the runs per model now

    def text(self, esc: Callable[[str], str] = str, prose: Callable[[str], str] = str) -> str:
        """The step as one sentence: ``esc`` escapes the (untrusted) model names for a medium,
        ``prose`` the package's own words.
        """
        where = f" ({self.regime})" if self.regime else ""
        if self.runs_needed is not None:
            return self._runs_text(esc, prose)
        like = ", in new clusters like these" if self.clustered else " like these"
        same = "same disagreement rate" if self.binary else "same spread of the paired differences"
        items = "item" if self.more == 1 else "items"
        return (prose(f"the closest unresolved gap{where}, ") + esc(self.model_a) + prose(" vs ")
                + esc(self.model_b) + prose(f" ({self.gap}), needs N* = {self.n_star} items: about {self.more:,} "
                                            f"more {items}{like} (same gap, {same})."))


    def _runs_text(self, esc: Callable[[str], str], prose: Callable[[str], str]) -> str:
        """The run regime's step: more runs, or more items, or both."""
        head = (prose("the closest unresolved gap under run noise, ") + esc(self.model_a) + prose(" vs ")
                + esc(self.model_b) + prose(f" ({self.gap}, {self.runs_now} runs per model), "))
        runs = self.runs_needed
        finite = runs is not None and math.isfinite(runs)
        if self.n_star == "∞":
            tail = "is within run-to-run noise: no number of items resolves it at these runs; "
            tail += f"about {runs:,.0f} runs per model would, at these items." if finite else (
                "more items and more runs are both needed.")
        else:
            tail = f"needs N* = {self.n_star} items at these runs"
            tail += f", or about {runs:,.0f} runs per model at these items." if finite else (
                "; more runs alone cannot resolve it at these items.")
        return head + prose(tail)


@dataclass(frozen=True)
class RegimeView:
    """One verdict regime as shown: its key, column label, unresolved count and field names."""

    key: str
    label: str  # "IID", "Holm", "cluster", "anytime"
    unresolved: int
    q_field: str
    n_star_field: str
    resolved_field: str


@dataclass(frozen=True)
class RankingView:
    """The rankings section in words: who can be #1, the winner corrected for selection, fragility.
    Names stay raw; :meth:`lines` escapes them for a medium.
    """

    level: str  # "95%"
    n_models: int
    best_set: list[str]
    top3: list[str]
    winner: str
    score: str  # the winner's naive score, formatted with its unit
    naive_ci: str
    corrected: str
    hybrid_ci: str
    challenger: str
    flip_top: str  # "1,246 of 12,032 items (10%)" or "" when no removal can
    fragile_top: bool
    fragile_pairs: int
    fragile_share: str
    method: str = ""  # how the critical value was found, in words

    def lines(self, esc: Callable[[str], str] = str, prose: Callable[[str], str] = str) -> list[str]:
        """The section as sentences: ``esc`` escapes the (untrusted) names, ``prose`` the package's words."""
        names = ", ".join(esc(m) for m in self.best_set)
        one = len(self.best_set) == 1
        out = [prose("#1 is ") + names + prose(f" ({self.level} simultaneous rank intervals over "
                                               f"{self.n_models} models)") if one else
               prose("#1 is one of: ") + names + prose(f" ({self.level} simultaneous rank intervals over "
                                                       f"{self.n_models} models).")]
        if one:
            out[0] += prose(".")
        if self.top3 and len(self.top3) > 3:
            out.append(prose("The top 3 are among: ") + ", ".join(esc(m) for m in self.top3) + prose("."))
        if not self.corrected:  # no variance (every item the same): nothing to correct, and no interval
            out.append(esc(self.winner) + prose(f" scores {self.score}, the same on every item: the selection "
                                                "correction has no variance to work with (its interval is in the "
                                                "models table)."))
        elif self.corrected == self.score:  # the correction changes nothing shown: say so, not "corrected: X"
            out.append(esc(self.winner) + prose(f" scores {self.score}; being picked as the best by the same data "
                                                f"does not move the estimate (its lead is clear; {self.level} "
                                                f"interval corrected for the selection: {self.hybrid_ci})."))
        else:
            out.append(esc(self.winner) + prose(f" scores {self.score} because the same data picked it as the best; "
                                                f"corrected for that selection: {self.corrected} (hybrid {self.level} "
                                                f"interval {self.hybrid_ci})."))
        if self.flip_top:
            out.append(prose(f"Removing {self.flip_top} lets ") + esc(self.challenger)
                       + prose(" tie or overtake #1" + (f": fragile (at most {self.fragile_share} of the items)."
                                                        if self.fragile_top else ".")))
        elif self.challenger:
            out.append(prose("No removal of items lets another model tie or overtake #1."))
        if self.fragile_pairs:
            out.append(prose(f"{self.fragile_pairs} shown gap{'s' if self.fragile_pairs != 1 else ''} "
                             f"flip{'' if self.fragile_pairs != 1 else 's'} by removing at most {self.fragile_share} "
                             "of the items (fragile, even where resolved)."))
        return out


@dataclass(frozen=True)
class ReportView:
    """What every renderer shows."""

    n: int
    n_models: int
    n_pairs: int
    pairs_kind: str
    binary: bool
    alpha: str
    power: str
    level: str
    unit: str  # "pts" or "score"
    unit_long: str  # "points" or "score units"
    interval_name: str  # "Wilson" or "t"
    score_word: str  # "score" or "mean score"
    models: list[ModelRow]
    regimes: list[RegimeView]  # every regime computed, IID first, in the registry's order
    strictest: RegimeView  # the headline regime: the strictest computed (Diagnosis.headline)
    pairs: list[PairRow]
    ties_regime: str
    ties: list[list[str]]
    robustness: str | None
    sentences: list[str]  # the verdict, one plain-language line per regime (no untrusted text)
    steps: list[NextStep]  # what to do next: items that would resolve the closest unresolved gap
    has_cluster_p: bool
    has_run_p: bool = False  # the run regime's own p-value (items and runs)
    verdict_note: str = VERDICT_NOTE
    settings: dict[str, object] = field(default_factory=dict)
    ranking: RankingView | None = None  # the rankings section (None: not computed)
    has_flip: bool = False  # the pairs carry the items that flip them

    settled: str = ""  # when no more items would resolve a gap: why (what the report says instead of a step)

    @property
    def next_steps(self) -> list[str]:
        """The next steps as plain text (names raw: escape the whole line for a terminal); when no more items
        of the same kind would resolve a displayed gap, the sentence that says why.
        """
        return [step.text() for step in self.steps] or ([self.settled] if self.settled else [])

    @property
    def pairs_phrase(self) -> str:
        """How many pairs of which kind, in words: "9 adjacent pairs", "all 406 pairs", "1 adjacent pair"."""
        if self.pairs_kind == "all":
            return f"all {self.n_pairs:,} {self.pairs_word}" if self.n_pairs != 1 else "the 1 pair"
        return f"{self.n_pairs:,} {self.pairs_kind} {self.pairs_word}"

    @property
    def pairs_word(self) -> str:
        """The noun for the pairs: "pair" or "pairs", agreeing with their number."""
        return "pair" if self.n_pairs == 1 else "pairs"

    def labels(self) -> dict[str, str]:
        """Column label of every pair field shown anywhere (the JSON report carries this map)."""
        iid = " IID" if len(self.regimes) > 1 else ""  # beside other regimes' verdicts, the IID numbers say so
        labels = {"pair": "#", "rank_a": "A", "rank_b": "B", "model_a": "model A", "model_b": "model B",
                  "delta": f"gap ({self.unit})",
                  "ci": f"{self.level} CI{iid}", "pvalue": f"p{iid}", "pvalue_cluster": "p cluster",
                  "pvalue_run": "p runs", "flip": "items to flip"}
        for r in self.regimes:
            suffix = "" if r.key == "iid" else f" {r.label}"
            labels[r.n_star_field] = f"N*{suffix}"
            labels[r.q_field] = f"q{suffix}"
            labels[r.resolved_field] = r.label
        return labels

    def columns(self, *, wide: bool = True, ci: bool = False, optional: Sequence[str] = ()) -> list[str]:
        """Column keys of the pairs table.

        ``wide``: every number (N*, q and verdict per regime, the cluster p). Compact (verdict
        first): the gap, its p, one verdict per regime, and q of the strictest regime, plus the
        ``optional`` keys (e.g. the strictest regime's N*) a renderer has room for.
        """
        keys = ["pair", "model_a", "model_b", "delta"] + (["ci"] if ci else []) + ["pvalue"]
        if wide:
            keys += ["pvalue_cluster"] if self.has_cluster_p else []
            keys += ["pvalue_run"] if self.has_run_p else []
            for r in self.regimes:
                keys += [r.n_star_field, r.q_field, r.resolved_field]
            return keys + (["flip"] if self.has_flip else [])
        keys += [r.resolved_field for r in self.regimes] + [self.strictest.q_field]
        return keys + [k for k in optional if k not in keys]

    def header(self, keys: Sequence[str]) -> list[str]:
        """The labels of ``keys``."""
        labels = self.labels()
        return [labels[k] for k in keys]

    @staticmethod
    def cells(row: PairRow, keys: Sequence[str], mark: Callable[[bool], str],
              names: dict[str, str] | None = None) -> list[str]:
        """Cells of one pair for ``keys``; ``mark`` renders a verdict, ``names`` maps a model name to
        the form shown (short unique names in narrow tables).
        """
        out = []
        for key in keys:
            if key in row.flags:
                out.append(mark(row.flags[key]))
            elif key in ("model_a", "model_b") and names is not None:
                out.append(names[row.cells[key]])
            else:
                out.append(row.cells[key])
        return out


def _regime_views(diag: Diagnosis) -> list[RegimeView]:
    return [RegimeView(r.key, r.label(diag.settings), int(diag.n_unresolved[r.key]), r.q_field, r.n_star_field,
                       r.resolved_field) for r in diag.regimes]


def _sentences(diag: Diagnosis, regimes: list[RegimeView], cluster_name: str) -> list[str]:
    """The verdict in words, one line per regime, the headline first: it names its regime and why it is
    the headline (the strictest computed, the rule of every command: ``Diagnosis.headline``).
    """
    s, m = diag.settings, len(diag.columns["delta"]) if diag.columns else 0
    kind = "adjacent gap" if s.get("pairs") == "adjacent" else "gap between all pairs"
    kinds = kind.replace("gap", "gaps") if m != 1 else kind
    entries = {r.key: r for r in diag.regimes}
    headline = str(s.get("headline", "iid"))

    def tail(key: str) -> str:
        if key == "iid":
            return "if the items are independent."
        return str(entries[key].sentence_tail(s, m, cluster_name))

    def full(view: RegimeView) -> str:
        u = view.unresolved
        if u == 0:
            every = f"All {m:,} {kinds} are" if m > 1 else f"The {kind} is"
            return f"{every} resolved by this benchmark ({diag.n:,} items) {tail(view.key)}"
        return (f"{u:,} of {m:,} {kinds} {'are' if u != 1 else 'is'} too small for this benchmark ({diag.n:,} items) "
                f"to resolve {tail(view.key)}")

    def other(view: RegimeView) -> str:  # after the headline: the same subject, said in full
        u = view.unresolved
        if u == 0:
            return f"{'All ' + f'{m:,} are' if m > 1 else 'It is'} resolved {tail(view.key)}"
        return f"{u:,} of {m:,} {'are' if u != 1 else 'is'} too small to resolve {tail(view.key)}"

    head = next(r for r in regimes if r.key == headline)
    why = "the only regime computed" if len(regimes) == 1 else f"the strictest of the {len(regimes)} regimes computed"
    return [f"Headline ({head.label}, {why}): {full(head)}"] + [other(r) for r in regimes if r.key != headline]


def _runs_span(settings: dict[str, Any]) -> str:
    """The runs per model: "5" or "5-10" ("" without runs), as the run regime wrote it."""
    return str(settings.get("runs_span", ""))


def _settled(diag: Diagnosis, regimes: list[RegimeView]) -> str:
    """Why no step proposes more items: every gap resolved, or the unresolved ones cannot be resolved by more
    items like these (N* infinite or undefined), or their benchmark is big enough but the test does not
    reject -- never "no gap is too small" beside an unresolved one.
    """
    cols = diag.columns
    open_any = np.zeros(len(cols["delta"]) if cols else 0, dtype=bool)
    infinite = undefined = big = 0
    for r in regimes:
        flags = ~np.asarray(cols[r.resolved_field], dtype=bool)
        open_any |= flags
        n_star = np.asarray(cols[r.n_star_field], dtype=float)[flags]
        infinite += int(np.sum(np.isinf(n_star)))
        undefined += int(np.sum(np.isnan(n_star)))
        big += int(np.sum(np.isfinite(n_star) & (n_star <= diag.n)))
    if not open_any.any():
        computed = {r.key for r in regimes}
        more = [flag for key, flag in (("corrected", "--correction holm"), ("cluster", "--cluster FIELD"),
                                       ("anytime", "--anytime")) if key not in computed]
        return "every displayed gap is resolved" + (f"; stress the verdict with {', '.join(more)}" if more else "")
    why = []
    if infinite:
        why.append("N* = ∞ (no gap in the tested direction, or noise that more items do not remove): more items "
                   "like these cannot resolve it")
    if undefined:
        why.append("the differences have no variance (N* undefined)")
    if big:
        why.append("the benchmark is big enough for the gap (N* ≤ N) but its test does not reject")
    return "no unresolved gap would be resolved by more items like these: " + "; ".join(why) + "."


def _next_steps(diag: Diagnosis, regimes: list[RegimeView], strictest: RegimeView,
                decimals: int | None = None) -> list[NextStep]:
    """How many items would resolve the closest unresolved gap (IID and the strictest regime)."""
    cols, binary, out = diag.columns, in_points(diag.settings), []
    names = list(diag.models)
    runs_regime = [r for r in regimes if r.key == "runs"]
    for r in dict.fromkeys([regimes[0], strictest, *runs_regime]):
        if r.key == "runs":
            out += _runs_step(diag, r, decimals)
            continue
        q = np.asarray(cols[r.q_field], dtype=float)
        n_star = np.asarray(cols[r.n_star_field], dtype=float)
        # unresolved for want of items: N* (rounded up) above the items there are, i.e. q < 1
        open_ = ~np.asarray(cols[r.resolved_field], dtype=bool) & (n_star > diag.n) & np.isfinite(n_star)
        if not open_.any():
            continue
        k = int(np.flatnonzero(open_)[np.argmax(q[open_])])
        out.append(NextStep(
            regime="" if r.key == "iid" else r.label, model_a=names[int(cols["rank_a"][k]) - 1],
            model_b=names[int(cols["rank_b"][k]) - 1],
            gap=f"{fmt_gap(cols['delta'][k], binary, decimals=decimals)} {'points' if binary else 'score units'}",
            n_star=fmt_n_star(n_star[k]), more=max(math.ceil(n_star[k]) - diag.n, 1), clustered=r.key == "cluster",
            binary=binary))
    return out


def _runs_step(diag: Diagnosis, r: RegimeView, decimals: int | None) -> list[NextStep]:
    """The run regime's next step: its unresolved pair closest to resolved (by q_run), with the runs
    per model that would resolve it at the current items.
    """
    cols, binary, names = diag.columns, in_points(diag.settings), list(diag.models)
    q = np.asarray(cols[r.q_field], dtype=float)
    open_ = ~np.asarray(cols[r.resolved_field], dtype=bool) & np.isfinite(q) & (np.asarray(cols["delta"]) != 0)
    if not open_.any():
        return []
    idx = np.flatnonzero(open_)
    needed = np.asarray(cols["runs_needed"], dtype=float)
    key = np.where(np.isfinite(needed[idx]), -needed[idx], -np.inf)  # fewest runs first, then the highest q
    k = int(idx[np.lexsort((-q[idx], -key))][0])
    now = _runs_span(diag.settings)
    unit = "points" if binary else "score units"
    return [NextStep(regime=r.label, model_a=names[int(cols["rank_a"][k]) - 1],
                     model_b=names[int(cols["rank_b"][k]) - 1],
                     gap=f"{fmt_gap(cols['delta'][k], binary, decimals=decimals)} {unit}",
                     n_star=fmt_n_star(np.asarray(cols[r.n_star_field], dtype=float)[k]), more=0, clustered=False,
                     binary=binary, runs_needed=float(needed[k]), runs_now=now)]


def _pair_rows(diag: Diagnosis, regimes: list[RegimeView], level_ci: bool, limit: int | None,
               decimals: int | None = None, flips: FragilityResult | None = None) -> list[PairRow]:
    cols, binary = diag.columns, in_points(diag.settings)
    names = list(diag.models)
    clustered = "pvalue_cluster" in cols
    rows = []
    size = len(cols["delta"]) if cols else 0
    for k in range(size if limit is None else min(limit, size)):
        ci = ""
        if level_ci and "ci_low" in cols and np.isfinite(cols["ci_low"][k]):
            ci = (f"[{fmt_gap(cols['ci_low'][k], binary, decimals=decimals)}, "
                  f"{fmt_gap(cols['ci_high'][k], binary, decimals=decimals)}]")
        cells = {"pair": f"{k + 1}", "rank_a": str(int(cols["rank_a"][k])), "rank_b": str(int(cols["rank_b"][k])),
                 "model_a": names[int(cols["rank_a"][k]) - 1],
                 "model_b": names[int(cols["rank_b"][k]) - 1],
                 "delta": fmt_gap(cols["delta"][k], binary, decimals=decimals),
                 "ci": ci, "pvalue": fmt_p(cols["pvalue"][k], 2)}
        if clustered:
            cells["pvalue_cluster"] = fmt_p(cols["pvalue_cluster"][k], 2)
        if "pvalue_run" in cols:
            cells["pvalue_run"] = fmt_p(cols["pvalue_run"][k], 2)
        if flips is not None:
            k_flip = float(flips.items_to_flip[k])
            cells["flip"] = ("none" if not math.isfinite(k_flip) else
                             f"{int(k_flip):,} ({fmt_share(float(flips.share[k]))})"
                             + (" fragile" if bool(flips.fragile[k]) else ""))
        flags = {}
        for r in regimes:
            cells[r.n_star_field] = fmt_n_star(float(cols[r.n_star_field][k]))
            cells[r.q_field] = f"{float(cols[r.q_field][k]):.2f}"
            flags[r.resolved_field] = bool(cols[r.resolved_field][k])
        rows.append(PairRow(cells, flags))
    return rows


def fmt_share(share: float) -> str:
    """A share of the items as a percentage with two significant digits: "0.097%", "10%"."""
    return f"{100 * share:.2g}%" if share >= 0.0001 else f"{100 * share:.1g}%"


def _ranking_view(diag: Diagnosis, rankings: RankReport | None, binary: bool,
                  decimals: int | None) -> RankingView | None:
    if rankings is None or rankings.ranks is None or rankings.winner is None:
        return None
    ranks, win, fr = rankings.ranks, rankings.winner, rankings.fragility
    level = f"{100 * ranks.confidence_level:g}%"

    def score(v: float) -> str:
        return fmt_score(v, binary, decimals=decimals)

    def span(ci: Any) -> str:
        return f"{score(ci[0])} – {score(ci[1])}"

    low = ranks.rank_ci_low
    top = float(fr.items_to_flip_top) if fr is not None else math.nan  # graded item shards: no fragility
    return RankingView(
        level=level, n_models=len(diag.models), best_set=[str(m) for m in ranks.best_set],
        top3=[str(diag.models[g]) for g in range(len(diag.models)) if low[g] <= 3] if len(diag.models) > 3 else [],
        winner=str(win.selected[0]), score=score(win.estimate), naive_ci=span(win.naive_ci),
        corrected=score(win.hybrid_estimate) if math.isfinite(win.hybrid_estimate) else "",
        hybrid_ci=span(win.hybrid_ci),
        challenger=str(fr.challenger) if fr is not None else "",
        flip_top="" if not math.isfinite(top) or fr is None
        else f"{int(top):,} of {diag.n:,} items ({fmt_share(fr.share_top)})",
        fragile_top=bool(fr is not None and fr.fragile_top),
        fragile_pairs=int(np.sum(fr.fragile)) if fr is not None else 0,
        fragile_share=fmt_share(fr.fragile_share) if fr is not None else "",
        method=(f"max-t bootstrap of all pairwise gaps, resampling {ranks.resampled}" if ranks.method == "bootstrap"
                else "max-t over all pairwise gaps, from the bootstrap's normal limit"))


def in_points(settings: dict[str, Any]) -> bool:
    """Whether a report shows its scores in points: 0/1 scores, or the run-averaged scores of 0/1 runs
    (shares of runs; the statistics treat them as graded, the unit stays the runs' own).
    """
    return bool(settings.get("points", settings.get("binary")))


def _cluster_nstar_sentence(diag: Diagnosis, cluster_name: str) -> str:
    """N* by the cluster bootstrap beside the formula's: the closest unresolved shown gap's, and the
    range of their ratio over the shown gaps (docs/clusters.md).
    """
    info = diag.settings.get("cluster_nstar") or {}
    if not info:
        return ""
    if not info.get("computed"):
        return f"Simulated N*: not computed ({info.get('why', '')})."
    units = "clusters" if cluster_name == "cluster" else f"{cluster_name} clusters"
    boot = np.asarray(diag.columns["n_star_cluster_bootstrap"], dtype=float)
    formula = np.asarray(diag.columns["n_star_cluster"], dtype=float)
    shown = np.flatnonzero(np.isfinite(boot) & np.isfinite(formula) & (formula > 0))
    if not shown.size:
        return ""
    test = CLUSTER_METHOD_LABELS.get(info["test"], "cluster-robust t")
    head = (f"Simulated N* (the {test} test on benchmarks of whole {units} drawn from these, "
            f"{info['n_sims']:,} per size, over the uncertainty of their variance):")
    unresolved = shown[~np.asarray(diag.columns["resolved_cluster"], dtype=bool)[shown]]
    parts = []
    if unresolved.size:
        k = int(unresolved[np.argmin(formula[unresolved])])
        needed = boot[k] / info["mean_cluster_size"]  # N* = G'* x the mean cluster size
        parts.append(f"gap #{k + 1}, the closest unresolved, needs {fmt_n_star(boot[k])} items "
                     f"(about {needed:,.0f} {units}) against the formula's {fmt_n_star(formula[k])}")
    ratio = boot[shown] / formula[shown]
    if shown.size > 1:
        parts.append(f"over the {shown.size} shown gaps, {ratio.min():.2g}-{ratio.max():.2g}x the formula's "
                     f"(median {np.median(ratio):.2g}x)")
    elif not unresolved.size:
        parts.append(f"gap #{int(shown[0]) + 1} needs {ratio[0]:.2g}x the formula's N*")
    return f"{head} {'; '.join(parts)}."


def _cluster_level_sentence(diag: Diagnosis, cluster_name: str) -> str:
    """Whether clustering matters (the items-vs-clusters score-variance test over the shown gaps) and
    how many gaps one cluster left out turns around (docs/clusters.md).
    """
    level = diag.settings.get("cluster_level") or {}
    if not level.get("computed"):
        return ""
    by = "" if cluster_name == "cluster" else f" by {cluster_name}"
    one = "cluster" if cluster_name == "cluster" else cluster_name
    m = len(diag.columns["delta"])
    out = []
    if level.get("combined_pvalue") is not None and level.get("n_estimable"):
        k = round(level["share_rejected"] * level["n_estimable"])
        p = fmt_p(level["combined_pvalue"], 2)
        out.append(f"Clustering{by} matters (items vs clusters: {k} of {level['n_estimable']} gaps, combined p {p})."
                   if level["combined_pvalue"] <= float(diag.settings["alpha"]) else
                   f"No evidence that clustering{by} matters (items vs clusters, combined p {p}).")
    fine = level.get("coarse_vs_fine") or {}
    if fine.get("computed") and fine.get("n_estimable"):
        k = round(fine["share_rejected"] * fine["n_estimable"])
        p = fmt_p(fine["combined_pvalue"], 2)
        what = f"clustering{by} is needed beyond its {fine['fine_clusters']:,} finer clusters"
        out.append(f"{what[0].upper()}{what[1:]} (coarse vs fine: {k} of {fine['n_estimable']} gaps, combined p {p})."
                   if fine["combined_pvalue"] <= float(diag.settings["alpha"]) else
                   f"No evidence that {what} (coarse vs fine, combined p {p}).")
    flips = np.asarray(diag.columns.get("loco_sign_flips", []), dtype=float)
    if flips.size:
        turned = int(np.sum(flips > 0))
        out.append(f"{turned} of {m} gaps change sign when one {one} is left out." if turned else
                   f"No gap changes sign when one {one} is left out.")
    return " ".join(out)


def build_view(diag: Diagnosis, *, cluster_name: str = "cluster", max_rows: int | None = None,
               rankings: RankReport | None = None) -> ReportView:
    """The view of a Diagnosis: every number formatted in its units, every label from the result.

    ``max_rows``: format only the first pairs (a report of millions of pairs shows a summary and
    the first rows; :attr:`ReportView.n_pairs` still counts them all). ``rankings``: the rankings
    section (:func:`~llm_power.rank_report` of the same diagnosis), shown when given.
    """
    s = diag.settings
    binary = in_points(s)
    level = f"{100 * s.get('confidence_level', 0.95):g}%"
    models = []
    ci_low, ci_high = np.asarray(diag.model_ci_low), np.asarray(diag.model_ci_high)
    d = None if binary else table_decimals((ci_high - ci_low) / 2)  # one precision for every graded number
    for k, name in enumerate(diag.models):
        lo, hi = float(ci_low[k]), float(ci_high[k])
        mean = float(diag.means[k])  # the reach below and above the score: "−15.2 / +12.6" when asymmetric
        if binary:
            interval, half = f"{100 * lo:.1f} – {100 * hi:.1f}%", fmt_margins(mean, lo, hi, scale=100.0)
        else:
            interval, half = f"{lo:.{d}f} – {hi:.{d}f}", fmt_margins(mean, lo, hi, decimals=d or 0)
        ranks = ""
        if rankings is not None and rankings.ranks is not None:
            lo_r, hi_r = int(rankings.ranks.rank_ci_low[k]), int(rankings.ranks.rank_ci_high[k])
            ranks = f"{lo_r}" if lo_r == hi_r else f"{lo_r}–{hi_r}"
        models.append(ModelRow(k + 1, name, fmt_score(diag.means[k], binary, decimals=d), interval, half, ranks))
    regimes = _regime_views(diag)
    strictest = next(r for r in regimes if r.key == diag.headline.key)  # the headline: the strictest computed
    ties_regime = strictest.key  # the same verdicts as the headline sentence and the charts
    robustness = None
    if diag.cluster_robustness:
        cr = diag.cluster_robustness
        of = f" of the {cr['n_pairs']:,} adjacent gaps" if cr.get("of_all_pairs") else ""
        robustness = (f"Cluster bootstrap ({cr['n_resamples']} resamples of the {s['n_clusters']} clusters): "
                      f"unresolved count{of} median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}].")
    matters = " ".join(t for t in (_cluster_level_sentence(diag, cluster_name),
                                    _cluster_nstar_sentence(diag, cluster_name)) if t)
    cluster_interval = CLUSTER_METHOD_LABELS.get(s.get("cluster_method", "cr2"), "cluster-robust t")
    caution = s.get("cluster_caution")
    if caution:
        matters = f"{matters} Caution: {caution}." if matters else f"Caution: {caution}."
    if matters:
        robustness = f"{robustness} {matters}" if robustness else matters
    return ReportView(
        n=diag.n, n_models=len(diag.models), n_pairs=len(diag.columns["delta"]) if diag.columns else 0,
        pairs_kind=str(s["pairs"]), binary=binary, alpha=f"{s['alpha']:g}", power=f"{s['power']:g}", level=level,
        unit="pts" if binary else "score", unit_long="points" if binary else "score units",
        interval_name=((f"{cluster_interval} and items-and-runs t, the wider," if "runs_by" in s else cluster_interval)
                       if "n_clusters" in s else "items-and-runs t" if "runs_by" in s else "Wilson" if binary else "t"),
        score_word="score" if binary else "mean score", models=models,
        regimes=regimes, strictest=strictest,
        pairs=_pair_rows(diag, regimes, True, max_rows, d, None if rankings is None else rankings.fragility),
        ties_regime=ties_regime,
        ties=[g for g in diag.tie_groups[ties_regime] if len(g) > 1], robustness=robustness,
        sentences=_sentences(diag, regimes, cluster_name), steps=_next_steps(diag, regimes, strictest, d),
        settled=_settled(diag, regimes),
        has_cluster_p="pvalue_cluster" in diag.columns, has_run_p="pvalue_run" in diag.columns, settings=dict(s),
        ranking=_ranking_view(diag, rankings, binary, d),
        has_flip=rankings is not None and rankings.fragility is not None,
    )
