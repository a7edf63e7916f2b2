"""The JSON documents the package writes, declared once: their schema version, what every document
carries at the top level, and how a verdict states what it is about.

Every ``--format json`` (and ``--json FILE``) document of the command line carries, beside its own
keys:

- ``schema_version`` (:data:`SCHEMA_VERSION`): the version of the shipped JSON Schemas the document
  validates against (``llm_power/schemas/<command>.schema.json``; :func:`json_schema`);
- ``llm_power_version``: the package that wrote it;
- ``command``: the command as typed (``"diagnose"``, ``"plan sample-size"``), and ``schema``: the
  ``$id`` of its schema;
- ``options``: the settings the command ran with -- every option of its command line, defaults
  included (the statistical ``settings`` a report derives, where it has them, stay under their key).

And every verdict about a pair (a row of ``diagnose``'s pairs, ``compare``'s and ``gate``'s pair, an
arena's pairs, a subset estimate's gaps, the pass@k comparison) says, in ``inference`` (a list: one
entry per verdict regime the row carries), its **estimand** (:data:`ESTIMANDS`: "new items from the
same population" -- the superpopulation a benchmark samples -- or "these items", the finite set; by
the rule of :func:`estimand`), the **method** (the test), the **level** (the test's alpha) and the
**regime** (:data:`VERDICT_REGIMES`).

A change of a schema file is a change of :data:`SCHEMA_VERSION`, recorded with the files' SHA-256 in
``llm_power/schemas/versions.json`` (``tests/report/test_json_schema.py`` fails until both are done).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from .._version import __version__

__all__ = ["ESTIMANDS", "SCHEMA_COMMANDS", "SCHEMA_VERSION", "VERDICT_REGIMES", "estimand", "json_schema",
           "schema_file", "schema_id", "stamp", "verdict_basis"]

#: the version of the JSON Schemas shipped in ``llm_power/schemas`` (bumped on any change of a schema)
SCHEMA_VERSION = "1.1"

#: what a verdict is about: the population a benchmark's items are drawn from (the default of every
#: test: the gap on new items from the same population), or exactly the items that were run
ESTIMANDS = {
    "population": "new items from the same population",
    "items": "these items",
}

#: the regimes a verdict is reached under (the keys of ``diagnose``'s regimes): IID items, a
#: multiplicity correction across the pairs, clustered items, anytime-valid (sequential) and run noise
VERDICT_REGIMES = ("iid", "corrected", "cluster", "anytime", "runs")

#: the commands whose JSON documents have a shipped schema (as typed on the command line)
SCHEMA_COMMANDS = (
    "adjust", "aggregate", "arena", "ci", "compare", "coverage", "demo", "diagnose", "gate", "judges", "noise",
    "passk", "plan leaderboard", "plan mde", "plan power", "plan runs", "plan sample-size", "plan shortcut", "ppi",
    "rank", "subset estimate", "subset plan", "verify",
)

#: where the schemas are published (their ``$id``: the docs site)
_BASE = "https://llm-power.github.io/llm-power/schemas"

#: the options of the command line that are not settings of the computation: how it is shown, where the
#: inputs are read and the outputs written (the same report from other paths, in another order or on another
#: engine is the same document), where it is logged (every option whose name ends in ``_out`` is an output)
_NOT_SETTINGS = frozenset({"run", "cli_flags", "command", "plan_command", "subset_command", "format", "traceback",
                           "quiet", "wide", "max_lines", "results", "files", "data", "instances", "labeled",
                           "unlabeled", "reference", "receipt", "engine", "scheduler", "master", "workers", "mlflow",
                           "mlflow_tracking_uri", "wandb", "shared_task"})


def _command(command: str) -> str:
    name = " ".join(str(command).split())
    if name not in SCHEMA_COMMANDS:
        name = name.replace("-", " ", 1) if name.startswith(("plan-", "subset-")) else name
    if name not in SCHEMA_COMMANDS:
        from .._core.suggest import did_you_mean

        hint = did_you_mean(name, SCHEMA_COMMANDS)
        msg = (f"`command` must be one of {', '.join(repr(c) for c in SCHEMA_COMMANDS)}; got {command!r}"
               + (f"; {hint}" if hint else "") + ".")
        raise ValueError(msg)
    return name


def schema_file(command: str) -> str:
    """The file name of ``command``'s schema in ``llm_power/schemas`` (``plan sample-size`` ->
    ``plan-sample-size.schema.json``).
    """
    return _command(command).replace(" ", "-") + ".schema.json"


def schema_id(command: str) -> str:
    """The ``$id`` of ``command``'s schema: its address on the docs site, under its version."""
    return f"{_BASE}/{SCHEMA_VERSION}/{schema_file(command)}"


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a command's ``--format json`` document.

    Parameters
    ----------
    command : str
        The command as typed: ``"diagnose"``, ``"compare"``, ``"plan sample-size"`` (or
        ``"plan-sample-size"``), ... -- one of ``SCHEMA_COMMANDS``.

    Returns
    -------
    dict
        The schema, a fresh copy (the file shipped in ``llm_power/schemas``). Its ``version`` is the
        ``schema_version`` every document it describes carries.

    Notes
    -----
    Every document carries ``schema_version``, ``llm_power_version``, ``command``, ``schema`` (this
    schema's ``$id``) and ``options`` (the settings the command ran with); each verdict about a pair
    says its estimand, method, level and regime in ``inference``. Objects allow further keys: a new
    field is a minor change; removing or retyping one bumps the version.

    Examples
    --------
    >>> import llm_power as lp
    >>> schema = lp.json_schema("compare")
    >>> schema["version"], "inference" in schema["required"]
    ('1.1', True)
    """
    schema: dict[str, Any] = json.loads(_schema_text(schema_file(command)))
    return schema


@cache
def _schema_text(name: str) -> str:
    return resources.files("llm_power").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")


def estimand(*, conditions_on_items: bool = False) -> str:
    """The estimand of a verdict, in words: "these items" when a setting conditions on the items that
    were run (a subset estimate of this benchmark's score, pass@k over these questions), else "new items
    from the same population" (every test's default: the items are a sample).
    """
    return ESTIMANDS["items" if conditions_on_items else "population"]


def verdict_basis(regime: str, *, method: str, level: float | None, conditions_on_items: bool = False,
                  correction: str | None = None, verdict: str | None = None) -> dict[str, Any]:
    """What one verdict is about and how it is reached: ``{"estimand", "method", "level", "regime"}``
    (plus ``correction`` for the corrected regime and ``verdict``, the field that holds it, when given).
    """
    if regime not in VERDICT_REGIMES:
        msg = f"`regime` must be one of {', '.join(repr(r) for r in VERDICT_REGIMES)}; got {regime!r}."
        raise ValueError(msg)
    out: dict[str, Any] = {"estimand": estimand(conditions_on_items=conditions_on_items), "method": str(method),
                           "level": level, "regime": regime}
    if correction is not None:
        out["correction"] = correction
    if verdict is not None:
        out["verdict"] = verdict
    return out


def pair_inference(row: Mapping[str, Any], settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The verdicts a row of a resolution report (``diagnose``'s pairs) carries, one entry per regime
    it was computed under (a regime whose verdict field is missing or null is left out).
    """
    from ..resolution import REGIMES

    alpha = settings.get("alpha")
    methods = {"iid": row.get("test"), "corrected": row.get("test"),
               "cluster": f"cluster_{settings.get('cluster_method', 'cr2')}",
               "anytime": "normal_mixture_boundary", "runs": "run_t"}
    out = []
    for regime in REGIMES:
        if row.get(regime.resolved_field) is None:
            continue
        corrected = regime.key == "corrected"
        out.append(verdict_basis(regime.key, method=str(methods.get(regime.key, regime.key)),
                                 level=row.get("alpha_corrected") if corrected else alpha,
                                 correction=str(settings.get("correction")) if corrected else None,
                                 verdict=regime.resolved_field))
    return out


def with_pair_inference(payload: dict[str, Any], *, key: str = "pairs") -> dict[str, Any]:
    """``payload`` (a resolution report's dict) with ``inference`` in each of its pairs."""
    settings = payload.get("settings") or {}
    pairs = payload.get(key)
    if isinstance(pairs, list):
        payload[key] = [{**row, "inference": pair_inference(row, settings)} for row in pairs]
    return payload


def options_of(namespace: Any) -> dict[str, Any]:
    """The settings a command ran with: its parsed options (an ``argparse.Namespace`` or a mapping),
    as plain JSON values (paths as text), without those that only choose how it is shown.
    """
    from .._core.results import to_plain

    values = namespace if isinstance(namespace, Mapping) else vars(namespace)
    return {str(k): to_plain(v) for k, v in sorted(values.items())
            if k not in _NOT_SETTINGS and not k.endswith("_out") and not k.startswith("_") and not callable(v)}


def stamp(command: str, payload: Mapping[str, Any], options: Mapping[str, Any] | Any = None) -> dict[str, Any]:
    """``payload`` as the document of ``command``: its keys and ``schema_version``,
    ``llm_power_version``, ``command``, ``schema`` and ``options`` (the settings it ran with).
    """
    name = _command(command)
    header = {"schema_version": SCHEMA_VERSION, "llm_power_version": __version__, "command": name,
              "schema": schema_id(name), "options": {} if options is None else options_of(options)}
    clash = sorted(set(header) & set(payload))
    if clash:  # a document's own keys are never overwritten
        msg = f"the {name} document already has the key(s) {', '.join(clash)}"
        raise ValueError(msg)
    return {**payload, **header}


def comparison_inference(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The verdict of one paired comparison (``compare``'s document, ``ComparisonResult.to_dict()``):
    its regime (``regime`` "cluster" or "runs", else IID), test and level.
    """
    regime = str(result.get("regime"))
    return [verdict_basis(regime if regime in {"cluster", "runs"} else "iid", method=str(result.get("method")),
                          level=result.get("alpha"), verdict="resolved")]


def gate_inference(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The verdict of a regression gate (``GateResult.to_dict()``): anytime-valid, clustered, over runs
    or IID, its test and the level of each one-sided bound.
    """
    regime = ("anytime" if result.get("anytime") else "cluster" if result.get("n_clusters")
              else "runs" if result.get("runs_baseline") else "iid")
    return [verdict_basis(regime, method=str(result.get("test")), level=result.get("alpha"), verdict="verdict")]


def arena_inference(pairs: Mapping[str, Any], settings: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    """The ``inference`` column of an arena's pairs (a table of columns): per pair, the Bradley-Terry
    Wald test of its gap (clustered by prompt with ``cluster``), corrected across the pairs and
    anytime-valid where the arena computed those verdicts.
    """
    n_pairs = len(pairs.get("model_a") or ())
    base = "cluster" if settings.get("n_clusters") else "iid"
    out = []
    for k in range(n_pairs):
        def present(name: str, row: int = k) -> bool:
            column = pairs.get(name)
            return column is not None and column[row] is not None

        row = [verdict_basis(base, method="bradley_terry_wald", level=settings.get("alpha"), verdict="resolved")]
        if present("resolved_corrected"):
            row.append(verdict_basis("corrected", method="bradley_terry_wald", level=pairs["alpha_corrected"][k],
                                     correction=str(settings.get("correction")), verdict="resolved_corrected"))
        if present("resolved_anytime"):
            row.append(verdict_basis("anytime", method="normal_mixture_boundary", level=settings.get("alpha"),
                                     verdict="resolved_anytime"))
        out.append(row)
    return out


def subset_gap_inference(gap: Mapping[str, Any], correction: str | None) -> list[dict[str, Any]]:
    """The verdict of a subset estimate's gap: over these items (``target`` "benchmark") or new items
    (``target`` "population"), at its (Bonferroni-corrected) level.
    """
    corrected = correction not in {None, "none"}
    return [verdict_basis("corrected" if corrected else "iid", method=str(gap.get("method")), level=gap.get("alpha"),
                          conditions_on_items=gap.get("target") == "benchmark",
                          correction=str(correction) if corrected else None, verdict="decided")]


def passk_inference(comparison: Mapping[str, Any], *, confidence_level: float,
                    cluster_method: str | None) -> list[dict[str, Any]]:
    """The verdicts of a pass@k comparison (new questions): the paired test at each k (clustered with
    ``cluster_method``) and the band over every k at once (its max-t critical value).
    """
    level = round(1.0 - confidence_level, 12)  # 0.05, not 0.050000000000000044
    regime = "iid" if cluster_method is None else "cluster"
    method = "paired_t" if cluster_method is None else f"cluster_{cluster_method}"
    del comparison
    return [verdict_basis(regime, method=method, level=level, verdict="pvalue"),
            verdict_basis("corrected", method="max_t_bootstrap_band", level=level, correction="simultaneous_band",
                          verdict="band_excludes_zero")]
