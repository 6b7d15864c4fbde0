"""The refusal's one line: each rule broken, counted, and for spans that could not be
decoded, why, and how many of them were in no run."""

from __future__ import annotations

from dataclasses import replace

from span_factory import mk

from rampart_otel.codecs.otlp_ids import (
    UNDECODABLE,
    UNDECODABLE_KEY,
    IdProblem,
    in_no_trace,
    kept_spans,
    refusal_message,
    refusal_of,
)


def test_a_refusal_names_each_rule_and_why_a_span_could_not_be_decoded():
    message = refusal_message(
        [UNDECODABLE, IdProblem.SPAN_ID, UNDECODABLE], 9, ["spans[0]: name: bad"], lost=1
    )
    assert message == (
        "3 of 9 spans refused: a span must decode on its own (2): spans[0]: name: bad; 1 of "
        "them with no readable trace id, in no run; span id must be 8 bytes, not all zero (1) "
        "[OTLP trace.proto: an id of all zeroes or of another length is invalid]; their "
        "traces are scored without their content, as incomplete"
    )
    only_lost = refusal_message([UNDECODABLE], 2, ["x"], lost=1)
    assert only_lost.endswith("in no run") and "[OTLP" not in only_lost


def test_an_undecodable_placeholder_with_no_trace_id_is_counted_not_kept():
    why = {UNDECODABLE_KEY: "spans[1]: traceId: expected 32 hex digits"}
    placed = replace(mk("s1", "", why, trace_id="ab" * 16), refused=UNDECODABLE)
    lost = replace(mk("s0", "", why, trace_id=""), span_id="", refused=UNDECODABLE)
    good = mk("s2", "ok", trace_id="ab" * 16)
    assert (in_no_trace(placed), in_no_trace(lost)) == (False, True)
    kept, refused = kept_spans([placed, lost, good])
    assert kept == [placed, good] and refused == [placed, lost]
    assert refusal_of(refused, 3).startswith(
        "2 of 3 spans refused: a span must decode on its own (2): spans[1]: traceId: expected "
        "32 hex digits; 1 of them with no readable trace id, in no run; their traces"
    )
