"""Binary OTLP protobuf ↔ :class:`~rampart_otel.model.Span`, and Span → OTLP/JSON.

Decoding is the receive path (OTLP/HTTP protobuf, OTLP/gRPC, ``proto`` trace files).
Encoding is for the collector's own segments and for replay: it rebuilds one
ResourceSpans per distinct resource object and one ScopeSpans per scope, so decode →
encode → decode round-trips.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as _ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

from rampart_otel.codecs.otlp_ids import (
    UNDECODABLE_KEY,
    IdProblem,
    id_problem,
    placeholder,
    traceless,
    undecodable,
)
from rampart_otel.codecs.otlp_json import repeated_keys
from rampart_otel.codecs.otlp_salvage import WireError, salvage
from rampart_otel.codecs.sender import sender_note
from rampart_otel.errors import DecodeError
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Attributes, Event, Link, Resource, Scope, Span, SpanKind, StatusCode

__all__ = [
    "DecodeError",
    "readable_spans",
    "request_to_json_dict",
    "spans_from_proto",
    "spans_from_proto_bytes",
    "spans_to_json_dict",
    "spans_to_proto_request",
]

_KINDS = tuple(SpanKind)  # indexed by the OTLP enum number
_STATUSES = tuple(StatusCode)
_KIND_NUMBER = {name: i for i, name in enumerate(_KINDS)}
_STATUS_NUMBER = {name: i for i, name in enumerate(_STATUSES)}
_ZERO_SPAN_ID = bytes(8)


def spans_from_proto_bytes(
    data: bytes | bytearray | memoryview, owns: Callable[[bytes], bool] | None = None
) -> list[Span]:
    """Decode a serialized ExportTraceServiceRequest or TracesData (same wire format);
    with ``owns``, only the spans it takes (``spans_from_proto``)."""
    try:
        request = ExportTraceServiceRequest.FromString(bytes(data))
    except _ProtoDecodeError as exc:
        # upb says "Error parsing message with type '<full name>'[: detail]"; keep the detail.
        detail = str(exc).rpartition("': ")[2] if "': " in str(exc) else "malformed message"
        raise DecodeError(f"invalid OTLP protobuf: {detail}") from None
    except RecursionError:
        raise DecodeError("invalid OTLP protobuf: nested too deeply") from None
    return _sent_by(data, spans_from_proto(request, owns))


def _sent_by(data: bytes | bytearray | memoryview, spans: list[Span]) -> list[Span]:
    """``spans`` with the tenant and sender of the collector's note on ``data``, if any
    (``codecs/sender``): set as each span is built, before anyone reads it."""
    note = sender_note(data) if spans else None
    if note is not None:
        sender = note.describe()
        for span in spans:
            span.tenant = note.tenant
            span.sender = sender
    return spans


def spans_from_proto(
    request: ExportTraceServiceRequest | TracesData, owns: Callable[[bytes], bool] | None = None
) -> list[Span]:
    """Convert a parsed message (as the gRPC service hands it over) to spans.

    ``owns``: only the spans whose trace id (16 raw bytes) it accepts, one scorer shard's
    share of a stored record; only those are built (their resource and scope too, on the
    first), so a record none of whose traces the shard owns costs a look at each trace id.
    A span with no valid trace id is nobody's (the scorer drops it anyway)."""
    out: list[Span] = []
    append = out.append
    ri = si = pi = -1
    try:
        # The loop indices are read by the error handler below, to say where.
        for ri, rs in enumerate(request.resource_spans):  # noqa: B007
            si = pi = -1
            resource = None if owns else _resource(rs)
            for si, ss in enumerate(rs.scope_spans):  # noqa: B007
                pi = -1
                scope = None if owns else Scope(ss.scope.name, ss.scope.version)
                for pi, sp in enumerate(ss.spans):  # noqa: B007
                    if owns is not None:
                        trace_id = sp.trace_id
                        if len(trace_id) != 16 or not owns(trace_id):
                            continue
                        if resource is None:
                            resource = _resource(rs)
                        if scope is None:
                            scope = Scope(ss.scope.name, ss.scope.version)
                    append(_span(sp, resource, scope))  # type: ignore[arg-type]
    except DecodeError as exc:
        where = f"resourceSpans[{ri}]"
        if si >= 0:
            where += f".scopeSpans[{si}]"
        if pi >= 0:
            where += f".spans[{pi}]"
        raise DecodeError(f"{where}: {exc.message}") from None
    except RecursionError:
        raise DecodeError(f"resourceSpans[{ri}]: values nested too deeply") from None
    return out


def _resource(rs: Any) -> Resource:
    res = rs.resource
    return Resource(_attrs(res.attributes), res.dropped_attributes_count)


def readable_spans(data: bytes) -> tuple[list[Span], int, int]:
    """Every span of a serialized request, those that cannot be decoded on their own as
    placeholders (``codecs/otlp_salvage``); how many could not be decoded, and how many of
    those showed no trace id, so are in no run (``lost``).

    The fallback for a record :func:`spans_from_proto_bytes` refuses as a whole (the
    scorer's stored records, trace files): one unreadable span must not cost the others
    their verdicts, nor leave its run looking complete.
    """
    try:
        request = ExportTraceServiceRequest.FromString(bytes(data))
        unreadable = lost = 0
    except (_ProtoDecodeError, RecursionError):
        try:
            found = salvage(bytes(data))
        except WireError:
            return [], 1, 1
        request, unreadable, lost = found.request, found.unreadable, found.lost
    out: list[Span] = []
    for rs in request.resource_spans:
        res = rs.resource
        resource = Resource(_attrs(res.attributes), res.dropped_attributes_count)
        for ss in rs.scope_spans:
            scope = Scope(ss.scope.name, ss.scope.version)
            for sp in ss.spans:
                try:
                    out.append(_span(sp, resource, scope))
                except (DecodeError, RecursionError) as error:
                    why = error.message if isinstance(error, DecodeError) else "nested too deeply"
                    unreadable += 1
                    kept = undecodable(
                        sp.trace_id,
                        sp.span_id,
                        sp.parent_span_id,
                        sp.start_time_unix_nano or None,
                        sp.end_time_unix_nano or None,
                        resource,
                        scope,
                        why,
                    )
                    if traceless(sp.trace_id):
                        lost += 1
                    else:
                        out.append(kept)
    return _sent_by(data, out), unreadable, lost


def _span(sp: Any, resource: Resource, scope: Scope) -> Span:
    trace_id = sp.trace_id
    span_id = sp.span_id
    parent = sp.parent_span_id
    links = sp.links
    problem = id_problem(
        trace_id, span_id, parent, [(ln.trace_id, ln.span_id) for ln in links] if links else ()
    )
    start_ns = sp.start_time_unix_nano or None  # 0 is proto3's "not set"
    end_ns = sp.end_time_unix_nano or None
    attributes = _attrs(sp.attributes) if problem is not IdProblem.TRACE_ID else {}
    why = attributes.get(UNDECODABLE_KEY)
    if why is not None:  # a placeholder of a span that could not be decoded (otlp_salvage)
        return undecodable(trace_id, span_id, parent, start_ns, end_ns, resource, scope, why)
    if problem is not None:  # the OTLP id rule (codecs/otlp_ids.py): refused, kept as a mark
        return placeholder(
            problem,
            trace_id,
            span_id,
            parent,
            [(ln.trace_id, ln.span_id) for ln in links],
            start_ns,
            end_ns,
            resource,
            scope,
        )
    parent_hex = parent.hex() if parent and parent != _ZERO_SPAN_ID else None
    kind = sp.kind
    status = sp.status
    code = status.code
    events = [_event(ev) for ev in sp.events] if sp.events else []
    repeated = repeated_keys(sp.attributes, len(attributes)) if sp.attributes else []
    for event, raw in zip(events, sp.events, strict=True):
        if raw.attributes:
            repeated += repeated_keys(raw.attributes, len(event.attributes))
    return Span(
        trace_id.hex(),
        span_id.hex(),
        parent_hex,
        sp.name,
        _KINDS[kind] if 0 <= kind < 6 else SpanKind.UNSPECIFIED,  # proto3 enums are open
        start_ns,
        end_ns,
        _STATUSES[code] if 0 <= code < 3 else StatusCode.UNSET,
        status.message,
        attributes,
        events,
        [_link(ln) for ln in links] if links else [],
        resource,
        scope,
        sp.dropped_attributes_count,
        sp.dropped_events_count,
        sp.dropped_links_count,
        sp.flags,
        repeated_keys=tuple(dict.fromkeys(repeated)) if repeated else (),
    )


def _event(ev: Any) -> Event:
    return Event(
        ev.name, ev.time_unix_nano or None, _attrs(ev.attributes), ev.dropped_attributes_count
    )


def _link(ln: Any) -> Link:
    return Link(ln.trace_id.hex(), ln.span_id.hex(), _attrs(ln.attributes))


def _attrs(kvs: Any) -> Attributes:
    out: Attributes = {}
    for kv in kvs:
        av = kv.value
        which = av.WhichOneof("value")
        if which == "string_value":
            out[kv.key] = av.string_value
        elif which == "int_value":
            out[kv.key] = av.int_value
        else:
            out[kv.key] = _value(av, which)
    return out


def _value(av: Any, which: str | None) -> Any:
    if which == "string_value":
        return av.string_value
    if which is None:
        return None
    if which == "int_value":
        return av.int_value
    if which == "bool_value":
        return av.bool_value
    if which == "double_value":
        return av.double_value
    if which == "array_value":
        return [_value(x, x.WhichOneof("value")) for x in av.array_value.values]
    if which == "kvlist_value":
        return _attrs(av.kvlist_value.values)
    if which == "bytes_value":
        return av.bytes_value
    raise DecodeError(f"unsupported AnyValue member {which!r}")


# ---- encoding -------------------------------------------------------------------------


def spans_to_proto_request(spans: Iterable[Span]) -> ExportTraceServiceRequest:
    """Spans → one request; spans sharing a Resource object share a ResourceSpans block."""
    request = ExportTraceServiceRequest()
    # Keyed by id(); the Resource is kept in the value so its id cannot be reused meanwhile.
    blocks: dict[int, tuple[Resource, Any, dict[tuple[str, str], Any]]] = {}
    for span in spans:
        resource = span.resource
        block = blocks.get(id(resource))
        if block is None:
            rs = request.resource_spans.add()
            rs.resource.SetInParent()
            _fill_text_safe(rs.resource.attributes, resource.attributes)
            rs.resource.dropped_attributes_count = resource.dropped_attributes_count
            block = blocks[id(resource)] = (resource, rs, {})
        scope_key = (span.scope.name, span.scope.version)
        ss = block[2].get(scope_key)
        if ss is None:
            ss = block[1].scope_spans.add()
            ss.scope.name, ss.scope.version = _scrub(scope_key)
            block[2][scope_key] = ss
        ps = ss.spans.add()
        try:
            _encode_span(ps, span)
        except UnicodeEncodeError:
            ps.Clear()
            _encode_span(ps, _scrubbed_span(span))
    return request


# A protobuf string must be valid UTF-8; text decoded from OTLP/JSON can hold a lone
# surrogate ("\ud800"). Such text is sent with U+FFFD in its place (the rare path only).
_SURROGATE = LazyPattern("[\ud800-\udfff]")


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list | tuple):
        return [_scrub(item) for item in value]
    if isinstance(value, dict):
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    return value


def _scrubbed_span(span: Span) -> Span:
    return dataclasses.replace(
        span,
        name=_scrub(span.name),
        status_message=_scrub(span.status_message),
        attributes=_scrub(span.attributes),
        events=[
            dataclasses.replace(e, name=_scrub(e.name), attributes=_scrub(e.attributes))
            for e in span.events
        ],
        links=[dataclasses.replace(ln, attributes=_scrub(ln.attributes)) for ln in span.links],
        scope=Scope(_scrub(span.scope.name), _scrub(span.scope.version)),
    )


def _fill_text_safe(kvs: Any, attributes: Attributes) -> None:
    try:
        _fill(kvs, attributes)
    except UnicodeEncodeError:
        del kvs[:]
        _fill(kvs, _scrub(attributes))


def _encode_span(ps: Any, span: Span) -> None:
    ps.trace_id = bytes.fromhex(span.trace_id)
    ps.span_id = bytes.fromhex(span.span_id)
    if span.parent_span_id:
        ps.parent_span_id = bytes.fromhex(span.parent_span_id)
    ps.name = span.name
    ps.kind = _KIND_NUMBER.get(span.kind, 0)
    if span.start_ns:
        ps.start_time_unix_nano = span.start_ns
    if span.end_ns:
        ps.end_time_unix_nano = span.end_ns
    status = ps.status
    status.SetInParent()  # present even when UNSET, as the SDK and the Collector write it
    status.code = _STATUS_NUMBER.get(span.status_code, 0)
    status.message = span.status_message
    _fill(ps.attributes, span.attributes)
    for event in span.events:
        pe = ps.events.add()
        pe.name = event.name
        if event.time_ns:
            pe.time_unix_nano = event.time_ns
        _fill(pe.attributes, event.attributes)
        pe.dropped_attributes_count = event.dropped_attributes_count
    for link in span.links:
        pl = ps.links.add()
        pl.trace_id = bytes.fromhex(link.trace_id)
        pl.span_id = bytes.fromhex(link.span_id)
        _fill(pl.attributes, link.attributes)
    ps.dropped_attributes_count = span.dropped_attributes_count
    ps.dropped_events_count = span.dropped_events_count
    ps.dropped_links_count = span.dropped_links_count
    ps.flags = span.flags


def _fill(kvs: Any, attributes: Attributes) -> None:
    for key, value in attributes.items():
        kv: KeyValue = kvs.add()
        kv.key = key
        _set_value(kv.value, value)


def _set_value(av: AnyValue, value: Any) -> None:
    if value is None:
        return  # the empty AnyValue
    if isinstance(value, str):
        av.string_value = value
    elif isinstance(value, bool):
        av.bool_value = value
    elif isinstance(value, int):
        if not -(1 << 63) <= value < 1 << 63:
            raise ValueError(f"integer attribute out of int64 range: {value}")
        av.int_value = value
    elif isinstance(value, float):
        av.double_value = value
    elif isinstance(value, bytes | bytearray | memoryview):
        av.bytes_value = bytes(value)
    elif isinstance(value, list | tuple):
        array = av.array_value
        array.SetInParent()
        for item in value:
            _set_value(array.values.add(), item)
    elif isinstance(value, dict):
        kvlist = av.kvlist_value
        kvlist.SetInParent()
        _fill(kvlist.values, value)
    else:
        raise TypeError(f"cannot encode attribute value of type {type(value).__name__}")


def request_to_json_dict(request: ExportTraceServiceRequest | TracesData) -> dict[str, Any]:
    """OTLP/JSON as the spec writes it: camelCase, hex ids, enum ints, int64 as strings."""
    doc = json_format.MessageToDict(request, use_integers_for_enums=True)
    for rs in doc.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for sp in ss.get("spans", ()):
                _hex_ids(sp)
                for link in sp.get("links", ()):
                    _hex_ids(link)
    return doc


def spans_to_json_dict(spans: Iterable[Span]) -> dict[str, Any]:
    """Spans → an OTLP/JSON ExportTraceServiceRequest document."""
    return request_to_json_dict(spans_to_proto_request(spans))


def _hex_ids(obj: dict[str, Any]) -> None:
    # protobuf's JSON mapping writes bytes as base64; OTLP/JSON wants ids in hex.
    for key in ("traceId", "spanId", "parentSpanId"):
        value = obj.get(key)
        if value:
            obj[key] = base64.b64decode(value).hex()


def trace_ids_of_proto(data: bytes) -> tuple[set[str], int] | None:
    """The trace ids (lowercase hex) and span count of one serialized request; None when
    it does not parse (the caller then lets every worker decode it, and report its error)."""
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (_ProtoDecodeError, RecursionError):
        return None
    ids: set[str] = set()
    count = 0
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for sp in ss.spans:
                trace_id = sp.trace_id
                if len(trace_id) != 16:
                    return None
                ids.add(trace_id.hex())
                count += 1
    return ids, count
