"""The read side for ``audit``, ``diff`` and ``rescore``, whichever store holds the verdicts:
each function passes its call to ``audit_queries`` (``results.db``) or ``pg_queries``
(PostgreSQL) by the connection it is given, so callers need not know which store they read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from rampart_otel.storage import audit_queries, pg_queries
from rampart_otel.storage.audit_queries import (
    Buckets,
    Filters,
    GroupBy,
    PolicyVersion,
    StoredResult,
    StoredRun,
    latest,
    version_order,
)
from rampart_otel.storage.protocol import Db

__all__ = [
    "Buckets",
    "Db",
    "Filters",
    "PolicyVersion",
    "StoredResult",
    "StoredRun",
    "counts",
    "current_result",
    "has_results",
    "latest",
    "latest_run",
    "listing",
    "paired_statuses",
    "policy_versions",
    "quarantined",
    "run_time",
    "runs_only",
    "session_runs",
    "stored_run_count",
    "time_range",
    "version_order",
]


def _impl(db: Db) -> ModuleType:
    return audit_queries if isinstance(db, sqlite3.Connection) else pg_queries


def policy_versions(db: Db) -> dict[str, list[PolicyVersion]]:
    # The same SQL in both dialects: one function.
    return audit_queries.policy_versions(db)  # type: ignore[arg-type]


def counts(
    db: Db, version: PolicyVersion, filters: Filters, by: GroupBy, buckets: Buckets | None = None
) -> list[tuple[Any, str, int]]:
    return _impl(db).counts(db, version, filters, by, buckets)


def time_range(db: Db, version: PolicyVersion, filters: Filters) -> tuple[float, float] | None:
    return _impl(db).time_range(db, version, filters)


def listing(
    db: Db, version: PolicyVersion, filters: Filters, newest: int | None
) -> Iterator[StoredResult]:
    return _impl(db).listing(db, version, filters, newest)


def paired_statuses(
    db: Db, before: PolicyVersion, after: PolicyVersion
) -> Iterator[tuple[str, str, str, str]]:
    return _impl(db).paired_statuses(db, before, after)


def runs_only(db: Db, before: PolicyVersion, after: PolicyVersion) -> tuple[int, int]:
    return _impl(db).runs_only(db, before, after)


def current_result(
    db: Db, version: PolicyVersion, run_id: str, check_id: str
) -> StoredResult | None:
    return _impl(db).current_result(db, version, run_id, check_id)


def latest_run(db: Db, run_id: str) -> StoredRun | None:
    return _impl(db).latest_run(db, run_id)


def has_results(db: Db, run_id: str, revision: int, policy: str, version: str) -> bool:
    return _impl(db).has_results(db, run_id, revision, policy, version)


def run_time(db: Db, run_id: str, revision: int) -> float | None:
    return _impl(db).run_time(db, run_id, revision)


def session_runs(db: Db) -> bool:
    return _impl(db).session_runs(db)


def stored_run_count(db: Db) -> int:
    return _impl(db).stored_run_count(db)


def quarantined(db: Db) -> list[tuple[int, int, int, str]]:
    return _impl(db).quarantined(db)
