r"""Bradley-Terry on battle logs larger than memory: DuckDB reads, checks and reduces them by SQL, the
fit and the sandwich are :func:`llm_power.bradley_terry_shards`' (issue 48, point 5).

The battle files (Parquet, CSV/TSV, JSONL with model_a, model_b, winner as the arena readers name
them) are read in process and out of core, only the columns the fit needs. The winner is coded as
the local reader codes it (``model_a``/``a``/``model_1``, ``model_b``/``b``/``model_2``, ``tie``/``tie
(bothbad)`` in any case, or either model's name; names stripped); a row the local reader refuses
(a null, an empty name, an unknown winner, a model against itself) is the local reader's one-line
error, raised by reading that file with it.

1. **Counts.** ``GROUP BY model_a, model_b, outcome`` (integers: exact) is one small table, handed
   to :func:`~llm_power.bradley_terry_shards` with ``count=``: the fit of the merged cells.
2. **Cluster scores** (``cluster`` only). The coded battles written by DuckDB into ``hash(cluster)
   mod K`` Parquet partitions of a temporary folder (K from ``LLM_POWER_SHARD_ROWS`` or
   ``shard_rows``: battles per shard); each partition is a shard of
   :func:`~llm_power.bradley_terry_shards` (every prompt's rows in one), read once per pass: memory
   is one shard plus the merged counts and meat.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.errors import DataError
from .._core.params import public
from .._core.validation import check_option
from .contract import SHARD_ROWS, shard_count
from .duckdb import connect, quote

if TYPE_CHECKING:
    from ..preferences import BradleyTerryResult

__all__ = ["BATTLE_ENGINES", "battle_rows", "bradley_terry_table"]

#: the engines of :func:`bradley_terry_table` (Spark and Ray: not yet)
BATTLE_ENGINES = ("duckdb",)

#: the winner keywords of the arena readers (io.battle_tables), lower case -> outcome code
_KEYWORDS = {"model_a": 0, "a": 0, "model_1": 0, "model_b": 1, "b": 1, "model_2": 1, "tie": 2, "tie (bothbad)": 2}
#: the whitespace Python's ``str.strip`` removes from a name (ASCII)
_SPACE = " \t\n\r\x0b\x0c"


@public
def bradley_terry_table(paths: str | Path | Sequence[str | Path], *, cluster: str | None = None,  # noqa: PLR0913
                        ties: str = "half", engine: str = "duckdb", shard_rows: int | None = None,
                        confidence_level: float = 0.95, tol: float = 1e-10,
                        max_iter: int = 200) -> BradleyTerryResult:
    r"""Bradley-Terry ratings of battle files of any size, reduced by DuckDB out of core.

    The result of :func:`bradley_terry` on the battles the local reader reads from the same files
    (:func:`llm_power.read_battles`), from SQL counts: the outcome cells for the fit, and with
    ``cluster`` the battles in shards partitioned by ``hash(prompt) mod K`` for the
    cluster-robust sandwich (:func:`bradley_terry_shards` on them).

    Parameters
    ----------
    paths : path or sequence of paths
        Battle logs: Parquet, CSV/TSV or JSONL (optionally .gz) files, or folders of them, with
        columns model_a, model_b, winner (``"model_a"``, ``"model_b"``, ``"tie"``, the winner's
        name, or the other spellings :func:`llm_power.read_battles` takes).
    cluster : str, optional
        The column of the cluster labels (the prompt: ``"question"`` finds ``question_id``).
        Default None: the per-battle sandwich, from the counts alone.
    ties : {"half", "davidson"}, default "half"
        As in :func:`bradley_terry`.
    engine : {"duckdb"}, default "duckdb"
        DuckDB in this process (``LLM_POWER_DUCKDB_MEMORY``: its memory limit, default 1GB).
    shard_rows : int, optional
        With ``cluster``: battles per shard (default ``LLM_POWER_SHARD_ROWS``, else 2,000,000);
        memory is about one shard.
    confidence_level : float, default 0.95
        Default level of the intervals.
    tol, max_iter
        As in :func:`bradley_terry`.

    Returns
    -------
    BradleyTerryResult
        As :func:`bradley_terry` with ``method="sandwich"`` (equal to it to rounding of the meat's sum).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> from llm_power.engines import bradley_terry_table
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "battles.parquet"
    >>> pd.DataFrame({"model_a": ["x", "x", "y", "x", "z", "y"], "model_b": ["y", "z", "z", "y", "x", "z"],
    ...               "winner": ["model_a", "model_a", "tie", "model_b", "model_b", "model_a"]}).to_parquet(path)
    >>> res = bradley_terry_table(path)
    >>> res.models, [round(float(r), 3) for r in res.ratings], res.n_battles
    (['x', 'y', 'z'], [0.862, 0.446, -1.308], 6)
    """
    check_option(ties, "ties", ("half", "davidson"))
    engine = check_option(engine, "engine", BATTLE_ENGINES)
    if cluster is not None and not isinstance(cluster, str):
        msg = f"`cluster` must be a column name of the battles; got {type(cluster).__name__}."
        raise TypeError(msg)
    if shard_rows is not None and (isinstance(shard_rows, bool) or not isinstance(shard_rows, int) or shard_rows < 1):
        msg = f"`shard_rows` must be an integer >= 1; got {shard_rows!r}."
        raise ValueError(msg)
    from ..preferences import bradley_terry_shards

    fit = functools.partial(bradley_terry_shards, ties=ties, confidence_level=confidence_level, tol=tol,
                            max_iter=max_iter)
    with _Battles(paths, cluster) as rows:
        if cluster is None:
            counts = rows.con.sql("SELECT model_a, model_b, winner, CAST(sum(n) AS BIGINT) AS n FROM _lp_tcoded "
                                  "GROUP BY ALL").to_arrow_table()
            return fit([counts], count="n")
        return fit(rows.cluster_shards(shard_rows), cluster="cluster")


class _Battles:
    """The battles of the files as the view ``_lp_battles`` of a DuckDB connection (model_a, model_b,
    winner coded as the local reader codes them, and ``cluster``), checked; the temporary folder and
    the connection are dropped on exit.
    """

    def __init__(self, paths: str | Path | Sequence[str | Path], cluster: str | None) -> None:
        self.files = battle_files(paths)
        self.tmp = tempfile.mkdtemp(prefix="llm-power-battles-")
        self.con = connect(self.tmp, stored=False)
        try:
            self.cluster = _define_view(self.con, self.files, cluster)
            _check_rows(self.con, self.files, cluster)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> _Battles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cluster_shards(self, shard_rows: int | None) -> list[Any]:
        """The battles in ``hash(cluster) mod K`` Parquet partitions: one loader per shard.

        The rows as they are, not grouped per (model_a, model_b, winner, cluster) first: with a few
        battles per prompt the grouping hardly shrinks them and costs 2.5 times the partitioning
        (10^7 battles of 2 x 10^6 prompts: 9.2 s of CPU against 3.7 s, benchmarks/arena_engines.py).
        """
        import pyarrow.parquet as pq

        ((rows,),) = self.con.sql("SELECT sum(n) FROM _lp_triples").fetchall()
        size = shard_rows or int(os.environ.get("LLM_POWER_SHARD_ROWS", SHARD_ROWS))
        k = shard_count(int(rows), shard_rows=size)
        out = Path(self.tmp) / "shards"
        self.con.execute(f"COPY (SELECT *, hash(cluster) % {int(k)} AS shard FROM _lp_battles) TO '{out}' "  # noqa: S608
                         "(FORMAT parquet, PARTITION_BY (shard))")
        folders = [out / f"shard={part}" for part in range(k)]
        return [functools.partial(pq.read_table, str(f), columns=["model_a", "model_b", "winner", "cluster"],
                                  read_dictionary=["model_a", "model_b", "winner"])
                for f in folders if f.exists()]


def battle_files(paths: str | Path | Sequence[str | Path]) -> list[str]:
    """The battle-log files of ``paths`` (folders searched for tables), in the local reader's order."""
    from ._tables import input_files

    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not items:
        msg = "no battle files given"
        raise DataError(msg)
    files = []
    for path in input_files(items):
        name = path.name.lower().removesuffix(".gz")
        if not name.endswith((".parquet", ".pq", ".csv", ".tsv", ".jsonl", ".ndjson")):
            msg = ("engine 'duckdb' reads battle logs (Parquet, CSV/TSV, JSONL with model_a, model_b, winner); "
                   "MT-Bench, AlpacaEval and OpenCompass files are read by --engine local")
            raise DataError(msg, file=str(path))
        if not path.is_file():
            msg = "file not found"
            raise DataError(msg, file=str(path))
        files.append(str(path))
    return files


def _read(con: Any, path: str) -> Any:
    """One battle file as a DuckDB relation (CSV as text, as the local reader reads it)."""
    name = path.lower().removesuffix(".gz")
    try:
        if name.endswith((".parquet", ".pq")):
            return con.read_parquet(path)
        if name.endswith((".csv", ".tsv")):
            return con.read_csv(path, header=True, all_varchar=True, sep="\t" if name.endswith(".tsv") else ",")
        return con.read_json(path, format="newline_delimited")
    except Exception as exc:  # noqa: BLE001 - duckdb's errors name the file in their text
        raise DataError(" ".join(f"cannot read: {exc}".split())[:300], file=path) from None


def _define_view(con: Any, files: list[str], cluster: str | None) -> str | None:
    """``_lp_raw`` (every file's rows as written: ``source``, the file's position, a0, b0, w0[, cluster]),
    ``_lp_coded`` (coded as the local reader codes them; a NULL winner: a row it refuses), ``_lp_tcoded``
    (the distinct rows coded, with their counts ``n``) and ``_lp_battles`` (model_a, model_b, winner[,
    cluster] coded); the cluster column's name in the files (None without one).
    """
    found = None
    parts = []
    for k, path in enumerate(files):
        rel = _read(con, path)
        columns = list(rel.columns)
        missing = [c for c in ("model_a", "model_b", "winner") if c not in columns]
        if missing:
            _local_error(path, f"battles need columns model_a, model_b and winner (no {missing[0]})")
        column = None
        if cluster is not None:
            column = cluster if cluster in columns else f"{cluster}_id" if f"{cluster}_id" in columns else None
            if column is None:
                msg = f"cluster={cluster!r}: the battles have no column {cluster!r}"
                raise DataError(msg, file=path)
            if found is not None and column != found:
                msg = f"cluster={cluster!r}: the files name it {found!r} and {column!r}"
                raise DataError(msg, file=path)
            found = column
        view = f"_lp_file{k}"
        rel.create_view(view, replace=True)
        label = f", {quote(column)} AS cluster" if column is not None else ""
        parts.append(f"SELECT {k} AS source, CAST(model_a AS VARCHAR) AS a0, CAST(model_b AS VARCHAR) AS b0, "
                     f"CAST(winner AS VARCHAR) AS w0{label} FROM {view}")
    cluster_col = ", cluster" if found is not None else ""
    con.execute(f"CREATE TEMP VIEW _lp_raw AS {' UNION ALL '.join(parts)}")  # noqa: S608 - quoted names
    # the distinct (model_a, model_b, winner) as written, with their battles: coded once each
    con.execute("CREATE TEMP TABLE _lp_triples AS SELECT -1 AS source, a0, b0, w0, count(*) AS n FROM _lp_raw "
                "GROUP BY a0, b0, w0")
    con.execute(f"CREATE TEMP VIEW _lp_tcoded AS {_coded('_lp_triples', ', n')}")
    con.execute(f"CREATE TEMP VIEW _lp_coded AS {_coded('_lp_raw', cluster_col)}")
    canonical = con.sql("SELECT count(*) FROM _lp_tcoded WHERE model_a IS DISTINCT FROM a0 OR model_b IS DISTINCT "
                        "FROM b0 OR winner IS DISTINCT FROM w0").fetchall() == [(0,)]
    # the rows as they are when every one is written as the local reader codes it (a Parquet log's rule)
    source = (f"SELECT a0 AS model_a, b0 AS model_b, w0 AS winner{cluster_col} FROM _lp_raw" if canonical else
              f"SELECT model_a, model_b, winner{cluster_col} FROM _lp_coded")
    con.execute(f"CREATE TEMP VIEW _lp_battles AS {source}")
    return found


def _coded(table: str, extra: str) -> str:
    """``table``'s rows (a0, b0, w0 as written) coded: names stripped, the winner model_a | model_b | tie
    (NULL: none of them).
    """
    keywords = " ".join(f"WHEN '{key}' THEN '{('model_a', 'model_b', 'tie')[code]}'" for key, code in _KEYWORDS.items())
    return (f"SELECT source, a0, b0, w0, model_a, model_b, raw, CASE lower(raw) {keywords} ELSE CASE WHEN raw = "  # noqa: S608
            f"model_a THEN 'model_a' WHEN raw = model_b THEN 'model_b' END END AS winner{extra} FROM (SELECT *, "
            f"trim(a0, '{_SPACE}') AS model_a, trim(b0, '{_SPACE}') AS model_b, trim(w0, '{_SPACE}') AS raw "
            f"FROM {table})")


def _check_rows(con: Any, files: list[str], cluster: str | None) -> None:
    """A row the local reader refuses (a null or empty name, an unknown winner, a model against itself,
    a missing cluster label): the first file with one is read by the local reader, whose error is raised.
    """
    bad = ("model_a IS NULL OR model_b IS NULL OR raw IS NULL OR model_a = '' OR model_b = '' OR raw = '' "
           "OR winner IS NULL OR model_a = model_b")
    ((found,),) = con.sql(f"SELECT count(*) FROM _lp_tcoded WHERE {bad}").fetchall()  # noqa: S608
    first = None
    if found:  # which file: the rows themselves
        ((first,),) = con.sql(f"SELECT min(source) FROM _lp_coded WHERE {bad}").fetchall()  # noqa: S608
    if first is None and cluster is not None:
        ((first,),) = con.sql("SELECT min(source) FROM _lp_raw WHERE cluster IS NULL").fetchall()
    if first is None:
        return
    _local_error(files[int(first)], None, cluster=cluster)


def _local_error(path: str, message: str | None, *, cluster: str | None = None) -> Any:
    """The local reader's one-line error for ``path`` (its first bad record); should it take the file,
    ``message`` or a generic one, naming the file.
    """
    from ..io import read_battles

    frame = read_battles([path])
    if cluster is not None:
        from ..preferences import bradley_terry

        try:
            bradley_terry(frame, cluster=cluster)  # a missing label: its error, with the file's row
        except DataError as exc:
            raise DataError(exc.message, file=exc.file or path, record=exc.record, field=exc.field) from None
    msg = message or "a value the local reader refuses (null, empty, or none of model_a, model_b, tie)"
    raise DataError(msg, file=path)


def battle_rows(paths: str | Path | Sequence[str | Path], *, cluster: str | None = None) -> Any:
    """The battles (model_a, model_b, winner[, the cluster column]) of the files as a pandas DataFrame in
    file order, read and coded by DuckDB (only those columns), the rows the local reader would refuse
    refused with its error.
    """
    import pyarrow as pa

    with _Battles(paths, cluster) as rows:
        rows.con.execute("SET preserve_insertion_order = true")
        picked = "model_a, model_b, winner" + (", cluster" if rows.cluster is not None else "")
        tables = [rows.con.sql(f"SELECT {picked} FROM _lp_coded WHERE source = {k}").to_arrow_table()  # noqa: S608
                  for k in range(len(rows.files))]
        table = pa.concat_tables(tables)
        frame = table.to_pandas()
        if rows.cluster is not None:
            frame = frame.rename(columns={"cluster": rows.cluster})
        return frame
