"""The scoring path over real segments: each run scored once, replays skipped, late spans
re-scored as a new revision with the run's earlier spans, incomplete traces not forever."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import recorded
from cli_runner import run_cli
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

from collector.harness import POLICY, make_traces, write_config
from rampart_otel.codecs.otlp_proto import spans_to_proto_request
from rampart_otel.collector.scorer import Scorer, make_evaluator
from rampart_otel.model import Resource, Scope, Span
from rampart_otel.parallel import owner
from rampart_otel.processors.assemble import RunAssembler
from rampart_otel.reading import read_located
from rampart_otel.receivers import ingest
from rampart_otel.storage.checkpoint import reconcile_checkpoint
from rampart_otel.storage.results import ResultsStore, shard_checkpoint
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


def _followers(root: ReadableSpan, count: int) -> list[ReadableSpan]:
    """``count`` more tool spans under ``root``, in its trace."""
    parent = root.context
    return [
        ReadableSpan(
            name="execute_tool search",
            context=SpanContext(parent.trace_id, random.getrandbits(64) | 1, False, TraceFlags(1)),
            parent=parent,
            resource=root.resource,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.id": f"later-{index}",
            },
            kind=SpanKind.INTERNAL,
            start_time=root.start_time,
            end_time=root.start_time + 1000,
            instrumentation_scope=root.instrumentation_scope,
        )
        for index in range(count)
    ]


def test_a_capped_revision_never_weakens_a_verdict_evidence_decided(tmp_path):
    # A run followed by more spans than one open trace may hold (max_trace_spans, 100,000 by
    # default; 4 here): the later pieces are scored without the earlier spans (too many to
    # keep), and their revision read UNDETERMINED where the evidence had decided UNSAFE.
    clock = Clock()
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    writer = SegmentWriter(tmp_path / "segments")
    scorer = Scorer(
        tmp_path / "segments",
        ResultsStore(tmp_path / "results.db"),
        make_evaluator([policy], []),
        idle=5,
        max_wait=60,
        clock=clock,
        max_trace_spans=4,
    )
    spans = make_traces(1, tool="delete_file")
    writer.append_wait(encode_spans(spans).SerializeToString(), 30)
    scorer.step()
    clock.now = 10
    scorer.step()
    writer.append_wait(encode_spans(_followers(spans[0], 11)).SerializeToString(), 30)
    scorer.step()
    clock.now = 20
    scorer.step()
    trace_id = f"{spans[0].context.trace_id:032x}"
    revisions = [rev for run_id, rev, _ in runs(scorer.store) if run_id == trace_id]
    assert len(revisions) >= 3  # the later pieces each a revision of their own
    no_delete = {
        row.revision: row.status for row in scorer.store.results() if row.check_id == "no-delete"
    }
    assert no_delete[0] == "unsafe"
    assert set(no_delete.values()) == {"unsafe"}, no_delete
    latest = max(no_delete)
    (kept,) = (
        row
        for row in scorer.store.results()
        if row.check_id == "no-delete" and row.revision == latest
    )
    assert "delete_file" in json.dumps(kept.result["evidence"])


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


def test_the_scorer_process_collects_young_objects_every_million_and_restores_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It holds seconds of open traces: at ``score``'s 50,000 nearly every young object
    outlives a collection, and is traversed for nothing."""
    import gc
    from multiprocessing import Pipe

    from rampart_otel.collector import scorer as scorer_module
    from rampart_otel.collector.config import CollectorConfig

    policy = write_config(tmp_path / "policy.yaml", POLICY)
    seen: list[int] = []
    monkeypatch.setattr(Scorer, "step", lambda self, budget=0: seen.append(gc.get_threshold()[0]))
    monkeypatch.setattr(Scorer, "drain", lambda self: None)
    config = CollectorConfig.model_validate({"data_dir": str(tmp_path), "policies": [policy]})
    ours, theirs = Pipe()
    ours.send("drain")
    saved = gc.get_threshold()
    store = ResultsStore(tmp_path / "results.db")
    scorer_module._score_until_drained(
        config, theirs, store, make_evaluator([policy], []), [], None
    )
    assert seen == [scorer_module.SCORER_GC_YOUNG_THRESHOLD] == [1_000_000]
    assert gc.get_threshold() == saved
    store.close()


# -- shards (scoring.workers) --------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def shard_scorers(tmp_path: Path, clock: Clock, shards: int, **options: object) -> list[Scorer]:
    """``shards`` scorers of one data directory, each with its own store connection (as
    each scorer process has)."""
    return [shard_scorer(tmp_path, clock, shard, shards, **options) for shard in range(shards)]


def shard_scorer(
    tmp_path: Path, clock: Clock, shard: int, shards: int, **options: object
) -> Scorer:
    policy = Path(str(options.pop("policy", tmp_path / "policy.yaml")))
    return Scorer(
        tmp_path / "segments",
        ResultsStore(tmp_path / "results.db"),
        make_evaluator([policy], []),
        idle=5,
        max_wait=60,
        clock=clock,
        shard=shard,
        shards=shards,
        **options,  # type: ignore[arg-type]
    )


def verdicts(store: ResultsStore) -> list[tuple[str, str, str, int]]:
    return sorted((r.run_id, r.check_id, r.status, r.revision) for r in store.results())


def test_shards_score_every_trace_once_each_building_only_its_own_spans(tmp_path):
    clock = Clock()
    writer, _ = setup(tmp_path, clock)
    spans = make_traces(12, tool="delete_file") + make_traces(12)
    for start in range(0, len(spans), 9):  # records mixing traces of every shard
        writer.append_wait(encode_spans(spans[start : start + 9]).SerializeToString(), 30)
    shards = shard_scorers(tmp_path, clock, 3)
    for scorer in shards:
        scorer.step()
    clock.now = 10
    for scorer in shards:
        scorer.step()
    store = shards[0].store
    assert [rev for _, rev, _ in runs(store)] == [0] * 24  # every trace once
    assert sum(s.stats.spans_decoded for s in shards) == len(spans)  # no span built twice
    for index, scorer in enumerate(shards):
        assert scorer.stats.spans_decoded > 0  # 24 traces: every shard owns some
        owned = {run_id for run_id, _, _ in runs(store) if owner(run_id, 3) == index}
        assert scorer.stats.runs_scored == len(owned)
    statuses = sorted(r.status for r in store.results())
    # as one scorer gives them: delete_file UNSAFE, search SAFE, egress unobserved
    assert statuses == ["safe"] * 12 + ["undetermined"] * 24 + ["unsafe"] * 12
    # The store's checkpoint is the least of the shards', which every one passed.
    assert store.checkpoint() == shards[0].position


def test_shards_give_the_verdicts_one_scorer_gives_on_the_samples(tmp_path):
    # One run per trace (stitch off): stitching joins pieces within one shard only.
    batches = [item for item in read_located([SAMPLES / "traces"]) if isinstance(item, list)]
    found: dict[int, list[tuple[str, str, str, int]]] = {}
    for shards in (1, 3):
        data = tmp_path / f"shards-{shards}"
        writer = SegmentWriter(data / "segments", fsync=False)
        for batch in batches:
            writer.append_wait(spans_to_proto_request(batch).SerializeToString(), 30)
        writer.close()
        clock = Clock()
        scorers = shard_scorers(data, clock, shards, policy=SAMPLES / "policy.yaml", stitch=False)
        for scorer in scorers:
            while scorer.step():
                pass
        clock.now = 1e9  # every trace idle and past max_wait: scored, complete or not
        for scorer in scorers:
            scorer.step()
        found[shards] = verdicts(scorers[0].store)
        assert sum(s.stats.spans_decoded for s in scorers) == sum(map(len, batches))
    assert len({run for run, *_ in found[1]}) > 50
    assert found[3] == found[1]


def test_a_different_number_of_shards_after_a_restart_misses_nothing_and_scores_nothing_twice(
    tmp_path,
):
    clock = Clock()
    writer, _ = setup(tmp_path, clock)
    done = make_traces(10, tool="delete_file")
    # Traces left open, none of them the first of the next run's 3 shards': it runs ahead.
    open_traces = [
        span for span in make_traces(40) if owner(f"{span.context.trace_id:032x}", 3) != 0
    ][:30]
    for span in open_traces[::3]:
        span._end_time = None  # roots not ended: these traces stay open
    # One record holds both: a restart reads the finished traces again, from the checkpoint.
    writer.append_wait(encode_spans(done + open_traces).SerializeToString(), 30)
    first = shard_scorers(tmp_path, clock, 2)
    for scorer in first:
        scorer.step()
    clock.now = 10
    for scorer in first:
        scorer.step()
    assert len(runs(first[0].store)) == 10  # the finished ones; the rest wait in the checkpoint
    assert first[0].store.checkpoint() < first[0].position
    for scorer in first:  # the collector stops (or dies): the next one starts with 3 shards
        scorer.store.close()
    assert reconcile_checkpoint(tmp_path / "results.db", tmp_path / "segments") is not None
    later = make_traces(5)
    writer.append_wait(encode_spans(later).SerializeToString(), 30)
    clock.now = 20
    second = [shard_scorer(tmp_path, clock, 0, 3)]
    second[0].step()
    clock.now = 30
    second[0].step()  # scored (or skipped) all it owns: its point is past the open traces
    assert second[0].checkpoint() == second[0].position
    for index in (1, 2):  # the other shards start late (a slow start, a restarted process)
        second.append(shard_scorer(tmp_path, clock, index, 3))
        second[-1].step()
    clock.now = 200  # past max_wait: the open traces are scored, incomplete
    for scorer in second:
        scorer.step()
    scored = runs(second[0].store)
    expected = {f"{s.context.trace_id:032x}" for s in done + open_traces + later}
    assert {run_id for run_id, _, _ in scored} == expected  # none missed
    assert [rev for _, rev, _ in scored] == [0] * len(expected)  # none scored twice
    assert sum(s.stats.runs_skipped for s in second) == 10  # the finished ones, read again
    # ... and back to one scorer: the shards' points are dropped, nothing is scored again.
    for scorer in second:
        scorer.store.close()
    reconcile_checkpoint(tmp_path / "results.db", tmp_path / "segments")
    (alone,) = shard_scorers(tmp_path, clock, 1)
    clock.now = 400
    alone.step()
    alone.step()
    assert runs(alone.store) == scored
    assert alone.stats.runs_scored == 0


def test_the_stores_checkpoint_is_the_least_shard_point_and_waits_for_every_shard():
    assert shard_checkpoint([(3, 10), (2, 50)], 2, (1, 0)) == (2, 50)
    assert shard_checkpoint([(3, 10)], 2, (1, 0)) == (1, 0)  # shard 1 has not committed yet
    assert shard_checkpoint([(3, 10)], 2, None) == None  # noqa: E711 -- it starts at the start
    assert shard_checkpoint([(3, 10), (4, 0)], 2, None) == (3, 10)


def test_a_run_followed_by_more_spans_than_kept_stays_unsafe_in_a_running_collector(tmp_path):
    """The capped revision (above), over OTLP into ``rampart-otel collect``: a run then more
    spans than ``assembly.max_trace_spans`` (100,000 by default; 4 here)."""
    import sqlite3

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from collector.harness import spawn, wait_for

    write_config(tmp_path / "policy.yaml", POLICY)
    settings = write_config(
        tmp_path / "collector.yaml",
        "policies: [policy.yaml]\nassembly:\n  idle_seconds: 1\n  max_trace_spans: 4\n",
    )
    collector = spawn(tmp_path / "data", settings)
    sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
    spans = make_traces(1, tool="delete_file")
    try:
        sender.export(spans)
        wait_for(lambda: collector.metrics().get("rampart_otel_runs_scored_total", 0) >= 1, 60)
        sender.export(_followers(spans[0], 11))
        wait_for(lambda: collector.metrics().get("rampart_otel_runs_scored_total", 0) >= 4, 90)
    finally:
        sender.shutdown()
        assert collector.terminate() == 0
    db = sqlite3.connect(tmp_path / "data/results.db")
    statuses = dict(
        db.execute("SELECT revision, status FROM results WHERE check_id = 'no-delete'").fetchall()
    )
    db.close()
    assert len(statuses) >= 3 and set(statuses.values()) == {"unsafe"}, statuses
