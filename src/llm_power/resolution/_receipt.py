"""Receipts: the sufficient statistics behind every verdict of a resolution report, and their check.

A receipt (:func:`llm_power.receipt`, ``llm-power diagnose --receipt FILE``) is a JSON document that holds what
:func:`~llm_power.diagnose` asked of the scores -- per model its correct answers (0/1) or mean and
centred sum of squares (graded); per pair n, b and c (0/1) or n, the mean difference and the centred
sum of squared differences (graded); the same per cluster -- with the options and seed, the SHA-256 of
every input file, the report's numbers and verdicts per pair and regime, and a SHA-256 digest of its
own canonical content. :func:`llm_power.verify_receipt` (``llm-power verify FILE``) runs the same code path as
``diagnose`` (:func:`~llm_power.resolution.diagnose_source`, the kernel's tests and verdicts) on a
source of statistics read from the receipt alone -- no items -- and compares every recorded number
bit for bit. The format is documented in docs/integrations.md ("Receipts"); ``receipt_version``
numbers it. This module is the family's part (the statistics, the replay and the comparison);
reading, writing and hashing files is :mod:`llm_power.integrations.receipts`.

The statistics are recorded as diagnose computed them: integers for 0/1 scores (exact), floats for
graded scores written as the shortest decimal that reads back to the same double (JSON's floats
round-trip), so the recomputation gets the same bits.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.errors import DataError
from ._receipt_source import ReceiptSource, field_error, get_field
from ._registry import REGIMES, DiagnoseOptions

__all__ = ["RECEIPT_KIND", "RECEIPT_VERSION", "ReceiptCheck", "ReceiptSource", "dump_receipt", "receipt_content",
           "receipt_digest", "recompute_receipt"]

#: the version of the receipt format this package writes and reads
RECEIPT_VERSION = 1
#: what a receipt says it is
RECEIPT_KIND = "llm-power diagnose receipt"
#: receipts hold at most this many statistics (pairs x clusters): a report of millions of pairs is
#: checked from its items, not from a receipt of gigabytes
MAX_RECEIPT_CELLS = 5_000_000
#: graded scores on fewer items than this choose their test from the differences themselves (Shapiro-Wilk,
#: permutation): the receipt carries the scores
SMALL_GRADED = 30
#: settings of a report that depend on the items themselves, not on the statistics: recorded, not re-checked
UNCHECKED_SETTINGS = ("family_dependence",)


# =================================================================================================
# Writing: record what diagnose asks of the scores
# =================================================================================================

class _Recorder:
    """A :class:`~llm_power.matrix.ScoreSource` that answers from a score matrix and notes every pair
    (and, for graded scores, the sums) diagnose asks for.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.pairs: dict[tuple[int, int], None] = {}
        self.graded: dict[tuple[int, int], tuple[float, float, Any, Any]] = {}
        self.model_sums: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.matrix_used = False

    @property
    def n(self) -> int:
        return int(self.inner.n)

    @property
    def n_models(self) -> int:
        return int(self.inner.n_models)

    @property
    def n_groups(self) -> int:
        return int(self.inner.n_groups)

    @property
    def binary(self) -> bool:
        return bool(self.inner.binary)

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        out: tuple[np.ndarray, np.ndarray] = self.inner.moments()
        return out

    def select(self, keep: np.ndarray) -> Any:
        msg = f"a receipt is recorded on the models the report shows ({len(keep)} asked for)"
        raise ValueError(msg)

    def _note(self, i: np.ndarray, j: np.ndarray) -> None:
        for pair in zip(np.asarray(i).tolist(), np.asarray(j).tolist(), strict=True):
            self.pairs.setdefault(pair, None)

    def both_counts(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        self._note(i, j)
        out: np.ndarray = self.inner.both_counts(i, j)
        return out

    def pair_sums_binary(self, i: np.ndarray, j: np.ndarray, b: np.ndarray, c: np.ndarray) -> Any:
        self._note(i, j)
        return self.inner.pair_sums_binary(i, j, b, c)

    def pair_sums_graded(self, i: np.ndarray, j: np.ndarray) -> Any:
        self._note(i, j)
        out = self.inner.pair_sums_graded(i, j)
        for k, pair in enumerate(zip(np.asarray(i).tolist(), np.asarray(j).tolist(), strict=True)):
            if pair not in self.graded:
                self.graded[pair] = (float(out.delta[k]), float(out.ss[k]),
                                     None if out.resid is None else np.array(out.resid[:, k]),
                                     None if out.resid_sq is None else np.array(out.resid_sq[:, k]))
        return out

    def matrix(self) -> np.ndarray:
        self.matrix_used = True
        out: np.ndarray = self.inner.matrix()
        return out

    def model_cluster_sums(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out: tuple[np.ndarray, np.ndarray, np.ndarray] = self.inner.model_cluster_sums(means)
        if self.model_sums is None:
            self.model_sums = out
        return out


def receipt_content(diagnosis: Any, *, cluster_field: str | None = None) -> dict[str, Any]:
    """The parts of a receipt a diagnosis gives: ``settings``, ``statistics`` and ``report``
    (:func:`llm_power.receipt` adds the version, the inputs' hashes and the digest).

    The diagnosis is run a second time from its held scores through a recorder that notes every
    pair (and graded sum) diagnose asks for -- including the pairs behind the tie groups -- and the
    second run must give the same report, field for field, or the receipt is refused (a diagnosis
    whose ``rng`` was a Generator cannot be replayed). Not supported: several runs per model (the run
    regime's mean squares), ``cluster_fine`` (the fine clusters' sums) and item shards (``engine="dask"``).
    """
    from ..matrix import ScoreMatrix
    from ._diagnose import diagnose_source

    held = getattr(diagnosis, "held", None)
    if held is None:
        msg = "`diagnosis` must be a Diagnosis made by diagnose (it holds no scores)"
        raise TypeError(msg)
    if held.runs is not None:
        msg = "receipts do not cover the run regime (several runs per model): diagnose the run means instead"
        raise ValueError(msg)
    if (diagnosis.settings.get("cluster_level") or {}).get("coarse_vs_fine") is not None:
        msg = "receipts do not cover `cluster_fine` (the coarse-vs-fine test needs the fine clusters' sums)"
        raise ValueError(msg)
    if not isinstance(held.source, ScoreMatrix):
        msg = "receipts are written from scores in memory (not from item shards: engine='dask')"
        raise ValueError(msg)
    names = [str(m) for m in held.names]
    if len(set(names)) != len(names):
        msg = "receipts need distinct model names"
        raise ValueError(msg)
    options = held.options.replace(top=None)
    recorder = _Recorder(held.source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the first run said what there is to say
        again = diagnose_source(recorder, list(held.names), options, rng=held.seed)
    report = _report(diagnosis)
    problems = _differences(report, _report(again))
    if problems:
        msg = (f"this diagnosis cannot be replayed from its statistics ({problems[0]}); make it with an "
               "integer `rng` seed")
        raise ValueError(msg)
    settings = {"options": _plain(held.options.to_dict()), "seed": held.seed, "cluster_field": cluster_field,
                "regimes": [r.key for r in diagnosis.regimes]}
    return {"settings": settings, "statistics": _statistics(recorder, names), "report": report}


def dump_receipt(doc: Mapping[str, Any]) -> str:
    """The receipt as the text written to a file: sorted keys, one level of indentation per object."""
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def receipt_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a receipt without its ``digest``: sorted keys, no
    whitespace, ASCII -- independent of how the file is indented.
    """
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _statistics(rec: _Recorder, names: list[str]) -> dict[str, Any]:
    """The sufficient statistics diagnose asked for, by model name."""
    from .._kernel.sufficient import binary_cluster_counts, both_counts

    src = rec.inner
    n, binary = int(src.n), bool(src.binary)
    pairs = list(rec.pairs)
    groups = int(src.n_groups)
    if len(pairs) * max(groups, 1) > MAX_RECEIPT_CELLS:
        msg = (f"a receipt of {len(pairs):,} pairs x {max(groups, 1):,} clusters is more than {MAX_RECEIPT_CELLS:,} "
               "statistics: show fewer models (`top`) or adjacent pairs")
        raise ValueError(msg)
    out: dict[str, Any] = {"n": n, "binary": binary, "models": names, "clusters": None, "scores": None}
    means, m2 = src.moments()
    i = np.array([p[0] for p in pairs], dtype=np.int64)
    j = np.array([p[1] for p in pairs], dtype=np.int64)
    codes, _ = src.coding
    rows: list[dict[str, Any]] = []
    if binary:
        k = np.rint(means * n).astype(np.int64)
        out["model_correct"] = k.tolist()
        both = np.rint(both_counts(np.asarray(src.scores, dtype=float), i, j)).astype(np.int64) if pairs else i
        b, c = k[i] - both, k[j] - both
        bg = cg = None
        if groups:
            col, disc = binary_cluster_counts(np.asarray(src.scores, dtype=float), i, j, codes, groups)
            s = col[:, i] - col[:, j]
            bg, cg = np.rint((disc + s) / 2).astype(np.int64), np.rint((disc - s) / 2).astype(np.int64)
        for p in range(len(pairs)):
            row: dict[str, Any] = {"model_a": names[i[p]], "model_b": names[j[p]], "n": n, "b": int(b[p]),
                                   "c": int(c[p])}
            if bg is not None and cg is not None:
                row["cluster_b"], row["cluster_c"] = bg[:, p].tolist(), cg[:, p].tolist()
            rows.append(row)
    else:
        out["model_mean"], out["model_ss"] = _plain(means), _plain(m2)
        for a, bb in pairs:
            delta, ss, resid, resid_sq = rec.graded[(a, bb)]
            row = {"model_a": names[a], "model_b": names[bb], "n": n, "mean_d": _plain(delta), "ss_d": _plain(ss)}
            if groups and resid is not None:
                row["cluster_resid"], row["cluster_resid_sq"] = _plain(resid), _plain(resid_sq)
            rows.append(row)
        if rec.matrix_used:
            out["scores"] = _plain(np.asarray(src.matrix(), dtype=float))
    out["pairs"] = rows
    if groups:
        sizes = np.bincount(codes, minlength=groups)
        clusters: dict[str, Any] = {"count": groups, "sizes": sizes.tolist()}
        if rec.model_sums is not None:
            _, r, q = rec.model_sums
            clusters["model_resid"], clusters["model_resid_sq"] = _plain(r.T), _plain(q.T)
        out["clusters"] = clusters
    return out


# =================================================================================================
# The report: every number and verdict the diagnosis prints, as plain JSON
# =================================================================================================

def _report(diag: Any) -> dict[str, Any]:
    """What the report prints: per pair and regime every column, the counts, ties, rank intervals, the
    models' scores and intervals and the settings (but :data:`UNCHECKED_SETTINGS`).
    """
    settings = {k: v for k, v in diag.settings.items() if k not in UNCHECKED_SETTINGS}
    out: dict[str, Any] = _plain({
        "models": list(diag.models), "means": diag.means, "model_ci_low": diag.model_ci_low,
        "model_ci_high": diag.model_ci_high, "model_se": diag.model_se,
        "pairs": {key: diag.columns[key] for key in diag.columns}, "n_unresolved": diag.n_unresolved,
        "tie_groups": diag.tie_groups, "rank_intervals": diag.rank_intervals,
        "cluster_robustness": diag.cluster_robustness, "settings": settings})
    return out


def _plain(value: Any) -> Any:
    """Plain JSON values, exactly: floats as floats (their shortest repr reads back to the same
    double), non-finite ones as the strings "nan", "inf", "-inf"; tuples as lists; keys as text.
    """
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _same(a: Any, b: Any) -> bool:
    """Bit for bit: the same type and value (floats by their bits)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return bool(a.hex() == b.hex())
    return bool(a == b)


def _differences(recorded: Any, fresh: Any, path: str = "") -> list[str]:
    """One line per value that differs between two plain reports (``path``: where)."""
    if isinstance(recorded, dict) and isinstance(fresh, dict):
        out = []
        for key in sorted(set(recorded) | set(fresh)):
            where = f"{path}.{key}" if path else key
            if key not in fresh:
                out.append(f"{where}: recorded, not recomputed")
            elif key not in recorded:
                out.append(f"{where}: recomputed, not recorded")
            else:
                out += _differences(recorded[key], fresh[key], where)
        return out
    if isinstance(recorded, list) and isinstance(fresh, list):
        if len(recorded) != len(fresh):
            return [f"{path}: {len(recorded)} values recorded, {len(fresh)} recomputed"]
        out = []
        for k, (a, b) in enumerate(zip(recorded, fresh, strict=True)):
            out += _differences(a, b, f"{path}[{k}]")
        return out
    if _same(recorded, fresh):
        return []
    return [f"{path}: recorded {_show(recorded)}, recomputed {_show(fresh)}"]


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, float) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


#: the regime each pair field belongs to (the IID regime's and the names' otherwise)
_FIELD_REGIME = {name: r.key for r in REGIMES for name, _, _ in r.fields}


def _pair_lines(problems: list[str], report: Mapping[str, Any]) -> list[str]:
    """The mismatches in the report's words: "pair 3 (A > B), regime cluster, field q_cluster: ..."."""
    pairs = report.get("pairs") if isinstance(report.get("pairs"), dict) else {}
    a, b = (pairs or {}).get("model_a") or [], (pairs or {}).get("model_b") or []
    out = []
    for line in problems:
        head, _, rest = line.partition(": ")
        if head.startswith("pairs.") and "[" in head:
            key, _, idx = head[len("pairs."):].partition("[")
            p = int(idx.rstrip("]").split("]")[0]) if idx.rstrip("]").split("]")[0].isdigit() else -1
            who = f" ({a[p]} > {b[p]})" if 0 <= p < min(len(a), len(b)) else ""
            out.append(f"pair {p + 1}{who}, regime {_FIELD_REGIME.get(key, 'iid')}, field {key}: {rest}")
        else:
            out.append(line)
    return out


# =================================================================================================
# Reading and verifying
# =================================================================================================

@dataclass(frozen=True)
class ReceiptCheck:
    """What :func:`~llm_power.verify_receipt` found.

    ``ok`` is True when the receipt's own digest matches its content, every recomputed number and
    verdict equals the recorded one bit for bit, its statistics are consistent, and (with ``items``)
    every input file hashes as recorded. ``mismatches`` has one line per difference, naming the
    pair, regime and field.
    """

    ok: bool
    file: str
    receipt_version: int
    written_by: str
    verified_by: str
    digest_ok: bool
    digest_recorded: str
    digest_computed: str
    n_pairs: int
    regimes: tuple[str, ...]
    values_checked: int
    inputs_checked: int | None = None
    mismatches: tuple[str, ...] = field(default=())

    def summary(self, max_lines: int | None = 50) -> str:
        """The report of the check: what was recomputed, and one line per mismatch."""
        head = (f"receipt {self.file}: written by llm-power {self.written_by}, checked by llm-power "
                f"{self.verified_by}")
        what = (f"recomputed {self.n_pairs} pairs under {', '.join(self.regimes)} from the statistics alone: "
                f"{self.values_checked:,} recorded values")
        lines = [head, what,
                 f"digest sha256 {self.digest_recorded[:16]}...: " + ("matches the content" if self.digest_ok else
                                                                     f"does NOT match the content "
                                                                     f"({self.digest_computed[:16]}...)")]
        if self.inputs_checked is not None:
            lines.append(f"inputs: {self.inputs_checked} file(s) re-hashed")
        shown = list(self.mismatches if max_lines is None else self.mismatches[:max_lines])
        lines += [f"MISMATCH {m}" for m in shown]
        if len(shown) < len(self.mismatches):
            lines.append(f"... and {len(self.mismatches) - len(shown):,} more mismatches")
        lines.append("OK: every verdict reproduced bit for bit" if self.ok else
                     f"REFUSED: {len(self.mismatches):,} mismatch(es)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return {"ok": self.ok, "file": self.file, "receipt_version": self.receipt_version,
                "written_by": self.written_by, "verified_by": self.verified_by, "digest_ok": self.digest_ok,
                "digest_recorded": self.digest_recorded, "digest_computed": self.digest_computed,
                "n_pairs": self.n_pairs, "regimes": list(self.regimes), "values_checked": self.values_checked,
                "inputs_checked": self.inputs_checked, "mismatches": list(self.mismatches)}


def recompute_receipt(doc: Mapping[str, Any], *, file: str = "<receipt>") -> tuple[Any, list[str], int]:
    """Every verdict of a parsed receipt recomputed from its ``statistics`` with its ``settings``
    through :func:`~llm_power.resolution.diagnose_source` and compared with its ``report``, value by
    value (floats by their bits): the recomputed diagnosis, one line per mismatch (pair, regime, field;
    statistics that contradict each other) and the number of values compared. The digest and the
    inputs are the caller's (:func:`llm_power.verify_receipt`).
    """
    from ._diagnose import diagnose_source

    settings = get_field(doc, "settings", "", file, dict, "an object")
    raw = get_field(settings, "options", "settings.", file, dict, "an object")
    try:
        options = DiagnoseOptions.create(**raw).replace(top=None)
    except (TypeError, ValueError) as exc:
        raise DataError(str(exc), file=file, field="settings.options") from None
    seed = settings.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise field_error(file, "settings.seed", "a non-negative integer or null", seed)
    recorded = get_field(doc, "report", "", file, dict, "an object")
    src = ReceiptSource(get_field(doc, "statistics", "", file, dict, "an object"), file)
    mismatches = [f"statistics: {line}" for line in src.inconsistent]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the diagnosis said it when it was made
        diag = diagnose_source(src, list(src.models), options, rng=seed)
    fresh = _report(diag)
    mismatches += _pair_lines(_differences(recorded, fresh), recorded)
    return diag, mismatches, _count(fresh)


def _count(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count(v) for v in value)
    return 1
