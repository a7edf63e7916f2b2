"""inspect_ai logs (``.eval`` archives and ``.json``): one score per sample, C/I/P/N as 1/0/0.5/0,
epochs averaged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..._core.errors import DataError
from ..._core.labels import missing_label
from ..plain import parse_score, plain_suffix
from ..records import Format, Record, SampleOptions, SampleReader, expect
from ..safe import ArchiveReader, load_json_file, peek_json, regular_files

INSPECT_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


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
    expect(scores, dict, "'scores'", file=str(path), record=record)
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
    expect(samples, list, "the samples", file=str(path))
    for k, sample in enumerate(samples):
        expect(sample, dict, "each sample", file=str(path), record=f"sample #{k}")
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
            header = expect(archive.json("header.json"), dict, "header.json", file=f"{path}:header.json")
            if "summaries.json" in names:
                samples = archive.json("summaries.json")
            else:
                samples = [archive.json(n) for n in sorted(names) if n.startswith("samples/")]
    else:
        header = expect(load_json_file(path, take=True), dict, "an inspect log", file=str(path))
        samples = header.get("samples") or []
    ev = header.get("eval") or {}
    expect(ev, dict, "'eval'", file=str(path))
    return samples, str(ev.get("model", path.stem)), str(ev.get("task", path.stem))


def _json_head(path: Path) -> set[str] | None:
    """The top-level keys of a JSON object file (None when it is not one, or not JSON)."""
    data = peek_json(path)
    return set(data) if isinstance(data, dict) else None


def _claims(path: Path) -> bool:
    if not path.is_file():
        return False
    if path.suffix.lower() == ".eval":
        return True
    if path.suffix.lower() == ".json" or (path.suffix.lower() == ".gz" and plain_suffix(path) == ".json"):
        head = _json_head(path)
        return head is not None and ({"eval", "samples"} <= head or {"version", "eval"} <= head)
    return False


def _finds(folder: Path) -> list[tuple[int, Path]]:
    logs = [(0, p) for p in regular_files(folder, "*", lambda p: p.suffix.lower() == ".eval")]
    for p in regular_files(folder, "*.json", lambda p: p.name != "per_instance_stats.json"
                           and not p.name.startswith("results_") and p.parent.name != "_journal"):
        head = _json_head(p)
        if head is not None and {"eval", "samples"} <= head:
            logs.append((2, p))
    return logs


FORMATS = (Format(
    name="inspect", summary="inspect .eval/.json", order=20,
    read=lambda path, o: read_inspect(path, metric=o.metric, cluster=o.cluster),
    claims=_claims, finds=_finds, patterns=("*.eval",)),)


# ---- repeated samples (passk): every epoch of every sample ------------------------------------------------

def read_inspect_samples(path: Path, options: SampleOptions) -> Iterator[dict[str, Any]]:
    """One row per sample *and epoch* (``metric`` = scorer or scorer.key; ``cluster`` = a metadata key)."""
    metric, cluster = options.metric, options.cluster
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


def _claims_samples(path: Path) -> bool:
    if path.suffix.lower() == ".eval":
        return True
    if path.suffix.lower() != ".json":
        return False
    data = peek_json(path)
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


SAMPLES = (SampleReader("inspect", "inspect .eval/.json logs", read_inspect_samples, _claims_samples, order=10,
                        finds=lambda folder: regular_files(folder, "*.eval")),)
