"""Read several runs per model (seeds, prompt templates, engines) into :class:`~llm_power.matrix.RunScores`.

A run is identified per row (a ``run`` column of a long table) or per file (a field of the harness
metadata: lm-evaluation-harness ``results_*.json``, inspect's log header), or by the file or folder
itself. Every run of a model must score the same items; models must share them (or ``on_missing=
"intersect"`` keeps the common ones and says what it dropped).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._core.errors import DataError
from .._core.order import natural_key
from .._core.validation import check_option
from ..matrix import RunScores

__all__ = ["RUN_ALIASES", "align_runs", "read_runs"]

#: short names of run fields in harness metadata, tried in order (dotted paths)
RUN_ALIASES: dict[str, tuple[str, ...]] = {
    "seed": ("config.random_seed", "config.seed", "eval.model_generate_config.seed", "plan.config.seed",
             "eval.config.seed"),
    "temperature": ("config.gen_kwargs.temperature", "eval.model_generate_config.temperature",
                    "plan.config.temperature"),
    "engine": ("config.model", "eval.model_base_url", "eval.model"),
    "model_args": ("config.model_args", "eval.model_args"),
    "template": ("system_instruction_sha", "chat_template_sha", "eval.task_args", "eval.solver", "plan.steps"),
}


def align_runs(frame: Any, *, run: str = "run", on_missing: str = "error", runs_by: str | None = None) -> RunScores:
    """:class:`~llm_power.matrix.RunScores` from a long table ``model, <run>, item, score[, cluster]``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per (model, run, item).
    run : str, default "run"
        The column that identifies a run (a seed, a template name).
    on_missing : {"error", "intersect"}
        Items that a run or a model lacks: an error naming the model, the run and the first missing
        item (default), or keep only the items every run of every model has.
    runs_by : str, optional
        What a run is, for the reports (default: the column name).

    Returns
    -------
    RunScores
        Models and items in natural order, each model's items x runs block, its run labels, one
        cluster label per item when ``frame`` has a ``cluster`` column, and ``note``: what
        ``"intersect"`` dropped.

    Examples
    --------
    >>> import pandas as pd
    >>> from llm_power import align_runs
    >>> df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "run": [0, 0, 1, 1] * 2,
    ...                    "item": ["q1", "q2"] * 4, "score": [1, 0, 1, 1, 0, 0, 1, 0]})
    >>> rs = align_runs(df, run="run")
    >>> rs.models, rs.items, rs.runs.tolist()
    (['a', 'b'], ['q1', 'q2'], [2, 2])
    """
    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    for col in ("model", run, "item", "score"):
        if col not in frame.columns:
            msg = f"no {col!r} column; columns are {', '.join(map(repr, map(str, frame.columns)))}"
            raise DataError(msg)
    model = frame["model"].astype(str).to_numpy()
    runs = frame[run].astype(str).to_numpy()
    item = frame["item"].astype(str).to_numpy()
    score = np.asarray(frame["score"].to_numpy(), dtype=float)
    cluster = frame["cluster"].astype(str).to_numpy() if "cluster" in frame.columns else None
    if not np.all(np.isfinite(score)):
        k = int(np.flatnonzero(~np.isfinite(score))[0])
        msg = f"model {model[k]!r}, run {runs[k]!r}, item {item[k]!r}: the score is missing or not finite"
        raise DataError(msg)
    names = sorted(set(model.tolist()), key=natural_key)
    item_names = sorted(set(item.tolist()), key=natural_key)
    item_code = {v: k for k, v in enumerate(item_names)}
    icode = np.fromiter((item_code[v] for v in item), dtype=np.int64, count=item.size)
    per_model = {name: _model_block(name, np.flatnonzero(model == name), runs, icode, score, item_names, on_missing)
                 for name in names}
    notes = [f"{name}: {int((blk[2] & ~blk[3]).sum()):,} items not scored in every run"
             for name, blk in per_model.items() if not np.array_equal(blk[2], blk[3])]
    if on_missing == "error":
        _check_models(per_model, item_names)
    keep = np.flatnonzero(np.all([blk[3] for blk in per_model.values()], axis=0))
    if keep.size < 2:
        msg = f"{keep.size} item(s) scored by every run of every model; at least 2 are needed"
        raise DataError(msg)
    if keep.size < len(item_names):
        notes.append(f"kept the {keep.size:,} items every run of every model scores (of {len(item_names):,})")
    clusters = None if cluster is None else _cluster_labels(icode, cluster, item_names, keep)
    return RunScores(items=[item_names[int(k)] for k in keep], models=names,
                     blocks=[np.ascontiguousarray(per_model[n][1][keep]) for n in names],
                     run_labels=[per_model[n][0] for n in names], clusters=clusters, runs_by=runs_by or run,
                     note="; ".join(notes))


def _model_block(name: str, rows: np.ndarray, runs: np.ndarray, icode: np.ndarray, score: np.ndarray,  # noqa: PLR0913, PLR0917
                 item_names: list[str], on_missing: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """One model's (run labels, items x runs block with NaN where missing, items it has, items every
    run has); duplicates, and with ``on_missing="error"`` a run lacking items, are errors.
    """
    labels = sorted(set(runs[rows].tolist()), key=natural_key)
    rcode = {v: k for k, v in enumerate(labels)}
    rc = np.fromiter((rcode[v] for v in runs[rows]), dtype=np.int64, count=rows.size)
    counts = np.bincount(icode[rows] * len(labels) + rc,
                         minlength=len(item_names) * len(labels)).reshape(len(item_names), len(labels))
    if counts.max() > 1:
        i, r = np.argwhere(counts > 1)[0]
        msg = (f"model {name!r}, run {labels[r]!r}: item {item_names[i]!r} appears {int(counts[i, r])} times "
               "(one score per model, run and item)")
        raise DataError(msg)
    has = counts == 1
    in_model, full = has.any(axis=1), has.all(axis=1)
    if on_missing == "error" and not np.array_equal(full, in_model):
        r = int(np.flatnonzero(~has[in_model].all(axis=0))[0])
        miss = np.flatnonzero(in_model & ~has[:, r])
        msg = (f"model {name!r}: run {labels[r]!r} lacks {miss.size:,} of the {int(in_model.sum()):,} items its "
               f"other runs score (first: {item_names[int(miss[0])]!r}); every run of a model must score the same "
               "items (on_missing='intersect' keeps the common ones)")
        raise DataError(msg)
    block = np.full((len(item_names), len(labels)), np.nan)
    block[icode[rows], rc] = score[rows]
    return labels, block, in_model, full


def _check_models(per_model: dict[str, Any], item_names: list[str]) -> None:
    """Every model has the items some model has (``on_missing="error"``)."""
    anyone = np.any([blk[2] for blk in per_model.values()], axis=0)
    for name, blk in per_model.items():
        if not np.array_equal(blk[2], anyone):
            miss = np.flatnonzero(anyone & ~blk[2])
            msg = (f"model {name!r} lacks {miss.size:,} of the {int(anyone.sum()):,} items other models have "
                   f"(first: {item_names[int(miss[0])]!r}); on_missing='intersect' keeps the common ones")
            raise DataError(msg)


def _cluster_labels(icode: np.ndarray, cluster: np.ndarray, item_names: list[str], keep: np.ndarray) -> list[str]:
    """One cluster label per kept item; an item with two labels is an error."""
    label: dict[int, str] = {}
    for code, lab in zip(icode.tolist(), cluster.tolist(), strict=True):
        if label.setdefault(code, lab) != lab:
            msg = (f"item {item_names[code]!r} has two cluster labels ({label[code]!r} and {lab!r}); every row of "
                   "an item must give it the same one")
            raise DataError(msg)
    return [label[int(k)] for k in keep]


def _lookup(meta: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of nested dicts (None when absent)."""
    value: Any = meta
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _metadata(source: Path) -> dict[str, Any]:
    """The harness metadata of a per-item file: lm-eval's neighbouring ``results_*.json``, an inspect
    log's header (a ``.json`` log without its samples, or ``header.json`` of an ``.eval`` archive).
    """
    try:
        if source.suffix == ".eval":
            with zipfile.ZipFile(source) as zf:
                header = json.loads(zf.read("header.json"))
            return header if isinstance(header, dict) else {}
        if source.name.startswith("samples_") and source.suffix == ".jsonl":
            stamp = source.stem.rsplit("_", 1)[-1]
            candidates = (sorted(source.parent.glob(f"results_{stamp}.json"))
                          or sorted(source.parent.glob("results_*.json")))
            meta = json.loads(candidates[0].read_text(encoding="utf-8")) if candidates else {}
            return meta if isinstance(meta, dict) else {}
        if source.suffix == ".json":
            data = json.loads(source.read_text(encoding="utf-8"))
            return {k: v for k, v in data.items() if k != "samples"} if isinstance(data, dict) else {}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        msg = f"cannot read the run metadata: {exc}"
        raise DataError(msg, file=str(source)) from None
    return {}


def _run_label(source: str, run: str, cache: dict[str, str]) -> str:
    """The run label of a file: its ``run`` field (an alias or a dotted path), the file or its folder."""
    if source in cache:
        return cache[source]
    path = Path(source)
    if run == "file":
        label = path.name
    elif run == "folder":
        label = path.parent.name
    else:
        meta = _metadata(path)
        value = None
        for field in RUN_ALIASES.get(run, (run,)):
            value = _lookup(meta, field)
            if value is not None:
                break
        if value is None:
            tried = ", ".join(RUN_ALIASES.get(run, (run,)))
            msg = (f"no run field {run!r} in the file's metadata (looked for {tried}); name a field with --run "
                   "(a dotted path such as config.random_seed), or use --run file / --run folder")
            raise DataError(msg, file=source)
        label = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
    cache[source] = label
    return label


def read_runs(paths: str | Path | Sequence[str | Path], *, run: str = "run", format: str = "auto",  # noqa: A002
              metric: str | None = None, cluster: str | None = None, on_missing: str = "error",
              item_column: str | None = None) -> RunScores:
    r"""Read per-item results of several runs per model into :class:`~llm_power.matrix.RunScores`.

    Parameters
    ----------
    paths : path or sequence of paths
        What :func:`llm_power.read_results` reads: a long table with a run column, or harness
        outputs (one folder or log per run).
    run : str, default "run"
        What identifies a run. For a plain table: its column. For harness files: a field of the
        metadata, a dotted path (``config.random_seed``; inspect ``eval.model_generate_config.seed``)
        or a short name -- ``seed``, ``temperature``, ``engine``, ``model_args``, ``template``
        (:data:`RUN_ALIASES`) -- or ``file`` / ``folder`` (each file or folder is a run).
    format, metric, cluster, item_column
        As for :func:`llm_power.read_results`.
    on_missing : {"error", "intersect"}
        As for :func:`align_runs`.

    Returns
    -------
    RunScores

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from llm_power import read_runs
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "runs.csv").write_text("model,seed,item,score\n" + "".join(
    ...     f"m,{s},q{i},{(i + s) % 2}\n" for s in range(3) for i in range(4)))
    >>> rs = read_runs(folder / "runs.csv", run="seed")
    >>> rs.runs.tolist(), rs.runs_by
    ([3], 'seed')
    """
    from .harness import read_frame

    frame = read_frame(paths, format=format, metric=metric, cluster=cluster, item_column=item_column)
    sources = frame["source"].astype(str)
    plain = sources.map(lambda s: Path(s).suffix.lower() in {".csv", ".tsv", ".gz", ".parquet"}
                        or Path(s).name.endswith((".csv.gz", ".tsv.gz")))
    if bool(plain.all()) and run not in ("file", "folder"):
        # a plain long table: the run column, read as the reader reads a cluster column (same error rules)
        labelled = read_frame(paths, format=format, metric=metric, cluster=run, item_column=item_column)
        frame = frame.assign(run=labelled["cluster"].astype(str).to_numpy())
    else:
        cache: dict[str, str] = {}
        frame = frame.assign(run=[_run_label(s, run, cache) for s in sources])
    return align_runs(frame, run="run", on_missing=on_missing, runs_by=run)
