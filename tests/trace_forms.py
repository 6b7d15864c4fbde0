"""OTLP spans → the other trace forms the file reader reads, each as its exporter writes it.

- ConsoleSpanExporter output and Zipkin v2 JSON: the spans are rebuilt as the SDK's own
  ``ReadableSpan`` objects and handed to the real ``ConsoleSpanExporter`` and the real
  ``opentelemetry-exporter-zipkin-json`` encoder (``JsonV2Encoder``, as ``ZipkinExporter``
  makes it), so the bytes are the exporters' own;
- Jaeger JSON: the OpenTelemetry-to-Jaeger mapping the Collector's and Jaeger v2's
  translator applies (``span.kind``, ``otel.status_code``/``otel.status_description``,
  ``error``, ``otel.scope.name``/``otel.scope.version`` tags; events as logs with an
  ``event`` field; arrays as JSON text; the parent as a ``CHILD_OF`` reference, links as
  ``FOLLOWS_FROM``), in the query API's ``{"data": [...]}`` envelope, ids hex without
  leading zeros as Jaeger prints them;
- Tempo: the spans' OTLP JSON under ``batches`` (``/api/traces/{id}``: base64 ids, enums
  by name, as Tempo's jsonpb writes them) or under ``trace`` (``/api/v2/traces/{id}``).
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterable
from typing import Any

from rampart_otel.model import Span

_KIND = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}


def sdk_spans(spans: Iterable[Span]) -> list[Any]:
    """Our spans as the SDK's ReadableSpan, what every SDK exporter is handed."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    out = []
    for span in spans:
        context = SpanContext(int(span.trace_id, 16), int(span.span_id, 16), False, TraceFlags(1))
        parent = (
            SpanContext(int(span.trace_id, 16), int(span.parent_span_id, 16), False, TraceFlags(1))
            if span.parent_span_id
            else None
        )
        out.append(
            ReadableSpan(
                name=span.name,
                context=context,
                parent=parent,
                resource=Resource(span.resource.attributes),
                attributes=span.attributes,
                events=[Event(e.name, e.attributes, e.time_ns) for e in span.events],
                links=[
                    Link(
                        SpanContext(int(ln.trace_id, 16), int(ln.span_id, 16), False), ln.attributes
                    )
                    for ln in span.links
                ],
                kind=getattr(SpanKind, span.kind.value, SpanKind.INTERNAL),
                status=Status(
                    getattr(StatusCode, span.status_code.value), span.status_message or None
                ),
                start_time=span.start_ns,
                end_time=span.end_ns,
                instrumentation_scope=InstrumentationScope(
                    span.scope.name, span.scope.version or None
                ),
            )
        )
    return out


def to_console(spans: list[Span]) -> str:
    """What ``ConsoleSpanExporter`` prints for the spans, in one export call per span."""
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    out = io.StringIO()
    exporter = ConsoleSpanExporter(out=out)
    for span in sdk_spans(spans):
        exporter.export([span])
    return out.getvalue()


def to_zipkin(spans: list[Span], max_tag_value_length: int | None = None) -> str:
    """The body the Zipkin JSON exporter POSTs for the spans (service name from the resource);
    ``max_tag_value_length`` as the exporter's option of that name (default: no limit)."""
    from opentelemetry.exporter.zipkin.json.v2 import JsonV2Encoder
    from opentelemetry.exporter.zipkin.node_endpoint import NodeEndpoint

    endpoint = NodeEndpoint()
    if spans and spans[0].resource.service_name:  # as ZipkinExporter.export sets it
        endpoint.service_name = spans[0].resource.service_name
    return JsonV2Encoder(max_tag_value_length).serialize(sdk_spans(spans), endpoint)


def _jaeger_tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    if isinstance(value, bytes):
        return {"key": key, "type": "binary", "value": base64.b64encode(value).decode()}
    if isinstance(value, (list, dict)):
        return {"key": key, "type": "string", "value": json.dumps(value, separators=(",", ":"))}
    return {"key": key, "type": "string", "value": str(value)}


def _jaeger_id(hex_id: str) -> str:
    return hex_id.lstrip("0") or "0"


def to_jaeger(spans: list[Span], *, scope_tags: bool = True) -> str:
    """The query API's answer for the spans, one trace per trace id, pretty-printed as the UI
    downloads it. ``scope_tags=False``: spans that reached Jaeger without their scope."""
    traces: dict[str, dict[str, Any]] = {}
    for span in spans:
        trace = traces.setdefault(
            span.trace_id,
            {"traceID": _jaeger_id(span.trace_id), "spans": [], "processes": {}, "warnings": None},
        )
        processes = trace["processes"]
        resource_tags = [
            _jaeger_tag(k, v) for k, v in span.resource.attributes.items() if k != "service.name"
        ]
        process = {"serviceName": span.resource.service_name or "", "tags": resource_tags}
        pid = next((p for p, v in processes.items() if v == process), None)
        if pid is None:
            pid = f"p{len(processes) + 1}"
            processes[pid] = process
        tags = [_jaeger_tag(k, v) for k, v in span.attributes.items()]
        if scope_tags and span.scope.name:
            tags.append(_jaeger_tag("otel.scope.name", span.scope.name))
            if span.scope.version:
                tags.append(_jaeger_tag("otel.scope.version", span.scope.version))
        if span.kind.value not in ("UNSPECIFIED",):
            tags.append(_jaeger_tag("span.kind", span.kind.value.lower()))
        if span.status_code.value != "UNSET":
            tags.append(_jaeger_tag("otel.status_code", span.status_code.value))
            if span.status_message:
                tags.append(_jaeger_tag("otel.status_description", span.status_message))
            if span.status_code.value == "ERROR":
                tags.append(_jaeger_tag("error", True))
        references = []
        if span.parent_span_id:
            references.append(
                {
                    "refType": "CHILD_OF",
                    "traceID": _jaeger_id(span.trace_id),
                    "spanID": _jaeger_id(span.parent_span_id),
                }
            )
        references += [
            {
                "refType": "FOLLOWS_FROM",
                "traceID": _jaeger_id(ln.trace_id),
                "spanID": _jaeger_id(ln.span_id),
            }
            for ln in span.links
        ]
        start = (span.start_ns or 0) // 1000
        trace["spans"].append(
            {
                "traceID": _jaeger_id(span.trace_id),
                "spanID": _jaeger_id(span.span_id),
                "operationName": span.name,
                "references": references,
                "startTime": start,
                "duration": ((span.end_ns or span.start_ns or 0) // 1000) - start,
                "tags": tags,
                "logs": [
                    {
                        "timestamp": (e.time_ns or 0) // 1000,
                        "fields": [_jaeger_tag("event", e.name)]
                        + [_jaeger_tag(k, v) for k, v in e.attributes.items()],
                    }
                    for e in span.events
                ],
                "processID": pid,
                "warnings": None,
            }
        )
    body = {"data": list(traces.values()), "total": 0, "limit": 0, "offset": 0, "errors": None}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _kvs(value)}}
    return {"stringValue": str(value)}


def _kvs(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in attrs.items()]


def _b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def _resource_spans(spans: list[Span]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for span in spans:
        resource = {"attributes": _kvs(span.resource.attributes)}
        block = next((b for b in blocks if b["resource"] == resource), None)
        if block is None:
            block = {"resource": resource, "scopeSpans": []}
            blocks.append(block)
        scope = {"name": span.scope.name, "version": span.scope.version}
        group = next((g for g in block["scopeSpans"] if g["scope"] == scope), None)
        if group is None:
            group = {"scope": scope, "spans": []}
            block["scopeSpans"].append(group)
        out = {
            "traceId": _b64(span.trace_id),
            "spanId": _b64(span.span_id),
            "name": span.name,
            "kind": f"SPAN_KIND_{span.kind.value}",
            "startTimeUnixNano": str(span.start_ns or 0),
            "endTimeUnixNano": str(span.end_ns or 0),
            "attributes": _kvs(span.attributes),
            "events": [
                {
                    "timeUnixNano": str(e.time_ns or 0),
                    "name": e.name,
                    "attributes": _kvs(e.attributes),
                }
                for e in span.events
            ],
            "links": [
                {
                    "traceId": _b64(ln.trace_id),
                    "spanId": _b64(ln.span_id),
                    "attributes": _kvs(ln.attributes),
                }
                for ln in span.links
            ],
            "status": (
                {"code": f"STATUS_CODE_{span.status_code.value}", "message": span.status_message}
                if span.status_code.value != "UNSET"
                else {}
            ),
        }
        if span.parent_span_id:
            out["parentSpanId"] = _b64(span.parent_span_id)
        if span.flags:
            out["flags"] = span.flags
        group["spans"].append(out)
    return blocks


def to_tempo(spans: list[Span], *, v2: bool = False) -> str:
    """Tempo's trace-by-id answer: ``batches`` (v1) or ``{"trace": ...}`` (v2)."""
    blocks = _resource_spans(spans)
    body = {"trace": {"resourceSpans": blocks}} if v2 else {"batches": blocks}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
