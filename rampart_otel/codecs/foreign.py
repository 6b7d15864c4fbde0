"""Binary trace forms recognised but not read, named with the way to get OTLP instead.

Only consulted for bytes that are not OTLP (its protobuf decoder failed, or the first byte
is no OTLP's), so a guess here can never cost a readable file:

- Jaeger protobuf (``api_v2``: ``SpansResponseChunk``/``Trace`` of ``Span``, whose first
  fields are a 16-byte ``trace_id`` and an 8-byte ``span_id``);
- Zipkin proto3 (``ListOfSpans``: ``trace_id`` of 8 or 16 bytes, then 8-byte ids);
- Zipkin Thrift (TBinaryProtocol: a list of structs, or one struct, whose field 1 is the
  i64 ``trace_id``).
"""

from __future__ import annotations

__all__ = ["binary_form"]

JAEGER_PROTO = (
    "Jaeger protobuf (api_v2) is not supported: get the trace as JSON from Jaeger's query "
    "API (GET /api/traces/{traceID}, or /api/v3/traces/{traceID} for OTLP JSON), or export "
    "OTLP from the application"
)
ZIPKIN_PROTO = (
    "Zipkin proto3 is not supported: get the trace as v2 JSON (GET /api/v2/trace/{traceId}), "
    "or export OTLP from the application"
)
ZIPKIN_THRIFT = (
    "Zipkin Thrift (v1) is not supported: get the trace as v2 JSON "
    "(GET /api/v2/trace/{traceId}), or export OTLP from the application"
)


def binary_form(payload: bytes) -> str | None:
    """The one-line refusal for a recognised non-OTLP binary form, or None."""
    head = payload[:64]
    if head[:1] == b"\x0c" and len(head) >= 8 and head[5:8] == b"\x0a\x00\x01":
        return ZIPKIN_THRIFT  # list<Span>: element type struct, i32 count, field 1 i64
    if head[:3] == b"\x0a\x00\x01" and len(head) >= 11:
        return ZIPKIN_THRIFT  # one Span struct
    if head[:1] != b"\x0a":
        return None
    i = 1
    while i < len(head) and head[i] & 0x80:  # the repeated span's length varint
        i += 1
    span = head[i + 1 :]
    if span[:1] != b"\x0a" or span[1:2] not in (b"\x08", b"\x10"):
        return None
    n = 2 + span[1]  # after the trace id: 8 bytes (Zipkin's 64-bit ids) or 16
    if span[n : n + 2] == b"\x1a\x08":
        return ZIPKIN_PROTO  # a root span: trace_id, then id (field 3)
    if span[n : n + 2] != b"\x12\x08":
        return None
    # Field 3 after the 8-byte field 2 is Zipkin's 8-byte id, then kind, name or times;
    # Jaeger's operation name, then references, flags, times or tags.
    if span[n + 10 : n + 12] == b"\x1a\x08" and span[n + 20 : n + 21] in _ZIPKIN_NEXT:
        return ZIPKIN_PROTO
    if span[1:2] == b"\x10" and span[n + 10 : n + 11] == b"\x1a":
        return JAEGER_PROTO
    return None


_ZIPKIN_NEXT = (b"\x20", b"\x2a", b"\x31", b"\x39", b"")
