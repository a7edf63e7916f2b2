"""``df.llm_power``: diagnose and compare straight from a long pandas DataFrame.

Registered as a pandas DataFrame accessor when pandas is imported — at ``import llm_power`` if
pandas is already loaded, else the moment pandas is first imported (``import llm_power`` itself
never imports pandas). A long frame has one row per (model, item): the columns are found by the
names ``read_results`` uses (``model``/``model_name``/``system``; ``item``/``id``/``sample_id``/...;
``score``/``correct``/``acc``/...) or named explicitly — inspect's ``samples_df()`` needs
``score="score_<scorer>"``.

>>> import pandas as pd
>>> import llm_power  # registers the accessor
>>> df = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "item": ["q1", "q2", "q3", "q4"] * 2,
...                    "score": [1, 0, 1, 1, 1, 1, 1, 1]})
>>> df.llm_power.matrix().scores.tolist()
[[1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LLMPowerAccessor", "register"]

_REGISTERED = False


class LLMPowerAccessor:
    """The ``llm_power`` accessor of a DataFrame: long (one row per model and item) or wide (one row
    per item, one numeric column per model; text columns are labels, usable as ``cluster``).
    """

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def _long(self, model: str | None, item: str | None, score: str | None, cluster: str | None) -> Any:
        import pandas as pd

        from .._core.errors import DataError
        from ..io.plain import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, parse_score

        frame = self._frame
        if model is None and score is None and not any(c in frame.columns for c in MODEL_COLUMNS):
            wide = self._wide(item, cluster)
            if wide is not None:
                return wide
        chosen = {}
        for role, given, names in (("model", model, MODEL_COLUMNS), ("item", item, ITEM_COLUMNS),
                                   ("score", score, SCORE_COLUMNS)):
            col = given if given is not None else next((c for c in names if c in frame.columns), None)
            if col is None or col not in frame.columns:
                wanted = repr(given) if given is not None else f"one of {', '.join(names)}"
                msg = (f"the DataFrame has no {role} column ({wanted}); columns: "
                       f"{', '.join(map(str, list(frame.columns)[:12]))}; name it with {role}=")
                raise DataError(msg)
            chosen[role] = col
        if cluster is not None and cluster not in frame.columns:
            msg = f"the DataFrame has no cluster column {cluster!r}"
            raise DataError(msg)
        values = frame[chosen["score"]]
        if values.dtype.kind not in "biuf":  # inspect's "C"/"I", booleans, numeric strings
            values = [parse_score(v, file="DataFrame", record=k, field=chosen["score"])
                      for k, v in zip(frame.index, values, strict=True)]
        long = pd.DataFrame({"model": frame[chosen["model"]].astype(str).to_numpy(),
                             "item": frame[chosen["item"]].to_numpy(), "score": values,
                             "source": "DataFrame"})
        if cluster is not None:
            long["cluster"] = frame[cluster].to_numpy()
        return long

    def _wide(self, item: str | None, cluster: str | None) -> Any:
        """A wide frame (one row per item, one numeric column per model) as the long frame, or None.

        The item id is the ``item`` column (or one of the usual names), else the index; text
        columns are labels (one note), usable as ``cluster``.
        """
        import pandas as pd

        from ..io.plain import ITEM_COLUMNS, label_columns_note

        frame = self._frame
        item_col = item if item is not None else next((c for c in ITEM_COLUMNS if c in frame.columns), None)
        rest = [c for c in frame.columns if c not in (item_col, cluster)]
        from ..io.plain import is_score_like, is_text, parse_score

        # a text column is a label; one with any number in it is a model (its odd cells are errors)
        labels = [c for c in rest if frame[c].dtype.kind not in "biuf" and frame[c].map(is_text).any()
                  and not frame[c].map(is_score_like).any()]
        numeric = [c for c in rest if c not in labels]
        if not any(frame[c].dtype.kind in "biuf" for c in numeric):
            return None  # no numeric column: not a wide frame (the long reader says what is missing)
        label_columns_note([str(c) for c in labels], [frame[c].dropna().iloc[0] if frame[c].notna().any() else ""
                                                      for c in labels])
        ids = frame[item_col].to_numpy() if item_col is not None else frame.index.to_numpy()
        n = len(frame)
        long = pd.DataFrame({"model": pd.Series([str(c) for c in numeric]).repeat(n).to_numpy(),
                             "item": np.tile(ids, len(numeric)),
                             "score": np.concatenate([frame[c].to_numpy(dtype=float) if frame[c].dtype.kind in "biuf"
                                                      else [parse_score(v, file="DataFrame", record=k, field=str(c),
                                                                        missing_ok=True)
                                                            for k, v in zip(frame.index, frame[c], strict=True)]
                                                      for c in numeric]),
                             "source": "DataFrame"})
        if cluster is not None:
            long["cluster"] = np.tile(frame[cluster].to_numpy(), len(numeric))
        return long

    def matrix(self, *, model: str | None = None, item: str | None = None, score: str | None = None,
               cluster: str | None = None, on_missing: str = "error") -> Any:
        """The aligned items x models matrix (a :class:`~llm_power.ScoreMatrix`), as ``align_results`` makes it."""
        from ..io.align import align_results

        return align_results(self._long(model, item, score, cluster), on_missing=on_missing)

    def diagnose(self, *, model: str | None = None, item: str | None = None, score: str | None = None,
                 cluster: str | None = None, on_missing: str = "error", **options: Any) -> Any:
        """:func:`llm_power.diagnose` of every model in the frame (``options``: its keyword arguments)."""
        from ..resolution import diagnose

        aligned = self.matrix(model=model, item=item, score=score, cluster=cluster, on_missing=on_missing)
        return diagnose(aligned.scores, models=aligned.models, cluster=aligned.clusters, **options)

    def compare(self, a: str, b: str, *, model: str | None = None, item: str | None = None,
                score: str | None = None, cluster: str | None = None, on_missing: str = "error",
                **options: Any) -> Any:
        """:func:`llm_power.compare` of models ``a`` and ``b`` on their shared items."""
        from .._core.errors import DataError
        from ..paired import compare

        long = self._long(model, item, score, cluster)
        found = sorted(set(long["model"]))
        missing = [m for m in (a, b) if m not in found]
        if missing:
            msg = f"no model {missing[0]!r} in the DataFrame; models: {', '.join(map(repr, found[:8]))}"
            raise DataError(msg)
        from ..io.align import align_results

        aligned = align_results(long[long["model"].isin([a, b])], on_missing=on_missing)
        x = aligned.scores
        ia, ib = aligned.models.index(a), aligned.models.index(b)
        return compare(x[:, ia], x[:, ib], cluster=aligned.clusters, **options)


def register() -> None:
    """Register ``DataFrame.llm_power`` (once)."""
    global _REGISTERED  # noqa: PLW0603 - registration is once per process
    if _REGISTERED:
        return
    import pandas as pd

    pd.api.extensions.register_dataframe_accessor("llm_power")(LLMPowerAccessor)
    _REGISTERED = True
