"""Salvage of an OTLP JSON Lines line that does not parse: each span whose trace id its text
shows becomes a placeholder (ids and times as written, no content), never nothing; text of
any other kind gives none."""

from __future__ import annotations

import json

from rampart_otel.codecs.json_salvage import salvaged_spans
from rampart_otel.codecs.otlp_ids import UNDECODABLE, UNDECODABLE_KEY

TRACE, OTHER = "0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN, PARENT, SECOND = "b7ad6b7169203331", "00f067aa0ba902b7", "53995c3f42cd8ad8"


def line(*spans: dict) -> str:
    return json.dumps(
        {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]}
    )


def span(trace: str = TRACE, span_id: str = SPAN, **more: object) -> dict:
    return {"traceId": trace, "spanId": span_id, **more}


def test_a_line_cut_short_keeps_the_ids_and_times_it_shows():
    text = line(
        span(
            parentSpanId=PARENT,
            name="DELETE",
            startTimeUnixNano="1700000000000000000",
            endTimeUnixNano=1700000000500000000,
            attributes=[{"key": "db.statement", "value": {"stringValue": "DELETE FROM notes"}}],
        )
    )
    cut = text[: text.index("DELETE FROM")]
    (kept,) = salvaged_spans(cut.encode(), "invalid JSON: cut")
    assert (kept.trace_id, kept.span_id, kept.parent_span_id) == (TRACE, SPAN, PARENT)
    assert (kept.start_ns, kept.end_ns) == (1700000000000000000, 1700000000500000000)
    assert kept.refused == UNDECODABLE and kept.attributes == {UNDECODABLE_KEY: "invalid JSON: cut"}
    assert kept.name == "" and kept.events == []  # nothing of its content


def test_each_span_is_paired_with_its_own_ids_in_any_key_order():
    first = span(parentSpanId=PARENT)
    second = {"spanId": SECOND, "name": "x", "traceId": OTHER}  # id before the trace id
    text = line(first, second)
    kept = salvaged_spans(text[:-5].encode(), "cut")
    assert [(s.trace_id, s.span_id, s.parent_span_id) for s in kept] == [
        (TRACE, SPAN, PARENT),
        (OTHER, SECOND, None),
    ]


def test_cut_before_its_span_id_a_span_still_stands_for_its_trace():
    text = line(span())
    cut = text[: text.index('"spanId"')]
    (kept,) = salvaged_spans(cut.encode(), "cut")
    assert kept.trace_id == TRACE and len(kept.span_id) == 16 and kept.span_id != "0" * 16


def test_snake_case_keys_are_read_too():
    head = '{"resource_spans": [{"scope_spans": [{"spans": [{'
    text = head + f'"trace_id": "{TRACE}", "span_id": "{SPAN}"'
    (kept,) = salvaged_spans(text.encode(), "cut")
    assert (kept.trace_id, kept.span_id) == (TRACE, SPAN)


def test_text_that_is_no_otlp_trace_data_gives_nothing():
    # An OTLP log record carries a trace id too, but says nothing of a trace's spans.
    logs = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [span()]}]}]})
    assert salvaged_spans(logs[:-3].encode(), "cut") == []
    assert salvaged_spans(b"\x00\xff garbage", "cut") == []


def test_ids_that_are_not_hex_of_the_right_length_are_not_taken():
    text = line(span(trace="AfdlGRbNQ92ESOshHIAxnA==", span_id="t61rcWkgMzE="))
    assert salvaged_spans(text[:-3].encode(), "cut") == []


def test_a_hostile_line_of_many_ids_keeps_each_span_once():
    # Pairing looks each id up by position (bisect), so 100,000 spans are one pass, not
    # 10^10 comparisons; a span written twice is kept once.
    spans = [span(span_id=f"{index:016x}") for index in range(1, 100_001)]
    text = line(*spans, span(span_id="0000000000000001"))[:-3].encode()
    kept = salvaged_spans(text, "cut")
    assert len(kept) == 100_000
    assert kept[-1].span_id == f"{100_000:016x}"
