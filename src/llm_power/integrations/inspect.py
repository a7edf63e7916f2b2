"""The inspect_ai extension (the ``inspect`` extra: ``pip install '.[inspect]'`` in a checkout),
registered through the ``inspect_ai`` entry-point group as inspect documents for extension packages.

- Metrics ``llm_power/interval(method=..., confidence_level=..., cluster=...)`` — the score's
  interval (Wilson / Clopper-Pearson / Jeffreys for 0/1 scores, Student t for graded ones; with
  ``cluster`` a sample-metadata key, the cluster-robust t interval -- CR2 with Imbens-Kolesar
  degrees of freedom, as ``diagnose --cluster``; a sample without the key is a DataError), reported as
  ``ci_low``/``ci_high`` (``ci_low_<cluster>``/``ci_high_<cluster>``) — and ``llm_power/mde()``,
  the paired gap this run could detect at alpha = 0.05 and power 0.8 against a model with
  independent errors.
- A hook that, when ``LLM_POWER_REPORT`` is set (to a folder, or to ``1`` for the log folder),
  runs ``diagnose`` over each task's logs at the end of a run with two or more models and writes
  ``llm-power-<task>.html`` and ``.md`` there.
- :class:`AnytimeEarlyStopping`: stops a task once the anytime-valid confidence sequence of its
  mean score is narrower than a target half-width — valid however often it is checked, which a
  fixed-n interval is not. The sequences are betting sequences for bounded scores (no plug-in
  variance: a run of identical scores is not "certain" after 30 samples). The samples left out are
  the later ones in the schedule: shuffle the dataset (``shuffle=True``) so that the samples run
  are a random subset.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.scorer import Metric, SampleScore, Value, metric, value_to_float
from inspect_ai.util import EarlyStop

from .._core.errors import DataError

__all__ = ["AnytimeEarlyStopping", "LLMPowerReport", "interval", "mde"]


_TO_FLOAT = value_to_float()  # inspect's own reading of C / I / P / N, booleans and numbers


@contextmanager
def _quiet() -> Iterator[None]:
    """Metrics are recomputed on partial results while a run goes (inspect's live display): their
    value says what can be said (NaN when nothing can), so llm-power's warnings stay quiet there.
    """
    import warnings

    from .._core.errors import LLMPowerWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LLMPowerWarning)
        yield


def _values(scores: list[SampleScore]) -> np.ndarray:
    return np.array([_TO_FLOAT(s.score.value) for s in scores], dtype=float)


@metric
def interval(method: str = "wilson", confidence_level: float = 0.95, cluster: str | None = None) -> Metric:
    """The mean score's interval: ``{"ci_low": ..., "ci_high": ...}`` (with ``cluster``:
    ``ci_low_<cluster>``/``ci_high_<cluster>``, so both can be listed on one scorer).
    """
    from .._core.clusters import code_labels
    from .._kernel.quantiles import interval_half_width
    from .._kernel.variance import mean_variance
    from ..intervals import proportion_ci

    def compute(scores: list[SampleScore]) -> Value:
        with _quiet():
            return _interval(scores)

    def _interval(scores: list[SampleScore]) -> dict[str, float]:
        x = _values(scores)
        n = x.size
        low, high = ("ci_low", "ci_high") if cluster is None else (f"ci_low_{cluster}", f"ci_high_{cluster}")
        if n == 0:
            return {low: math.nan, high: math.nan}
        if cluster is not None:
            # the package's one label coder: a sample without the metadata key is an error naming it
            labels = [(s.sample_metadata or {}).get(cluster) for s in scores]
            missing = next((k for k, v in enumerate(labels) if v is None), None)
            if missing is not None:
                sample = getattr(scores[missing], "sample_id", None)
                msg = (f"sample {sample!r} has no metadata {cluster!r}: the llm_power/interval(cluster={cluster!r}) "
                       "metric needs a cluster label on every sample")
                raise DataError(msg, field=cluster)
            codes, g = code_labels(labels, n, name=cluster, unit="sample")
            if g < 2:
                return {low: math.nan, high: math.nan}
            v = mean_variance(x, codes, g, kind="cr2")  # CR2, Imbens-Kolesar df: as diagnose with --cluster
            half = float(interval_half_width(math.sqrt(float(v.variance[0])), confidence_level, "two-sided",
                                             float(v.df[0])))
            return {low: float(x.mean() - half), high: float(x.mean() + half)}
        if np.all((x == 0) | (x == 1)):
            ci = proportion_ci(int(x.sum()), n, method=method, confidence_level=confidence_level)
            return {low: float(ci.low), high: float(ci.high)}
        if n < 2:
            return {low: math.nan, high: math.nan}
        half = float(interval_half_width(float(x.std(ddof=1)) / math.sqrt(n), confidence_level, "two-sided", n - 1))
        return {low: float(x.mean() - half), high: float(x.mean() + half)}

    return compute


@metric
def mde(alpha: float = 0.05, power: float = 0.8) -> Metric:
    """The paired gap (score units) this run could detect against a model with independent errors."""
    from ..planning import mde as paired_mde

    def compute(scores: list[SampleScore]) -> Value:
        with _quiet():
            return _mde(_values(scores))

    def _mde(x: np.ndarray) -> float:
        if x.size < 2:
            return math.nan
        if np.all((x == 0) | (x == 1)):
            p = min(max(float(x.mean()), 1e-9), 1 - 1e-9)
            return float(paired_mde(x.size, p=p, rho=0.0, alpha=alpha, power=power))
        from .._kernel.sizes import mde_from_variance

        return float(mde_from_variance(float(x.size), 2.0 * float(x.var(ddof=1)), alpha=alpha, power=power))

    return compute


@hooks(name="llm_power_report", description="Resolution report (llm-power diagnose) of the run's models per task.")
class LLMPowerReport(Hooks):
    """Writes ``llm-power-<task>.html``/``.md`` at the end of a run (when ``LLM_POWER_REPORT`` is set)."""

    def enabled(self) -> bool:
        """On when ``LLM_POWER_REPORT`` is set: a report is never written uninvited."""
        return bool(os.environ.get("LLM_POWER_REPORT"))

    async def on_run_end(self, data: RunEnd) -> None:
        """Write the reports of the run's tasks."""
        try:
            write_reports(data.logs, os.environ.get("LLM_POWER_REPORT", ""))
        except Exception as exc:  # noqa: BLE001 - a report must never break the eval that produced it
            import logging

            logging.getLogger(__name__).warning("llm-power report not written: %s", exc)


def _report_stem(task: str) -> str:
    """``llm-power-<task>``: the task's last path part with unsafe characters replaced, and a short hash
    of the whole task name whenever that changed it (``a/x``, ``b/x`` and ``a_x`` never share a report).
    """
    import hashlib

    last = task.split("/")[-1]
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in last)[:80] or "task"
    if safe != task:
        safe += "-" + hashlib.sha256(task.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"llm-power-{safe}"


def write_reports(logs: Any, target: str) -> list[Path]:
    """Diagnose each task's logs (two or more models) and write the reports; returns the files."""
    import warnings

    from ..io import align_results, read_results
    from ..rankings import rank_report
    from ..report.files import write_atomic
    from ..report.html import render_html
    from ..report.markdown import render_markdown
    from ..resolution import diagnose

    by_task: dict[str, list[str]] = {}
    for log in logs:
        if getattr(log, "status", "success") == "success" and getattr(log, "location", None):
            by_task.setdefault(str(log.eval.task), []).append(str(log.location))
    written = []
    for task, paths in by_task.items():
        if len(paths) < 2:
            continue
        frame = read_results([Path(p) for p in paths])
        if frame["model"].nunique() < 2:
            continue
        aligned = align_results(frame, on_missing="intersect")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diag = diagnose(aligned.scores, models=aligned.models, rng=0)  # the same report on every run
            rankings = rank_report(diag, rng=0)
        folder = Path(paths[0]).parent if target in ("", "1") else Path(target)
        folder.mkdir(parents=True, exist_ok=True)
        stem = _report_stem(task)
        title = f"Resolution report: {task}"
        written.append(Path(write_atomic(folder / f"{stem}.html",
                                         render_html(diag, title=title, source=task, rankings=rankings),
                                         inputs=tuple(paths))))
        written.append(Path(write_atomic(folder / f"{stem}.md", render_markdown(diag, title=title, rankings=rankings),
                                         inputs=tuple(paths))))
    return written


class _Running:
    """A stream of bounded values (scores in [low, high]) and its betting confidence sequence
    (:class:`llm_power._kernel.betting.BettingSequence`: valid at every look, no plug-in variance;
    created at the first value with the planned horizon; with ``null`` also the e-value of "the
    mean is ``null``"). A value outside the range makes the sequence invalid: it then never stops a
    run.
    """

    def __init__(self, low: float = 0.0, high: float = 1.0, null: float | None = None) -> None:
        self.n, self.total, self.low, self.high, self.null = 0, 0.0, low, high, null
        self.seq: Any = None
        self.invalid: str | None = None

    def add(self, value: float, horizon: int, alpha: float) -> None:
        from .._kernel.betting import BettingSequence

        self.n += 1
        self.total += value
        if self.invalid is not None:
            return
        if not (math.isfinite(value) and self.low <= value <= self.high):
            self.invalid = (f"a score of {value!r} is outside [{self.low:g}, {self.high:g}]: no anytime-valid "
                            "sequence, no early stop")
            return
        if self.seq is None:
            self.seq = BettingSequence(self.low, self.high, alpha_lower=alpha / 2, alpha_upper=alpha / 2,
                                       horizon=max(horizon, 1), null=self.null)
        self.seq.update(value)

    def sequence(self) -> tuple[float, float, float]:
        """(mean, lower, upper): the running mean and the confidence sequence's bounds."""
        if self.n == 0:
            return math.nan, -math.inf, math.inf
        mean = self.total / self.n
        if self.seq is None or self.invalid is not None:
            return mean, -math.inf, math.inf
        lo, hi = self.seq.bounds()
        return mean, lo, hi

    def leans_up(self) -> bool:
        """Whether the larger capital at the null bets on values above it (the side of a rejection)."""
        return self.seq is not None and bool(self.seq.null_log_up >= self.seq.null_log_down)

    def e_value(self) -> float:
        """The e-value of the null now (1 before any value or once invalid: no evidence)."""
        if self.seq is None or self.invalid is not None:
            return 1.0
        return float(self.seq.null_e_value())


def _bound(v: float) -> str:
    """A sequence bound for a stop's reason: four decimals, or two significant digits when that
    would print a bound just off 0 as 0 (the sequence excludes 0 and must not read as if not).
    """
    return f"{v:+.1e}" if 0 < abs(v) < 5e-5 else f"{v:+.4f}"


#: what ``resolve`` may ask for
RESOLVE_TARGETS = (True, False, "all", "top")


class AnytimeEarlyStopping:
    """Stop a task early on an anytime-valid confidence sequence (checked after every sample;
    valid under this optional stopping, unlike a fixed-n interval checked the same way).

    Criteria (at least one):

    - ``half_width``: stop a model's run once the confidence sequence of its mean score is
      narrower than this (score units; 0.02 = 2 points);
    - ``resolve=True``: with two models in the run, stop both once the confidence sequence of their
      paired difference (samples both have scored) excludes 0 -- the pair is *decided* (anytime
      valid; not the report's "resolved", which also asks q = N/N* >= 1). With three
      or more, every pair has its betting e-process and the e-BH procedure (Wang & Ramdas 2022) at
      false discovery rate 1 - ``confidence_level`` runs over all pairs after every sample: stop
      all runs once it decides every pair (``resolve=True`` or ``"all"``: the whole ranking) or
      once it puts one model ahead of each other one (``resolve="top"``: the winner is known). The
      expected share of false "A beats B" among the claims made at the stop is at most that rate.
      A sample enters the pairs once every model has scored it, so the stop uses complete rows
      only (a score already seen through one pair would otherwise inform another pair's next
      difference); the direction of a claim is the side whose capital rejected;
    - ``margin``: with two models, stop both once the pair's sequence lies inside (-margin,
      margin) -- shown not to differ by more than the margin (two models only).

    ``confidence_level`` (default 0.95) is that of each sequence; ``min_samples`` (default 30) the
    fewest scored samples (or pairs) before any stop. The sequences are tuned for the planned
    number of samples. Samples are stopped in schedule order: shuffle the dataset.
    """

    def __init__(self, half_width: float | None = None, *, resolve: bool | str = False, margin: float | None = None,
                 confidence_level: float = 0.95, min_samples: int = 30) -> None:
        if resolve not in RESOLVE_TARGETS or isinstance(resolve, int) and not isinstance(resolve, bool):
            msg = f"`resolve` must be True, False, 'all' or 'top'; got {resolve!r}."
            raise ValueError(msg)
        if half_width is None and not resolve and margin is None:
            msg = "give at least one stopping criterion: half_width, resolve=True or margin"
            raise ValueError(msg)
        for value, name in ((half_width, "half_width"), (margin, "margin")):
            if value is not None and not value > 0:
                msg = f"`{name}` must be positive; got {value!r}."
                raise ValueError(msg)
        self.half_width, self.margin = half_width, margin
        self.resolve: str | None = None if not resolve else ("top" if resolve == "top" else "all")
        self.level, self.min_samples = float(confidence_level), int(min_samples)
        self._planned: dict[str, int] = {}
        self._runs: dict[str, _Running] = {}
        self._scores: dict[str, dict[tuple[Any, int], float]] = {}
        self._pairs: dict[tuple[str, str], _Running] = {}
        self._pair_stop: str | None = None
        self._stops: dict[str, int] = {}

    @staticmethod
    def _model() -> str:
        from inspect_ai.model import get_model

        return str(get_model())  # the model of the task run calling (inspect's active model)

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        """Register a model's run of ``len(samples) * epochs`` planned samples."""
        model = str(getattr(task, "model", "") or self._model())
        if self.margin is not None and len(set(self._planned) | {model}) > 2:
            msg = ("AnytimeEarlyStopping(margin=...) compares two models; this run has more "
                   f"({', '.join(sorted(set(self._planned) | {model}))}). Use resolve= for a leaderboard.")
            raise ValueError(msg)
        self._planned[model] = max(len(samples) * epochs, 1)
        self._runs[model], self._scores[model], self._stops[model] = _Running(), {}, 0
        return "llm_power_anytime"

    def current(self, model: str | None = None) -> tuple[float, float]:
        """(mean, half-width of the confidence sequence) of a model's scored samples (default: the
        only or first model); the half-width is half the sequence's width (inf before any sample).
        """
        key = model if model is not None else next(iter(self._runs), "")
        mean, lo, hi = self._runs.get(key, _Running()).sequence()
        return mean, (hi - lo) / 2.0

    def pair(self, first: str | None = None, second: str | None = None) -> tuple[float, float]:
        """(mean difference of two models, first minus second in name order, and the half-width of
        its confidence sequence); by default the first two models in name order.
        """
        names = sorted(self._planned)
        a, b = sorted((first, second)) if first is not None and second is not None else (names + ["", ""])[:2]
        mean, lo, hi = self._pairs.get((a, b), _Running(-1.0, 1.0)).sequence()
        return mean, (hi - lo) / 2.0

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:  # noqa: A002 - protocol
        """Stop the sample when a criterion has been met."""
        model = self._model()
        reason = self._pair_stop
        if reason is None and self.half_width is not None and model in self._runs:
            _, half = self.current(model)
            if self._runs[model].n >= self.min_samples and half <= self.half_width:
                reason = f"confidence sequence half-width {half:.4f} <= {self.half_width:g}"
        if reason is None:
            return None
        self._stops[model] = self._stops.get(model, 0) + 1
        return EarlyStop(id=id, epoch=epoch, reason=reason)

    async def complete_sample(self, id: str | int, epoch: int,  # noqa: A002 - protocol
                              scores: dict[str, SampleScore]) -> None:
        """Add the sample's (first scorer's) score to its model's sequence and to its pairs'."""
        if not scores:
            return
        model = self._model()
        value = _TO_FLOAT(next(iter(scores.values())).score.value)
        alpha = 1.0 - self.level
        self._runs.setdefault(model, _Running()).add(value, self._planned.get(model, 1), alpha)
        self._scores.setdefault(model, {})[(id, epoch)] = value
        if self.resolve is None and self.margin is None:
            return
        # A sample enters the pairs once every model of the run has scored it (a complete row): a
        # stop then only ever depends on complete rows, and each pair's capital stays a test
        # martingale for the information the stop uses (a score of A already seen through the pair
        # A-C would otherwise tell about the A-B difference still to come).
        names = sorted(self._planned)  # each pair in name order: its sign does not depend on who started first
        if len(names) < 2 or any((id, epoch) not in self._scores.get(m, {}) for m in names):
            return
        horizon = min(self._planned.values(), default=1)
        row = [self._scores[m][(id, epoch)] for m in names]
        for i, a in enumerate(names):
            for j in range(i + 1, len(names)):
                run = self._pairs.setdefault((a, names[j]), _Running(-1.0, 1.0, null=0.0))
                run.add(row[i] - row[j], horizon, alpha)
        self._check_pairs()

    def _check_pairs(self) -> None:
        if self._pair_stop is not None:
            return
        names = sorted(self._planned)
        if len(names) == 2:
            run = self._pairs.get((names[0], names[1]))
            if run is None or run.n < self.min_samples:
                return
            mean, lo, hi = run.sequence()
            seq = f"sequence [{_bound(lo)}, {_bound(hi)}]"
            if self.resolve and (lo > 0 or hi < 0):
                self._pair_stop = f"pair decided: difference {mean:+.4f}, {seq} excludes 0"
            elif self.margin is not None and -self.margin < lo and hi < self.margin:
                self._pair_stop = f"pair within the margin: difference {mean:+.4f}, {seq} inside ±{self.margin:g}"
            return
        self._check_leaderboard(names)

    def _check_leaderboard(self, names: list[str]) -> None:
        """e-BH over every pair's e-value (three or more models): stop once it decides the ranking
        (``resolve="all"``) or puts one model ahead of every other (``"top"``).
        """
        from ..multiplicity import e_bh

        keys = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        runs = [self._pairs.get(k) for k in keys]
        if any(r is None or r.n < self.min_samples for r in runs):
            return
        found = e_bh([r.e_value() for r in runs if r is not None], q=1.0 - self.level)
        wins = {}
        for (a, b), run, hit in zip(keys, runs, found, strict=True):
            if hit and run is not None:  # the direction: the side whose capital rejected, not the mean's sign
                wins[(a, b) if run.leans_up() else (b, a)] = run.e_value()
        q = f"{1.0 - self.level:g}"
        if self.resolve == "all" and len(wins) == len(keys):
            order = sorted(names, key=lambda m: -sum((m, o) in wins for o in names))
            self._pair_stop = f"e-BH at FDR {q}: every pair decided: {' > '.join(order)}"
            return
        for top in names:
            if self.resolve == "top" and all((top, o) in wins for o in names if o != top):
                least = min(wins[(top, o)] for o in names if o != top)
                self._pair_stop = f"e-BH at FDR {q}: {top} ahead of every other model (smallest e-value {least:.3g})"
                return

    def pairs(self) -> dict[str, dict[str, Any]]:
        """Every pair with scored samples in common: ``"a vs b"`` (name order) -> items, mean
        difference a - b, its own confidence sequence at ``confidence_level`` (per pair, not
        adjusted for the selection) and e-value of "equally good".
        """
        out = {}
        for (a, b), run in sorted(self._pairs.items()):
            mean, lo, hi = run.sequence()
            out[f"{a} vs {b}"] = {"pairs": run.n, "difference": mean, "low": lo if math.isfinite(lo) else None,
                                  "high": hi if math.isfinite(hi) else None, "e_value": run.e_value()}
        return out

    async def complete_task(self) -> dict[str, Any]:
        """What stopping did for the calling model's run (and the pairs' sequences, with two or more models)."""
        model = self._model()
        mean, half = self.current(model)
        out: dict[str, Any] = {"model": model, "scored": self._runs.get(model, _Running()).n,
                               "stopped": self._stops.get(model, 0), "mean": mean,
                               "half_width": half if math.isfinite(half) else None,
                               "target_half_width": self.half_width, "confidence_level": self.level}
        names = sorted(self._planned)
        first = self._pairs.get((names[0], names[1])) if len(names) >= 2 else None
        if first is not None and first.n:
            d, h = self.pair()
            out.update(pairs=first.n, pair_models=names[:2], difference=d,
                       difference_half_width=h if math.isfinite(h) else None, pair_stop=self._pair_stop)
        if len(names) > 2:
            out.update(models=names, pair_stop=self._pair_stop, leaderboard=self.pairs())
        return out
