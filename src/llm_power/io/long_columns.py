"""Long tables read as columns: the ids, scores and labels of many rows at once, by the rules the
record readers apply to one value (:func:`~llm_power.io.plain.id_text`,
:func:`~llm_power.io.plain.parse_score`, :func:`~llm_power._core.labels.missing_label`), each rule
run once per distinct value.

Two users: the local reader's fast path for long Parquet files (a row-by-row read of a 300,000-row
file took 46 s; the columns take a fraction of a second), which steps aside whenever a value is not
clean so that the record reader reports the exact file, row and field; and the table engines
(:mod:`llm_power.engines.contract`), which ask the local reader for that error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .._core.errors import DataError

__all__ = ["id_texts", "label_texts", "long_parquet_columns", "score_values"]


def id_texts(values: Any, field: str) -> tuple[Any, np.ndarray]:
    """Ids as text (a pandas Categorical) and the rows whose value :func:`id_text` refuses or that are
    null or blank (the record reader's "missing or empty" error).
    """
    import pandas as pd

    from .plain import id_text

    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    bad = codes < 0
    texts: list[str] = []
    for k, value in enumerate(uniques):
        try:
            text = id_text(value, file="", record="", field=field)
        except DataError:
            text = ""
        if text.strip() == "" or (isinstance(value, float) and math.isnan(value)):
            bad |= codes == k
        texts.append(text)
    array = np.asarray(texts, dtype=object)
    if len(set(texts)) == len(texts):
        return pd.Categorical.from_codes(np.where(bad, -1, codes), categories=pd.Index(array)), bad
    texts_of_rows: Any = array[np.maximum(codes, 0)]
    texts_of_rows[bad] = None
    return pd.Categorical(texts_of_rows), bad


def score_values(values: Any, field: str) -> tuple[np.ndarray, np.ndarray]:
    """Scores as floats by :func:`parse_score` (numbers, booleans, numeric text; each distinct text
    parsed once) and the rows whose value it refuses (null, empty, not a number, not finite).
    """
    import pandas as pd

    from .plain import parse_score

    array = np.asarray(values)
    if array.dtype.kind in "biuf":
        out = array.astype(float)
        return out, ~np.isfinite(out)
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    parsed = np.zeros(len(uniques) + 1)
    bad = codes < 0
    for k, value in enumerate(uniques):
        try:
            parsed[k] = parse_score(value, file="", record="", field=field)
        except DataError:
            bad |= codes == k
    return parsed[codes], bad


def label_texts(values: Any) -> tuple[Any, np.ndarray]:
    """Cluster labels as text (a Categorical) and the rows without one (:func:`missing_label`)."""
    import pandas as pd

    from .._core.labels import missing_label

    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    bad = codes < 0
    for k, value in enumerate(uniques):
        if missing_label(value):
            bad |= codes == k
    text = np.asarray([str(v) for v in uniques], dtype=object)
    if len(set(text.tolist())) == len(text):
        return pd.Categorical.from_codes(np.where(bad, -1, codes), categories=pd.Index(text)), bad
    labels_of_rows: Any = text[np.maximum(codes, 0)]
    labels_of_rows[bad] = None
    return pd.Categorical(labels_of_rows), bad


def long_parquet_columns(path: Path, *, metric: str | None, cluster: str | None,
                         item_column: str | None) -> dict[str, Any] | None:
    """``model, item, score[, cluster], target, source`` of a clean long Parquet table read as
    columns, or None when the record reader must read it (another layout, or a value it would refuse:
    it then names the row and field).
    """
    from .plain import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS
    from .safe import parquet_columns

    if path.suffix.lower() != ".parquet":
        return None
    columns = parquet_columns(path)
    model = next((c for c in ("model", *MODEL_COLUMNS) if c in columns), None)
    item = item_column if item_column in columns else next((c for c in ITEM_COLUMNS if c in columns), None)
    score = metric or next((c for c in SCORE_COLUMNS if c in columns), None)
    if model is None or item is None or score not in columns or (item_column is not None and item != item_column) \
            or (cluster is not None and cluster not in columns):
        return None
    from .safe import read_parquet

    frame = read_parquet(path, columns=[c for c in dict.fromkeys((model, item, score, cluster)) if c is not None])
    models, bad_model = id_texts(frame[model], model)
    items, bad_item = id_texts(frame[item], item)
    scores, bad_score = score_values(frame[score], score)
    bad = bad_model | bad_item | bad_score
    out: dict[str, Any] = {"model": models, "item": items, "score": scores}
    if cluster is not None:
        out["cluster"], bad_label = label_texts(frame[cluster])
        bad |= bad_label
    if bad.any():
        return None
    out["target"] = None
    out["source"] = str(path)
    return out
