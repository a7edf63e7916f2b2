"""The inspect_ai extension (``pip install 'llm-power[inspect]'``), registered through the
``inspect_ai`` entry-point group as inspect documents for extension packages.

- Metrics ``llm_power/interval(method=..., confidence_level=..., cluster=...)`` — the score's
  interval (Wilson / Clopper-Pearson / Jeffreys for 0/1 scores, Student t for graded ones; with
  ``cluster`` a sample-metadata key, the cluster-robust t interval), reported as
  ``ci_low``/``ci_high`` (``ci_low_<cluster>``/``ci_high_<cluster>``) — and ``llm_power/mde()``,
  the paired gap this run could detect at alpha = 0.05 and power 0.8 against a model with
  independent errors.
- A hook that, when ``LLM_POWER_REPORT`` is set (to a folder, or to ``1`` for the log folder),
  runs ``diagnose`` over each task's logs at the end of a run with two or more models and writes
  ``llm-power-<task>.html`` and ``.md`` there.
- :class:`AnytimeEarlyStopping`: stops a task once the anytime-valid confidence sequence of its
  mean score is narrower than a target half-width — valid however often it is checked, which a
  fixed-n interval is not. The samples left out are the later ones in the schedule: shuffle the
  dataset (``shuffle=True``) so that the samples run are a random subset.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.scorer import Metric, SampleScore, Value, metric, value_to_float
from inspect_ai.util import EarlyStop

__all__ = ["AnytimeEarlyStopping", "LLMPowerReport", "interval", "mde"]


_TO_FLOAT = value_to_float()  # inspect's own reading of C / I / P / N, booleans and numbers


def _values(scores: list[SampleScore]) -> np.ndarray:
    return np.array([_TO_FLOAT(s.score.value) for s in scores], dtype=float)


@metric
def interval(method: str = "wilson", confidence_level: float = 0.95, cluster: str | None = None) -> Metric:
    """The mean score's interval: ``{"ci_low": ..., "ci_high": ...}`` (with ``cluster``:
    ``ci_low_<cluster>``/``ci_high_<cluster>``, so both can be listed on one scorer).
    """
    from scipy import stats

    from ..clustering import cluster_robust_se
    from ..intervals import proportion_ci

    def compute(scores: list[SampleScore]) -> Value:
        x = _values(scores)
        n = x.size
        low, high = ("ci_low", "ci_high") if cluster is None else (f"ci_low_{cluster}", f"ci_high_{cluster}")
        if n == 0:
            return {low: math.nan, high: math.nan}
        if cluster is not None:
            labels = [str((s.sample_metadata or {}).get(cluster)) for s in scores]
            se = float(cluster_robust_se(x, labels))
            g = len(set(labels))
            half = float(stats.t.isf((1 - confidence_level) / 2, max(g - 1, 1))) * se
            return {low: float(x.mean() - half), high: float(x.mean() + half)}
        if np.all((x == 0) | (x == 1)):
            ci = proportion_ci(int(x.sum()), n, method=method, confidence_level=confidence_level)
            return {low: float(ci.low), high: float(ci.high)}
        half = float(stats.t.isf((1 - confidence_level) / 2, max(n - 1, 1))) * float(x.std(ddof=1)) / math.sqrt(n)
        return {low: float(x.mean() - half), high: float(x.mean() + half)}

    return compute


@metric
def mde(alpha: float = 0.05, power: float = 0.8) -> Metric:
    """The paired gap (score units) this run could detect against a model with independent errors."""
    from ..planning import mde as paired_mde

    def compute(scores: list[SampleScore]) -> Value:
        x = _values(scores)
        if x.size < 2:
            return math.nan
        if np.all((x == 0) | (x == 1)):
            p = min(max(float(x.mean()), 1e-9), 1 - 1e-9)
            return float(paired_mde(x.size, p=p, rho=0.0, alpha=alpha, power=power))
        from .._kernels import mde_from_variance

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


def write_reports(logs: Any, target: str) -> list[Path]:
    """Diagnose each task's logs (two or more models) and write the reports; returns the files."""
    import warnings

    from ..io import align_results, read_results
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
            diag = diagnose(aligned.scores, models=aligned.models)
        folder = Path(paths[0]).parent if target in ("", "1") else Path(target)
        folder.mkdir(parents=True, exist_ok=True)
        stem = "llm-power-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in task.split("/")[-1])
        title = f"Resolution report: {task}"
        written.append(Path(write_atomic(folder / f"{stem}.html", render_html(diag, title=title, source=task),
                                         inputs=tuple(paths))))
        written.append(Path(write_atomic(folder / f"{stem}.md", render_markdown(diag, title=title),
                                         inputs=tuple(paths))))
    return written


class AnytimeEarlyStopping:
    """Stop a task when the anytime-valid confidence sequence of its mean score is narrower than
    ``half_width`` (checked after every sample; valid under this optional stopping).

    Parameters
    ----------
    half_width : float
        Target half-width of the confidence sequence (score units; 0.02 = 2 points).
    confidence_level : float, default 0.95
    min_samples : int, default 30
        Never stop before this many scored samples.
    """

    def __init__(self, half_width: float, *, confidence_level: float = 0.95, min_samples: int = 30) -> None:
        if not half_width > 0:
            msg = f"`half_width` must be positive; got {half_width!r}."
            raise ValueError(msg)
        self.half_width, self.level, self.min_samples = float(half_width), float(confidence_level), int(min_samples)
        self._n, self._sum, self._sumsq, self._planned = 0, 0.0, 0.0, 1
        self._stopped: list[tuple[Any, int]] = []

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:  # noqa: ARG002 - protocol
        """Reset for a task of ``len(samples) * epochs`` planned samples (the sequence's horizon)."""
        self._n, self._sum, self._sumsq, self._planned = 0, 0.0, 0.0, max(len(samples) * epochs, 1)
        self._stopped = []
        return "llm_power_anytime"

    def current(self) -> tuple[float, float]:
        """(mean, half-width of the confidence sequence) of the samples scored so far."""
        from ..gating import anytime_half_width

        if self._n < 2:
            return math.nan, math.inf
        mean = self._sum / self._n
        var = max(self._sumsq / self._n - mean * mean, 0.0) * self._n / (self._n - 1)
        alpha = 1.0 - self.level
        return mean, anytime_half_width(self._n, self._planned, alpha) * math.sqrt(var / self._n)

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:  # noqa: A002 - protocol
        """Stop every later sample once the confidence sequence is narrow enough."""
        _, half = self.current()
        if self._n >= self.min_samples and half <= self.half_width:
            self._stopped.append((id, epoch))
            return EarlyStop(id=id, epoch=epoch, reason=f"confidence sequence half-width {half:.4f} <= "
                                                        f"{self.half_width:g}")
        return None

    async def complete_sample(self, id: str | int, epoch: int,  # noqa: A002, ARG002 - protocol
                              scores: dict[str, SampleScore]) -> None:
        """Add the sample's (first scorer's) score."""
        if not scores:
            return
        value = _TO_FLOAT(next(iter(scores.values())).score.value)
        self._n += 1
        self._sum += value
        self._sumsq += value * value

    async def complete_task(self) -> dict[str, Any]:
        """What stopping did: samples scored and stopped, the mean and the half-width reached."""
        mean, half = self.current()
        return {"scored": self._n, "stopped": len(self._stopped), "mean": mean,
                "half_width": half if math.isfinite(half) else None, "target_half_width": self.half_width,
                "confidence_level": self.level}
