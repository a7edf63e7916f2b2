"""The regimes of a resolution report and the options of :func:`~llm_power.diagnose`, declared once.

Each :class:`Regime` entry is everything a verdict regime is: its per-pair fields, its options
(name, default, check, command-line flag and help sentence: :class:`Option`), when a report
computes it, the sentence the report says of it, and the function that computes it (named here,
imported when first used). :class:`DiagnoseOptions` -- the typed, frozen options object of
``diagnose`` -- is generated from the options the entries declare; the command line adds a flag
for each (``llm-power diagnose``, ``demo``, ``rank``); renderers iterate the entries through
``Diagnosis.regimes``. A new regime is one new entry.

This module imports nothing heavy (no numpy): ``llm-power --help`` builds its flags from it.
"""

from __future__ import annotations

import dataclasses
import importlib
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._core.files import limit
from .._core.options import CLUSTER_METHOD_LABELS, CLUSTER_METHODS, CORRECTIONS, DESIGN_EFFECT_NAMES

__all__ = ["REGIMES", "DiagnoseOptions", "Option", "Regime", "headline_key"]

#: reports with more pairs are refused before allocating (see ``max_pairs``)
MAX_PAIRS = 200_000
#: cluster resamples are computed in batches; more than ``LLM_POWER_MAX_CLUSTER_RESAMPLES`` (1,000,000
#: by default) is refused (time, not memory)
MAX_CLUSTER_RESAMPLES = "LLM_POWER_MAX_CLUSTER_RESAMPLES"


# =================================================================================================
# Options: each with its check (light: no numpy), flag and sentence
# =================================================================================================

def _say(name: str, requirement: str, value: Any, exc: type[Exception] = ValueError) -> Exception:
    text = repr(value)
    return exc(f"`{name}` must be {requirement}; got {text if len(text) <= 60 else text[:57] + '...'}.")


def choice(name: str, values: tuple[str, ...], *, none: bool = False) -> Callable[[Any], Any]:
    """A check: one of ``values`` (or None when ``none``)."""
    listed = ", ".join(repr(v) for v in sorted(values)) + (" or None" if none else "")

    def check(value: Any) -> Any:
        if value is None and none:
            return None
        if not isinstance(value, str):
            raise _say(name, f"one of {listed}", value, TypeError)
        if value not in values:
            raise _say(name, f"one of {listed}", value)
        return value

    return check


def unit(name: str) -> Callable[[Any], float]:
    """A check: a number in (0, 1) (the vocabulary's, ``llm_power._core.params``)."""

    def check(value: Any) -> float:
        from .._core.params import check_param

        return float(check_param(name, value))

    return check


def integer(name: str, minimum: int, *, maximum: int | str | None = None, none: bool = False) -> Callable[[Any], Any]:
    """A check: a whole number in [minimum, maximum] (or None when ``none``)."""
    requirement = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")

    def check(value: Any) -> Any:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _say(name, requirement + (" or None" if none else ""), value, TypeError)
        whole = int(value)
        if whole < minimum:
            raise _say(name, requirement, value)
        if maximum is not None:
            cap, raises = ((maximum, "") if isinstance(maximum, int)
                           else (limit(maximum), f" ({maximum} raises the limit)"))
            if whole > cap:
                raise _say(name, f"at most {cap:,}{raises}", value)
        return whole

    return check


def boolean(name: str) -> Callable[[Any], bool]:
    """A check: True or False (numpy booleans too)."""

    def check(value: Any) -> bool:
        if type(value).__name__ not in ("bool", "bool_"):
            raise _say(name, "True or False", value, TypeError)
        return bool(value)

    return check


@dataclass(frozen=True)
class Option:
    """One option of ``diagnose``: its keyword, default, type, check, command-line flag (None: not on
    the command line) and help.
    """

    name: str
    default: Any
    annotation: str
    check: Callable[[Any], Any]
    flag: str | None
    help: str
    #: argparse keywords besides dest, default and help (choices, action, metavar)
    cli: Mapping[str, Any] = field(default_factory=dict)

    def cli_type(self) -> Callable[[str], Any]:
        """The argparse type of the flag: the text converted as the annotation says, then checked (a bad
        value is a usage error naming the flag).
        """
        import argparse

        convert = int if self.annotation.startswith("int") else float if self.annotation.startswith("float") else str

        def parse(text: str) -> Any:
            try:
                value = convert(text)
            except ValueError:
                msg = f"must be {'a whole number' if convert is int else 'a number'}; got {text!r}"
                raise argparse.ArgumentTypeError(msg) from None
            try:
                return self.check(value)
            except (TypeError, ValueError) as exc:
                raise argparse.ArgumentTypeError(str(exc).replace(f"`{self.name}` ", "", 1)) from None

        parse.__name__ = self.name
        return parse


# =================================================================================================
# Regimes
# =================================================================================================

def _dependence_note(settings: Mapping[str, Any], label: str) -> str:
    """Where BH runs outside its guarantee (negative dependence between the gaps' statistics: PRDS
    cannot hold), the words that say so beside the correction (issue 45).
    """
    dep = settings.get("family_dependence") or {}
    if label != "BH" or not dep.get("computed") or dep.get("prds_plausible", True):
        return ""
    negative = round(dep["share_negative"] * dep["n_correlations"])
    return (f" (BH's false-discovery guarantee assumes positive dependence: {negative:,} of "
            f"{dep['n_correlations']:,} correlations between these gaps' statistics are negative, down to "
            f"{dep['minimum']:.2f}; --correction by holds under any dependence)")


def _plural(m: int, word: str) -> str:
    return f"{m:,} {word}{'' if m == 1 else 's'}"


@dataclass(frozen=True)
class Regime:
    """One verdict regime of a resolution report: what it adds, when, how it is said and computed.

    ``compute`` (the function of ``llm_power.resolution._regimes`` named ``compute_name``) is None
    for the IID regime: it is the context every other one builds on.
    """

    key: str
    title: str  # as in "4 of 9 unresolved (IID)"
    q_field: str
    resolved_field: str
    n_star_field: str
    pvalue_field: str | None
    compute_name: str | None = None
    #: whether a report computes this regime, from the options and the data (``n_groups``: the
    #: clusters of the source; ``runs``: several runs per model)
    requested: Callable[[Any, int, bool], bool] = lambda _options, _n_groups, _runs: True
    #: the fields this regime adds to each pair (name, type, default; the IID ones have no default
    #: up to ``resolved``): :class:`~llm_power.PairResolution` is generated from them
    fields: tuple[tuple[str, Any, Any], ...] = ()
    #: the options this regime brings to ``diagnose`` (and their flags to the command line)
    options: tuple[Option, ...] = ()
    #: the end of the report's sentence for this regime: "4 of 9 <tail>" (settings, pairs, label,
    #: cluster field name)
    tail: Callable[[Mapping[str, Any], int, str, str], str] | None = None

    @property
    def compute(self) -> Callable[..., Any] | None:
        """The function that computes the regime from a diagnosis's context and its options."""
        if self.compute_name is None:
            return None
        fn: Callable[..., Any] = getattr(importlib.import_module("._regimes", __package__), self.compute_name)
        return fn

    def label(self, settings: Mapping[str, Any]) -> str:
        """Short column label: "IID", the correction's name ("Holm"), "cluster", "anytime", "runs"."""
        if self.key == "corrected":
            return CORRECTION_NAMES.get(str(settings.get("correction")), str(settings.get("correction")))
        return {"iid": "IID"}.get(self.key, self.key)

    def sentence_tail(self, settings: Mapping[str, Any], n_pairs: int, cluster_name: str = "cluster") -> str:
        """The end of "u of m ..." for this regime."""
        if self.tail is None:
            return f"under the {self.label(settings)} regime."
        return self.tail(settings, n_pairs, self.label(settings), cluster_name)


#: how the multiplicity corrections are named in user text
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "BH", "by": "BY"}

#: a field without a default (the IID fields up to ``resolved``)
_REQUIRED = dataclasses.MISSING

REGIMES = (
    Regime(
        "iid", "IID", "q", "resolved", "n_star", "pvalue",
        fields=(("model_a", str, _REQUIRED), ("model_b", str, _REQUIRED), ("rank_a", int, _REQUIRED),
                ("rank_b", int, _REQUIRED), ("n", int, _REQUIRED), ("mean_a", float, _REQUIRED),
                ("mean_b", float, _REQUIRED), ("delta", float, _REQUIRED), ("se", float, _REQUIRED),
                ("pvalue", float, _REQUIRED), ("test", str, _REQUIRED), ("n_star", float, _REQUIRED),
                ("q", float, _REQUIRED), ("mde", float, _REQUIRED), ("resolved", bool, _REQUIRED),
                ("regime", str, "plug-in"), ("b", int | None, None), ("c", int | None, None),
                ("ci_low", float | None, None), ("ci_high", float | None, None)),
        options=(
            Option("pairs", "adjacent", "str", choice("pairs", ("adjacent", "all")), "--pairs",
                   "adjacent models in the ranking (what a leaderboard displays; default) or all pairs",
                   {"choices": ("adjacent", "all")}),
            Option("alpha", 0.05, "float", unit("alpha"), "--alpha", "significance level of every test (default 0.05)"),
            Option("power", 0.8, "float", unit("power"), "--power", "target power of N* and the MDE (default 0.8)"),
            Option("confidence_level", 0.95, "float", unit("confidence_level"), "--confidence-level",
                   "level of every interval in the report (default 0.95)", {"metavar": "L"}),
            Option("method", "wald", "str", choice("method", ("wald",)), None,
                   "N* = K sigma^2 / delta^2 with the plug-in variance (the resolution paper's); 0/1 pairs with "
                   "fewer than 25 discordant items use the exact conditional McNemar N* (default wald)",
                   {"choices": ("wald",)}),
            Option("top", None, "int | None", integer("top", 2, none=True), "--top",
                   "only the K best models by mean score (at least 2; default: all)", {"metavar": "K"}),
            Option("max_pairs", MAX_PAIRS, "int", integer("max_pairs", 0), "--max-pairs",
                   f"refuse, before allocating, a report with more pairs (default {MAX_PAIRS:,}; --pairs all "
                   "grows with the square of the models)", {"metavar": "P"}),
        )),
    Regime(
        "corrected", "multiplicity-corrected", "q_corrected", "resolved_corrected", "n_star_corrected",
        "pvalue_adjusted", "regime_corrected", lambda o, _g, _r: o.correction is not None,
        fields=(("pvalue_adjusted", float | None, None), ("alpha_corrected", float | None, None),
                ("n_star_corrected", float | None, None), ("q_corrected", float | None, None),
                ("resolved_corrected", bool | None, None)),
        options=(Option("correction", None, "str | None", choice("correction", CORRECTIONS, none=True),
                        "--correction", "multiplicity stress test across the pairs: bonferroni, holm (step-down), "
                        "bh (step-up) or by (Benjamini-Yekutieli: BH's false discovery rate under any dependence); "
                        "N* at each pair's corrected level (default: none)",
                        {"choices": CORRECTIONS}),),
        tail=lambda s, m, label, _c: (f"with the {label} correction for {_plural(m, 'comparison')}"
                                      f"{_dependence_note(s, label)}.")),
    Regime(
        "cluster", "clustered items", "q_cluster", "resolved_cluster", "n_star_cluster", "pvalue_cluster",
        "regime_cluster", lambda _o, n_groups, _r: n_groups > 0,
        fields=(("icc", float | None, None), ("design_effect", float | None, None),
                ("design_effect_robust", float | None, None), ("design_effect_cr1", float | None, None),
                ("design_effect_anova", float | None, None), ("design_effect_paper", float | None, None),
                ("pvalue_cluster", float | None, None), ("cluster_df", float | None, None),
                ("cluster_ci_low", float | None, None), ("cluster_ci_high", float | None, None),
                ("n_star_cluster", float | None, None), ("q_cluster", float | None, None),
                ("mde_cluster", float | None, None), ("resolved_cluster", bool | None, None),
                ("cluster_level_pvalue", float | None, None), ("loco_sign_flips", float | None, None),
                ("loco_verdict_flips", float | None, None), ("cluster_fine_pvalue", float | None, None),
                ("n_star_cluster_bootstrap", float | None, None), ("design_effect_bootstrap", float | None, None)),
        options=(
            Option("design_effect", "robust", "str", choice("design_effect", DESIGN_EFFECT_NAMES), "--design-effect",
                   "the clustered regime's variance: robust = CR2 with Imbens-Kolesar df (default), cr1 = CR1 "
                   "with G - 1 df, anova = ANOVA ICC with Kish's size, paper = the paper's mean-size form "
                   "(reproduction only)", {"choices": DESIGN_EFFECT_NAMES, "metavar": "MODEL"}),
            Option("cluster_method", "cr2", "str", choice("cluster_method", CLUSTER_METHODS), "--cluster-method",
                   "the clustered test and interval: cr2 = t on the --design-effect variance (CR2 with "
                   "Imbens-Kolesar df by default), cv3 = the cluster jackknife on G - 1 df, wild = the restricted "
                   "wild cluster bootstrap and its inverted interval (nearer its level with few clusters; "
                   "docs/clusters.md; default cr2)", {"choices": CLUSTER_METHODS}),
            Option("cluster_resamples", 1000, "int",
                   integer("cluster_resamples", 0, maximum=MAX_CLUSTER_RESAMPLES), "--cluster-resamples",
                   "resamples of the clusters for the robustness of the clustered unresolved count of the shown "
                   "gaps (the adjacent ones with --pairs all; default 1000; 0: none)", {"metavar": "B"}),
            Option("cluster_nstar_sims", 1000, "int",
                   integer("cluster_nstar_sims", 0, maximum=MAX_CLUSTER_RESAMPLES), "--cluster-nstar-sims",
                   "simulated benchmarks per size for N* by the cluster bootstrap of the shown gaps (the clustered "
                   "test -- CR2's for wild -- run on benchmarks of whole clusters drawn from these; up to 100 "
                   "gaps; default 1000; 0: none)", {"metavar": "S"}),
        ),
        tail=lambda s, _m, _l, c: (f"once items are clustered{'' if c == 'cluster' else ' by ' + c} "
                                   f"({s.get('n_clusters')} clusters, "
                                   f"{CLUSTER_METHOD_LABELS.get(s.get('cluster_method', 'cr2'), 'cluster-robust t')})."
                                   )),
    Regime(
        "anytime", "anytime-valid", "q_anytime", "resolved_anytime", "n_star_anytime", None, "regime_anytime",
        lambda o, _g, _r: bool(o.anytime),
        fields=(("e_value", float | None, None), ("n_star_anytime", float | None, None),
                ("q_anytime", float | None, None), ("resolved_anytime", bool | None, None)),
        options=(Option("anytime", False, "bool", boolean("anytime"), "--anytime",
                        "anytime-valid stress test: the critical value a continuously monitored leaderboard "
                        "must use (the normal-mixture boundary) replaces z in N* and q",
                        {"action": "store_true"}),),
        tail=lambda _s, _m, _l, _c: "if the leaderboard is re-tested as results arrive (anytime-valid)."),
    Regime(
        "runs", "run noise", "q_run", "resolved_run", "n_star_run", "pvalue_run", "regime_runs",
        lambda _o, _g, runs: runs,
        fields=(("se_run", float | None, None), ("run_df", float | None, None), ("pvalue_run", float | None, None),
                ("run_ci_low", float | None, None), ("run_ci_high", float | None, None),
                ("n_star_run", float | None, None), ("q_run", float | None, None), ("mde_run", float | None, None),
                ("resolved_run", bool | None, None), ("run_share", float | None, None),
                ("runs_needed", float | None, None)),
        options=(Option("run_pairing", "auto", "str", choice("run_pairing", ("auto", "independent", "matched")),
                        "--run-pairing",
                        "how two models' runs relate: independent (seeds, engines), matched (the same prompt "
                        "templates for every model: the common shift cancels), or auto (default: matched for "
                        "runs by template when every model has the same templates)",
                        {"choices": ("auto", "independent", "matched")}),),
        tail=lambda s, _m, _l, _c: (f"once run-to-run noise counts ({s.get('runs_span', '')} runs per model"
                                    + ("" if (s.get("runs_by") or "run") == "run" else f", one per {s['runs_by']}")
                                    + (", matched across models" if s.get("run_pairing") == "matched" else "")
                                    + ").")),
)


def headline_key(unresolved: Mapping[str, int], median_q: Mapping[str, float]) -> str:
    """The report's headline regime: the strictest one computed -- the most unresolved pairs; on a tie
    the smaller median q; then the later regime (IID last). Every command (diagnose, demo, arena)
    names its headline by this rule.
    """
    keys = list(unresolved)
    return max(reversed(keys), key=lambda k: (int(unresolved[k]), -float(median_q.get(k, 0.0))))


# =================================================================================================
# The options object
# =================================================================================================

#: every option, in the order the regimes declare them
OPTIONS: dict[str, Option] = {o.name: o for r in REGIMES for o in r.options}


def _create(cls: type, options: Any = None, /, **values: Any) -> Any:
    """Checked options: ``options`` (a DiagnoseOptions, or None for the defaults) with ``values`` in
    place of its own; an unknown keyword is a TypeError listing the known ones.
    """
    unknown = sorted(set(values) - set(OPTIONS))
    if unknown:
        msg = (f"diagnose() got an unexpected keyword argument {unknown[0]!r}; its options are "
               f"{', '.join(OPTIONS)}")
        raise TypeError(msg)
    if options is not None and not isinstance(options, cls):
        msg = f"`options` must be a DiagnoseOptions; got {type(options).__name__}."
        raise TypeError(msg)
    base = {} if options is None else {name: getattr(options, name) for name in OPTIONS}
    checked = {**base, **{name: OPTIONS[name].check(value) for name, value in values.items()}}
    out = cls(**checked)
    from .._core.params import check_power_above

    check_power_above(out.power, out.alpha)
    return out


def _options_class() -> type:
    fields = [(o.name, o.annotation, field(default=o.default)) for o in OPTIONS.values()]
    doc = ("The options of :func:`~llm_power.diagnose`, checked and frozen; generated from the options the "
           "regimes of ``REGIMES`` declare. ``DiagnoseOptions.create(**values)`` checks; "
           "``options.replace(**values)`` gives a checked copy. Fields: "
           + "; ".join(f"``{o.name}`` ({o.default!r}): {o.help}" for o in OPTIONS.values()) + ".")

    def replace(self: Any, **values: Any) -> Any:
        """A checked copy with ``values`` in place."""
        return _create(type(self), self, **values)

    def to_dict(self: Any) -> dict[str, Any]:
        """The options as a plain dict."""
        return {name: getattr(self, name) for name in OPTIONS}

    def check_pairs(self: Any, m_models: int, *, top: bool = True) -> int:
        """The number of pairs ``pairs`` makes of ``m_models`` models; a ValueError (before anything
        is allocated) when it is more than ``max_pairs``, naming the options that help (``top`` only
        for a caller that takes it).
        """
        n_pairs = m_models - 1 if self.pairs == "adjacent" else m_models * (m_models - 1) // 2
        if n_pairs > self.max_pairs:
            fewer = "fewer models (`top`)" if top else "fewer models"
            msg = (f"pairs={self.pairs!r} with {m_models:,} models is {n_pairs:,} pairs, more than max_pairs = "
                   f"{self.max_pairs:,} (each pair is a row of the report); use `pairs`='adjacent', {fewer}, or raise "
                   "`max_pairs`")
            raise ValueError(msg)
        return n_pairs

    return dataclasses.make_dataclass(
        "DiagnoseOptions", fields, frozen=True,
        namespace={"__doc__": doc, "__module__": __name__, "create": classmethod(_create), "replace": replace,
                   "to_dict": to_dict, "check_pairs": check_pairs})


DiagnoseOptions: Any = _options_class()
