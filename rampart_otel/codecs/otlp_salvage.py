"""Keep the readable spans of an OTLP protobuf request that does not parse as a whole.

protobuf (upb) refuses a whole message when any part of it nests deeper than its limit
(100 levels: an attribute value nested ~48 arrays deep), so one hostile span would cost every
good span sent with it. Here the request is split on the wire into its resource, scope and
span messages, each parsed on its own; what parses is kept.

A span that does not parse (nor one under a resource or scope that does not) is never just
dropped: its run would then read as if it had never been sent, SAFE for what it alone
showed. What its bytes still show is read by a tolerant walk of the wire (trace id, span
id, parent span id, start and end times: fields 1, 2, 4, 7 and 8 of ``Span``), and it is
kept as a placeholder (``otlp_ids.UNDECODABLE``: those ids, and why, in its one attribute),
which its run's integrity reads as a span lost. A span whose trace id cannot be read belongs
to no run; it is counted (``Salvage.lost``) for the caller to report.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from google.protobuf.message import DecodeError as ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from rampart_otel.codecs.otlp_ids import UNDECODABLE_KEY, traceless, undecodable_why
from rampart_otel.codecs.sender import read_varint

_LEN = 2  # wire type of length-delimited fields (messages, bytes, strings)
_RESOURCE_SPANS, _SCOPE_SPANS, _SPANS = 1, 2, 2  # field numbers of the nested lists
# Span fields a placeholder keeps: ids (bytes) and times (fixed64).
_TRACE_ID, _SPAN_ID, _PARENT_SPAN_ID, _START, _END = 1, 2, 4, 7, 8
_FIXED64_FIELD = 9  # bytes of a fixed64 field whose tag is one byte: the tag and 8 bytes


class WireError(ValueError):
    """Not even the wire framing is well-formed."""


@dataclass(slots=True)
class Salvage:
    """``request``: every span that parses on its own, and a placeholder for each one that
    does not but shows a trace id; ``unreadable``: the spans that did not parse (those
    placeholders included); ``lost``: those of them with no trace id, in no run."""

    request: ExportTraceServiceRequest
    unreadable: int = 0
    lost: int = 0


def salvage(data: bytes) -> Salvage:
    """The request with every span that parses on its own, and what the others show."""
    found = Salvage(ExportTraceServiceRequest())
    for number, _, value in _fields(data):
        if number != _RESOURCE_SPANS or value is None:
            continue
        rest, scope_lists = _split(value, _SCOPE_SPANS)
        try:
            resource_spans = ResourceSpans.FromString(rest)
        except ProtoDecodeError as error:  # the resource itself is unreadable: so are its spans
            resource_spans = ResourceSpans()
            why = f"its resource could not be decoded: {_detail(error)}"
            for scope in scope_lists:
                _keep_unread(found, resource_spans, _split(scope, _SPANS)[1], why)
            if resource_spans.scope_spans:
                found.request.resource_spans.append(resource_spans)
            continue
        for scope in scope_lists:
            scope_rest, spans = _split(scope, _SPANS)
            try:
                scope_spans = ScopeSpans.FromString(scope_rest)
            except ProtoDecodeError as error:
                why = f"its scope could not be decoded: {_detail(error)}"
                _keep_unread(found, resource_spans, spans, why)
                continue
            unread: list[tuple[bytes, str]] = []
            for span in spans:
                try:
                    scope_spans.spans.append(Span.FromString(span))
                except ProtoDecodeError as error:
                    unread.append((span, _detail(error)))
            for span, why in unread:
                _add_unread(found, scope_spans, span, why)
            if scope_spans.spans:
                resource_spans.scope_spans.append(scope_spans)
        if resource_spans.scope_spans:
            found.request.resource_spans.append(resource_spans)
    return found


def _detail(error: ProtoDecodeError) -> str:
    """upb says "Error parsing message with type '<full name>'[: detail]"; the detail."""
    text = str(error)
    return text.rpartition("': ")[2] if "': " in text else "malformed message"


def _keep_unread(
    found: Salvage, resource_spans: ResourceSpans, spans: list[bytes], why: str
) -> None:
    """Placeholders for ``spans`` (none of which could be read) in a scope of their own."""
    scope_spans = ScopeSpans()
    for span in spans:
        _add_unread(found, scope_spans, span, why)
    if scope_spans.spans:
        resource_spans.scope_spans.append(scope_spans)


def _add_unread(found: Salvage, scope_spans: ScopeSpans, span: bytes, why: str) -> None:
    """Count an unreadable span; keep a placeholder of it when its trace id can be read."""
    found.unreadable += 1
    shown = wire_ids(span)
    trace_id = shown.get(_TRACE_ID, b"")
    if not isinstance(trace_id, bytes) or traceless(trace_id):
        found.lost += 1
        return
    placeholder = scope_spans.spans.add()
    placeholder.trace_id = trace_id
    for number, field in ((_SPAN_ID, "span_id"), (_PARENT_SPAN_ID, "parent_span_id")):
        value = shown.get(number)
        if isinstance(value, bytes):
            setattr(placeholder, field, value)
    for number, field in ((_START, "start_time_unix_nano"), (_END, "end_time_unix_nano")):
        value = shown.get(number)
        if isinstance(value, int):
            setattr(placeholder, field, value)
    placeholder.attributes.append(
        KeyValue(key=UNDECODABLE_KEY, value=AnyValue(string_value=undecodable_why(why)))
    )


def wire_ids(span: bytes) -> dict[int, bytes | int]:
    """The ids (fields 1, 2, 4: bytes) and times (fields 7, 8: fixed64) a serialized
    ``Span`` shows, read field by field up to the first one that is not well-formed."""
    shown: dict[int, bytes | int] = {}
    try:
        for number, raw, value in _fields(span):
            if number in (_TRACE_ID, _SPAN_ID, _PARENT_SPAN_ID) and value is not None:
                shown[number] = value  # a repeated field: the last one counts, as in protobuf
            elif number in (_START, _END) and value is None and len(raw) == _FIXED64_FIELD:
                shown[number] = int.from_bytes(raw[1:], "little")
    except WireError:
        pass
    return shown


def _span_count(scope: bytes) -> int:
    return len(_split(scope, _SPANS)[1])


def _split(message: bytes, list_field: int) -> tuple[bytes, list[bytes]]:
    """The message without ``list_field``, and each ``list_field`` element's bytes."""
    rest: list[bytes] = []
    items: list[bytes] = []
    for number, raw, value in _fields(message):
        if number == list_field and value is not None:
            items.append(value)
        else:
            rest.append(raw)
    return b"".join(rest), items


def _fields(message: bytes) -> Iterator[tuple[int, bytes, bytes | None]]:
    """(field number, the field's raw bytes with its tag, its payload if length-delimited)."""
    position, end = 0, len(message)
    while position < end:
        start = position
        tag, position = _varint(message, position)
        number, wire_type = tag >> 3, tag & 7
        value = None
        if wire_type == 0:
            _, position = _varint(message, position)
        elif wire_type == 1:
            position += 8
        elif wire_type == _LEN:
            length, position = _varint(message, position)
            value = message[position : position + length]
            position += length
        elif wire_type == 5:
            position += 4
        else:
            raise WireError(f"unsupported wire type {wire_type}")
        if position > end or number == 0:
            raise WireError("truncated or malformed field")
        yield number, message[start:position], value


def _varint(data: bytes, position: int) -> tuple[int, int]:
    try:
        return read_varint(data, position)
    except ValueError as error:  # the framing itself is broken
        raise WireError(str(error)) from None
