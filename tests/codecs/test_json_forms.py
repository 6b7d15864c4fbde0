"""The JSON trace forms other than OTLP: each told apart by content and mapped to Span."""

from __future__ import annotations

import base64
import json

import pytest

from rampart_otel.codecs.json_forms import spans_from_document, spans_from_document_bytes
from rampart_otel.errors import DecodeError
from rampart_otel.model import SpanKind, StatusCode

# ---- Jaeger ------------------------------------------------------------------------------

# jaegertracing/jaeger model/converter/json/fixtures/ui_01.json (Apache-2.0), cut to three
# spans: ids without leading zeros, typed tags, logs, and a span with three references.
JAEGER_UI_01 = {
    "traceID": "0000000000000001",
    "spans": [
        {
            "traceID": "0000000000000001",
            "spanID": "2",
            "operationName": "some-operation",
            "references": [],
            "startTime": 1485467191639875,
            "duration": 5,
            "tags": [
                {"key": "peer.service", "type": "string", "value": "service-y"},
                {"key": "peer.ipv4", "type": "int64", "value": 23456},
                {"key": "error", "type": "bool", "value": True},
                {"key": "temperature", "type": "float64", "value": 72.5},
                {"key": "blob", "type": "binary", "value": "AAAwOQ=="},
            ],
            "logs": [
                {
                    "timestamp": 1485467191639875,
                    "fields": [{"key": "event", "type": "string", "value": "some-event"}],
                },
                {
                    "timestamp": 1485467191639875,
                    "fields": [{"key": "x", "type": "string", "value": "y"}],
                },
            ],
            "processID": "p1",
            "warnings": None,
        },
        {
            "traceID": "0000000000000001",
            "spanID": "4",
            "operationName": "reference-test",
            "references": [
                {"refType": "CHILD_OF", "traceID": "00000000000000ff", "spanID": "ff"},
                {"refType": "CHILD_OF", "traceID": "0000000000000001", "spanID": "2"},
                {"refType": "FOLLOWS_FROM", "traceID": "0000000000000001", "spanID": "2"},
            ],
            "startTime": 1485467191639875,
            "duration": 5,
            "tags": [],
            "logs": [],
            "processID": "p2",
            "warnings": ["some span warning"],
        },
    ],
    "processes": {
        "p1": {"serviceName": "service-x", "tags": []},
        "p2": {
            "serviceName": "service-y",
            "tags": [{"key": "host", "type": "string", "value": "h"}],
        },
    },
    "warnings": ["some trace warning"],
}


def test_jaeger_ui_fixture() -> None:
    for document in (JAEGER_UI_01, {"data": [JAEGER_UI_01], "total": 0, "errors": None}):
        first, second = spans_from_document(document)
        assert first.trace_id == "0" * 31 + "1" and first.span_id == "0" * 15 + "2"
        assert first.parent_span_id is None
        assert first.start_ns == 1485467191639875000 and first.end_ns == first.start_ns + 5000
        assert first.attributes == {
            "peer.service": "service-y",
            "peer.ipv4": 23456,
            "temperature": 72.5,
            "blob": b"\x00\x0009",
        }
        assert first.status_code is StatusCode.ERROR  # the error tag
        assert [(e.name, e.attributes) for e in first.events] == [
            ("some-event", {}),
            ("", {"x": "y"}),
        ]
        assert first.resource.attributes == {"service.name": "service-x"}
        assert first.scope.lost_by == "Jaeger JSON"
        # The first CHILD_OF in the span's own trace is the parent; the others are links.
        assert second.parent_span_id == "0" * 15 + "2"
        assert [(ln.trace_id[-2:], ln.span_id[-2:]) for ln in second.links] == [
            ("ff", "ff"),
            ("01", "02"),
        ]
        assert second.resource.attributes == {"host": "h", "service.name": "service-y"}


def test_jaeger_otel_tags_are_kind_status_and_scope() -> None:
    trace = {
        "traceID": "9bfe8376688e9116d9cbae28c0aa2db6",
        "spans": [
            {
                "traceID": "9bfe8376688e9116d9cbae28c0aa2db6",
                "spanID": "9b321d76f92134d2",
                "operationName": "GET",
                "references": [],
                "startTime": 1729181197748657,
                "duration": 1503,
                "tags": [
                    {"key": "http.method", "type": "string", "value": "GET"},
                    {"key": "http.status_code", "type": "int64", "value": 500},
                    {"key": "internal.span.format", "type": "string", "value": "otlp"},
                    {"key": "otel.scope.name", "type": "string", "value": "otelhttp"},
                    {"key": "otel.scope.version", "type": "string", "value": "0.55.0"},
                    {"key": "otel.status_code", "type": "string", "value": "ERROR"},
                    {"key": "otel.status_description", "type": "string", "value": "boom"},
                    {"key": "error", "type": "bool", "value": True},
                    {"key": "span.kind", "type": "string", "value": "client"},
                ],
                "logs": [],
                "processID": "p1",
            }
        ],
        "processes": {"p1": {"serviceName": "svc", "tags": []}},
    }
    (span,) = spans_from_document({"data": [trace]})
    assert span.kind is SpanKind.CLIENT
    assert (span.status_code, span.status_message) == (StatusCode.ERROR, "boom")
    assert (span.scope.name, span.scope.version, span.scope.lost_by) == ("otelhttp", "0.55.0", "")
    assert span.attributes == {"http.method": "GET", "http.status_code": 500}


# ---- Zipkin ------------------------------------------------------------------------------


def zipkin_span(**fields: object) -> dict[str, object]:
    span: dict[str, object] = {
        "traceId": "0123456789abcde0",
        "id": "0000000000001234",
        "name": "get /api",
        "timestamp": 1625115600000000,
        "duration": 200000,
        "localEndpoint": {"serviceName": "shell script"},
    }
    span.update(fields)
    return span


def test_zipkin_v2_span() -> None:
    (span,) = spans_from_document(
        [
            zipkin_span(
                kind="CLIENT",
                parentId="5678",
                tags={
                    "http.method": "GET",
                    "http.status_code": "500",
                    "gen_ai.is_streaming": "false",
                    "truncated": "true",
                    "otel.library.name": "lib",
                    "otel.scope.name": "scope",
                    "otel.scope.version": "1.0",
                    "otel.status_code": "ERROR",
                    "error": "boom",
                    "otel.dropped_attributes_count": "2",
                },
                annotations=[
                    {"timestamp": 1625115600000001, "value": '{"exception": {"k": 1}}'},
                    {"timestamp": 1625115600000002, "value": "cs"},
                ],
            )
        ]
    )
    assert span.trace_id == "0" * 16 + "0123456789abcde0"  # 64-bit: the low half of 128
    assert span.parent_span_id == "0000000000005678"
    assert (span.kind, span.start_ns, span.end_ns) == (
        SpanKind.CLIENT,
        1625115600000000000,
        1625115600200000000,
    )
    assert (span.status_code, span.status_message) == (StatusCode.ERROR, "boom")
    assert (span.scope.name, span.scope.version) == ("scope", "1.0")
    assert span.attributes == {  # numbers stay text; booleans are read back
        "http.method": "GET",
        "http.status_code": "500",
        "gen_ai.is_streaming": False,
        "truncated": True,
    }
    assert span.dropped_attributes_count == 2
    assert [(e.name, e.attributes, e.time_ns) for e in span.events] == [
        ("exception", {"k": 1}, 1625115600000001000),
        ("cs", {}, 1625115600000002000),
    ]
    assert span.resource.service_name == "shell script"


def test_zipkin_without_scope_tags_lost_the_scope() -> None:
    (span,) = spans_from_document([zipkin_span()])
    assert span.kind is SpanKind.INTERNAL and span.scope.lost_by == "Zipkin JSON"


def test_zipkin_list_of_traces() -> None:
    spans = spans_from_document([[zipkin_span()], [zipkin_span(id="99")]])
    assert [s.span_id for s in spans] == ["0000000000001234", "0000000000000099"]


def test_zipkin_tags_at_a_shared_longest_length_are_marked_cut() -> None:
    a, b = "a" * 40, "b" * 40
    cut = spans_from_document(
        [zipkin_span(tags={"x": a, "short": "s"}), zipkin_span(id="2", tags={"y": b})]
    )
    assert [s.cut_keys for s in cut] == [("x",), ("y",)]
    # One longest value, or the same value twice, is no sign of a limit.
    whole = spans_from_document(
        [zipkin_span(tags={"x": a, "z": "c" * 39}), zipkin_span(id="2", tags={"y": a})]
    )
    assert [s.cut_keys for s in whole] == [(), ()]


def test_zipkin_v1_is_refused_by_name() -> None:
    v1 = zipkin_span(binaryAnnotations=[{"key": "k", "value": "v"}])
    with pytest.raises(DecodeError, match=r"Zipkin v1 JSON is not supported.*api/v2"):
        spans_from_document([v1])


# ---- Tempo -------------------------------------------------------------------------------

TEMPO_SPAN = {
    # After a span of grafana/tempo cmd/tempo-vulture/testdata/trace.json (base64 ids, as
    # Tempo's jsonpb writes them), with a kind and status by enum name
    "traceId": "MUkZX/sL7AU0e0jv6OzBsA==",
    "spanId": "SyPeJdH7ZkE=",
    "name": "vulture-68",
    "kind": "SPAN_KIND_CLIENT",
    "startTimeUnixNano": "1636729665000000000",
    "endTimeUnixNano": "1636729665000092000",
    "attributes": [{"key": "http.status_code", "value": {"intValue": "110"}}],
    "status": {"code": "STATUS_CODE_ERROR"},
}
RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "tempo-vulture"}}]}


@pytest.mark.parametrize(
    "document",
    [
        {"batches": [{"resource": RESOURCE, "scopeSpans": [{"scope": {}, "spans": [TEMPO_SPAN]}]}]},
        {  # older Tempo
            "batches": [
                {"resource": RESOURCE, "instrumentationLibrarySpans": [{"spans": [TEMPO_SPAN]}]}
            ]
        },
        {
            "trace": {
                "resourceSpans": [{"resource": RESOURCE, "scopeSpans": [{"spans": [TEMPO_SPAN]}]}]
            }
        },
        {
            "result": {
                "resourceSpans": [{"resource": RESOURCE, "scopeSpans": [{"spans": [TEMPO_SPAN]}]}]
            }
        },
    ],
    ids=["batches", "instrumentationLibrarySpans", "v2-trace", "jaeger-v3-result"],
)
def test_otlp_in_an_envelope(document: dict[str, object]) -> None:
    (span,) = spans_from_document(document)
    assert span.trace_id == base64.b64decode(TEMPO_SPAN["traceId"]).hex()
    assert (span.kind, span.status_code) == (SpanKind.CLIENT, StatusCode.ERROR)
    assert span.attributes == {"http.status_code": 110}
    assert span.resource.service_name == "tempo-vulture"
    assert span.scope.lost_by == ""


def test_tempo_error_names_the_form() -> None:
    with pytest.raises(DecodeError, match=r"Tempo trace JSON \(batches\): resourceSpans\[0\]"):
        spans_from_document({"batches": [{"scopeSpans": [{"scope": {"name": 1}, "spans": []}]}]})


# ---- console output ----------------------------------------------------------------------

CONSOLE_SPAN = {
    "name": "fetch_weather",
    "context": {
        "trace_id": "0x9eabfebdb8b003e645c9dab8a4a5e7ca",
        "span_id": "0x1878f728d322e356",
        "trace_state": "[]",
    },
    "kind": "SpanKind.CLIENT",
    "parent_id": "0x034db723f691c18b",
    "start_time": "2026-12-05T00:37:33.464561Z",
    "end_time": "2026-12-05T00:37:33.475911Z",
    "status": {"status_code": "ERROR", "description": "boom"},
    "attributes": {"n": 1, "ok": True, "list": ["a", "b"]},
    "events": [{"name": "exception", "timestamp": "2026-12-05T00:37:33.470000Z", "attributes": {}}],
    "links": [],
    "resource": {"attributes": {"service.name": "weather-agent"}, "schema_url": ""},
}


def test_console_span_as_the_sdk_prints_it() -> None:
    (span,) = spans_from_document_bytes(json.dumps(CONSOLE_SPAN, indent=4))
    assert (span.trace_id, span.span_id, span.parent_span_id) == (
        "9eabfebdb8b003e645c9dab8a4a5e7ca",
        "1878f728d322e356",
        "034db723f691c18b",
    )
    assert span.kind is SpanKind.CLIENT
    assert (span.status_code, span.status_message) == (StatusCode.ERROR, "boom")
    assert span.start_ns == 1796431053464561000 and span.end_ns == 1796431053475911000
    assert span.attributes == {"n": 1, "ok": True, "list": ["a", "b"]}  # typed
    assert span.events[0].time_ns == 1796431053470000000
    assert span.resource.service_name == "weather-agent"
    assert span.scope.lost_by == "ConsoleSpanExporter output"


def test_console_times_match_the_sdk_to_the_microsecond() -> None:
    from opentelemetry.sdk.util import ns_to_iso_str

    for ns in (1796431053464561297, 1_000_000_000_000_000_000, 1796431053000000999):
        document = dict(CONSOLE_SPAN, start_time=ns_to_iso_str(ns), end_time=None)
        (span,) = spans_from_document(document)
        assert abs(span.start_ns - ns) <= 1_000 and span.end_ns is None


# ---- what is not a trace form ------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "needle"),
    [
        ({"resourceMetrics": []}, "not OTLP trace data"),
        ([1, 2], "got array of number"),
        ({"data": "x"}, "keys: data"),
        ("text", "got string"),
    ],
)
def test_other_json_is_named_with_what_is_read(document: object, needle: str) -> None:
    with pytest.raises(DecodeError, match=needle) as raised:
        spans_from_document(document)
    assert "Zipkin" in raised.value.message or "got string" in raised.value.message
