"""OTLP/JSON decoding: real SDK output in every JSON spelling, then the hand-made quirks."""

from __future__ import annotations

import base64
import copy
import json
import math
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData
from sdk_traces import by_id, collector_json

from rampart_otel.codecs.otlp_ids import UNDECODABLE, UNDECODABLE_KEY, in_no_trace, kept_spans
from rampart_otel.codecs.otlp_json import gc_paused, spans_from_json, spans_from_json_bytes
from rampart_otel.codecs.otlp_proto import (
    spans_from_proto,
    spans_to_json_dict,
    spans_to_proto_request,
)
from rampart_otel.errors import DecodeError
from rampart_otel.model import Span

TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"
PARENT = "eee19b7ec3c1b173"


def doc(span: dict[str, Any] | None = None, **block: Any) -> dict[str, Any]:
    """A one-span request around ``span``; keys given here replace the defaults."""
    sp = {"traceId": TRACE, "spanId": SPAN, "name": "s"}
    sp.update(span or {})
    rs = {"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [sp]}]}
    rs.update(block)
    return {"resourceSpans": [rs]}


def one(obj: dict[str, Any]) -> Span:
    spans = spans_from_json(obj)
    assert len(spans) == 1
    return spans[0]


def attrs(**values: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in values.items()]


# ---- real SDK output --------------------------------------------------------------------


def test_protobuf_json_mapping_default(sdk_request, expected):
    """protobuf's own JSON: base64 ids, enum names, int64 strings (what some exporters send)."""
    text = json_format.MessageToJson(sdk_request)
    assert '"SPAN_KIND_CLIENT"' in text and '"STATUS_CODE_ERROR"' in text
    assert by_id(spans_from_json_bytes(text.encode())) == expected


def test_collector_style_hex_ids_enum_ints(sdk_request, expected):
    obj = collector_json(sdk_request)
    sample = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(sample["traceId"]) == 32 and isinstance(sample["kind"], int)
    assert by_id(spans_from_json_bytes(json.dumps(obj).encode())) == expected


def test_snake_case_keys_from_protobuf(sdk_request, expected):
    obj = json_format.MessageToDict(sdk_request, preserving_proto_field_name=True)
    assert "resource_spans" in obj
    assert by_id(spans_from_json(obj)) == expected


def test_traces_data_document(sdk_request, expected):
    data = TracesData()
    data.resource_spans.extend(sdk_request.resource_spans)
    obj = json_format.MessageToDict(data, use_integers_for_enums=True)
    assert by_id(spans_from_json(obj)) == expected


def test_every_field_of_the_sdk_trace(sdk_request):
    spans = spans_from_json(collector_json(sdk_request))
    named = {s.name: s for s in spans}
    root, chat = named["invoke_agent"], named["chat gpt-4o"]
    tool, served = named["execute_tool fetch"], named["tools/call fetch"]
    assert root.parent_span_id is None and root.kind == "SERVER" and root.status_code == "OK"
    assert chat.parent_span_id == root.span_id and chat.kind == "CLIENT"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 1234
    assert chat.attributes["gen_ai.request.temperature"] == 0.25
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chat.attributes["flags"] == [True, False] and chat.attributes["stream"] is False
    assert [e.name for e in chat.events] == ["first_token", "dropped-1"]
    assert chat.events[0].time_ns == 1_700_000_000_123_456_789
    assert chat.dropped_events_count == 1
    assert tool.dropped_attributes_count == 3 and len(tool.attributes) == 8
    assert tool.links[0].attributes == {"link.reason": "retry-of"}
    assert tool.links[0].span_id == named["earlier-run"].span_id
    assert served.status_code == "ERROR" and served.status_message == "upstream 503"
    assert served.parent_span_id == tool.span_id
    assert served.resource.service_name == "tool-server"
    assert (served.scope.name, served.scope.version) == ("mcp.server", "0.3")
    assert (chat.scope.name, chat.scope.version) == ("llm.client", "")
    assert {s.trace_id for s in spans if s.name != "earlier-run"} == {root.trace_id}


def test_resource_and_scope_objects_shared_per_block(sdk_request):
    spans = spans_from_json(collector_json(sdk_request))
    agent = [s for s in spans if s.resource.service_name == "agent-a"]
    assert len(agent) == 4 and all(s.resource is agent[0].resource for s in agent)
    tool = next(s for s in spans if s.resource.service_name == "tool-server")
    assert tool.resource is not agent[0].resource
    framework = [s for s in agent if s.scope.name == "agent.framework"]
    assert len(framework) == 3 and all(s.scope is framework[0].scope for s in framework)


# ---- quirks the SDK does not produce ----------------------------------------------------


def test_snake_case_everywhere_legacy_names_and_number_int64():
    obj = {
        "resource_spans": [
            {
                "resource": {
                    "attributes": attrs(**{"service.name": {"string_value": "svc"}}),
                    "dropped_attributes_count": 2,
                },
                "instrumentation_library_spans": [
                    {
                        "instrumentation_library": {"name": "legacy", "version": "0.1"},
                        "spans": [
                            {
                                "trace_id": TRACE,
                                "span_id": SPAN,
                                "parent_span_id": PARENT,
                                "name": "n",
                                "kind": "SPAN_KIND_PRODUCER",
                                "start_time_unix_nano": 1_700_000_000_000_000_001,
                                "end_time_unix_nano": "1700000000000000002",
                                "dropped_attributes_count": "1",
                                "dropped_events_count": 2,
                                "dropped_links_count": 3,
                                "status": {"code": "STATUS_CODE_ERROR", "message": "m"},
                                "events": [
                                    {
                                        "time_unix_nano": 5,
                                        "name": "e",
                                        "dropped_attributes_count": 4,
                                    }
                                ],
                                "links": [{"trace_id": TRACE, "span_id": PARENT}],
                            }
                        ],
                    }
                ],
            }
        ]
    }
    s = one(obj)
    assert (s.trace_id, s.span_id, s.parent_span_id) == (TRACE, SPAN, PARENT)
    assert s.kind == "PRODUCER" and s.status_code == "ERROR" and s.status_message == "m"
    assert (s.start_ns, s.end_ns) == (1_700_000_000_000_000_001, 1_700_000_000_000_000_002)
    assert (s.dropped_attributes_count, s.dropped_events_count, s.dropped_links_count) == (1, 2, 3)
    assert s.events[0].time_ns == 5 and s.events[0].dropped_attributes_count == 4
    assert s.links[0].span_id == PARENT
    assert (s.scope.name, s.scope.version) == ("legacy", "0.1")
    assert s.resource.attributes == {"service.name": "svc"}
    assert s.resource.dropped_attributes_count == 2


def test_camel_case_legacy_instrumentation_library_spans():
    obj = doc()
    block = obj["resourceSpans"][0]
    ss = block.pop("scopeSpans")[0]
    ss["instrumentationLibrary"] = ss.pop("scope")
    block["instrumentationLibrarySpans"] = [ss]
    assert one(obj).scope.name == "x"


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (0, "UNSPECIFIED"),
        (1, "INTERNAL"),
        (2, "SERVER"),
        (3, "CLIENT"),
        (4, "PRODUCER"),
        (5, "CONSUMER"),
        ("SPAN_KIND_CLIENT", "CLIENT"),
        ("SPAN_KIND_INTERNAL", "INTERNAL"),
        (None, "UNSPECIFIED"),
        (42, "UNSPECIFIED"),  # proto3 enums are open: unknown numbers are not an error
    ],
)
def test_span_kind_ints_and_names(kind, name):
    assert one(doc({"kind": kind})).kind == name


@pytest.mark.parametrize(
    ("status", "code"),
    [
        ({"code": 2}, "ERROR"),
        ({"code": "STATUS_CODE_ERROR"}, "ERROR"),
        ({"code": 1}, "OK"),
        ({"code": "STATUS_CODE_OK"}, "OK"),
        ({"code": 0}, "UNSET"),
        ({}, "UNSET"),
        ({"message": "only a message"}, "UNSET"),
        (None, "UNSET"),
    ],
)
def test_status_code_ints_and_names(status, code):
    assert one(doc({"status": status})).status_code == code


def test_every_any_value_form():
    raw = bytes(range(256))
    s = one(
        doc(
            {
                "attributes": [
                    *attrs(
                        s={"stringValue": "text"},
                        b={"boolValue": True},
                        i_str={"intValue": "-9223372036854775808"},
                        i_num={"intValue": 9223372036854775807},
                        d={"doubleValue": 1.5},
                        d_int={"doubleValue": 3},
                        d_str={"doubleValue": "2.5"},
                        nan={"doubleValue": "NaN"},
                        inf={"doubleValue": "Infinity"},
                        ninf={"doubleValue": "-Infinity"},
                        arr={
                            "arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "x"}, {}]}
                        },
                        empty_arr={"arrayValue": {}},
                        kv={
                            "kvlistValue": {
                                "values": [
                                    {"key": "inner", "value": {"kvlistValue": {"values": []}}},
                                    {"key": "n", "value": {"arrayValue": {"values": []}}},
                                ]
                            }
                        },
                        raw={"bytesValue": base64.b64encode(raw).decode()},
                        raw_url={"bytesValue": base64.urlsafe_b64encode(raw).decode().rstrip("=")},
                        empty={},
                        null_member={"stringValue": None},
                        unknown_member={"futureValue": 1},
                    ),
                    {"key": "no_value"},
                ]
            }
        )
    )
    a = s.attributes
    assert a["s"] == "text" and a["b"] is True
    assert a["i_str"] == -(2**63) and a["i_num"] == 2**63 - 1
    assert a["d"] == 1.5 and isinstance(a["d_int"], float) and a["d_int"] == 3.0
    assert a["d_str"] == 2.5
    assert math.isnan(a["nan"]) and a["inf"] == math.inf and a["ninf"] == -math.inf
    assert a["arr"] == [1, "x", None] and a["empty_arr"] == []
    assert a["kv"] == {"inner": {}, "n": []}
    assert a["raw"] == raw and a["raw_url"] == raw
    assert a["empty"] is None and a["null_member"] is None and a["unknown_member"] is None
    assert a["no_value"] is None


@pytest.mark.parametrize(
    ("trace_id", "span_id"),
    [
        (TRACE.upper(), SPAN.upper()),
        ("5B8efff798038103D269B633813FC60C", "EEE19b7ec3c1b174"),
        (
            base64.b64encode(bytes.fromhex(TRACE)).decode(),
            base64.b64encode(bytes.fromhex(SPAN)).decode(),
        ),
        (  # URL-safe alphabet, no padding: protobuf JSON parsers accept it
            base64.urlsafe_b64encode(bytes.fromhex(TRACE)).decode().rstrip("="),
            base64.urlsafe_b64encode(bytes.fromhex(SPAN)).decode().rstrip("="),
        ),
    ],
)
def test_ids_normalized_to_lowercase_hex(trace_id, span_id):
    s = one(doc({"traceId": trace_id, "spanId": span_id, "parentSpanId": span_id}))
    assert (s.trace_id, s.span_id, s.parent_span_id) == (TRACE, SPAN, SPAN)


@pytest.mark.parametrize("parent", ["", None, "0000000000000000", "AAAAAAAAAAA="])
def test_missing_empty_or_zero_parent_is_none(parent):
    assert one(doc({"parentSpanId": parent})).parent_span_id is None


def test_unknown_fields_ignored_everywhere():
    obj = doc(
        {
            "traceState": "k=v",
            "flags": 769,
            "futureField": {"nested": [1, 2]},
            "status": {"code": 2, "deprecatedCode": 1},
            "events": [{"name": "e", "later": True}],
        },
        schemaUrl="https://opentelemetry.io/schemas/1.26.0",
        unknownBlockField=[],
    )
    obj["somethingNew"] = 1
    s = one(obj)
    assert s.status_code == "ERROR" and s.events[0].name == "e"


def test_zero_and_missing_times_are_none():
    s = one(doc({"startTimeUnixNano": "0", "events": [{"name": "e", "timeUnixNano": 0}]}))
    assert s.start_ns is None and s.end_ns is None and s.events[0].time_ns is None


def test_null_collections_are_empty():
    s = one(doc({"attributes": None, "events": None, "links": None, "status": None}))
    assert (s.attributes, s.events, s.links, s.status_code) == ({}, [], [], "UNSET")


@pytest.mark.parametrize("obj", [{}, {"resourceSpans": []}, {"resourceSpans": [{}]}])
def test_empty_requests_are_valid(obj):
    assert spans_from_json(obj) == []


def test_missing_resource_and_scope_give_empty_objects():
    span = {"traceId": TRACE, "spanId": SPAN}
    obj = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    s = one(obj)
    assert s.resource.attributes == {} and (s.scope.name, s.scope.version) == ("", "")


def test_hostile_values_pass_through_unchanged():
    hostile = '\x1b[31mred\x1b[0m\r\n\x00\x07\u202e\ud800 \\ "quoted"'
    obj = doc({"name": hostile, "attributes": attrs(**{hostile: {"stringValue": hostile}})})
    s = spans_from_json_bytes(json.dumps(obj).encode())[0]
    assert s.name == hostile and s.attributes == {hostile: hostile}


def test_huge_attribute_value():
    big = "x" * (5 * 1024 * 1024)
    data = json.dumps(doc({"attributes": attrs(big={"stringValue": big})})).encode()
    assert spans_from_json_bytes(data)[0].attributes["big"] == big


def test_duplicate_attribute_keys_keep_the_last():
    s = one(doc({"attributes": attrs(k={"intValue": 1}) + attrs(k={"intValue": 2})}))
    assert s.attributes == {"k": 2}


# ---- malformed input: one DecodeError, one line, saying where ---------------------------
# A malformed document, resource or scope refuses the document; a malformed span is refused
# alone: a placeholder of its run (``otlp_ids.undecodable``) saying where and why.


def _span_with(**fields: Any) -> dict[str, Any]:
    return doc(fields)


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ([], "expected a JSON object with resourceSpans, got array"),
        ({"resourceMetrics": []}, "not OTLP trace data"),
        ({"resourceSpans": {}}, "resourceSpans: expected an array"),
        ({"resourceSpans": ["x"]}, "resourceSpans[0]: expected an object, got string"),
        (
            doc(resource={"attributes": attrs(k={"intValue": "NaN"})}),
            "resourceSpans[0]: resource: attribute 'k': intValue",
        ),
        (doc(scopeSpans=[{"scope": {"name": 1}}]), "scopeSpans[0]: scope: name and version"),
    ],
)
def test_malformed_documents(obj, needle):
    with pytest.raises(DecodeError) as err:
        spans_from_json(copy.deepcopy(obj))
    assert needle in err.value.message
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [7]}]}]},
            "resourceSpans[0].scopeSpans[0].spans[0]: expected an object, got number",
        ),
        (_span_with(traceId=12), "spans[0]: traceId: expected 32 hex digits"),
        (_span_with(traceId="!" * 32), "traceId: expected 32 hex digits"),
        (_span_with(links=[{"traceId": TRACE, "spanId": "?"}]), "links[0]: spanId: expected"),
        (_span_with(attributes=attrs(n={"intValue": str(2**63)})), "out of the int64 range"),
        (_span_with(droppedEventsCount=2**32), "droppedEventsCount: 4294967296 is out of range"),
        (_span_with(startTimeUnixNano=str(2**64)), "startTimeUnixNano: 1844"),
        (_span_with(spanId="!" * 12), "spanId: expected 16 hex digits"),
        (_span_with(name=5), "name: expected a string, got number"),
        (_span_with(kind="SPAN_KIND_NOPE"), "kind: unknown value 'SPAN_KIND_NOPE'"),
        (_span_with(status={"code": "BAD"}), "status.code: unknown value"),
        (_span_with(status="ERROR"), "expected an object, got string"),
        (_span_with(startTimeUnixNano="soon"), "startTimeUnixNano: expected an integer"),
        (_span_with(endTimeUnixNano=-1), "endTimeUnixNano: expected a non-negative"),
        (_span_with(endTimeUnixNano=1.5), "endTimeUnixNano: expected an integer"),
        (_span_with(droppedEventsCount=[]), "droppedEventsCount: expected an integer"),
        (_span_with(attributes=[{"value": {}}]), "missing field 'key'"),
        (_span_with(attributes=[{"key": 1}]), "key: expected a string, got number"),
        (_span_with(attributes=attrs(n={"intValue": "x1"})), "attribute 'n': intValue"),
        (_span_with(attributes=attrs(n={"intValue": True})), "attribute 'n': intValue"),
        (_span_with(attributes=attrs(n={"boolValue": "true"})), "boolValue: unexpected string"),
        (_span_with(attributes=attrs(n={"doubleValue": "fast"})), "doubleValue: not a number"),
        (_span_with(attributes=attrs(n={"stringValue": 5})), "stringValue: unexpected number"),
        (_span_with(attributes=attrs(n={"bytesValue": "***"})), "bytesValue: invalid base64"),
        (_span_with(attributes=attrs(n={"arrayValue": [1]})), "arrayValue: unexpected array"),
        (_span_with(attributes=attrs(n="text")), "expected an AnyValue object, got string"),
        (
            _span_with(attributes=attrs(n={"arrayValue": {"values": [5]}})),
            "expected an AnyValue object, got number",
        ),
        (_span_with(events=[{"name": 3}]), "events[0]: name: expected a string"),
        (_span_with(events=[{"timeUnixNano": "x"}]), "events[0]: timeUnixNano"),
        (_span_with(events=["e"]), "events[0]: expected an object, got string"),
    ],
)
def test_a_malformed_span_is_refused_alone_as_a_placeholder(obj, needle):
    obj = copy.deepcopy(obj)
    good = {"traceId": TRACE, "spanId": PARENT, "name": "good"}
    obj["resourceSpans"][0]["scopeSpans"][0]["spans"].append(good)
    bad, kept = spans_from_json(obj)
    assert (kept.span_id, kept.name, kept.refused) == (PARENT, "good", "")
    assert bad.refused == UNDECODABLE and bad.name == "" and not bad.events
    why = bad.attributes[UNDECODABLE_KEY]
    assert why.startswith("resourceSpans[0].scopeSpans[0].spans[0]: ") and needle in why
    assert "\n" not in why
    # Its ids, where they can be read: with its trace id it is in its run, without, in none.
    readable_trace = type(obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]) is dict and (
        obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0].get("traceId") == TRACE
    )
    assert in_no_trace(bad) is not readable_trace
    assert kept_spans([bad, kept])[0] == ([bad, kept] if readable_trace else [kept])
    if readable_trace:
        assert bad.trace_id == TRACE


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "invalid JSON"),
        (b'{"resourceSpans": [', "invalid JSON"),
        (b"\xff\xfe\x00garbage", "invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "invalid JSON: nested too deeply"),
        (b"null", "got null"),
        (b'{"resourceSpans": "cut', "invalid JSON: Unterminated string starting at column 19"),
        (b'{\n"resourceSpans": "cut', "Unterminated string starting at line 2 column 18"),
        # a JSON Lines line cut off by a crashed writer, its newline after the cut
        (b'{"resourceSpans": "cut\n', "invalid JSON: Unterminated string starting at column 19"),
    ],
)
def test_malformed_bytes(data, needle):
    with pytest.raises(DecodeError, match=None) as err:
        spans_from_json_bytes(data)
    assert needle in err.value.message


def test_a_span_with_a_value_nested_too_deep_is_refused_alone():
    value: dict[str, Any] = {"stringValue": "leaf"}
    for _ in range(5000):
        value = {"arrayValue": {"values": [value]}}
    obj = doc({"attributes": attrs(deep=value)})
    (span,) = spans_from_json(obj)
    assert span.refused == UNDECODABLE and (span.trace_id, span.span_id) == (TRACE, SPAN)
    assert span.attributes[UNDECODABLE_KEY].endswith("values nested too deeply")


def test_a_placeholder_of_an_undecodable_span_reads_back_as_one():
    # As the collector stores it, and as OTLP/JSON carries it (replay, a JSON export).
    obj = doc({"parentSpanId": PARENT, "attributes": attrs(n={"intValue": "x1"})})
    (placeholder,) = spans_from_json(obj)
    again = json.loads(json.dumps(spans_to_json_dict([placeholder])))
    (read,) = spans_from_json(again)
    assert (read.refused, read.trace_id, read.span_id, read.parent_span_id) == (
        UNDECODABLE,
        TRACE,
        SPAN,
        PARENT,
    )
    assert read.attributes == placeholder.attributes
    (from_proto,) = spans_from_proto(spans_to_proto_request([placeholder]))
    assert from_proto == read


def test_decode_error_message_is_one_line():
    assert DecodeError("a\nb\r\n  c").message == "a b c"


def test_gc_paused_nests_and_restores():
    import gc

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


# ---- the OTLP id rule (codecs/otlp_ids.py) ------------------------------------------------


@pytest.mark.parametrize(
    ("span", "problem"),
    [
        ({"traceId": "0" * 32}, "trace_id"),
        ({"traceId": TRACE + "00"}, "trace_id"),
        ({"traceId": None}, "trace_id"),
        ({"traceId": ""}, "trace_id"),
        ({"traceId": "abc="}, "trace_id"),
        ({"spanId": "0" * 16}, "span_id"),
        ({"spanId": TRACE}, "span_id"),
        ({"spanId": None}, "span_id"),
        ({"parentSpanId": "12"}, "parent_span_id"),
        ({"links": [{"traceId": TRACE}]}, "link_id"),
        ({"links": [{"traceId": "", "spanId": SPAN}]}, "link_id"),
    ],
)
def test_a_span_breaking_the_id_rule_is_refused_alone_and_kept_as_a_bare_mark(span, problem):
    """Invalid ids refuse that span, never the document; its content is not read."""
    content = {"name": "execute_tool", "attributes": attrs(secret={"stringValue": "x"})}
    obj = doc({**content, **span})
    obj["resourceSpans"][0]["scopeSpans"][0]["spans"].append(
        {"traceId": TRACE, "spanId": PARENT, "name": "fine"}
    )
    refused, fine = spans_from_json(obj)
    assert refused.refused == problem and fine.refused == "" and fine.name == "fine"
    assert (refused.name, refused.attributes, refused.events) == ("", {}, [])


def test_all_zero_parent_is_no_parent_and_valid_ids_are_not_refused():
    span = one(doc({"parentSpanId": "0" * 16}))
    assert span.parent_span_id is None and span.refused == ""


@pytest.mark.parametrize(
    "value",
    [
        {"intValue": "42"},
        {"intValue": 42},
        {"intValue": " 7 "},
        {"intValue": 3.0},
        {"intValue": "-9223372036854775808"},
        {"intValue": str(2**63)},
        {"intValue": 2**63},
        {"intValue": True},
        {"intValue": "x1"},
        {"intValue": "1.5"},
        {"intValue": None},
        {"boolValue": False},
        {"boolValue": "true"},
        {"boolValue": 1},
        {"stringValue": 5},
        {"doubleValue": "NaN"},
        {"unknownValue": 1},
    ],
)
def test_a_one_member_value_reads_as_the_general_anyvalue_reader_reads_it(
    value: dict[str, Any],
) -> None:
    """The decoder's fast paths for the common AnyValue shapes give what ``_value`` gives,
    errors included."""

    def read(attributes: list[dict[str, Any]]) -> Any:
        span = one(doc({"attributes": attributes}))
        if UNDECODABLE_KEY in span.attributes:  # refused alone: a placeholder says why
            return span.attributes[UNDECODABLE_KEY]
        return span.attributes["k"]

    # Two members: the fast paths stand aside and the general reader reads the value.
    general = read(attrs(k={**value, "ignored": 1}))
    fast = read(attrs(k=value))
    if isinstance(general, float) and math.isnan(general):
        assert isinstance(fast, float) and math.isnan(fast)
    else:
        assert fast == general and type(fast) is type(general)


# ---- a key recorded twice -------------------------------------------------------------------


def test_a_key_repeated_with_another_value_is_named_on_the_span():
    """OTLP keys MUST be unique; one recorded twice with different values keeps the last,
    and the span names the key: which value the instrumentation meant is not known."""
    repeated = [
        {"key": "db.statement", "value": {"stringValue": "DROP TABLE notes"}},
        {"key": "db.system", "value": {"stringValue": "sqlite"}},
        {"key": "db.statement", "value": {"stringValue": "SELECT 1"}},
    ]
    event = {"name": "e", "attributes": [*attrs(k={"intValue": "1"}), *attrs(k={"intValue": 2})]}
    span = one(doc({"attributes": repeated, "events": [event]}))
    assert span.attributes["db.statement"] == "SELECT 1"
    assert span.repeated_keys == ("db.statement", "k")


def test_a_key_repeated_with_the_same_value_is_no_conflict():
    same = [{"key": "a", "value": {"stringValue": "x"}}] * 2
    assert one(doc({"attributes": same})).repeated_keys == ()
