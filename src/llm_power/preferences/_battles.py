"""Battles encoded once: model codes, outcome codes and cluster codes (the input of every fit)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.clusters import code_labels, require_clusters
from .._core.errors import DataError

#: Elo points per unit of Bradley-Terry log-strength (400 / ln 10)
ELO = 400.0 / math.log(10.0)

_OUTCOMES = ("model_a", "model_b", "tie")  # outcome codes 0, 1, 2

__all__ = ["Battles", "MAX_MODELS", "battle_cluster_codes", "check_model_count", "cluster_labels", "encode_battles"]


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


def _factorized(battles: Any, name: str) -> tuple[np.ndarray, list[Any], list[str], int]:
    """A column as integer codes of its distinct values: (codes, raw values, their ``str``, length).

    Hashing once (``pd.factorize``, fast on pandas' string and categorical columns), then ``str`` of
    the few distinct values, never of every row.
    """
    import pandas as pd

    col = battles[name]
    if not isinstance(col, pd.Series):
        arr = np.asarray(col, dtype=object)
        if arr.ndim != 1:
            raise ValueError(name)
        col = pd.Series(arr, dtype=object)
    codes, uniq = pd.factorize(col, use_na_sentinel=False)
    raw = list(uniq.tolist() if hasattr(uniq, "tolist") else uniq)
    return np.asarray(codes, dtype=np.intp), raw, [str(u) for u in raw], len(col)


def _lookup(names: list[str], index: dict[str, int]) -> np.ndarray:
    return np.array([index.get(x, -1) for x in names], dtype=np.intp)


def encode_battles(battles: Any) -> Battles:
    """Check and encode a battles table (DataFrame or mapping with model_a, model_b, winner)."""
    try:
        (ca, _, na, len_a), (cb, _, nb, len_b), (cw, raw_w, nw, len_w) = (
            _factorized(battles, c) for c in ("model_a", "model_b", "winner"))
    except KeyError:
        msg = "battles need columns model_a, model_b and winner (model_a | model_b | tie)"
        raise DataError(msg) from None
    except (TypeError, IndexError, ValueError):
        if not all(_has(battles, c) for c in ("model_a", "model_b", "winner")):
            msg = "battles need columns model_a, model_b and winner (model_a | model_b | tie)"
            raise DataError(msg) from None
        msg = "battles: model_a, model_b and winner must be 1-D columns of one length"
        raise DataError(msg) from None
    if not (len_a == len_b == len_w):
        msg = "battles: model_a, model_b and winner must be 1-D columns of one length"
        raise DataError(msg)
    models = sorted(set(na) | set(nb))
    index = {name: k for k, name in enumerate(models)}
    ia = _lookup(na, index)[ca]
    ib = _lookup(nb, index)[cb]
    if (ia == ib).any():
        row = int(np.argmax(ia == ib))
        msg = f"battle {row}: a model against itself ({na[ca[row]]!r})"
        raise DataError(msg)
    if len(models) < 2:
        msg = "battles between at least two models are needed"
        raise DataError(msg)
    check_model_count(len(models))
    # the winner: "model_a" | "model_b" | "tie" or a model's name (compared with the row's a and b)
    w_model = _lookup(nw, index)[cw]
    keyword = np.array([{"model_a": 0, "model_b": 1, "tie": 2}.get(x, -1) for x in nw], dtype=np.int8)[cw]
    outcome = np.full(ia.size, -1, dtype=np.int8)
    outcome[keyword == 2] = 2
    outcome[(keyword == 1) | ((w_model == ib) & (w_model >= 0))] = 1
    outcome[(keyword == 0) | ((w_model == ia) & (w_model >= 0))] = 0
    if (outcome < 0).any():
        row = int(np.argmax(outcome < 0))
        msg = f"battle {row}: winner {raw_w[cw[row]]!r} is none of model_a, model_b, tie"
        raise DataError(msg)
    return Battles(models=models, ia=ia, ib=ib, outcome=outcome)


def _has(battles: Any, name: str) -> bool:
    try:
        battles[name]
    except (KeyError, TypeError, IndexError, ValueError):
        return False
    return True


def battle_cluster_codes(cluster: Any, battles: Any, n: int) -> np.ndarray | None:
    """Cluster codes of the battles (a column name, ``"question"`` finding ``question_id``, or one
    label per battle), through the package's one label coder: a missing label is a DataError.
    """
    if cluster is None:
        return None
    codes, g = code_labels(cluster_labels(cluster, battles), n, unit="battle")
    require_clusters(g, unit="battle")
    return np.asarray(codes, dtype=np.intp)


def cluster_labels(cluster: Any, battles: Any) -> Any:
    """The battles' cluster labels: the column ``cluster`` names (``"question"`` finds ``question_id``)
    or ``cluster`` itself (one label per battle).
    """
    if not isinstance(cluster, str):
        return cluster
    name = cluster
    if name not in getattr(battles, "columns", battles) and f"{name}_id" in getattr(battles, "columns", battles):
        name = f"{name}_id"
    try:
        return battles[name]
    except (KeyError, TypeError, IndexError):
        msg = f"cluster={cluster!r}: the battles have no column {cluster!r}"
        raise DataError(msg) from None
