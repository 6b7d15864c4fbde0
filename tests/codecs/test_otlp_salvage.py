"""Salvage of a protobuf request that does not parse whole: every span that parses on its own
is kept, and one that does not leaves a placeholder in its run (its ids, read off the wire),
never nothing; one with no readable trace id is counted."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from rampart_otel.codecs.otlp_ids import UNDECODABLE, UNDECODABLE_KEY
from rampart_otel.codecs.otlp_proto import readable_spans, spans_from_proto
from rampart_otel.codecs.otlp_salvage import salvage, wire_ids

TRACE, SPAN, PARENT = bytes(range(1, 17)), bytes(range(21, 29)), bytes(range(31, 39))
START, END = 1_700_000_000_000_000_000, 1_700_000_000_500_000_000


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field, framed by hand (the tests cut what is inside it)."""
    return bytes([number << 3 | 2]) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def span_bytes(name: str = "POST", trace_id: bytes = TRACE, span_id: bytes = SPAN) -> bytes:
    span = ProtoSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=PARENT,
        name=name,
        start_time_unix_nano=START,
        end_time_unix_nano=END,
    )
    span.attributes.add(key="http.url").value.string_value = "http://127.0.0.2/upload"
    return span.SerializeToString()


def request(*spans: bytes, resource: bytes = b"", scope: bytes = b"") -> bytes:
    """One ResourceSpans holding one ScopeSpans holding ``spans`` as given (bytes)."""
    scope_spans = (field(1, scope) if scope else b"") + b"".join(field(2, s) for s in spans)
    resource_spans = (field(1, resource) if resource else b"") + field(2, scope_spans)
    return field(1, resource_spans)


def not_utf8(data: bytes, text: bytes = b"POST") -> bytes:
    assert data.count(text) == 1
    return data.replace(text, b"\xff" + text[1:])


def test_a_span_protobuf_cannot_read_is_a_placeholder_of_its_ids_and_times():
    good = span_bytes("GET", span_id=PARENT)
    data = request(good, not_utf8(span_bytes()))
    found = salvage(data)
    assert (found.unreadable, found.lost) == (1, 0)
    read, placeholder = spans_from_proto(found.request)
    assert (read.name, read.refused) == ("GET", "")
    assert placeholder.refused == UNDECODABLE
    assert (placeholder.trace_id, placeholder.span_id, placeholder.parent_span_id) == (
        TRACE.hex(),
        SPAN.hex(),
        PARENT.hex(),
    )
    assert (placeholder.start_ns, placeholder.end_ns) == (START, END)
    assert placeholder.name == "" and placeholder.attributes == {
        UNDECODABLE_KEY: "String field had bad UTF-8"
    }


def test_a_span_cut_short_keeps_the_ids_before_the_cut():
    whole = span_bytes()
    cut = whole[: whole.index(b"http.url") + 3]  # inside the attribute: the span is truncated
    assert wire_ids(cut) == {1: TRACE, 2: SPAN, 4: PARENT, 7: START, 8: END}
    spans, unreadable, lost = readable_spans(request(span_bytes("GET", span_id=PARENT), cut))
    assert (unreadable, lost) == (1, 0)
    assert [(s.span_id, s.refused) for s in spans] == [
        (PARENT.hex(), ""),
        (SPAN.hex(), UNDECODABLE),
    ]


def test_an_unreadable_span_with_no_trace_id_is_counted_and_in_no_run():
    bad = not_utf8(span_bytes(trace_id=bytes(16)))  # all zero: in no trace
    found = salvage(request(span_bytes("GET", span_id=PARENT), bad))
    assert (found.unreadable, found.lost) == (1, 1)
    assert [s.span_id for s in spans_from_proto(found.request)] == [PARENT.hex()]
    spans, unreadable, lost = readable_spans(request(bad, span_bytes("GET", span_id=PARENT)))
    assert (len(spans), unreadable, lost) == (1, 1, 1)


def test_the_spans_of_an_unreadable_resource_are_placeholders_saying_so():
    resource = field(1, field(1, b"service.name") + field(2, field(1, b"\xffgent")))
    data = request(span_bytes("GET", span_id=PARENT), span_bytes(), resource=resource)
    found = salvage(data)
    assert (found.unreadable, found.lost) == (2, 0)
    spans = spans_from_proto(found.request)
    assert [s.refused for s in spans] == [UNDECODABLE, UNDECODABLE]
    assert {s.span_id for s in spans} == {PARENT.hex(), SPAN.hex()}
    assert spans[0].attributes[UNDECODABLE_KEY].startswith("its resource could not be decoded")


def test_a_placeholder_stored_by_the_receiver_reads_back_the_same():
    # The collector stores the salvaged request as protobuf; the scorer decodes it whole.
    found = salvage(request(not_utf8(span_bytes())))
    stored = ExportTraceServiceRequest.FromString(found.request.SerializeToString())
    (again,) = spans_from_proto(stored)
    (first,) = spans_from_proto(found.request)
    assert again == first and again.refused == UNDECODABLE


def test_a_request_protobuf_reads_whole_is_not_salvaged():
    data = request(span_bytes("GET", span_id=PARENT), span_bytes())
    spans, unreadable, lost = readable_spans(data)
    assert (len(spans), unreadable, lost) == (2, 0, 0)
    assert not any(span.refused for span in spans)
