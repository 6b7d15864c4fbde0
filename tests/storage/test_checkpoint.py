"""A torn write below the scorer's checkpoint must not strand what is sent afterwards: after
recovery, the checkpoint is moved back into the segments, so every trace acknowledged after
a restart is scored. Tried at every byte offset of the last two records."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from collector.harness import POLICY, make_traces, write_config
from collector.test_scorer import Clock, new_scorer
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from rampart_otel.storage.checkpoint import reconcile_checkpoint
from rampart_otel.storage.results import ResultsStore
from rampart_otel.storage.segments import SegmentWriter, list_segments, read_records


def trace_record(tool: str = "search") -> tuple[str, bytes]:
    spans = make_traces(1, spans_per_trace=1, tool=tool)
    return f"{spans[0].context.trace_id:032x}", encode_spans(spans).SerializeToString()


def scored_runs(data: Path) -> set[str]:
    store = ResultsStore(data / "results.db", readonly=True)
    try:
        return {row.run_id for row in store.results()}
    finally:
        store.close()


def score_everything(data: Path) -> None:
    clock = Clock()
    scorer = new_scorer(data, clock)
    scorer.step()
    clock.now = 100
    scorer.step()
    scorer.store.close()


def restart_and_send(data: Path) -> str:
    """What the collector does on start (recover, reconcile), then one more trace, scored."""
    writer = SegmentWriter(data / "segments")
    reconcile_checkpoint(data / "results.db", data / "segments")
    trace_id, record = trace_record()
    writer.append_wait(record, 30)
    writer.close()
    score_everything(data)
    return trace_id


@pytest.mark.slow  # a restart per byte of the last record
def test_traces_sent_after_a_torn_write_below_the_checkpoint_are_scored(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    write_config(template / "policy.yaml", POLICY)
    writer = SegmentWriter(template / "segments")
    sent = []
    for _ in range(4):
        trace_id, record = trace_record()
        sent.append(trace_id)
        writer.append_wait(record, 30)
    writer.close()
    score_everything(template)
    assert scored_runs(template) == set(sent)
    ((_, segment),) = list_segments(template / "segments")
    starts = [start for start, _, _ in read_records(segment)]
    size = segment.stat().st_size

    for cut in range(starts[-2], size):
        data = tmp_path / f"cut-{cut}"
        shutil.copytree(template, data)
        with (data / "segments" / segment.name).open("r+b") as handle:
            handle.truncate(cut)
        late = restart_and_send(data)
        scored = scored_runs(data)
        assert late in scored, f"cut at {cut}: the trace sent after the restart was never scored"
        assert set(sent) <= scored  # what was scored before stays
        shutil.rmtree(data)


def test_a_checkpoint_naming_a_segment_that_is_gone_is_moved_back(tmp_path: Path) -> None:
    write_config(tmp_path / "policy.yaml", POLICY)
    writer = SegmentWriter(tmp_path / "segments")
    writer.append_wait(trace_record()[1], 30)
    writer.close()
    score_everything(tmp_path)
    for _, path in list_segments(tmp_path / "segments"):
        path.unlink()  # an operator cleared the segments; results.db stayed
    store = ResultsStore(tmp_path / "results.db")
    with store.transaction() as txn:
        txn.set_checkpoint(7, 123)
    store.close()
    late = restart_and_send(tmp_path)
    assert late in scored_runs(tmp_path)
