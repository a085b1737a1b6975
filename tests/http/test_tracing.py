"""OpenTelemetry spans, caught with the SDK's in-memory exporter: a SERVER span per request, a
span per round under it, and a CLIENT span per DynamoDB call under its round."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from graph.table import Table
from server.http.app import create_app
from server.observe.telemetry import tracer_provider_from_env
from tests.tokens import asgi

CHAIN = (
    'query Chain { user(id: "alice") { groups { edges { node { name '
    "subscriptions { edges { node { name } } } } } } } }"
)
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    yield InMemorySpanExporter()


def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    tracer_provider = TracerProvider(shutdown_on_exit=False)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider


def parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_a_request_has_a_server_span_rounds_and_a_client_span_per_call(
    demo: Table, exporter: InMemorySpanExporter
) -> None:
    app = create_app(table=demo, tracer_provider=provider(exporter))
    async with asgi(app) as client:
        headers = {"Edgewise-Trace": "1", "traceparent": TRACEPARENT}
        response = await client.post("/graphql", json={"query": CHAIN}, headers=headers)
    trace = response.json()["extensions"]["dynamodb"]
    spans = exporter.get_finished_spans()

    [server] = [s for s in spans if s.kind == SpanKind.SERVER]
    assert server.name == "POST /graphql"
    assert server.attributes is not None
    assert server.attributes["graphql.operation.name"] == "Chain"
    assert server.attributes["http.response.status_code"] == 200
    assert server.attributes["edgewise.request_id"] == response.headers["x-request-id"]
    # continues the caller's trace (W3C traceparent)
    assert format(server.context.trace_id, "032x") == TRACEPARENT.split("-")[1]

    rounds = [s for s in spans if s.name == "dynamodb round"]
    assert len(rounds) == trace["rounds"] == 3
    assert all(parent(r) == server.context.span_id for r in rounds)
    assert [r.attributes and r.attributes["edgewise.round"] for r in rounds] == [1, 2, 3]

    calls = [s for s in spans if s.kind == SpanKind.CLIENT]
    assert len(calls) == trace["requests"]
    round_ids = {r.context.span_id for r in rounds}
    methods: dict[str, int] = {}
    for call in calls:
        attributes = dict(call.attributes or {})
        assert attributes["rpc.system"] == "aws-api"
        assert attributes["rpc.service"] == "DynamoDB"
        assert call.name == f"DynamoDB.{attributes['rpc.method']}"
        assert parent(call) in round_ids
        assert call.start_time is not None and call.end_time is not None
        assert call.start_time <= call.end_time
        methods[str(attributes["rpc.method"])] = methods.get(str(attributes["rpc.method"]), 0) + 1
    assert methods == trace["operations"]
    assert {s.context.trace_id for s in spans} == {server.context.trace_id}


async def test_an_anonymous_failing_request_is_still_a_span(
    demo: Table, exporter: InMemorySpanExporter
) -> None:
    app = create_app(table=demo, tracer_provider=provider(exporter))
    async with asgi(app) as client:
        await client.post("/graphql", json={"query": "{ nope }"})
    [server] = exporter.get_finished_spans()
    assert server.attributes is not None
    assert server.attributes["graphql.operation.name"] == "anonymous"
    assert server.attributes["edgewise.error_codes"] == ("BAD_USER_INPUT",)


def test_the_otel_environment_chooses_the_exporters(capsys: pytest.CaptureFixture[str]) -> None:
    assert tracer_provider_from_env({}) is None
    assert tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "none"}) is None
    disabled = {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}
    assert tracer_provider_from_env(disabled) is None

    both = tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "console,otlp"})
    assert both is not None
    processors = both._active_span_processor._span_processors
    exporters = [type(p.span_exporter) for p in processors]  # type: ignore[attr-defined]
    assert exporters == [ConsoleSpanExporter, OTLPSpanExporter]
    assert both.resource.attributes["service.name"] == "edgewise"
    both.shutdown()

    for bad in (
        {"OTEL_TRACES_EXPORTER": "zipkin"},
        {
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        },
    ):
        with pytest.raises(SystemExit, match="not supported"):
            tracer_provider_from_env(bad)


def test_console_spans_are_one_json_object_a_line() -> None:
    provider = tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "console"})
    assert provider is not None
    out = io.StringIO()
    [processor] = provider._active_span_processor._span_processors
    processor.span_exporter.out = out  # type: ignore[attr-defined]
    with provider.get_tracer("test").start_as_current_span("one"):
        pass
    provider.shutdown()
    [line] = out.getvalue().splitlines()
    assert json.loads(line)["name"] == "one"
