"""One model given to ``diagnose``: its score with an interval, and where to go next (no dead end)."""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from .._format import fmt_score
from ..report.terminal import dump_json, print_table, say

__all__ = ["one_model_summary", "print_one_model"]


def one_model_summary(scores: Any, clusters: Any, *, confidence_level: float) -> dict[str, Any]:
    """Score and interval of one model's per-item scores: Wilson for 0/1 scores, Student t for
    graded ones; with clusters a cluster-robust t interval (CR2 design effect, Imbens-Kolesar df).
    """
    from .._kernel.clusters import code_labels, mean_variance
    from .._kernel.quantiles import interval_half_width

    x = np.asarray(scores, dtype=float)
    n = int(x.size)
    binary = bool(np.isin(x, (0.0, 1.0)).all())
    mean = float(x.mean())
    out: dict[str, Any] = {"n": n, "binary": binary, "mean": mean, "confidence_level": confidence_level}
    if clusters is not None and len(set(clusters)) >= 2:
        codes, g = code_labels(clusters, n)
        v = mean_variance(x, codes, g, kind="cr2", ddof=0 if binary else 1)
        half = float(interval_half_width(math.sqrt(float(v.variance[0])), confidence_level, "two-sided",
                                         float(v.df[0])))
        low, high = (max(mean - half, 0.0), min(mean + half, 1.0)) if binary else (mean - half, mean + half)
        out.update(method="cluster-robust t (CR2)", low=low, high=high, n_clusters=g,
                   design_effect=float(v.design_effect[0]), df=float(v.df[0]))
    elif binary:
        from ..intervals import proportion_ci

        ci = proportion_ci(int(x.sum()), n, method="wilson", confidence_level=confidence_level)
        out.update(method="Wilson", low=float(ci.low), high=float(ci.high))
    else:
        se = float(x.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
        half = float(interval_half_width(se, confidence_level, "two-sided", n - 1)) if n > 1 else math.nan
        out.update(method="Student t", low=mean - half, high=mean + half)
    return out


def print_one_model(args: argparse.Namespace, model: str, scores: Any, clusters: Any) -> int:
    """Print one model's score and interval and point to ``ci`` / ``plan``; returns 0."""
    level = getattr(args, "confidence_level", 0.95)
    summary = {"model": model, **one_model_summary(scores, clusters, confidence_level=level)}
    if args.format == "json":
        dump_json(summary)
        return 0
    binary, n = summary["binary"], summary["n"]
    lo, hi = summary["low"], summary["high"]
    interval = f"{100 * lo:.1f} – {100 * hi:.1f}%" if binary else f"{lo:.4g} – {hi:.4g}"
    half = f"±{100 * (hi - lo) / 2:.1f} points" if binary else f"±{(hi - lo) / 2:.3g}"
    say(f"One model ({model}): nothing to compare; its score and {100 * level:g}% interval.")
    # the name is in the sentence above (a long one would squeeze the numbers)
    print_table(f"{n:,} items", ["score" if binary else "mean score", f"{100 * level:g}% interval", "±", "method"],
                [[fmt_score(summary["mean"], binary), interval, half, summary["method"]]], right_align=(0, 1, 2))
    k = int(round(summary["mean"] * n))
    if binary:
        say(f"next: llm-power ci {k} {n} --method all   (every interval method for this score)")
    say(f"next: llm-power plan mde --n {n}   (the smallest gap to another model these {n:,} items can detect)")
    say("next: add a second model's results to compare them (llm-power compare / diagnose)")
    return 0
