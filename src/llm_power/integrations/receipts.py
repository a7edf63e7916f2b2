"""Receipts as files: :func:`receipt` and :func:`write_receipt` record the sufficient statistics behind
every verdict of a diagnosis with the package version, the SHA-256 of every input file and a digest of
the receipt's own content; :func:`verify_receipt` reads one (an untrusted file: its size bounded
before it is read, every field checked as it is used, nothing in it run) and recomputes every verdict
from it alone (:mod:`llm_power.resolution` does the statistics; this module the files and hashes).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._core.errors import DataError
from .._core.files import MB, limit, read_regular_bytes
from .._core.params import public
from .._version import __version__
from ..resolution import (
    RECEIPT_KIND,
    RECEIPT_VERSION,
    ReceiptCheck,
    dump_receipt,
    receipt_content,
    receipt_digest,
    recompute_receipt,
)

__all__ = ["RECEIPT_LIMIT", "ReceiptCheck", "file_sha256", "input_hashes", "read_receipt", "receipt",
           "verify_receipt", "write_receipt"]

#: a receipt larger than ``LLM_POWER_MAX_RECEIPT_MB`` (256 by default) is refused before it is read
RECEIPT_LIMIT = "LLM_POWER_MAX_RECEIPT_MB"


@public
def receipt(diagnosis: Any, *, inputs: Sequence[str | os.PathLike[str]] = (), cluster_field: str | None = None,
            command: str | None = None) -> dict[str, Any]:
    """The receipt of a diagnosis: the sufficient statistics behind every verdict, as a JSON-ready dict.

    Parameters
    ----------
    diagnosis : Diagnosis
        A result of :func:`~llm_power.diagnose` made from scores in memory with an integer ``rng``
        seed (its cluster resamples and wild bootstrap are replayed from it).
    inputs : sequence of path, optional
        The files the scores were read from: each regular file's SHA-256 and size are recorded
        (folders are skipped; give the files inside them).
    cluster_field : str, optional
        The name of the cluster field, recorded in the settings (``--cluster``).
    command : str, optional
        The command line that made the report, recorded as given.

    Returns
    -------
    dict
        ``receipt_version``, ``kind``, ``llm_power_version``, ``command``, ``inputs``, ``settings``,
        ``statistics``, ``report`` and ``digest`` (docs/integrations.md, "Receipts").

    Notes
    -----
    The diagnosis is run a second time from its held scores through a recorder that notes every
    pair (and graded sum) diagnose asks for -- including the pairs behind the tie groups -- and the
    second run must give the same report, field for field, or the receipt is refused (a diagnosis
    whose ``rng`` was a Generator cannot be replayed). Not supported: several runs per model (the run
    regime's mean squares), ``cluster_fine`` (the fine clusters' sums) and item shards
    (``engine="dask"``).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import diagnose, receipt, verify_receipt
    >>> rng = np.random.default_rng(1)
    >>> scores = (rng.random((500, 3)) < [0.7, 0.6, 0.5]).astype(int)
    >>> r = receipt(diagnose(scores, models=["a", "b", "c"], rng=0))
    >>> r["statistics"]["pairs"][0]["model_a"], r["receipt_version"]
    ('a', 1)
    >>> verify_receipt(r).ok
    True
    """
    content = receipt_content(diagnosis, cluster_field=cluster_field)
    body = {"receipt_version": RECEIPT_VERSION, "kind": RECEIPT_KIND, "llm_power_version": __version__,
            "command": command, "inputs": input_hashes(inputs), **content}
    return {**body, "digest": {"algorithm": "sha256", "value": receipt_digest(body)}}


@public
def write_receipt(diagnosis: Any, path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = (),
                  cluster_field: str | None = None, command: str | None = None) -> dict[str, Any]:
    """Write the :func:`receipt` of a diagnosis to ``path`` and return it.

    Parameters
    ----------
    diagnosis : Diagnosis
        As for :func:`receipt`.
    path : path
        Where to write (JSON, UTF-8, sorted keys; atomically; never over one of ``inputs``).
    inputs, cluster_field, command
        As for :func:`receipt`.

    Returns
    -------
    dict
        The receipt written.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from llm_power import diagnose, verify_receipt, write_receipt
    >>> scores = (np.random.default_rng(2).random((400, 3)) < [0.8, 0.6, 0.5]).astype(int)
    >>> path = os.path.join(tempfile.mkdtemp(), "receipt.json")
    >>> _ = write_receipt(diagnose(scores, rng=0), path)
    >>> verify_receipt(path).ok
    True
    """
    from ..report.files import write_atomic

    doc = receipt(diagnosis, inputs=inputs, cluster_field=cluster_field, command=command)
    write_atomic(os.fspath(path), dump_receipt(doc), inputs=tuple(inputs))
    return doc


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a file's bytes, read in blocks of 1 MB."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(MB), b""):
            h.update(block)
    return h.hexdigest()


def input_hashes(inputs: Sequence[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """Path (as given), size and SHA-256 of each regular file among ``inputs`` (once each)."""
    out, seen = [], set()
    for p in inputs:
        path = Path(p)
        if not path.is_file():
            continue
        key = path.resolve()
        if key in seen:
            continue
        seen.add(key)
        out.append({"path": os.fspath(p), "bytes": path.stat().st_size, "sha256": file_sha256(path)})
    return out


def read_receipt(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A receipt file parsed as JSON: its size bounded before it is read (``LLM_POWER_MAX_RECEIPT_MB``),
    a key twice in one object refused; the fields are checked where they are used.
    """
    from ..io.safe import load_json_bytes

    name = os.fspath(path)
    data = read_regular_bytes(name, limit(RECEIPT_LIMIT) * MB, limit_name=RECEIPT_LIMIT)
    doc = load_json_bytes(data, file=name)
    if not isinstance(doc, dict):
        msg = "a receipt is a JSON object"
        raise DataError(msg, file=name)
    return doc


@public
def verify_receipt(source: str | os.PathLike[str] | Mapping[str, Any], *,
                   items: Sequence[str | os.PathLike[str]] | None = None) -> ReceiptCheck:
    """Recompute every verdict of a receipt from its statistics alone and compare bit for bit.

    Parameters
    ----------
    source : path or dict
        A receipt file (JSON, written by :func:`write_receipt` or ``llm-power diagnose --receipt``)
        or the dict of :func:`receipt`. Untrusted: its size is bounded before it is read, every field
        is checked as it is used (a :class:`~llm_power.DataError` names it), nothing in it is run.
    items : sequence of path, optional
        The input files: each is re-hashed and must be one the receipt records, and every recorded
        input must be among them.

    Returns
    -------
    ReceiptCheck
        ``ok``, the digest check, and one line per mismatch (pair, regime, field, recorded and
        recomputed values).

    Notes
    -----
    The statistics are handed to :func:`~llm_power.resolution.diagnose_source` -- the code path of
    :func:`~llm_power.diagnose`, its kernel tests and verdicts -- with the recorded options and seed;
    its report is compared with the recorded one value by value (floats by their bits). The receipt's
    digest is recomputed over its canonical content, so an edit to any field is found even where it
    changes no verdict (an input's hash). ``settings.family_dependence`` (a note on BH's assumption,
    computed over the items) is recorded but not re-checked.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import diagnose, receipt, verify_receipt
    >>> scores = (np.random.default_rng(5).random((600, 3)) < [0.7, 0.62, 0.6]).astype(int)
    >>> doc = receipt(diagnose(scores, models=["a", "b", "c"], rng=0))
    >>> verify_receipt(doc).ok
    True
    >>> doc["statistics"]["pairs"][0]["b"] += 10       # an edited count
    >>> check = verify_receipt(doc)
    >>> check.ok, check.digest_ok
    (False, False)
    >>> [line.split(":")[0] for line in check.mismatches[:2]]
    ['digest', 'statistics']
    """
    import json

    if isinstance(source, Mapping):
        doc, file = json.loads(json.dumps(dict(source), allow_nan=False)), "<receipt>"
    else:
        file = os.fspath(source)
        doc = read_receipt(file)
    from ..resolution import get_field

    version = get_field(doc, "receipt_version", "", file, int, "an integer")
    if version != RECEIPT_VERSION:
        msg = f"receipt_version {version} is not one this llm-power reads ({RECEIPT_VERSION})"
        raise DataError(msg, file=file, field="receipt_version")
    digest = get_field(doc, "digest", "", file, dict, "an object")
    recorded_digest = get_field(digest, "value", "digest.", file, str, "a SHA-256 in hex")
    if get_field(digest, "algorithm", "digest.", file, str, '"sha256"') != "sha256":
        msg = f'must be "sha256"; got {digest["algorithm"][:20]!r}'
        raise DataError(msg, file=file, field="digest.algorithm")
    computed_digest = receipt_digest({k: v for k, v in doc.items() if k != "digest"})
    mismatches: list[str] = []
    if computed_digest != recorded_digest:
        mismatches.append(f"digest: recorded sha256 {recorded_digest[:16]}..., the content hashes to "
                          f"{computed_digest[:16]}... (the receipt was edited)")
    diag, lines, values = recompute_receipt(doc, file=file)
    mismatches += lines
    inputs_checked = None
    if items is not None:
        inputs_checked, lines = _check_items(doc, items, file)
        mismatches += lines
    return ReceiptCheck(ok=not mismatches, file=file, receipt_version=version,
                        written_by=str(doc.get("llm_power_version")), verified_by=__version__,
                        digest_ok=computed_digest == recorded_digest, digest_recorded=recorded_digest,
                        digest_computed=computed_digest, n_pairs=len(diag.columns["delta"]),
                        regimes=tuple(r.key for r in diag.regimes), values_checked=values,
                        inputs_checked=inputs_checked, mismatches=tuple(mismatches))


def _check_items(doc: Mapping[str, Any], items: Sequence[str | os.PathLike[str]], file: str) -> tuple[int, list[str]]:
    """Re-hash the given files: each must be a recorded input, and every recorded input must be given."""
    from ..resolution import get_field, list_field

    recorded = list_field(doc.get("inputs"), "inputs", file)
    hashes = {}
    for k, entry in enumerate(recorded):
        digest = get_field(entry, "sha256", f"inputs[{k}].", file, str, "a SHA-256 in hex")
        hashes[digest] = str(entry.get("path"))
    lines, seen = [], set()
    for path in items:
        p = Path(path)
        if not p.is_file():
            msg = "not a file (--items takes the input files themselves)"
            raise DataError(msg, file=os.fspath(path))
        digest = file_sha256(p)
        seen.add(digest)
        if digest not in hashes:
            lines.append(f"input {os.fspath(path)}: sha256 {digest[:16]}... is not one the receipt records")
    for digest, path in hashes.items():
        if digest not in seen:
            lines.append(f"input {path} (sha256 {digest[:16]}...): recorded, not among the files given")
    return len(items), lines
