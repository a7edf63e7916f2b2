"""What a reading command asked of the readers, typed: :class:`ReaderOptions` is read from the parsed
arguments once (:meth:`ReaderOptions.from_args`) and handed to the loaders, which never look at the
argparse namespace (a command that reads other files -- gate's ``--data``, ``--demo`` -- replaces a
field instead of building a namespace of its own).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

__all__ = ["ReaderOptions"]


@dataclass(frozen=True)
class ReaderOptions:
    """The reader flags of a command: the files, the format and columns, the split and filter of a
    harness's records, what to do about missing items, the run field, and which models (in order).
    """

    paths: tuple[str, ...]
    input_format: str = "auto"
    metric: str | None = None
    id_column: str | None = None
    cluster: str | None = None
    split: str = "test"
    filter: str | None = None
    on_missing: str = "error"
    run_field: str | None = None
    models: tuple[str, ...] | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, paths: str = "results") -> ReaderOptions:
        """The options of a parsed command (``paths``: the namespace field of its files); a flag a command
        does not have takes the default.
        """
        def get(name: str, default: Any = None) -> Any:
            return getattr(args, name, default)

        models = get("models")
        return cls(paths=tuple(str(p) for p in (get(paths) or ())), input_format=get("input_format", "auto") or "auto",
                   metric=get("metric"), id_column=get("id_column"), cluster=get("cluster"),
                   split=get("split", "test") or "test", filter=get("filter"),
                   on_missing=get("on_missing", "error") or "error", run_field=get("run_field"),
                   models=None if models is None else tuple(models))

    def read_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`llm_power.io.read_results` these options give."""
        return {"format": self.input_format, "metric": self.metric, "cluster": self.cluster, "split": self.split,
                "filter": self.filter, "item_column": self.id_column}
