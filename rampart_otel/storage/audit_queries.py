"""The read side of ``results.db`` for ``audit``, ``diff`` and ``rescore``: SQL that counts.

Every aggregate is a ``GROUP BY`` over one range of the covering index ``results_audit``
(policy, version, current, run time, then check, status and service), so a million stored
verdicts are counted without reading one JSON document. Only listed results and changed
verdicts are read whole. Each query covers one policy version; callers merge.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from rampart_otel.storage.documents import DocumentReader
from rampart_otel.storage.schema import PRIMARY_KEY_INDEX

GroupBy = Literal["check", "service", "bucket"]
_GROUP_COLUMN = {"check": "check_id", "service": "service"}


@dataclass(frozen=True, slots=True)
class CheckInfo:
    polarity: str | None
    harm_category: str | None


@dataclass(frozen=True, slots=True)
class PolicyVersion:
    """One version of one policy that has verdicts stored."""

    policy: str
    version: str  # as stored ('' for none)
    value: int | str | None  # as the policy file wrote it
    first_scored_at: float
    checks: dict[str, CheckInfo] = field(default_factory=dict)

    def label(self) -> str:
        return self.policy if self.value is None else f"{self.policy} v{self.value}"


def policy_versions(db: sqlite3.Connection) -> dict[str, list[PolicyVersion]]:
    """Every stored policy's versions, oldest to latest (``version_order``)."""
    rows = db.execute(
        "SELECT policy, policy_version, version_json, check_id, polarity, harm_category,"
        " first_scored_at FROM policy_checks ORDER BY policy, policy_version, check_id"
    ).fetchall()
    found: dict[tuple[str, str], tuple[Any, float, dict[str, CheckInfo]]] = {}
    for policy, version, version_json, check, polarity, harm, first in rows:
        value, earliest, checks = found.get((policy, version), (None, first, {}))
        checks[check] = CheckInfo(polarity, harm)
        found[(policy, version)] = (json.loads(version_json), min(earliest, first), checks)
    by_policy: dict[str, list[PolicyVersion]] = {}
    for (policy, version), (value, first, checks) in found.items():
        by_policy.setdefault(policy, []).append(
            PolicyVersion(policy, version, value, first, checks)
        )
    return {policy: version_order(versions) for policy, versions in by_policy.items()}


def version_order(versions: list[PolicyVersion]) -> list[PolicyVersion]:
    """Oldest to latest: by number when every version is an integer (a result without a
    version predates versioning), else by when each version was first scored."""
    if all(v.value is None or isinstance(v.value, int) for v in versions):
        return sorted(versions, key=lambda v: (v.value is not None, v.value or 0))
    return sorted(versions, key=lambda v: (v.first_scored_at, v.version))


def latest(versions: list[PolicyVersion]) -> PolicyVersion:
    """What ``audit`` reads by default and ``diff`` compares to: the last in version order."""
    return version_order(versions)[-1]


@dataclass(frozen=True, slots=True)
class Filters:
    """Which current verdicts count: run time in [since, until), and any of each list."""

    since: float | None = None
    until: float | None = None
    services: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Buckets:
    """Time buckets: ``width`` seconds each, aligned on ``origin`` (epoch seconds, UTC)."""

    name: str
    width: float
    origin: float = 0.0

    def start(self, index: int) -> float:
        return self.origin + index * self.width


def _where(version: PolicyVersion, filters: Filters, alias: str = "") -> tuple[str, list[Any]]:
    p = f"{alias}." if alias else ""
    clauses = [f"{p}policy = ?", f"{p}policy_version = ?", f"{p}current = 1"]
    params: list[Any] = [version.policy, version.version]
    if filters.since is not None:
        clauses.append(f"{p}run_at >= ?")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append(f"{p}run_at < ?")
        params.append(filters.until)
    for column, values in (
        ("service", filters.services),
        ("check_id", filters.checks),
        ("status", filters.statuses),
    ):
        if values:
            clauses.append(f"{p}{column} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    return " AND ".join(clauses), params


NARROW_SHARE = 0.25  # a time window under this share of the history reads the time index


def counts(
    db: sqlite3.Connection,
    version: PolicyVersion,
    filters: Filters,
    by: GroupBy,
    buckets: Buckets | None = None,
) -> list[tuple[Any, str, int]]:
    """(group, status, count) for one policy version's current verdicts.

    By check or by service, the index ordered by that group streams the GROUP BY without a
    sort; a time window that is a small part of the history seeks in the time index
    instead. Time buckets always read the time index.
    """
    if by == "bucket":
        if buckets is None:
            raise ValueError("grouping by bucket needs the buckets")
        return _bucket_counts(db, version, filters, buckets)
    where, params = _where(version, filters)
    key = _GROUP_COLUMN[by]
    narrow = _narrow(db, version, filters)
    index = "results_audit" if narrow else f"results_by_{by}"
    if by == "service" and not narrow:  # (service, status) is the index's own order
        query = (
            f"SELECT {key}, status, count(*) FROM results INDEXED BY {index}"
            f" WHERE {where} GROUP BY {key}, status"
        )
        return db.execute(query, params).fetchall()
    query = (
        f"SELECT {key} AS grp, {_STATUS_SUMS} FROM results INDEXED BY {index}"
        f" WHERE {where} GROUP BY grp"
    )
    return [
        (group, status, count)
        for group, *sums in db.execute(query, params)
        for status, count in zip(_STATUSES, sums, strict=True)
        if count
    ]


_STATUSES = ("safe", "unsafe", "undetermined", "error")
# Statuses summed per group rather than grouped by: the GROUP BY then follows the index.
_STATUS_SUMS = ", ".join(f"sum(status = '{status}')" for status in _STATUSES)


def _bucket_counts(
    db: sqlite3.Connection, version: PolicyVersion, filters: Filters, buckets: Buckets
) -> list[tuple[Any, str, int]]:
    """One range read of the time index per bucket, statuses summed as it goes.

    The index is in run-time order, so each bucket is a contiguous range and nothing is
    sorted (a GROUP BY on the bucket number would sort every row).
    """
    found = time_range(db, version, filters)
    if found is None:
        return []
    where, params = _where(version, filters)
    query = (
        f"SELECT {_STATUS_SUMS} FROM results INDEXED BY results_audit"
        f" WHERE {where} AND run_at >= ? AND run_at < ?"
    )
    rows: list[tuple[Any, str, int]] = []
    first = int((found[0] - buckets.origin) // buckets.width)
    last = int((found[1] - buckets.origin) // buckets.width)
    for index in range(first, last + 1):
        bounds = [buckets.start(index), buckets.start(index + 1)]
        sums = db.execute(query, [*params, *bounds]).fetchone()
        rows.extend((index, s, n) for s, n in zip(_STATUSES, sums, strict=True) if n)
    return rows


def _narrow(db: sqlite3.Connection, version: PolicyVersion, filters: Filters) -> bool:
    """Whether the time window covers only a small part of the version's history."""
    if filters.since is None and filters.until is None:
        return False
    history = time_range(db, version, Filters())
    if history is None:
        return True
    first, last = history
    start = first if filters.since is None else max(first, filters.since)
    end = last if filters.until is None else min(last, filters.until)
    return end - start < NARROW_SHARE * (last - first)


def time_range(
    db: sqlite3.Connection, version: PolicyVersion, filters: Filters
) -> tuple[float, float] | None:
    """Earliest and latest run time among the matching verdicts (None when there are none).

    Two ordered LIMIT 1 reads of the time index: each stops at the first match.
    """
    where, params = _where(version, filters)
    query = f"SELECT run_at FROM results INDEXED BY results_audit WHERE {where} ORDER BY run_at"
    first = db.execute(f"{query} LIMIT 1", params).fetchone()
    if first is None:
        return None
    last = db.execute(f"{query} DESC LIMIT 1", params).fetchone()
    return first[0], last[0]


@dataclass(frozen=True, slots=True)
class StoredResult:
    run_id: str
    revision: int
    policy: str
    policy_version: str
    check_id: str
    status: str
    service: str | None
    run_at: float
    result: dict[str, Any]

    @classmethod
    def from_row(cls, row: Any, documents: DocumentReader) -> StoredResult:
        """A row of ``_LISTED``'s columns, from either store, with its document."""
        run_id, revision, policy, version, check_id, status, service, run_at = row[:8]
        document = listed_document(documents, row)
        return cls(run_id, revision, policy, version, check_id, status, service, run_at, document)


_LISTED = "run_id, revision, policy, policy_version, check_id, status, service, run_at, result"


def listed_document(documents: DocumentReader, row: Any) -> dict[str, Any]:
    """A ``_LISTED`` row's document (same for both stores: ``pg_queries`` uses it too)."""
    return documents.document(row[8], row[0], row[1], row[2], row[3], row[4])


def listing(
    db: sqlite3.Connection, version: PolicyVersion, filters: Filters, newest: int | None
) -> Iterator[StoredResult]:
    """Matching verdicts by run time: the ``newest`` N latest first, or all oldest first."""
    where, params = _where(version, filters)
    query = f"SELECT {_LISTED} FROM results INDEXED BY results_audit WHERE {where}"
    if newest is None:
        query += " ORDER BY run_at"
    else:
        query += " ORDER BY run_at DESC LIMIT ?"
        params.append(newest)
    documents = DocumentReader(db, "?")
    for row in db.execute(query, params):
        yield StoredResult.from_row(row, documents)


# -- comparing two versions of one policy ------------------------------------------------------


def paired_statuses(
    db: sqlite3.Connection, before: PolicyVersion, after: PolicyVersion
) -> Iterator[tuple[str, str, str, str]]:
    """(run, check, status before, status after) for every check both versions scored.

    Both sides read ``results_by_check`` only: a scan of one version, a seek per verdict
    in the other, no result document touched.
    """
    where, params = _where(before, Filters(), "a")
    yield from db.execute(
        "SELECT a.run_id, a.check_id, a.status, b.status"
        " FROM results a INDEXED BY results_by_check JOIN results b INDEXED BY results_by_check"
        " ON b.policy = a.policy AND b.policy_version = ? AND b.current = 1"
        f" AND b.check_id = a.check_id AND b.run_id = a.run_id WHERE {where}",
        [after.version, *params],
    )


def runs_only(
    db: sqlite3.Connection, before: PolicyVersion, after: PolicyVersion
) -> tuple[int, int]:
    """Runs with verdicts under ``before`` and none under ``after``, and the other way round.

    One pass over the primary key, which is in run order: no sort, no result document.
    """
    row = db.execute(
        "SELECT coalesce(sum(has_before AND NOT has_after), 0),"
        " coalesce(sum(has_after AND NOT has_before), 0) FROM ("
        " SELECT max(policy_version = ?) AS has_before, max(policy_version = ?) AS has_after"
        f" FROM results INDEXED BY {PRIMARY_KEY_INDEX}"
        " WHERE policy = ? AND policy_version IN (?, ?) GROUP BY run_id)",
        (before.version, after.version, before.policy, before.version, after.version),
    ).fetchone()
    return row[0], row[1]


def current_result(
    db: sqlite3.Connection, version: PolicyVersion, run_id: str, check_id: str
) -> StoredResult | None:
    row = db.execute(
        f"SELECT {_LISTED} FROM results WHERE run_id = ? AND policy = ? AND policy_version = ?"
        " AND check_id = ? AND current = 1",
        (run_id, version.policy, version.version, check_id),
    ).fetchone()
    if row is None:
        return None
    return StoredResult.from_row(row, DocumentReader(db, "?"))


# -- what rescore reads ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run's latest scored revision: the span set a re-score must evaluate."""

    run_id: str
    revision: int
    span_ids: bytes  # packed, as ``runs.span_ids``
    trace_ids: list[str]


def latest_run(db: sqlite3.Connection, run_id: str) -> StoredRun | None:
    row = db.execute(
        "SELECT revision, span_ids, trace_ids FROM runs WHERE run_id = ?"
        " ORDER BY revision DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    return None if row is None else StoredRun(run_id, row[0], row[1], json.loads(row[2]))


def has_results(
    db: sqlite3.Connection, run_id: str, revision: int, policy: str, version: str
) -> bool:
    row = db.execute(
        "SELECT 1 FROM results WHERE run_id = ? AND policy = ? AND policy_version = ?"
        " AND revision = ? LIMIT 1",
        (run_id, policy, version, revision),
    ).fetchone()
    return row is not None


def run_time(db: sqlite3.Connection, run_id: str, revision: int) -> float | None:
    """The audit time the run's verdicts already have, under any policy."""
    row = db.execute(
        "SELECT run_at FROM results WHERE run_id = ? AND revision = ? LIMIT 1", (run_id, revision)
    ).fetchone()
    return None if row is None else row[0]


def session_runs(db: sqlite3.Connection) -> bool:
    """Whether the collector grouped runs by session (their ids say so)."""
    query = "SELECT 1 FROM runs WHERE run_id >= 'session:' AND run_id < 'session;' LIMIT 1"
    row = db.execute(query).fetchone()
    return row is not None


def stored_run_count(db: sqlite3.Connection) -> int:
    return db.execute("SELECT count(DISTINCT run_id) FROM runs").fetchone()[0]


def quarantined(db: sqlite3.Connection) -> list[tuple[int, int, int, str]]:
    """(segment, offset, spans, message) of each stored record the scorer could not read whole."""
    return list(
        db.execute(
            "SELECT segment, offset, spans, message FROM quarantine ORDER BY segment, offset"
        )
    )
