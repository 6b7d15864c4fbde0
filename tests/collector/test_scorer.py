"""The scoring path over real segments: each run scored once, replays skipped, late spans
re-scored as a new revision with the run's earlier spans, incomplete traces not forever."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import recorded
from cli_runner import run_cli
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from collector.harness import POLICY, make_traces, write_config
from rampart_otel.collector.scorer import Scorer, make_evaluator
from rampart_otel.model import Resource, Scope, Span
from rampart_otel.processors.assemble import RunAssembler
from rampart_otel.receivers import ingest
from rampart_otel.storage.results import ResultsStore
from rampart_otel.storage.segments import SegmentWriter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def setup(tmp_path: Path, clock: Clock) -> tuple[SegmentWriter, Scorer]:
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    writer = SegmentWriter(tmp_path / "segments")
    scorer = new_scorer(tmp_path, clock, policy)
    return writer, scorer


def new_scorer(tmp_path: Path, clock: Clock, policy: Path | None = None) -> Scorer:
    policy = policy or tmp_path / "policy.yaml"
    return Scorer(
        tmp_path / "segments",
        ResultsStore(tmp_path / "results.db"),
        make_evaluator([policy], []),
        idle=5,
        max_wait=60,
        clock=clock,
    )


def runs(store: ResultsStore) -> list[tuple[str, int, int]]:
    return list(
        store.db.execute("SELECT run_id, revision, span_count FROM runs ORDER BY run_id, revision")
    )


def test_each_completed_run_is_scored_once_and_replay_skips_it(tmp_path):
    clock = Clock()
    writer, scorer = setup(tmp_path, clock)
    spans = make_traces(4, tool="delete_file")
    writer.append_wait(encode_spans(spans).SerializeToString(), 30)
    scorer.step()
    assert runs(scorer.store) == []  # not idle yet
    assert (scorer.stats.spans_decoded, scorer.stats.spans_scored) == (12, 0)
    clock.now = 10
    scorer.step()
    scored = runs(scorer.store)
    assert len(scored) == 4 and all(rev == 0 and count == 3 for _, rev, count in scored)
    assert scorer.stats.spans_scored == 12
    statuses = [r.status for r in scorer.store.results()]
    assert sorted(statuses) == ["undetermined"] * 4 + ["unsafe"] * 4

    # A restart replays from the stored checkpoint; a replay from scratch scores nothing new.
    scorer.store.db.execute("DELETE FROM checkpoint")
    again = new_scorer(tmp_path, clock)
    again.step()
    clock.now = 30
    again.step()
    assert runs(again.store) == scored
    assert again.stats.runs_skipped == 4
    assert again.stats.spans_scored == 0


def test_checkpoint_stays_at_the_oldest_open_trace(tmp_path):
    clock = Clock()
    writer, scorer = setup(tmp_path, clock)
    open_trace = make_traces(1)
    open_trace[0]._end_time = None  # the root has not ended yet
    writer.append_wait(encode_spans(open_trace).SerializeToString(), 30)
    writer.append_wait(encode_spans(make_traces(2)).SerializeToString(), 30)
    scorer.step()
    clock.now = 10
    scorer.step()
    assert len(runs(scorer.store)) == 2
    assert scorer.store.checkpoint() == (1, 0)  # the open trace's record is read again
    assert scorer.open_traces == 1
    clock.now = 100  # past max_wait: scored incomplete rather than never
    scorer.step()
    assert len(runs(scorer.store)) == 3
    assert scorer.store.checkpoint() == scorer.position


def test_late_span_is_a_new_revision_with_the_earlier_spans(tmp_path):
    clock = Clock()
    writer, scorer = setup(tmp_path, clock)
    spans = make_traces(1)
    writer.append_wait(encode_spans(spans[:2]).SerializeToString(), 30)
    scorer.step()
    clock.now = 10
    scorer.step()
    writer.append_wait(encode_spans(spans[2:]).SerializeToString(), 30)
    scorer.step()
    clock.now = 20
    scorer.step()
    trace_id = f"{spans[0].context.trace_id:032x}"
    assert runs(scorer.store) == [(trace_id, 0, 2), (trace_id, 1, 3)]
    assert scorer.stats.spans_scored == 5  # the later revision counts all three
    assert {r.revision for r in scorer.store.results()} == {0, 1}


class Crash(Exception):
    pass


def test_a_long_round_commits_as_it_goes_and_a_crash_loses_only_the_run_in_hand(tmp_path):
    clock = Clock()
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    writer = SegmentWriter(tmp_path / "segments")
    writer.append_wait(encode_spans(make_traces(4)).SerializeToString(), 30)
    pipeline = make_evaluator([policy], [])
    score = pipeline.score
    calls = 0

    def crashing(run):
        nonlocal calls
        calls += 1
        if calls == 3:
            raise Crash
        return score(run)

    pipeline.score = crashing
    store = ResultsStore(tmp_path / "results.db")
    scorer = Scorer(
        tmp_path / "segments", store, pipeline, idle=5, max_wait=60, clock=clock, commit_every=0
    )
    scorer.step()
    clock.now = 10  # all four runs are released by one expiry, in one round
    with pytest.raises(Crash):
        scorer.step()
    assert len(runs(store)) == 2  # each earlier run was committed when it was scored
    assert store.checkpoint() == (1, 0)  # the record still holds runs not stored
    store.close()

    again = new_scorer(tmp_path, clock)
    again.step()
    clock.now = 20
    again.step()
    stored = runs(again.store)
    assert len(stored) == 4 and {revision for _, revision, _ in stored} == {0}
    assert again.stats.runs_skipped == 2


def test_drain_scores_complete_traces_without_waiting_for_idle(tmp_path):
    clock = Clock()
    writer, scorer = setup(tmp_path, clock)
    complete = make_traces(2)
    incomplete = make_traces(1)
    incomplete[0]._end_time = None
    writer.append_wait(encode_spans(complete + incomplete).SerializeToString(), 30)
    scorer.drain()
    assert len(runs(scorer.store)) == 2
    assert scorer.open_traces == 1


def _span(trace: str, span_id: str, parent: str | None = None, ended: bool = True) -> Span:
    return Span(
        trace, span_id, parent, span_id, "INTERNAL", 1, 2 if ended else None, "UNSET", "",
        {}, [], [], Resource({}), Scope(),
    )  # fmt: skip


def test_assembler_max_wait_emits_a_trace_whose_root_never_ends():
    assembler = RunAssembler(idle=1, max_wait=10)
    assembler.add([_span("t1", "root", ended=False)], now=0)
    assert assembler.expire(now=5) == []
    assert assembler.open_traces == 1
    assert [run.run_id for run in assembler.expire(now=11)] == ["t1"]


def test_assembler_emit_complete_and_caller_numbered_revisions():
    assembler = RunAssembler(idle=100, remember_revisions=False)
    assembler.add([_span("t1", "root"), _span("t2", "root", ended=False)], now=0)
    assert [run.run_id for run in assembler.emit_complete(now=1)] == ["t1"]
    assembler.add([_span("t1", "late", "root")], now=2)
    assert [run.revision for run in assembler.flush()] == [0, 0]


def test_an_unreadable_span_in_a_stored_record_is_quarantined_and_the_rest_scored(tmp_path):
    # A record stored before the receiver salvaged what protobuf cannot parse whole (or a
    # decoder gap): the scorer reads every span it can, instead of dropping the whole record.
    clock = Clock()
    writer, scorer = setup(tmp_path, clock)
    spans = make_traces(3, tool="delete_file")
    request = encode_spans(spans)
    bad = request.resource_spans[0].scope_spans[0].spans[4]  # a tool span of the second trace
    value = bad.attributes.add(key="deep").value
    for _ in range(60):  # upb refuses a message nested over 100 levels: the whole request
        value = value.array_value.values.add()
    value.string_value = "x"
    writer.append_wait(request.SerializeToString(), 30)
    scorer.step()
    clock.now = 10
    scorer.step()
    assert scorer.stats.spans_quarantined == 1 and scorer.stats.decode_errors == 1
    scored = {run_id: count for run_id, _, count in runs(scorer.store)}
    # The unread span is in its run as a placeholder (its ids): the run is never SAFE.
    assert len(scored) == 3 and sorted(scored.values()) == [3, 3, 3]
    damaged = [row for row in scorer.store.results() if row.run_id == bad.trace_id.hex()]
    assert damaged and {row.status for row in damaged} <= {"undetermined", "unsafe"}
    scorer.store.close()
    # ...and the audit names it among its input errors, in both outputs.
    audit = run_cli("audit", "--data-dir", tmp_path, "--json")
    assert audit.returncode == 0, audit.stderr
    (error,) = json.loads(audit.stdout)["input_errors"]
    assert error["location"] == "segment-000000000001.binpb@0"
    assert error["message"].startswith("1 spans quarantined (the rest of the record was scored)")
    terminal = run_cli("audit", "--data-dir", tmp_path)
    assert "warning: segment-000000000001.binpb@0: 1 spans quarantined" in terminal.stdout


def test_a_span_not_readable_on_its_own_leaves_its_run_undetermined_never_safe(tmp_path):
    # The receiver salvages what protobuf cannot parse whole; a span it could not read was
    # once left out silently, and the run it alone made UNSAFE read SAFE. Now it is stored
    # as a placeholder (its ids), and every channel it could have fed is short of complete.
    body = recorded.request_with_an_unreadable_span()
    accepted = ingest.decode(body, ingest.PROTOBUF)  # the OTLP/HTTP and gRPC receivers' path
    assert accepted.rejected == 1 and "not readable on their own" in accepted.message
    clock = Clock()
    writer = SegmentWriter(tmp_path / "segments")
    scorer = new_scorer(tmp_path, clock, recorded.POLICY_PACKS)
    writer.append_wait(accepted.payload, 30)
    scorer.step()
    clock.now = 10
    scorer.step()
    (row,) = (
        row
        for row in scorer.store.results()
        if row.run_id == recorded.UNREADABLE_RUN and row.check_id == "destructive-actions.sql"
    )
    assert row.status == "undetermined"
    db = row.result["coverage"]["side_effects.db_query"]
    assert db["state"] == "partial"
    assert any(
        reason.startswith("1 span of the run could not be decoded") for reason in db["reasons"]
    ), db["reasons"]
    codes = [code["code"] for code in db["reason_codes"]]
    assert "finding.undecodable_span" in codes
    assert recorded.UNREADABLE_SPAN in next(
        code["span_ids"]
        for code in db["reason_codes"]
        if code["code"] == "finding.undecodable_span"
    )


def test_a_run_out_of_its_time_budget_is_undetermined_never_safe(tmp_path):
    write_config(tmp_path / "policy.yaml", POLICY)
    writer = SegmentWriter(tmp_path / "segments")
    writer.append_wait(encode_spans(make_traces(2)).SerializeToString(), 30)
    clock = Clock()
    scorer = Scorer(
        tmp_path / "segments",
        ResultsStore(tmp_path / "results.db"),
        make_evaluator([tmp_path / "policy.yaml"], [], budget_seconds=1e-9),
        idle=5,
        max_wait=60,
        clock=clock,
    )
    scorer.step()
    clock.now = 10
    scorer.step()
    rows = list(scorer.store.results())
    assert len(rows) == 4 and {row.status for row in rows} == {"undetermined"}
    assert all("time budget" in row.result["summary"] for row in rows)


def test_a_trace_that_never_stops_receiving_spans_is_scored_within_max_wait(tmp_path, capsys):
    """A long-lived agent: one span every 0.3 s, never idle. Scored by max_wait (+10 s)."""
    import random
    import threading
    import time

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, TraceFlags

    from collector.harness import spawn, wait_for

    write_config(tmp_path / "policy.yaml", POLICY)
    settings = write_config(
        tmp_path / "collector.yaml",
        "policies: [policy.yaml]\nassembly:\n  idle_seconds: 3\n  max_wait_seconds: 5\n",
    )
    collector = spawn(tmp_path / "data", settings)
    (template,) = make_traces(1, spans_per_trace=1)
    trace_id = template.context.trace_id
    root = SpanContext(trace_id, template.context.span_id, False, TraceFlags(1))
    sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
    stop = threading.Event()
    sent: list[float] = []

    def keep_sending() -> None:
        while not stop.is_set():
            span_id = random.getrandbits(64) | 1
            child = ReadableSpan(
                name="execute_tool search",
                context=SpanContext(trace_id, span_id, False, TraceFlags(1)),
                parent=root,
                resource=template.resource,
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "s"},
                start_time=time.time_ns(),
                end_time=time.time_ns() + 1000,
                instrumentation_scope=template.instrumentation_scope,
            )
            sender.export([template] if not sent else [child])
            sent.append(time.monotonic())
            stop.wait(0.3)

    thread = threading.Thread(target=keep_sending, daemon=True)
    thread.start()
    try:
        wait_for(lambda: sent, 60, "the first span")
        wait_for(lambda: collector.metrics()["rampart_otel_runs_scored_total"] >= 1, 60, "score")
        delay = time.monotonic() - sent[0]
        assert thread.is_alive() and len(sent) > 1  # still sending when it was scored
        with capsys.disabled():
            print(f"\n[figure] endless trace scored {delay:.1f}s after its first span (max_wait 5)")
        assert delay < 5 + 10
    finally:
        stop.set()
        thread.join(30)
        assert collector.terminate() == 0, collector.log.read_text()
