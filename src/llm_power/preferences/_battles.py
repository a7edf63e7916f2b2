"""Battles encoded once: model codes, outcome codes and cluster codes (the input of every fit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.clusters import code_labels, require_clusters
from .._core.errors import DataError

_OUTCOMES = ("model_a", "model_b", "tie")  # outcome codes 0, 1, 2

__all__ = ["Battles", "MAX_MODELS", "check_model_count", "encode_battles"]


#: models a Bradley-Terry fit takes by default (``LLM_POWER_MAX_MODELS``): it holds about ten dense
#: (M + 1) x (M + 1) matrices (information, its inverse, meat, covariance, eigenvectors), 2 GB at 5,000
MAX_MODELS = 5_000


def check_model_count(m: int) -> None:
    """Refuse, before allocating, a fit whose M x M matrices would not fit in memory."""
    import os

    raw = os.environ.get("LLM_POWER_MAX_MODELS", "")
    cap = int(raw) if raw.strip().isdigit() and int(raw) > 0 else MAX_MODELS
    if m > cap:
        gib = 8.0 * (m + 1) ** 2 / 2**30
        msg = (f"{m:,} models: a Bradley-Terry fit holds about ten {m + 1:,} x {m + 1:,} matrices ({gib:,.1f} GiB "
               f"each); at most {cap:,} models (LLM_POWER_MAX_MODELS raises the limit), or rate groups of models "
               "separately")
        raise DataError(msg)


@dataclass
class Battles:
    """Battles encoded: model codes, outcome codes (0 a wins, 1 b wins, 2 tie), sorted model names."""

    models: list[str]
    ia: np.ndarray
    ib: np.ndarray
    outcome: np.ndarray

    @property
    def n(self) -> int:
        return int(self.outcome.size)


def _column(battles: Any, name: str) -> np.ndarray:
    return np.asarray(battles[name], dtype=object)


def encode_battles(battles: Any) -> Battles:
    """Check and encode a battles table (DataFrame or mapping with model_a, model_b, winner)."""
    try:
        a, b, w = (_column(battles, c) for c in ("model_a", "model_b", "winner"))
    except (KeyError, TypeError, IndexError, ValueError):
        msg = "battles need columns model_a, model_b and winner (model_a | model_b | tie)"
        raise DataError(msg) from None
    if not (a.shape == b.shape == w.shape) or a.ndim != 1:
        msg = "battles: model_a, model_b and winner must be 1-D columns of one length"
        raise DataError(msg)
    import pandas as pd  # factorize: hashing, not sorting millions of strings

    sa, sb, sw = (pd.Series(x, dtype=object).astype(str) for x in (a, b, w))
    codes_a, uniq_a = pd.factorize(sa)
    codes_b, uniq_b = pd.factorize(sb)
    models = sorted(set(uniq_a.tolist()) | set(uniq_b.tolist()))
    index = {name: k for k, name in enumerate(models)}
    ia = np.array([index[u] for u in uniq_a.tolist()], dtype=np.intp)[codes_a]
    ib = np.array([index[u] for u in uniq_b.tolist()], dtype=np.intp)[codes_b]
    if (ia == ib).any():
        row = int(np.argmax(ia == ib))
        msg = f"battle {row}: a model against itself ({sa.iloc[row]!r})"
        raise DataError(msg)
    if len(models) < 2:
        msg = "battles between at least two models are needed"
        raise DataError(msg)
    check_model_count(len(models))
    outcome = np.full(ia.size, -1, dtype=np.int8)
    wv, av, bv = sw.to_numpy(), sa.to_numpy(), sb.to_numpy()
    outcome[wv == "tie"] = 2
    outcome[(wv == "model_b") | (wv == bv)] = 1
    outcome[(wv == "model_a") | (wv == av)] = 0
    if (outcome < 0).any():
        row = int(np.argmax(outcome < 0))
        msg = f"battle {row}: winner {w[row]!r} is none of model_a, model_b, tie"
        raise DataError(msg)
    return Battles(models=models, ia=ia, ib=ib, outcome=outcome)


def battle_cluster_codes(cluster: Any, battles: Any, n: int) -> np.ndarray | None:
    """Cluster codes of the battles (a column name, ``"question"`` finding ``question_id``, or one
    label per battle), through the package's one label coder: a missing label is a DataError.
    """
    if cluster is None:
        return None
    if isinstance(cluster, str):
        name = cluster
        if name not in getattr(battles, "columns", battles) and f"{name}_id" in getattr(battles, "columns", battles):
            name = f"{name}_id"
        try:
            cluster = battles[name]
        except (KeyError, TypeError, IndexError):
            msg = f"cluster={cluster!r}: the battles have no column {cluster!r}"
            raise DataError(msg) from None
    codes, g = code_labels(cluster, n, unit="battle")
    require_clusters(g, unit="battle", stacklevel=4)
    return np.asarray(codes, dtype=np.intp)
