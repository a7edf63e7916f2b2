"""lighteval ``details_*.parquet``: one row per item, metrics in a dict column."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..._core.errors import DataError
from ..._core.labels import missing_label
from ..plain import parse_score
from ..records import Format, Record
from ..safe import load_json_file, read_parquet, regular_files


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


def _is_details(path: Path) -> bool:
    return path.name.startswith("details_") and path.suffix.lower() == ".parquet"


def _companions(path: Path) -> list[Path]:
    if not _is_details(path):
        return []
    return sorted(path.parent.glob("results_*.json")) + sorted(path.parent.parent.glob("results_*.json"))


FORMATS = (Format(
    name="lighteval", summary="lighteval details_*.parquet", order=40,
    read=lambda path, o: read_lighteval(path, metric=o.metric, cluster=o.cluster),
    claims=lambda path: path.is_file() and _is_details(path),
    finds=lambda folder: [(0, p) for p in regular_files(folder, "details_*", _is_details)],
    companions=_companions, patterns=("details_*.parquet",)),)
