"""The one entry point of the readers: :func:`read_results` (and the wide fast path
:func:`read_wide_table`) over the ``FORMATS`` registry of :mod:`llm_power.io.formats`.

Every format's reader yields :class:`Record` (model, item, score, cluster, target) one at a time,
so large files are streamed in constant memory per line; :func:`read_results` collects them into
the long table ``model, item, score[, cluster]`` (in parallel processes for large inputs). Errors
name the file, the record and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._core.errors import DataError
from .._core.files import OUT_OF_MEMORY
from .detect import LM_EVAL_SAMPLES, companion_files, detect_format, expand_paths
from .formats import FORMATS as REGISTRY
from .formats.lm_eval import lm_eval_model
from .plain import MODEL_COLUMNS, SCORE_COLUMNS, table_records
from .records import ReadOptions, Record
from .safe import parse_once

if TYPE_CHECKING:  # pandas is imported lazily: `import llm_power` stays light
    import numpy as np
    import pandas as pd

__all__ = ["FORMATS", "Record", "companion_files", "detect_format", "expand_paths", "iter_records", "read_results",
           "read_wide_table"]

#: the values of ``format=`` (and ``--input-format``): "auto" and every format of the registry
FORMATS = ("auto", *REGISTRY)


# --- entry point -------------------------------------------------------------------------------------

def iter_records(path: Path, *, format: str = "auto", metric: str | None = None, cluster: str | None = None,
                 split: str = "test", filter_name: str | None = None,
                 item_column: str | None = None) -> Iterator[Record]:
    """Records of one file or run folder, by the reader of its format (detected, or named)."""
    fmt = detect_format(path) if format == "auto" else format
    options = ReadOptions(metric=metric, cluster=cluster, split=split, filter_name=filter_name, item_column=item_column)
    return REGISTRY[fmt].read(path, options)


#: read files in parallel processes when there are at least this many bytes to read (below it,
#: starting the processes costs more than it saves)
PARALLEL_MIN_BYTES = 64 << 20


def _read_parts(files: list[Path], options: dict[str, Any]) -> Iterator[Any]:
    """The columns of one file (or None) per file, in order (:func:`_part`): in parallel processes for
    large inputs, with a bounded number of parts in flight (the parent folds each into the table as it arrives).
    """
    import os
    from collections import deque

    from .._core.progress import advance

    sizes = [p.stat().st_size if p.is_file() else 0 for p in files]
    workers = min(os.cpu_count() or 1, len(files))
    advance("files read", 0, len(files))
    if _polars_reads_all(files, options["format"]):  # polars' threads in this process, never forked
        options = {**options, "engine": "polars"}
        workers = 1
    if workers < 2 or sum(sizes) < PARALLEL_MIN_BYTES:
        for k, path in enumerate(files, start=1):
            yield _part(path, options)
            advance("files read", k, len(files))
        return
    from concurrent.futures import ProcessPoolExecutor

    # the readers' modules, loaded before the workers start: forked workers (Linux) inherit them
    # instead of each importing pandas and pyarrow again (~0.4 CPU-seconds a worker)
    import pandas  # noqa: F401
    import pyarrow.compute
    import pyarrow.json  # noqa: F401

    from . import columnar  # noqa: F401

    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: deque[Any] = deque()
        queue = iter(files)
        for path in queue:
            pending.append(pool.submit(_part, path, options))
            if len(pending) >= 4 * workers:
                break
        done = 0
        while pending:
            part = pending.popleft().result()  # in file order; a worker's DataError is raised here
            nxt = next(queue, None)
            if nxt is not None:
                pending.append(pool.submit(_part, nxt, options))
            done += 1
            advance("files read", done, len(files))
            yield part


def _polars_reads_all(files: list[Path], format: str) -> bool:  # noqa: A002
    """Whether every file is an lm-eval samples file and polars is installed: then the files are read
    one after the other by polars' threads (1.4x less CPU than pyarrow in processes on real lines;
    a process forked from one that runs polars' threads can deadlock, so polars is never in a worker).
    """
    if format not in ("auto", "lm_eval") or not files or not all(LM_EVAL_SAMPLES.match(p.name) for p in files):
        return False
    from .columnar import polars_available

    return polars_available()


def read_part(path: Path, options: dict[str, Any]) -> Any:
    """The long table of one file as a DataFrame (None when it has no rows): columnar when possible;
    running out of memory is one DataError naming the file.
    """
    import pandas as pd

    columns = _part(path, options)
    if columns is None:
        return None
    n = len(columns["score"])
    return pd.DataFrame({key: value if key == "score" else _categorical(value, n) for key, value in columns.items()})


def _part(path: Path, options: dict[str, Any]) -> dict[str, Any] | None:
    """The columns of one file's long table (None when it has no rows): what :func:`concat_parts` folds
    in without a DataFrame per file; running out of memory is one DataError naming the file.
    """
    try:
        return _read_part(path, options)
    except MemoryError:
        raise DataError(OUT_OF_MEMORY, file=str(path)) from None


def _read_part(path: Path, options: dict[str, Any]) -> dict[str, Any] | None:
    """``model, item, score[, cluster], target, source`` of one file: the text columns as pandas
    Categoricals, except the model and source, which are one value (text) for the whole file.
    """
    import numpy as np

    cluster = options["cluster"]
    columns = _columns_fast(path, format=options["format"], metric=options["metric"], cluster=cluster,
                            filter_name=options["filter"], engine=options.get("engine", "pyarrow"))
    if columns is None and options["format"] in ("auto", "parquet") and path.suffix.lower() == ".parquet":
        from .detect import detect_format
        from .long_columns import long_parquet_columns

        if options["format"] == "parquet" or detect_format(path) == "parquet":
            columns = long_parquet_columns(path, metric=options["metric"], cluster=cluster,
                                           item_column=options["item_column"])
    if columns is None:  # the line-by-line readers (and their exact error messages)
        rows = list(iter_records(path, format=options["format"], metric=options["metric"], cluster=cluster,
                                 split=options["split"], filter_name=options["filter"],
                                 item_column=options["item_column"]))
        columns = {"model": [r.model for r in rows], "item": [r.item for r in rows],
                   "score": [r.score for r in rows], "cluster": [r.cluster for r in rows],
                   "target": [r.target for r in rows], "source": [r.source for r in rows]}
    n = len(columns["score"])
    if not n:
        return None
    part = {"model": _one_or_categorical(columns["model"], n), "item": _categorical(columns["item"], n),
            "score": np.asarray(columns["score"], dtype=float)}
    if cluster is not None:
        part["cluster"] = _categorical(columns["cluster"], n)
    part["target"] = _categorical(columns["target"], n)
    part["source"] = _one_or_categorical(columns["source"], n)
    return part


def _one_or_categorical(values: Any, n: int) -> Any:
    """One text for a whole file's column (kept as it is: concat_parts codes it once), else a Categorical."""
    return values if isinstance(values, str) else _categorical(values, n)


def _categorical(values: Any, n: int) -> Any:
    """A column as a pandas Categorical: integer codes and each distinct value once (a file's model
    name and source are one value; its items, targets and labels repeat across files), so that the
    long table of 12 million rows is a few hundred MB, not several GB of Python strings.
    """
    import numpy as np
    import pandas as pd

    categorical: Any = pd.Categorical
    if isinstance(values, pd.Categorical):  # already encoded (the columnar reader)
        return values
    if isinstance(values, str) or values is None:  # one value for the whole file (None: missing)
        codes = np.full(n, -1 if values is None else 0, dtype=np.int8)
        return categorical.from_codes(codes, categories=[] if values is None else [values])
    return categorical(np.asarray(values, dtype=object) if isinstance(values, list) else values)


def concat_parts(parts: Iterable[Any]) -> Any:
    """One long table from the parts of several files (None parts skipped), folded in as they come:
    each categorical column becomes codes against one growing list of values (a value seen in
    many files — an item id, a target — is stored once), the others are concatenated. A part is a
    DataFrame or a dict of columns (:func:`_part`), where a text stands for a whole column of it. None
    when there is no part.
    """
    import numpy as np
    import pandas as pd

    values: dict[str, Any] = {}  # column -> pd.Index of its distinct values so far
    chunks: dict[str, list[np.ndarray]] = {}
    mapped_last: dict[str, tuple[Any, np.ndarray]] = {}  # column -> the last part's categories, their positions
    columns: list[str] = []
    for part in parts:
        if part is None:
            continue
        if not columns:
            columns = list(part)
        n = len(part["score"])
        for col in columns:
            data = part[col]
            if isinstance(data, pd.Series) and isinstance(data.dtype, pd.CategoricalDtype):
                data = data.array
            if isinstance(data, str):  # one value for the whole part: its code, n times
                known = values.get(col)
                code = -1 if known is None else int(known.get_indexer([data])[0])
                if code < 0:
                    code = 0 if known is None else len(known)
                    values[col] = pd.Index([data], dtype=object) if known is None else known.append(
                        pd.Index([data], dtype=object))
                chunks.setdefault(col, []).append(np.full(n, code, dtype=np.int32))
            elif isinstance(data, pd.Categorical):
                cats = data.categories
                if col in mapped_last and mapped_last[col][0] is cats:  # the last part's values (one
                    where = mapped_last[col][1]  # task's files share them): positions never move
                else:
                    known = values.get(col)
                    if known is None:
                        known = values[col] = pd.Index(cats, dtype=object)
                    where = known.get_indexer(cats)
                    if (where < 0).any():  # new values: appended (a new index; rare after the first file)
                        known = values[col] = known.append(pd.Index(cats[where < 0], dtype=object))
                        where = known.get_indexer(cats)
                    where = np.append(where.astype(np.int32), np.int32(-1))  # code -1 (missing) stays -1
                    mapped_last[col] = (cats, where)
                chunks.setdefault(col, []).append(where[np.asarray(data.codes)])
            else:
                chunks.setdefault(col, []).append(np.asarray(data))
    if not columns:
        return None
    out = {}
    for col in columns:
        data = np.concatenate(chunks.pop(col))
        out[col] = pd.Categorical.from_codes(data, categories=values[col]) if col in values else data
    return pd.DataFrame(out)


def _columns_fast(path: Path, *, format: str, metric: str | None, cluster: str | None,  # noqa: A002
                  filter_name: str | None, engine: str = "pyarrow") -> dict[str, Any] | None:
    """The columns of a clean lm-eval samples file by the columnar reader (``engine``: its parser), else None."""
    if not path.is_file() or (format == "auto" and not LM_EVAL_SAMPLES.match(path.name)) or format not in (
            "auto", "lm_eval"):
        return None
    from .columnar import lm_eval_columns

    match = LM_EVAL_SAMPLES.match(path.name)
    task, date = (match.group("task"), match.group("date")) if match else (path.stem, "")
    return lm_eval_columns(path, task=task, model=lm_eval_model(path, date), metric=metric,
                           filter_name=filter_name, cluster=cluster, engine=engine)


@parse_once()
def read_wide_table(path: Path, *, format: str = "auto", metric: str | None = None, cluster: str | None = None,
                    item_column: str | None = None) -> tuple[list[str], list[str], np.ndarray, list[str] | None] | None:
    """``(items, models, matrix, clusters)`` when ``path`` is a plain wide table (an item column and
    one column per model), read straight into the matrix (NaN where a cell is empty); None for any
    other layout or format (read those with :func:`read_results`). The same reader, checks and
    errors as :func:`read_results` uses for a wide table, without a row per (model, item).
    """
    fmt = detect_format(path) if format == "auto" else format
    if fmt not in ("csv", "parquet") or metric is not None:
        return None
    columns = _plain_columns(path)
    if columns is None or any(c in columns for c in MODEL_COLUMNS) or {"model_a", "model_b"} <= set(columns):
        return None
    if path.suffix.lower() != ".parquet" and any(c in columns for c in SCORE_COLUMNS):
        return None  # one model per file
    from .plain import read_wide_matrix

    return read_wide_matrix(path, cluster_column=cluster, item_column=item_column)


def _plain_columns(path: Path) -> list[str] | None:
    """The header of a plain table (None when it cannot be read: the long path reports why)."""
    try:
        if path.suffix.lower() == ".parquet":
            from .safe import parquet_columns

            return parquet_columns(path)
        first = next(table_records(path), None)
    except (DataError, OSError, ValueError):
        return None
    return None if first is None else list(first[1].keys())


@parse_once()
def read_results(
    paths: str | Path | Sequence[str | Path],
    *,
    format: str = "auto",
    metric: str | None = None,
    cluster: str | None = None,
    split: str = "test",
    filter: str | None = None,  # noqa: A002 - lm-eval's own word
    item_column: str | None = None,
) -> pd.DataFrame:
    r"""Read per-item results of one or more models into a long DataFrame.

    Parameters
    ----------
    paths : path or sequence of paths
        Files or folders: lm-evaluation-harness ``samples_*.jsonl`` (model name from the
        neighbouring ``results_*.json`` or the folder), inspect_ai ``.eval`` / ``.json`` logs,
        HELM run folders (``per_instance_stats.json``), lighteval ``details_*.parquet``, or plain
        CSV/TSV/JSONL/Parquet in long (``model, item, score[, cluster]``) or wide form. Folders
        are searched recursively.
    format : str, default "auto"
        ``"auto"`` (by name and content), ``"lm_eval"``, ``"inspect"``, ``"helm"``,
        ``"lighteval"``, ``"csv"`` or ``"parquet"``.
    metric : str, optional
        Per-item metric: lm-eval key (default: the first of the record's ``metrics``), inspect
        scorer (default: the first; ``scorer.key`` for dict values), HELM stat name (default
        ``exact_match``), lighteval metric (default: the first), plain score column. An unknown
        name is an error listing the available ones.
    cluster : str, optional
        Cluster label field: lm-eval ``doc.<field>``, inspect ``metadata.<field>``, lighteval
        ``doc.<field>``, or a column of a plain file.
    split : str, default "test"
        HELM split to keep (HELM mixes splits in one file).
    filter : str, optional
        lm-eval filter (``"strict-match"``, ...) when a task wrote several per doc.
    item_column : str, optional
        Item id column of plain files (default: the first of ``item, item_id, id, doc_id, ...``).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, score`` (and ``cluster``), plus ``target`` where the format has one
        (used to check that models were scored against the same answers) and ``source``.
        Inspect's C/I/P/N become 1/0/0.5/0; several epochs or train trials are averaged.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from llm_power import read_results
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "scores.csv").write_text("model,item,score\nA,q1,1\nA,q2,0\nB,q1,1\nB,q2,1\n")
    >>> df = read_results(folder / "scores.csv")
    >>> df.groupby("model")["score"].mean().to_dict()
    {'A': 0.5, 'B': 1.0}
    """
    import pandas as pd

    frame = read_frame(paths, format=format, metric=metric, cluster=cluster, split=split, filter=filter,
                       item_column=item_column)
    return cast("pd.DataFrame", frame.astype({c: object for c in frame.columns
                                              if isinstance(frame[c].dtype, pd.CategoricalDtype)}))


@parse_once()
def read_frame(paths: str | Path | Sequence[str | Path], *, format: str = "auto", metric: str | None = None,  # noqa: A002
               cluster: str | None = None, split: str = "test", filter: str | None = None,  # noqa: A002
               item_column: str | None = None) -> pd.DataFrame:
    """:func:`read_results` with its text columns (model, item, cluster, target, source) kept as
    pandas Categoricals: what diagnose and compare align, at a fraction of the memory.
    """
    import numpy as np

    from .._core.validation import check_option

    format = check_option(format, "format", FORMATS)
    if isinstance(paths, (str, Path)):
        paths = [paths]
    options = {"format": format, "metric": metric, "cluster": cluster, "split": split, "filter": filter,
               "item_column": item_column}
    files = expand_paths(paths)
    frame = concat_parts(_read_parts(files, options))
    if frame is None:
        msg = "no per-item results found"
        raise DataError(msg)
    if not np.isfinite(frame["score"].to_numpy()).all():  # pragma: no cover - parse_score guarantees
        msg = "non-finite score"
        raise DataError(msg)
    return cast("pd.DataFrame", frame)
