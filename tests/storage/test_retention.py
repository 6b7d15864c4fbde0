"""Retention deletes whole old segments by age and size, and never one holding data not yet
scored: nothing at or after the scorer's checkpoint (the oldest open trace), whatever the
limits say -- over real segments, the real scorer and its results.db, and a live collector."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from collector.harness import POLICY, start_in_process, stored_spans, wait_for, write_config
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from span_factory import span

from rampart_otel.codecs.otlp_proto import spans_to_json_dict, spans_to_proto_request
from rampart_otel.collector.scorer import Scorer, make_evaluator
from rampart_otel.model import Span
from rampart_otel.replay import replay
from rampart_otel.storage.results import ResultsStore
from rampart_otel.storage.retention import (
    Retention,
    apply_retention,
    checkpoint_segment,
    parse_duration,
    parse_size,
)
from rampart_otel.storage.segments import SegmentWriter, list_segments, read_records

OPEN = "0" * 31 + "1"  # the trace whose root span has not ended yet


def trace(number: int, ended: bool = True) -> list[Span]:
    trace_id = OPEN if not ended else f"{number + 2:032x}"
    root = f"{number + 1:08x}" + "a" * 8
    return [
        span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, trace_id=trace_id,
             span_id=root, end=-1 if ended else None),
        span("execute_tool search", {"gen_ai.operation.name": "execute_tool",
             "gen_ai.tool.name": "search", "padding": "x" * 600}, trace_id=trace_id,
             parent=root),
    ]  # fmt: skip


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def oldest_holds_open(data_dir: Path) -> bool:
    """The oldest segment left is the one holding the open trace: all before it deleted."""
    segments = list_segments(data_dir / "segments")
    if not segments:
        return False
    _, oldest = segments[0]
    for _, _, payload in read_records(oldest):
        request = ExportTraceServiceRequest.FromString(payload)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                if any(s.trace_id.hex() == OPEN for s in scope_spans.spans):
                    return True
    return False


def segment_numbers(directory: Path) -> list[int]:
    return [seq for seq, _ in list_segments(directory)]


def test_limits_parse_from_numbers_and_units() -> None:
    assert parse_duration("7d") == 7 * 86400 and parse_duration("90") == 90.0
    assert parse_duration(3600) == 3600.0 and parse_duration(None) is None
    assert parse_size("10GiB") == 10 * 2**30 and parse_size("500MB") == 500 * 10**6
    assert parse_size("2k") == 2000 and parse_size(4096) == 4096
    for bad in ("soon", "-1", "7 days"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    with pytest.raises(ValueError):
        parse_size("lots")


def test_segments_holding_an_open_trace_are_kept_until_it_is_scored(tmp_path: Path) -> None:
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    segments = tmp_path / "segments"
    writer = SegmentWriter(segments, segment_max_bytes=4096, fsync=False)
    for number in range(6):  # scored soon: segments before the open trace may go
        writer.append_wait(spans_to_proto_request(trace(number)).SerializeToString(), 30)
    writer.append_wait(spans_to_proto_request(trace(99, ended=False)).SerializeToString(), 30)
    open_segment = writer.position[0]
    for number in range(6, 30):
        writer.append_wait(spans_to_proto_request(trace(number)).SerializeToString(), 30)
    clock = Clock()
    store = ResultsStore(tmp_path / "results.db")
    scorer = Scorer(segments, store, make_evaluator([policy], []), idle=5, max_wait=60, clock=clock)
    scorer.step()
    clock.now = 10  # every ended trace is idle now; the open one waits (max_wait 60)
    scorer.step()
    assert scorer.stats.runs_scored == 30
    assert checkpoint_segment(tmp_path / "results.db") == open_segment
    before = segment_numbers(segments)
    assert open_segment > before[0] and len(before) > open_segment  # open trace in the middle

    retention = Retention(tmp_path, max_age=0, max_bytes=0)  # every limit says: delete all
    first = retention.run(writing=writer.position[0])
    assert segment_numbers(segments) == [n for n in before if n >= open_segment]
    assert len(first.deleted) == open_segment - before[0]
    assert first.over_by_unscored == first.kept_bytes > 0  # over the limit, and says so
    assert retention.run(writing=writer.position[0]).deleted == []  # still open: still kept

    clock.now = 100  # past max_wait: the open trace is scored as it stands
    scorer.step()
    assert scorer.stats.runs_scored == 31
    scored = {row.run_id for row in store.results()}
    assert OPEN in scored
    last = writer.position[0]
    retention.run(writing=last)
    assert segment_numbers(segments) == [last]  # the one being written always stays
    # A restart resumes from the checkpoint over what is left, scoring nothing twice.
    again = Scorer(segments, store, make_evaluator([policy], []), idle=5, max_wait=60)
    again.step()
    assert again.stats.runs_scored == 0
    writer.close()
    store.close()


def test_age_deletes_only_a_contiguous_run_of_old_scored_segments(tmp_path: Path) -> None:
    segments = tmp_path / "segments"
    segments.mkdir()
    for seq in range(1, 6):
        (segments / f"segment-{seq:012d}.binpb").write_bytes(b"\0" * 100)
    now = 1_000_000.0
    ages = {1: 500, 2: 50, 3: 500, 4: 500, 5: 500}  # seconds old; 2 is young
    for seq, age in ages.items():
        path = segments / f"segment-{seq:012d}.binpb"
        os.utime(path, (now - age, now - age))
    result = apply_retention(segments, keep_from=5, max_age=100, max_bytes=None, now=now)
    assert [p.name for p in result.deleted] == ["segment-000000000001.binpb"]
    assert segment_numbers(segments) == [2, 3, 4, 5]  # 3 and 4 wait behind the young 2
    result = apply_retention(segments, keep_from=3, max_age=None, max_bytes=250, now=now)
    assert segment_numbers(segments) == [3, 4, 5]  # size: oldest first, never past keep_from
    assert result.over_by_unscored == 50
    assert apply_retention(segments, None, 0, 0, now=now).deleted == []  # nothing scored yet


def test_a_live_collector_deletes_scored_segments_and_keeps_the_open_trace(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "recording.jsonl"
    still_open = trace(99, ended=False)
    batches = [trace(n) for n in range(8)] + [still_open]
    batches += [trace(n) for n in range(8, 16)]
    recording.write_text("".join(json.dumps(spans_to_json_dict(b)) + "\n" for b in batches))
    collector = start_in_process(
        tmp_path / "data",
        policies=[str(write_config(tmp_path / "policy.yaml", POLICY))],
        **{
            "storage.segment_max_bytes": 4096,
            "storage.fsync": False,
            "assembly.idle_seconds": 0.3,
            "retention.max_bytes": 0,
            "retention.check_interval_seconds": 0.1,
        },
    )
    data = collector.data_dir
    try:
        code, _ = replay([recording], collector.traces_url, "http/protobuf", {}, io.StringIO())
        assert code == 0
        retention = collector.collector.housekeeping.retention
        assert retention is not None
        wait_for(lambda: retention.segments_deleted > 0, 60, "retention to delete")
        store = ResultsStore(data / "results.db", readonly=True)
        wait_for(lambda: len({r.run_id for r in store.results()}) == 16,
                 60, "every ended trace to be scored")  # fmt: skip
        store.close()
        wait_for(lambda: oldest_holds_open(data), 60, "every segment before the open trace gone")
        kept = stored_spans(data)
        assert {(OPEN, s.span_id) for s in still_open} <= kept  # never unscored data
        metrics = collector.collector.metrics.exposition()[0].decode()
        assert "rampart_otel_retention_segments_deleted " in metrics
    finally:
        collector.stop()
