"""Zipkin v2 JSON (a list of spans) → :class:`~rampart_otel.model.Span`.

Read as the OpenTelemetry specification's Zipkin exporter mapping wrote it, backwards:
``localEndpoint.serviceName`` is the resource's ``service.name``; ``kind`` absent is
INTERNAL; ``timestamp`` and ``duration`` are microseconds; ``tags`` are the attributes,
every value a string (numbers and booleans as their text, arrays as JSON lists); the
tags ``otel.scope.name``/``otel.scope.version`` (or the older ``otel.library.*``) are the
instrumentation scope, ``otel.status_code`` and ``error`` the status,
``otel.dropped_*_count`` the dropped counts, and are taken out of the attributes; each
annotation is an event, its value ``{"<event name>": {<attributes>}}`` as JSON (the
Python exporter) or the event's name.

What the form loses: string values past an exporter's tag limit (the Python exporter's
``max_tag_value_length``, off by default, cuts every tag there silently: when two or more
different values share the longest length in a document, those tags are marked as possibly
cut, ``Span.cut_keys``), attribute types (a tag is text, whatever it was: ``true`` and
``false`` are read back as booleans, numbers and arrays stay text), links, every resource
attribute but ``service.name`` as such (the Python exporter copies them into
each span's tags, where they stay), time below the microsecond, and, when no scope tag
is there, the instrumentation scope. A Zipkin v1 span (``binaryAnnotations``, endpoints on
annotations) is recognised and refused.
"""

from __future__ import annotations

import json
from typing import Any

from rampart_otel.codecs.foreign_fields import micros, short_hex_id
from rampart_otel.errors import DecodeError
from rampart_otel.model import Event, Resource, Scope, Span, SpanKind, StatusCode

__all__ = ["FORM", "is_zipkin_span", "spans_from_zipkin"]

FORM = "Zipkin JSON"
V1_REFUSED = (
    "Zipkin v1 JSON is not supported: ask Zipkin for v2 JSON (GET /api/v2/trace/{traceId}) "
    "or export OTLP from the application"
)

_BOOLS = {"true": True, "false": False}
# Values shorter than this are never taken for cut: no exporter limits tags that short.
MIN_LIMIT = 32

_KINDS = {
    "CLIENT": SpanKind.CLIENT,
    "SERVER": SpanKind.SERVER,
    "PRODUCER": SpanKind.PRODUCER,
    "CONSUMER": SpanKind.CONSUMER,
}
_SCOPE_KEYS = (
    ("otel.scope.name", "otel.scope.version"),
    ("otel.library.name", "otel.library.version"),
)
_DROPPED = (
    "otel.dropped_attributes_count",
    "otel.dropped_events_count",
    "otel.dropped_links_count",
)


def is_zipkin_span(obj: Any) -> bool:
    """Whether a JSON value is one Zipkin span (v2, or v1 to be refused by name)."""
    return isinstance(obj, dict) and "traceId" in obj and "id" in obj and "spanId" not in obj


def spans_from_zipkin(items: list[Any], resources: dict[str, Resource]) -> list[Span]:
    """A list of Zipkin spans (or a list of traces, each a list, as ``/api/v2/traces`` answers)."""
    spans = _spans(items, resources)
    _mark_cut(spans)
    return spans


def _mark_cut(spans: list[Span]) -> None:
    """Tags at a length limit: several different values exactly as long as the longest."""
    longest: dict[int, set[str]] = {}
    for span in spans:
        for value in span.attributes.values():
            if isinstance(value, str) and len(value) >= MIN_LIMIT:
                longest.setdefault(len(value), set()).add(value)
    if not longest:
        return
    limit = max(longest)
    if len(longest[limit]) < 2:
        return
    for span in spans:
        keys = tuple(
            k for k, v in span.attributes.items() if isinstance(v, str) and len(v) == limit
        )
        if keys:
            span.cut_keys = keys


def _spans(items: list[Any], resources: dict[str, Resource]) -> list[Span]:
    out: list[Span] = []
    for index, item in enumerate(items):
        group = item if isinstance(item, list) else [item]  # a trace of /api/v2/traces
        for inner, span in enumerate(group):
            where = f"[{index}][{inner}]" if group is item else f"[{index}]"
            try:
                if not is_zipkin_span(span):
                    raise DecodeError("expected a Zipkin span (traceId, id)")
                if "binaryAnnotations" in span or _v1_annotations(span):
                    raise DecodeError(V1_REFUSED)
                out.append(_span(span, resources))
            except DecodeError as exc:
                raise DecodeError(f"{FORM}: span {where}: {exc.message}") from None
            except (TypeError, AttributeError, KeyError, ValueError) as exc:
                raise DecodeError(f"{FORM}: span {where}: malformed ({exc})") from None
    return out


def _v1_annotations(item: dict[str, Any]) -> bool:
    """Zipkin v1 puts an endpoint on each annotation; v2 has one ``localEndpoint``."""
    return "localEndpoint" not in item and any(
        isinstance(a, dict) and "endpoint" in a for a in item.get("annotations") or ()
    )


def _span(item: dict[str, Any], resources: dict[str, Resource]) -> Span:
    tags = item.get("tags") or {}
    if not isinstance(tags, dict):
        raise DecodeError("tags: expected an object")
    # "true"/"false" were booleans (the mapping writes them so): read back, so a flag such as
    # a content-truncation marker is not missed. Numbers stay text: no reading needs them
    # typed that does not parse them itself.
    attributes = {k: _BOOLS.get(v, v) if isinstance(v, str) else v for k, v in tags.items()}
    scope = Scope(lost_by=FORM)
    for name_key, version_key in _SCOPE_KEYS:
        name = attributes.pop(name_key, None)
        version = attributes.pop(version_key, None)
        if isinstance(name, str) and scope.lost_by:
            scope = Scope(name, version if isinstance(version, str) else "")
    code = StatusCode.UNSET
    message = ""
    status = attributes.pop("otel.status_code", None)
    error = attributes.pop("error", None)
    description = attributes.pop("otel.status_description", None)
    if status == "OK":
        code = StatusCode.OK
    elif status == "ERROR" or error is not None:
        code = StatusCode.ERROR
        message = str(description if description is not None else error or "")
    dropped = [_count(attributes.pop(key, None), key) for key in _DROPPED]
    start = micros(item.get("timestamp"), "timestamp")
    duration = micros(item.get("duration"), "duration")
    events = [_event(a) for a in item.get("annotations") or ()]
    parent = item.get("parentId")
    return Span(
        short_hex_id(item.get("traceId"), 16, "traceId"),
        short_hex_id(item.get("id"), 8, "id"),
        short_hex_id(parent, 8, "parentId") if parent else None,
        str(item.get("name") or ""),
        _KINDS.get(item.get("kind") or "", SpanKind.INTERNAL),
        start,
        start + duration if start is not None and duration is not None else start,
        code,
        message,
        attributes,
        events,
        [],
        _resource(item.get("localEndpoint"), resources),
        scope,
        dropped[0],
        dropped[1],
        dropped[2],
    )


def _resource(endpoint: Any, resources: dict[str, Resource]) -> Resource:
    name = endpoint.get("serviceName") if isinstance(endpoint, dict) else None
    key = name if isinstance(name, str) else ""
    found = resources.get(key)
    if found is None:
        found = resources[key] = Resource({"service.name": name} if key else {})
    return found


def _event(annotation: Any) -> Event:
    if not isinstance(annotation, dict):
        raise DecodeError("annotations: expected objects")
    value = annotation.get("value")
    time = micros(annotation.get("timestamp"), "annotations.timestamp")
    if isinstance(value, str) and value.startswith("{"):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and len(decoded) == 1:
            ((name, attrs),) = decoded.items()
            if isinstance(attrs, dict):
                return Event(name, time, attrs)
    return Event(str(value or ""), time, {})


def _count(value: Any, field: str) -> int:
    if value is None:
        return 0
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        raise DecodeError(f"{field}: expected a count, got {value!r:.60}") from None
