"""HELM run folders: ``per_instance_stats.json`` (one split), the model from ``run_spec.json``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..._core.errors import DataError
from ..plain import parse_score
from ..records import Format, Record, expect
from ..safe import is_regular, load_json_file, regular_files


def read_helm(path: Path, *, metric: str | None = None, split: str = "test",
              cluster: str | None = None) -> Iterator[Record]:
    """HELM run folder: per_instance_stats.json (one split, default test), model from run_spec.json."""
    folder = path if path.is_dir() else path.parent
    stats_path = folder / "per_instance_stats.json"
    model, task = folder.name, folder.name
    spec_path = folder / "run_spec.json"
    if is_regular(spec_path):  # absent: the folder's name; a FIFO or a device: an error
        spec = expect(load_json_file(spec_path), dict, "run_spec.json", file=str(spec_path))
        adapter = spec.get("adapter_spec") or {}
        model = str(adapter.get("model", model)) if isinstance(adapter, dict) else model
        task = str(spec.get("name", task)).split(",model=")[0]
    instances = expect(load_json_file(stats_path), list, "per_instance_stats.json", file=str(stats_path))
    name = metric or "exact_match"
    values: dict[str, list[float]] = {}
    available: set[str] = set()
    for k, inst in enumerate(instances):
        expect(inst, dict, "each instance", file=str(stats_path), record=f"instance #{k}")
        hit = None
        for stat in expect(inst.get("stats", []), list, "'stats'", file=str(stats_path), record=f"instance #{k}"):
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


def _claims(path: Path) -> bool:
    return (path.is_dir() and (path / "per_instance_stats.json").exists()) or path.name == "per_instance_stats.json"


def _finds(folder: Path) -> list[tuple[int, Path]]:
    return [(1, p.parent) for p in regular_files(folder, "per_instance_stats.json")]


def _companions(path: Path) -> list[Path]:
    if path.is_dir():
        return [path / "run_spec.json", path / "per_instance_stats.json"]
    return [path.parent / "run_spec.json"] if path.name == "per_instance_stats.json" else []


FORMATS = (Format(
    name="helm", summary="HELM per_instance_stats.json", order=30,
    read=lambda path, o: read_helm(path, metric=o.metric, split=o.split, cluster=o.cluster),
    claims=_claims, finds=_finds, companions=_companions, folder_marker="per_instance_stats.json"),)
