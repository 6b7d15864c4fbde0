"""OTLP/gRPC receiver, driven by the real OTLP/gRPC exporter and by raw calls for bad input."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import grpc
import pytest
from collector.harness import InProcess, make_traces, span_keys, start_in_process, stored_spans
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LIMIT = 64 * 1024


def exporter(target: str, **kwargs: object) -> OTLPSpanExporter:
    return OTLPSpanExporter(endpoint=target, insecure=True, timeout=30, **kwargs)  # type: ignore[arg-type]


def raw_call(
    target: str, body: bytes, metadata: tuple = (), compression: grpc.Compression | None = None
) -> grpc.RpcError | bytes:
    with grpc.insecure_channel(target, compression=compression) as channel:
        call = channel.unary_unary(METHOD)
        try:
            return call(body, timeout=30, metadata=metadata)
        except grpc.RpcError as error:
            return error


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    running = start_in_process(
        tmp_path_factory.mktemp("grpc") / "data", **{"limits.max_request_bytes": LIMIT}
    )
    yield running
    running.stop()


def test_real_exporter_spans_are_stored(collector):
    spans = make_traces(3)
    assert exporter(collector.grpc_target).export(spans) is SpanExportResult.SUCCESS
    assert span_keys(spans) <= stored_spans(collector.data_dir)


def test_gzip_is_stored(collector):
    spans = make_traces(3)
    sender = exporter(collector.grpc_target, compression=grpc.Compression.Gzip)
    assert sender.export(spans) is SpanExportResult.SUCCESS
    assert span_keys(spans) <= stored_spans(collector.data_dir)


def test_malformed_protobuf_is_invalid_argument(collector):
    error = raw_call(collector.grpc_target, b"\x0a\xff\xff\xff\xff\x0f garbage")
    assert isinstance(error, grpc.RpcError)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    spans = make_traces(1)
    assert exporter(collector.grpc_target).export(spans) is SpanExportResult.SUCCESS


def test_partly_bad_data_is_a_partial_success(collector):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    spans = make_traces(2)
    request = encode_spans(spans)
    bad = request.resource_spans[0].scope_spans[0].spans.add()
    bad.CopyFrom(request.resource_spans[0].scope_spans[0].spans[0])
    bad.span_id = b"\x01\x02"
    reply = raw_call(collector.grpc_target, request.SerializeToString())
    assert isinstance(reply, bytes)
    assert ExportTraceServiceResponse.FromString(reply).partial_success.rejected_spans == 1
    assert span_keys(spans) <= stored_spans(collector.data_dir)


def test_oversized_message_is_resource_exhausted(collector):
    request = encode_spans(make_traces(1))
    request.resource_spans[0].resource.attributes.add(key="pad").value.string_value = "x" * LIMIT
    error = raw_call(collector.grpc_target, request.SerializeToString())
    assert isinstance(error, grpc.RpcError)
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED


def test_gzip_bomb_is_resource_exhausted_once_inflated(collector):
    request = encode_spans(make_traces(1))
    pad = "x" * (8 * 1024 * 1024)  # gzip makes this tiny on the wire
    request.resource_spans[0].resource.attributes.add(key="pad").value.string_value = pad
    body = request.SerializeToString()
    error = raw_call(collector.grpc_target, body, compression=grpc.Compression.Gzip)
    assert isinstance(error, grpc.RpcError)
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    spans = make_traces(1)
    assert exporter(collector.grpc_target).export(spans) is SpanExportResult.SUCCESS


def test_missing_token_is_unauthenticated(tmp_path):
    running = start_in_process(tmp_path / "data", auth_token="s3cret")
    try:
        spans = make_traces(1)
        error = raw_call(running.grpc_target, encode_spans(spans).SerializeToString())
        assert isinstance(error, grpc.RpcError)
        assert error.code() is grpc.StatusCode.UNAUTHENTICATED
        good = exporter(running.grpc_target, headers=(("authorization", "Bearer s3cret"),))
        assert good.export(spans) is SpanExportResult.SUCCESS
        assert stored_spans(running.data_dir) == span_keys(spans)
    finally:
        running.stop()


def test_full_queue_is_unavailable_with_retry_info_and_the_exporter_delivers(tmp_path):
    running = start_in_process(tmp_path / "data", **{"limits.queue_max_requests": 1})
    writer = running.collector.writer
    try:
        writer.pause()
        batches = [make_traces(2) for _ in range(4)]
        results: list[SpanExportResult] = []
        threads = [
            threading.Thread(
                target=lambda b=batch: results.append(exporter(running.grpc_target).export(b))
            )
            for batch in batches
        ]
        for thread in threads:
            thread.start()
        # The queue's one place taken by an exporter first: a raw call that got there first
        # would wait for the paused writer instead (a race this test once lost under load).
        deadline = time.monotonic() + 30
        while writer.queue_requests < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.queue_requests == 1
        error = raw_call(running.grpc_target, encode_spans(make_traces(1)).SerializeToString())
        assert isinstance(error, grpc.RpcError)
        assert error.code() is grpc.StatusCode.UNAVAILABLE
        trailers = dict(error.trailing_metadata())
        assert RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]).retry_delay.seconds == 1
        assert Status.FromString(trailers["grpc-status-details-bin"]).code == 14
        writer.pause(False)
        for thread in threads:
            thread.join(60)
        assert results == [SpanExportResult.SUCCESS] * len(batches)
        expected = set().union(*(span_keys(batch) for batch in batches))
        assert expected <= stored_spans(running.data_dir)
    finally:
        writer.pause(False)
        running.stop()
