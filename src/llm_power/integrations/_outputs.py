"""What the trackers receive from a diagnosis, built once for MLflow, W&B and OpenTelemetry: the pairs
table (:meth:`Diagnosis.to_frame`, as it is), flat per-pair metrics under sanitized names, each pair's
verdict under the report's headline regime, and the HTML report.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["check_diagnosis", "flat_metrics", "metric_name", "pair_verdicts", "pairs_frame", "report_html"]

#: the intervals of the gap a diagnosis may carry: regime key -> its (low, high) columns
_INTERVALS = {"iid": ("ci_low", "ci_high"), "cluster": ("cluster_ci_low", "cluster_ci_high"),
              "run": ("run_ci_low", "run_ci_high")}
#: the characters MLflow accepts in a metric name (W&B accepts these too)
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. /:]")


def check_diagnosis(result: Any, function: str) -> Any:
    """``result`` if it is a :class:`~llm_power.Diagnosis`, else a TypeError in the house template."""
    from ..resolution import Diagnosis

    if not isinstance(result, Diagnosis):
        msg = f"`result` of {function} must be a Diagnosis (lp.diagnose(...)); got {type(result).__name__}."
        raise TypeError(msg)
    return result


def metric_name(*parts: str) -> str:
    """A metric name every tracker accepts: the parts joined by ``/``, any other character ``_``."""
    return "/".join(_UNSAFE.sub("_", str(p)).strip() or "_" for p in parts)[:250]


def pair_verdicts(diag: Any) -> list[dict[str, Any]]:
    """Per pair, in rank order: the models, the gap and its intervals, the p-value, and per regime
    computed its N*, q and verdict; ``verdict`` is the headline regime's ("resolved"/"unresolved").
    ``intervals`` maps each interval the diagnosis carries (``iid``, ``cluster``, ``run``) to its bounds;
    ``interval`` names the one to show: the clustered or the runs' one when computed (the IID interval is
    too narrow then), else the IID one.
    """
    cols = diag.columns
    headline = diag.headline
    out = []
    for k in range(len(cols["delta"]) if "delta" in cols else 0):
        row: dict[str, Any] = {"model_a": str(cols["model_a"][k]), "model_b": str(cols["model_b"][k]),
                               "gap": float(cols["delta"][k]), "ci_low": float(cols["ci_low"][k]),
                               "ci_high": float(cols["ci_high"][k]), "pvalue": float(cols["pvalue"][k]),
                               "regimes": {}}
        row["intervals"] = {key: (float(cols[lo][k]), float(cols[hi][k])) for key, (lo, hi) in _INTERVALS.items()
                            if key in diag.n_unresolved and lo in cols and hi in cols}
        row["interval"] = next((key for key in ("cluster", "run") if key in row["intervals"]), "iid")
        for regime in diag.regimes:
            row["regimes"][regime.key] = {"n_star": float(cols[regime.n_star_field][k]),
                                          "q": float(cols[regime.q_field][k]),
                                          "resolved": bool(cols[regime.resolved_field][k])}
        row["verdict"] = "resolved" if row["regimes"][headline.key]["resolved"] else "unresolved"
        row["headline"] = headline.key
        out.append(row)
    return out


def flat_metrics(diag: Any, prefix: str = "llm_power") -> dict[str, float]:
    """Flat numbers for a tracker: per pair ``PREFIX/A_vs_B/gap``, ``ci_low``, ``ci_high`` (and
    ``ci_low_cluster``, ``ci_high_cluster``, ``_run`` when computed), ``pvalue``,
    per regime ``n_star[_REGIME]``, ``q[_REGIME]``, ``resolved[_REGIME]`` (1/0) and ``verdict`` (1 when
    the headline regime resolves the pair); and ``PREFIX/n_unresolved[_REGIME]``, ``PREFIX/n_items``.
    Non-finite numbers (an N* of a zero gap) are left out: trackers store them unevenly.
    """
    out: dict[str, float] = {metric_name(prefix, "n_items"): float(diag.n)}
    for key, count in diag.n_unresolved.items():
        out[metric_name(prefix, "n_unresolved" if key == "iid" else f"n_unresolved_{key}")] = float(count)
    for row in pair_verdicts(diag):
        pair = f"{row['model_a']}_vs_{row['model_b']}"
        values = {"gap": row["gap"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "pvalue": row["pvalue"],
                  "verdict": 1.0 if row["verdict"] == "resolved" else 0.0}
        for key, (low, high) in row["intervals"].items():
            if key != "iid":
                values[f"ci_low_{key}"], values[f"ci_high_{key}"] = low, high
        for key, regime in row["regimes"].items():
            suffix = "" if key == "iid" else f"_{key}"
            values[f"n_star{suffix}"] = regime["n_star"]
            values[f"q{suffix}"] = regime["q"]
            values[f"resolved{suffix}"] = 1.0 if regime["resolved"] else 0.0
        for field, value in values.items():
            if math.isfinite(value):
                out[metric_name(prefix, pair, field)] = float(value)
    return out


def pairs_frame(diag: Any) -> Any:
    """The pairs table (:meth:`Diagnosis.to_frame`) with its text columns as ``object``: the trackers
    pick them with ``select_dtypes("object")``, which pandas 3 no longer extends to its ``str`` dtype.
    """
    frame = diag.to_frame()
    return frame.astype({c: object for c in frame.columns if frame[c].dtype.kind not in "biufcmM"})


def report_html(diag: Any, *, title: str = "Leaderboard resolution report", source: str = "") -> str:
    """The self-contained HTML report of the diagnosis."""
    from ..report.html import render_html

    return render_html(diag, title=title, source=source)
