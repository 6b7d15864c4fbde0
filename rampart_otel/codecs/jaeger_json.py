"""Jaeger's JSON (the query API's ``/api/traces`` answer, the UI's "Download JSON") →
:class:`~rampart_otel.model.Span`.

``{"data": [trace, ...]}`` (or one trace alone), each trace ``{"traceID", "spans",
"processes"}``. Read as the OpenTelemetry Jaeger mapping wrote it, backwards: a span's
process (``processID`` into ``processes``, or an embedded ``process``) is its resource,
``serviceName`` its ``service.name`` and the process tags the other resource attributes;
tags are typed (``string``, ``bool``, ``int64``, ``float64``, ``binary`` as base64); the
tags ``span.kind``, ``otel.status_code``/``otel.status_description`` (or ``error``),
``otel.scope.name``/``otel.scope.version`` (or the older ``otel.library.*``) are the kind,
status and instrumentation scope and are taken out of the attributes, as are
``w3c.tracestate`` and the ``internal.span.format`` Jaeger adds; each log is an event, its
``event`` field the name; the first ``CHILD_OF`` reference in the span's trace is the
parent, every other reference a link. Ids are hex, leading zeros dropped (padded back);
times are microseconds.

What the form loses: array and map attribute types (Jaeger stores them as JSON text), time
below the microsecond, dropped counts, trace flags, and, when no scope tag is there
(spans that reached Jaeger through its own clients or its Thrift/protobuf paths), the
instrumentation scope.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from rampart_otel.codecs.foreign_fields import micros, short_hex_id
from rampart_otel.errors import DecodeError
from rampart_otel.model import Event, Link, Resource, Scope, Span, SpanKind, StatusCode

__all__ = ["FORM", "is_jaeger", "spans_from_jaeger"]

FORM = "Jaeger JSON"

_KINDS = {
    "client": SpanKind.CLIENT,
    "server": SpanKind.SERVER,
    "producer": SpanKind.PRODUCER,
    "consumer": SpanKind.CONSUMER,
    "internal": SpanKind.INTERNAL,
}
_SCOPE_KEYS = (
    ("otel.scope.name", "otel.scope.version"),
    ("otel.library.name", "otel.library.version"),
)
_DROPPED_TAGS = ("w3c.tracestate", "internal.span.format")


def is_jaeger(obj: dict[str, Any]) -> bool:
    """The query API's answer (``data``: traces with ``spans``), or one trace."""
    data = obj.get("data")
    if isinstance(data, list):
        return bool(data) and all(isinstance(t, dict) and "spans" in t for t in data)
    return isinstance(obj.get("spans"), list) and isinstance(obj.get("processes"), dict)


def spans_from_jaeger(obj: dict[str, Any]) -> list[Span]:
    traces = obj["data"] if isinstance(obj.get("data"), list) else [obj]
    out: list[Span] = []
    for ti, trace in enumerate(traces):
        processes = trace.get("processes") or {}
        resources: dict[str, Resource] = {}
        for si, span in enumerate(trace.get("spans") or ()):
            try:
                out.append(_span(span, processes, resources))
            except DecodeError as exc:
                raise DecodeError(f"{FORM}: data[{ti}].spans[{si}]: {exc.message}") from None
            except (TypeError, AttributeError, KeyError, ValueError) as exc:
                raise DecodeError(f"{FORM}: data[{ti}].spans[{si}]: malformed ({exc})") from None
    return out


def _span(span: dict[str, Any], processes: dict[str, Any], resources: dict[str, Resource]) -> Span:
    trace_id = short_hex_id(span.get("traceID"), 16, "traceID")
    attributes = _tags(span.get("tags"))
    scope = Scope(lost_by=FORM)
    for name_key, version_key in _SCOPE_KEYS:
        name = attributes.pop(name_key, None)
        version = attributes.pop(version_key, None)
        if isinstance(name, str) and scope.lost_by:
            scope = Scope(name, version if isinstance(version, str) else "")
    for key in _DROPPED_TAGS:
        attributes.pop(key, None)
    kind_tag = attributes.pop("span.kind", None)
    kind = (
        _KINDS.get(kind_tag, SpanKind.UNSPECIFIED)
        if isinstance(kind_tag, str)
        else (SpanKind.UNSPECIFIED)
    )
    status = attributes.pop("otel.status_code", None)
    description = attributes.pop("otel.status_description", None)
    error = attributes.pop("error", None)
    code, message = StatusCode.UNSET, ""
    if status == "OK":
        code = StatusCode.OK
    elif status == "ERROR" or error is True or error == "true":
        code = StatusCode.ERROR
        message = description if isinstance(description, str) else ""
    parent = None
    links = []
    for ref in span.get("references") or ():
        ref_trace = short_hex_id(ref.get("traceID"), 16, "references.traceID")
        ref_span = short_hex_id(ref.get("spanID"), 8, "references.spanID")
        if parent is None and ref.get("refType") == "CHILD_OF" and ref_trace == trace_id:
            parent = ref_span
        else:
            links.append(Link(ref_trace, ref_span, {}))
    if parent is None and span.get("parentSpanID"):  # the UI's own model keeps it too
        parent = short_hex_id(span.get("parentSpanID"), 8, "parentSpanID")
    if parent == "0" * 16:
        parent = None
    events = []
    for log in span.get("logs") or ():
        fields = _tags(log.get("fields"))
        name = fields.pop("event", "")
        events.append(Event(str(name), micros(log.get("timestamp"), "logs.timestamp"), fields))
    start = micros(span.get("startTime"), "startTime")
    duration = micros(span.get("duration"), "duration")
    return Span(
        trace_id,
        short_hex_id(span.get("spanID"), 8, "spanID"),
        parent,
        str(span.get("operationName") or ""),
        kind,
        start,
        start + duration if start is not None and duration is not None else start,
        code,
        message,
        attributes,
        events,
        links,
        _resource(span, processes, resources),
        scope,
    )


def _resource(
    span: dict[str, Any], processes: dict[str, Any], resources: dict[str, Resource]
) -> Resource:
    process_id = span.get("processID")
    key = process_id if isinstance(process_id, str) else ""
    found = resources.get(key) if "process" not in span else None
    if found is not None:
        return found
    process = span.get("process") or processes.get(key) or {}
    attributes = _tags(process.get("tags"))
    name = process.get("serviceName")
    if isinstance(name, str):
        attributes["service.name"] = name
    found = Resource(attributes)
    if "process" not in span:
        resources[key] = found
    return found


def _tags(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag in items or ():
        key = tag["key"]
        if not isinstance(key, str):
            raise DecodeError("tag key: expected a string")
        out[key] = _value(tag.get("type"), tag.get("value"), key)
    return out


def _value(kind: Any, value: Any, key: str) -> Any:
    if kind in (None, "string"):
        return value if isinstance(value, str) or kind is None else str(value)
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).lower() == "true"
    if kind == "int64":
        try:
            return int(value)
        except (TypeError, ValueError):
            raise DecodeError(f"tag {key!r:.60}: int64 value {value!r:.40}") from None
    if kind == "float64":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise DecodeError(f"tag {key!r:.60}: float64 value {value!r:.40}") from None
    if kind == "binary":
        try:
            return base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise DecodeError(f"tag {key!r:.60}: binary value is not base64") from None
    raise DecodeError(f"tag {key!r:.60}: unknown type {kind!r:.40}")
