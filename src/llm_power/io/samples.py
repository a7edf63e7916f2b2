"""Read repeated samples per question — one 0/1 score per sample, nothing averaged away — from
inspect logs with ``epochs > 1``, EvalPlus ``*_eval_results.json``, SWE-bench run reports
(several runs of a model = several samples) and plain long tables (``model, item, sample, score``).

The result is a long pandas table ``model, item, sample, score`` (+ ``cluster``), from which
:func:`sample_matrices` builds each model's questions x samples matrix for
:func:`llm_power.pass_at_k_ci`. Errors name the file, the record and the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .._core.errors import DataError
from .._core.files import OUT_OF_MEMORY
from .safe import parse_once

__all__ = ["read_samples", "sample_matrices"]

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
    from .formats import samples_by_order
    from .records import SampleOptions

    universe = None if instances is None else _instance_ids(instances)
    options = SampleOptions(metric=metric, cluster=cluster, instances=universe)
    readers = samples_by_order()
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for raw in items:
        path = Path(raw)
        if path.is_dir():  # each reader's files in the folder, else what the per-item search finds
            found = sorted({hit for reader in readers for hit in reader.finds(path)})
            files += found or expand_paths([path])
        else:
            if not path.exists():
                msg = "file not found"
                raise DataError(msg, file=str(path))
            files.append(path)
    rows: list[dict[str, Any]] = []
    ends: list[int] = []  # where each file's rows end (a duplicate names its files)
    for path in files:
        reader = next((r for r in readers if r.claims(path)), None)
        if reader is None:
            known = "; ".join(r.summary for r in readers)
            msg = f"not a samples file (known: {known})"
            raise DataError(msg, file=str(path))
        try:
            rows.extend(reader.read(path, options))
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
