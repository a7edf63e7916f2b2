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
    models = sorted(dict.fromkeys(frame["model"]), key=str)  # a total order: the same whatever the file order
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
    per_model = {m: set(frame.loc[frame["model"] == m, "item"]) for m in models}
    all_items = set().union(*per_model.values())
    common = set.intersection(*per_model.values())
    missing = {m: len(all_items - per_model[m]) for m in models}
    dropped = {m: len(per_model[m] - common) for m in models}  # results of each model left out
    note = _missing_items(per_model, all_items, common, missing, on_missing)
    items = sorted(common, key=lambda item: (_natural(item), str(item)))  # total order: 'q1' and 'q01' never tie
    index = {item: i for i, item in enumerate(items)}
    scores = np.full((len(items), len(models)), np.nan)
    sub = frame[frame["item"].isin(common)]
    cols = {m: j for j, m in enumerate(models)}
    scores[sub["item"].map(index).to_numpy(), sub["model"].map(cols).to_numpy()] = sub["score"].to_numpy(dtype=float)
    clusters = None
    if "cluster" in frame.columns:
        labels = sub.dropna(subset=["cluster"]).groupby("item")["cluster"]
        conflict = labels.nunique()
        if (conflict > 1).any():
            item = conflict[conflict > 1].index[0]
            msg = f"item {item!r} has different cluster labels across models"
            raise DataError(msg)
        first = labels.first()
        missing_label = [it for it in items if it not in first.index]
        if missing_label:
            msg = f"item {missing_label[0]!r} has no cluster label"
            raise DataError(msg)
        clusters = [str(first[it]) for it in items]
    return Aligned(items=items, models=models, scores=scores, clusters=clusters, dropped=dropped, note=note)


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


def _missing_items(per_model: dict[str, set[Any]], all_items: set[Any], common: set[Any], missing: dict[str, int],
                   on_missing: str) -> str:
    """The error for items some model lacks, or with ``intersect`` the note on what was dropped."""
    if common == all_items:
        return ""
    if on_missing == "error":
        first = {m: (k, min(all_items - per_model[m], key=lambda i: (_natural(i), str(i))))
                 for m, k in missing.items() if k}
        raise _not_aligned(first, len(all_items))
    if not common:
        raise _disjoint()
    return _intersection_note(len(common), len(all_items), missing)


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
