"""Segment files: group commit, rotation, torn-tail recovery, and readable by ``read_paths``."""

from __future__ import annotations

import resource
import threading
from pathlib import Path

import pytest
from collector.harness import make_traces, span_keys
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from rampart_otel.model import InputError
from rampart_otel.receivers.files import read_paths
from rampart_otel.storage.segments import (
    QueueFull,
    SegmentWriter,
    WriterClosed,
    list_segments,
    read_records,
    recover,
)


def payload(traces: int = 1) -> tuple[bytes, set[tuple[str, str]]]:
    spans = make_traces(traces)
    return encode_spans(spans).SerializeToString(), span_keys(spans)


def records(directory: Path) -> list[bytes]:
    return [p for _, path in list_segments(directory) for _, _, p in read_records(path)]


def test_concurrent_appends_share_group_commits_and_all_land(tmp_path):
    writer = SegmentWriter(tmp_path)
    sent = [payload()[0] for _ in range(64)]
    threads = [threading.Thread(target=writer.append_wait, args=(p, 30)) for p in sent]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    writer.close()
    assert sorted(records(tmp_path)) == sorted(sent)
    assert writer.records == 64
    assert 1 <= writer.groups <= 64


def test_segments_rotate_by_size_and_read_paths_reads_them_as_is(tmp_path):
    writer = SegmentWriter(tmp_path, segment_max_bytes=4096)
    expected: set[tuple[str, str]] = set()
    for _ in range(20):
        data, keys = payload(2)
        writer.append_wait(data, 30)
        expected |= keys
    writer.close()
    assert len(list_segments(tmp_path)) > 1
    found: set[tuple[str, str]] = set()
    for item in read_paths([tmp_path]):
        assert not isinstance(item, InputError), item
        found |= {(span.trace_id, span.span_id) for span in item}
    assert found == expected


@pytest.mark.parametrize("tail", [b"\x00\x00\x01", b"\x00\x00\x10\x00partial", bytes(64)])
def test_torn_tail_is_cut_on_start_and_appends_continue(tmp_path, tail):
    writer = SegmentWriter(tmp_path)
    first, _ = payload()
    writer.append_wait(first, 30)
    writer.close()
    (_, path), *_ = list_segments(tmp_path)
    good_size = path.stat().st_size
    with path.open("ab") as handle:
        handle.write(tail)
    writer = SegmentWriter(tmp_path)
    assert writer.recovery.cut_bytes == len(tail)
    assert path.stat().st_size == good_size
    second, _ = payload()
    writer.append_wait(second, 30)
    writer.close()
    assert records(tmp_path) == [first, second]
    assert recover(tmp_path).cut_bytes == 0


def test_garbage_record_at_the_tail_is_cut(tmp_path):
    writer = SegmentWriter(tmp_path)
    first, _ = payload()
    writer.append_wait(first, 30)
    writer.close()
    (_, path), *_ = list_segments(tmp_path)
    with path.open("ab") as handle:
        handle.write(b"\x00\x00\x00\x04\xff\xff\xff\xff")  # whole length, not a message
    assert recover(tmp_path).cut_bytes == 8
    assert records(tmp_path) == [first]


def test_a_full_queue_refuses_instead_of_blocking(tmp_path):
    writer = SegmentWriter(tmp_path, queue_max_requests=2)
    writer.pause()
    done: list[BaseException | None] = []
    writer.append(payload()[0], done.append)
    writer.append(payload()[0], done.append)
    with pytest.raises(QueueFull):
        writer.append(payload()[0], done.append)
    assert writer.queue_requests == 2
    writer.pause(False)
    writer.close()
    assert done == [None, None]
    with pytest.raises(WriterClosed):
        writer.append(payload()[0], done.append)


def test_queue_bytes_limit_always_admits_one_request(tmp_path):
    writer = SegmentWriter(tmp_path, queue_max_bytes=10)
    writer.pause()
    writer.append(payload()[0], lambda error: None)  # larger than the limit, but alone
    with pytest.raises(QueueFull):
        writer.append(payload()[0], lambda error: None)
    writer.pause(False)
    writer.close()
    assert len(records(tmp_path)) == 1


def test_a_disk_that_refuses_writes_is_one_log_line_unhealthy_until_a_write_succeeds(
    tmp_path, caplog
):
    # The segment cannot grow (RLIMIT_FSIZE: EFBIG, as ENOSPC on a full disk): every request
    # is refused, the log says so once (not once per retried request), and the writer is
    # unhealthy (/healthz 503) until a write succeeds again.
    writer = SegmentWriter(tmp_path / "segments")
    first, _ = payload()
    writer.append_wait(first, 30)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (writer.position[1], hard))
    try:
        for _ in range(3):
            with pytest.raises(OSError):
                writer.append_wait(payload()[0], 30)
        assert not writer.healthy
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    last, _ = payload()
    writer.append_wait(last, 30)
    assert writer.healthy
    writer.close()
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert "refusing requests" in errors[0].getMessage()
    assert records(tmp_path / "segments") == [first, last]
