"""Align several models' per-item results into the items x models matrix, with an explicit policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DataError

__all__ = ["Aligned", "align_matrix", "align_results"]


@dataclass(frozen=True)
class Aligned:
    """The aligned matrix and what alignment did."""

    items: list[Any]
    models: list[Any]
    scores: np.ndarray
    clusters: list[Any] | None
    dropped: dict[str, Any] = field(default_factory=dict)
    note: str = ""


def align_results(frame: Any, *, on_missing: str = "error") -> Aligned:
    """Items x models matrix from the long table of :func:`read_results`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``model, item, score`` and optionally ``cluster``, ``target``, ``source``.
    on_missing : {"error", "intersect"}, default "error"
        Items that some model lacks: an error naming the models and counts (default), or
        ``"intersect"``: keep the items every model has and report how many were dropped per model.

    Notes
    -----
    Duplicate (model, item) records and items whose target (reference answer) differs between
    models are always errors: they mean different things are being compared.
    """
    from .._validation import check_option

    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    dup = frame.duplicated(["model", "item"], keep=False)
    if dup.any():
        row = frame[dup].iloc[0]
        sources = sorted(set(frame[dup & (frame["model"] == row["model"]) & (frame["item"] == row["item"])]["source"]))
        msg = (
            f"model {row['model']!r} has item {row['item']!r} more than once "
                        f"(in {', '.join(sources)}); give each model's results once"
        )
        raise DataError(msg)
    models = sorted(frame["model"].unique().tolist(), key=str)  # a total order: the same whatever the file order
    if len(models) < 2:
        msg = (
            f"found results of {len(models)} model ({', '.join(map(repr, models))}); "
                        "diagnose compares two or more models on the same items"
        )
        raise DataError(msg)
    if "target" in frame.columns:
        targets = frame.dropna(subset=["target"])
        if len(targets):
            n_targets = targets.groupby("item")["target"].nunique()
            bad = n_targets[n_targets > 1]
            if len(bad):
                item = bad.index[0]
                vals = targets[targets["item"] == item][["model", "target"]].drop_duplicates("target")
                detail = "; ".join(f"{m}: {str(t)[:30]!r}" for m, t in zip(vals["model"], vals["target"], strict=False))
                msg = (
                    f"item {item!r} has different targets across models ({detail}); "
                                f"{len(bad)} item(s) disagree -- the runs used different data and must not be mixed"
                )
                raise DataError(msg)
    return _align_codes(frame, models, on_missing)


def _align_codes(frame: Any, models: list[Any], on_missing: str) -> Aligned:
    """The matrix of a long table from integer codes of models and items (O(rows), no per-model
    sets): which items each model has, the intersection, the natural order, the scores.
    """
    import pandas as pd

    model_code = pd.Categorical(frame["model"], categories=models).codes.astype(np.intp)
    item_code, item_values = pd.factorize(frame["item"], sort=False)
    n_items, n_models = len(item_values), len(models)
    item_names = list(item_values)
    has = np.bincount(item_code, minlength=n_items)  # models per item (no duplicates: checked)
    per_model = np.bincount(model_code, minlength=n_models)
    missing = {models[k]: int(n_items - per_model[k]) for k in range(n_models)}
    rank = np.empty(n_items, dtype=np.intp)  # natural order of the items: 'q1' and 'q01' never tie
    rank[sorted(range(n_items), key=lambda r: (_natural(item_names[r]), str(item_names[r])))] = np.arange(n_items)
    common = has == n_models
    note = ""
    if not common.all():
        if on_missing == "error":
            raise _not_aligned(_first_lacking(item_code, model_code, models, missing, rank, item_names), n_items)
        if not common.any():
            raise _disjoint()
        note = _intersection_note(int(common.sum()), n_items, missing)
    kept = np.flatnonzero(common)
    kept = kept[np.argsort(rank[kept], kind="stable")]
    row_of = np.full(n_items, -1, dtype=np.intp)
    row_of[kept] = np.arange(kept.size)
    take = row_of[item_code] >= 0
    scores = np.full((kept.size, n_models), np.nan)
    scores[row_of[item_code[take]], model_code[take]] = frame["score"].to_numpy(dtype=float)[take]
    dropped = {models[k]: int(per_model[k]) - int(kept.size) for k in range(n_models)}
    items = [item_names[r] for r in kept]
    clusters = None
    if "cluster" in frame.columns:
        clusters = _cluster_labels(frame["cluster"].to_numpy(dtype=object)[take], row_of[item_code[take]], items)
    return Aligned(items=items, models=models, scores=scores, clusters=clusters, dropped=dropped, note=note)


def _first_lacking(item_code: np.ndarray, model_code: np.ndarray, models: list[Any], missing: dict[Any, int],
                   rank: np.ndarray, item_names: list[Any]) -> dict[Any, tuple[int, Any]]:
    """For each model that lacks items: how many, and the first it lacks in natural order."""
    out = {}
    by_rank = np.argsort(rank)  # item codes in natural order
    for k, m in enumerate(models):
        if missing[m]:
            present = np.zeros(len(item_names), dtype=bool)
            present[item_code[model_code == k]] = True
            first = by_rank[np.argmax(~present[by_rank])]
            out[m] = (missing[m], item_names[first])
    return out


def _cluster_labels(labels: np.ndarray, rows: np.ndarray, items: list[Any]) -> list[str]:
    """One cluster label per kept item: all its models must agree and one must give it."""
    import pandas as pd

    table = pd.DataFrame({"row": rows, "cluster": labels}).dropna(subset=["cluster"])
    grouped = table.groupby("row")["cluster"]
    conflict = grouped.nunique()
    if (conflict > 1).any():
        msg = f"item {items[int(conflict[conflict > 1].index[0])]!r} has different cluster labels across models"
        raise DataError(msg)
    first = grouped.first()
    if len(first) < len(items):
        missing_label = next(k for k in range(len(items)) if k not in first.index)
        msg = f"item {items[missing_label]!r} has no cluster label"
        raise DataError(msg)
    return [str(v) for v in first.sort_index().tolist()]


def align_matrix(items: list[Any], models: list[Any], scores: np.ndarray, clusters: list[Any] | None, *,
                 on_missing: str = "error") -> Aligned:
    """:func:`align_results` for a wide table read straight into a matrix (one row per item, one
    column per model, NaN where a model lacks an item): the same rules and the same result as the
    long path (items in natural order, models sorted, the same errors and notes), without a row
    per (model, item).
    """
    from .._validation import check_option

    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    dup = next((m for k, m in enumerate(models) if m in models[:k]), None) if len(set(models)) < len(models) else None
    if dup is not None:
        msg = f"model {dup!r} appears more than once; give each model's results once"
        raise DataError(msg)
    scores = np.asarray(scores, dtype=float)
    present = ~np.isnan(scores)
    rows = present.any(axis=1)  # items some model has (an all-empty row is no item at all)
    model_order = sorted(range(len(models)), key=lambda k: str(models[k]))
    names = [models[k] for k in model_order]
    if len(names) < 2:
        msg = (f"found results of {len(names)} model ({', '.join(map(repr, names))}); "
               "diagnose compares two or more models on the same items")
        raise DataError(msg)
    item_order = sorted(np.flatnonzero(rows).tolist(), key=lambda r: (_natural(items[r]), str(items[r])))
    lacking = rows[:, None] & ~present  # (items, models)
    missing = {models[k]: int(lacking[:, k].sum()) for k in model_order}
    note = ""
    if any(missing.values()):
        all_count = int(rows.sum())
        common_rows = [r for r in item_order if present[r].all()]
        if on_missing == "error":
            first = {k: next(items[r] for r in item_order if lacking[r, k]) for k in model_order if missing[models[k]]}
            raise _not_aligned({models[k]: (missing[models[k]], item) for k, item in first.items()}, all_count)
        if not common_rows:
            raise _disjoint()
        note = _intersection_note(len(common_rows), all_count, missing)
        item_order = common_rows
    take = np.asarray(item_order, dtype=np.intp)
    matrix = np.ascontiguousarray(scores[np.ix_(take, np.asarray(model_order, dtype=np.intp))])
    dropped = {models[k]: int(present[:, k].sum()) - take.size for k in model_order}
    return Aligned(items=[items[r] for r in take], models=names, scores=matrix,
                   clusters=None if clusters is None else [str(clusters[r]) for r in take], dropped=dropped, note=note)


def _natural(item: str) -> tuple[Any, ...]:
    """Sort 'task:10' after 'task:9'."""
    import re

    # ASCII digits only: '①' or '٣' are characters of the id, not numbers to sort by
    return tuple(int(t) if t.isascii() and t.isdigit() else t for t in re.split(r"([0-9]+)", str(item)))



def _not_aligned(lacking: dict[Any, tuple[int, Any]], n_items: int) -> DataError:
    """The error for models that lack items: per model, how many and the first (natural order)."""
    worst = [f"{m} lacks {k} of {n_items} items, first {item!r}" for m, (k, item) in lacking.items()]
    return DataError(f"models were not run on the same items ({'; '.join(worst)}); use --on-missing intersect to "
                     "keep the items every model has")


def _disjoint() -> DataError:
    return DataError("no item is shared by all models (disjoint item sets): nothing to compare")


def _intersection_note(kept: int, total: int, missing: dict[Any, int]) -> str:
    """What ``on_missing="intersect"`` did, naming (at most eight of) the models that lacked items."""
    lacking = [f"{m} {k}" for m, k in missing.items() if k]
    shown = ", ".join(lacking[:8]) + (f", and {len(lacking) - 8} more" if len(lacking) > 8 else "")
    return (f"intersection of items: {kept} of {total} kept ({total - kept} dropped from every model's results); "
            f"models lacking items: {shown}")
