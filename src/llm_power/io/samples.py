"""Read repeated samples per question — one 0/1 score per sample, nothing averaged away — from
inspect logs with ``epochs > 1``, EvalPlus ``*_eval_results.json``, SWE-bench run reports
(several runs of a model = several samples) and plain long tables (``model, item, sample, score``).

The result is a long pandas table ``model, item, sample, score`` (+ ``cluster``), from which
:func:`sample_matrices` builds each model's questions x samples matrix for
:func:`llm_power.pass_at_k_ci`. Errors name the file, the record and the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._core.clusters import missing_label
from .._core.errors import DataError
from .._core.files import OUT_OF_MEMORY
from .safe import parse_once

__all__ = ["read_samples", "sample_matrices"]

_STATUS = {"pass": 1.0, "fail": 0.0, "timeout": 0.0, "error": 0.0}


def _kind(path: Path) -> str:
    from .detect import LM_EVAL_SAMPLES

    name = path.name.lower()
    if path.suffix.lower() == ".eval":
        return "inspect"
    if LM_EVAL_SAMPLES.match(path.name):
        return "lm_eval"
    if name.endswith(("_eval_results.json", ".eval_results.json")) or name == "eval_results.json":
        return "evalplus"
    if path.suffix.lower() == ".json":
        from .safe import load_json_file

        data = load_json_file(path, take=True)
        if isinstance(data, dict) and "resolved_ids" in data:
            return "swebench"
        if isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data:
            return "inspect"
        if isinstance(data, dict) and isinstance(data.get("eval"), dict):
            return "evalplus"
        msg = ("not a samples file: expected an inspect log, EvalPlus eval_results.json ({'eval': {task: [...]}}) or a "
               "SWE-bench report (resolved_ids)")
        raise DataError(msg, file=str(path))
    return "long"


def _inspect(path: Path, metric: str | None, cluster: str | None) -> Iterator[dict[str, Any]]:
    from .formats.inspect import inspect_score, load_inspect_log

    samples, model, task = load_inspect_log(path)
    if not isinstance(samples, list) or not samples:
        msg = "the log holds no samples"
        raise DataError(msg, file=str(path))
    seen: set[tuple[str, str]] = set()
    for k, sample in enumerate(samples):
        if not isinstance(sample, dict):
            msg = "each sample must be a JSON object"
            raise DataError(msg, file=str(path), record=f"sample #{k}")
        sid, epoch = str(sample.get("id", k)), str(sample.get("epoch", 1))
        record = f"sample {sid} epoch {epoch}"
        if (sid, epoch) in seen:
            msg = f"sample id {sid!r} appears twice for epoch {epoch}"
            raise DataError(msg, file=str(path), record=record)
        seen.add((sid, epoch))
        label = None
        if cluster is not None:
            label = (sample.get("metadata") or {}).get(cluster)
            if label is None:
                msg = f"no cluster field {cluster!r} in sample metadata"
                raise DataError(msg, file=str(path), record=record, field=f"metadata.{cluster}")
        yield {"model": model, "item": f"{task}:{sid}", "sample": epoch,
               "score": inspect_score(sample, record, metric, path), "cluster": label}


def _status(entry: dict[str, Any], key: str, path: Path, record: str) -> float:
    value = entry.get(f"{key}_status")
    if value is None and isinstance(entry.get(key), list) and entry[key]:  # older EvalPlus: "base": [status, ...]
        value = entry[key][0]
    if value not in _STATUS:
        msg = f"{value!r} is not a status (pass, fail, timeout, error)"
        raise DataError(msg, file=str(path), record=record, field=f"{key}_status")
    return _STATUS[str(value)]


def _evalplus(path: Path, metric: str | None) -> Iterator[dict[str, Any]]:
    from .safe import load_json_file

    which = metric or "plus"
    if which not in ("plus", "base"):
        msg = f"EvalPlus scores are 'plus' (base and extra tests pass; default) or 'base'; got {which!r}"
        raise DataError(msg, file=str(path), field="metric")
    data = load_json_file(path, take=True)
    tasks = data.get("eval") if isinstance(data, dict) else None
    if not isinstance(tasks, dict) or not tasks:
        msg = "no 'eval' mapping of tasks to samples"
        raise DataError(msg, file=str(path), field="eval")
    model = re.sub(r"[._]eval_results$", "", path.stem) or path.parent.name
    if path.stem == "eval_results":
        model = path.parent.name
    for task, entries in tasks.items():
        if not isinstance(entries, list) or not entries:
            msg = "must be a non-empty list of samples"
            raise DataError(msg, file=str(path), record=f"task {task}", field="eval")
        for s, entry in enumerate(entries):
            record = f"task {task} sample {s}"
            if not isinstance(entry, dict):
                msg = "each sample must be a JSON object"
                raise DataError(msg, file=str(path), record=record)
            base = _status(entry, "base", path, record)
            score = base if which == "base" else base * _status(entry, "plus", path, record)
            yield {"model": model, "item": str(task), "sample": str(s), "score": score, "cluster": None}


def _swebench(path: Path, instances: list[str] | None) -> Iterator[dict[str, Any]]:
    from .safe import load_json_file

    data = load_json_file(path, take=True)
    resolved = data.get("resolved_ids")
    if not isinstance(resolved, list):
        msg = "resolved_ids must be a list of instance ids"
        raise DataError(msg, file=str(path), field="resolved_ids")
    known = set()
    for key in ("resolved_ids", "unresolved_ids", "submitted_ids", "completed_ids", "error_ids", "empty_patch_ids",
                "incomplete_ids"):
        ids = data.get(key)
        if not isinstance(ids, list):
            continue
        bad = next((k for k, v in enumerate(ids) if not isinstance(v, str) or not v.strip()), None)
        if bad is not None:
            msg = f"entry #{bad} ({ids[bad]!r:.40}) is not an instance id (a non-empty string)"
            raise DataError(msg, file=str(path), field=key)
        known |= set(ids)
    if instances is None:
        total = data.get("total_instances")
        if isinstance(total, int) and total > len(known):
            msg = (f"the report covers {len(known)} of total_instances = {total}; the other instances count as "
                   "failures only if named: give the instance list (--instances FILE)")
            raise DataError(msg, file=str(path), field="total_instances")
        universe = sorted(known)
    else:
        missing = sorted(set(map(str, resolved)) - set(instances))
        if missing:
            msg = f"resolved instance {missing[0]!r} is not in the instance list"
            raise DataError(msg, file=str(path), field="resolved_ids")
        universe = instances
    parts = path.name[: -len(".json")].split(".")
    model = parts[0] if len(parts) > 1 else path.parent.name
    run = ".".join(parts[1:]) if len(parts) > 1 else path.stem
    hit = set(map(str, resolved))
    for item in universe:
        yield {"model": model, "item": item, "sample": run, "score": 1.0 if item in hit else 0.0, "cluster": None}


def _passing_repeats(value: float, n: int, k: int, *, file: str, record: str, field: str) -> int:
    """The number c of passing repeats among n that gives this document's pass@k (unique, or an error).

    Decoding, not estimating: the count whose pass@k, 1 - C(n - c, k) / C(n, k) in exact integers,
    is the logged value (the reader needs no statistics; :func:`llm_power.pass_at_k` estimates).
    """
    from math import comb

    if k > n:
        msg = f"pass@{k} with only {n} repeats"
        raise DataError(msg, file=file, record=record, field=field)
    total = comb(n, k)
    matches = [c for c in range(n + 1) if abs((total - comb(n - c, k)) / total - value) < 1e-9]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        msg = f"{value!r} is not pass@{k} of any count of passing repeats among {n}"
        raise DataError(msg, file=file, record=record, field=field)
    msg = (f"pass@{k} = {value!r} with {n} repeats does not say how many passed (any of {matches[0]}..{matches[-1]}); "
           "log pass@1 as well (it is c/n), or read EvalPlus / inspect results")
    raise DataError(msg, file=file, record=record, field=field)


def _lm_eval(path: Path, metric: str | None, cluster: str | None) -> Iterator[dict[str, Any]]:
    """lm-eval samples of a task run with ``repeats``: one record per document holds every repeat's
    response but a single score; the per-document pass@k (preferably pass@1 = c / n) gives the number
    c of passing repeats, which is all pass@k needs (the file does not say which repeats passed).
    """
    from .detect import LM_EVAL_SAMPLES
    from .formats.lm_eval import doc_cluster, lm_eval_model
    from .plain import parse_score, table_records

    match = LM_EVAL_SAMPLES.match(path.name)
    task, date = (match.group("task"), match.group("date")) if match else (path.stem, "")
    model = lm_eval_model(path, date)
    filters: set[str] = set()
    for lineno, rec in table_records(path):
        where = f"line {lineno}"
        filters.add(str(rec.get("filter", "none")))
        if len(filters) > 1:
            msg = f"several filters ({', '.join(sorted(filters))}); keep one filter's records per file"
            raise DataError(msg, file=str(path), record=where, field="filter")
        resps = rec.get("resps")
        if not (isinstance(resps, list) and resps and isinstance(resps[0], list)):
            msg = "no list of repeated responses (was the task run with repeats > 1?)"
            raise DataError(msg, file=str(path), record=where, field="resps")
        n = len(resps[0])
        if n < 2:
            msg = "one response per document: pass@k needs a task run with repeats > 1"
            raise DataError(msg, file=str(path), record=where, field="resps")
        names = [m for m in (rec.get("metrics") or []) if isinstance(m, str)] or [
            key for key in rec if re.fullmatch(r"pass(@|_at_)\d+", str(key))]
        wanted = [metric] if metric else sorted(
            (m for m in names if re.fullmatch(r"pass(@|_at_)\d+", m)), key=lambda m: int(re.split(r"@|_at_", m)[1]))
        if not wanted or wanted[0] not in rec:
            msg = f"no per-document pass@k; metrics: {', '.join(map(repr, names)) or 'none'} (choose one with --score)"
            raise DataError(msg, file=str(path), record=where, field=str(metric or "metrics"))
        name = wanted[0]
        k_match = re.fullmatch(r"pass(?:@|_at_)(\d+)", name)
        if k_match is None:
            msg = "is not a pass@k metric (pass@1, pass@10, pass_at_1, ...)"
            raise DataError(msg, file=str(path), record=where, field=name)
        value = parse_score(rec[name], file=str(path), record=where, field=name)
        c = _passing_repeats(value, n, int(k_match.group(1)), file=str(path), record=where, field=name)
        label = doc_cluster(rec, cluster, file=str(path), record=where)
        for r in range(n):
            yield {"model": model, "item": f"{task}:{rec.get('doc_id', lineno)}", "sample": f"repeat {r + 1}",
                   "score": 1.0 if r < c else 0.0, "cluster": label}


def _long(path: Path, cluster: str | None) -> Iterator[dict[str, Any]]:
    from .plain import id_text, parse_score, table_records

    needed = ("model", "item", "sample", "score")
    for record, rec in table_records(path):
        where = f"line {record}" if isinstance(record, int) else str(record)
        for field in needed:
            if rec.get(field) in (None, ""):
                msg = "is missing (a long samples table has model, item, sample, score)"
                raise DataError(msg, file=str(path), record=where, field=field)
        label = None
        if cluster is not None:
            label = rec.get(cluster)
            if missing_label(label):
                msg = "is missing"
                raise DataError(msg, file=str(path), record=where, field=cluster)
        model, item, sample = (id_text(rec[f], file=str(path), record=where, field=f) for f in needed[:3])
        yield {"model": model, "item": item, "sample": sample,
               "score": parse_score(rec["score"], file=str(path), record=where, field="score"), "cluster": label}


def _instance_ids(instances: str | Path) -> list[str]:
    """The instance ids of a list file (one a line; a regular file, at most ``LLM_POWER_MAX_TEXT_MB``)."""
    from .safe import limit, read_regular_bytes

    if not Path(instances).exists():
        msg = "instance list not found"
        raise DataError(msg, file=str(instances))
    data = read_regular_bytes(instances, limit("LLM_POWER_MAX_TEXT_MB") << 20, limit_name="LLM_POWER_MAX_TEXT_MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start})"
        raise DataError(msg, file=str(instances)) from None
    return [line.strip() for line in text.splitlines() if line.strip()]


@parse_once()
def read_samples(paths: str | Path | Iterable[str | Path], *, metric: str | None = None, cluster: str | None = None,
                 instances: str | Path | None = None) -> Any:
    """Read repeated samples per question into a long table ``model, item, sample, score, cluster``.

    Formats (by file): lm-eval ``samples_<task>_<date>.jsonl`` of a task run with ``repeats`` — the
    count of passing repeats per document from its pass@1 (= c/n) or another invertible pass@k
    (the file does not say which repeats passed; rows are ordered passes first);
    inspect ``.eval``/``.json`` logs — one row per sample *and epoch*
    (``metric`` = scorer or scorer.key; ``cluster`` = a metadata key); EvalPlus
    ``*_eval_results.json`` — one row per generated solution, score 1 when it passes the base and
    the extra tests (``metric="base"``: the base tests only), model from the file name; SWE-bench
    run reports ``<model>.<run>.json`` — one row per instance per run, 1 if resolved (several runs
    of a model are its samples; ``instances`` = a file of instance ids, one per line, is the
    denominator, required when the report does not name every instance); CSV/TSV/JSONL long
    tables with ``model, item, sample, score``. Duplicate (model, item, sample) rows are an error.
    """
    import pandas as pd

    from .detect import expand_paths

    universe = None if instances is None else _instance_ids(instances)
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for raw in items:
        path = Path(raw)
        if path.is_dir():
            from .safe import regular_files

            found = regular_files(path, "*", lambda p: p.suffix.lower() == ".eval"
                                  or p.name.endswith(("eval_results.json",)))
            files += found or expand_paths([path])
        else:
            if not path.exists():
                msg = "file not found"
                raise DataError(msg, file=str(path))
            files.append(path)
    rows: list[dict[str, Any]] = []
    ends: list[int] = []  # where each file's rows end (a duplicate names its files)
    for path in files:
        kind = _kind(path)
        try:
            if kind == "inspect":
                rows.extend(_inspect(path, metric, cluster))
            elif kind == "evalplus":
                rows.extend(_evalplus(path, metric))
            elif kind == "swebench":
                rows.extend(_swebench(path, universe))
            elif kind == "lm_eval":
                rows.extend(_lm_eval(path, metric, cluster))
            else:
                rows.extend(_long(path, cluster))
        except MemoryError:
            raise DataError(OUT_OF_MEMORY, file=str(path)) from None
        ends.append(len(rows))
    if not rows:
        msg = "no samples in the given files"
        raise DataError(msg)
    frame = pd.DataFrame(rows)
    key = ["model", "item", "sample"]
    dup = frame.duplicated(key)
    if dup.any():
        second = int(np.flatnonzero(dup.to_numpy())[0])
        row = frame.iloc[second]
        same = (frame[key] == row[key]).all(axis=1).to_numpy()
        first = int(np.flatnonzero(same)[0])
        in_file = [files[int(np.searchsorted(ends, k, side="right"))] for k in (first, second)]
        place = f"twice in {in_file[0]}" if in_file[0] == in_file[1] else f"in {in_file[0]} and again in {in_file[1]}"
        msg = (f"model {row['model']!r}, item {row['item']!r}, sample {row['sample']!r} appears {place} "
               "(two runs with one name, or one file given twice?)")
        raise DataError(msg)
    if cluster is None:
        frame = frame.drop(columns="cluster")
    return frame


def sample_matrices(frame: Any) -> dict[str, Any]:
    """Per model (in natural name order, as every report orders models: the output never depends on
    the order of the input files), its questions x samples matrix (pandas, NaN where a question has
    fewer samples), questions in one common order (the union, sorted) so two models' rows line up.
    """
    from .._core.order import natural_key

    out = {}
    items = sorted(set(frame["item"]))
    parts = {str(model): part for model, part in frame.groupby("model", sort=False)}
    for model in sorted(parts, key=lambda name: (natural_key(name), name)):
        out[model] = parts[model].pivot(index="item", columns="sample", values="score").reindex(items)
    return out
