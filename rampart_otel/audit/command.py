"""The body of ``rampart-otel audit``; ``cli`` only declares its options.

Opening the store migrates an older ``results.db`` in place first (``open_reader``), so an
audit works on any data directory a collector ever wrote. ``--results`` names a shared
PostgreSQL store instead (``storage.store``), migrated the same way.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from rampart_otel.audit.aggregate import aggregate, check_filters, listed, select_versions
from rampart_otel.audit.html import write_audit_html
from rampart_otel.audit.report import write_audit_json
from rampart_otel.audit.terminal import write_audit_terminal
from rampart_otel.audit.timespec import BUCKET_CHOICES, parse_time
from rampart_otel.errors import AuditError, SchemaError
from rampart_otel.evaluation import SafetyStatus
from rampart_otel.model import InputError
from rampart_otel.storage.audit_queries import Filters
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.queries import policy_versions, quarantined
from rampart_otel.storage.results import open_reader
from rampart_otel.storage.segments import list_segments, read_records, segment_name
from rampart_otel.storage.store import describe, open_results_store

DEFAULT_LIMIT = 100
NOT_SAFE = tuple(s.value for s in SafetyStatus if s is not SafetyStatus.SAFE)


@dataclass(frozen=True, slots=True)
class AuditOptions:
    since: str | None = None
    until: str | None = None
    services: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    policy: str | None = None
    policy_version: str | None = None
    bucket: str = "auto"
    limit: str = str(DEFAULT_LIMIT)
    json_output: bool = False
    html_output: bool = False
    verbose: bool = False


def results_target(data_dir: Path | None, results: str | None) -> Path | str:
    """Where the verdicts are: ``--results`` (a PostgreSQL URL), else the data directory."""
    if results is not None:
        if data_dir is not None:
            raise AuditError("give --data-dir or --results, not both")
        return results
    if data_dir is None:
        raise AuditError("give --data-dir (a collector's data directory) or --results (a URL)")
    return data_dir


def open_results(target: Path | str) -> VerdictStore:
    """The verdicts, read-only, at the current schema: a data directory's results.db or the
    store at a ``postgresql://`` URL (StoreError, one line, when it cannot be reached)."""
    if isinstance(target, str):
        try:
            return open_results_store(target, readonly=True)
        except SchemaError as error:
            raise AuditError(str(error)) from None
    data_dir = target
    path = data_dir / "results.db"
    if not path.is_file():
        waiting = pending_line(data_dir, None, None)
        if waiting is not None:
            raise AuditError(f"{data_dir}: nothing scored yet; {waiting}")
        raise AuditError(f"{data_dir}: no results.db (is this a collector's data directory?)")
    try:
        return open_reader(path)
    except SchemaError as error:
        raise AuditError(str(error)) from None
    except sqlite3.Error as error:
        raise AuditError(f"{path}: cannot read: {error}") from None


def parse_limit(text: str) -> int | None:
    """``--limit``: a count, or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise AuditError(f"--limit: {text!r} is not a count of results or 'all'")
    return value


def filters_from(options: AuditOptions, now: float) -> Filters:
    statuses = {s.value for s in SafetyStatus}
    for status in options.statuses:
        if status not in statuses:
            raise AuditError(f"--status: {status!r} is not one of {', '.join(sorted(statuses))}")
    since = parse_time(options.since, now, "--since") if options.since else None
    until = parse_time(options.until, now, "--until") if options.until else None
    if since is not None and until is not None and since >= until:
        raise AuditError("--since must be before --until")
    return Filters(
        since=since,
        until=until,
        services=tuple(dict.fromkeys(options.services)),
        checks=tuple(dict.fromkeys(options.checks)),
        statuses=tuple(dict.fromkeys(options.statuses)),
    )


def audit(target: Path | str, options: AuditOptions, out: IO[str]) -> None:
    """``target``: a data directory or a results URL (``results_target``)."""
    if options.bucket not in BUCKET_CHOICES:
        raise AuditError(f"--bucket: {options.bucket!r} is not one of {', '.join(BUCKET_CHOICES)}")
    limit = parse_limit(options.limit)
    filters = filters_from(options, time.time())
    store = open_results(target)
    label = describe(target)
    try:
        db = store.db
        stored = policy_versions(db)
        versions = select_versions(stored, options.policy, options.policy_version)
        check_filters(db, versions, filters)
        aggregates = aggregate(db, versions, filters, options.bucket)
        results = listed(db, versions, filters, limit)
        errors = [
            InputError(
                f"{segment_name(segment)}@{offset}",
                f"{spans} spans quarantined (the rest of the record was scored): {message}",
            )
            for segment, offset, spans, message in quarantined(db)
        ]
        if options.html_output:
            # The page lists what needs a look: the most recent results that were not safe.
            not_safe = filters if filters.statuses else replace(filters, statuses=NOT_SAFE)
            recent = listed(db, versions, not_safe, limit)
            write_audit_html(out, db, label, stored, aggregates, recent, errors=errors)
        elif options.json_output:
            write_audit_json(out, label, stored, aggregates, results, limit, errors=errors)
        else:
            write_audit_terminal(
                out, label, stored, aggregates, results, errors=errors, verbose=options.verbose
            )
            if isinstance(target, Path) and isinstance(db, sqlite3.Connection):  # a data dir
                waiting = pending_line(target, store.checkpoint(), db)
                if waiting is not None:
                    out.write(f"pending: {waiting}\n")
    finally:
        store.close()


PENDING_READ_LIMIT = 16 * 1024 * 1024  # bytes of segments read to count waiting traces


def pending_line(
    data_dir: Path, checkpoint: tuple[int, int] | None, db: sqlite3.Connection | None
) -> str | None:
    """What the collector received but has not scored yet (after its checkpoint), in one
    line; None when nothing waits. Traces are counted in the first 16 MiB of it."""
    segments = list_segments(data_dir / "segments")
    start = checkpoint or ((segments[0][0], 0) if segments else (1, 0))
    waiting = 0
    traces: set[bytes] = set()
    read = 0
    for number, segment in segments:
        if number < start[0]:
            continue
        offset = start[1] if number == start[0] else 0
        try:
            waiting += max(segment.stat().st_size - offset, 0)
            for _, _, payload in read_records(segment, offset):
                if read > PENDING_READ_LIMIT:
                    break
                read += len(payload)
                traces |= _trace_ids(payload)
        except OSError:  # deleted by retention meanwhile: nothing waits there
            continue
    if db is not None and traces:
        traces = {t for t in traces if not _scored(db, t.hex())}
    if not waiting or not traces:
        return None
    count = f"{len(traces)} trace{'s' if len(traces) != 1 else ''}"
    if read > PENDING_READ_LIMIT:
        count = f"at least {count}"
    return (
        f"{count} received but not scored yet "
        f"({waiting} bytes in {data_dir / 'segments'}): a run is scored "
        "assembly.idle_seconds after its last span once its top spans have ended, or "
        "assembly.max_wait_seconds after its first (a collector without --policy scores "
        "nothing); audit again in a moment"
    )


def _trace_ids(payload: bytes) -> set[bytes]:
    try:
        request = ExportTraceServiceRequest.FromString(payload)
    except DecodeError:
        return set()
    return {
        span.trace_id
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    }


def _scored(db: sqlite3.Connection, run_id: str) -> bool:
    row = db.execute("SELECT 1 FROM runs WHERE run_id = ? LIMIT 1", (run_id,)).fetchone()
    return row is not None
