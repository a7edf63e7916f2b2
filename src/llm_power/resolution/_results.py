"""The results of :func:`~llm_power.diagnose`: the columnar :class:`Diagnosis` and its rows,
:class:`PairResolution` -- a class generated from the fields the :data:`REGIMES` declare (the IID
regime's fields first, then each stress test's), so that a new regime brings its own fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._core.format import fmt_gap, fmt_n_star, fmt_p
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval, to_plain
from .._kernel.sizes import mde_from_variance
from ._registry import REGIMES

__all__ = ["Diagnosis", "PairResolution"]


def _pair_resolution() -> type:
    """The row class: one field per field the regimes declare, in their order."""
    fields = [(name, kind, field(default=default)) if default is not dataclasses.MISSING else (name, kind)
              for regime in REGIMES for name, kind, default in regime.fields]
    doc = ("Resolution of one pair of models (A ranked above B). Optional fields are None when the "
           "corresponding stress test was not requested. Fields (from the regimes of ``REGIMES``): "
           + ", ".join(f[0] for f in fields) + ".")
    @public
    def confidence_interval(self: Any, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the gap that inverts the pair's IID test: ``(ci_low, ci_high)``, at the
        diagnosis's confidence level (``confidence_level``: None).
        """
        return stored_interval(self.ci_low, self.ci_high, None, confidence_level,
                               recompute="run diagnose(..., confidence_level=confidence_level)")

    return dataclasses.make_dataclass(
        "PairResolution", fields, bases=(Result,), frozen=True, slots=True, repr=False,
        namespace={"__doc__": doc, "__module__": __name__, "confidence_interval": confidence_interval,
                   "_repr_fields": ("model_a", "model_b", "delta", "pvalue", "n_star", "q", "resolved")})


if TYPE_CHECKING:
    class PairResolution(Result):
        """Resolution of one pair of models (A ranked above B): one field per field of the regimes."""

        def __init__(self, **fields: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...

        def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval: ...
else:
    PairResolution = _pair_resolution()


class Held:
    """What a finished diagnosis keeps to answer more questions of the same data: the source of
    sufficient statistics (a matrix in memory, or item shards while their cluster is up), the models
    in the source's order, the source's columns by rank, the checked options and the runs; the
    diagnosis of every pair is formed by ``expand`` on first request and kept.
    """

    __slots__ = ("_every", "expand", "local_order", "names", "options", "runs", "seed", "source")

    def __init__(self, *, source: Any, names: list[Any], local_order: np.ndarray, options: Any, runs: Any,  # noqa: PLR0913
                 expand: Any, seed: int | None = None) -> None:
        self.source, self.names, self.local_order, self.options, self.runs = source, names, local_order, options, runs
        self.expand = expand
        self.seed = seed  # the caller's integer seed (None: a Generator or fresh entropy), for receipts
        self._every: Any = None

    def every(self) -> Any:
        """The diagnosis of every pair (formed once)."""
        if self._every is None:
            self._every = self.expand(self)
        return self._every

    def __repr__(self) -> str:
        return f"Held({self.source.n_models} models)"


@dataclass(frozen=True, slots=True, repr=False)
class Diagnosis(Result):
    """Result of :func:`diagnose`.

    Attributes
    ----------
    models : list of str
        Ranked best first.
    means : ndarray
        Mean scores in that order.
    n : int
        Items.
    columns : Mapping of str to ndarray
        The pairs, columnar: one array per field of :class:`PairResolution` (model_a, model_b,
        rank_a, delta, pvalue, n_star, q, resolved, ..., and each regime's columns), pairs in
        rank order; a read-only mapping whose per-pair model names, ranks and means, test and
        regime names, se and N* are formed on first read. ``pairs`` gives them as rows on
        demand, ``to_frame()`` as a DataFrame.
    order : ndarray
        Indices of the input's model columns, best first (``models`` = input names[order]).
    n_unresolved : dict
        Unresolved pairs under each regime computed: "iid", and "corrected", "cluster",
        "anytime" when requested. "Resolved" = q >= 1 and the pair's test rejects at alpha
        (each stress test also needs the IID verdict).
    tie_groups : dict
        Per regime, the statistical ties: maximal runs of consecutive ranks that hold no resolved
        pair (a pair the report shows counts as it says; any other pair as the same regime decides
        it among all pairs, up to 100 models; beyond, with adjacent pairs, each unresolved adjacent
        pair is a group). Groups may overlap; a model in no group is resolved from its neighbours.
    rank_intervals : dict
        Per regime, (lowest, highest) plausible rank of each model: [1 + models resolved above it,
        M - models resolved below it] (over every pair; with adjacent pairs only beyond 100 models,
        through chains of resolved adjacent pairs).
    cluster_robustness : dict or None
        Distribution of the clustered unresolved count over resamples of the clusters.
    settings : dict
        alpha, power, confidence_level, correction, anytime, pairs, method, binary, units, test(s),
        n_clusters, design_effect (model), critical values.
    model_ci_low, model_ci_high : ndarray
        Per-model intervals at ``confidence_level`` (Wilson for 0/1 scores, Student t for graded;
        with ``cluster``, the cluster-robust t interval: CR2 with Imbens-Kolesar degrees of freedom).
    model_se, model_sd : ndarray
        Per-model standard error of the score (the sample SD with ddof 1 over sqrt(n); with
        ``cluster`` the CR2 one; with runs the one over items and runs) and the SD of the item
        scores; ``settings["model_se_method"]`` and ``["model_ci_method"]`` say which.
    held : Held or None
        The source and options the diagnosis was made from (not part of its value, never
        serialised): :meth:`all_pairs` and the rankings (:func:`~llm_power.rank_report`) use it.

    Notes
    -----
    ``settings["headline"]`` names the report's headline regime: the strictest one computed (the
    most unresolved pairs; on a tie the smaller median q), the rule every command uses.
    """

    models: list[Any]
    means: np.ndarray = field(compare=False)
    n: int = 0
    columns: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False)
    order: np.ndarray | None = field(default=None, compare=False)
    n_unresolved: dict[str, Any] = field(default_factory=dict)
    tie_groups: dict[str, Any] = field(default_factory=dict)
    rank_intervals: dict[str, Any] = field(default_factory=dict)
    cluster_robustness: dict[str, Any] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    model_ci_low: np.ndarray | None = field(default=None, compare=False)
    model_ci_high: np.ndarray | None = field(default=None, compare=False)
    model_se: np.ndarray | None = field(default=None, compare=False)
    model_sd: np.ndarray | None = field(default=None, compare=False)
    held: Held | None = field(default=None, compare=False)

    _repr_fields = ("n", "n_unresolved")
    view_kind: ClassVar[str] = "diagnosis"

    @public
    def confidence_interval(self, confidence_level: float | None = None, *, of: str = "models") -> ConfidenceInterval:
        """Arrays of intervals: ``of="models"`` (default) each model's score interval, in ``models``
        order (``model_ci_low``, ``model_ci_high``); ``of="pairs"`` each pair's gap interval of its IID
        test, in ``pairs`` order (the columns ``ci_low``, ``ci_high``).
        """
        picked = ((self.model_ci_low, self.model_ci_high) if of == "models"
                  else (self.columns.get("ci_low"), self.columns.get("ci_high")) if of == "pairs" else (None, None))
        low, high = picked
        return stored_interval(low, high, self.settings.get("confidence_level"), confidence_level,
                               recompute="run diagnose(..., confidence_level=confidence_level)",
                               choice=("of", of, ("models", "pairs")))

    @property
    def pairs(self) -> list[PairResolution]:
        """The pairs as :class:`PairResolution` rows (built from :attr:`columns` on each access)."""
        names = list(self.columns)
        size = len(self.columns["delta"]) if self.columns else 0
        return [PairResolution(n=self.n, **{k: _cell(k, self.columns[k][p]) for k in names}) for p in range(size)]

    def mde_curve(self, n_items: Any) -> np.ndarray:
        """MDE against the number of items for the median per-item variance of the displayed pairs
        (the report's "what this benchmark can detect" curve), at the report's alpha and power.
        """
        var = float(np.median(np.asarray(self.columns["se"], dtype=float) ** 2 * self.n))
        var = var if var > 0 else 1e-12
        return np.asarray(mde_from_variance(np.asarray(n_items, dtype=float), var, alpha=self.settings["alpha"],
                                            power=self.settings["power"]), dtype=float)

    def all_pairs(self) -> Diagnosis:
        """The diagnosis of every pair of these models under the same regimes and options: itself for
        ``pairs="all"``; otherwise formed from the held source once (the source must still be
        reachable: item shards only while their cluster is up).
        """
        if self.settings.get("pairs") == "all":
            return self
        if self.held is None:
            msg = "this Diagnosis holds no scores (it was not made by diagnose)"
            raise ValueError(msg)
        every: Diagnosis = self.held.every()
        return every

    @property
    def headline(self) -> Any:
        """The report's headline regime (an entry of ``REGIMES``): the strictest one computed."""
        return next(r for r in REGIMES if r.key == self.settings.get("headline", "iid"))

    @property
    def regimes(self) -> list[Any]:
        """The :data:`REGIMES` computed for this report, in their fixed order (IID first)."""
        return [r for r in REGIMES if r.key in self.n_unresolved]

    def __repr__(self) -> str:
        return (f"Diagnosis(models={len(self.models)}, n={self.n}, pairs={len(self.columns.get('delta', ()))}, "
                f"n_unresolved={self.n_unresolved})")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (used by the CLI and the reports)."""
        return {
            "models": list(self.models),
            "means": to_plain(self.means),
            "model_ci_low": to_plain(self.model_ci_low),
            "model_ci_high": to_plain(self.model_ci_high),
            "n": self.n,
            "pairs": [p.to_dict() for p in self.pairs],
            "n_unresolved": dict(self.n_unresolved),
            "tie_groups": to_plain(self.tie_groups),
            "rank_intervals": to_plain(self.rank_intervals),
            "cluster_robustness": to_plain(self.cluster_robustness),
            "settings": to_plain(self.settings),
        }

    def to_frame(self) -> Any:
        """The pairs as a pandas DataFrame (one row per pair), straight from the columns."""
        import pandas as pd

        return pd.DataFrame({"n": self.n, **{k: np.asarray(v) for k, v in self.columns.items()}})

    def summary(self) -> str:
        """A short human-readable summary."""
        m = len(self.columns["delta"]) if "delta" in self.columns else 0
        lines = [f"{len(self.models)} models, {self.n:,} items, {m} {self.settings.get('pairs')} "
                 f"{'pair' if m == 1 else 'pairs'} "
                 f"(alpha = {self.settings['alpha']:g}, power = {self.settings['power']:g})"]
        labels = {"iid": "IID", "corrected": f"{self.settings.get('correction')}-corrected",
                  "cluster": "clustered", "anytime": "anytime-valid"}
        for key, count in self.n_unresolved.items():
            lines.append(f"  {labels.get(key, key)}: {count} of {m} {'pair' if m == 1 else 'pairs'} unresolved")
        if self.cluster_robustness:
            cr = self.cluster_robustness
            lines.append(f"  cluster bootstrap of the clustered count ({cr['n_resamples']} resamples): "
                         f"median {cr['median']:g}, 90% range [{cr['q05']:g}, {cr['q95']:g}]")
        binary = bool(self.settings.get("binary", True))
        unit = "pts" if binary else "score"
        lines.append(f"{'rank':>4}  {'model A':<28} {'model B':<28} {'gap ' + unit:>10} {'p':>9} {'N*':>9} "
                     f"{'q':>7}  verdict")
        for p in self.pairs:
            lines.append(f"{p.rank_a:>4}  {p.model_a[:28]:<28} {p.model_b[:28]:<28} {fmt_gap(p.delta, binary):>10} "
                         f"{fmt_p(p.pvalue):>9} {fmt_n_star(p.n_star):>9} {p.q:>7.2f}  "
                         f"{'resolved' if p.resolved else 'UNRESOLVED'}")
        return "\n".join(lines)


_INT_FIELDS = frozenset({"rank_a", "rank_b", "b", "c"})


def _cell(key: str, value: Any) -> Any:
    """One value of a column as a plain Python value of its field's type."""
    if key in _INT_FIELDS:
        return int(value)
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, (bool, str)) or value is None:
        return value
    return float(value)
