"""Trace files: every format, gzip'd or not, streamed; bad parts reported, the rest kept."""

from __future__ import annotations

import gc
import gzip
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sdk_traces import collector_json

from rampart_otel.codecs.otlp_proto import spans_from_proto
from rampart_otel.model import InputError, Span
from rampart_otel.receivers import files
from rampart_otel.receivers.files import FileFormat, read_path, read_paths, sniff_format

# ---- writers: the layouts the Collector's file exporter and friends produce -------------


def split(request: ExportTraceServiceRequest) -> list[ExportTraceServiceRequest]:
    """One request per span, each with its own resource and scope: a trace spread thin."""
    out = []
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for sp in ss.spans:
                req = ExportTraceServiceRequest()
                nrs = req.resource_spans.add()
                nrs.resource.CopyFrom(rs.resource)
                nss = nrs.scope_spans.add()
                nss.scope.CopyFrom(ss.scope)
                nss.spans.add().CopyFrom(sp)
                out.append(req)
    return out


def jsonl(requests: list[ExportTraceServiceRequest]) -> bytes:
    return b"".join(json.dumps(collector_json(r)).encode() + b"\n" for r in requests)


def length_prefixed(payloads: list[bytes]) -> bytes:
    return b"".join(len(p).to_bytes(4, "big") + p for p in payloads)


def proto_records(requests: list[ExportTraceServiceRequest]) -> bytes:
    return length_prefixed([r.SerializeToString() for r in requests])


def write(path: Path, data: bytes, *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def collect(items: Any) -> tuple[list[list[Span]], list[InputError]]:
    batches: list[list[Span]] = []
    errors: list[InputError] = []
    for item in items:
        (errors if isinstance(item, InputError) else batches).append(item)
    return batches, errors


def span_ids(batches: list[list[Span]]) -> list[str]:
    return [s.span_id for batch in batches for s in batch]


def ids_of(request: ExportTraceServiceRequest) -> list[str]:
    return [s.span_id for s in spans_from_proto(request)]


# ---- sniffing ---------------------------------------------------------------------------


def test_sniff_real_payloads(sdk_request):
    raw = sdk_request.SerializeToString()
    assert raw[0] == 0x0A
    assert sniff_format(raw[:64]) is FileFormat.PROTO
    assert sniff_format(proto_records([sdk_request])[:64]) is FileFormat.PROTO_LENGTH_PREFIXED
    assert sniff_format(jsonl([sdk_request])[:64]) is FileFormat.JSON
    pretty = json.dumps(collector_json(sdk_request), indent=2).encode()
    assert sniff_format(pretty[:64]) is FileFormat.JSON
    assert sniff_format(gzip.compress(raw)[:64]) is FileFormat.GZIP


@pytest.mark.parametrize(
    ("head", "fmt"),
    [
        (b"", FileFormat.EMPTY),
        (b"\x1f\x8b\x08\x00", FileFormat.GZIP),
        (b"\x28\xb5\x2f\xfd\x00", FileFormat.ZSTD),
        (b'{"resourceSpans":[]}', FileFormat.JSON),
        (b"\n\n  {\n", FileFormat.JSON),
        (b"\xef\xbb\xbf{}", FileFormat.JSON),
        (b"[{}]", FileFormat.JSON),
        (b"   \n\t\r\n", FileFormat.JSON),  # blank: reads as nothing
        (b"\x00\x00\x01\x00\x0a\xfd\x01", FileFormat.PROTO_LENGTH_PREFIXED),
        (b"\x09\x00\x00\x00", FileFormat.PROTO_LENGTH_PREFIXED),
        (b"\x0a\x7b\x0a\x20\x0a\x12", FileFormat.PROTO),  # "\n{" then protobuf, not JSON
        (b"\x0a\x0a\x0a\x0c\x0a\x0cservice.name\x12", FileFormat.PROTO),
        (b"hello, world\n", FileFormat.UNKNOWN),
        (b"\nplain text", FileFormat.UNKNOWN),
        (b"PK\x03\x04", FileFormat.UNKNOWN),
    ],
)
def test_sniff_format(head, fmt):
    assert sniff_format(head) is fmt


# ---- every format, plain and gzip'd -----------------------------------------------------


FORMATS = ["jsonl", "json-pretty", "json-compact-doc", "proto-prefixed", "proto-raw"]


def encode(fmt: str, requests: list[ExportTraceServiceRequest]) -> bytes:
    if fmt == "jsonl":
        return jsonl(requests)
    if fmt == "proto-prefixed":
        return proto_records(requests)
    merged = ExportTraceServiceRequest()
    for r in requests:
        merged.resource_spans.extend(r.resource_spans)
    if fmt == "json-pretty":
        return json.dumps(collector_json(merged), indent=2).encode()
    if fmt == "json-compact-doc":  # one line, no trailing newline
        return json.dumps(collector_json(merged)).encode()
    return merged.SerializeToString()


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format(tmp_path, make_request, fmt, gz):
    requests = [make_request(), make_request()]
    path = write(tmp_path / f"traces.{fmt}", encode(fmt, requests), gz=gz)
    batches, errors = collect(read_paths([path]))
    assert errors == []
    assert span_ids(batches) == ids_of(requests[0]) + ids_of(requests[1])
    per_record = fmt in ("jsonl", "proto-prefixed")
    assert len(batches) == (2 if per_record else 1)


def test_spans_equal_across_formats(tmp_path, sdk_request):
    results = []
    for fmt in FORMATS:
        path = write(tmp_path / fmt, encode(fmt, [sdk_request]))
        batches, errors = collect(read_path(path))
        assert errors == []
        results.append([s for b in batches for s in b])
    assert all(r == results[0] for r in results)


def test_jsonl_with_base64_ids_and_enum_names(tmp_path, sdk_request):
    from google.protobuf import json_format

    line = json_format.MessageToJson(sdk_request, indent=None).encode()
    batches, errors = collect(read_path(write(tmp_path / "t.jsonl", line + b"\n" + line)))
    assert errors == [] and len(batches) == 2
    assert span_ids(batches)[: len(batches[0])] == ids_of(sdk_request)


def test_length_prefixed_record_holding_json(tmp_path, sdk_request):
    payload = json.dumps(collector_json(sdk_request)).encode()
    data = length_prefixed([payload, sdk_request.SerializeToString()])
    batches, errors = collect(read_path(write(tmp_path / "mixed.bin", data)))
    assert errors == [] and batches[0] == batches[1]


def test_concatenated_pretty_documents(tmp_path, make_request):
    r1, r2 = make_request(), make_request()
    data = b"".join(json.dumps(collector_json(r), indent=2).encode() + b"\n" for r in (r1, r2))
    batches, errors = collect(read_path(write(tmp_path / "jq.json", data)))
    assert errors == [] and span_ids(batches) == ids_of(r1) + ids_of(r2)


# ---- directories and traces spread over files -------------------------------------------


def test_directory_recursive_sorted_hidden_skipped(tmp_path, make_request):
    reqs = [make_request() for _ in range(4)]
    write(tmp_path / "b" / "2.jsonl", jsonl([reqs[2]]))
    write(tmp_path / "b" / "1.pb.gz", proto_records([reqs[1]]), gz=True)
    write(tmp_path / "a.json", json.dumps(collector_json(reqs[0]), indent=1).encode())
    write(tmp_path / "c" / "d" / "deep", reqs[3].SerializeToString())
    write(tmp_path / ".hidden.jsonl", b"garbage")
    write(tmp_path / ".git" / "objects.jsonl", b"garbage")
    write(tmp_path / "empty.jsonl", b"")
    write(tmp_path / "blank.jsonl", b"\n\n   \n")
    batches, errors = collect(read_paths([tmp_path]))
    assert errors == []
    assert span_ids(batches) == [i for r in reqs for i in ids_of(r)]


def test_docs_and_results_store_in_a_directory_are_not_read_as_traces(tmp_path, sdk_request):
    write(tmp_path / "traces.jsonl", jsonl([sdk_request]))
    write(tmp_path / "README.md", b"# Sample traces\n")
    write(tmp_path / "results.db", b"SQLite format 3\x00")
    write(tmp_path / "policy.yaml", b"policy: x\n")
    batches, errors = collect(read_path(tmp_path))
    assert errors == [] and span_ids(batches) == ids_of(sdk_request)
    _, named_errors = collect(read_path(tmp_path / "README.md"))
    assert [e.location for e in named_errors] == [str(tmp_path / "README.md")]


def test_hidden_file_named_explicitly_is_read(tmp_path, sdk_request):
    path = write(tmp_path / ".traces.jsonl", jsonl([sdk_request]))
    batches, errors = collect(read_path(path))
    assert errors == [] and span_ids(batches) == ids_of(sdk_request)


def test_symlink_loop_terminates(tmp_path, sdk_request):
    write(tmp_path / "d" / "t.jsonl", jsonl([sdk_request]))
    os.symlink(tmp_path / "d", tmp_path / "d" / "loop")
    batches, errors = collect(read_path(tmp_path))
    assert errors == [] and span_ids(batches) == ids_of(sdk_request)


def test_one_trace_spread_over_lines_and_files(tmp_path, sdk_request):
    pieces = split(sdk_request)
    assert len(pieces) == 5
    write(tmp_path / "part1.jsonl", jsonl(pieces[:2]))
    write(tmp_path / "part2.pb", proto_records(pieces[2:4]))
    write(tmp_path / "sub" / "part3.jsonl.gz", jsonl(pieces[4:]), gz=True)
    batches, errors = collect(read_paths([tmp_path]))
    assert errors == [] and len(batches) == 5
    spans = {s.span_id: s for b in batches for s in b}
    assert spans == {s.span_id: s for s in spans_from_proto(sdk_request)}
    root = next(s for s in spans.values() if s.name == "invoke_agent")
    members = [s for s in spans.values() if s.trace_id == root.trace_id]
    assert len(members) == 4
    assert all(s.parent_span_id in spans for s in members if s is not root)


# ---- bad input: reported where it is, everything else kept ------------------------------


def test_malformed_line_in_the_middle(tmp_path, make_request):
    r1, r2 = make_request(), make_request()
    lines = jsonl([r1]) + b"\n" + b'{"resourceSpans": [oops\n' + jsonl([r2])
    path = write(tmp_path / "t.jsonl", lines)
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(r1) + ids_of(r2)
    assert [e.location for e in errors] == [f"{path}:3"]
    assert errors[0].message.startswith("invalid JSON")


def test_bad_span_in_a_line_is_refused_alone_and_reports_where(tmp_path, make_request):
    # The line's other spans are read, and the bad one is a placeholder in its run (its
    # trace id and times), which keeps that run short of complete: it was once dropped with
    # the whole line, leaving the run's other lines to read as if it had not been sent.
    good = make_request()
    bad = collector_json(make_request())
    spans = bad["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["spanId"] = "!?*"  # not hex nor base64
    data = json.dumps(bad).encode() + b"\n" + jsonl([good])
    path = write(tmp_path / "t.jsonl", data)
    batches, errors = collect(read_path(path))
    first, second = batches
    assert span_ids([second]) == ids_of(good)
    assert [s.refused for s in first] == ["undecodable"] + [""] * (len(first) - 1)
    assert first[0].trace_id == spans[0]["traceId"] and first[0].span_id == ""
    (error,) = errors
    assert error.location == f"{path}:1"
    assert error.message.startswith(f"1 of {len(first)} spans refused: a span must decode")
    assert "resourceSpans[0].scopeSpans[0].spans[0]: spanId" in error.message


def test_first_line_broken_at_a_value_boundary_is_still_json_lines(tmp_path, make_request):
    r1, r2 = make_request(), make_request()
    path = write(tmp_path / "t.jsonl", b'{"resourceSpans": [\n' + jsonl([r1, r2]))
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(r1) + ids_of(r2)
    assert [e.location for e in errors] == [f"{path}:1"]


def test_first_line_garbage_then_good_lines(tmp_path, make_request):
    r1 = make_request()
    path = write(tmp_path / "t.jsonl", b"{nope}\n" + jsonl([r1]))
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(r1) and [e.location for e in errors] == [f"{path}:1"]


def test_broken_pretty_document_is_one_error_and_placeholders(tmp_path, sdk_request):
    # What the text before the break shows of its spans' ids is kept, without content: the
    # runs they belong to are scored as incomplete (codecs/json_salvage).
    text = json.dumps(collector_json(sdk_request), indent=2)
    path = write(tmp_path / "t.json", text[: len(text) // 2].encode())
    batches, errors = collect(read_path(path))
    assert len(errors) == 1
    assert errors[0].location == str(path) and "invalid JSON" in errors[0].message
    placeholders = [span for batch in batches for span in batch]
    assert placeholders and all(span.refused == "undecodable" for span in placeholders)
    written = collector_json(sdk_request)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert placeholders[0].span_id == written[0]["spanId"]


def test_truncated_gzip_keeps_earlier_lines(tmp_path, make_request):
    requests = [make_request() for _ in range(30)]
    data = gzip.compress(jsonl(requests))
    path = write(tmp_path / "t.jsonl.gz", data[: len(data) * 2 // 3])
    batches, errors = collect(read_path(path))
    assert 0 < len(batches) < 30
    assert span_ids(batches) == [i for r in requests[: len(batches)] for i in ids_of(r)]
    assert len(errors) == 1 and "truncated gzip" in errors[0].message
    assert errors[0].location.startswith(f"{path}:")


def test_corrupt_gzip(tmp_path, sdk_request):
    data = bytearray(gzip.compress(jsonl([sdk_request]) * 50))
    data[30:60] = b"\x00" * 30
    _, errors = collect(read_path(write(tmp_path / "c.gz", bytes(data))))
    assert len(errors) == 1 and "gzip" in errors[0].message


@pytest.mark.parametrize("cut", [2, 200])  # inside the length prefix, inside the payload
def test_truncated_length_prefixed_record(tmp_path, make_request, cut):
    r1, r2 = make_request(), make_request()
    first = proto_records([r1])
    data = first + proto_records([r2])
    path = write(tmp_path / "t.pb", data[: len(first) + cut])
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(r1)
    assert [e.location for e in errors] == [f"{path}@{len(first)}"]
    assert "truncated record" in errors[0].message


def test_bad_record_between_good_ones(tmp_path, make_request):
    r1, r3 = make_request(), make_request()
    good1, good3 = r1.SerializeToString(), r3.SerializeToString()
    data = length_prefixed([good1, b"\x0a\x05abc", good3])
    path = write(tmp_path / "t.pb", data)
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(r1) + ids_of(r3)
    assert [e.location for e in errors] == [f"{path}@{4 + len(good1)}"]


def test_bogus_huge_length_is_a_truncation_not_an_allocation(tmp_path):
    path = write(tmp_path / "t.pb", b"\x05\xff\xff\xff" + b"\x0a" * 100)
    batches, errors = collect(read_path(path))
    assert batches == [] and "truncated record: 100663295 bytes announced, 100" in errors[0].message


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_record_over_the_limit_is_an_error_for_that_record_only(
    tmp_path, monkeypatch, make_request, gz
):
    # A length prefix can announce 4 GiB: a record over the document limit is skipped as it
    # is read, never held, and the records after it are read.
    monkeypatch.setattr(files, "MAX_DOCUMENT_BYTES", 64 * KIB)
    r1, r3 = make_request(), make_request()
    good1, good3 = r1.SerializeToString(), r3.SerializeToString()
    big = make_request(payload="z" * (40 * MIB)).SerializeToString()
    path = write(tmp_path / "t.pb", length_prefixed([good1, big, good3]), gz=gz)
    (batches, errors), peak = traced_peak(lambda: collect(read_path(path)))
    assert span_ids(batches) == ids_of(r1) + ids_of(r3)
    assert [(e.location, e.message) for e in errors] == [
        (
            f"{path}@{4 + len(good1)}",
            f"record of {len(big)} bytes, longer than 65536 bytes, the limit; skipped",
        )
    ]
    assert peak < 8 * MIB


def test_garbage_file_among_good_files(tmp_path, make_request):
    r1, r2 = make_request(), make_request()
    write(tmp_path / "1.jsonl", jsonl([r1]))
    garbage = write(tmp_path / "2.jsonl", b"this is not a trace\n")
    binary = write(tmp_path / "3.bin", bytes(range(0x0B, 0x100)))
    write(tmp_path / "4.pb", r2.SerializeToString())
    batches, errors = collect(read_paths([tmp_path]))
    assert span_ids(batches) == ids_of(r1) + ids_of(r2)
    assert [e.location for e in errors] == [str(garbage), str(binary)]
    assert all("not OTLP trace data" in e.message for e in errors)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b'{"resourceMetrics": []}\n', "not OTLP trace data"),
        (b"[1, 2]\n", "got array"),
        (b"\x0a\x05abc", "invalid OTLP protobuf"),
        (b"\x28\xb5\x2f\xfd" + b"\x00" * 8, "zstd"),
        (gzip.compress(gzip.compress(b"{}", mtime=0), mtime=0), "gzip inside gzip"),
        (b'"a string"\n', "not OTLP trace data"),
    ],
)
def test_unreadable_files_are_reported(tmp_path, data, needle):
    path = write(tmp_path / "f", data)
    batches, errors = collect(read_path(path))
    assert batches == [] and len(errors) == 1 and needle in errors[0].message


def test_nonexistent_path(tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert list(read_paths([missing])) == [InputError(str(missing), "no such file or directory")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = write(tmp_path / "secret.jsonl", b"{}")
    path.chmod(0)
    (err,) = read_path(path)
    assert isinstance(err, InputError) and "permission denied" in err.message


def test_blank_lines_count_in_locations(tmp_path, sdk_request):
    data = b"\n\n" + jsonl([sdk_request]) + b"\r\n  \n" + b"{bad\n"
    path = write(tmp_path / "t.jsonl", data)
    batches, errors = collect(read_path(path))
    assert len(batches) == 1 and [e.location for e in errors] == [f"{path}:6"]


def test_crlf_and_bom(tmp_path, sdk_request):
    data = b"\xef\xbb\xbf" + jsonl([sdk_request, sdk_request]).replace(b"\n", b"\r\n")
    batches, errors = collect(read_path(write(tmp_path / "win.jsonl", data)))
    assert errors == [] and len(batches) == 2


def test_empty_requests_yield_nothing(tmp_path):
    data = b'{}\n{"resourceSpans": []}\n'
    assert list(read_path(write(tmp_path / "e.jsonl", data))) == []
    assert list(read_path(write(tmp_path / "e.pb", length_prefixed([b"", b""])))) == []


# ---- big and hostile values -------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_huge_attribute_value(tmp_path, make_request, fmt):
    big = "z" * (5 * 1024 * 1024)
    path = write(tmp_path / "big", encode(fmt, [make_request(payload=big)]), gz=True)
    batches, errors = collect(read_path(path))
    assert errors == []
    root = next(s for b in batches for s in b if s.name == "invoke_agent")
    assert root.attributes["payload"] == big


@pytest.mark.parametrize("fmt", FORMATS)
def test_hostile_values_pass_through_unchanged(tmp_path, make_request, fmt):
    hostile = "\x1b]8;;http://evil\x07click\x1b]8;;\x07\x1b[2J\r\n\x00\u202e\x7f"
    path = write(tmp_path / "h", encode(fmt, [make_request(**{hostile: hostile})]))
    batches, errors = collect(read_path(path))
    assert errors == []
    root = next(s for b in batches for s in b if s.name == "invoke_agent")
    assert root.attributes[hostile] == hostile


# ---- streaming and the GC ---------------------------------------------------------------


def test_single_document_parsed_with_gc_disabled(tmp_path, monkeypatch, sdk_request):
    seen: list[bool] = []
    real = files._DECODER

    class Spy:
        def raw_decode(self, text: str, idx: int) -> Any:
            seen.append(gc.isenabled())
            return real.raw_decode(text, idx)

    monkeypatch.setattr(files, "_DECODER", Spy())
    path = write(tmp_path / "t.json", json.dumps(collector_json(sdk_request), indent=2).encode())
    assert gc.isenabled()
    batches, errors = collect(read_path(path))
    assert errors == [] and len(batches) == 1
    assert seen == [False] and gc.isenabled()


def test_gc_enabled_while_the_consumer_holds_a_batch(tmp_path, sdk_request):
    path = write(tmp_path / "t.json", json.dumps(collector_json(sdk_request), indent=2).encode())
    for _ in read_path(path):
        assert gc.isenabled()


def test_json_lines_are_read_lazily(tmp_path, make_request):
    r1, r2 = make_request(), make_request()
    path = write(tmp_path / "t.jsonl", jsonl([r1]))
    items = read_path(path)
    with path.open("ab") as f:  # appended after reading began: a stream, not a snapshot
        first = next(items)
        f.write(jsonl([r2]))
    assert [s.span_id for s in first] == ids_of(r1)
    assert span_ids(list(items)) == ids_of(r2)


def test_length_prefixed_records_are_read_one_at_a_time(tmp_path, monkeypatch, make_request):
    requests = [make_request() for _ in range(3)]
    path = write(tmp_path / "t.pb", proto_records(requests))
    reads: list[int] = []
    real = files._read_exact
    monkeypatch.setattr(files, "_read_exact", lambda f, n: reads.append(n) or real(f, n))
    items = read_path(path)
    next(items)
    assert len(reads) == 1
    assert len(list(items)) == 2 and len(reads) == 3


# ---- odd files: never a hang, never a crash, never the other files' data -----------------


def test_a_fifo_is_skipped_with_a_warning_instead_of_blocking(tmp_path, sdk_request):
    good = write(tmp_path / "dir" / "good.jsonl", jsonl([sdk_request]))
    os.mkfifo(tmp_path / "dir" / "pipe")  # nobody writes: opening it would wait forever
    batches, errors = collect(read_paths([tmp_path / "dir", tmp_path / "dir" / "pipe"]))
    assert [e.message for e in errors] == [
        "not a regular file (a FIFO, socket or device); skipped"
    ] * 2
    assert sum(map(len, batches)) == len(list(spans_from_proto(sdk_request)))
    assert good.exists()


def test_a_file_of_zeros_stops_after_a_bounded_number_of_empty_records(tmp_path, sdk_request):
    zeros = write(tmp_path / "zeros.bin", bytes(64 * 1024 * 1024))  # 16M empty records
    good = write(tmp_path / "good.binpb", proto_records([sdk_request]))
    batches, errors = collect(read_paths([zeros, good]))
    (error,) = errors
    assert error.location == f"{zeros}@0" and "64 empty records in a row" in error.message
    assert sum(map(len, batches)) == len(list(spans_from_proto(sdk_request)))


def test_a_multi_line_json_document_that_is_not_utf8_is_an_input_error(tmp_path, sdk_request):
    pretty = json.dumps(collector_json(sdk_request), indent=2).encode()
    bad = write(tmp_path / "bad.json", pretty.replace(b'"name"', b'"\xff\xfename"', 1))
    good = write(tmp_path / "good.jsonl", jsonl([sdk_request]))
    batches, errors = collect(read_paths([bad, good]))
    (error,) = errors
    assert error.location == str(bad) and "not UTF-8" in error.message
    assert sum(map(len, batches)) == len(list(spans_from_proto(sdk_request)))


# ---- bounded reading: memory and time whatever the content ------------------------------
# The real limits are 64 MiB a line and 256 MiB a document; these tests lower them. Peak
# memory is measured with tracemalloc, on files many times what the reader may hold.

KIB, MIB = 1 << 10, 1 << 20


def traced_peak(read: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = read()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def pretty(request: ExportTraceServiceRequest) -> bytes:
    return json.dumps(collector_json(request), indent=2).encode() + b"\n"


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("form", ["jsonl", "json"])
def test_blank_lines_are_counted_never_kept(tmp_path, make_request, form, gz):
    r1, r2 = make_request(), make_request()
    blank = b"\n" * (4 * MIB) + b" \t\r\n" * MIB
    # A document's inner blank lines are collapsed as it is read (none can be in a string).
    first = jsonl([r1]) if form == "jsonl" else pretty(r1).replace(b"\n", b"\n" + blank, 2)
    path = write(tmp_path / f"t.{form}", blank + first + blank + b"{bad\n", gz=gz)
    (batches, errors), peak = traced_peak(lambda: collect(read_path(path)))
    assert span_ids(batches) == ids_of(r1)
    where = 5 * MIB + first.count(b"\n") + 5 * MIB + 1  # every blank line counted
    if form == "jsonl":
        assert [e.location for e in errors] == [f"{path}:{where}"]
    else:  # a document, then garbage: the error names where it starts
        assert [e.location for e in errors] == [f"{path}:{where}"]
        assert "the rest of the file is lost" in errors[0].message
    assert peak < 24 * MIB  # 26 MiB of blanks (json: 78 MiB): kept, they would show here
    assert span_ids(collect(read_path(write(tmp_path / "r2.jsonl", jsonl([r2]))))[0])


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("form", ["jsonl", "json"])
def test_a_line_of_spaces_is_skipped_without_being_kept(tmp_path, make_request, form, gz):
    r1 = make_request()
    spaces = b" " * (32 * MIB) + b"\n"
    # In a document, the spaces are the next line's indentation: outside any string.
    inside = pretty(r1).replace(b"\n", b"\n" + spaces, 1)
    data = spaces + jsonl([r1]) if form == "jsonl" else inside
    path = write(tmp_path / f"t.{form}", data, gz=gz)
    (batches, errors), peak = traced_peak(lambda: collect(read_path(path)))
    assert errors == [] and span_ids(batches) == ids_of(r1)
    assert peak < 8 * MIB


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("where", [1, 2])
def test_a_line_over_the_limit_is_an_error_for_that_line_only(
    tmp_path, monkeypatch, make_request, where, gz
):
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 64 * KIB)
    big, good = make_request(payload="z" * (200 * KIB)), [make_request(), make_request()]
    lines = [jsonl([good[0]]), jsonl([good[1]])]
    lines.insert(where - 1, jsonl([big]))  # valid OTLP, only too long
    path = write(tmp_path / "t.jsonl", b"".join(lines), gz=gz)
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(good[0]) + ids_of(good[1])
    assert [(e.location, e.message) for e in errors] == [
        (f"{path}:{where}", "line longer than 65536 bytes, the limit; skipped")
    ]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_one_endless_line_is_read_in_bounded_memory(tmp_path, monkeypatch, gz):
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 64 * KIB)
    path = write(tmp_path / "t.jsonl", b'{"resourceSpans": "' + b"x" * (32 * MIB), gz=gz)
    (batches, errors), peak = traced_peak(lambda: collect(read_path(path)))
    assert batches == [] and [e.location for e in errors] == [f"{path}:1"]
    assert "longer than 65536 bytes" in errors[0].message
    assert peak < 8 * MIB


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_document_over_the_limit_is_an_error_for_the_file(
    tmp_path, monkeypatch, make_request, gz
):
    monkeypatch.setattr(files, "MAX_DOCUMENT_BYTES", 64 * KIB)
    small, big = make_request(), make_request(payload="z" * (100 * KIB))
    ok = write(tmp_path / "ok.json", pretty(small), gz=gz)
    over = write(tmp_path / "over.json", pretty(big), gz=gz)
    batches, errors = collect(read_paths([over, ok]))
    assert span_ids(batches) == ids_of(small)
    assert [(e.location, e.message) for e in errors] == [
        (str(over), "JSON document longer than 65536 bytes, the limit; skipped")
    ]


def test_a_raw_protobuf_file_over_the_limit_is_an_error(tmp_path, monkeypatch, make_request):
    monkeypatch.setattr(files, "MAX_DOCUMENT_BYTES", 64 * KIB)
    path = write(tmp_path / "t.binpb", make_request(payload="z" * (100 * KIB)).SerializeToString())
    (error,) = read_path(path)
    assert isinstance(error, InputError) and "longer than 65536 bytes" in error.message


def test_a_broken_document_after_blank_lines_names_its_file_line(tmp_path, sdk_request):
    text = pretty(sdk_request)
    path = write(tmp_path / "t.json", b"\n" * 7 + text[: len(text) // 2])
    error, *_placeholders = read_path(path)
    assert isinstance(error, InputError) and error.location == str(path)
    broken_at = 8 + text[: len(text) // 2].count(b"\n")
    assert f"at line {broken_at} column" in error.message


@pytest.mark.parametrize("read_size", [1, 2, 3, 5, 16, 1 << 20])
@pytest.mark.parametrize("form", ["jsonl", "json"])
def test_pieces_of_any_size_read_the_same(tmp_path, monkeypatch, make_request, form, read_size):
    monkeypatch.setattr(files, "_READ_SIZE", read_size)
    r1, r2 = make_request(), make_request()
    blank = b"\n \n\t\r\n\n"
    if form == "jsonl":
        data = blank + jsonl([r1]) + b"  \r\n" + jsonl([r2]) + blank + b"{\n  bad\n"
    else:  # blank lines inside a document, between documents, after them
        data = b"\n\n" + pretty(r1).replace(b'\n  "', b'\n\n \n  "', 1)
        data += blank + pretty(r2) + blank + b"{\n  bad\n"
    path = write(tmp_path / f"t.{form}", data)
    batches, errors = collect(read_path(path))
    assert span_ids(batches) == ids_of(r1) + ids_of(r2)
    bad = data.count(b"\n", 0, data.index(b"{\n  bad")) + 1
    assert [e.location for e in errors] == [f"{path}:{bad}"] + [f"{path}:{bad + 1}"] * (
        form == "jsonl"
    )
    if form == "json":
        assert f"at line {bad + 1} column 3" in errors[0].message


def test_a_span_breaking_the_otlp_id_rule_is_refused_alone_and_named(tmp_path, make_request):
    """An all-zero trace id drops that span with an InputError naming the rule; an all-zero
    span id keeps a bare placeholder in its trace, so its run cannot pass as whole."""
    request = collector_json(make_request())
    spans = [
        span
        for block in request["resourceSpans"]
        for scope in block["scopeSpans"]
        for span in scope["spans"]
    ]
    assert len(spans) >= 3
    spans[0]["traceId"] = "0" * 32
    spans[1]["spanId"] = "0" * 16
    path = write(tmp_path / "t.jsonl", json.dumps(request).encode() + b"\n")
    batches, errors = collect(read_path(path))
    (error,) = errors
    assert error.location == f"{path}:1"
    assert error.message.startswith(f"2 of {len(spans)} spans refused: trace id must be 16 bytes")
    assert "span id must be 8 bytes, not all zero (1)" in error.message
    kept = [span for batch in batches for span in batch]
    assert len(kept) == len(spans) - 1
    assert [span.refused for span in kept].count("span_id") == 1
    assert all(span.trace_id != "0" * 32 for span in kept)


# ---- pieces: a file cut at record starts, for ``score --jobs N`` -------------------------


def _records(items: Any) -> list[tuple[str, object]]:
    return [
        (item.location, item.message if isinstance(item, InputError) else item.payload)
        for item in items
    ]


def _read_in_pieces(path: Path, step: int) -> tuple[list[files.Piece], list[tuple[str, object]]]:
    kind = files.splittable(str(path))
    assert kind is not None
    cut = files.pieces(str(path), kind, step)
    return cut, [record for piece in cut for record in _records(files.read_piece(piece))]


@pytest.mark.parametrize("step", [1, 50, 700, 10**9])
def test_json_lines_read_in_pieces_give_the_same_records_and_lines(tmp_path, make_request, step):
    lines = jsonl(split(make_request())).splitlines()
    # Blank lines, indented ones, a bad line and no newline at the end.
    data = b"\n  \n" + b"\n\n   ".join(lines[:3]) + b"\n{not json\n\n" + b"\n".join(lines[3:])
    path = write(tmp_path / "t.jsonl", data)
    cut, records = _read_in_pieces(path, step)
    assert records == _records(files.read_records([path]))
    assert len(records) == len(lines) + 1
    assert (len(cut) > 3) == (step < 1000)
    assert all(piece.start == 0 or data[piece.start - 1 : piece.start] == b"\n" for piece in cut)


@pytest.mark.parametrize("step", [1, 100, 10**9])
@pytest.mark.parametrize("tail", ["truncated", "empties", "bad"])
def test_length_prefixed_read_in_pieces_give_the_same_records(tmp_path, make_request, step, tail):
    good = [r.SerializeToString() for r in split(make_request())]
    data = length_prefixed(good[:2] + [b""] * 3 + good[2:])
    if tail == "truncated":
        data += length_prefixed(good[:1])[:-5]
    elif tail == "empties":  # the reader stops at 64 empty records in a row: no piece after
        data += length_prefixed([b""] * (files.MAX_EMPTY_RECORDS + 1) + good)
    else:
        data += length_prefixed([b"\x0a\x05abc", *good])
    path = write(tmp_path / "t.pb", data)
    cut, records = _read_in_pieces(path, step)
    assert records == _records(files.read_records([path]))
    assert any(isinstance(message, str) for _, message in records) == (tail != "bad")
    if step == 1:
        assert len(cut) > len(good) // 2


def test_what_cuts_into_pieces(tmp_path, make_request):
    request = make_request()
    document = json.dumps(collector_json(request), indent=2).encode()
    splittable = {
        "lines": write(tmp_path / "a.jsonl", jsonl([request])),
        "proto": write(tmp_path / "b.pb", proto_records([request])),
        "empty": write(tmp_path / "c.jsonl", b""),
        "blank": write(tmp_path / "d.jsonl", b"\n \n"),
    }
    whole = {
        "gzip": write(tmp_path / "e.jsonl.gz", jsonl([request]), gz=True),
        "document": write(tmp_path / "f.json", document),
        "raw proto": write(tmp_path / "g.pb", request.SerializeToString()),
        "not trace data": write(tmp_path / "h.bin", b"\x7fELF"),
    }
    kinds = {name: files.splittable(str(path)) for name, path in splittable.items()}
    assert kinds["proto"] == files.RecordKind.PROTO
    assert {kinds[name] for name in ("lines", "empty", "blank")} == {files.RecordKind.JSON_LINE}
    assert {name: files.splittable(str(path)) for name, path in whole.items()} == dict.fromkeys(
        whole
    )
    assert files.splittable(str(tmp_path)) is None  # a directory is not a file


def test_a_file_cut_off_inside_a_string_says_so(tmp_path):
    # A crashed writer's last line, its newline after the cut: "Unterminated string", not
    # "Invalid control character" (that newline); as one line, and after a good line.
    cut = b'{"resourceSpans": [{"caf\xc3\xa9 cut off\n'
    alone = write(tmp_path / "alone.jsonl", cut)
    (error,) = read_path(alone)
    assert isinstance(error, InputError)
    assert error.message == "invalid JSON: Unterminated string starting at line 1 column 21"


def test_a_line_refused_for_its_resource_keeps_its_spans_as_placeholders(tmp_path):
    # Valid JSON whose resource holds an int beyond int64: the decoder refuses the line
    # whole; its spans' ids are still read from its text (codecs/json_salvage).
    trace, first, second = (
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
        "53995c3f42cd8ad8",
    )
    big = {"key": "big", "value": {"intValue": "99999999999999999999999"}}
    spans = [{"traceId": trace, "spanId": first}, {"traceId": trace, "spanId": second}]
    document = {
        "resourceSpans": [
            {"resource": {"attributes": [big]}, "scopeSpans": [{"scope": {}, "spans": spans}]}
        ]
    }
    path = write(tmp_path / "t.jsonl", json.dumps(document).encode() + b"\n")
    batches, errors = collect(read_path(path))
    (error,) = errors
    assert "out of the int64 range" in error.message
    assert "the ids of 2 spans of 1 trace read from its text" in error.message
    assert [(s.trace_id, s.span_id, s.refused) for b in batches for s in b] == [
        (trace, first, "undecodable"),
        (trace, second, "undecodable"),
    ]
