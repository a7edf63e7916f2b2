"""Align several models' per-item results into the items x models matrix, with an explicit policy."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._core.errors import DataError
from .._core.order import natural_key, natural_order
from ..matrix import ScoreMatrix

__all__ = ["Aligned", "ScoreMatrix", "align_matrix", "align_results"]


#: the name this type had before :class:`~llm_power.matrix.ScoreMatrix` (kept: public in ``llm_power.io``)
Aligned = ScoreMatrix


def align_results(frame: Any, *, on_missing: str = "error", min_models: int = 2) -> ScoreMatrix:
    """Items x models matrix from the long table of :func:`read_results`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``model, item, score`` and optionally ``cluster``, ``target``, ``source``.
    on_missing : {"error", "intersect"}, default "error"
        Items that some model lacks: an error naming the models and counts (default), or
        ``"intersect"``: keep the items every model has and report how many were dropped per model.
    min_models : int, default 2
        Fewer models is an error (comparisons need two; ``llm-power subset estimate`` takes one).

    Returns
    -------
    ScoreMatrix
        A :class:`~llm_power.ScoreMatrix`, which methods take whole (``diagnose(matrix)`` reads the
        models' names and the clusters from it; ``llm_power.io.Aligned`` is the same class under its
        former name). ``items``: the item ids kept, in natural order ("q2" before "q10");
        ``models``: the model names, sorted as text; ``scores``: float array of shape (len(items),
        len(models)) without missing values; ``clusters``: one label (text) per item when ``frame``
        has a ``cluster`` column (every model must give the item the same label), else None;
        ``note``: what ``"intersect"`` dropped, in words ("" when nothing was); ``dropped``: per
        model, how many of its items were not kept.

    Notes
    -----
    Duplicate (model, item) records and items whose target (reference answer) differs between
    models are always errors: they mean different things are being compared.

    Examples
    --------
    Model B was not run on item q2:

    >>> import pandas as pd
    >>> from llm_power.io import align_results
    >>> frame = pd.DataFrame({"model": ["model-a"] * 3 + ["model-b"] * 2,
    ...                       "item": ["q1", "q2", "q10", "q1", "q10"], "score": [1, 0, 1, 1, 0]})
    >>> m = align_results(frame, on_missing="intersect")
    >>> m.items, m.models, m.scores.tolist()
    (['q1', 'q10'], ['model-a', 'model-b'], [[1.0, 1.0], [1.0, 0.0]])
    >>> m.dropped
    {'model-a': 1, 'model-b': 0}
    """
    from .._core.validation import check_option

    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    check_duplicates(frame)
    models = sorted(frame["model"].unique().tolist(), key=str)  # a total order: the same whatever the file order
    if len(models) < min_models:
        raise too_few_models(models)
    conflict = target_conflicts(frame)
    if conflict is not None:
        raise targets_differ(*conflict)
    return _align_codes(frame, models, on_missing)


def check_duplicates(frame: Any) -> None:
    """A model with an item more than once is an error naming the item and its files."""
    import pandas as pd

    model_code, models = pd.factorize(frame["model"], sort=False)
    item_code, _ = pd.factorize(frame["item"], sort=False)
    key = item_code.astype(np.int64) * max(len(models), 1) + model_code
    if not key.size:
        return
    dense = key.max() < 4 * key.size + 1024  # count in an array, else sort
    if not (np.bincount(key).max() > 1 if dense else np.unique(key).size < key.size):
        return
    dup = frame.duplicated(["model", "item"], keep=False)
    if dup.any():
        row = frame[dup].iloc[0]
        sources = sorted(set(frame[dup & (frame["model"] == row["model"]) & (frame["item"] == row["item"])]["source"]))
        msg = (
            f"model {row['model']!r} has item {row['item']!r} more than once "
                        f"(in {', '.join(map(str, sources))}); give each model's results once"
        )
        raise DataError(msg)


def check_unique_items(items: list[Any], source: str) -> None:
    """A wide table with an item on two rows is an error naming the item (its n would be inflated)."""
    seen: set[Any] = set()
    for row, item in enumerate(items):
        if item in seen:
            msg = f"item {item!r} is on more than one row (again at row {row + 1}); give each item once"
            raise DataError(msg, file=source)
        seen.add(item)


def too_few_models(models: list[Any]) -> DataError:
    """The error for too few models (none, or one where two are compared)."""
    if not models:
        return DataError("found no model's results")
    return DataError(f"found results of {len(models)} model ({', '.join(map(repr, models))}); "
                     "diagnose compares two or more models on the same items")


def target_conflicts(frame: Any) -> tuple[int, Any, str] | None:
    """Items whose target (reference answer) differs between models: how many, the first and the
    targets it has (None when they all agree or the format has none).
    """
    if "target" not in frame.columns:
        return None
    import pandas as pd

    item_code, item_values = pd.factorize(frame["item"], sort=False)
    target_code, _ = pd.factorize(frame["target"], sort=False)  # None/NaN: -1, never a conflict
    lo, hi = _code_range(target_code, item_code, len(item_values))
    bad = np.flatnonzero(lo < hi)
    if not bad.size:
        return None
    item = min((item_values[k] for k in bad), key=natural_key)
    rows = frame[(frame["item"] == item) & (target_code >= 0)][["model", "target"]]
    rows = rows.iloc[np.argsort(rows["model"].astype(str).to_numpy(), kind="stable")].drop_duplicates("target")
    detail = "; ".join(f"{m}: {str(t)[:30]!r}" for m, t in zip(rows["model"], rows["target"], strict=False))
    return int(bad.size), item, detail


def targets_differ(count: int, item: Any, detail: str) -> DataError:
    """The error for items scored against different targets."""
    return DataError(f"item {item!r} has different targets across models ({detail}); {count} item(s) disagree -- "
                     "the runs used different data and must not be mixed")


def _align_codes(frame: Any, models: list[Any], on_missing: str) -> ScoreMatrix:
    """The matrix of a long table with the missing-item policy applied."""
    aligned, lacking, n_items = align_common(frame, models)
    note = ""
    if lacking:
        if not aligned.items:  # not missing items: different tasks (--on-missing cannot help)
            raise disjoint(per_model_items(frame))
        if on_missing == "error":
            raise not_aligned(lacking, n_items)
        note = intersection_note(len(aligned.items), n_items, {m: k for m, (k, _) in lacking.items()})
    return dataclasses.replace(aligned, note=note)


def align_common(frame: Any, models: list[Any]) -> tuple[ScoreMatrix, dict[Any, tuple[int, Any]], int]:
    """The items every model has, as a matrix from integer codes of models and items (O(rows), no
    per-model sets), in natural item order; which models lack items (how many, the first in
    natural order); and how many items there are in all. Items are independent of each other, so
    disjoint sets of items can be aligned apart (:mod:`llm_power.engines.dask`).
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
    rank[natural_order(item_names)] = np.arange(n_items)
    common = has == n_models
    lacking = {} if common.all() else _first_lacking(item_code, model_code, models, missing, rank, item_names)
    kept = np.flatnonzero(common)
    kept = kept[np.argsort(rank[kept], kind="stable")]
    row_of = np.full(n_items, -1, dtype=np.intp)
    row_of[kept] = np.arange(kept.size)
    take: Any = row_of[item_code] >= 0
    if take.all():  # every item kept (the usual case): no copies of the rows' columns
        take = slice(None)
    scores = np.full((kept.size, n_models), np.nan)
    scores[row_of[item_code[take]], model_code[take]] = frame["score"].to_numpy(dtype=float)[take]
    dropped = {models[k]: int(per_model[k]) - int(kept.size) for k in range(n_models)}
    items = [item_names[r] for r in kept]
    clusters = None
    if "cluster" in frame.columns:
        label_code, label_values = pd.factorize(frame["cluster"], sort=False)  # None/NaN: -1
        clusters = _cluster_labels(label_code[take], list(label_values), row_of[item_code[take]], items)
    return (ScoreMatrix(items=items, models=models, scores=scores, clusters=clusters, dropped=dropped), lacking,
            n_items)


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


def _cluster_labels(codes: np.ndarray, values: list[Any], rows: np.ndarray, items: list[Any]) -> list[str]:
    """One cluster label per kept item (``codes`` of the labels per row, -1 where missing, and
    the kept ``rows`` they belong to): all its models must agree and one must give it.
    """
    lo, hi = _code_range(codes, rows, len(items))
    conflict = np.flatnonzero(lo < hi)
    if conflict.size:
        msg = f"item {items[int(conflict[0])]!r} has different cluster labels across models"
        raise DataError(msg)
    unlabelled = np.flatnonzero(hi < 0)
    if unlabelled.size:
        msg = f"item {items[int(unlabelled[0])]!r} has no cluster label"
        raise DataError(msg)
    text = np.array([str(v) for v in values], dtype=object)
    return list(text[hi])


def _code_range(codes: np.ndarray, groups: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the smallest and largest of the codes >= 0 in it (no code: lo > hi, hi = -1):
    whether the rows of an item agree on a value, without a Python object per row.
    """
    ok = codes >= 0
    lo = np.full(n_groups, np.iinfo(np.int64).max)
    hi = np.full(n_groups, -1, dtype=np.int64)
    np.minimum.at(lo, groups[ok], codes[ok])
    np.maximum.at(hi, groups[ok], codes[ok])
    return lo, hi


def align_matrix(items: list[Any], models: list[Any], scores: np.ndarray, clusters: list[Any] | None, *,
                 on_missing: str = "error", min_models: int = 2) -> ScoreMatrix:
    """:func:`align_results` for a wide table read straight into a matrix (one row per item, one
    column per model, NaN where a model lacks an item): the same rules and the same result as the
    long path (items in natural order, models sorted, the same errors and notes), without a row
    per (model, item).
    """
    from .._core.validation import check_option

    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    if len(set(items)) < len(items):
        check_unique_items(items, "the table")
    dup = next((m for k, m in enumerate(models) if m in models[:k]), None) if len(set(models)) < len(models) else None
    if dup is not None:
        msg = f"model {dup!r} appears more than once; give each model's results once"
        raise DataError(msg)
    scores = np.asarray(scores, dtype=float)
    present = ~np.isnan(scores)
    rows = present.any(axis=1)  # items some model has (an all-empty row is no item at all)
    model_order = sorted(range(len(models)), key=lambda k: str(models[k]))
    names = [models[k] for k in model_order]
    if len(names) < min_models:
        raise too_few_models(names)
    item_order = sorted(np.flatnonzero(rows).tolist(), key=lambda r: natural_key(items[r]))
    lacking = rows[:, None] & ~present  # (items, models)
    missing = {models[k]: int(lacking[:, k].sum()) for k in model_order}
    note = ""
    if any(missing.values()):
        all_count = int(rows.sum())
        common_rows = [r for r in item_order if present[r].all()]
        if not common_rows:  # not missing items: different item sets (--on-missing cannot help)
            counts = {models[k]: int(present[:, k].sum()) for k in model_order[:8]}
            raise disjoint("; ".join(f"{m}: {c:,} item{'s' if c != 1 else ''}" for m, c in counts.items()))
        if on_missing == "error":
            first = {k: next(items[r] for r in item_order if lacking[r, k]) for k in model_order if missing[models[k]]}
            raise not_aligned({models[k]: (missing[models[k]], item) for k, item in first.items()}, all_count)
        note = intersection_note(len(common_rows), all_count, missing)
        item_order = common_rows
    take = np.asarray(item_order, dtype=np.intp)
    matrix = np.ascontiguousarray(scores[np.ix_(take, np.asarray(model_order, dtype=np.intp))])
    dropped = {models[k]: int(present[:, k].sum()) - take.size for k in model_order}
    return ScoreMatrix(items=[items[r] for r in take], models=names, scores=matrix,
                   clusters=None if clusters is None else [str(clusters[r]) for r in take], dropped=dropped, note=note)


def not_aligned(lacking: dict[Any, tuple[int, Any]], n_items: int) -> DataError:
    """The error for models that lack items: per model, how many and the first (natural order)."""
    worst = [f"{m} lacks {k} of {n_items} items, first {item!r}" for m, (k, item) in lacking.items()]
    return DataError(f"models were not run on the same items ({'; '.join(worst)}); use `on_missing`='intersect' to "
                     "keep the items every model has")


def disjoint(detail: str = "") -> DataError:
    """No item is shared by all models: not a missing-item problem (--on-missing cannot help) but
    results of different tasks or item sets; ``detail`` says what each model has.
    """
    return DataError("no item is shared by all models: they were run on different tasks or item sets"
                     + (f" ({detail})" if detail else "") + "; compare models on the same items")


def per_model_items(frame: Any, limit: int = 8) -> str:
    """What each model of a long table has: its item count, the task (the ``task:`` prefix of inspect
    and lm-eval item ids, when every id has one) and its files -- for the disjoint-items error.
    """
    from pathlib import PurePath

    parts = []
    for model, group in list(frame.groupby("model", sort=True, observed=True))[:limit]:
        ids = group["item"].astype(str)
        text = f"{model}: {len(group):,} item{'s' if len(group) != 1 else ''}"
        if ids.str.contains(":", regex=False).all():
            tasks = sorted(set(ids.str.rsplit(":", n=1).str[0]))
            text += (" of task " if len(tasks) == 1 else " of tasks ") + " + ".join(tasks[:3]) + (
                f" + {len(tasks) - 3} more" if len(tasks) > 3 else "")
        if "source" in group.columns:
            files = sorted({PurePath(str(f)).name for f in group["source"].astype(str)})
            text += f" (in {' + '.join(files[:2])}{f' + {len(files) - 2} more' if len(files) > 2 else ''})"
        parts.append(text)
    return "; ".join(parts)


def intersection_note(kept: int, total: int, missing: dict[Any, int]) -> str:
    """What ``on_missing="intersect"`` did, naming (at most eight of) the models that lacked items."""
    lacking = [f"{m} {k}" for m, k in missing.items() if k]
    shown = ", ".join(lacking[:8]) + (f", and {len(lacking) - 8} more" if len(lacking) > 8 else "")
    return (f"intersection of items: {kept} of {total} kept ({total - kept} dropped from every model's results); "
            f"models lacking items: {shown}")
