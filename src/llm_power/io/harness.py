"""Readers for eval-harness outputs: lm-evaluation-harness, inspect_ai, HELM, lighteval, plain files.

Every reader yields :class:`Record` (model, item, score, cluster, target) one at a time, so large
files are streamed in constant memory per line; :func:`read_results` collects them into the long
table ``model, item, score[, cluster]``. Errors name the file, the record and the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._core.clusters import missing_label
from .._core.errors import DataError
from .._core.options import FORMATS  # one list, shared with the command line
from .plain import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, _records, parse_score
from .safe import ArchiveReader, load_json_file, read_parquet

if TYPE_CHECKING:  # pandas is imported lazily: `import llm_power` stays light
    import numpy as np
    import pandas as pd

__all__ = ["FORMATS", "Record", "companion_files", "detect_format", "iter_records", "read_results", "read_wide_table"]

INSPECT_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
from .detect import LM_EVAL_SAMPLES, companion_files, detect_format, expand_paths  # noqa: E402, F401 - re-exported


@dataclass(frozen=True)
class Record:
    """One model's score on one item."""

    model: str
    item: str
    score: float
    cluster: str | None = None
    target: str | None = None
    source: str = ""


# --- detection -----------------------------------------------------------------------------------

def _expect(value: Any, kind: type, what: str, *, file: str, record: str | None = None) -> Any:
    """``value`` if it is a ``kind``, else a DataError naming what was expected (wrong-shape JSON)."""
    if not isinstance(value, kind):
        name = {"dict": "a JSON object", "list": "a JSON array"}.get(kind.__name__, kind.__name__)
        msg = f"{what} must be {name}; got {type(value).__name__}"
        raise DataError(msg, file=file, record=record)
    return value


def _lm_eval_model(path: Path, date: str) -> str:
    """Model name from the neighbouring results_<date>.json, else the folder name."""
    candidates = [path.parent / f"results_{date}.json"] + sorted(path.parent.glob("results_*.json"))
    for cand in candidates:
        if cand.exists():
            try:
                res = load_json_file(cand)
            except DataError:
                continue
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
    model = _lm_eval_model(path, date)
    by_filter: dict[str, list[Record]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, rec in _records(path):
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


# --- inspect_ai ----------------------------------------------------------------------------------

def _inspect_value(value: Any, *, file: str, record: str, field: str) -> float:
    if isinstance(value, str) and value in INSPECT_VALUES:
        return INSPECT_VALUES[value]
    if isinstance(value, dict):
        msg = "multi-value score (a dict); choose one value with `metric`='scorer.key'"
        raise DataError(msg,
                        file=file, record=record, field=field)
    return parse_score(value, file=file, record=record, field=field)


def inspect_score(sample: dict[str, Any], record: str, metric: str | None, path: Path) -> float:
    """One inspect sample's score: the first scorer, or ``metric`` = "scorer" / "scorer.key"."""
    scores = sample.get("scores") or {}
    _expect(scores, dict, "'scores'", file=str(path), record=record)
    if not scores:
        msg = "sample has no scores (was the log scored?)"
        raise DataError(msg, file=str(path), record=record, field="scores")
    scorer, key = (metric.split(".", 1) + [None])[:2] if metric else (next(iter(scores)), None)
    if scorer not in scores:
        msg = f"no scorer {scorer!r}; available: {', '.join(map(repr, scores))}"
        raise DataError(msg, file=str(path), record=record, field="scores")
    value = scores[scorer].get("value") if isinstance(scores[scorer], dict) else scores[scorer]
    if key is not None:
        if not isinstance(value, dict) or key not in value:
            msg = f"no value {key!r} in scorer {scorer!r}"
            raise DataError(msg, file=str(path), record=record, field=f"scores.{scorer}")
        value = value[key]
    return _inspect_value(value, file=str(path), record=record, field=f"scores.{scorer}.value")


def _inspect_samples(samples: Sequence[dict[str, Any]], model: str, task: str, path: Path, metric: str | None,
                     cluster: str | None) -> Iterator[Record]:
    values: dict[str, list[float]] = {}
    meta: dict[str, tuple[str | None, str | None]] = {}
    seen: dict[tuple[str, str], int] = {}
    _expect(samples, list, "the samples", file=str(path))
    for k, sample in enumerate(samples):
        _expect(sample, dict, "each sample", file=str(path), record=f"sample #{k}")
        record = f"sample {sample.get('id', k)}"
        key_epoch = (str(sample.get("id", k)), str(sample.get("epoch", 1)))
        if key_epoch in seen:
            msg = (
                f"sample id {key_epoch[0]!r} appears twice for epoch {key_epoch[1]} (entries #{seen[key_epoch]} "
                            f"and #{k}); a log must hold each sample once per epoch"
            )
            raise DataError(msg, file=str(path), record=record)
        seen[key_epoch] = k
        if str(sample.get("id", k)).strip() == "":
            msg = "empty sample id"
            raise DataError(msg, file=str(path), record=f"sample #{k}", field="id")
        score = inspect_score(sample, record, metric, path)
        item = f"{task}:{sample.get('id', k)}"
        values.setdefault(item, []).append(score)  # epochs: averaged (inspect's default mean reducer)
        label = None
        if cluster is not None:
            label = (sample.get("metadata") or {}).get(cluster)
            if missing_label(label):
                msg = (f"no cluster field {cluster!r} in sample metadata" if label is None
                       else f"empty cluster label {label!r}")
                raise DataError(msg, file=str(path), record=record,
                                field=f"metadata.{cluster}")
        target = sample.get("target")
        meta[item] = (None if label is None else str(label), None if target is None else json.dumps(target))
    if not values:
        msg = "the log holds no samples"
        raise DataError(msg, file=str(path))
    for item, vals in values.items():
        yield Record(model, item, sum(vals) / len(vals), meta[item][0], meta[item][1], str(path))


def read_inspect(path: Path, *, metric: str | None = None, cluster: str | None = None) -> Iterator[Record]:
    """inspect_ai logs: ``.eval`` (zip: header.json + summaries.json or samples/*) or ``.json``."""
    samples, model, task = load_inspect_log(path)
    yield from _inspect_samples(samples, model, task, path, metric, cluster)


def load_inspect_log(path: Path) -> tuple[Any, str, str]:
    """(samples, model, task) of an inspect log, archives bounded by io.safe."""
    if path.suffix.lower() == ".eval":
        with ArchiveReader(path) as archive:
            names = archive.names()
            if "header.json" not in names:
                msg = "not an inspect .eval log (no header.json in the archive)"
                raise DataError(msg, file=str(path))
            header = _expect(archive.json("header.json"), dict, "header.json", file=f"{path}:header.json")
            if "summaries.json" in names:
                samples = archive.json("summaries.json")
            else:
                samples = [archive.json(n) for n in sorted(names) if n.startswith("samples/")]
    else:
        header = _expect(load_json_file(path), dict, "an inspect log", file=str(path))
        samples = header.get("samples") or []
    ev = header.get("eval") or {}
    _expect(ev, dict, "'eval'", file=str(path))
    return samples, str(ev.get("model", path.stem)), str(ev.get("task", path.stem))


# --- HELM ------------------------------------------------------------------------------------------

def read_helm(path: Path, *, metric: str | None = None, split: str = "test",
              cluster: str | None = None) -> Iterator[Record]:
    """HELM run folder: per_instance_stats.json (one split, default test), model from run_spec.json."""
    folder = path if path.is_dir() else path.parent
    stats_path = folder / "per_instance_stats.json"
    model, task = folder.name, folder.name
    spec_path = folder / "run_spec.json"
    if spec_path.exists():
        spec = _expect(load_json_file(spec_path), dict, "run_spec.json", file=str(spec_path))
        adapter = spec.get("adapter_spec") or {}
        model = str(adapter.get("model", model)) if isinstance(adapter, dict) else model
        task = str(spec.get("name", task)).split(",model=")[0]
    instances = _expect(load_json_file(stats_path), list, "per_instance_stats.json", file=str(stats_path))
    name = metric or "exact_match"
    values: dict[str, list[float]] = {}
    available: set[str] = set()
    for k, inst in enumerate(instances):
        _expect(inst, dict, "each instance", file=str(stats_path), record=f"instance #{k}")
        hit = None
        for stat in _expect(inst.get("stats", []), list, "'stats'", file=str(stats_path), record=f"instance #{k}"):
            if not isinstance(stat, dict):
                continue
            nm = stat.get("name") or {}
            if not isinstance(nm, dict):
                continue
            if nm.get("split") != split or "perturbation" in nm or nm.get("sub_split"):
                continue
            available.add(str(nm.get("name")))
            if nm.get("name") == name:
                hit = stat
        if hit is None:
            continue
        values.setdefault(f"{task}:{inst.get('instance_id', k)}", []).append(
            parse_score(hit.get("mean"), file=str(stats_path), record=f"instance {inst.get('instance_id', k)}",
                        field=f"{name}.mean"))
    if not values:
        if available:
            msg = f"no metric {name!r} on split {split!r}; available: {', '.join(sorted(map(repr, available)))}"
            raise DataError(msg,
                            file=str(stats_path))
        msg = f"no instances on split {split!r}"
        raise DataError(msg, file=str(stats_path))
    if cluster is not None:
        msg = "HELM per-instance stats carry no cluster labels; pass clusters another way"
        raise DataError(msg,
                        file=str(stats_path))
    for item, vals in values.items():  # several train trials: averaged
        yield Record(model, item, sum(vals) / len(vals), None, None, str(stats_path))


# --- lighteval -------------------------------------------------------------------------------------

def read_lighteval(path: Path, *, metric: str | None = None, cluster: str | None = None) -> Iterator[Record]:
    """Lighteval ``details_<task>|<fewshot>_<timestamp>.parquet`` (struct columns doc / metric)."""
    frame = read_parquet(path)
    if "metric" not in frame.columns or "doc" not in frame.columns:
        msg = f"not a lighteval details file (columns {list(frame.columns)}; expected doc, metric)"
        raise DataError(msg,
                        file=str(path))
    model = path.parent.parent.name if path.parent.parent.name not in ("", ".") else path.stem
    results = sorted(path.parent.glob("results_*.json")) + sorted(path.parent.parent.glob("results_*.json"))
    for cand in results:
        res = load_json_file(cand)
        general = res.get("config_general") if isinstance(res, dict) else None
        name = general.get("model_name") if isinstance(general, dict) else None
        if name:
            model = str(name)
            break
    for k in range(len(frame)):
        doc, met = frame["doc"].iloc[k], frame["metric"].iloc[k]
        record = f"row {k}"
        if not isinstance(met, dict) or not met:
            msg = "no per-item metric"
            raise DataError(msg, file=str(path), record=record, field="metric")
        name = metric or next(iter(met))
        if name not in met:
            msg = f"no metric {name!r}; available: {', '.join(map(repr, met))}"
            raise DataError(msg, file=str(path),
                            record=record, field="metric")
        task = str(doc.get("task_name", path.stem)) if isinstance(doc, dict) else path.stem
        ident = doc.get("id", k) if isinstance(doc, dict) else k
        label = None
        if cluster is not None:
            label = doc.get(cluster) if isinstance(doc, dict) else None
            if missing_label(label):
                msg = f"no cluster field {cluster!r} in doc" if label is None else f"empty cluster label {label!r}"
                raise DataError(msg, file=str(path), record=record,
                                field=f"doc.{cluster}")
        gold = doc.get("gold_index") if isinstance(doc, dict) else None
        yield Record(model, f"{task}:{ident}", parse_score(met[name], file=str(path), record=record,
                                                           field=f"metric.{name}"),
                     None if label is None else str(label), None if gold is None else str(gold), str(path))


# --- plain files -------------------------------------------------------------------------------------

def read_plain(path: Path, *, metric: str | None = None, cluster: str | None = None,
               model_column: str = "model", item_column: str | None = None) -> Iterator[Record]:
    """Plain CSV/TSV/JSONL/Parquet in one of three layouts.

    - long, several models: a ``model`` column, an item id and a score column;
    - one model per file: an item id and a score column named ``score``, ``correct``, ``acc``, ...
      (or ``metric``), other columns ignored; the model is named after the file (its stem);
    - wide: an item id and one column per model (every other column except ``cluster``).
    """
    from .plain import read_wide_matrix

    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            columns = [str(c) for c in pq.read_schema(path).names]  # the header only, not the table
        except (OSError, ValueError) as exc:
            msg = f"not readable as Parquet ({type(exc).__name__}: {str(exc)[:120]})"
            raise DataError(msg, file=str(path)) from None
        rows: Iterable[tuple[Any, dict[str, Any]]] = ()
    else:
        iterator = _records(path)
        first = next(iterator, None)
        if first is None:
            msg = "no records (empty file)"
            raise DataError(msg, file=str(path))
        columns = list(first[1].keys())
        rows = _chain_first(first, iterator)
    if model_column not in columns and model_column == "model":
        model_column = next((c for c in MODEL_COLUMNS if c in columns), model_column)
    if {"model_a", "model_b"} <= set(columns) and model_column not in columns:
        msg = ("looks like pairwise battles (model_a, model_b, winner), not per-item scores: diagnose and compare "
               "need each model's score on each item (pairwise preferences are not read yet)")
        raise DataError(msg, file=str(path))
    if model_column in columns:
        yield from _read_long(path, rows, columns, metric=metric, cluster=cluster, model_column=model_column,
                              item_column=item_column)
        return
    score_col = metric if metric in columns else (
        next((c for c in SCORE_COLUMNS if c in columns), None) if metric is None else None)
    if metric is not None and score_col is None and path.suffix.lower() != ".parquet":
        msg = f"no score column {metric!r}; columns are {', '.join(map(repr, columns))}"
        raise DataError(msg, file=str(path))
    if score_col is not None and path.suffix.lower() != ".parquet":  # one model per file
        from .plain import read_item_scores

        one = read_item_scores(path, item_column=item_column, score_column=score_col, cluster_column=cluster,
                               cluster_required=False)
        for i, item in enumerate(one.items):
            name = Path(path.stem).stem if path.suffix.lower() == ".gz" else path.stem  # a.csv.gz -> a
            yield Record(name, item, float(one.scores[i]), None if one.clusters is None else one.clusters[i],
                         None, str(path))
        return
    items, names, values, clusters = read_wide_matrix(path, cluster_column=cluster, item_column=item_column)
    for j, name in enumerate(names):
        for i, item in enumerate(items):
            if math.isnan(values[i, j]):  # an empty cell: the model lacks the item (see on_missing)
                continue
            yield Record(name, item, float(values[i, j]), None if clusters is None else clusters[i], None, str(path))


def _read_long(path: Path, rows: Iterable[tuple[Any, dict[str, Any]]], columns: list[str], *, metric: str | None,
               cluster: str | None, model_column: str, item_column: str | None) -> Iterator[Record]:
    """Records of a long table: a model column, an item id and a score column per row."""
    item_col = item_column if item_column in columns else next((c for c in ITEM_COLUMNS if c in columns), None)
    score_col = metric or next((c for c in SCORE_COLUMNS if c in columns), None)
    listed = ", ".join(map(repr, columns))
    if item_column is not None and item_column not in columns:
        msg = f"no item id column {item_column!r}; columns are {listed}"
        raise DataError(msg, file=str(path))
    if item_col is None:
        msg = f"cannot tell which column is the item id; columns are {listed} (choose one with `item_column`)"
        raise DataError(msg, file=str(path))
    if score_col is None or score_col not in columns:
        msg = (f"no score column {metric!r}; columns are {listed}" if metric else
               f"cannot tell which column is the score; columns are {listed} (choose one with `metric`)")
        raise DataError(msg, file=str(path))
    if path.suffix.lower() == ".parquet":
        frame = read_parquet(path)
        rows = ((k, {c: frame[c].iloc[k] for c in frame.columns}) for k in range(len(frame)))
    unit = "row" if path.suffix.lower() == ".parquet" else "line"
    for recno, rec in rows:
        where = f"{unit} {recno}"
        if cluster is not None and missing_label(rec.get(cluster)):
            msg = "missing cluster label"
            raise DataError(msg, file=str(path), record=where, field=cluster)
        for col in (model_column, item_col):
            value = rec.get(col)
            if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
                msg = f"missing or empty {'model name' if col == model_column else 'item id'}"
                raise DataError(msg, file=str(path), record=where, field=col)
        yield Record(str(rec[model_column]), str(rec[item_col]),
                     parse_score(rec.get(score_col), file=str(path), record=where, field=score_col),
                     None if cluster is None else str(rec[cluster]), None, str(path))


def _chain_first(first: tuple[Any, ...], rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


# --- entry point -------------------------------------------------------------------------------------

def iter_records(path: Path, *, format: str = "auto", metric: str | None = None, cluster: str | None = None,
                 split: str = "test", filter_name: str | None = None,
                 item_column: str | None = None) -> Iterator[Record]:
    """Records of one file or run folder."""
    fmt = detect_format(path) if format == "auto" else format
    if fmt == "lm_eval":
        return read_lm_eval(path, metric=metric, filter_name=filter_name, cluster=cluster)
    if fmt == "inspect":
        return read_inspect(path, metric=metric, cluster=cluster)
    if fmt == "helm":
        return read_helm(path, metric=metric, split=split, cluster=cluster)
    if fmt == "lighteval":
        return read_lighteval(path, metric=metric, cluster=cluster)
    return read_plain(path, metric=metric, cluster=cluster, item_column=item_column)


#: read files in parallel processes when there are at least this many bytes to read (below it,
#: starting the processes costs more than it saves)
PARALLEL_MIN_BYTES = 64 << 20


def _read_parts(files: list[Path], options: dict[str, Any]) -> Iterator[Any]:
    """One DataFrame (or None) per file, in order: in parallel processes for large inputs, with a
    bounded number of parts in flight (the parent folds each into the table as it arrives).
    """
    import os
    from collections import deque

    from .._core.progress import advance

    sizes = [p.stat().st_size if p.is_file() else 0 for p in files]
    workers = min(os.cpu_count() or 1, len(files))
    if workers < 2 or sum(sizes) < PARALLEL_MIN_BYTES:
        for k, path in enumerate(files, start=1):
            yield read_part(path, options)
            advance("files read", k, len(files))
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: deque[Any] = deque()
        queue = iter(files)
        for path in queue:
            pending.append(pool.submit(read_part, path, options))
            if len(pending) >= 4 * workers:
                break
        done = 0
        while pending:
            part = pending.popleft().result()  # in file order; a worker's DataError is raised here
            nxt = next(queue, None)
            if nxt is not None:
                pending.append(pool.submit(read_part, nxt, options))
            done += 1
            advance("files read", done, len(files))
            yield part


def read_part(path: Path, options: dict[str, Any]) -> Any:
    """The long table of one file (None when it has no rows): columnar when possible."""
    import numpy as np
    import pandas as pd

    cluster = options["cluster"]
    columns = _columns_fast(path, format=options["format"], metric=options["metric"], cluster=cluster,
                            filter_name=options["filter"])
    if columns is None:  # the line-by-line readers (and their exact error messages)
        rows = list(iter_records(path, format=options["format"], metric=options["metric"], cluster=cluster,
                                 split=options["split"], filter_name=options["filter"],
                                 item_column=options["item_column"]))
        columns = {"model": [r.model for r in rows], "item": [r.item for r in rows],
                   "score": [r.score for r in rows], "cluster": [r.cluster for r in rows],
                   "target": [r.target for r in rows], "source": [r.source for r in rows]}
    n = len(columns["score"])
    if not n:
        return None
    part = pd.DataFrame({"model": _categorical(columns["model"], n), "item": _categorical(columns["item"], n),
                         "score": np.asarray(columns["score"], dtype=float)})
    if cluster is not None:
        part["cluster"] = _categorical(columns["cluster"], n)
    part["target"] = _categorical(columns["target"], n)
    part["source"] = _categorical(columns["source"], n)
    return part


def _categorical(values: Any, n: int) -> Any:
    """A column as a pandas Categorical: integer codes and each distinct value once (a file's model
    name and source are one value; its items, targets and labels repeat across files), so that the
    long table of 12 million rows is a few hundred MB, not several GB of Python strings.
    """
    import numpy as np
    import pandas as pd

    categorical: Any = pd.Categorical
    if isinstance(values, str) or values is None:  # one value for the whole file (None: missing)
        codes = np.full(n, -1 if values is None else 0, dtype=np.int8)
        return categorical.from_codes(codes, categories=[] if values is None else [values])
    return categorical(np.asarray(values, dtype=object) if isinstance(values, list) else values)


def concat_parts(parts: Iterable[Any]) -> Any:
    """One long table from the parts of several files (None parts skipped), folded in as they come:
    each categorical column becomes codes against one growing list of values (a value seen in
    many files — an item id, a target — is stored once), the others are concatenated. None when
    there is no part.
    """
    import numpy as np
    import pandas as pd

    values: dict[str, Any] = {}  # column -> pd.Index of its distinct values so far
    chunks: dict[str, list[np.ndarray]] = {}
    columns: list[str] = []
    for part in parts:
        if part is None:
            continue
        if not columns:
            columns = list(part.columns)
        for col in columns:
            data = part[col]
            if isinstance(data.dtype, pd.CategoricalDtype):
                cats = data.cat.categories
                known = values.get(col)
                if known is None:
                    known = values[col] = pd.Index(cats, dtype=object)
                where = known.get_indexer(cats)
                if (where < 0).any():  # new values: appended (a new index; rare after the first file)
                    known = values[col] = known.append(pd.Index(cats[where < 0], dtype=object))
                    where = known.get_indexer(cats)
                codes = data.cat.codes.to_numpy()
                mapped = np.full(codes.shape, -1, dtype=np.int32)  # -1: a missing value stays missing
                mapped[codes >= 0] = where[codes[codes >= 0]]
                chunks.setdefault(col, []).append(mapped)
            else:
                chunks.setdefault(col, []).append(data.to_numpy())
    if not columns:
        return None
    out = {}
    for col in columns:
        data = np.concatenate(chunks.pop(col))
        out[col] = pd.Categorical.from_codes(data, categories=values[col]) if col in values else data
    return pd.DataFrame(out)


def _columns_fast(path: Path, *, format: str, metric: str | None, cluster: str | None,
                  filter_name: str | None) -> dict[str, Any] | None:
    """The columns of a clean lm-eval samples file by the columnar reader, else None."""
    if not path.is_file() or (format == "auto" and not LM_EVAL_SAMPLES.match(path.name)) or format not in (
            "auto", "lm_eval"):
        return None
    from .columnar import lm_eval_columns

    match = LM_EVAL_SAMPLES.match(path.name)
    task, date = (match.group("task"), match.group("date")) if match else (path.stem, "")
    return lm_eval_columns(path, task=task, model=_lm_eval_model(path, date), metric=metric,
                           filter_name=filter_name, cluster=cluster)


def read_wide_table(path: Path, *, format: str = "auto", metric: str | None = None, cluster: str | None = None,
                    item_column: str | None = None) -> tuple[list[str], list[str], np.ndarray, list[str] | None] | None:
    """``(items, models, matrix, clusters)`` when ``path`` is a plain wide table (an item column and
    one column per model), read straight into the matrix (NaN where a cell is empty); None for any
    other layout or format (read those with :func:`read_results`). The same reader, checks and
    errors as :func:`read_results` uses for a wide table, without a row per (model, item).
    """
    fmt = detect_format(path) if format == "auto" else format
    if fmt not in ("csv", "parquet") or metric is not None:
        return None
    columns = _plain_columns(path)
    if columns is None or any(c in columns for c in MODEL_COLUMNS) or {"model_a", "model_b"} <= set(columns):
        return None
    if path.suffix.lower() != ".parquet" and any(c in columns for c in SCORE_COLUMNS):
        return None  # one model per file
    from .plain import read_wide_matrix

    return read_wide_matrix(path, cluster_column=cluster, item_column=item_column)


def _plain_columns(path: Path) -> list[str] | None:
    """The header of a plain table (None when it cannot be read: the long path reports why)."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            return [str(c) for c in pq.read_schema(path).names]
        first = next(_records(path), None)
    except (DataError, OSError, ValueError):
        return None
    return None if first is None else list(first[1].keys())


def read_results(
    paths: str | Path | Sequence[str | Path],
    *,
    format: str = "auto",
    metric: str | None = None,
    cluster: str | None = None,
    split: str = "test",
    filter: str | None = None,  # noqa: A002 - lm-eval's own word
    item_column: str | None = None,
) -> pd.DataFrame:
    r"""Read per-item results of one or more models into a long DataFrame.

    Parameters
    ----------
    paths : path or sequence of paths
        Files or folders: lm-evaluation-harness ``samples_*.jsonl`` (model name from the
        neighbouring ``results_*.json`` or the folder), inspect_ai ``.eval`` / ``.json`` logs,
        HELM run folders (``per_instance_stats.json``), lighteval ``details_*.parquet``, or plain
        CSV/TSV/JSONL/Parquet in long (``model, item, score[, cluster]``) or wide form. Folders
        are searched recursively.
    format : str, default "auto"
        ``"auto"`` (by name and content), ``"lm_eval"``, ``"inspect"``, ``"helm"``,
        ``"lighteval"``, ``"csv"`` or ``"parquet"``.
    metric : str, optional
        Per-item metric: lm-eval key (default: the first of the record's ``metrics``), inspect
        scorer (default: the first; ``scorer.key`` for dict values), HELM stat name (default
        ``exact_match``), lighteval metric (default: the first), plain score column. An unknown
        name is an error listing the available ones.
    cluster : str, optional
        Cluster label field: lm-eval ``doc.<field>``, inspect ``metadata.<field>``, lighteval
        ``doc.<field>``, or a column of a plain file.
    split : str, default "test"
        HELM split to keep (HELM mixes splits in one file).
    filter : str, optional
        lm-eval filter (``"strict-match"``, ...) when a task wrote several per doc.
    item_column : str, optional
        Item id column of plain files (default: the first of ``item, item_id, id, doc_id, ...``).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, score`` (and ``cluster``), plus ``target`` where the format has one
        (used to check that models were scored against the same answers) and ``source``.
        Inspect's C/I/P/N become 1/0/0.5/0; several epochs or train trials are averaged.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from llm_power import read_results
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "scores.csv").write_text("model,item,score\nA,q1,1\nA,q2,0\nB,q1,1\nB,q2,1\n")
    >>> df = read_results(folder / "scores.csv")
    >>> df.groupby("model")["score"].mean().to_dict()
    {'A': 0.5, 'B': 1.0}
    """
    import pandas as pd

    frame = read_frame(paths, format=format, metric=metric, cluster=cluster, split=split, filter=filter,
                       item_column=item_column)
    return cast("pd.DataFrame", frame.astype({c: object for c in frame.columns
                                              if isinstance(frame[c].dtype, pd.CategoricalDtype)}))


def read_frame(paths: str | Path | Sequence[str | Path], *, format: str = "auto", metric: str | None = None,  # noqa: A002
               cluster: str | None = None, split: str = "test", filter: str | None = None,  # noqa: A002
               item_column: str | None = None) -> pd.DataFrame:
    """:func:`read_results` with its text columns (model, item, cluster, target, source) kept as
    pandas Categoricals: what diagnose and compare align, at a fraction of the memory.
    """
    import numpy as np

    from .._core.validation import check_option

    format = check_option(format, "format", FORMATS)
    if isinstance(paths, (str, Path)):
        paths = [paths]
    options = {"format": format, "metric": metric, "cluster": cluster, "split": split, "filter": filter,
               "item_column": item_column}
    files = expand_paths(paths)
    frame = concat_parts(_read_parts(files, options))
    if frame is None:
        msg = "no per-item results found"
        raise DataError(msg)
    if not np.isfinite(frame["score"].to_numpy()).all():  # pragma: no cover - parse_score guarantees
        msg = "non-finite score"
        raise DataError(msg)
    return cast("pd.DataFrame", frame)
