r"""Cluster identity: the one coder of cluster labels, which every layer uses.

:func:`code_labels` turns per-unit labels (items, battles, preferences, questions, samples) into
integer codes 0..G-1. NaN, None, empty or blank strings are not a cluster: they are a
:class:`~llm_power.DataError` naming the first unit, everywhere (the readers' rule), because
pooling them silently into one cluster would change the design effect without telling anyone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DataError, FewClustersWarning, warn
from .labels import missing_label

__all__ = ["FEW_CLUSTERS", "code_labels", "coarse_of_fine", "missing_label", "require_clusters"]

#: warn when a cluster analysis has fewer clusters than this
FEW_CLUSTERS = 30


_WHERE = {"item": "item row"}


def code_labels(cluster: Any, n: int, *, name: str = "cluster", unit: str = "item") -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 (int64) and G for one label per ``unit``; missing labels are a
    :class:`~llm_power.DataError` naming the first one (field ``name``).

    Labels are compared as text (``1`` and ``"1"`` are different clusters only if both are
    present as different types; integers keep their numeric identity).

    Examples
    --------
    >>> from llm_power._core.clusters import code_labels
    >>> codes, g = code_labels(["math", "code", "math"], 3)
    >>> codes.tolist(), g
    ([1, 0, 1], 2)
    """
    if hasattr(cluster, "to_numpy") and not isinstance(cluster, np.ndarray):
        cluster = cluster.to_numpy()  # a pandas column keeps its dtype: integer labels stay integers
    labels = cluster if isinstance(cluster, np.ndarray) else np.asarray(cluster, dtype=object)
    if labels.ndim != 1 or labels.shape[0] != n:
        msg = f"`{name}` must have one label per {unit} ({n}); got shape {np.shape(labels)}."
        raise ValueError(msg)
    keys: np.ndarray | None = None
    if labels.dtype.kind == "f":
        bad = np.isnan(labels)
    elif labels.dtype.kind in "biuU":
        bad = np.zeros(n, dtype=bool) if labels.dtype.kind != "U" else np.char.str_len(np.char.strip(labels)) == 0
    else:
        values = labels.tolist()
        types = set(map(type, values))
        if types <= {str}:  # text labels: vectorised blank check, no per-label Python call
            keys = np.array(values, dtype=str) if values else np.array([], dtype=str)
            bad = np.char.str_len(np.char.strip(keys)) == 0
        else:
            bad = np.array([missing_label(v) for v in values], dtype=bool)
    if np.any(bad):
        first = int(np.argmax(bad))
        msg = (f"{int(bad.sum())} {unit}(s) have no cluster label (first at {_WHERE.get(unit, unit)} {first}: "
               f"{labels[first]!r}); give every {unit} a cluster or drop those {unit}s")
        raise DataError(msg, field=name)
    if keys is None and labels.dtype.kind == "O":
        keys = np.array([str(v) if not isinstance(v, (int, np.integer)) else f"\0{int(v):020d}"
                         for v in labels.tolist()])
    _, codes = np.unique(labels if keys is None else keys, return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    return codes, int(codes.max() + 1) if codes.size else 0


def require_clusters(n_groups: int, *, unit: str = "item") -> None:
    """At least 2 clusters (a ValueError otherwise); fewer than :data:`FEW_CLUSTERS`: a warning."""
    if n_groups < 2:
        msg = (f"`cluster` puts every {unit} in one cluster: cluster-robust inference needs at least 2 clusters "
               "(with one cluster there is no between-cluster variation to measure).")
        raise ValueError(msg)
    if n_groups < FEW_CLUSTERS:
        warn(f"only {n_groups} clusters: the cluster test, its interval and N* use Student-t quantiles "
                      f"with at most {n_groups - 1} degrees of freedom; with fewer than {FEW_CLUSTERS} clusters "
                      "cluster-robust inference is approximate.", FewClustersWarning)


def coarse_of_fine(coarse: np.ndarray, fine: np.ndarray, n_fine: int, *, labels: Any = None,
                   coarse_name: str = "cluster", fine_name: str = "cluster_fine") -> np.ndarray:
    """The coarse cluster of each fine cluster, from per-item codes of a clustering nested in another
    (MMLU-Pro's 91 sources in its 14 categories): shape (n_fine,). A fine cluster whose items lie in
    two coarse ones is a :class:`~llm_power.DataError` naming it (``labels``: the per-item fine labels,
    for the message) and the first two coarse codes' items.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power._core.clusters import coarse_of_fine
    >>> coarse_of_fine(np.array([0, 0, 1, 1]), np.array([0, 1, 2, 2]), 3).tolist()
    [0, 0, 1]
    """
    out = np.full(n_fine, -1, dtype=np.int64)
    out[fine] = coarse  # the last item's coarse code per fine cluster; checked against every item below
    bad = out[fine] != coarse
    if np.any(bad):
        row = int(np.argmax(bad))
        other = int(np.flatnonzero((fine == fine[row]) & (coarse != coarse[row]))[0])
        shown = repr(labels[row]) if labels is not None else f"number {int(fine[row])}"
        msg = (f"`{fine_name}` must be nested in `{coarse_name}`: fine cluster {shown} has items in two coarse "
               f"clusters (item rows {min(row, other)} and {max(row, other)}); every fine cluster must lie inside one "
               "coarse cluster")
        raise DataError(msg, field=fine_name)
    return out
