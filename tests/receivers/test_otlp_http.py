"""OTLP/HTTP receiver, driven by the real OTLP/HTTP exporter and by hand-made bad requests.

Each refusal must carry the right status, and never cost the collector its service or
any data it had already acknowledged.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from collector.harness import InProcess, make_traces, span_keys, start_in_process, stored_spans
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace.export import SpanExportResult

from rampart_otel.codecs.otlp_ids import UNDECODABLE_KEY
from rampart_otel.codecs.otlp_proto import spans_from_proto_bytes
from rampart_otel.model import Span
from rampart_otel.storage.segments import list_segments, read_records

PROTOBUF = "application/x-protobuf"
LIMIT = 64 * 1024


def post(
    url: str, body: bytes, content_type: str = PROTOBUF, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type, **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def exporter(url: str, **kwargs: object) -> OTLPSpanExporter:
    return OTLPSpanExporter(endpoint=url, timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    running = start_in_process(
        tmp_path_factory.mktemp("http") / "data", **{"limits.max_request_bytes": LIMIT}
    )
    yield running
    running.stop()


@pytest.fixture(scope="module")
def acknowledged() -> set[tuple[str, str]]:
    """Spans acknowledged by any test of this module: all must be stored at the end."""
    return set()


def send_ok(collector: InProcess, acknowledged: set[tuple[str, str]], **kwargs: object) -> None:
    spans = make_traces(3)
    assert exporter(collector.traces_url, **kwargs).export(spans) is SpanExportResult.SUCCESS
    acknowledged |= span_keys(spans)


def test_protobuf_from_the_real_exporter_is_stored(collector, acknowledged):
    send_ok(collector, acknowledged)
    assert acknowledged <= stored_spans(collector.data_dir)


def test_gzip_from_the_real_exporter_is_stored(collector, acknowledged):
    send_ok(collector, acknowledged, compression=Compression.Gzip)
    assert acknowledged <= stored_spans(collector.data_dir)


def test_json_is_accepted_and_answered_in_json(collector, acknowledged):
    spans = make_traces(2)
    document = _otlp_json(spans)
    status, headers, body = post(
        collector.traces_url, json.dumps(document).encode(), "application/json"
    )
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert "partialSuccess" not in json.loads(body)
    acknowledged |= span_keys(spans)
    assert span_keys(spans) <= stored_spans(collector.data_dir)


def test_partly_bad_data_is_a_partial_success(collector, acknowledged):
    spans = make_traces(2)
    document = _otlp_json(spans)
    bad = dict(document["resourceSpans"][0]["scopeSpans"][0]["spans"][0], spanId="00" * 8)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"].append(bad)
    status, _, body = post(collector.traces_url, json.dumps(document).encode(), "application/json")
    assert status == 200
    partial = json.loads(body)["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 1
    assert "span id" in partial["errorMessage"]
    acknowledged |= span_keys(spans)
    assert span_keys(spans) <= stored_spans(collector.data_dir)


def scorable_spans(collector: InProcess) -> set[tuple[str, str]]:
    """Every span the scorer's own decoder reads from the stored records (each must decode)."""
    found = set()
    for _, path in list_segments(collector.data_dir / "segments"):
        for _, _, payload in read_records(path):
            found |= {(s.trace_id, s.span_id) for s in spans_from_proto_bytes(payload)}
    return found


def stored_placeholders(collector: InProcess, span_id: str) -> list[Span]:
    """The stored placeholders of span ``span_id`` (spans refused, kept for their run)."""
    found = []
    for _, path in list_segments(collector.data_dir / "segments"):
        for _, _, payload in read_records(path):
            found += [s for s in spans_from_proto_bytes(payload) if s.span_id == span_id]
    return [span for span in found if span.refused]


def test_a_span_with_a_malformed_link_is_refused_alone_and_the_rest_is_scorable(
    collector, acknowledged
):
    spans = make_traces(2)
    request = encode_spans(spans)
    bad = request.resource_spans[0].scope_spans[0].spans[1]
    link = bad.links.add()
    link.trace_id, link.span_id = b"\x01\x02\x03", bytes(range(1, 9))  # 3 bytes: no trace id
    status, _, body = post(collector.traces_url, request.SerializeToString())
    assert status == 200
    partial = ExportTraceServiceResponse.FromString(body).partial_success
    assert partial.rejected_spans == 1 and "link" in partial.error_message
    good = span_keys(spans) - {(bad.trace_id.hex(), bad.span_id.hex())}
    acknowledged |= good
    assert good <= scorable_spans(collector)


def test_a_span_nested_too_deep_for_protobuf_is_refused_alone(collector, acknowledged):
    spans = make_traces(2)
    request = encode_spans(spans)
    deep = request.resource_spans[0].scope_spans[0].spans[0]
    value = deep.attributes.add(key="deep").value
    for _ in range(60):  # upb refuses a message nested over 100 levels: the whole request
        value = value.array_value.values.add()
    value.string_value = "x"
    status, _, body = post(collector.traces_url, request.SerializeToString())
    assert status == 200
    partial = ExportTraceServiceResponse.FromString(body).partial_success
    assert partial.rejected_spans == 1 and "not readable on their own" in partial.error_message
    assert "scored without their content, as incomplete" in partial.error_message
    good = span_keys(spans) - {(deep.trace_id.hex(), deep.span_id.hex())}
    acknowledged |= good
    assert good <= scorable_spans(collector)
    # ...and it is stored as a placeholder of its run (its ids): the run is never complete.
    (placeholder,) = stored_placeholders(collector, deep.span_id.hex())
    assert placeholder.trace_id == deep.trace_id.hex() and placeholder.refused == "undecodable"
    assert "MaxDepth" in placeholder.attributes[UNDECODABLE_KEY]


def test_a_malformed_json_span_is_refused_alone_and_stored_as_a_placeholder(
    collector, acknowledged
):
    spans = make_traces(2)
    document = _otlp_json(spans)
    bad = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    bad["name"] = 5  # the span does not decode; its line's other spans do
    status, _, body = post(collector.traces_url, json.dumps(document).encode(), "application/json")
    assert status == 200
    partial = json.loads(body)["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 1
    assert "spans[0]: name: expected a string, got number" in partial["errorMessage"]
    good = span_keys(spans) - {(bad["traceId"], bad["spanId"])}
    acknowledged |= good
    assert good <= scorable_spans(collector)
    (placeholder,) = stored_placeholders(collector, bad["spanId"])
    assert (placeholder.trace_id, placeholder.refused) == (bad["traceId"], "undecodable")


def test_an_unreadable_span_with_no_trace_id_is_counted_as_in_no_run(collector, acknowledged):
    spans = make_traces(2)
    request = encode_spans(spans)
    bad = request.resource_spans[0].scope_spans[0].spans[0]
    bad.trace_id, bad.name = b"\x01\x02\x03", "@corrupt@"  # 3 bytes: in no trace
    body = request.SerializeToString().replace(b"@corrupt@", b"\xffcorrupt@")  # not UTF-8
    status, _, response = post(collector.traces_url, body)
    assert status == 200
    partial = ExportTraceServiceResponse.FromString(response).partial_success
    assert partial.rejected_spans == 1
    assert "1 of them with no readable trace id, in no run" in partial.error_message
    good = span_keys(spans) - {
        (spans[0].context.trace_id.to_bytes(16, "big").hex(), bad.span_id.hex())
    }
    acknowledged |= good
    assert good <= scorable_spans(collector)
    assert not stored_placeholders(collector, bad.span_id.hex())
    with urllib.request.urlopen(collector.http_url + "/metrics", timeout=30) as answer:
        text = answer.read().decode()
    assert any(
        line.startswith("rampart_otel_spans_rejected_total{")
        and 'transport="http"' in line
        and 'reason="no_trace"' in line
        and float(line.rsplit(" ", 1)[1]) >= 1
        for line in text.splitlines()
    ), text


def test_a_json_key_with_a_lone_surrogate_is_not_500(collector, acknowledged):
    # json_format once raised SystemError on it; OTLP/JSON receivers ignore unknown keys.
    body = b'{"resourceSpans": [], "\\ud800": 1}'
    status, _, response = post(collector.traces_url, body, "application/json")
    assert status == 200
    assert "partialSuccess" not in json.loads(response)


def test_json_of_unknown_keys_only_is_an_empty_request(collector, acknowledged):
    # OTLP/JSON receivers MUST ignore unknown fields: this is an empty request, not bad data.
    status, _, response = post(collector.traces_url, b'{"future": [1]}', "application/json")
    assert status == 200
    assert "partialSuccess" not in json.loads(response)


def test_an_all_zero_trace_id_is_refused_naming_the_otlp_rule(collector, acknowledged):
    spans = make_traces(1)
    document = _otlp_json(spans)
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["traceId"] = "0" * 32
    status, _, body = post(collector.traces_url, json.dumps(document).encode(), "application/json")
    assert status == 400
    message = json.loads(body)["message"]
    assert message.startswith("3 of 3 spans refused: trace id must be 16 bytes, not all zero")
    assert "OTLP trace.proto" in message


def test_an_enum_of_1e999999_is_400_not_500(collector, acknowledged):
    # Found by tests/fuzzing.py: json_format raised OverflowError, the receiver a 500.
    body = b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":1e999999}]}]}]}'
    status, _, _ = post(collector.traces_url, body, "application/json")
    assert status == 400


def test_malformed_protobuf_is_400_with_a_status(collector, acknowledged):
    status, headers, body = post(collector.traces_url, b"\x0a\xff\xff\xff\xff\x0f garbage")
    assert status == 400
    assert headers["content-type"] == PROTOBUF
    assert Status.FromString(body).message.startswith("not a valid ExportTraceServiceRequest")
    send_ok(collector, acknowledged)


def test_malformed_json_is_400_with_a_json_status(collector, acknowledged):
    status, headers, body = post(collector.traces_url, b'{"resourceSpans": [', "application/json")
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert "invalid JSON" in json.loads(body)["message"]
    send_ok(collector, acknowledged)


def test_wrong_content_type_is_415(collector, acknowledged):
    status, _, body = post(collector.traces_url, b"hello", "text/plain")
    assert status == 415
    assert "unsupported content type" in Status.FromString(body).message
    send_ok(collector, acknowledged)


def test_wrong_method_is_405(collector):
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(collector.traces_url, timeout=30)
    assert raised.value.code == 405
    assert raised.value.headers["allow"] == "POST"


def test_oversized_body_is_413(collector, acknowledged):
    status, _, _ = post(collector.traces_url, b"\x00" * (LIMIT + 1))
    assert status == 413
    send_ok(collector, acknowledged)


def test_gzip_bomb_is_413_without_inflating_it(collector, acknowledged):
    bomb = gzip.compress(b"\x00" * (50 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < LIMIT
    status, _, body = post(collector.traces_url, bomb, PROTOBUF, **{"Content-Encoding": "gzip"})
    assert status == 413
    assert "decompressed" in Status.FromString(body).message
    send_ok(collector, acknowledged)


def test_real_exporter_does_not_retry_a_400(collector):
    # A span with an all-zero trace id is bad data: the whole request is refused.
    spans = make_traces(1, spans_per_trace=1)
    request = encode_spans(spans)
    request.resource_spans[0].scope_spans[0].spans[0].trace_id = bytes(16)
    status, _, body = post(collector.traces_url, request.SerializeToString())
    assert status == 400
    assert "trace id" in Status.FromString(body).message


def test_healthz_and_metrics(collector):
    with urllib.request.urlopen(collector.http_url + "/healthz", timeout=30) as response:
        assert response.status == 200
    with urllib.request.urlopen(collector.http_url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    for name in (
        "rampart_otel_spans_received_total",
        "rampart_otel_spans_rejected_total",
        "rampart_otel_ingest_queue_requests",
        "rampart_otel_open_traces",
        "rampart_otel_verdicts_total",
    ):
        assert name in text
    requests = [
        line for line in text.splitlines() if line.startswith("rampart_otel_requests_total{")
    ]
    assert any('transport="http"' in line and 'code="413"' in line for line in requests)


def test_everything_acknowledged_is_still_stored(collector, acknowledged):
    assert acknowledged
    assert acknowledged <= stored_spans(collector.data_dir)


# -- authentication --------------------------------------------------------------------


def test_missing_or_wrong_token_is_401(tmp_path):
    running = start_in_process(tmp_path / "data", auth_token="s3cret")
    try:
        spans = make_traces(1)
        body = encode_spans(spans).SerializeToString()
        status, headers, _ = post(running.traces_url, body)
        assert status == 401
        assert headers["www-authenticate"].startswith("Bearer")
        status, _, _ = post(running.traces_url, body, Authorization="Bearer wrong")
        assert status == 401
        assert exporter(running.traces_url).export(spans) is SpanExportResult.FAILURE
        good = exporter(running.traces_url, headers={"Authorization": "Bearer s3cret"})
        assert good.export(spans) is SpanExportResult.SUCCESS
        assert stored_spans(running.data_dir) == span_keys(spans)
    finally:
        running.stop()


# -- backpressure ----------------------------------------------------------------------


def test_full_queue_is_503_with_retry_after_and_the_exporter_delivers_in_the_end(tmp_path):
    running = start_in_process(tmp_path / "data", **{"limits.queue_max_requests": 2})
    writer = running.collector.writer
    try:
        writer.pause()  # nothing is written: the queue fills up
        batches = [make_traces(2) for _ in range(6)]
        results: list[SpanExportResult] = []
        threads = [
            threading.Thread(
                target=lambda b=batch: results.append(exporter(running.traces_url).export(b))
            )
            for batch in batches
        ]
        for thread in threads:
            thread.start()
        # Both of the queue's places taken by exporters first (a direct request that got
        # one would wait for the paused writer instead).
        deadline = time.monotonic() + 30
        while writer.queue_requests < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.queue_requests == 2
        # While paused, a direct request sees the refusal and its Retry-After.
        status, headers, body = post(
            running.traces_url, encode_spans(make_traces(1)).SerializeToString()
        )
        assert status == 503
        assert headers["retry-after"] == "1"
        assert Status.FromString(body).code == 14  # UNAVAILABLE
        writer.pause(False)
        for thread in threads:
            thread.join(60)
        assert results == [SpanExportResult.SUCCESS] * len(batches)
        expected = set().union(*(span_keys(batch) for batch in batches))
        assert expected <= stored_spans(running.data_dir)
        assert writer.queue_requests == 0
    finally:
        writer.pause(False)
        running.stop()


def _otlp_json(spans) -> dict:
    """OTLP/JSON as the spec writes it: hex ids, camelCase, int64 as strings."""
    from google.protobuf import json_format

    document = json_format.MessageToDict(encode_spans(spans))
    for rs in document["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _b64_to_hex(span[key])
    return document


def _b64_to_hex(value: str) -> str:
    import base64

    return base64.b64decode(value).hex()


def test_stalled_requests_are_cut_off(tmp_path):
    running = start_in_process(
        tmp_path / "data",
        **{"limits.header_timeout_seconds": 0.5, "limits.body_timeout_seconds": 0.5},
    )
    try:
        host, port = running.collector.bound.http
        with socket.create_connection((host, port), timeout=10) as head_only:
            head_only.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")  # and nothing more
            started = time.monotonic()
            assert head_only.recv(1024) == b""  # closed by the server, no response
            assert time.monotonic() - started < 5
        with socket.create_connection((host, port), timeout=10) as part_body:
            part_body.sendall(
                b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                b"Content-Length: 1000\r\n\r\n0123456789"
            )
            response = b""
            while chunk := part_body.recv(4096):  # until the server closes the connection
                response += chunk
            assert response.startswith(b"HTTP/1.1 408 ")
            assert b"within 0.5s" in response
        # The receiver still serves everyone else.
        spans = make_traces(1)
        assert exporter(running.traces_url).export(spans) is SpanExportResult.SUCCESS
    finally:
        running.stop()


def test_misdirected_requests_are_each_diagnosed_in_one_log_line(tmp_path, caplog):
    """The usual wrong turns of an exporter: each one log line saying what to change,
    escaped, and not repeated for every retry."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
        OTLPSpanExporter as GrpcSpanExporter,
    )

    caplog.set_level("WARNING", logger="rampart_otel.receivers")
    running = start_in_process(tmp_path / "data")
    try:
        spans = make_traces(1)
        host_port = running.http_url.removeprefix("http://")

        def lines(text: str) -> list[str]:
            return [r.getMessage() for r in caplog.records if text in r.getMessage()]

        # a gRPC exporter pointed at the HTTP port: HTTP/2 preface on an HTTP/1.1 server
        grpc_client = GrpcSpanExporter(endpoint=host_port, insecure=True, timeout=5)
        assert grpc_client.export(spans) is SpanExportResult.FAILURE
        grpc_client.shutdown()
        found = wait_for_lines(lines, "an HTTP/2 (gRPC) client connected to the OTLP/HTTP port")
        assert f"the gRPC port ({running.grpc_target})" in found[0]
        # OTEL_EXPORTER_OTLP_ENDPOINT given the full URL: the SDK adds /v1/traces again
        assert exporter(running.traces_url + "/v1/traces").export(spans) is not (
            SpanExportResult.SUCCESS
        )
        (line,) = lines("/v1/traces given twice")
        assert line.startswith("POST /v1/traces/v1/traces: ")
        # OTEL_EXPORTER_OTLP_TRACES_ENDPOINT given the base URL: used as given, no path
        assert exporter(running.http_url).export(spans) is not SpanExportResult.SUCCESS
        (line,) = lines("POST /: not found: OTLP/HTTP traces are received on /v1/traces")
        # a wrong content type, and a JSON body sent as protobuf
        status, _, _ = post(running.traces_url, b"{}", content_type="text/plain")
        assert status == 415
        (line,) = lines("POST /v1/traces with content type 'text/plain'")
        body = json.dumps({"resourceSpans": []}).encode()
        status, _, answer = post(running.traces_url, b"  " + body)
        assert status == 400
        assert (
            "the body is JSON but its content type says protobuf"
            in Status.FromString(answer).message
        )
        (line,) = lines("the body is JSON but its content type says protobuf")
        # a hostile path is escaped; a second doubled path within a minute is not logged
        post(running.http_url + "/%1b%5b31mforged%0a/v1/metrics", body)
        (line,) = lines("forged")
        assert "this collector receives traces only" in line
        assert "\x1b" not in line and "\n" not in line
        post(running.traces_url + "/v1/traces", body)
        assert len(lines("/v1/traces given twice")) == 1
        assert stored_spans(running.data_dir) == set()  # none of it was taken as data
    finally:
        running.stop()


def wait_for_lines(lines, text: str) -> list[str]:
    deadline = time.monotonic() + 30
    while not (found := lines(text)):
        assert time.monotonic() < deadline, f"no log line with {text!r}"
        time.sleep(0.05)
    return found


def test_a_kind_of_diagnosis_is_logged_once_a_minute_with_the_count_between(caplog):
    from rampart_otel.receivers.otlp_http import Diagnoses

    now = [0.0]
    diagnose = Diagnoses(every=60, clock=lambda: now[0])
    caplog.set_level("WARNING", logger="rampart_otel.receivers")
    for second in range(0, 130, 10):
        now[0] = second
        diagnose("doubled_path", method="POST", path="/v1/traces/v1/traces")
    diagnose("content_type", content_type="'text/plain'")
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 4
    assert messages[0].endswith("(http://HOST:PORT/v1/traces)")
    assert messages[1].endswith("(5 more since the last such line)")  # at 60 s
    assert messages[2].endswith("(5 more since the last such line)")  # at 120 s
    assert messages[3].startswith("POST /v1/traces with content type 'text/plain'")


def test_tls_and_garbage_on_the_http_port_are_diagnosed_without_flooding_the_log(tmp_path, caplog):
    """An https:// exporter pointed at the plaintext port, and requests that are no HTTP at
    all (a scanner, a retrying client): one line each, then at most one a minute, however
    many arrive; each still answered or closed, and the receiver serves everyone else."""
    import ssl

    caplog.set_level("WARNING")
    running = start_in_process(tmp_path / "data")
    try:
        host, port = running.collector.bound.http

        def messages() -> list[str]:
            return [r.getMessage() for r in caplog.records]

        context = ssl.create_default_context()
        for _ in range(20):  # a real TLS handshake, as an https:// exporter opens it
            with (
                socket.create_connection((host, port), timeout=10) as raw,
                pytest.raises((ssl.SSLError, OSError)),
            ):
                context.wrap_socket(raw, server_hostname="localhost")
        found = wait_for_lines(
            lambda text: [m for m in messages() if text in m], "a TLS (https) client"
        )
        assert f"OTLP/HTTP port {port}, which takes plain HTTP" in found[0]
        for _ in range(50):
            with socket.create_connection((host, port), timeout=10) as garbage:
                garbage.sendall(b"\x01\x02 not http at all\r\n\r\n")
                assert garbage.recv(1024).startswith(b"HTTP/1.1 400 ")
        assert len([m for m in messages() if "a TLS (https) client" in m]) == 1
        invalid = [m for m in messages() if "not valid HTTP/1.1" in m]
        assert len(invalid) == 1, messages()
        assert "Invalid HTTP request received." not in messages()
        assert exporter(running.traces_url).export(make_traces(1)) is SpanExportResult.SUCCESS
    finally:
        running.stop()
