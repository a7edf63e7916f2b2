"""lm-evaluation-harness ``samples_<task>_<date>.jsonl`` (one line per doc and filter; the model from
the neighbouring ``results_<date>.json``). Clean files take the columnar fast path (:mod:`llm_power.io.columnar`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..._core.labels import missing_label
from ..plain import parse_score, table_records
from ..records import AggregateOptions, AggregateReader, Format, Record, SampleOptions, SampleReader
from ..safe import is_regular, peek_json, regular_files

#: the name lm-eval gives a samples file
LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")


def lm_eval_model(path: Path, date: str) -> str:
    """Model name from the neighbouring results_<date>.json, else the folder name."""
    candidates = [path.parent / f"results_{date}.json"] + sorted(path.parent.glob("results_*.json"))
    for cand in candidates:
        if is_regular(cand):  # a FIFO or a device named results_*.json is an error, never a hang
            res = peek_json(cand)  # not JSON: the next candidate; hostile JSON: an error
            if not isinstance(res, dict):
                continue
            for key in ("model_name", "model_name_sanitized"):
                if isinstance(res.get(key), str) and res[key]:
                    return str(res[key])
            config = res.get("config")
            args = config.get("model_args") if isinstance(config, dict) else None
            if isinstance(args, str):
                match = re.search(r"pretrained=([^,]+)", args)
                if match:
                    return match.group(1)
    return path.parent.name


def doc_cluster(rec: dict[str, Any], cluster: str | None, *, file: str, record: str) -> Any:
    """The cluster label of an lm-eval record (a field of its 'doc'), or None without ``cluster``."""
    if cluster is None:
        return None
    doc = rec.get("doc") or {}
    label = doc.get(cluster) if isinstance(doc, dict) else None
    if missing_label(label):
        msg = f"no cluster field {cluster!r} in 'doc'" if label is None else f"empty cluster label {label!r}"
        raise DataError(msg, file=file, record=record, field=f"doc.{cluster}")
    return label


def read_lm_eval(path: Path, *, metric: str | None = None, filter_name: str | None = None,
                 cluster: str | None = None) -> Iterator[Record]:
    """lm-eval ``samples_<task>_<date>.jsonl``: one line per (doc_id, filter); streamed."""
    match = LM_EVAL_SAMPLES.match(path.name)
    task, date = (match.group("task"), match.group("date")) if match else (path.stem, "")
    model = lm_eval_model(path, date)
    by_filter: dict[str, list[Record]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, rec in table_records(path):
        where = dict(file=str(path), record=f"line {lineno}")
        if "doc_id" not in rec:
            msg = "no 'doc_id' (is this an lm-eval samples file?)"
            raise DataError(msg, **where, field="doc_id")
        filt = str(rec.get("filter", "none"))
        metrics = rec.get("metrics") or [k for k in ("acc", "exact_match", "acc_norm") if k in rec]
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            msg = "'metrics' must be a list of metric names"
            raise DataError(msg, **where, field="metrics")
        name = metric or (metrics[0] if metrics else None)
        if name is None or name not in rec:
            available = ", ".join(repr(m) for m in metrics) or "none"
            msg = f"no metric {name!r}; available per-item metrics: {available}"
            raise DataError(msg, **where,
                            field=str(name))
        key = (filt, str(rec["doc_id"]))
        if key in seen:
            msg = f"duplicate doc_id {rec['doc_id']!r} for filter {filt!r} (first at line {seen[key]})"
            raise DataError(msg,
                            **where, field="doc_id")
        seen[key] = lineno
        label = doc_cluster(rec, cluster, file=str(path), record=f"line {lineno}")
        score = parse_score(rec[name], file=str(path), record=f"line {lineno}", field=name)
        by_filter.setdefault(filt, []).append(Record(model, f"{task}:{rec['doc_id']}", score,
                                                     None if label is None else str(label),
                                                     str(rec.get("target")), str(path)))
    if not by_filter:
        msg = "no records (empty file)"
        raise DataError(msg, file=str(path))
    if filter_name is not None:
        if filter_name not in by_filter:
            msg = f"no filter {filter_name!r}; filters in the file: {', '.join(map(repr, sorted(by_filter)))}"
            raise DataError(msg,
                            file=str(path), field="filter")
        yield from by_filter[filter_name]
        return
    if len(by_filter) > 1:
        msg = (
            f"{len(by_filter)} filters per doc ({', '.join(map(repr, sorted(by_filter)))}); "
                        "choose one with --filter (they are different scorings of the same items)"
        )
        raise DataError(msg,
                        file=str(path), field="filter")
    yield from next(iter(by_filter.values()))


def _finds(folder: Path) -> list[tuple[int, Path]]:
    return [(0, p) for p in regular_files(folder, "samples_*.jsonl", lambda p: bool(LM_EVAL_SAMPLES.match(p.name)))]


def _companions(path: Path) -> list[Path]:
    return sorted(path.parent.glob("results_*.json")) if LM_EVAL_SAMPLES.match(path.name) else []


FORMATS = (Format(
    name="lm_eval", summary="lm-eval samples_*.jsonl", order=10,
    read=lambda path, o: read_lm_eval(path, metric=o.metric, filter_name=o.filter_name, cluster=o.cluster),
    claims=lambda path: path.is_file() and bool(LM_EVAL_SAMPLES.match(path.name)),
    finds=_finds, companions=_companions, patterns=("samples_*_*.jsonl",)),)


# ---- repeated samples (passk): a task run with repeats ---------------------------------------------------

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


def read_lm_eval_samples(path: Path, options: SampleOptions) -> Iterator[dict[str, Any]]:
    """lm-eval samples of a task run with ``repeats``: one record per document holds every repeat's
    response but a single score; the per-document pass@k (preferably pass@1 = c / n) gives the number
    c of passing repeats, which is all pass@k needs (the file does not say which repeats passed).
    """
    metric, cluster = options.metric, options.cluster
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


SAMPLES = (SampleReader("lm_eval", "lm-eval samples_<task>_<date>.jsonl of a task run with repeats",
                        read_lm_eval_samples, lambda path: bool(LM_EVAL_SAMPLES.match(path.name)), order=20,
                        finds=lambda folder: [p for _, p in _finds(folder)]),)


# ---- aggregate scores (aggregate): results_*.json written without --log_samples --------------------------

def _read_aggregates(files: list[Path], options: AggregateOptions) -> list[Any]:
    from ..scores import read_lm_eval_aggregates

    return read_lm_eval_aggregates(files, metric=options.metric, filter=options.filter)


def _claims_results(path: Path) -> bool:
    if path.name.startswith("results_") and path.suffix.lower() == ".json":
        return True
    if path.suffix.lower() != ".json":
        return False
    data = peek_json(path)
    return isinstance(data, dict) and isinstance(data.get("results"), dict) and "n-samples" in data


AGGREGATES = (AggregateReader("lm_eval", "lm-eval results_*.json", _read_aggregates, _claims_results, order=10,
                              finds=lambda folder: regular_files(folder, "results_*.json")),)
