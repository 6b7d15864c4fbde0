"""The read side of the PostgreSQL results store: what ``audit_queries`` answers for
``results.db``, the same answers, in PostgreSQL's SQL.

Same functions, same arguments, same results (the tests compare them on one history);
``queries`` picks this module or ``audit_queries`` by the connection. The planner chooses
among the partial ``WHERE current`` indexes itself (no INDEXED BY); statuses are counted by
``GROUP BY`` and time buckets are one join against the bucket bounds Python computed, so a
verdict falls in the same bucket as in ``results.db`` to the last bit.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rampart_otel.storage.audit_queries import (
    Buckets,
    Filters,
    GroupBy,
    PolicyVersion,
    StoredResult,
    StoredRun,
)
from rampart_otel.storage.documents import DocumentReader
from rampart_otel.storage.pg_schema import ROLLUP_SECONDS, stored_key

if TYPE_CHECKING:
    import psycopg


def _where(
    version: PolicyVersion,
    filters: Filters,
    alias: str = "",
    *,
    hours: tuple[int | None, int | None] | None = None,
) -> tuple[str, list[Any]]:
    """The condition on ``results`` (current verdicts in the filters' window), or with
    ``hours`` on ``results_rollup`` (the whole hours from the first to the end)."""
    p = f"{alias}." if alias else ""
    clauses = [f"{p}policy = %s", f"{p}policy_version = %s"]
    params: list[Any] = [version.policy, version.version]
    if hours is None:
        clauses.append(f"{p}current")
        bounds = (("run_at >=", filters.since), ("run_at <", filters.until))
    else:
        bounds = (("hour >=", hours[0]), ("hour <", hours[1]))
    for test, value in bounds:
        if value is not None:
            clauses.append(f"{p}{test} %s")
            params.append(value)
    for column, values in (
        ("service", filters.services),
        ("check_id", filters.checks),
        ("status", filters.statuses),
    ):
        if values:
            clauses.append(f"{p}{column} = ANY(%s)")
            params.append(list(values))
    return " AND ".join(clauses), params


_GROUP_COLUMN = {"check": "check_id", "service": "service"}


def counts(
    db: psycopg.Connection[Any],
    version: PolicyVersion,
    filters: Filters,
    by: GroupBy,
    buckets: Buckets | None = None,
) -> list[tuple[Any, str, int]]:
    """(group, status, count) for one policy version's current verdicts.

    Whole hours of run time are counted from ``results_rollup``; only the part of the
    window that does not fill an hour (its edges) is counted row by row.
    """
    if by == "bucket":
        if buckets is None:
            raise ValueError("grouping by bucket needs the buckets")
        return _bucket_counts(db, version, filters, buckets)
    key = _GROUP_COLUMN[by]
    first, end = _whole_hours(filters.since, filters.until)
    found: Counter[tuple[Any, str]] = Counter()
    if first is None or end is None or first < end:
        where, params = _where(version, filters, hours=(first, end))
        rows = db.execute(
            f"SELECT {key}, status, sum(n)::bigint FROM results_rollup WHERE {where}"
            f" GROUP BY {key}, status",
            params,
        )
        for group, status, count in rows:
            found[(group, status)] += count
        edges = _edges(filters.since, filters.until, first, end)
    else:  # the window fills no whole hour
        assert filters.since is not None and filters.until is not None  # first, end are set
        edges = [(filters.since, filters.until)]
    for low, high in edges:
        where, params = _where(version, dataclasses.replace(filters, since=low, until=high))
        rows = db.execute(
            f"SELECT {key}, status, count(*) FROM results WHERE {where} GROUP BY {key}, status",
            params,
        )
        for group, status, count in rows:
            found[(group, status)] += count
    return sorted(
        ((group, status, count) for (group, status), count in found.items() if count > 0),
        key=lambda row: (row[0] is not None, row[0] or "", row[1]),
    )


def _whole_hours(since: float | None, until: float | None) -> tuple[int | None, int | None]:
    """The rollup hours inside [since, until): the first, and the end (exclusive); None for
    an open side. Exact in both directions: hour * 3600 is compared, never rounded."""
    first = end = None
    if since is not None:
        first = math.ceil(since / ROLLUP_SECONDS)
        while first * ROLLUP_SECONDS < since:
            first += 1
        while (first - 1) * ROLLUP_SECONDS >= since:
            first -= 1
    if until is not None:
        end = math.floor(until / ROLLUP_SECONDS)
        while end * ROLLUP_SECONDS > until:
            end -= 1
        while (end + 1) * ROLLUP_SECONDS <= until:
            end += 1
    return first, end


def _edges(
    since: float | None, until: float | None, first: int | None, end: int | None
) -> list[tuple[float, float]]:
    """The parts of [since, until) outside its whole hours, counted from ``results``."""
    edges = []
    if since is not None and first is not None and since < first * ROLLUP_SECONDS:
        edges.append((since, float(first * ROLLUP_SECONDS)))
    if until is not None and end is not None and end * ROLLUP_SECONDS < until:
        edges.append((float(end * ROLLUP_SECONDS), until))
    return edges


def _bucket_counts(
    db: psycopg.Connection[Any], version: PolicyVersion, filters: Filters, buckets: Buckets
) -> list[tuple[Any, str, int]]:
    """Each bucket's whole hours from the rollup, its edges from ``results``: a verdict
    falls in the same bucket as in ``results.db`` to the last bit."""
    found = time_range(db, version, filters)
    if found is None:
        return []
    first = int((found[0] - buckets.origin) // buckets.width)
    last = int((found[1] - buckets.origin) // buckets.width)
    hourly: tuple[list[int], list[int], list[int]] = ([], [], [])
    edges: tuple[list[int], list[float], list[float]] = ([], [], [])
    for index in range(first, last + 1):
        low, high = buckets.start(index), buckets.start(index + 1)
        if filters.since is not None and filters.since > low:
            low = filters.since
        if filters.until is not None and filters.until < high:
            high = filters.until
        if not low < high:
            continue
        hour, end = _whole_hours(low, high)
        assert hour is not None and end is not None
        if hour < end:
            for column, value in zip(hourly, (index, hour, end), strict=True):
                column.append(value)
            pieces = _edges(low, high, hour, end)
        else:
            pieces = [(low, high)]
        for piece_low, piece_high in pieces:
            edges[0].append(index)
            edges[1].append(piece_low)
            edges[2].append(piece_high)
    counted: Counter[tuple[int, str]] = Counter()
    if hourly[0]:
        # Hour by hour (a few thousand groups), then each hour to the bucket it lies in.
        index_of, firsts, stops = hourly
        where, params = _where(version, filters, hours=(firsts[0], stops[-1]))
        rows = db.execute(
            f"SELECT hour, status, sum(n)::bigint FROM results_rollup WHERE {where}"
            " GROUP BY hour, status",
            params,
        )
        for hour, status, count in rows:
            at = bisect.bisect_right(firsts, hour) - 1
            if at >= 0 and hour < stops[at]:  # else an edge hour: counted row by row below
                counted[(index_of[at], status)] += count
    unbounded = dataclasses.replace(filters, since=None, until=None)
    where, params = _where(version, unbounded, "r")
    rows = db.execute(
        "SELECT b.i, r.status, count(*)"
        " FROM unnest(%s::bigint[], %s::float8[], %s::float8[]) AS b(i, lo, hi)"
        f" JOIN results r ON r.run_at >= b.lo AND r.run_at < b.hi WHERE {where}"
        " GROUP BY b.i, r.status",
        [*edges, *params],
    )
    for index, status, count in rows:
        counted[(index, status)] += count
    return sorted((index, status, n) for (index, status), n in counted.items() if n > 0)


def time_range(
    db: psycopg.Connection[Any], version: PolicyVersion, filters: Filters
) -> tuple[float, float] | None:
    """Earliest and latest run time among the matching verdicts (None when there are none)."""
    where, params = _where(version, filters)
    row = db.execute(f"SELECT min(run_at), max(run_at) FROM results WHERE {where}", params)
    first, last = row.fetchone()  # type: ignore[misc]
    return None if first is None else (first, last)


_LISTED = "run_id, revision, policy, policy_version, check_id, status, service, run_at, result"
# results.db lists ties on run time in its index's order: check, status, service (NULL first).
_ASCENDING = "run_at, check_id, status, service NULLS FIRST, run_id, revision"
_DESCENDING = (
    "run_at DESC, check_id DESC, status DESC, service DESC NULLS LAST, run_id DESC, revision DESC"
)


def listing(
    db: psycopg.Connection[Any], version: PolicyVersion, filters: Filters, newest: int | None
) -> Iterator[StoredResult]:
    """Matching verdicts by run time: the ``newest`` N latest first, or all oldest first."""
    where, params = _where(version, filters)
    query = f"SELECT {_LISTED} FROM results WHERE {where}"
    if newest is None:
        query += f" ORDER BY {_ASCENDING}"
    else:
        query += f" ORDER BY {_DESCENDING} LIMIT %s"
        params.append(newest)
    documents = DocumentReader(db, "%s")
    for row in db.execute(query, params):
        yield StoredResult.from_row(row, documents)


# -- comparing two versions of one policy ------------------------------------------------------


def paired_statuses(
    db: psycopg.Connection[Any], before: PolicyVersion, after: PolicyVersion
) -> Iterator[tuple[str, str, str, str]]:
    """(run, check, status before, status after) for every check both versions scored."""
    where, params = _where(before, Filters(), "a")
    yield from db.execute(
        "SELECT a.run_id, a.check_id, a.status, b.status FROM results a JOIN results b"
        " ON b.policy = a.policy AND b.policy_version = %s AND b.current"
        f" AND b.check_id = a.check_id AND b.run_id = a.run_id WHERE {where}"
        " ORDER BY a.check_id, a.run_id",
        [after.version, *params],
    )


def runs_only(
    db: psycopg.Connection[Any], before: PolicyVersion, after: PolicyVersion
) -> tuple[int, int]:
    """Runs with verdicts under ``before`` and none under ``after``, and the other way round."""
    row = db.execute(
        "SELECT count(*) FILTER (WHERE has_before AND NOT has_after),"
        " count(*) FILTER (WHERE has_after AND NOT has_before) FROM ("
        " SELECT bool_or(policy_version = %s) AS has_before,"
        " bool_or(policy_version = %s) AS has_after"
        " FROM results WHERE policy = %s AND policy_version IN (%s, %s) GROUP BY run_id) AS runs",
        (before.version, after.version, before.policy, before.version, after.version),
    ).fetchone()
    assert row is not None
    return row[0], row[1]


def current_result(
    db: psycopg.Connection[Any], version: PolicyVersion, run_id: str, check_id: str
) -> StoredResult | None:
    row = db.execute(
        f"SELECT {_LISTED} FROM results WHERE run_id = %s AND policy = %s"
        " AND policy_version = %s AND check_id = %s AND current",
        (stored_key(run_id), version.policy, version.version, check_id),
    ).fetchone()
    if row is None:
        return None
    return StoredResult.from_row(row, DocumentReader(db, "%s"))


# -- what rescore reads ----------------------------------------------------------------------


def latest_run(db: psycopg.Connection[Any], run_id: str) -> StoredRun | None:
    row = db.execute(
        "SELECT revision, span_ids, trace_ids FROM runs WHERE run_id = %s"
        " ORDER BY revision DESC LIMIT 1",
        (stored_key(run_id),),
    ).fetchone()
    return None if row is None else StoredRun(run_id, row[0], bytes(row[1]), json.loads(row[2]))


def has_results(
    db: psycopg.Connection[Any], run_id: str, revision: int, policy: str, version: str
) -> bool:
    row = db.execute(
        "SELECT 1 FROM results WHERE run_id = %s AND policy = %s AND policy_version = %s"
        " AND revision = %s LIMIT 1",
        (stored_key(run_id), policy, version, revision),
    ).fetchone()
    return row is not None


def run_time(db: psycopg.Connection[Any], run_id: str, revision: int) -> float | None:
    """The audit time the run's verdicts already have, under any policy."""
    row = db.execute(
        "SELECT run_at FROM results WHERE run_id = %s AND revision = %s LIMIT 1",
        (stored_key(run_id), revision),
    ).fetchone()
    return None if row is None else row[0]


def session_runs(db: psycopg.Connection[Any]) -> bool:
    """Whether the collector grouped runs by session (their ids say so)."""
    query = "SELECT 1 FROM runs WHERE run_id >= 'session:' AND run_id < 'session;' LIMIT 1"
    return db.execute(query).fetchone() is not None


def stored_run_count(db: psycopg.Connection[Any]) -> int:
    row = db.execute("SELECT count(DISTINCT run_id) FROM runs").fetchone()
    assert row is not None
    return row[0]


def quarantined(db: psycopg.Connection[Any]) -> list[tuple[int, int, int, str]]:
    """(segment, offset, spans, message) of each record a scorer could not read whole, every
    collector instance's (ordered by instance)."""
    return db.execute(
        "SELECT segment, byte_offset, spans, message FROM quarantine"
        " ORDER BY instance, segment, byte_offset"
    ).fetchall()
