"""Real OTLP input for the codec and receiver tests: spans from the OpenTelemetry SDK,
encoded by the SDK's own OTLP encoder and protobuf's JSON mapping — never hand-built unless a
quirk needs it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource as SdkResource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rampart_otel.model import Event, Link, Resource, Scope, Span


def _provider(service: str, limits: SpanLimits | None = None) -> tuple[Any, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=SdkResource.create({"service.name": service, "deployment.environment": "test"}),
        span_limits=limits or SpanLimits(),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def record_agent_trace(attrs: dict[str, Any] | None = None) -> list[ReadableSpan]:
    """One agent run as the SDK records it: two services, three scopes, every field used."""
    agent, agent_spans = _provider("agent-a", SpanLimits(max_span_attributes=8, max_events=2))
    tools, tool_spans = _provider("tool-server")
    tracer = agent.get_tracer("agent.framework", "2.1.0")
    llm = agent.get_tracer("llm.client")  # no version
    tool_tracer = tools.get_tracer("mcp.server", "0.3")

    other = tracer.start_span("earlier-run")
    other.end()
    with tracer.start_as_current_span("invoke_agent", kind=trace.SpanKind.SERVER) as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", "conv-1")
        for key, value in (attrs or {}).items():
            root.set_attribute(key, value)
        with llm.start_as_current_span("chat gpt-4o", kind=trace.SpanKind.CLIENT) as chat:
            chat.set_attributes(
                {
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 1234,
                    "gen_ai.request.temperature": 0.25,
                    "gen_ai.response.finish_reasons": ("tool_calls",),
                    "stream": False,
                    "token_ids": [1, 2, 3],
                    "scores": [0.5, 1.5],
                    "flags": [True, False],
                }
            )
            chat.add_event("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls"})
            chat.add_event("first_token", timestamp=1_700_000_000_123_456_789)
            chat.add_event("dropped-1")  # over max_events=2: counted, not kept
        with tracer.start_as_current_span(
            "execute_tool fetch",
            links=[trace.Link(other.get_span_context(), {"link.reason": "retry-of"})],
        ) as tool:
            tool.set_attribute("gen_ai.tool.name", "fetch")
            for i in range(10):  # over max_span_attributes=8
                tool.set_attribute(f"extra.{i}", i)
            ctx = trace.set_span_in_context(tool)
            with tool_tracer.start_as_current_span(
                "tools/call fetch", context=ctx, kind=trace.SpanKind.SERVER
            ) as served:
                served.set_status(trace.Status(trace.StatusCode.ERROR, "upstream 503"))
                served.set_attribute("error.type", "HTTPError")
        root.set_status(trace.Status(trace.StatusCode.OK))
    return [*agent_spans.get_finished_spans(), *tool_spans.get_finished_spans()]


def expected_span(rs: ReadableSpan) -> Span:
    """What the decoders must produce for one SDK span, derived from the SDK's own fields."""
    ctx = rs.get_span_context()

    def plain(attributes: Any) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in (attributes or {}).items()}

    scope = rs.instrumentation_scope
    return Span(
        trace_id=f"{ctx.trace_id:032x}",
        span_id=f"{ctx.span_id:016x}",
        parent_span_id=f"{rs.parent.span_id:016x}" if rs.parent else None,
        name=rs.name,
        kind=rs.kind.name,
        start_ns=rs.start_time,
        end_ns=rs.end_time,
        status_code=rs.status.status_code.name,
        status_message=rs.status.description or "",
        attributes=plain(rs.attributes),
        events=[
            Event(e.name, e.timestamp, plain(e.attributes), e.dropped_attributes) for e in rs.events
        ],
        links=[
            Link(f"{ln.context.trace_id:032x}", f"{ln.context.span_id:016x}", plain(ln.attributes))
            for ln in rs.links
        ],
        resource=Resource(plain(rs.resource.attributes)),
        scope=Scope(scope.name, scope.version or ""),
        dropped_attributes_count=rs.dropped_attributes,
        dropped_events_count=rs.dropped_events,
        dropped_links_count=rs.dropped_links,
        # OTLP 1.1 as the SDK writes it: bit 8 "bit 9 is known", bit 9 "the parent is remote".
        flags=0x100 | (0x200 if rs.parent and rs.parent.is_remote else 0),
    )


def by_id(spans: list[Span]) -> dict[str, Span]:
    return {s.span_id: s for s in spans}


def hexify_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """protobuf JSON (base64 ids) → the OTLP/JSON the Collector writes (hex ids), in place."""
    for rs in doc.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for sp in ss.get("spans", ()):
                for obj in (sp, *sp.get("links", ())):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if obj.get(key):
                            obj[key] = base64.b64decode(obj[key]).hex()
    return doc


def collector_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The Collector's OTLP/JSON: camelCase, hex ids, enum ints, int64 as strings."""
    return hexify_ids(json_format.MessageToDict(request, use_integers_for_enums=True))


@pytest.fixture
def sdk_spans() -> list[ReadableSpan]:
    return record_agent_trace()


@pytest.fixture
def sdk_request(sdk_spans: list[ReadableSpan]) -> ExportTraceServiceRequest:
    return encode_spans(sdk_spans)


@pytest.fixture
def expected(sdk_spans: list[ReadableSpan]) -> dict[str, Span]:
    return {e.span_id: e for e in map(expected_span, sdk_spans)}


@pytest.fixture
def make_request() -> Callable[..., ExportTraceServiceRequest]:
    """A fresh agent trace (new ids) per call, optionally with extra root attributes."""
    return lambda **attrs: encode_spans(record_agent_trace(attrs))
