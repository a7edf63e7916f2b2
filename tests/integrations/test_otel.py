"""OpenTelemetry out (issue 47, part 4): ``lp.otel_events`` puts one ``gen_ai.evaluation.result`` event
per pair, with the proposed interval attributes, on the current span (or a new one), as the SDK's
in-memory exporter receives them.
"""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

import llm_power as lp  # noqa: E402
from llm_power.io.demo import load_mmlu_pro  # noqa: E402

MODELS = ("Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B", "gemma-7b")


@pytest.fixture
def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()  # a provider of the test's own: the global one is never set
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _diagnosis() -> lp.Diagnosis:
    m = load_mmlu_pro()
    cols = [m.models.index(name) for name in MODELS]
    return lp.diagnose(m.scores[::24, cols], models=list(MODELS), cluster=list(m.clusters[::24]),
                       correction="holm", confidence_level=0.9)


def test_events_on_the_current_span(traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = traced
    diag = _diagnosis()
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("nightly-eval"):
        lp.otel_events(diag)
    (span,) = exporter.get_finished_spans()
    assert span.name == "nightly-eval"
    events = list(span.events)
    frame = diag.to_frame()
    assert len(events) == len(frame) == 2
    headline = diag.headline
    for event, (_, row) in zip(events, frame.iterrows()):
        a = event.attributes
        assert event.name == "gen_ai.evaluation.result"
        assert a["gen_ai.evaluation.name"] == "llm_power.paired_gap"
        assert a["gen_ai.evaluation.score.value"] == row["delta"]
        # with clusters, the cluster-robust interval (the one the clustered verdict rests on)
        assert a["llm_power.ci.kind"] == "cluster"
        assert a["gen_ai.evaluation.score.ci.lower"] == row["cluster_ci_low"]
        assert a["gen_ai.evaluation.score.ci.upper"] == row["cluster_ci_high"]
        assert a["gen_ai.evaluation.score.ci.level"] == 0.9
        assert row["cluster_ci_low"] < row["delta"] < row["cluster_ci_high"]
        resolved = bool(row[headline.resolved_field])
        assert a["gen_ai.evaluation.score.label"] == ("resolved" if resolved else "unresolved")
        assert (a["llm_power.model_a"], a["llm_power.model_b"]) == (row["model_a"], row["model_b"])
        assert a["llm_power.regime"] == headline.key == "cluster"
        assert a["llm_power.q"] == row[headline.q_field] and a["llm_power.n_star"] == row[headline.n_star_field]
        for regime in diag.regimes:
            assert a[f"llm_power.resolved.{regime.key}"] == bool(row[regime.resolved_field])
            assert a[f"llm_power.q.{regime.key}"] == row[regime.q_field]
        assert a["llm_power.n"] == diag.n
        assert "90% CI" in a["gen_ai.evaluation.explanation"]


def test_a_new_span_with_a_tracer(traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = traced
    diag = _diagnosis()
    span = lp.otel_events(diag, tracer=provider.get_tracer("llm_power"))
    (finished,) = exporter.get_finished_spans()
    assert finished.name == "llm_power.diagnose" and finished.context.span_id == span.get_span_context().span_id
    assert finished.attributes["llm_power.pairs"] == 2
    assert finished.attributes["llm_power.n_unresolved"] == diag.n_unresolved[diag.headline.key]
    assert [e.name for e in finished.events] == ["gen_ai.evaluation.result"] * 2


def test_iid_interval_without_clusters(traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = traced
    m = load_mmlu_pro()
    diag = lp.diagnose(m.scores[::24, [m.models.index(n) for n in MODELS[:2]]], models=list(MODELS[:2]))
    (event,) = lp.otel_events(diag, tracer=provider.get_tracer("t")).events
    assert event.attributes["llm_power.ci.kind"] == "iid"
    assert event.attributes["gen_ai.evaluation.score.ci.lower"] == diag.columns["ci_low"][0]
    assert event.attributes["gen_ai.evaluation.score.ci.upper"] == diag.columns["ci_high"][0]


def test_a_given_span(traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = traced
    diag = _diagnosis()
    span = provider.get_tracer("app").start_span("mine")
    assert lp.otel_events(diag, span=span) is span
    assert exporter.get_finished_spans() == ()  # not ended: the caller's span
    span.end()
    assert len(exporter.get_finished_spans()[0].events) == 2


def test_validation() -> None:
    with pytest.raises(TypeError, match="`result` of otel_events must be a Diagnosis"):
        lp.otel_events(object())
