"""Read several runs per model (seeds, prompt templates, engines) into :class:`~llm_power.matrix.RunScores`.

A run is identified per row (a ``run`` column of a long table) or per file (a field of the harness
metadata: lm-evaluation-harness ``results_*.json``, inspect's log header), or by the file or folder
itself. Every run of a model must score the same items; models must share them (or ``on_missing=
"intersect"`` keeps the common ones and says what it dropped).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._core.errors import DataError
from ..matrix import RunScores
from .safe import parse_once

__all__ = ["PLAIN_FORMATS", "RUN_ALIASES", "align_runs", "read_runs", "runs_frame"]

#: formats whose run is a column of the table (the others: a field of each file's metadata)
PLAIN_FORMATS = frozenset({"csv", "parquet"})

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
    return RunScores.from_frame(frame, run=run, on_missing=on_missing, runs_by=runs_by)


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
    from .safe import ArchiveReader, load_json_file

    # the readers' own bounded, regular-file-only parsing: one line for a FIFO, deep nesting or a key twice
    if source.suffix == ".eval":
        with ArchiveReader(source) as archive:
            header = archive.json("header.json")
        return header if isinstance(header, dict) else {}
    if source.name.startswith("samples_") and source.suffix == ".jsonl":
        stamp = source.stem.rsplit("_", 1)[-1]
        candidates = (sorted(source.parent.glob(f"results_{stamp}.json"))
                      or sorted(source.parent.glob("results_*.json")))
        meta = load_json_file(candidates[0]) if candidates else {}
        return meta if isinstance(meta, dict) else {}
    if source.suffix == ".json":
        data = load_json_file(source)
        return {k: v for k, v in data.items() if k != "samples"} if isinstance(data, dict) else {}
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
        try:
            label = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
        except RecursionError:
            msg = f"the run field {run!r} is nested too deeply to be a label"
            raise DataError(msg, file=source) from None
    cache[source] = label
    return label


@parse_once()
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
    frame = runs_frame(paths, run=run, format=format, metric=metric, cluster=cluster, item_column=item_column)
    return align_runs(frame, run="run", on_missing=on_missing, runs_by=run)


@parse_once()
def runs_frame(paths: str | Path | Sequence[str | Path], *, run: str = "run", format: str = "auto",  # noqa: A002
               metric: str | None = None, cluster: str | None = None, item_column: str | None = None) -> Any:
    """The long table of :func:`llm_power.read_results` with a ``run`` column: what :func:`read_runs`
    aligns (the gate renames the models of two inputs before aligning them together).
    """
    from .detect import detect_format
    from .harness import read_frame

    frame = read_frame(paths, format=format, metric=metric, cluster=cluster, item_column=item_column)
    sources = frame["source"].astype(str)
    kinds = {s: (format if format != "auto" else detect_format(Path(s))) for s in sources.unique().tolist()}
    if all(k in PLAIN_FORMATS for k in kinds.values()) and run not in ("file", "folder"):
        # a plain long table: the run column, read as the reader reads a cluster column (same error rules);
        # the first read gave this file's notes, and this one's would name the user's own `cluster` column
        # as a text column that `cluster` could cluster by
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labelled = read_frame(paths, format=format, metric=metric, cluster=run, item_column=item_column)
        except DataError as exc:  # the reader's words are a cluster's: here the column names the run
            if not (exc.field == run or exc.message.startswith(f"no cluster column {run!r}")):
                raise
            raise DataError(exc.message.replace("cluster", "run", 1), file=exc.file, record=exc.record,
                            field=exc.field) from None
        frame = frame.assign(run=labelled["cluster"].astype(str).to_numpy())
    else:
        cache: dict[str, str] = {}
        frame = frame.assign(run=[_run_label(s, run, cache) for s in sources])
    return frame
