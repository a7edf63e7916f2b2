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

__all__ = ["LLMPowerAccessor", "register"]

_REGISTERED = False


class LLMPowerAccessor:
    """The ``llm_power`` accessor of a long DataFrame (one row per model and item)."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def _long(self, model: str | None, item: str | None, score: str | None, cluster: str | None) -> Any:
        import pandas as pd

        from ..errors import DataError
        from .plain import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, parse_score

        frame = self._frame
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

    def matrix(self, *, model: str | None = None, item: str | None = None, score: str | None = None,
               cluster: str | None = None, on_missing: str = "error") -> Any:
        """The aligned items x models matrix (:class:`llm_power.io.Aligned`), as ``align_results`` makes it."""
        from .align import align_results

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
        from ..comparison import compare
        from ..errors import DataError

        long = self._long(model, item, score, cluster)
        found = sorted(set(long["model"]))
        missing = [m for m in (a, b) if m not in found]
        if missing:
            msg = f"no model {missing[0]!r} in the DataFrame; models: {', '.join(map(repr, found[:8]))}"
            raise DataError(msg)
        from .align import align_results

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
