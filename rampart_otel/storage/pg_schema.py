"""The layout of the shared PostgreSQL results store and its versioned migrations.

Several collectors (and ``rescore``, ``audit``) open one database; whichever opens it first
brings it to ``SCHEMA_VERSION`` in one transaction, holding an advisory lock so a concurrent
opener waits and then finds the work done. ``schema_version`` lists each applied version.

The tables mirror ``results.db`` (``schema``), with two differences a shared store needs:

- ``checkpoint`` and ``quarantine`` are keyed by the collector instance: each collector has
  its own segments, so its own resume point and its own unreadable records;
- ``offset`` is a reserved word here: the column is ``byte_offset``.

Text that is compared or ordered is ``COLLATE "C"``: byte order, as SQLite compares, so
listings and tie-breaks come out in the same order whatever the server's locale.
``current`` is a boolean; the audit indexes are partial (``WHERE current``), since every
aggregate reads current verdicts only.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.errors import SchemaError

SCHEMA_VERSION = 1

# Taken (transaction-scoped) by migrations and by every write transaction: writers of one
# store are serialized as SQLite's BEGIN IMMEDIATE serializes them (``pg_results``).
LOCK_KEY = 0x72616D70  # "ramp"

_V1 = (
    """CREATE TABLE results (
        run_id TEXT COLLATE "C" NOT NULL,
        revision INTEGER NOT NULL,
        policy TEXT COLLATE "C" NOT NULL,
        check_id TEXT COLLATE "C" NOT NULL,
        status TEXT COLLATE "C" NOT NULL,
        service TEXT COLLATE "C",
        started_at_ns BIGINT,
        scored_at DOUBLE PRECISION NOT NULL,
        result TEXT NOT NULL,
        policy_version TEXT COLLATE "C" NOT NULL,
        run_at DOUBLE PRECISION NOT NULL,
        current BOOLEAN NOT NULL,
        PRIMARY KEY (run_id, policy, policy_version, check_id, revision)
    )""",
    "CREATE INDEX results_time ON results (scored_at)",
    "CREATE INDEX results_audit ON results (policy, policy_version, run_at)"
    " INCLUDE (check_id, status, service) WHERE current",
    "CREATE INDEX results_by_check ON results (policy, policy_version, check_id, run_id)"
    " INCLUDE (status, run_at, service) WHERE current",
    "CREATE INDEX results_by_service ON results (policy, policy_version, service, status)"
    " INCLUDE (run_at, check_id) WHERE current",
    """CREATE TABLE policy_checks (
        policy TEXT COLLATE "C" NOT NULL,
        policy_version TEXT COLLATE "C" NOT NULL,
        check_id TEXT COLLATE "C" NOT NULL,
        version_json TEXT NOT NULL,
        polarity TEXT,
        harm_category TEXT,
        first_scored_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (policy, policy_version, check_id)
    )""",
    """CREATE TABLE runs (
        run_id TEXT COLLATE "C" NOT NULL,
        revision INTEGER NOT NULL,
        digest TEXT NOT NULL,
        span_ids BYTEA NOT NULL,
        span_count INTEGER NOT NULL,
        trace_ids TEXT NOT NULL,
        service TEXT COLLATE "C",
        started_at_ns BIGINT,
        scored_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, revision)
    )""",
    "CREATE UNIQUE INDEX runs_digest ON runs (run_id, digest)",
    """CREATE TABLE checkpoint (
        instance TEXT PRIMARY KEY,
        segment BIGINT NOT NULL,
        byte_offset BIGINT NOT NULL
    )""",
    """CREATE TABLE quarantine (
        instance TEXT NOT NULL,
        segment BIGINT NOT NULL,
        byte_offset BIGINT NOT NULL,
        spans INTEGER NOT NULL,
        message TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (instance, segment, byte_offset)
    )""",
)

# version -> the statements that bring the store from the version before to it.
MIGRATIONS: dict[int, tuple[str, ...]] = {1: _V1}


def stored_version(db: Any) -> int | None:
    """The newest applied schema version; None for a database the store never touched."""
    exists = db.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()[0]
    if not exists:
        return None
    return db.execute("SELECT max(version) FROM schema_version").fetchone()[0]


def prepare(db: Any, label: str) -> None:
    """Create the schema or apply the missing migrations, one transaction, under the lock.

    ``db`` is an autocommit psycopg connection; ``label`` names the store in errors.
    """
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        version = stored_version(db) or 0
        if version > SCHEMA_VERSION:
            raise SchemaError(newer_message(label, version))
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (%s)", (step,))


def newer_message(label: str, version: int) -> str:
    return (
        f"{label} has schema version {version}; this rampart-otel reads up to "
        f"{SCHEMA_VERSION} (upgrade rampart-otel)"
    )
