"""Every Eval Ever (EEE, schema 0.3.0) aggregate records from a :class:`~llm_power.Diagnosis`, with
the uncertainty block filled from llm-power's own numbers: the standard error and its method, the
confidence interval with its level and method, the SD of the item scores and the number of items.

One record per model; :func:`to_eee` returns them, :func:`write_eee` writes ``<model>.json`` files
into a folder (atomically, never over an input nor through a symlink). They validate against
EEE's ``eval.schema.json`` and read back with :func:`llm_power.io.aggregate.read_eee_aggregates`
(or ``llm-power aggregate``) to the same numbers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

from .._version import __version__

__all__ = ["EEE_SCHEMA_VERSION", "to_eee", "write_eee"]

#: the schema the records follow
EEE_SCHEMA_VERSION = "0.3.0"

_RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")


def _num(value: Any) -> float:
    return float(value)


def to_eee(diag: Any, *, benchmark: str = "benchmark", dataset: str | None = None,
           source_organization: str = "unknown", evaluator_relationship: str = "third_party",
           eval_library: str = "unknown", eval_library_version: str = "unknown",
           retrieved_timestamp: float | None = None) -> list[dict[str, Any]]:
    """Every Eval Ever aggregate records (schema 0.3.0), one per model of ``diag``.

    Parameters
    ----------
    diag : Diagnosis
        The result of :func:`llm_power.diagnose`.
    benchmark : str, default "benchmark"
        ``evaluation_name`` of each result (the task, e.g. ``"mmlu_pro"``).
    dataset : str, optional
        ``source_data.dataset_name`` (default: ``benchmark``).
    source_organization, evaluator_relationship : str
        ``source_metadata`` (who ran the evaluation; ``"first_party"``, ``"third_party"``,
        ``"collaborative"`` or ``"other"``).
    eval_library, eval_library_version : str
        The harness that produced the per-item results (llm-power is named in
        ``eval_library.additional_details.uncertainty_by``).
    retrieved_timestamp : float, optional
        Unix seconds of the record (default: now); part of each ``evaluation_id``.

    Returns
    -------
    list of dict
        JSON-ready records. ``score_details.uncertainty`` holds ``standard_error`` (value and
        method: the sample SD with ddof 1 over sqrt(n), or cluster-robust CR2 with ``cluster``, or
        over items and runs), ``confidence_interval`` (the models table's interval: lower, upper,
        level and method -- Wilson for 0/1 scores, Student t for graded ones, CR2 t with
        clusters), ``standard_deviation`` (of the item scores) and ``num_samples`` (items).

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> x = (np.random.default_rng(0).random((400, 2)) < [0.7, 0.6]).astype(int)
    >>> (rec, _) = lp.to_eee(lp.diagnose(x, models=["a", "b"]), benchmark="toy",
    ...                      retrieved_timestamp=0)
    >>> rec["model_info"]["id"], sorted(rec["evaluation_results"][0]["score_details"]["uncertainty"])
    ('a', ['confidence_interval', 'num_samples', 'standard_deviation', 'standard_error'])
    """
    if evaluator_relationship not in _RELATIONSHIPS:
        choices = ", ".join(map(repr, _RELATIONSHIPS))
        msg = f"`evaluator_relationship` must be one of {choices}; got {evaluator_relationship!r}."
        raise ValueError(msg)
    if diag.model_se is None:
        msg = "this Diagnosis has no per-model standard errors (made by an older llm-power); run diagnose again"
        raise ValueError(msg)
    stamp = f"{time.time() if retrieved_timestamp is None else float(retrieved_timestamp)}"
    s = diag.settings
    binary = bool(s.get("binary"))
    level = float(s.get("confidence_level", 0.95))
    out = []
    for k, model in enumerate(diag.models):
        name = str(model)
        uncertainty: dict[str, Any] = {"num_samples": int(diag.n)}
        se = _num(diag.model_se[k])
        if math.isfinite(se):
            uncertainty["standard_error"] = {"value": se, "method": str(s.get("model_se_method", "analytic"))}
        lo, hi = _num(diag.model_ci_low[k]), _num(diag.model_ci_high[k])
        if math.isfinite(lo) and math.isfinite(hi):
            uncertainty["confidence_interval"] = {"lower": lo, "upper": hi, "confidence_level": level,
                                                  "method": str(s.get("model_ci_method", "unknown"))}
        sd = _num(diag.model_sd[k]) if diag.model_sd is not None else math.nan
        if math.isfinite(sd):
            uncertainty["standard_deviation"] = sd
        metric: dict[str, Any] = {"evaluation_description": "mean per-item score",
                                  "metric_id": "accuracy" if binary else "mean_score",
                                  "lower_is_better": False, "score_type": "binary" if binary else "continuous"}
        # the range of a graded score is not known from the results: null (the schema's "unknown")
        metric.update(min_score=0.0 if binary else None, max_score=1.0 if binary else None)
        out.append({
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"{benchmark}/{name}/{stamp}",
            "retrieved_timestamp": stamp,
            "source_metadata": {"source_name": "llm-power", "source_type": "evaluation_run",
                                "source_organization_name": str(source_organization),
                                "evaluator_relationship": evaluator_relationship},
            "eval_library": {"name": str(eval_library), "version": str(eval_library_version),
                             "additional_details": {"uncertainty_by": f"llm-power {__version__}"}},
            "model_info": {"name": name, "id": name,
                           "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"}},
            "evaluation_results": [{
                "evaluation_name": str(benchmark),
                "source_data": {"dataset_name": str(dataset or benchmark), "source_type": "other",
                                "additional_details": {"items": str(int(diag.n))}},
                "metric_config": metric,
                "score_details": {"score": _num(diag.means[k]), "uncertainty": uncertainty},
            }],
        })
    return out


_HASHED = re.compile(r"-[0-9a-f]{8}$")


def _hashed(model: str, safe: str) -> str:
    return (safe or "model") + "-" + hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def file_names(models: list[str]) -> list[str]:
    """One file name per model, never shared: the model's safe characters, and a short hash of the name
    whenever that changed it, when the name already looks hashed (a model literally named
    ``org_a-1a2b3c4d`` is not ``org/a``'s file), or when two names differ only in case (one file on
    a case-insensitive file system).
    """
    safe = ["".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_.") else "_" for ch in m)[:100].strip(".")
            for m in models]
    folded: dict[str, int] = {}
    for s in safe:
        folded[s.lower()] = folded.get(s.lower(), 0) + 1
    names = []
    for model, s in zip(models, safe, strict=True):
        keep = s == model and s and not _HASHED.search(s) and folded[s.lower()] == 1
        names.append(f"{s if keep else _hashed(model, s)}.json")
    return names


def eee_paths(diag: Any, folder: str | Path) -> list[Path]:
    """The files :func:`write_eee` writes for ``diag`` into ``folder``, one per model, in its order."""
    return [Path(folder) / name for name in file_names([str(m) for m in diag.models])]


def check_eee_paths(diag: Any, folder: str | Path, others: tuple[Any, ...] = ()) -> list[Path]:
    """The record files of :func:`eee_paths`, after checking that none is another output file of the run
    (``others``): an :class:`~llm_power.report.files.OutputPathError` naming the model and the file.
    """
    from .files import OutputPathError

    paths = eee_paths(diag, str(folder).rstrip("/" + os.sep) or str(folder))
    taken = {os.path.realpath(o): str(o) for o in others if o is not None and str(o) != "-"}
    for model, path in zip(diag.models, paths, strict=True):
        if os.path.realpath(path) in taken:
            msg = (f"the record of model {str(model)!r} would replace {taken[os.path.realpath(path)]!r}, another "
                   "output of this run; write the records into another folder")
            raise OutputPathError(msg)
    return paths


def write_eee(diag: Any, folder: str | Path, *, inputs: tuple[Any, ...] = (), others: tuple[Any, ...] = (),
              **options: Any) -> list[Path]:
    """Write :func:`to_eee`'s records to ``folder/<model>.json`` (created if needed).

    Parameters
    ----------
    diag : Diagnosis
        The result of :func:`llm_power.diagnose`.
    folder : str or Path
        The output folder: never a symbolic link, an input, or inside an input folder.
    inputs : tuple, optional
        The input files and folders (no record is ever written over or into one).
    others : tuple, optional
        The run's other output files (a record never replaces one: an error before anything is written).
    **options
        Passed to :func:`to_eee` (``benchmark``, ``dataset``, ``source_organization``, ...).

    Returns
    -------
    list of Path
        The files, one per model: the model's safe characters, plus a short hash of the name when
        that changed it, when it already ends like a hash, or when another name differs only in
        case (``org/a``, ``org_a`` and a model named ``org_a-<hash>`` never share a file). Each is
        written atomically (a temporary file, then renamed), into the folder whether it exists or not.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> import llm_power as lp
    >>> x = (np.random.default_rng(0).random((400, 2)) < [0.7, 0.6]).astype(int)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = lp.write_eee(lp.diagnose(x, models=["org/a", "b"]), tmp, benchmark="toy")
    ...     sorted(f.name for f in files)
    ['b.json', 'org_a-...json']
    """
    from .files import check_output_folder, write_atomic

    check_output_folder(folder, inputs, others)
    paths = check_eee_paths(diag, folder, others)
    target = paths[0].parent if paths else Path(folder)
    records = to_eee(diag, **options)
    target.mkdir(parents=True, exist_ok=True)
    by_id = {str(m): p for m, p in zip(diag.models, paths, strict=True)}
    return [Path(write_atomic(by_id[str(record["model_info"]["id"])],
                              json.dumps(record, indent=2, ensure_ascii=False) + "\n", inputs=inputs))
            for record in records]
