r"""Bradley-Terry on battles in shards partitioned by prompt: the fit from merged outcome counts and the
prompt-clustered sandwich from per-shard partial meats, on this machine or a Dask cluster.

A shard is a battle table (a DataFrame, a mapping of columns, an Arrow table, a Parquet or CSV path,
or a zero-argument callable returning one of them, so that shards can be generated or read on
demand) whose clusters (prompts) have no battles in any other shard. Two passes over the shards,
each shard loaded once per pass and dropped before the next (memory: one shard, plus what is merged):

1. **Counts.** Per shard the outcome cells (model_a, model_b, outcome) -> number of battles
   (integers: merged exactly by summation, over the union of the models) and, with ``cluster``,
   64-bit hashes of its distinct cluster labels. The merged cells are all the fit needs: the same
   :func:`~llm_power.preferences.fit_cells` (and separation handling) as :func:`bradley_terry`.
2. **Cluster scores** (with ``cluster`` only). Per shard, at the fitted ratings, each cluster's score
   sum s_g (sparse: a prompt touches few models) and the partial meat sum_g s_g s_g' (models x
   models, plus Davidson's tau); the meat is the sum of the partials, G the sum of the shards' cluster
   counts, and the kernel's sandwich (CR1, t on G - 1 df) finishes as in memory. Without ``cluster``
   the per-battle meat comes from the merged cells and there is no second pass.

The result equals :func:`bradley_terry` on all battles at once (to rounding of the meat's sum).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._core.blas import one_blas_thread
from .._core.clusters import code_labels, require_clusters
from .._core.dask import dask_client
from .._core.errors import DataError
from .._core.params import public
from .._core.progress import advance
from .._core.validation import check_confidence_level, check_option
from ._battles import Battles, check_model_count, cluster_labels, encode_battles
from ._fit import Cells, battle_meat, battle_scores, cluster_meat, fit_cells, ratings_sandwich
from ._ratings import BradleyTerryResult, sandwich_result, separation, with_separated

__all__ = ["bradley_terry_shards", "count_column", "fit_counted", "run_local"]

#: the running code space of model pairs while shards are merged (models are re-coded in name order at the end)
_CODE_SPACE = 1 << 21


@dataclass
class _Shard:
    """One shard's contribution to pass 1."""

    models: list[str]
    cells: np.ndarray  # cell ids (a * M_shard + b) * 3 + outcome, in the shard's own model codes
    counts: np.ndarray  # int64 battles per cell
    n: int
    hashes: np.ndarray | None  # sorted uint64 hashes of its distinct cluster labels
    n_clusters: int


@public
def bradley_terry_shards(shards: Sequence[Any], *, cluster: str | None = None, count: str | None = None,  # noqa: PLR0913
                         ties: str = "half", engine: str = "local", scheduler: Any = None,
                         n_workers: int | None = None, confidence_level: float = 0.95, tol: float = 1e-10,
                         max_iter: int = 200) -> BradleyTerryResult:
    r"""Bradley-Terry ratings of battles stored in shards partitioned by prompt: bounded memory, any size.

    The same fit and sandwich as :func:`bradley_terry` (equal to it on the concatenated battles),
    computed from per-shard sufficient statistics: outcome counts for the fit, per-cluster score sums
    for the clustered sandwich. Memory is that of one shard plus the merged counts (3 M^2 cells at
    most) and, with ``cluster``, 16 bytes per cluster for the check that no cluster spans two shards.

    Parameters
    ----------
    shards : sequence
        The shards: each a battles table (pandas DataFrame, mapping of columns, pyarrow Table, or the
        path of a Parquet or CSV file) with columns model_a, model_b, winner (``"model_a"``,
        ``"model_b"``, ``"tie"`` or the winner's name), or a zero-argument callable returning one
        (called once per pass, on the worker with ``engine="dask"``). Every shard is read twice with
        ``cluster`` (once without): a sequence, not an iterator.
    cluster : str, optional
        The column of the cluster labels (the prompt: ``"question"`` finds ``question_id``). Every
        cluster's battles must be in one shard (a DataError names the cluster and the two shards
        otherwise); the check is exact (hashes of the labels, confirmed on the labels themselves).
    count : str, optional
        A column of battle counts: each row stands for that many identical battles (whole numbers
        >= 0), e.g. a table of (model_a, model_b, winner) counts. With ``cluster`` the rows must be
        per cluster (a count of identical battles of one prompt); a table of counts over prompts has
        no cluster information and gives the per-battle sandwich (leave ``cluster`` out).
    ties : {"half", "davidson"}, default "half"
        As in :func:`bradley_terry`.
    engine : {"local", "dask"}, default "local"
        ``"local"``: the shards one after the other in this process. ``"dask"``: each pass's shards
        as tasks on a Dask cluster (the workers load the shards; the driver merges counts and meats).
        The result is the local engine's (to ~1e-15 relative: the meat's partial sums add up in the
        order they finish).
    scheduler : str or distributed.Client, optional
        With ``engine="dask"``: a scheduler address or a connected ``Client``; default a
        ``LocalCluster`` of ``n_workers`` single-threaded processes, started for the call.
    n_workers : int, optional
        Workers of that local cluster (default: the CPU count).
    confidence_level : float, default 0.95
        Default level of the intervals.
    tol, max_iter
        As in :func:`bradley_terry`.

    Returns
    -------
    BradleyTerryResult
        As :func:`bradley_terry` with ``method="sandwich"``.

    Notes
    -----
    Pass 1 merges integer counts of the outcome cells (exact); the ratings are the MLE on them, with
    the same separation handling as :func:`bradley_terry` (a model that never loses or never wins
    gets +-inf). Pass 2 (``cluster``) sums, per shard, the outer products of the clusters' score
    sums at the fitted ratings; the meat is the sum over shards, G the total number of clusters, and
    the covariance is the kernel's CR1 sandwich with G - 1 degrees of freedom. Clusters that span
    shards would split a prompt's score into two independent-looking halves (a too small variance),
    hence the check.

    Examples
    --------
    Six battles in two shards (each prompt's battles in one of them) give the ratings of the six in
    one table (the example of :func:`bradley_terry`):

    >>> from llm_power import bradley_terry_shards
    >>> one = {"model_a": ["x", "x", "y", "x"], "model_b": ["y", "z", "z", "y"],
    ...        "winner": ["model_a", "model_a", "tie", "model_b"], "prompt": ["p1", "p1", "p2", "p2"]}
    >>> two = {"model_a": ["z", "y"], "model_b": ["x", "z"], "winner": ["model_b", "model_a"],
    ...        "prompt": ["p3", "p3"]}
    >>> res = bradley_terry_shards([one, two])
    >>> res.models, [round(float(r), 3) for r in res.ratings], res.n_battles
    (['x', 'y', 'z'], [0.862, 0.446, -1.308], 6)
    """
    check_option(ties, "ties", ("half", "davidson"))
    engine = check_option(engine, "engine", ("local", "dask"))
    confidence_level = check_confidence_level(confidence_level)
    shards = _shard_list(shards)
    if cluster is not None and not isinstance(cluster, str):
        msg = f"`cluster` must be a column name of the shards; got {type(cluster).__name__}."
        raise TypeError(msg)
    if count is not None and not isinstance(count, str):
        msg = f"`count` must be a column name of the shards; got {type(count).__name__}."
        raise TypeError(msg)
    with _mapper(engine, scheduler, n_workers) as run:
        return fit_counted(shards, run, cluster=cluster, count=count, davidson=ties == "davidson",
                           confidence_level=confidence_level, tol=tol, max_iter=max_iter)


def fit_counted(shards: list[Any], run: Callable[..., Iterator[tuple[int, Any]]], *, cluster: str | None,  # noqa: PLR0913
                count: str | None, davidson: bool, confidence_level: float, tol: float,
                max_iter: int) -> BradleyTerryResult:
    """The two passes over ``shards``; ``run(fn, shards, *args)`` yields (k, fn(k, shards[k], *args))
    for every shard, in any order.
    """
    cells, models, n_battles, n_clusters, hashes = _merge_counts(run(_count_shard, shards, cluster, count))
    if cluster is not None:
        _check_partition(hashes, shards, cluster, count)
        del hashes
        require_clusters(n_clusters, unit="battle")
    main, outside, separated = separation(cells, models)
    index = np.cumsum(main) - 1
    if separated:  # the others are fitted among themselves, as bradley_terry does
        keep = main[cells.pi] & main[cells.pj]
        cells = Cells(m=int(main.sum()), pi=index[cells.pi[keep]], pj=index[cells.pj[keep]],
                      counts=cells.counts[keep])
    with one_blas_thread():
        theta, tau = fit_cells(cells, davidson=davidson, tol=tol, max_iter=max_iter)
        if cluster is None:
            sw = ratings_sandwich(cells, theta, tau, battle_meat(cells, theta, tau), None)
        else:
            codes = {name: int(index[k]) for k, name in enumerate(models) if main[k]}
            meat = np.zeros((cells.m + davidson, cells.m + davidson))
            g = 0
            for _, (part, part_g) in run(_score_shard, shards, cluster, count, (codes, cells, theta, tau)):
                meat += part
                g += part_g
            sw = ratings_sandwich(cells, theta, tau, meat, g)
    kept = [x for x, ok in zip(models, main, strict=True) if ok]
    result = sandwich_result(kept, n_battles, theta, tau, sw, confidence_level)
    return with_separated(result, models, n_battles, main, outside, separated) if separated else result


def _merge_counts(parts: Iterator[tuple[int, _Shard]]) -> tuple[Cells, list[str], int, int, list[tuple[int, Any]]]:
    """The shards' cell counts summed (int64: exact) over the union of their models, re-coded in name
    order; the battles, the clusters and each shard's label hashes.
    """
    names: dict[str, int] = {}
    ids, counts = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    n_battles = n_clusters = 0
    hashes: list[tuple[int, Any]] = []
    for k, part in parts:
        code = np.array([names.setdefault(name, len(names)) for name in part.models], dtype=np.int64)
        pair, m_shard = part.cells // 3, max(len(part.models), 1)
        mine = (code[pair // m_shard] * _CODE_SPACE + code[pair % m_shard]) * 3 + part.cells % 3
        ids, inv = np.unique(np.r_[ids, mine], return_inverse=True)
        total = np.zeros(ids.size, dtype=np.int64)
        np.add.at(total, inv.reshape(-1), np.r_[counts, part.counts])
        counts = total
        n_battles += part.n
        n_clusters += part.n_clusters
        if part.hashes is not None:
            hashes.append((k, part.hashes))
    if n_battles == 0 or len(names) < 2:
        msg = "battles between at least two models are needed (the shards hold fewer)"
        raise DataError(msg)
    models = sorted(names)
    check_model_count(len(models))
    rank = np.empty(len(names), dtype=np.int64)
    rank[[names[x] for x in models]] = np.arange(len(models))  # running code -> position in name order
    m = len(models)
    pair = ids // 3
    cell_ids = (rank[pair // _CODE_SPACE] * m + rank[pair % _CODE_SPACE]) * 3 + ids % 3
    return Cells.from_cell_counts(m, cell_ids, counts.astype(float)), models, n_battles, n_clusters, hashes


# =================================================================================================
# Per shard (on the workers with engine="dask"): module-level functions of plain arguments
# =================================================================================================

def _count_shard(k: int, shard: Any, cluster: str | None, count: str | None) -> _Shard:
    """Pass 1 on one shard: its outcome cells and their counts, its clusters' label hashes."""
    enc, labels, freq = _read_shard(k, shard, cluster, count)
    m = len(enc.models)
    cell = (enc.ia.astype(np.int64) * m + enc.ib) * 3 + enc.outcome
    if 3 * m * m <= 1 << 24:  # one bincount over the grid (exact: integer weights below 2^53)
        grid = np.bincount(cell, weights=freq, minlength=3 * m * m)
        uniq = np.flatnonzero(grid)
        tally = np.rint(grid[uniq]).astype(np.int64)
    else:
        uniq, inv = np.unique(cell, return_inverse=True)
        tally = np.rint(np.bincount(inv.reshape(-1), weights=freq, minlength=uniq.size)).astype(np.int64)
    hashes, g = None, 0
    if labels is not None:
        hashes, g = _label_hashes(*labels), labels[2]
    return _Shard(models=enc.models, cells=uniq.astype(np.int64), counts=tally, n=int(tally.sum()), hashes=hashes,
                  n_clusters=g)


def _score_shard(k: int, shard: Any, cluster: str, count: str | None,
                 fit: tuple[dict[str, int], Cells, np.ndarray, float | None]) -> tuple[np.ndarray, int]:
    """Pass 2 on one shard: sum over its clusters of s_g s_g' at the fit (the fitted models' codes,
    their cells, ratings and tau), and its number of clusters (among the battles of fitted models).
    """
    codes, cells, theta, tau = fit
    enc, labels, freq = _read_shard(k, shard, cluster, count)
    to_fit = np.array([codes.get(name, -1) for name in enc.models], dtype=np.intp)
    ia, ib = to_fit[enc.ia], to_fit[enc.ib]
    keep = (ia >= 0) & (ib >= 0)
    size = cells.m + (tau is not None)
    if labels is None or not keep.any():
        return np.zeros((size, size)), 0
    _, groups, g = labels
    if not keep.all():  # the clusters among the kept battles, renumbered
        groups = groups[keep]
        present = np.bincount(groups, minlength=g) > 0
        groups = (np.cumsum(present) - 1)[groups]
        ia, ib, outcome = ia[keep], ib[keep], enc.outcome[keep]
        freq = None if freq is None else freq[keep]
    else:
        outcome = enc.outcome
    scores = battle_scores(cells, theta, tau, ia, ib, outcome)
    g = int(groups.max()) + 1
    return cluster_meat(cells.m, groups, g, ia, ib, scores, count=freq), g


def _read_shard(k: int, shard: Any, cluster: str | None,
                count: str | None) -> tuple[Battles, tuple[np.ndarray, np.ndarray, int] | None, np.ndarray | None]:
    """A shard loaded and encoded: battles, cluster labels (their values, codes and number; None without
    ``cluster``), counts (or None); a problem is a DataError naming the shard.
    """
    name = _shard_name(k, shard)
    try:
        table = _load(shard, cluster, count)
        freq = None
        if count is not None:
            freq, keep = count_column(table, count)
            if keep is not None:
                table = table.loc[keep].reset_index(drop=True)
        enc = encode_battles(table) if len(table) else Battles(  # an empty shard adds nothing
            models=[], ia=np.zeros(0, dtype=np.intp), ib=np.zeros(0, dtype=np.intp), outcome=np.zeros(0, dtype=np.int8))
        labels = None
        if cluster is not None:
            values = cluster_labels(cluster, table)
            values = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
            codes, g = code_labels(values, enc.n, unit="battle")  # a missing label is an error here, with its row
            labels = (values, codes, g)
    except DataError as exc:
        raise DataError(exc.message, file=name, record=exc.record, field=exc.field) from None
    return enc, labels, freq


def count_column(table: Any, count: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The count column's positive values (whole numbers >= 0 checked) and which rows they are (None:
    all; rows of count 0 stand for no battle and are dropped).
    """
    try:
        values = np.asarray(table[count], dtype=float)
    except (KeyError, TypeError, ValueError):
        msg = f"count={count!r}: the battles have no numeric column {count!r}"
        raise DataError(msg) from None
    bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
    if bad.any():
        row = int(np.argmax(bad))
        msg = f"battle row {row}: count {values[row]:g} is not a whole number >= 0"
        raise DataError(msg, field=count)
    if (values == 0).any():
        keep = values > 0
        return values[keep], keep
    return values, None


def _load(shard: Any, cluster: str | None, count: str | None) -> Any:
    """A shard as a pandas DataFrame: a callable is called, a path read (its needed columns only)."""
    import pandas as pd

    if callable(shard) and not isinstance(shard, (pd.DataFrame, Mapping)):
        shard = shard()
    wanted = {"model_a", "model_b", "winner"} | ({count} if count else set()) | (
        {cluster, f"{cluster}_id"} if cluster else set())
    if isinstance(shard, (str, Path)):
        path = str(shard)
        if not Path(path).exists():
            msg = "file not found"
            raise DataError(msg)
        if path.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
            return pd.read_parquet(path, columns=[c for c in names if c in wanted])
        if path.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
            return pd.read_csv(path, sep="\t" if ".tsv" in path else ",", usecols=lambda c: c in wanted)
        msg = "a shard file must be Parquet (.parquet) or CSV (.csv, .tsv)"
        raise DataError(msg)
    if hasattr(shard, "column_names") and hasattr(shard, "to_pandas"):  # an Arrow table: its needed columns
        return shard.select([c for c in shard.column_names if c in wanted]).to_pandas()
    if isinstance(shard, pd.DataFrame):
        return shard
    if isinstance(shard, Mapping):
        try:
            return pd.DataFrame({c: shard[c] for c in shard if c in wanted})
        except ValueError:
            msg = "battles: model_a, model_b and winner must be 1-D columns of one length"
            raise DataError(msg) from None
    msg = (f"a shard must be a battles table (DataFrame, mapping, Arrow table), a Parquet or CSV path, or a "
           f"callable returning one; got {type(shard).__name__}")
    raise TypeError(msg)


def _shard_name(k: int, shard: Any) -> str:
    return f"shard {k} ({shard})" if isinstance(shard, (str, Path)) else f"shard {k}"


def _label_keys(labels: np.ndarray) -> np.ndarray:
    """Labels as hashable keys with the one label coder's identity: integers by value (also in float or
    object columns), everything else as text.
    """
    if labels.dtype.kind in "biu":
        return labels.astype(np.int64)
    if labels.dtype.kind == "f" and np.all(labels == np.round(labels)) and np.all(np.abs(labels) < 2**62):
        return labels.astype(np.int64)
    values = labels.tolist()
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array([f"\0{int(v):020d}" if isinstance(v, (int, np.integer)) else str(v) for v in values],
                    dtype=object)


def _label_hashes(values: np.ndarray, codes: np.ndarray, g: int) -> np.ndarray:
    """Sorted 64-bit hashes of the distinct cluster labels (``codes``: the label coder's, 0..g-1)."""
    import pandas as pd

    return np.sort(pd.util.hash_array(_label_keys(_distinct(values, codes, g))))


def _distinct(values: np.ndarray, codes: np.ndarray, g: int) -> np.ndarray:
    """One value per label code (its first battle's)."""
    first = np.empty(g, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)
    return np.asarray(values)[first]


def _check_partition(hashes: list[tuple[int, Any]], shards: list[Any], cluster: str, count: str | None) -> None:
    """No cluster in two shards: the shards' sorted label hashes (16 bytes per cluster while checked)
    searched for a value in two shards, each such hash confirmed on the labels themselves (a 64-bit
    collision of two different labels is not an error).
    """
    if len(hashes) < 2:
        return
    hashes.sort(key=lambda item: item[0])  # in shard order, whatever order the shards finished in
    every = np.concatenate([h for _, h in hashes])
    every.sort()
    repeated = np.unique(every[1:][every[1:] == every[:-1]])
    del every
    for value in repeated[:100]:
        owners = [k for k, h in hashes if h[min(int(np.searchsorted(h, value)), h.size - 1)] == value]
        labels = [_labels_with_hash(k, shards[k], cluster, count, value) for k in owners]
        for i in range(len(owners)):
            for j in range(i + 1, len(owners)):
                shared = labels[i] & labels[j]
                if shared:
                    label = sorted(shared, key=str)[0]
                    msg = (f"cluster {label!r} has battles in {_shard_name(owners[i], shards[owners[i]])} and "
                           f"{_shard_name(owners[j], shards[owners[j]])}: shards must be partitioned by "
                           f"`cluster` (every battle of a {cluster} in one shard)")
                    raise DataError(msg)


def _labels_with_hash(k: int, shard: Any, cluster: str, count: str | None, value: np.uint64) -> set[Any]:
    """The labels (as keys) of one shard whose hash is ``value``."""
    import pandas as pd

    _, labels, _ = _read_shard(k, shard, cluster, count)
    if labels is None:  # pragma: no cover - only called with a cluster column
        return set()
    keys = _label_keys(_distinct(*labels))
    hit = pd.util.hash_array(keys) == value
    return {v if not isinstance(v, np.integer) else int(v) for v in keys[hit].tolist()}


# =================================================================================================
# Engines: the shards one after the other, or as tasks on a Dask cluster
# =================================================================================================

def run_local(fn: Callable[..., Any], shards: list[Any], *args: Any) -> Iterator[tuple[int, Any]]:
    """(k, fn(k, shards[k], *args)) for every shard, one after the other in this process."""
    task = _TASKS[fn.__name__]
    advance(task, 0, len(shards))
    for k, shard in enumerate(shards):
        yield k, fn(k, shard, *args)
        advance(task, k + 1, len(shards))


@contextlib.contextmanager
def _mapper(engine: str, scheduler: Any, n_workers: int | None) -> Iterator[Callable[..., Iterator[tuple[int, Any]]]]:
    """``run(fn, shards, *args)``: (k, fn(k, shards[k], *args)) for every shard, here or on Dask workers."""
    if engine == "local":
        yield run_local
        return
    client, close = dask_client(scheduler, n_workers)

    def run_dask(fn: Callable[..., Any], shards: list[Any], *args: Any) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed

        task = _TASKS[fn.__name__]
        futures = [client.submit(fn, k, shard, *args, pure=False) for k, shard in enumerate(shards)]
        position = {f.key: k for k, f in enumerate(futures)}
        advance(task, 0, len(shards))
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                out = future.result()  # a task's error is raised here, as it was raised there
                yield position[future.key], out
                future.release()
                advance(task, done, len(shards))
        finally:
            client.cancel(futures)

    try:
        yield run_dask
    finally:
        close()


_TASKS = {"_count_shard": "battle shards counted", "_score_shard": "cluster scores summed"}


def _shard_list(shards: Any) -> list[Any]:
    import pandas as pd

    if isinstance(shards, (str, Path, pd.DataFrame, Mapping)) or callable(shards) or hasattr(shards, "column_names"):
        return [shards]  # one shard
    if not isinstance(shards, Sequence):
        msg = (f"`shards` must be a sequence of shards (each is read once per pass); got "
               f"{type(shards).__name__}.")
        raise TypeError(msg)
    if not shards:
        msg = "`shards` is empty: no battles to rate."
        raise ValueError(msg)
    return list(shards)
