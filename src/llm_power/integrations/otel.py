"""OpenTelemetry out (the ``otel`` extra): :func:`otel_events` emits one GenAI evaluation event per pair
of a diagnosis, with the gap's interval, in a traced application.

The event is the GenAI semantic conventions' ``gen_ai.evaluation.result`` (development status):
``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label`` and
``gen_ai.evaluation.explanation``, plus the interval attributes proposed for it
(``gen_ai.evaluation.score.ci.lower``, ``.upper``, ``.level``: open-telemetry/semantic-conventions-genai
issue 43) and llm-power's own ``llm_power.*`` attributes (the models, N, p, N*, q, each regime's verdict).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._core.optional import require
from ._outputs import check_diagnosis, pair_verdicts

if TYPE_CHECKING:
    from ..resolution import Diagnosis

__all__ = ["EVALUATION_EVENT", "EVALUATION_NAME", "otel_events"]

#: the event name of the GenAI semantic conventions
EVALUATION_EVENT = "gen_ai.evaluation.result"
#: the ``gen_ai.evaluation.name`` of llm-power's events: the paired gap between two models
EVALUATION_NAME = "llm_power.paired_gap"
_WHAT = "OpenTelemetry events (lp.otel_events)"


def _attributes(diag: Any, row: dict[str, Any]) -> dict[str, Any]:
    level = float(diag.settings.get("confidence_level", 0.95))
    head = row["regimes"][row["headline"]]
    low, high = row["intervals"][row["interval"]]
    attrs: dict[str, Any] = {
        "gen_ai.evaluation.name": EVALUATION_NAME,
        "gen_ai.evaluation.score.value": row["gap"],
        "gen_ai.evaluation.score.label": row["verdict"],
        "gen_ai.evaluation.score.ci.lower": low,
        "gen_ai.evaluation.score.ci.upper": high,
        "gen_ai.evaluation.score.ci.level": level,
        "gen_ai.evaluation.explanation": (
            f"{row['model_a']} - {row['model_b']} = {row['gap']:+.4g} [{low:.4g}, {high:.4g}] "
            f"({level:.0%} CI, {row['interval']}), p = {row['pvalue']:.3g}, q = {head['q']:.3g} "
            f"(N* = {head['n_star']:.4g} of N = {diag.n}): {row['verdict']} ({row['headline']})"),
        "llm_power.model_a": row["model_a"],
        "llm_power.model_b": row["model_b"],
        "llm_power.n": int(diag.n),
        "llm_power.pvalue": row["pvalue"],
        "llm_power.regime": row["headline"],
        "llm_power.ci.kind": row["interval"],
        "llm_power.n_star": head["n_star"],
        "llm_power.q": head["q"],
    }
    for key, regime in row["regimes"].items():
        attrs[f"llm_power.resolved.{key}"] = regime["resolved"]
        attrs[f"llm_power.q.{key}"] = regime["q"]
    return attrs


def otel_events(result: Diagnosis, *, tracer: Any = None, span: Any = None) -> Any:
    """Emit one ``gen_ai.evaluation.result`` event per pair of a diagnosis, with interval attributes.

    Parameters
    ----------
    result : Diagnosis
        From :func:`~llm_power.diagnose`.
    tracer : opentelemetry Tracer, optional
        Start a new span ``llm_power.diagnose`` with this tracer and put the events on it (ended here).
    span : opentelemetry Span, optional
        Put the events on this span. Default (neither given): the current span when it records,
        else a new span of the global tracer provider's tracer ``llm_power``.

    Returns
    -------
    opentelemetry Span
        The span that carries the events.

    Notes
    -----
    Per pair (rank order): ``gen_ai.evaluation.name`` = ``"llm_power.paired_gap"``,
    ``gen_ai.evaluation.score.value`` the gap (score of A minus score of B),
    ``gen_ai.evaluation.score.label`` ``"resolved"`` or ``"unresolved"`` under the report's headline
    regime (the strictest computed), ``gen_ai.evaluation.score.ci.lower``/``.upper``/``.level`` the gap's
    interval and its level (the cluster-robust one with ``cluster=``, the runs' one with runs, else the
    IID one; ``llm_power.ci.kind`` says which), ``gen_ai.evaluation.explanation`` one sentence; ``llm_power.model_a``,
    ``.model_b``, ``.n``, ``.pvalue``, ``.regime``, ``.n_star`` and ``.q`` (headline regime) and, per
    regime computed, ``llm_power.resolved.REGIME`` and ``llm_power.q.REGIME``. Events are span events
    (the conventions' events may also be log records; a span event keeps them beside the work they
    judge). The conventions are in development: the names may change with them.

    Examples
    --------
    >>> import llm_power as lp
    >>> from opentelemetry import trace  # doctest: +SKIP
    >>> with trace.get_tracer("app").start_as_current_span("nightly-eval"):  # doctest: +SKIP
    ...     lp.otel_events(lp.diagnose(scores, models=names))  # on the "nightly-eval" span
    """
    diag = check_diagnosis(result, "otel_events")
    trace = require("opentelemetry.trace", "otel", _WHAT)
    rows = pair_verdicts(diag)
    owned = False
    if span is None:
        current = trace.get_current_span()
        if tracer is None and current.is_recording():
            span = current
        else:
            tracer = tracer if tracer is not None else trace.get_tracer("llm_power")
            span = tracer.start_span("llm_power.diagnose")
            owned = True
    for row in rows:
        span.add_event(EVALUATION_EVENT, attributes=_attributes(diag, row))
    if owned:
        span.set_attribute("llm_power.pairs", len(rows))
        span.set_attribute("llm_power.n_unresolved", int(diag.n_unresolved[diag.headline.key]))
        span.end()
    return span
