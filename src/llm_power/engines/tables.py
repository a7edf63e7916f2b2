"""The table engines' front: long tables read where they live (DuckDB, Spark, Ray) into the score matrix.

:func:`read_matrix` is what ``diagnose_files(engine=...)`` and every ``--engine duckdb|spark|ray``
command call: the engine lists the models, partitions the rows by item and aligns each item shard
(:mod:`llm_power.engines.contract`); the blocks are assembled here into the
:class:`~llm_power.ScoreMatrix` that :func:`llm_power.io.align_results` gives for the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._core.validation import check_option
from ._tables import TABLE_ENGINES, table_files
from .contract import assemble

__all__ = ["TABLE_ENGINES", "read_matrix"]


def read_matrix(paths: str | Path | Sequence[str | Path], *, engine: str = "duckdb", on_missing: str = "error",
                format: str = "auto", metric: str | None = None, cluster: str | None = None,  # noqa: A002
                item_column: str | None = None, master: str | None = None, scheduler: Any = None,
                n_workers: int | None = None, split: str | None = None, filter: str | None = None) -> Any:  # noqa: A002
    r"""The aligned score matrix of long tables, read, partitioned and aligned by a table engine.

    Parameters
    ----------
    paths : path or sequence of paths
        Parquet, CSV/TSV or JSONL long tables (``model, item, score[, cluster]``; the column names
        the local reader knows, or ``metric`` / ``item_column``), or folders of them. With
        ``engine="spark"`` a path may also be a table of the session's catalog (``db.results``).
    engine : {"duckdb", "spark", "ray"}, default "duckdb"
        Where the rows are read and aligned: DuckDB in this process (out of core), a Spark session
        (``master``), or a Ray cluster (``scheduler``: its address; default a local Ray).
    on_missing : {"error", "intersect"}
        As in :func:`llm_power.io.align_results`.
    format : {"auto", "csv", "parquet"}
        The files' format (default: by name and content, as the local reader decides).
    metric, cluster, item_column
        The score column, the cluster-label column and the item-id column, as in
        :func:`llm_power.read_results`.
    master : str, optional
        The Spark master (default: the active session, else ``local[*]``).
    scheduler : str, optional
        The Ray cluster's address (default: a local Ray started for the call).
    n_workers : int, optional
        CPUs of a local Ray or of ``local[N]`` Spark (default: all).
    split, filter
        Harness options, not used by long tables (accepted so every engine takes the same read options).

    Returns
    -------
    ScoreMatrix
        The matrix :func:`llm_power.io.align_results` builds from the same rows: items in natural
        order, models sorted as text, the same scores bit for bit, the same note and errors.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> from llm_power.engines import read_matrix
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.parquet"
    >>> pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q2", "q10", "q10", "q2"],
    ...               "score": [1, 0, 1, 1]}).to_parquet(path)
    >>> m = read_matrix(path, engine="duckdb")
    >>> m.items, m.models, m.scores.tolist()
    (['q2', 'q10'], ['a', 'b'], [[1.0, 1.0], [0.0, 1.0]])
    """
    engine = check_option(engine, "engine", TABLE_ENGINES)
    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    if isinstance(paths, (str, Path)):
        paths = [paths]
    read = {"format": format, "metric": metric, "cluster": cluster, "item_column": item_column, "split": split,
            "filter": filter}
    if engine == "duckdb":
        from .duckdb import duckdb_blocks

        models, blocks = duckdb_blocks(table_files(paths, engine=engine, format=format), read)
    elif engine == "spark":
        from .spark import spark_blocks

        models, blocks = spark_blocks(list(paths), read, master=master, n_workers=n_workers)
    else:
        from .ray import ray_blocks

        models, blocks = ray_blocks(table_files(paths, engine=engine, format=format), read, address=scheduler,
                                    n_workers=n_workers)
    return assemble(blocks, models, on_missing=on_missing)
