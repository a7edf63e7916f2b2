"""Diagnose result files read on a Dask cluster: the workers hold the items, the driver the verdict.

``diagnose_files(paths, engine="dask")`` (and ``llm-power diagnose --engine dask``) reads the files
on the workers of a ``distributed`` cluster — local paths or any fsspec URL (``s3://``, ``gs://``,
``hf://``, ``file://``) — and never brings the score matrix to one machine:

1. **Read.** The files are split into shares balanced by size; each worker parses its share with
   the same readers as :func:`llm_power.read_results` and splits the rows by a hash of the item
   id into item shards.
2. **Align.** One task per item shard gathers that shard's rows from every share and aligns them
   (the same rules as :func:`llm_power.io.align_results`; an item's alignment depends only on
   its own rows, so shards align apart). The shard's matrix stays on its worker; the driver gets
   per-model sums, which models lack which items, and the cluster labels.
3. **Sufficient statistics.** For the pairs of the ranking the driver asks every shard for its
   partial statistics — discordant counts of 0/1 scores (integers: their sum is exact), per-cluster
   counts, or centred sums of graded differences (merged with Chan's update) — combined by a tree
   reduction.
4. **Verdict.** The same code as :func:`llm_power.diagnose` runs on the combined statistics: the
   results equal the local engine's (0/1 scores exactly; graded to rounding, ~1e-15 relative).

Dask is one producer of the engine contract (:mod:`llm_power.engines.contract`): item shards aligned
apart, their summaries merged by :func:`~llm_power.engines.contract.merge_summaries` (the local path's
errors and note); unlike the table engines it keeps the blocks on the workers and asks them for the
sufficient statistics instead of filling the matrix on the driver.

Without ``scheduler`` a ``distributed.LocalCluster`` is started for the call. Install the extra:
``pip install 'llm-power[dask]'``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._core.dask import ENGINES, dask_client
from .._core.errors import DataError
from .._core.validation import check_option
from .._kernel.sufficient import (
    PairSums,
    binary_cluster_counts,
    binary_pair_sums,
    both_counts,
    merge_pair_sums,
    pair_sums_graded,
)

__all__ = ["ENGINES", "diagnose_files"]

#: read options passed to the readers (the keyword arguments of read_results)
READ_OPTIONS = ("format", "metric", "cluster", "split", "filter", "item_column")


def diagnose_files(paths: str | Path | Sequence[str | Path], *, engine: str = "local", scheduler: Any = None,
                   n_workers: int | None = None, master: str | None = None, format: str = "auto",  # noqa: A002
                   metric: str | None = None, cluster: str | None = None, split: str = "test",
                   filter: str | None = None, item_column: str | None = None,  # noqa: A002
                   on_missing: str = "error", options: Any = None, rng: Any = None, **settings: Any) -> Any:
    r"""Leaderboard resolution straight from result files, on this machine or a Dask cluster.

    Parameters
    ----------
    paths : path, URL or sequence of them
        What :func:`llm_power.read_results` reads (harness folders and logs, long or wide tables).
        With ``engine="dask"`` also fsspec URLs (``s3://bucket/runs/``, ``gs://...``,
        ``hf://datasets/...``): every worker opens its share of the files itself.
    engine : {"local", "dask", "duckdb", "spark", "ray"}, default "local"
        ``"local"``: :func:`~llm_power.read_results`, :func:`~llm_power.io.align_results` and
        :func:`~llm_power.diagnose` in this process. ``"dask"``: the files are read, aligned and
        reduced to sufficient statistics on the workers of a Dask cluster (see the module notes).
        ``"duckdb"``, ``"spark"``, ``"ray"``: long tables (Parquet, CSV/TSV, JSONL; for Spark also a
        table name) read, partitioned by item and aligned where the engine runs
        (:mod:`llm_power.engines.contract`). The result is the local engine's.
    scheduler : str or distributed.Client, optional
        Dask scheduler address (``"tcp://10.0.0.5:8786"``) or a connected ``Client``. Default:
        a ``LocalCluster`` with ``n_workers`` single-threaded worker processes for this call.
        With ``engine="ray"``: the Ray cluster's address (default: a local Ray for the call).
    n_workers : int, optional
        Workers of the local cluster (default: the CPU count).
    master : str, optional
        With ``engine="spark"``: the Spark master (``"local[4]"``, ``"spark://host:7077"``; default:
        the active session, else ``local[*]``).
    format, metric, cluster, split, filter, item_column
        As in :func:`llm_power.read_results` (``cluster`` names the label field).
    on_missing : {"error", "intersect"}, default "error"
        As in :func:`llm_power.io.align_results`.
    options : DiagnoseOptions, optional
        The options of :func:`llm_power.diagnose` as one object (keywords beside it take their place).
    rng : None, int or numpy.random.Generator
        As in :func:`llm_power.diagnose`.
    **settings
        The options of :func:`llm_power.diagnose` by keyword (``pairs``, ``alpha``, ``power``,
        ``correction``, ``anytime``, ``cluster_resamples``, ``top``, ...).

    Returns
    -------
    Diagnosis
        As from :func:`llm_power.diagnose`; ``settings["note"]`` says what alignment dropped.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from llm_power import diagnose_files
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [f"{m},q{i},{int((i * 7 + k) % 10 < 6 + k)}" for k, m in enumerate("ABC") for i in range(300)]
    >>> _ = (folder / "scores.csv").write_text("model,item,score\n" + "\n".join(rows) + "\n")
    >>> diagnose_files(folder / "scores.csv").models
    ['C', 'B', 'A']
    """
    from ..resolution import DiagnoseOptions

    diag, _, note = load_and_diagnose(paths, engine=engine, scheduler=scheduler, n_workers=n_workers, master=master,
                                      read={"format": format, "metric": metric, "cluster": cluster, "split": split,
                                            "filter": filter, "item_column": item_column},
                                      on_missing=on_missing, options=DiagnoseOptions.create(options, **settings),
                                      rng=rng)
    if note:
        diag.settings["note"] = note
    return diag


def load_and_diagnose(paths: Any, *, engine: str, scheduler: Any, n_workers: int | None, read: dict[str, Any],
                      on_missing: str, options: Any, rng: Any = None, rankings: dict[str, Any] | None = None,
                      **engine_options: Any) -> tuple[Any, Any, str]:
    """The diagnosis, its rankings (``lp.rank_report`` with the keywords ``rankings``, computed while the
    source is reachable; None when not asked for) and the alignment note (what the command line prints
    above the report).
    """
    from ..rankings import rank_report
    from ..resolution import diagnose

    engine = check_option(engine, "engine", ENGINES)
    on_missing = check_option(on_missing, "on_missing", ("error", "intersect"))
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if engine == "local":
        from ..io.align import align_results
        from ..io.harness import read_frame

        aligned = align_results(read_frame(paths, **read), on_missing=on_missing)
        diag = diagnose(aligned.scores, models=aligned.models, cluster=aligned.clusters, options=options, rng=rng)
        report = None if rankings is None else rank_report(diag, **rankings)
        return diag, report, aligned.note
    if engine != "dask":
        from .tables import read_matrix

        aligned = read_matrix(paths, engine=engine, on_missing=on_missing, scheduler=scheduler, n_workers=n_workers,
                              **read, **engine_options)
        diag = diagnose(aligned.scores, models=aligned.models, cluster=aligned.clusters, options=options, rng=rng)
        report = None if rankings is None else rank_report(diag, **rankings)
        return diag, report, aligned.note
    return _diagnose_dask(list(paths), scheduler=scheduler, n_workers=n_workers, read=read, on_missing=on_missing,
                          options=options, rng=rng, rankings=rankings)


# =================================================================================================
# The driver
# =================================================================================================

def _diagnose_dask(paths: list[Any], *, scheduler: Any, n_workers: int | None, read: dict[str, Any],
                   on_missing: str, options: Any, rng: Any, rankings: dict[str, Any] | None) -> tuple[Any, Any, str]:
    from ..rankings import rank_report
    from ..resolution import diagnose_source

    files = expand(paths)  # the options are checked already (a DiagnoseOptions), before a cluster is started
    client, close = dask_client(scheduler, n_workers)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})) or (n_workers or 1))
        n_shards = max(1, workers)
        shares = _shares(files, 4 * workers)
        read_futures = [client.submit(_read_share, share, read, n_shards, pure=False) for share in shares]
        _follow(read_futures, "file shares read")
        shards = []
        for k in range(n_shards):
            pieces = [client.submit(_piece, fut, k) for fut in read_futures]
            shards.append(client.submit(_align_shard, pieces))
        summaries = client.gather([client.submit(_summary, shard) for shard in shards])
        del read_futures
        source, note = _source(client, shards, summaries, on_missing)
        diag = diagnose_source(source, source.models, options, rng=rng)
        report = None if rankings is None else rank_report(diag, **rankings)  # while the shards are up
    finally:
        close()
    return diag, report, note


def _follow(futures: list[Any], task: str) -> None:
    """Report the futures' progress as they finish (a failed one raises its error here)."""
    from distributed import as_completed

    from .._core.progress import advance

    advance(task, 0, len(futures))
    for done, future in enumerate(as_completed(futures), start=1):
        if future.status == "error":
            future.result()
        advance(task, done, len(futures))


def _source(client: Any, shards: list[Any], summaries: list[dict[str, Any]], on_missing: str) -> tuple[Any, str]:
    """The combined shard summaries checked like :func:`align_results` does, as a source."""
    from .._core.order import natural_key
    from ..io.align import targets_differ, too_few_models
    from .contract import merge_summaries

    models = summaries[0]["models"]
    conflicts = [s["targets"] for s in summaries if s["targets"] is not None]
    if conflicts:
        first = min(conflicts, key=lambda t: natural_key(t[1]))
        raise targets_differ(sum(t[0] for t in conflicts), first[1], first[2])
    n, _, note = merge_summaries(summaries, on_missing)  # the contract's merge: the local path's errors and note
    live = [s for s in summaries if s["n"] > 0]
    sums = np.sum([s["sum"] for s in live], axis=0)
    means = sums / n
    m2 = np.sum([s["m2"] + s["n"] * (s["sum"] / s["n"] - means) ** 2 for s in live], axis=0)
    with_clusters = summaries[0]["labels"] is not None
    labels = sorted(set().union(*(s["labels"] for s in live))) if with_clusters else []
    if with_clusters:
        from .._core.clusters import require_clusters

        require_clusters(len(labels))
    if len(models) < 2:  # pragma: no cover - _read_share checks first
        raise too_few_models(models)
    keep = [shard for shard, s in zip(shards, summaries, strict=True) if s["n"] > 0]
    return ShardSource(client=client, shards=keep, n=n, models=models, labels=labels,
                       binary=all(s["binary"] for s in live), sums=(means, m2)), note


# =================================================================================================
# Files: local paths and fsspec URLs, in shares balanced by size
# =================================================================================================

def _is_url(path: Any) -> bool:
    return "://" in str(path)


def expand(paths: list[Any]) -> list[str]:
    """The result files of the inputs: local folders as :func:`read_results` expands them, URLs
    through fsspec (folders searched for harness files by name).
    """
    from ..io.detect import expand_paths

    out: list[str] = []
    local = [p for p in paths if not _is_url(p)]
    if local:
        out += [str(p) for p in expand_paths(local)]
    for url in (p for p in paths if _is_url(p)):
        out += _expand_url(str(url))
    return out


def _expand_url(url: str) -> list[str]:
    """The result files of a remote folder, by the registry's name patterns (no file is opened here:
    a format known by its content only is read when its file URL is given).
    """
    from fnmatch import fnmatchcase

    from ..io.formats import by_order
    from ._tables import url_folder

    fs, root = url_folder(url)
    if root is None:
        return [url]
    formats = [f for f in by_order() if f.patterns or f.folder_marker]
    found = []
    for path in sorted(fs.find(root)):
        parts = path.split("/")
        if any(parts[-1] == f.folder_marker for f in formats):
            found.append(fs.unstrip_protocol(path.rsplit("/", 1)[0]))
        elif any(fnmatchcase("/".join(parts[-(g.count("/") + 1):]), g) for f in formats for g in f.patterns):
            found.append(fs.unstrip_protocol(path))
    if not found:
        known = ", ".join(f.summary for f in formats)
        msg = (f"no result files found in this folder ({known}; other formats are read from their file URLs, "
               "given one by one)")
        raise DataError(msg, file=url)
    return found


def _size(path: str) -> int:
    if _is_url(path):
        return 1
    p = Path(path)
    return p.stat().st_size if p.is_file() else 1


def _shares(files: list[str], n_shares: int) -> list[list[str]]:
    """Files in at most ``n_shares`` groups of about equal size (largest first to the lightest)."""
    n_shares = max(1, min(n_shares, len(files)))
    shares: list[list[str]] = [[] for _ in range(n_shares)]
    load = np.zeros(n_shares)
    for path in sorted(files, key=lambda p: -_size(p)):
        k = int(np.argmin(load))
        shares[k].append(path)
        load[k] += _size(path)
    return [sorted(s) for s in shares if s]


def _localise(url: str, folder: Path) -> Path:
    """A copy of a remote result file (and the files its reader looks at beside it: results_*.json
    of lm-eval and lighteval, a HELM run folder) under ``folder``, keeping the parent folders' names.
    """
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    parts = path.rstrip("/").split("/")
    target = folder.joinpath(*[p for p in parts[-3:] if p])
    target.parent.mkdir(parents=True, exist_ok=True)
    if fs.isdir(path):
        fs.get(path.rstrip("/") + "/", str(target), recursive=True)
        return target
    fs.get(path, str(target))
    parent = path.rsplit("/", 1)[0]
    companions = fs.glob(parent + "/results_*.json")
    if parts[-1].startswith("details_"):
        companions += fs.glob(parent.rsplit("/", 1)[0] + "/results_*.json")
    for extra in companions:
        rel = extra.split("/")[-(3 if extra.count("/") >= 2 else 1):]
        dest = folder.joinpath(*rel) if len(rel) == 3 and parts[-3:-2] == rel[:1] else target.parent / rel[-1]
        dest.parent.mkdir(parents=True, exist_ok=True)
        fs.get(extra, str(dest))
    return target


# =================================================================================================
# Worker tasks
# =================================================================================================

def _read_share(files: list[str], read: dict[str, Any], n_shards: int) -> list[Any]:
    """Parse a share of the files; the rows split into item shards by a hash of the item id."""
    import pandas as pd

    from ..io.harness import concat_parts, read_part

    options = {key: read.get(key) for key in READ_OPTIONS}
    options["format"] = options["format"] or "auto"
    options["split"] = options["split"] or "test"
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, path in enumerate(files):
            local = _localise(path, Path(tmp) / str(k)) if _is_url(path) else Path(path)
            part = read_part(local, options)
            if part is not None:
                if _is_url(path):
                    part["source"] = path
                parts.append(part)
    if not parts:
        return [None] * n_shards
    frame = concat_parts(parts)
    key = pd.util.hash_array(frame["item"].astype(str).to_numpy(dtype=object)) % np.uint64(n_shards)
    return [frame[key == k].reset_index(drop=True) for k in range(n_shards)]


def _piece(parts: list[Any], k: int) -> Any:
    return parts[k]


@dataclass
class _Shard:
    """One item shard, aligned: its matrix stays on the worker that built it."""

    x: np.ndarray
    items: Sequence[Any]
    labels: np.ndarray | None
    summary: dict[str, Any] = field(default_factory=dict)


def _align_shard(pieces: list[Any]) -> Any:
    """Align one item shard over all the files (rules of align_results, applied to its items)."""
    import pandas as pd

    from ..io.align import align_common, check_duplicates, target_conflicts, too_few_models
    from ..io.harness import concat_parts

    frames = [p for p in pieces if p is not None and len(p)]
    models_all: set[Any] = set()
    for piece in pieces:  # every model (an item shard may lack a model altogether)
        if piece is not None:
            models_all.update(piece["model"].cat.categories.tolist())
    models = sorted(models_all, key=str)
    if not models:
        msg = "no per-item results found"
        raise DataError(msg)
    if len(models) < 2:
        raise too_few_models(models)
    with_clusters = any(p is not None and "cluster" in p.columns for p in pieces)
    if not frames:
        empty = np.empty(0, dtype=object) if with_clusters else None
        return _Shard(x=np.zeros((0, len(models))), items=[], labels=empty,
                      summary={"models": models, "n": 0, "n_all": 0, "lacking": {}, "targets": None,
                               "per_model": [0] * len(models),
                               "labels": set() if with_clusters else None})
    frame = concat_parts(frames)
    check_duplicates(frame)
    conflict = target_conflicts(frame)
    aligned, lacking, n_all = align_common(frame, models)
    x = np.ascontiguousarray(aligned.scores)
    labels = None if aligned.clusters is None else np.asarray(aligned.clusters, dtype=object)
    if labels is not None and labels.size:
        from .._core.clusters import code_labels

        code_labels(labels, labels.size)  # blank labels: the same error as diagnose gives
    n = x.shape[0]
    sums = x.sum(axis=0)
    resid = x - (sums / n if n else 0.0)
    per_model = np.bincount(pd.Categorical(frame["model"], categories=models).codes, minlength=len(models))
    summary = {"models": models, "n": n, "n_all": n_all, "lacking": lacking, "targets": conflict,
               "per_model": per_model.tolist(),
               "sum": sums, "m2": np.einsum("ij,ij->j", resid, resid),
               "binary": bool(np.all((x == 0) | (x == 1))),
               "labels": None if labels is None else set(labels.tolist())}
    return _Shard(x=x, items=aligned.items, labels=labels, summary=summary)


def _summary(shard: _Shard) -> dict[str, Any]:
    return shard.summary


def _codes(shard: _Shard, labels: list[str]) -> np.ndarray:
    assert shard.labels is not None  # noqa: S101 - asked only with clusters
    return np.searchsorted(np.asarray(labels, dtype=object), shard.labels).astype(np.int64)


def _shard_both(shard: _Shard, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return np.asarray(both_counts(shard.x, i, j), dtype=float)  # float64: sums of shards stay exact


def _shard_binary_clusters(shard: _Shard, i: np.ndarray, j: np.ndarray,
                           labels: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    codes, g = _codes(shard, labels), len(labels)
    col, disc = binary_cluster_counts(shard.x, i, j, codes, g)
    return np.bincount(codes, minlength=g).astype(float), col[:, i] - col[:, j], disc


def _shard_model_clusters(shard: _Shard, means: np.ndarray,
                          labels: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from .._kernel.sufficient import model_cluster_sums

    g = len(labels)
    if not shard.x.shape[0]:
        return np.zeros(g), np.zeros((g, shard.x.shape[1])), np.zeros((g, shard.x.shape[1]))
    return model_cluster_sums(shard.x, _codes(shard, labels), g, means)


def _shard_graded(shard: _Shard, i: np.ndarray, j: np.ndarray, labels: list[str] | None) -> PairSums:
    """Centred sums of the shard's differences; per cluster with the clusters it lacks as zeros."""
    if not labels:
        return pair_sums_graded(shard.x, i, j, None, 0)
    codes = _codes(shard, labels)
    present, local = np.unique(codes, return_inverse=True)
    part = pair_sums_graded(shard.x, i, j, local.astype(np.int64), present.size)
    g = len(labels)
    sizes, resid, resid_sq = np.zeros(g), np.zeros((g, i.size)), np.zeros((g, i.size))
    m, r, q = part.clusters()
    sizes[present], resid[present], resid_sq[present] = m, r, q
    return PairSums(n=part.n, delta=part.delta, ss=part.ss, sizes=sizes, resid=resid, resid_sq=resid_sq)


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(u + v for u, v in zip(a, b, strict=True))
    return a + b


def _merge(a: PairSums, b: PairSums) -> PairSums:
    return merge_pair_sums([a, b])


# =================================================================================================
# The source of sufficient statistics that lives on the workers
# =================================================================================================

class ShardSource:
    """:class:`llm_power.matrix.ScoreSource` over aligned item shards held by Dask workers."""

    def __init__(self, *, client: Any, shards: list[Any], n: int, models: list[Any], labels: list[str],
                 binary: bool, sums: tuple[np.ndarray, np.ndarray], cols: np.ndarray | None = None) -> None:
        self.client, self.shards, self.n, self.models = client, shards, n, models
        self.labels, self.binary, self._moments = labels, binary, sums
        self.n_groups = len(labels)
        self.cols = np.arange(len(models)) if cols is None else cols
        self.n_models = self.cols.size

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        return self._moments[0][self.cols], self._moments[1][self.cols]

    def select(self, keep: np.ndarray) -> ShardSource:
        return ShardSource(client=self.client, shards=self.shards, n=self.n, models=self.models,
                           labels=self.labels, binary=self.binary, sums=self._moments, cols=self.cols[keep])

    def _reduce(self, fn: Callable[..., Any], combine: Callable[[Any, Any], Any], *args: Any) -> Any:
        """``fn(shard, *args)`` on every shard, combined pairwise in a tree on the workers."""
        scattered = [self.client.scatter(a, broadcast=True) if isinstance(a, np.ndarray) and a.size > 10_000 else a
                     for a in args]
        level = [self.client.submit(fn, shard, *scattered) for shard in self.shards]
        while len(level) > 1:
            level = [self.client.submit(combine, level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                     for k in range(0, len(level), 2)]
        return level[0].result()

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return np.asarray(self._reduce(_shard_both, _add, self.cols[i], self.cols[j]), dtype=float)

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> PairSums:
        if not self.n_groups:
            return binary_pair_sums(self.n, b, c)
        sizes, s_g, disc = self._reduce(_shard_binary_clusters, _add, self.cols[i], self.cols[j], self.labels)
        return binary_pair_sums(self.n, b, c, sizes=sizes, s_g=s_g, disc=disc)

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> PairSums:
        return self._reduce(_shard_graded, _merge, self.cols[i], self.cols[j], self.labels or None)  # type: ignore[no-any-return]

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per cluster its size and per model the centred sums (the shards' sums added on the workers)."""
        full = np.zeros(len(self.models))
        full[self.cols] = means
        sizes, r, q = self._reduce(_shard_model_clusters, _add, full, self.labels)
        return sizes, r[:, self.cols], q[:, self.cols]

    def matrix(self) -> np.ndarray:
        """The whole matrix in natural item order (asked for below 30 graded items only)."""
        from .._core.order import natural_key

        parts = self.client.gather([self.client.submit(_shard_rows, shard) for shard in self.shards])
        items = [it for _, its in parts for it in its]
        x = np.concatenate([p for p, _ in parts], axis=0)
        order = sorted(range(len(items)), key=lambda r: natural_key(items[r]))
        return x[np.asarray(order, dtype=np.intp)][:, self.cols]


def _shard_rows(shard: _Shard) -> tuple[np.ndarray, Sequence[Any]]:
    return shard.x, shard.items
