"""The source of statistics of a receipt: :func:`~llm_power.resolution.diagnose_source`'s questions
answered from a receipt's recorded statistics alone, each field checked as it is read (a receipt is
untrusted JSON: a :class:`~llm_power.DataError` names the field; nothing in it is run).

The arrays are handed to the kernel in the layout the score matrix's own are (per-cluster sums
clusters x pairs in C order): the layout decides the order of later floating-point sums, and the
recomputation must give the recorded bits.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._core.errors import DataError

__all__ = ["ReceiptSource", "field_error", "get_field", "list_field"]

_S = "statistics."


def field_error(file: str, where: str, requirement: str, value: Any) -> DataError:
    """The one-line error of a field: "FILE, field 'WHERE': must be REQUIREMENT; got VALUE"."""
    simple = isinstance(value, (str, int, float, bool, type(None)))
    text = json.dumps(value, ensure_ascii=False) if simple else type(value).__name__
    return DataError(f"must be {requirement}; got {text[:60]}", file=file, field=where)


def get_field(obj: Any, key: str, where: str, file: str, kind: type, requirement: str) -> Any:
    """``obj[key]`` of type ``kind`` (a bool is not an int), or the error naming ``where + key``."""
    if not isinstance(obj, dict) or key not in obj:
        msg = "missing"
        raise DataError(msg, file=file, field=f"{where}{key}")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise field_error(file, f"{where}{key}", requirement, value)
    return value


def list_field(value: Any, where: str, file: str, size: int | None = None) -> list[Any]:
    """A JSON list (of ``size`` entries when given)."""
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise field_error(file, where, f"a list{'' if size is None else f' of {size} entries'}", value)
    return value


def _ints(value: Any, where: str, file: str, size: int | None = None, *, minimum: int = 0) -> np.ndarray:
    if not isinstance(value, list) or (size is not None and len(value) != size) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in value):
        count = "" if size is None else f"{size} "
        raise field_error(file, where, f"a list of {count}integers >= {minimum}", value)
    return np.array(value, dtype=np.int64)


def _float(value: Any, where: str, file: str) -> float:
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise field_error(file, where, 'a number (or "nan", "inf", "-inf")', value)
    return float(value)


def _floats(value: Any, where: str, file: str, size: int | None = None) -> np.ndarray:
    values = list_field(value, where, file, size)
    return np.array([_float(v, f"{where}[{k}]", file) for k, v in enumerate(values)], dtype=float)


def _matrix(value: Any, where: str, file: str, rows: int, cols: int) -> np.ndarray:
    table = list_field(value, where, file, rows)
    return np.array([_floats(r, f"{where}[{k}]", file, cols) for k, r in enumerate(table)], dtype=float).reshape(
        rows, cols)


class ReceiptSource:
    """The :class:`~llm_power.matrix.ScoreSource` of a receipt's ``statistics``: the models' counts (0/1)
    or means and centred sums of squares (graded), each recorded pair's b, c or sums, per cluster too.
    ``inconsistent`` lists statistics that contradict each other (a cluster's counts that do not add up
    to the pair's): a verify mismatch, reported beside the recomputed numbers.
    """

    def __init__(self, stats: Any, file: str) -> None:
        self.file = file
        self._n = get_field(stats, "n", _S, file, int, "a positive integer")
        if self._n < 1:
            raise field_error(file, f"{_S}n", "a positive integer", self._n)
        self._binary = get_field(stats, "binary", _S, file, bool, "true or false")
        models = get_field(stats, "models", _S, file, list, "a list of model names")
        if len(models) < 2 or not all(isinstance(m, str) for m in models) or len(set(models)) != len(models):
            raise field_error(file, f"{_S}models", "a list of at least 2 distinct names", "a list")
        self.models: list[str] = models
        self.inconsistent: list[str] = []
        self._g, self._sizes = 0, np.empty(0)
        self._model_sums: tuple[np.ndarray, np.ndarray] | None = None
        if stats.get("clusters") is not None:
            self._read_clusters(stats["clusters"])
        m = len(models)
        if self._binary:
            self._k = _ints(stats.get("model_correct"), f"{_S}model_correct", file, m)
            if np.any(self._k > self._n):
                self.inconsistent.append(f"{_S}model_correct: a count above n = {self._n}")
        else:
            self._mean = _floats(stats.get("model_mean"), f"{_S}model_mean", file, m)
            self._ss = _floats(stats.get("model_ss"), f"{_S}model_ss", file, m)
        self._at: dict[tuple[int, int], int] = {}
        self._cols = self._read_pairs(list_field(stats.get("pairs"), f"{_S}pairs", file))
        raw = stats.get("scores")
        self._scores = None if raw is None else _matrix(raw, f"{_S}scores", file, self._n, m)

    def _read_clusters(self, clusters: Any) -> None:
        file, w = self.file, f"{_S}clusters."
        g = get_field(clusters, "count", w, file, int, "an integer >= 2")
        if g < 2:
            raise field_error(file, f"{w}count", "an integer >= 2", g)
        sizes = _ints(clusters.get("sizes"), f"{w}sizes", file, g, minimum=1)
        if int(sizes.sum()) != self._n:
            self.inconsistent.append(f"{w}sizes: sum to {int(sizes.sum())}, n is {self._n}")
        self._g, self._sizes = g, sizes.astype(float)
        if "model_resid" in clusters:
            m = len(self.models)
            r = _matrix(clusters.get("model_resid"), f"{w}model_resid", file, m, g)
            q = _matrix(clusters.get("model_resid_sq"), f"{w}model_resid_sq", file, m, g)
            self._model_sums = (np.ascontiguousarray(r.T), np.ascontiguousarray(q.T))

    def _read_pairs(self, rows: list[Any]) -> dict[str, np.ndarray]:
        index = {name: k for k, name in enumerate(self.models)}
        cols: dict[str, list[Any]] = {}
        for p, row in enumerate(rows):
            where = f"{_S}pairs[{p}]."
            a = get_field(row, "model_a", where, self.file, str, "a model name")
            b = get_field(row, "model_b", where, self.file, str, "a model name")
            for key, name in (("model_a", a), ("model_b", b)):
                if name not in index:
                    raise field_error(self.file, f"{where}{key}", "one of statistics.models", name)
            if a == b:
                raise field_error(self.file, f"{where}model_b", "a model other than model_a", b)
            n = get_field(row, "n", where, self.file, int, "an integer")
            if n != self._n:
                self.inconsistent.append(f"{where}n: {n}, statistics.n is {self._n}")
            self._at[(index[a], index[b])] = p
            if self._binary:
                self._binary_pair(row, where, (index[a], index[b]), cols)
            else:
                self._graded_pair(row, where, cols)
        return {k: np.array(v) for k, v in cols.items()}

    def _binary_pair(self, row: dict[str, Any], where: str, pair: tuple[int, int], cols: dict[str, list[Any]]) -> None:
        b, c = (get_field(row, key, where, self.file, int, "an integer >= 0") for key in ("b", "c"))
        for key, value in (("b", b), ("c", c)):
            if value < 0:
                raise field_error(self.file, f"{where}{key}", "an integer >= 0", value)
        cols.setdefault("b", []).append(b)
        cols.setdefault("c", []).append(c)
        if self._g:
            bg = _ints(row.get("cluster_b"), f"{where}cluster_b", self.file, self._g)
            cg = _ints(row.get("cluster_c"), f"{where}cluster_c", self.file, self._g)
            for key, per, total in (("b", bg, b), ("c", cg, c)):
                if int(per.sum()) != total:
                    self.inconsistent.append(f"{where}cluster_{key}: sum to {int(per.sum())}, {key} is {total}")
            cols.setdefault("bg", []).append(bg)
            cols.setdefault("cg", []).append(cg)
        ka, kb = int(self._k[pair[0]]), int(self._k[pair[1]])
        if b > ka or c > kb or ka - b != kb - c or b + c > self._n:
            self.inconsistent.append(f"{where}b, c: b = {b}, c = {c} do not fit the models' correct answers "
                                     f"({ka}, {kb}) and n = {self._n}")

    def _graded_pair(self, row: dict[str, Any], where: str, cols: dict[str, list[Any]]) -> None:
        cols.setdefault("delta", []).append(_float(row.get("mean_d"), f"{where}mean_d", self.file))
        cols.setdefault("ss", []).append(_float(row.get("ss_d"), f"{where}ss_d", self.file))
        if self._g:
            cols.setdefault("resid", []).append(_floats(row.get("cluster_resid"), f"{where}cluster_resid", self.file,
                                                        self._g))
            cols.setdefault("resid_sq", []).append(_floats(row.get("cluster_resid_sq"), f"{where}cluster_resid_sq",
                                                           self.file, self._g))

    # --- the source protocol -------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """The number of items."""
        return int(self._n)

    @property
    def n_models(self) -> int:
        """The number of models."""
        return len(self.models)

    @property
    def n_groups(self) -> int:
        """The number of clusters (0: none)."""
        return int(self._g)

    @property
    def binary(self) -> bool:
        """Whether the scores were 0/1."""
        return bool(self._binary)

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per model: the mean score and the sum of squared deviations from it."""
        if self._binary:  # as ScoreMatrix.moments: the mean of 0/1 scores is k / n, exactly
            means = self._k.astype(float) / self._n
            return means, self.n * means * (1.0 - means)
        return self._mean.copy(), self._ss.copy()

    def select(self, keep: np.ndarray) -> Any:
        """Not available: a receipt's models are the report's."""
        msg = f"a receipt's models are the report's ({len(keep)} asked for)"
        raise ValueError(msg)

    def _lookup(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each asked pair's row of the receipt and whether it is recorded the other way round."""
        rows, flipped = np.empty(i.size, dtype=np.int64), np.zeros(i.size, dtype=bool)
        for k, (a, b) in enumerate(zip(i.tolist(), j.tolist(), strict=True)):
            if (a, b) in self._at:
                rows[k] = self._at[(a, b)]
            elif (b, a) in self._at:
                rows[k], flipped[k] = self._at[(b, a)], True
            else:
                msg = f"the receipt has no statistics of the pair {self.models[a]!r}, {self.models[b]!r}"
                raise DataError(msg, file=self.file, field=f"{_S}pairs")
        return rows, flipped

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """0/1 scores: items both models of each pair got right (k_a - b)."""
        rows, flipped = self._lookup(i, j)
        b = np.where(flipped, self._cols["c"][rows], self._cols["b"][rows])
        return np.asarray(self._k[i] - b, dtype=float)

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> Any:
        """0/1 scores: the pairs' sums from the discordant counts, per cluster from the clusters' b and c."""
        from .._kernel.sufficient import binary_pair_sums

        if not self._g:
            return binary_pair_sums(self._n, b, c)
        rows, flipped = self._lookup(i, j)
        bg = np.ascontiguousarray(self._cols["bg"][rows].T)  # (G, P), C order as the matrix's counts
        cg = np.ascontiguousarray(self._cols["cg"][rows].T)
        bg, cg = np.where(flipped, cg, bg), np.where(flipped, bg, cg)
        return binary_pair_sums(self._n, b, c, sizes=self._sizes, s_g=np.ascontiguousarray(bg - cg, dtype=float),
                                disc=np.ascontiguousarray(bg + cg, dtype=float))

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> Any:
        """Graded scores: the recorded mean difference and centred sums (a pair the other way round: negated)."""
        from .._kernel.sufficient import PairSums

        rows, flipped = self._lookup(i, j)
        sign = np.where(flipped, -1.0, 1.0)
        delta, ss = self._cols["delta"][rows] * sign, self._cols["ss"][rows]
        if not self._g:
            return PairSums(n=self._n, delta=delta, ss=ss)
        resid = np.ascontiguousarray(self._cols["resid"][rows].T * sign)  # C order, as pair_sums makes them
        return PairSums(n=self._n, delta=delta, ss=ss, sizes=self._sizes, resid=resid,
                        resid_sq=np.ascontiguousarray(self._cols["resid_sq"][rows].T))

    def matrix(self) -> np.ndarray:
        """The recorded scores (graded scores on fewer than 30 items only)."""
        if self._scores is None:
            msg = "the receipt carries no item scores (graded scores on fewer than 30 items need them)"
            raise DataError(msg, file=self.file, field=f"{_S}scores")
        return self._scores

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The recorded cluster sizes and per-model sums of (x - mean) and (x - mean)^2 (at ``means``)."""
        if self._model_sums is None or np.size(means) != len(self.models):
            msg = "the receipt carries no per-cluster sums of the models"
            raise DataError(msg, file=self.file, field=f"{_S}clusters.model_resid")
        return self._sizes, self._model_sums[0], self._model_sums[1]
