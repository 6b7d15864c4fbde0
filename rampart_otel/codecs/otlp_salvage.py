"""Keep the readable spans of an OTLP protobuf request that does not parse as a whole.

protobuf (upb) refuses a whole message when any part of it nests deeper than its limit
(100 levels: an attribute value nested ~48 arrays deep), so one hostile span would cost every
good span sent with it. Here the request is split on the wire into its resource, scope and
span messages, each parsed on its own; what parses is kept, each span that does not is
counted as rejected.
"""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.message import DecodeError as ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

_LEN = 2  # wire type of length-delimited fields (messages, bytes, strings)
_RESOURCE_SPANS, _SCOPE_SPANS, _SPANS = 1, 2, 2  # field numbers of the nested lists


class WireError(ValueError):
    """Not even the wire framing is well-formed."""


def salvage(data: bytes) -> tuple[ExportTraceServiceRequest, int]:
    """The request with every span that parses on its own, and how many spans did not."""
    out = ExportTraceServiceRequest()
    rejected = 0
    for number, _, value in _fields(data):
        if number != _RESOURCE_SPANS or value is None:
            continue
        rest, scope_lists = _split(value, _SCOPE_SPANS)
        try:
            resource_spans = ResourceSpans.FromString(rest)
        except ProtoDecodeError:  # the resource itself is unreadable: so are its spans
            rejected += sum(_span_count(scope) for scope in scope_lists)
            continue
        for scope in scope_lists:
            scope_rest, spans = _split(scope, _SPANS)
            try:
                scope_spans = ScopeSpans.FromString(scope_rest)
            except ProtoDecodeError:
                rejected += len(spans)
                continue
            for span in spans:
                try:
                    scope_spans.spans.append(Span.FromString(span))
                except ProtoDecodeError:
                    rejected += 1
            if scope_spans.spans:
                resource_spans.scope_spans.append(scope_spans)
        if resource_spans.scope_spans:
            out.resource_spans.append(resource_spans)
    return out, rejected


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
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise WireError("truncated or overlong varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
