"""Binary OTLP decoding, and the encoders the collector and replay use, round-tripped."""

from __future__ import annotations

import json
import math

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData
from sdk_traces import by_id, collector_json

from rampart_otel.codecs.otlp_json import spans_from_json
from rampart_otel.codecs.otlp_proto import (
    request_to_json_dict,
    spans_from_proto,
    spans_from_proto_bytes,
    spans_to_json_dict,
    spans_to_proto_request,
)
from rampart_otel.errors import DecodeError
from rampart_otel.model import Event, Link, Resource, Scope, Span

TRACE = bytes.fromhex("5b8efff798038103d269b633813fc60c")
SPAN = bytes.fromhex("eee19b7ec3c1b174")


def one_span_request(**fields) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    sp = req.resource_spans.add().scope_spans.add().spans.add(trace_id=TRACE, span_id=SPAN)
    for key, value in fields.items():
        setattr(sp, key, value)
    return req


def test_sdk_request_decodes(sdk_request, expected):
    assert by_id(spans_from_proto_bytes(sdk_request.SerializeToString())) == expected


def test_traces_data_bytes_decode(sdk_request, expected):
    data = TracesData()
    data.resource_spans.extend(sdk_request.resource_spans)
    assert by_id(spans_from_proto_bytes(data.SerializeToString())) == expected
    assert by_id(spans_from_proto(data)) == expected


def test_proto_and_json_decoders_agree(sdk_request):
    from_proto = spans_from_proto_bytes(sdk_request.SerializeToString())
    assert from_proto == spans_from_json(collector_json(sdk_request))
    assert from_proto == spans_from_json(json_format.MessageToDict(sdk_request))


def test_resource_and_scope_shared_per_block(sdk_request):
    spans = spans_from_proto(sdk_request)
    agent = [s for s in spans if s.resource.service_name == "agent-a"]
    assert all(s.resource is agent[0].resource for s in agent)
    assert len({id(s.scope) for s in agent}) == 2  # agent.framework, llm.client


def test_every_any_value_form():
    req = one_span_request()
    attrs = req.resource_spans[0].scope_spans[0].spans[0].attributes
    values = {
        "s": AnyValue(string_value="t"),
        "b": AnyValue(bool_value=False),
        "i": AnyValue(int_value=-(2**63)),
        "d": AnyValue(double_value=math.inf),
        "raw": AnyValue(bytes_value=b"\x00\xff"),
        "empty": AnyValue(),
    }
    for key, value in values.items():
        attrs.add(key=key).value.CopyFrom(value)
    arr = attrs.add(key="arr").value.array_value
    arr.values.add(int_value=1)
    arr.values.add()
    arr.values.add().array_value.SetInParent()
    kv = attrs.add(key="kv").value.kvlist_value
    kv.values.add(key="nested").value.kvlist_value.values.add(key="x").value.string_value = "y"
    attrs.add(key="unset")  # KeyValue without a value
    got = spans_from_proto_bytes(req.SerializeToString())[0].attributes
    assert got == {
        "s": "t",
        "b": False,
        "i": -(2**63),
        "d": math.inf,
        "raw": b"\x00\xff",
        "empty": None,
        "arr": [1, None, []],
        "kv": {"nested": {"x": "y"}},
        "unset": None,
    }


def test_defaults_and_open_enums():
    req = one_span_request(kind=9, parent_span_id=bytes(8))
    req.resource_spans[0].scope_spans[0].spans[0].status.code = 7
    s = spans_from_proto_bytes(req.SerializeToString())[0]
    assert (s.kind, s.status_code, s.parent_span_id) == ("UNSPECIFIED", "UNSET", None)
    assert (s.start_ns, s.end_ns, s.name) == (None, None, "")
    assert (s.scope.name, s.resource.attributes) == ("", {})


def test_hostile_and_huge_values_pass_through():
    hostile = "\x1b]0;pwned\x07\x1b[2J\r\u202e\x00"
    big = "y" * (5 * 1024 * 1024)
    req = one_span_request(name=hostile)
    sp = req.resource_spans[0].scope_spans[0].spans[0]
    sp.attributes.add(key=hostile).value.string_value = hostile
    sp.attributes.add(key="big").value.string_value = big
    s = spans_from_proto_bytes(req.SerializeToString())[0]
    assert s.name == hostile and s.attributes == {hostile: hostile, "big": big}


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"\x0a\x05abc", "invalid OTLP protobuf"),
        (b"\xff\xff\xff\xff", "invalid OTLP protobuf"),
    ],
)
def test_malformed_protobuf(data, needle):
    with pytest.raises(DecodeError) as err:
        spans_from_proto_bytes(data)
    assert needle in err.value.message and "\n" not in err.value.message


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"trace_id": b"\x01" * 15}, "trace_id"),
        ({"trace_id": bytes(16)}, "trace_id"),
        ({"trace_id": b""}, "trace_id"),
        ({"span_id": b""}, "span_id"),
        ({"span_id": bytes(8)}, "span_id"),
        ({"parent_span_id": b"\x01" * 9}, "parent_span_id"),
    ],
)
def test_a_span_breaking_the_id_rule_is_refused_as_a_bare_mark(fields, problem):
    req = one_span_request(name="execute_tool", **fields)
    req.resource_spans[0].scope_spans[0].spans[0].attributes.add(key="k").value.string_value = "v"
    (span,) = spans_from_proto_bytes(req.SerializeToString())
    assert span.refused == problem
    assert (span.name, span.attributes) == ("", {})


def test_bad_link_ids_refuse_the_span():
    req = one_span_request()
    req.resource_spans[0].scope_spans[0].spans[0].links.add(trace_id=TRACE, span_id=b"1")
    (span,) = spans_from_proto_bytes(req.SerializeToString())
    assert span.refused == "link_id"


def test_a_placeholder_encodes_and_decodes_to_itself():
    """The collector stores what a receiver read from JSON as protobuf: a refused span must
    come back refused, the same mark."""
    req = one_span_request(span_id=bytes(8), parent_span_id=b"\x01" * 8)
    (span,) = spans_from_proto_bytes(req.SerializeToString())
    again = spans_from_proto_bytes(spans_to_proto_request([span]).SerializeToString())
    assert again == [span]


def test_empty_bytes_are_an_empty_request():
    assert spans_from_proto_bytes(b"") == []


# ---- encoding ---------------------------------------------------------------------------


def test_round_trip_through_proto_request(sdk_request):
    spans = spans_from_proto(sdk_request)
    request = spans_to_proto_request(spans)
    assert spans_from_proto_bytes(request.SerializeToString()) == spans
    # Same blocks as the SDK wrote: one per resource, one per scope within it.
    assert len(request.resource_spans) == len(sdk_request.resource_spans)
    assert [len(rs.scope_spans) for rs in request.resource_spans] == [
        len(rs.scope_spans) for rs in sdk_request.resource_spans
    ]
    # What the model keeps is byte-for-byte what the SDK sent.
    for ours, theirs in zip(request.resource_spans, sdk_request.resource_spans, strict=True):
        assert ours.resource == theirs.resource
        for oss, tss in zip(ours.scope_spans, theirs.scope_spans, strict=True):
            for osp, tsp in zip(oss.spans, tss.spans, strict=True):
                for link in tsp.links:  # link flags are not in the model
                    link.ClearField("flags")
                assert osp == tsp


def test_round_trip_through_json(sdk_request):
    spans = spans_from_proto(sdk_request)
    doc = request_to_json_dict(spans_to_proto_request(spans))
    sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(sp["traceId"]) == 32 and sp["traceId"] == sp["traceId"].lower()
    assert isinstance(sp["kind"], int) and isinstance(sp["startTimeUnixNano"], str)
    assert spans_from_json(json.loads(json.dumps(doc))) == spans
    assert spans_to_json_dict(spans) == doc


def test_request_to_json_dict_matches_collector_style(sdk_request):
    doc = request_to_json_dict(sdk_request)
    assert doc == collector_json(sdk_request)


def test_encode_every_value_form_and_quirks():
    resource = Resource({"service.name": "svc"}, dropped_attributes_count=2)
    span = Span(
        trace_id="5b8efff798038103d269b633813fc60c",
        span_id="eee19b7ec3c1b174",
        parent_span_id=None,
        name="\x1b[0m",
        kind="CONSUMER",
        start_ns=1,
        end_ns=None,  # never ended
        status_code="ERROR",
        status_message="",
        attributes={
            "s": "x",
            "b": True,
            "i": 2**63 - 1,
            "f": math.nan,
            "inf": -math.inf,
            "raw": b"\x00",
            "none": None,
            "list": [1, "a", None, [True]],
            "tuple": (1.5,),
            "dict": {"k": {"n": []}},
        },
        events=[Event("e", None, {"a": 1}, 3)],
        links=[Link("5b8efff798038103d269b633813fc60d", "eee19b7ec3c1b175", {})],
        resource=resource,
        scope=Scope("lib", "1"),
        dropped_attributes_count=1,
        dropped_events_count=2,
        dropped_links_count=3,
    )
    doc = spans_to_json_dict([span])
    text = json.dumps(doc)  # NaN / Infinity become the OTLP strings, so plain JSON works
    assert '"NaN"' in text and '"-Infinity"' in text
    back = spans_from_json(json.loads(text))[0]
    back_attrs = dict(back.attributes)
    assert math.isnan(back_attrs.pop("f"))
    expected = dict(span.attributes)
    del expected["f"]
    expected["tuple"] = [1.5]
    assert back_attrs == expected
    assert back.end_ns is None and back.kind == "CONSUMER" and back.status_code == "ERROR"
    assert back.events == span.events and back.links == span.links
    assert back.resource == resource and back.scope == span.scope
    assert (back.dropped_attributes_count, back.dropped_events_count) == (1, 2)
    assert back.dropped_links_count == 3
    assert spans_from_proto(spans_to_proto_request([span]))[0].name == "\x1b[0m"


def test_spans_with_distinct_resources_get_distinct_blocks():
    def span(resource: Resource, scope: Scope) -> Span:
        return Span(
            "0" * 31 + "1", "0" * 15 + "1", None, "n", "INTERNAL", 1, 2, "UNSET", "", {}, [], [],
            resource, scope,
        )  # fmt: skip

    r1, r2 = Resource({"service.name": "a"}), Resource({"service.name": "a"})
    req = spans_to_proto_request(
        [span(r1, Scope("x")), span(r2, Scope("x")), span(r1, Scope("y")), span(r1, Scope("x"))]
    )
    assert [len(rs.scope_spans) for rs in req.resource_spans] == [2, 1]
    assert [len(ss.spans) for ss in req.resource_spans[0].scope_spans] == [2, 1]


@pytest.mark.parametrize(
    ("value", "error"), [(2**63, ValueError), (object(), TypeError), ({1, 2}, TypeError)]
)
def test_encoder_rejects_unrepresentable_values(value, error):
    span = Span(
        "0" * 31 + "1", "0" * 15 + "1", None, "n", "INTERNAL", 1, 2, "UNSET", "", {"v": value},
        [], [], Resource({}), Scope(),
    )  # fmt: skip
    with pytest.raises(error):
        spans_to_proto_request([span])


def test_encoded_kind_and_status_numbers():
    span = Span(
        "0" * 31 + "1", "0" * 15 + "1", "0" * 15 + "2", "n", "CLIENT", 1, 2, "OK", "fine", {},
        [], [], Resource({}), Scope(),
    )  # fmt: skip
    pb = spans_to_proto_request([span]).resource_spans[0].scope_spans[0].spans[0]
    assert pb.kind == PbSpan.SPAN_KIND_CLIENT
    assert pb.status.code == 1 and pb.status.message == "fine"
    assert pb.parent_span_id == bytes.fromhex("0" * 15 + "2")


def test_a_key_repeated_with_another_value_is_named_on_the_span():
    """As the JSON decoder: the last value kept, the key named (keys MUST be unique)."""
    req = one_span_request(name="s")
    sp = req.resource_spans[0].scope_spans[0].spans[0]
    for key, text in (("db.statement", "DROP TABLE notes"), ("a", "x"), ("db.statement", "x")):
        sp.attributes.add(key=key, value=AnyValue(string_value=text))
    sp.attributes.add(key="a", value=AnyValue(string_value="x"))  # the same value: no conflict
    event = sp.events.add(name="e")
    event.attributes.add(key="k", value=AnyValue(int_value=1))
    event.attributes.add(key="k", value=AnyValue(int_value=2))
    (span,) = spans_from_proto(req)
    assert span.attributes["db.statement"] == "x"
    assert span.repeated_keys == ("db.statement", "k")
