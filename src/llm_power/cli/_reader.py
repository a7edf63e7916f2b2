"""What a reading command asked of the readers, typed: :class:`ReaderOptions` is read from the parsed
arguments once (:meth:`ReaderOptions.from_args`) and handed to the loaders, which never look at the
argparse namespace (a command that reads other files -- gate's ``--data``, ``--demo`` -- replaces a
field instead of building a namespace of its own).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..matrix import ScoreMatrix

__all__ = ["OneModel", "ReaderOptions", "load_matrix", "load_roles"]


@dataclass(frozen=True)
class ReaderOptions:
    """The reader flags of a command: the files, the format and columns, the split and filter of a
    harness's records, what to do about missing items, the run field, and which models (in order).
    """

    paths: tuple[str, ...]
    input_format: str = "auto"
    metric: str | None = None
    id_column: str | None = None
    cluster: str | None = None
    split: str = "test"
    filter: str | None = None
    on_missing: str = "error"
    run_field: str | None = None
    models: tuple[str, ...] | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, paths: str = "results") -> ReaderOptions:
        """The options of a parsed command (``paths``: the namespace field of its files); a flag a command
        does not have takes the default.
        """
        def get(name: str, default: Any = None) -> Any:
            return getattr(args, name, default)

        models = get("models")
        return cls(paths=tuple(str(p) for p in (get(paths) or ())), input_format=get("input_format", "auto") or "auto",
                   metric=get("metric"), id_column=get("id_column"), cluster=get("cluster"),
                   split=get("split", "test") or "test", filter=get("filter"),
                   on_missing=get("on_missing", "error") or "error", run_field=get("run_field"),
                   models=None if models is None else tuple(models))

    def read_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`llm_power.io.read_results` these options give."""
        return {"format": self.input_format, "metric": self.metric, "cluster": self.cluster, "split": self.split,
                "filter": self.filter, "item_column": self.id_column}


@dataclass(frozen=True)
class OneModel:
    """What the files hold when it is one model: its name, its scores and their cluster labels (the
    command prints a one-model summary instead of a comparison).
    """

    name: str
    scores: Any
    clusters: list[Any] | None


def load_matrix(opts: ReaderOptions, paths: list[Any] | None = None, *, min_models: int = 2,
                one_model: bool = False) -> Any:
    """The aligned items x models matrix of the files (``paths``: already expanded, else ``opts.paths``):
    one wide table straight into the matrix, anything else through the long table of
    :func:`llm_power.io.harness.read_frame` (large inputs in parallel processes) -- both with the same
    rules. ``one_model``: a single model is a :class:`OneModel` rather than too few to align.
    """
    import numpy as np

    from ..io import align_results
    from ..io.align import align_matrix, check_duplicates
    from ..io.detect import expand_paths
    from ..io.harness import read_frame, read_wide_table
    from ..io.safe import parse_once

    with parse_once():
        files = expand_paths(opts.paths) if paths is None else paths
        wide = None
        if len(files) == 1:
            wide = read_wide_table(files[0], format=opts.input_format, metric=opts.metric, cluster=opts.cluster,
                                   item_column=opts.id_column)
        if wide is not None:
            items, names, values, clusters = wide
            if one_model and len(names) == 1:
                keep = ~np.isnan(values[:, 0])
                return OneModel(str(names[0]), values[keep, 0],
                                None if clusters is None else [c for c, k in zip(clusters, keep, strict=True) if k])
            return align_matrix(items, names, values, clusters, on_missing=opts.on_missing, min_models=min_models)
        frame = read_frame(files, **opts.read_kwargs())
        if one_model and frame["model"].nunique() == 1:
            check_duplicates(frame)  # the same file twice, or an item twice: an error as for two models
            return OneModel(str(frame["model"].iloc[0]), frame["score"].to_numpy(),
                            frame["cluster"].tolist() if opts.cluster and "cluster" in frame else None)
        return align_results(frame, on_missing=opts.on_missing, min_models=min_models)


def load_roles(opts: ReaderOptions, roles: dict[str, str]) -> ScoreMatrix:
    """One model per path, named by its role (gate's BASELINE and CANDIDATE): the aligned matrix with a
    column per role, in ``roles`` order, named after the model each path holds (the same model in both
    is two runs of it: "NAME (baseline)", "NAME (candidate)"). A path with more or fewer than one model
    is an error that says how to name models in one file instead.
    """
    from pathlib import Path

    import pandas as pd

    from .._core.errors import DataError, LLMPowerWarning, warn
    from ..io import align_results, read_results
    from ..io.safe import parse_once
    from ..matrix import ScoreMatrix

    frames, names = [], []
    with parse_once():
        for role, path in roles.items():
            if not Path(path).exists():
                msg = f"{role.upper()} {path!r}: no such file or folder (to name models in a file, use --data FILE)"
                raise DataError(msg)
            frame = read_results(path, **opts.read_kwargs())
            found = list(dict.fromkeys(frame["model"]))
            if len(found) != 1:
                shown = ", ".join(map(repr, found[:5])) + (", ..." if len(found) > 5 else "")
                msg = (f"{role.upper()} {path!r} holds {len(found)} models ({shown}); give one model's results, "
                       f"or name both models with --data {path}")
                raise DataError(msg)
            names.append(str(found[0]))
            frames.append(frame.assign(model=role))
    if len(set(names)) < len(names):
        names = [f"{name} ({role})" for name, role in zip(names, roles, strict=True)]
    aligned = align_results(pd.concat(frames, ignore_index=True), on_missing=opts.on_missing)
    if aligned.note:
        note = aligned.note
        for name, role in zip(names, roles, strict=True):
            note = note.replace(role, name)
        warn(note, LLMPowerWarning)
    cols = [aligned.models.index(role) for role in roles]
    return ScoreMatrix(items=aligned.items, models=names, scores=aligned.scores[:, cols], clusters=aligned.clusters)
