"""The scoring backlog (``collector.backlog``): its age, bytes and drain estimate from the
writer's commits and the shards' positions, push-back past ``scoring.max_backlog_seconds``
and back, and a pushed-back request that leaves nothing written; then a live collector
whose scorers are paused (SIGSTOP) answering 503 + Retry-After on OTLP/HTTP and UNAVAILABLE
+ RetryInfo on OTLP/gRPC, the real exporters retrying until it accepts again."""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from collector.harness import (
    POLICY,
    make_traces,
    span_keys,
    start_in_process,
    stored_spans,
    wait_for,
    write_config,
)
from rampart_otel.collector.backlog import Backlog, GatedConsumer
from rampart_otel.errors import Backlogged
from rampart_otel.storage.segments import SegmentWriter

METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def backlog(tmp_path: Path, limit: float | None = 10.0, shards: int = 2) -> tuple[Backlog, Clock]:
    clock = Clock()
    (tmp_path / "segments").mkdir(exist_ok=True)
    return Backlog(tmp_path / "segments", shards, (1, 0), (1, 0), limit, clock), clock


def test_age_and_bytes_are_what_the_slowest_shard_has_not_read(tmp_path):
    log, clock = backlog(tmp_path)
    assert (log.seconds(), log.bytes(), log.drain_seconds()) == (0.0, 0, 0.0)
    log.acked((1, 100), 100)
    clock.now += 1
    log.acked((1, 300), 200)
    clock.now += 2
    assert log.seconds() == 3.0 and log.bytes() == 300
    log.read(0, (1, 300))  # one shard is through; the other has read nothing
    assert log.seconds() == 3.0 and log.bytes() == 300
    log.read(1, (1, 150))  # past the first commit only
    assert log.seconds() == 2.0 and log.bytes() == 200
    log.read(1, (1, 300))
    assert (log.seconds(), log.bytes()) == (0.0, 0)


def test_data_stored_before_the_start_counts_as_acknowledged_at_the_start(tmp_path):
    writer = SegmentWriter(tmp_path / "segments", fsync=False)
    writer.append_wait(b"x" * 96, 30)
    end = writer.position
    writer.close()
    clock = Clock()
    log = Backlog(tmp_path / "segments", 1, (1, 0), end, 10.0, clock)
    clock.now += 4
    assert log.bytes() == 100 and log.seconds() == 4.0
    log.read(0, end)
    assert log.bytes() == 0


def test_the_drain_estimate_is_the_backlog_at_the_rate_read_while_there_was_work(tmp_path):
    log, clock = backlog(tmp_path, shards=1)
    log.tick()
    clock.now += 1
    log.tick()  # idle all along: says nothing of the scorer's speed
    assert log.read_rate is None
    log.acked((1, 1000), 1000)
    assert math.isnan(log.drain_seconds())  # not measured yet
    log.tick()
    clock.now += 1
    log.acked((1, 2000), 1000)
    log.read(0, (1, 1000))
    log.tick()  # work at both ends: 1000 bytes read in 1 s
    assert log.read_rate == 1000.0
    assert log.drain_seconds() == 1.0
    clock.now += 1
    log.tick()  # no progress while there is work: the rate falls
    assert log.read_rate is not None and 0 < log.read_rate < 1000
    assert log.drain_seconds() > 1.0


def test_push_back_begins_past_the_limit_and_ends_under_it_saying_so_once_each(tmp_path, caplog):
    caplog.set_level(logging.INFO, "rampart_otel.collector")
    log, clock = backlog(tmp_path, limit=10.0, shards=1)
    log.acked((1, 100), 100)
    clock.now += 10
    assert log.admit()  # at the limit, not past it
    clock.now += 0.5
    assert not log.admit() and not log.admit()
    assert (log.pushing_back, log.pushbacks, log.refused_requests) == (True, 1, 2)
    log.acked((1, 200), 100)  # (not by ingest: a request already in the writer's queue)
    log.read(0, (1, 100))
    assert log.seconds() == 0.0
    assert log.admit()  # the age is back under 80% of the limit
    assert not log.pushing_back
    lines = [r.getMessage() for r in caplog.records]
    assert len([line for line in lines if "pushing back" in line]) == 1
    assert len([line for line in lines if "accepting spans again" in line]) == 1


def test_once_half_the_limit_old_a_backlog_that_will_take_too_long_pushes_back(tmp_path):
    log, clock = backlog(tmp_path, limit=10.0, shards=1)
    log.acked((1, 1000), 1000)
    log.tick()
    clock.now += 1
    log.acked((1, 101_000), 100_000)
    log.read(0, (1, 1000))
    log.tick()  # read 1000 bytes/s; 100,000 left: 100 s to go
    assert log.drain_seconds() == 100.0
    assert log.admit()  # just acked: a rate measured over a second is not trusted alone
    clock.now += 5.5
    assert not log.admit()  # 5.5 s old and 100 s to drain: push back now, not at 10 s old


def test_no_limit_never_pushes_back(tmp_path):
    log, clock = backlog(tmp_path, limit=None, shards=1)
    log.acked((1, 100), 100)
    clock.now += 3600
    assert log.admit() and log.seconds() == 3600


def test_a_pushed_back_request_is_refused_before_anything_is_written(tmp_path):
    writer = SegmentWriter(tmp_path / "segments", fsync=False)
    clock = Clock()
    log = Backlog(tmp_path / "segments", 1, (1, 0), writer.position, 1.0, clock)
    writer.on_durable = log.acked
    gate = GatedConsumer(writer, log)
    try:
        gate.append_wait(b"first", 30)
        assert log.bytes() == len(b"first") + 4  # noted before it was acknowledged
        before = writer.position
        clock.now += 2
        with pytest.raises(Backlogged, match="max_backlog_seconds"):
            gate.append_wait(b"second", 30)
        with pytest.raises(Backlogged):
            gate.append(b"third", lambda error: None)
        assert writer.position == before and writer.records == 1
        assert writer.queue_requests == 0
    finally:
        writer.close()


# -- a live collector with its scorers paused ----------------------------------------------


def _post(url: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/x-protobuf"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _grpc_call(target: str, body: bytes) -> grpc.RpcError | bytes:
    with grpc.insecure_channel(target) as channel:
        try:
            return channel.unary_unary(METHOD)(body, timeout=30)
        except grpc.RpcError as error:
            return error


@pytest.mark.e2e
def test_paused_scorers_push_ingest_back_and_the_exporters_deliver_once_they_catch_up(
    tmp_path, caplog
):
    caplog.set_level(logging.INFO, "rampart_otel.collector")
    write_config(tmp_path / "policy.yaml", POLICY)
    running = start_in_process(
        tmp_path / "data",
        policies=[str(tmp_path / "policy.yaml")],
        **{
            "scoring.workers": 2,
            "scoring.max_backlog_seconds": 0.5,
            "assembly.idle_seconds": 0.2,
        },
    )
    collector = running.collector
    pool, log = collector.scorer, collector.backlog
    assert pool is not None and log is not None
    paused: list[int] = []
    try:
        wait_for(lambda: len(collector.metrics.shards) == 2, 90, "both scorer shards to report")
        for shard in pool.shards:
            assert shard.process is not None and shard.process.pid is not None
            os.kill(shard.process.pid, signal.SIGSTOP)
            paused.append(shard.process.pid)
        first = make_traces(2)
        status, _, _ = _post(running.traces_url, encode_spans(first).SerializeToString())
        assert status == 200  # nothing was behind yet
        wait_for(lambda: log.seconds() > 0.5, 30, "the unread record to age past the limit")
        written = collector.writer.position
        refused = make_traces(2)
        payload = encode_spans(refused).SerializeToString()

        status, headers, body = _post(running.traces_url, payload)
        assert status == 503
        assert {k.lower(): v for k, v in headers.items()}["retry-after"] == "1"
        assert "max_backlog_seconds" in Status.FromString(body).message

        error = _grpc_call(running.grpc_target, payload)
        assert isinstance(error, grpc.RpcError)
        assert error.code() is grpc.StatusCode.UNAVAILABLE  # the spec's throttling signal
        trailers = dict(error.trailing_metadata())
        assert RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]).retry_delay.seconds == 1

        assert collector.writer.position == written  # nothing of either was written
        assert not span_keys(refused) & stored_spans(running.data_dir)
        metrics = collector.metrics.exposition()[0].decode()
        assert "rampart_otel_ingest_pushing_back 1.0" in metrics
        assert "rampart_otel_requests_pushed_back_total 2.0" in metrics
        assert 'rampart_otel_spans_rejected_total{reason="backlog",transport="http"} 6.0' in (
            metrics
        )
        assert 'rampart_otel_spans_rejected_total{reason="backlog",transport="grpc"} 6.0' in (
            metrics
        )

        # The real exporters, refused, retry; once the scorers read the backlog they land.
        batches = {"http": make_traces(2), "grpc": make_traces(2)}
        senders = {
            "http": HttpExporter(endpoint=running.traces_url, timeout=60),
            "grpc": GrpcExporter(endpoint=running.grpc_target, insecure=True, timeout=60),
        }
        results: dict[str, SpanExportResult] = {}
        threads = [
            threading.Thread(target=lambda k=k: results.update({k: senders[k].export(batches[k])}))
            for k in senders
        ]
        for thread in threads:
            thread.start()
        wait_for(lambda: log.refused_requests >= 4, 30, "both exporters to be pushed back")
        assert not results
        for pid in paused:
            os.kill(pid, signal.SIGCONT)
        paused.clear()
        for thread in threads:
            thread.join(90)
        assert results == {"http": SpanExportResult.SUCCESS, "grpc": SpanExportResult.SUCCESS}
        stored = stored_spans(running.data_dir)
        assert span_keys(first) | span_keys(batches["http"]) | span_keys(batches["grpc"]) <= stored
        assert not span_keys(refused) & stored  # refused and not retried: never stored
        wait_for(lambda: log.seconds() == 0 and not log.pushing_back, 60, "the backlog to clear")
        lines = [record.getMessage() for record in caplog.records]
        assert any("pushing back" in line for line in lines)
        assert any("accepting spans again" in line for line in lines)
    finally:
        for pid in paused:
            os.kill(pid, signal.SIGCONT)
        running.stop()
