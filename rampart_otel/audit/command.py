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

from rampart_otel.audit.aggregate import aggregate, check_filters, listed, select_versions
from rampart_otel.audit.html import write_audit_html
from rampart_otel.audit.report import write_audit_json
from rampart_otel.audit.terminal import write_audit_terminal
from rampart_otel.audit.timespec import BUCKET_CHOICES, parse_time
from rampart_otel.errors import AuditError, SchemaError
from rampart_otel.evaluation import SafetyStatus
from rampart_otel.model import InputError
from rampart_otel.storage.audit_queries import Filters
from rampart_otel.storage.queries import policy_versions, quarantined
from rampart_otel.storage.results import open_reader
from rampart_otel.storage.segments import segment_name
from rampart_otel.storage.store import AnyResultsStore, describe, open_results_store

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


def results_target(data_dir: Path | None, results: str | None) -> Path | str:
    """Where the verdicts are: ``--results`` (a PostgreSQL URL), else the data directory."""
    if results is not None:
        if data_dir is not None:
            raise AuditError("give --data-dir or --results, not both")
        return results
    if data_dir is None:
        raise AuditError("give --data-dir (a collector's data directory) or --results (a URL)")
    return data_dir


def open_results(target: Path | str) -> AnyResultsStore:
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
            write_audit_terminal(out, label, stored, aggregates, results, errors=errors)
    finally:
        store.close()
