"""The score matrix: the one thing readers hand to methods, and the in-memory source of diagnose's
sufficient statistics.

Every reader (:func:`llm_power.read_results` + :func:`llm_power.align_results`, the demo's data,
the pandas accessor) produces a :class:`ScoreMatrix`: items x models scores without missing values,
the models' names, one optional cluster label per item, and what alignment dropped. Methods take
it (``diagnose(matrix)`` reads the names and clusters from it).

diagnose asks its data a few questions -- per-model moments, the pairs' discordant counts or sums
of differences, per cluster when there are clusters -- through the :class:`ScoreSource` protocol.
A :class:`ScoreMatrix` answers them from memory; the Dask engine
(:mod:`llm_power.engines.dask`) answers the same questions from item shards held by its workers,
so the statistics, tests, verdicts and regimes are one code path whatever holds the items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ._core.clusters import code_labels
from ._core.errors import DataError
from ._core.order import natural_key
from ._core.validation import all_rows

if TYPE_CHECKING:  # the kernel (scipy) is loaded when a statistic is asked for: readers stay light
    from ._kernel.sufficient import PairSums

__all__ = ["RunScores", "ScoreMatrix", "ScoreSource"]


class ScoreSource(Protocol):
    """The questions diagnose asks of the scores (columns are models in the source's order)."""

    @property
    def n(self) -> int:
        """The number of items."""
        ...

    @property
    def n_models(self) -> int:
        """The number of models (columns)."""
        ...

    @property
    def n_groups(self) -> int:
        """The number of clusters (0: none)."""
        ...

    @property
    def binary(self) -> bool:
        """Whether every score is 0 or 1."""
        ...

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per model: the mean score and the sum of squared deviations from it."""
        ...

    def select(self, keep: np.ndarray) -> ScoreSource:
        """The same items with only the columns ``keep``."""
        ...

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """0/1 scores: items both columns of each pair got right."""
        ...

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> PairSums:
        """0/1 scores: the pairs' sums from their discordant counts (and per cluster)."""
        ...

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> PairSums:
        """Graded scores: centred sums of the pairs' differences (and per cluster)."""
        ...

    def matrix(self) -> np.ndarray:
        """The items x models matrix itself (small benchmarks only: the per-pair choice of test
        for fewer than 30 graded items looks at the differences).
        """
        ...

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """With clusters: per cluster its size, and per model the sums of (x - mean) and (x - mean)^2
        (G,), (G, M), (G, M): what each model's cluster-robust interval needs.
        """
        ...


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Items x models scores, aligned, without missing values: what readers produce and methods take.

    It is also the in-memory :class:`ScoreSource` of :func:`llm_power.diagnose` (the cluster labels
    coded once, by the package's one coder).

    Parameters
    ----------
    items : sequence
        The item ids, one per row of ``scores`` (a list from the readers).
    models : list
        The model names, one per column of ``scores``.
    scores : numpy.ndarray
        Shape ``(len(items), len(models))``; 0/1 correctness or graded scores.
    clusters : list or None
        One cluster label per item (a subject, a source document), or None.
    note : str
        What alignment did, in words (empty when nothing needs saying).
    dropped : dict
        Per model, the items alignment dropped (``on_missing="intersect"``).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.matrix import ScoreMatrix
    >>> m = ScoreMatrix(items=["q1", "q2", "q3"], models=["a", "b"], scores=np.array([[1, 0], [1, 1], [0, 0]]))
    >>> m.n, m.n_models, m.binary
    (3, 2, True)
    """

    items: Sequence[Any]
    models: list[Any]
    scores: np.ndarray
    clusters: list[Any] | np.ndarray | None = None
    note: str = ""
    dropped: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line (the items, models and labels are attributes: 12,032 item ids are not a repr)."""
        kind = "0/1 scores" if self.binary else "graded scores"
        clusters = f", {self.n_groups:,} clusters" if self.clusters is not None else ""
        shown = ", ".join(repr(m) for m in self.models[:3]) + (", ..." if len(self.models) > 3 else "")
        return (f"ScoreMatrix({self.n:,} items x {self.n_models:,} models, {kind}{clusters}; "
                f"models: {shown[:200]})")

    def __post_init__(self) -> None:
        shape = np.shape(self.scores)
        if len(shape) != 2 or shape != (len(self.items), len(self.models)):
            msg = (f"`scores` must be items x models ({len(self.items)} x {len(self.models)}); got shape {shape}.")
            raise ValueError(msg)
        if self.clusters is not None and len(self.clusters) != shape[0]:
            msg = f"`clusters` must have one label per item ({shape[0]}); got {len(self.clusters)}."
            raise ValueError(msg)

    @classmethod
    def coded(cls, scores: np.ndarray, models: list[Any], codes: np.ndarray | None, n_groups: int) -> ScoreMatrix:
        """A matrix whose cluster labels are already coded 0..G-1 (validated scores, no copy)."""
        out = cls(items=range(scores.shape[0]), models=list(models), scores=scores,
                  clusters=codes)  # the codes are labels too
        out.__dict__["coding"] = (codes, n_groups)  # the cached coding: not coded a second time
        return out

    # --- the source protocol -----------------------------------------------------------------------

    @cached_property
    def coding(self) -> tuple[np.ndarray | None, int]:
        """The cluster codes 0..G-1 and G (None and 0 without clusters)."""
        if self.clusters is None:
            return None, 0
        return code_labels(self.clusters, len(self.items))

    @property
    def n(self) -> int:
        """The number of items."""
        return int(self.scores.shape[0])

    @property
    def n_models(self) -> int:
        """The number of models."""
        return int(self.scores.shape[1])

    @property
    def n_groups(self) -> int:
        """The number of clusters (0: none)."""
        return self.coding[1]

    @cached_property
    def binary(self) -> bool:
        """Whether every score is 0 or 1."""
        return all_rows(self.scores, lambda block: (block == 0) | (block == 1))

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per model: the mean score and the sum of squared deviations from it."""
        x = self.scores
        means = x.mean(axis=0)
        if self.binary:  # sum (x - mean)^2 = n p (1 - p) for 0/1 scores: no pass over the matrix
            return means, self.n * means * (1.0 - means)
        m2 = np.empty(self.n_models)
        step = max(1, (1 << 22) // max(self.n, 1))  # centred squares of a few columns at a time
        for start in range(0, self.n_models, step):
            resid = x[:, start:start + step] - means[start:start + step]
            m2[start:start + step] = np.einsum("ij,ij->j", resid, resid)
        return means, m2

    def select(self, keep: np.ndarray) -> ScoreMatrix:
        """The same items with only the columns ``keep``."""
        codes, n_groups = self.coding
        out = ScoreMatrix.coded(self.scores[:, keep], [self.models[k] for k in np.asarray(keep)], codes, n_groups)
        if "binary" in self.__dict__:
            out.__dict__["binary"] = self.binary
        return out

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """0/1 scores: items both columns of each pair got right. With clusters they are the sum of
        the per-cluster counts, which :meth:`pair_sums_binary` of the same pairs then takes instead
        of forming them again (the full Gram matrix is the sum of the clusters').
        """
        from ._kernel.sufficient import binary_cluster_both, both_counts

        codes, n_groups = self.coding
        if codes is None:
            return both_counts(self.scores, i, j)
        col, disc, total = binary_cluster_both(self.scores, i, j, codes, n_groups)
        self.__dict__["_cluster_counts"] = (np.array(i), np.array(j), col, disc)  # for pair_sums_binary, once
        return total

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> PairSums:
        """0/1 scores: the pairs' sums from their discordant counts (and per cluster)."""
        from ._kernel.sufficient import pair_sums_binary

        codes, n_groups = self.coding
        kept = self.__dict__.pop("_cluster_counts", None)
        counts = kept[2:] if kept is not None and np.array_equal(kept[0], i) and np.array_equal(kept[1], j) else None
        return pair_sums_binary(self.scores, i, j, codes, n_groups, b, c, counts)

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> PairSums:
        """Graded scores: centred sums of the pairs' differences (and per cluster)."""
        from ._kernel.sufficient import pair_sums_graded

        codes, n_groups = self.coding
        return pair_sums_graded(self.scores, i, j, codes, n_groups)

    def matrix(self) -> np.ndarray:
        """The items x models matrix itself."""
        return self.scores

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per cluster its size, and per model the sums of (x - mean) and (x - mean)^2."""
        from ._kernel.sufficient import model_cluster_sums

        codes, n_groups = self.coding
        return model_cluster_sums(self.scores, codes, n_groups, means)


@dataclass(frozen=True)
class RunScores:
    """Several runs per model on the same items (seeds, prompt templates, engines, judge reruns).

    Every run of a model covers the same items (checked when built); models may have different
    numbers of runs. What the run regime of :func:`llm_power.diagnose`, :func:`llm_power.run_variance`
    and :func:`llm_power.noise` take; :meth:`averaged` is the items x models matrix of run means that
    every other regime sees.

    Parameters
    ----------
    items : list
        Item ids, one per row of each block.
    models : list
        Model names.
    blocks : list of numpy.ndarray
        Per model, its scores of shape ``(len(items), runs of that model)``.
    run_labels : list of list of str
        Per model, the label of each of its runs (a seed, a template name).
    clusters : list or None
        One cluster label per item, or None.
    runs_by : str
        What identifies a run ("run", "seed", "template", ...): shown in reports.
    note : str
        What alignment dropped, in words.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power.matrix import RunScores
    >>> rs = RunScores.from_array(np.zeros((4, 3, 2)), models=["a", "b"])
    >>> rs.n, rs.n_models, rs.runs.tolist()
    (4, 2, [3, 3])
    """

    items: list[Any]
    models: list[Any]
    blocks: list[np.ndarray]
    run_labels: list[list[str]]
    clusters: list[Any] | None = None
    runs_by: str = "run"
    note: str = ""

    def __repr__(self) -> str:
        """One line: the sizes, not the ids (the reruns' repr was 18,993 characters)."""
        runs = sorted({len(r) for r in self.run_labels})
        shown = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]}-{runs[-1]}"
        clusters = ", clustered" if self.clusters is not None else ""
        names = ", ".join(repr(m) for m in self.models[:3]) + (", ..." if len(self.models) > 3 else "")
        return (f"RunScores({len(self.items):,} items x {len(self.models):,} models x {shown} {self.runs_by}s"
                f"{clusters}; models: {names[:200]})")

    def __post_init__(self) -> None:
        if len(self.blocks) != len(self.models) or len(self.run_labels) != len(self.models):
            msg = f"{len(self.models)} models but {len(self.blocks)} score blocks and {len(self.run_labels)} run lists"
            raise ValueError(msg)
        for name, blk, labels in zip(self.models, self.blocks, self.run_labels, strict=True):
            if np.ndim(blk) != 2 or np.shape(blk)[0] != len(self.items) or np.shape(blk)[1] != len(labels):
                msg = (f"model {name!r}: scores must be items x runs ({len(self.items)} x {len(labels)}); "
                       f"got shape {np.shape(blk)}")
                raise ValueError(msg)
            if not np.all(np.isfinite(blk)):
                msg = f"model {name!r}: a score is missing or not finite (every run must score every item)"
                raise DataError(msg)
        if self.clusters is not None and len(self.clusters) != len(self.items):
            msg = f"{len(self.clusters)} cluster labels for {len(self.items)} items"
            raise ValueError(msg)

    @classmethod
    def from_array(cls, scores: Any, *, models: Any = None, items: Any = None, clusters: Any = None,
                   runs_by: str = "run") -> RunScores:
        """From an items x runs x models array (every model with the same number of runs)."""
        arr = np.asarray(scores, dtype=float)
        if arr.ndim != 3:
            msg = f"run scores must be items x runs x models (3 dimensions); got shape {arr.shape}"
            raise ValueError(msg)
        n, r, m = arr.shape
        names = [f"model_{k}" for k in range(m)] if models is None else list(models)
        if len(names) != m:
            msg = f"{len(names)} model names for {m} models"
            raise ValueError(msg)
        return cls(items=list(range(n)) if items is None else list(items), models=names,
                   blocks=[np.ascontiguousarray(arr[:, :, k]) for k in range(m)],
                   run_labels=[[str(t) for t in range(r)] for _ in range(m)],
                   clusters=None if clusters is None else list(clusters), runs_by=runs_by)


    @classmethod
    def from_frame(cls, frame: Any, *, run: str = "run", on_missing: str = "error",
                   runs_by: str | None = None) -> RunScores:
        """From a long table ``model, <run>, item, score[, cluster]`` (:func:`llm_power.align_runs`)."""
        from ._core.validation import check_option

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
        per_model = {name: _run_block(name, np.flatnonzero(model == name), runs, icode, score, item_names, on_missing)
                     for name in names}
        notes = [f"{name}: {int((blk[2] & ~blk[3]).sum()):,} items not scored in every run"
                 for name, blk in per_model.items() if not np.array_equal(blk[2], blk[3])]
        if on_missing == "error":
            _check_run_models(per_model, item_names)
        keep = np.flatnonzero(np.all([blk[3] for blk in per_model.values()], axis=0))
        if keep.size < 2:
            msg = f"{keep.size} item(s) scored by every run of every model; at least 2 are needed"
            raise DataError(msg)
        if keep.size < len(item_names):
            notes.append(f"kept the {keep.size:,} items every run of every model scores (of {len(item_names):,})")
        clusters = None if cluster is None else _run_cluster_labels(icode, cluster, item_names, keep)
        return cls(items=[item_names[int(k)] for k in keep], models=names,
                   blocks=[np.ascontiguousarray(per_model[n][1][keep]) for n in names],
                   run_labels=[per_model[n][0] for n in names], clusters=clusters, runs_by=runs_by or run,
                   note="; ".join(notes))

    @property
    def n(self) -> int:
        """The number of items."""
        return len(self.items)

    @property
    def n_models(self) -> int:
        """The number of models."""
        return len(self.models)

    @property
    def runs(self) -> np.ndarray:
        """The number of runs of each model."""
        return np.array([blk.shape[1] for blk in self.blocks], dtype=np.int64)

    @property
    def binary(self) -> bool:
        """Whether every score is 0 or 1."""
        return all(bool(np.all((blk == 0) | (blk == 1))) for blk in self.blocks)

    @property
    def shared_runs(self) -> bool:
        """Whether every model has the same runs (labels, in the same order): what matched runs need."""
        return all(labels == self.run_labels[0] for labels in self.run_labels)

    def matched(self, pairing: str = "auto") -> bool:
        """Whether pairs are analysed with matched runs: ``"matched"`` (every model must have the same run
        labels), ``"independent"``, or ``"auto"``: matched when runs are prompt templates
        (``runs_by == "template"``) that every model shares.
        """
        if pairing not in ("auto", "independent", "matched"):
            msg = f"`run_pairing` must be 'auto', 'independent' or 'matched'; got {pairing!r}"
            raise ValueError(msg)
        if pairing == "matched" and not self.shared_runs:
            msg = ("run_pairing='matched' needs every model run with the same runs (labels); these differ: "
                   f"{self.run_labels[0][:4]} ... and others")
            raise ValueError(msg)
        return pairing == "matched" or (pairing == "auto" and self.runs_by == "template" and self.shared_runs)

    def averaged(self) -> ScoreMatrix:
        """The items x models matrix of each item's mean over the model's runs."""
        scores = np.column_stack([blk.mean(axis=1) for blk in self.blocks]) if self.blocks else np.empty((self.n, 0))
        return ScoreMatrix(items=list(self.items), models=list(self.models), scores=scores, clusters=self.clusters,
                           note=self.note)

    def select(self, keep: Any) -> RunScores:
        """Only the models ``keep`` (indices)."""
        idx = [int(k) for k in np.asarray(keep).ravel()]
        return RunScores(items=self.items, models=[self.models[k] for k in idx], blocks=[self.blocks[k] for k in idx],
                         run_labels=[self.run_labels[k] for k in idx], clusters=self.clusters, runs_by=self.runs_by,
                         note=self.note)


def _run_block(name: str, rows: np.ndarray, runs: np.ndarray, icode: np.ndarray, score: np.ndarray,  # noqa: PLR0913, PLR0917
                 item_names: list[str], on_missing: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """One model's (run labels, items x runs block with NaN where missing, items it has, items every
    run has); duplicates, and with ``on_missing="error"`` a run lacking items, are errors.
    """
    labels = sorted(set(runs[rows].tolist()), key=natural_key)
    cells = len(item_names) * len(labels)
    if cells > 8 * rows.size + 1_000_000:  # bound memory before allocating the items x runs table
        msg = (f"model {name!r}: {len(labels):,} runs x {len(item_names):,} items would be {cells:,} cells for "
               f"{rows.size:,} rows: far from one score per run and item (is the run field the right one?)")
        raise DataError(msg)
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


def _check_run_models(per_model: dict[str, Any], item_names: list[str]) -> None:
    """Every model has the items some model has (``on_missing="error"``)."""
    anyone = np.any([blk[2] for blk in per_model.values()], axis=0)
    for name, blk in per_model.items():
        if not np.array_equal(blk[2], anyone):
            miss = np.flatnonzero(anyone & ~blk[2])
            msg = (f"model {name!r} lacks {miss.size:,} of the {int(anyone.sum()):,} items other models have "
                   f"(first: {item_names[int(miss[0])]!r}); `on_missing`='intersect' keeps the common ones")
            raise DataError(msg)


def _run_cluster_labels(icode: np.ndarray, cluster: np.ndarray, item_names: list[str], keep: np.ndarray) -> list[str]:
    """One cluster label per kept item; an item with two labels is an error."""
    label: dict[int, str] = {}
    for code, lab in zip(icode.tolist(), cluster.tolist(), strict=True):
        if label.setdefault(code, lab) != lab:
            msg = (f"item {item_names[code]!r} has two cluster labels ({label[code]!r} and {lab!r}); every row of "
                   "an item must give it the same one")
            raise DataError(msg)
    return [label[int(k)] for k in keep]
