"""The scoring path: tail the segments, assemble runs, normalize, evaluate, store verdicts.

It reads only what storage already holds, so live scoring and recovery after a crash are
one code path: on start it resumes from the checkpoint stored with the last results (the
first record of the oldest trace still open then), and runs found already scored (same
span ids) are skipped. It runs in its own process (``run_process``), at a lower priority:
acknowledging data never waits for scoring, and a slow policy only makes scoring lag.

A late span for an emitted run is merged with the run's earlier spans while they are still
cached (``late_cache_runs``) and scored as the next revision; a run whose span set is
already covered by stored revisions is never scored again.

Sharded (``scoring.workers`` > 1): each scorer process is one shard, reading every segment
itself and taking only the spans of the traces it owns (``parallel.owner``; a record with
none of them costs one parse, its spans are not built). Each shard stores its own resume
point with its results, and the store's checkpoint is the least of them; every shard
starts from that checkpoint (``storage.checkpoint``), so a different number of shards after
a restart only re-reads what is skipped as already scored. Stitching joins the pieces of a
run within one shard: pieces owned by different shards are scored apart (never SAFE), as
behind a gateway that routes traces to several collectors.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import fcntl
import logging
import os
import signal
import sqlite3
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from rampart_otel.codecs.otlp_ids import kept_spans
from rampart_otel.codecs.otlp_proto import (
    readable_spans,
    spans_from_proto_bytes,
)
from rampart_otel.collector import writeback
from rampart_otel.collector.config import CollectorConfig
from rampart_otel.collector.console import log_to_stderr
from rampart_otel.collector.results_sink import result_rows
from rampart_otel.collector.verdict_export import start_verdict_export
from rampart_otel.engine import (
    checked_assumptions,
    fewer_young_collections,
    load_policies,
    run_service,
)
from rampart_otel.errors import DecodeError, SchemaError, StoreError
from rampart_otel.evaluation import CheckResult, EvalOutcome, Policy, SafetyStatus
from rampart_otel.evaluation.judge_endpoint import JudgeClient
from rampart_otel.exporters.otlp_verdicts import VerdictEventSink, VerdictExporter
from rampart_otel.model import Run, Span, add_copy, copies_held
from rampart_otel.parallel import owner
from rampart_otel.pipeline import Pipeline
from rampart_otel.processors.assemble import DEFAULT_MAX_SPANS, RunAssembler, tenant_key
from rampart_otel.processors.stitch import StitchingAssembler
from rampart_otel.run_graph import scored_ids
from rampart_otel.sinks import ResultSink, Scored, SinkDefaults
from rampart_otel.storage.outbox import Outbox
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultRow, span_set
from rampart_otel.storage.segments import list_segments, read_records
from rampart_otel.storage.store import open_results_store

log = logging.getLogger(__name__)

READ_BUDGET = 4 * 1024 * 1024  # bytes read per step, so expiry and reports keep ticking
COMMIT_EVERY = 1.0  # seconds of evaluation between commits, however many runs a step emits
Position = tuple[int, int]  # (segment sequence number, byte offset)


@dataclass(slots=True)
class _Prepared:
    """A run evaluated outside the write transaction, and what it was evaluated against."""

    scored: Scored
    packed: bytes
    digest: str
    latest: int  # the latest stored revision when it was evaluated (-1: none)
    rows: list[ResultRow]

    @property
    def run(self) -> Run:
        return self.scored.run


@dataclass(slots=True)
class Stats:
    spans_decoded: int = 0
    decode_errors: int = 0
    spans_quarantined: int = 0
    runs_scored: int = 0
    spans_scored: int = 0  # in the run revisions scored: a revision counts all its spans
    runs_skipped: int = 0
    runs_evaluated: int = 0  # runs taken up for scoring: progress even inside a long round
    verdicts: dict[str, int] = field(default_factory=dict)  # scored by this process
    tenant_verdicts: dict[str, int] = field(default_factory=dict)  # TENANT/STATUS -> count


class Scorer:
    """One step at a time (``step``), so a caller decides when to report and when to stop.

    The collector's host of the one ``Pipeline``: its source is the segments (tailed,
    assembled, a late span merged into its run's next revision), each run is scored by
    ``pipeline.score`` and stored with the checkpoint in one transaction, and once that
    commits the scored runs go to the pipeline's sinks (``pipeline.deliver``: verdict
    events, the console's notices).
    """

    def __init__(
        self,
        segments_dir: Path,
        store: VerdictStore,
        pipeline: Pipeline,
        idle: float,
        max_wait: float,
        *,
        group_by: str = "trace",
        late_cache_runs: int = 1000,
        max_trace_spans: int = DEFAULT_MAX_SPANS,
        stitch: bool = True,
        clock: Callable[[], float] = time.monotonic,
        commit_every: float = COMMIT_EVERY,
        shard: int = 0,
        shards: int = 1,
    ) -> None:
        if not 0 <= shard < shards:
            raise ValueError(f"shard {shard} of {shards}")
        self.shard = shard
        self.shards = shards
        self.segments_dir = segments_dir
        self.commit_every = commit_every
        self.store = store
        self.on_progress: Callable[[], None] | None = None  # before each run is scored
        self.pipeline = pipeline
        self.clock = clock
        self.assembler = StitchingAssembler(
            RunAssembler(
                group_by=group_by,  # type: ignore[arg-type]
                idle=idle,
                max_wait=max_wait,
                max_spans=max_trace_spans,
                remember_revisions=False,
            ),
            stitch=stitch,
        )  # runs held for stitching keep their traces in the checkpoint until scored
        self.late_cache_runs = late_cache_runs
        self.max_trace_spans = max_trace_spans
        # Run id -> its spans so far, and the copies conflicting with them (model.add_copy).
        self._recent: OrderedDict[str, tuple[dict[str, Span], dict[str, list[Span]]]] = (
            OrderedDict()
        )
        # Each recent run's results that evidence decided (outcome DETECTED), by check: a
        # later revision scored without the spans that evidence came from keeps them.
        self._decided: OrderedDict[str, dict[tuple[str | None, str], CheckResult]] = OrderedDict()
        self._first: dict[str, Position] = {}  # open trace -> its first record's position
        self._quarantined: list[tuple[int, int, int, str]] = []  # stored with the next commit
        self.stats = Stats()
        start = store.checkpoint()
        if start is None:
            segments = list_segments(segments_dir)
            start = (segments[0][0], 0) if segments else (1, 0)
        self.position: Position = start
        self._saved: Position | None = None

    # -- reading -----------------------------------------------------------------------

    def step(self, budget: int = READ_BUDGET) -> int:
        """Read up to ``budget`` new bytes, score what completed; the bytes read."""
        read = 0
        runs: list[Run] = []
        now = self.clock()
        seq, offset = self.position
        segments = list_segments(self.segments_dir)
        for index, (number, path) in enumerate(segments):
            if number < seq:
                continue
            if number > seq:
                seq, offset = number, 0
            for start, end, payload in read_records(path, offset):
                runs.extend(self._ingest(payload, (seq, start), now))
                read += end - offset
                offset = end
                if read >= budget:
                    break
            self.position = (seq, offset)
            if read >= budget or index == len(segments) - 1:
                break
            # A newer segment was listed before we read, so this one was already final:
            # bytes left over are not a record being written but a damaged tail.
            size = path.stat().st_size
            if size > offset:
                log.warning("segment %s: skipping %d unreadable bytes", path.name, size - offset)
        runs.extend(self.assembler.expire(now))
        self._score(runs)
        return read

    def lag_bytes(self) -> int:
        seq, offset = self.position
        behind = 0
        for number, path in list_segments(self.segments_dir):
            if number >= seq:
                with contextlib.suppress(OSError):
                    behind += path.stat().st_size - (offset if number == seq else 0)
        return max(behind, 0)

    def drain(self) -> None:
        """Shutting down: read everything stored and score every run already complete.

        Incomplete traces stay unscored: the checkpoint keeps them, the next start reads them.
        """
        while self.step():
            pass
        self._score(self.assembler.emit_complete(self.clock()))

    def owns(self, trace_id: bytes) -> bool:
        """Whether this shard scores the trace with this (16-byte) id."""
        return owner(trace_id.hex(), self.shards) == self.shard

    def _ingest(self, payload: bytes, where: Position, now: float) -> list[Run]:
        try:
            spans = spans_from_proto_bytes(payload, self.owns if self.shards > 1 else None)
        except DecodeError as error:  # validated on receipt, so this is a decoder gap
            # Quarantine only what cannot be read: the record's other spans are scored, and
            # each unread span of a known trace is a placeholder that keeps its run short of
            # complete (codecs/otlp_salvage); one with no trace id is in no run, only counted.
            spans, unreadable, lost = readable_spans(payload)
            if self.shards > 1:
                spans = [s for s in spans if owner(s.trace_id, self.shards) == self.shard]
            if self.shard == 0:  # the record is one error, whichever shards own its spans
                self.stats.decode_errors += 1
                self.stats.spans_quarantined += unreadable
                message = error.message
                if lost:
                    message += f"; {lost} of them with no readable trace id, in no run"
                self._quarantined.append((*where, unreadable, message))
                log.error(
                    "segment %d@%d: %s: %d spans quarantined (%d in no run), %d scored",
                    where[0], where[1], error, unreadable, lost, len(spans),
                )  # fmt: skip
        # Spans the OTLP id rule refused were answered as rejected on receipt; those of a
        # valid trace stay as placeholders, so their run is scored as incomplete.
        spans = kept_spans(spans)[0]
        self.stats.spans_decoded += len(spans)
        first = self._first
        for span in spans:
            key = tenant_key(span.tenant, span.trace_id)
            if key not in first:
                first[key] = where
        return self.assembler.add(spans, now)

    # -- scoring -----------------------------------------------------------------------

    def _score(self, runs: list[Run]) -> None:
        checkpoint = self.checkpoint()
        if not runs and checkpoint == self._saved and not self._quarantined:
            return  # nothing new: no empty write transaction every poll
        # Committed in slices of about ``commit_every`` seconds of evaluation: an expiry
        # can release a backlog's worth of runs at once, and their verdicts (and the
        # checkpoint past them) should not all wait for the last one.
        # Evaluation (the costly part, and a judge's network calls) happens before the write
        # transaction: a shared store's writers take turns, and must not wait on our CPU.
        prepared: list[_Prepared] = []
        began = time.monotonic()
        for run in runs:
            if prepared and time.monotonic() - began >= self.commit_every:
                self._commit(prepared)
                prepared, began = [], time.monotonic()
            if self.on_progress is not None:
                self.on_progress()
            run = self._with_earlier_spans(run)
            for trace_id in run.trace_ids:  # runs not yet taken keep the checkpoint
                self._first.pop(tenant_key(run.tenant, trace_id), None)
            ready = self._prepare(run)
            if ready is not None:
                prepared.append(ready)
        self._commit(prepared)

    def _commit(self, prepared: list[_Prepared]) -> None:
        committed: list[Scored] = []
        with self.store.transaction() as txn:
            for ready in prepared:
                # Under the writers' lock: another writer (a collector a trace was split to,
                # rescore, or this round's own earlier run) may have stored a revision since.
                if self.store.scored_span_ids(ready.run.run_id)[0] != ready.latest:
                    again = self._prepare(ready.run)
                    if again is None:
                        continue
                    ready = again
                run = ready.run
                service = ready.rows[0].service if ready.rows else run_service(run)
                started = ready.rows[0].started_at_ns if ready.rows else None
                txn.add_run(
                    run.run_id, run.revision, ready.packed, ready.digest, run.trace_ids,
                    service, started,
                )  # fmt: skip
                tenant_verdicts = self.stats.tenant_verdicts
                for row in ready.rows:
                    txn.add_result(row)
                    self.stats.verdicts[row.status] = self.stats.verdicts.get(row.status, 0) + 1
                    if run.tenant:  # TENANT/STATUS: a tenant's own count on /metrics
                        key = f"{run.tenant}/{row.status}"
                        tenant_verdicts[key] = tenant_verdicts.get(key, 0) + 1
                self.stats.runs_scored += 1
                self.stats.spans_scored += len(run.spans)
                committed.append(ready.scored)
            for quarantined in self._quarantined:
                txn.add_quarantine(*quarantined)
            self._quarantined.clear()
            checkpoint = self.checkpoint()
            if self.shards == 1:
                txn.set_checkpoint(*checkpoint)
            else:
                txn.set_shard_checkpoint(self.shard, self.shards, *checkpoint)
            if committed:  # queued durably (write-back, alerts) before the verdicts commit
                self.pipeline.deliver(committed, durable=True)
        self._saved = checkpoint
        if committed and self.pipeline.sinks:
            try:
                self.pipeline.deliver(committed, durable=False)
            except Exception:  # a sink's failure must never stop scoring
                log.exception("a sink of committed verdicts failed")

    def _prepare(self, run: Run) -> _Prepared | None:
        """The run scored as its next revision; None when stored revisions cover its spans."""
        ids = scored_ids(run)
        packed, digest = span_set(ids)
        latest, seen = self.store.scored_span_ids(run.run_id)
        have = {bytes.fromhex(span_id) for span_id in ids}
        if latest >= 0 and have <= seen:
            self.stats.runs_skipped += 1
            return None
        run.revision = latest + 1
        scored = self.pipeline.score(run)
        if latest >= 0 and not seen <= have:
            # Scored without spans an earlier revision had (too many to keep: a capped
            # revision): it cannot undo what their evidence decided.
            scored = replace(
                scored, results=kept_decided(scored.results, self._decided.get(run.run_id, {}))
            )
        self._remember_decided(run.run_id, scored.results)
        rows = result_rows(scored.results, revision=run.revision, scored_at=scored.scored_at)
        return _Prepared(scored, packed, digest, latest, rows)

    def _remember_decided(self, run_id: str, results: list[CheckResult]) -> None:
        decided = {_check_key(r): r for r in results if r.outcome is EvalOutcome.DETECTED}
        self._decided.pop(run_id, None)
        if decided and self.late_cache_runs > 0:
            self._decided[run_id] = decided
            while len(self._decided) > self.late_cache_runs:
                self._decided.popitem(last=False)

    def checkpoint(self) -> Position:
        """Where a restart must read from: the first record of the oldest open trace."""
        return min(self._first.values(), default=self.position)

    def _with_earlier_spans(self, run: Run) -> Run:
        if self.late_cache_runs <= 0:
            return run
        cached = self._recent.pop(run.run_id, None)
        if cached is not None:
            kept, others = cached
            for span in run.spans:
                add_copy(kept, others, span)
            run = Run(
                run.run_id, run.trace_ids, copies_held(kept, others), run.session_id, run.revision
            )
        else:
            kept, others = {}, {}
            for span in run.spans:
                add_copy(kept, others, span)
            cached = kept, others
        if len(kept) > self.max_trace_spans:
            return run  # too big to keep: a later span is scored with the late spans only
        self._recent[run.run_id] = cached
        while len(self._recent) > self.late_cache_runs:
            self._recent.popitem(last=False)
        return run

    @property
    def open_traces(self) -> int:
        return self.assembler.open_traces


def _check_key(result: CheckResult) -> tuple[str | None, str]:
    return result.policy, result.check_id


def kept_decided(
    results: list[CheckResult], earlier: dict[tuple[str | None, str], CheckResult]
) -> list[CheckResult]:
    """A revision's results, each check that evidence decided in ``earlier`` (its outcome
    DETECTED: the attack seen, the expected behaviour seen) kept as it was where this
    revision, scored without that evidence's spans, did not decide it again."""
    kept = []
    for result in results:
        before = earlier.get(_check_key(result))
        if before is not None and result.outcome is not EvalOutcome.DETECTED:
            result = before
        kept.append(result)
    return kept


# -- evaluation --------------------------------------------------------------------------


def make_evaluator(
    policy_paths: list[Path], assume_coverage: list[str], *, budget_seconds: float | None = None
) -> Pipeline:
    """The pipeline that scores by the policies in these files with these assumptions."""
    return evaluator_for(
        load_policies(policy_paths), assume_coverage, budget_seconds=budget_seconds
    )


def evaluator_for(
    policies: list[Policy],
    assume_coverage: list[str],
    *,
    budget_seconds: float | None = None,
    sinks: Sequence[ResultSink[Any]] = (),
) -> Pipeline:
    """The pipeline that scores by ``policies`` (the assumptions checked first), into
    ``sinks``; it keeps no tallies (a collector runs for months)."""
    assume = checked_assumptions(
        assume_coverage, option="scoring.assume_coverage", policies=policies
    )
    return Pipeline(
        policies, sinks, assume=assume, budget_seconds=budget_seconds, keep_tallies=False
    )


def keep_judge_cache_in(policies: Sequence[Policy], data_dir: Path) -> None:
    """A judge endpoint without a ``cache:`` keeps its answers in the data directory, beside
    the verdicts they quote (0600 there too), so the collector and ``rescore`` share them."""
    for policy in policies:
        client = policy.judge_client
        if client is not None and client.config.cache is None:
            cache = str(data_dir / "judge.sqlite")
            client.config = dataclasses.replace(client.config, cache=cache)


# -- the scorer process ------------------------------------------------------------------

REPORT_EVERY = 0.5
# The scorer's young collections: every million more objects held, not every 50,000 (the
# ``score`` default). It holds the assembler's open traces (seconds of input, 100,000s of
# spans), so nearly every young object outlives a collection and was traversed twice for
# nothing: 1.46 s of 15 s on 102,000 of bench_collector's spans at 50,000, 0.05 s here. A
# collection, when one comes, is a pause of this process alone, and cycles are still
# collected (scoring makes none on that traffic).
SCORER_GC_YOUNG_THRESHOLD = 1_000_000
STORE_RETRY_SECONDS = 5.0  # between attempts on a shared results store that is down


def run_process(config_json: str, conn: Connection, shard: int = 0) -> None:
    """Process entry point of scorer shard ``shard`` (of ``scoring.workers``): score until
    the parent says drain, or goes away.

    A shared results store that is down (at start, or lost mid-round) is reported to the
    parent as ``{"store_down": reason}`` and the process ends: the parent logs it once and
    restarts it, and it resumes from the store's checkpoint when the store is back (the
    spans wait in the segments). No traceback: an outage is not a bug.
    """
    _die_with_parent()
    config = CollectorConfig.model_validate_json(config_json)
    name = (
        "scorer" if config.scoring.workers == 1 else f"scorer {shard + 1}/{config.scoring.workers}"
    )
    log_to_stderr(config.log_level.upper(), f"rampart-otel {name}")
    if config.scoring.nice:
        with contextlib.suppress(OSError):
            os.nice(config.scoring.nice)
    data_dir = config.data_dir
    lock_name = ".scorer.lock" if shard == 0 else f".scorer-{shard}.lock"
    lock = (data_dir / lock_name).open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # an orphan of a killed collector must finish first
    try:
        store = open_results_store(config.results_target(), instance=config.instance())
    except SchemaError as error:  # a newer rampart-otel migrated it: no restart helps
        conn.send({"fatal": f"{type(error).__name__}: {error}"})
        lock.close()
        return
    except StoreError as error:  # a shared store that is down now: the collector restarts us
        with contextlib.suppress(OSError):
            conn.send({"store_down": str(error)})
        lock.close()
        time.sleep(STORE_RETRY_SECONDS)
        return
    try:
        scoring = config.scoring
        policies = load_policies(config.policies)
        keep_judge_cache_in(policies, data_dir)
        scored_by = evaluator_for(
            policies, scoring.assume_coverage, budget_seconds=scoring.run_budget_seconds
        )
        judges = [p.judge_client for p in policies if p.judge_client is not None]
    except Exception as error:
        conn.send({"fatal": f"{type(error).__name__}: {error}"})
        return
    outbox = None
    if writeback.enabled(config):  # write-back and alerts, queued with the verdicts
        try:
            outbox = Outbox(data_dir, max_pending=config.delivery.max_pending)
        except StoreError as error:  # a file it cannot write: no restart helps
            conn.send({"fatal": str(error)})
            return
    export = start_verdict_export(config)
    # The scorer's sinks: each commit's verdicts as OTLP events, and as the console's
    # notices; written back and alerted through the outbox (queued inside the commit).
    sinks: list[ResultSink[Any]] = []
    if export is not None:
        sinks.append(VerdictEventSink(export, timeout=config.export.otlp.timeout_seconds))
    sinks.append(NoticeSink(conn))
    if outbox is not None:
        sinks.append(writeback.OutboxSink(config, outbox))
    pipeline = scored_by.with_sinks(sinks)
    store_errors = _store_errors(config)
    try:
        _score_until_drained(config, conn, store, pipeline, judges, export, shard)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the collector is gone: stop where we are, the checkpoint is consistent
    except store_errors as error:  # nothing uncommitted is lost: the checkpoint stays
        reason = _one_line(error)
        if isinstance(error, sqlite3.Error):  # SQLite's words do not say which file
            reason = f"{data_dir / 'results.db'}: {reason}"
        with contextlib.suppress(OSError):
            conn.send({"store_down": reason})
        # A results.db that opens again at once (a full disk) would otherwise be retried,
        # and every run in hand scored again, as fast as the scorer can restart.
        time.sleep(STORE_RETRY_SECONDS)
    finally:
        if export is not None:
            export.close(0)  # no-op after a drain; else what is queued is counted dropped
        with contextlib.suppress(Exception):  # a connection the server dropped
            store.close()
        if outbox is not None:
            outbox.close()
        lock.close()


def _score_until_drained(
    config: CollectorConfig,
    conn: Connection,
    store: VerdictStore,
    pipeline: Pipeline,
    judges: list[JudgeClient],
    export: VerdictExporter | None,
    shard: int = 0,
) -> None:
    scorer = Scorer(
        config.data_dir / "segments",
        store,
        pipeline,
        idle=config.assembly.idle_seconds,
        max_wait=config.assembly.max_wait_seconds,
        group_by=config.assembly.group_by,
        late_cache_runs=config.assembly.late_cache_runs,
        max_trace_spans=config.assembly.max_trace_spans,
        stitch=config.assembly.stitch,
        shard=shard,
        shards=config.scoring.workers,
    )
    last_report = last_beat = 0.0

    def heartbeat() -> None:  # a long step still reports, and shows it moves (/healthz)
        nonlocal last_beat
        scorer.stats.runs_evaluated += 1
        if (now := time.monotonic()) - last_beat >= REPORT_EVERY:
            conn.send(_report(scorer, export, judges))
            last_beat = now

    scorer.on_progress = heartbeat
    pipeline.open()
    with fewer_young_collections(SCORER_GC_YOUNG_THRESHOLD):
        while True:
            read = scorer.step()
            now = time.monotonic()
            if now - last_report >= REPORT_EVERY:
                conn.send(_report(scorer, export, judges))
                last_report = now
            if conn.poll(0 if read else 0.1):
                message = conn.recv()
                if message == "drain":
                    scorer.drain()
                    pipeline.close()  # the verdict export sends what is queued, in time
                    conn.send(_report(scorer, export, judges) | {"drained": True})
                    return


NOTICED = (SafetyStatus.UNSAFE, SafetyStatus.ERROR)
MAX_NOTICES = 200  # per commit sent to the collector; past it only counted


class NoticeSink(SinkDefaults):
    """Each commit's UNSAFE and ERROR results sent to the collector process, which prints
    them as they land (``verdict_notices``)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def prepare(self, scored: Scored) -> Scored:
        return scored

    def write(self, batch: Sequence[Scored]) -> None:
        if notices := verdict_notices(batch):
            with contextlib.suppress(OSError):  # the collector is gone: the loop ends next
                self.conn.send({"verdict_notices": notices})


def verdict_notices(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """The UNSAFE and ERROR results just committed, as the collector's console shows them
    (one line each: check, service, run, and what the evidence says), and each run with its
    counts (``scored``), so a run that was fine is seen to have been scored."""
    notices: list[dict[str, Any]] = []
    unsent = 0
    for item in scored:
        run = item.run
        counts = Counter(result.status.value for result in item.results)
        notices.append(
            {
                "scored": dict(counts),
                "service": item.results[0].service if item.results else None,
                "run_id": run.run_id,
                "revision": run.revision,
            }
        )
        for result in item.results:
            if result.status not in NOTICED:
                continue
            if len(notices) >= MAX_NOTICES:
                unsent += 1
                continue
            if result.status is SafetyStatus.ERROR:
                detail = result.error or result.summary
            else:
                detail = result.evidence[0].text if result.evidence else result.summary
            notices.append(
                {
                    "status": result.status.value,
                    "check": result.check_id,
                    "policy": result.policy,
                    "service": result.service,
                    "run_id": run.run_id,
                    "revision": run.revision,
                    "detail": detail,
                }
            )
    if unsent:
        notices.append({"unsent": unsent})
    return notices


def _store_errors(config: CollectorConfig) -> tuple[type[BaseException], ...]:
    """What a results store that went away raises: the driver's errors for a shared one,
    SQLite's for a results.db it cannot write (a full disk, an I/O error, a lock held
    past the busy timeout)."""
    if config.results is None:
        return (StoreError, sqlite3.OperationalError)
    import psycopg  # installed: the store was opened

    return (StoreError, psycopg.OperationalError, psycopg.InterfaceError)


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return "; ".join(lines[:2]) or type(error).__name__


def _report(
    scorer: Scorer,
    export: VerdictExporter | None = None,
    judges: Sequence[JudgeClient] = (),
) -> dict[str, Any]:
    stats = scorer.stats
    extra: dict[str, Any] = {"verdict_export": export.report()} if export is not None else {}
    for judge in judges:  # the judge's calls, tokens, cache hits and failures
        for key, value in judge.stats.as_dict().items():
            extra[f"judge_{key}"] = extra.get(f"judge_{key}", 0) + value
    return extra | {
        "shard": scorer.shard,
        "open_traces": scorer.open_traces,
        "verdicts": dict(stats.verdicts),
        "tenant_verdicts": dict(stats.tenant_verdicts),
        "pid": os.getpid(),  # a new one: the collector keeps the replaced process's counts
        "runs_scored": stats.runs_scored,
        "spans_scored": stats.spans_scored,
        "runs_skipped": stats.runs_skipped,
        "spans_decoded": stats.spans_decoded,
        "decode_errors": stats.decode_errors,
        "spans_quarantined": stats.spans_quarantined,
        "lag_bytes": scorer.lag_bytes(),
        "position": list(scorer.position),
        "runs_evaluated": stats.runs_evaluated,
    }


def _die_with_parent() -> None:
    """Linux: the kernel kills this process when the collector dies, even by SIGKILL."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the collector decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
