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

import hashlib
from collections.abc import Callable
from typing import Any

from rampart_otel.errors import SchemaError
from rampart_otel.storage.documents import pack_stored

SCHEMA_VERSION = 3

# A run id or service name longer than this (only hostile input has one: a session id or
# service.name is attacker-influenced) is stored as its start and a digest of the whole.
# Both are index keys here, and an index row must fit about 2.7 KB: one longer value would
# fail every write of its round, and again at every restart.
KEY_CHARS = 256


def stored_key(value: str | None) -> str | None:
    """``value`` as a key column keeps it: unchanged up to ``KEY_CHARS`` (and idempotent)."""
    if value is None or len(value) <= KEY_CHARS:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{value[: KEY_CHARS - 40]}\u2026#{digest}"


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

# Version 2: ``results_rollup``, the current verdicts counted per hour of run time (and
# policy, version, check, service, status), kept by a trigger on ``results`` so every write
# path (a new verdict, a revision superseding another, a replay, a delete) keeps it exact.
# The audit's aggregates read whole hours from it and only the edges of a time window from
# ``results``: over millions of verdicts, a few thousand rows instead of every one.
ROLLUP_SECONDS = 3600

# The hour of a run time, so that hour * 3600 <= run_at < (hour + 1) * 3600 holds exactly
# (a bare floor(run_at / 3600) can round up across an hour's edge).
_HOUR = """
CREATE FUNCTION rampart_hour(run_at DOUBLE PRECISION) RETURNS BIGINT
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE h BIGINT := floor(run_at / 3600);
BEGIN
    IF run_at < h * 3600.0 THEN RETURN h - 1; END IF;
    IF run_at >= (h + 1) * 3600.0 THEN RETURN h + 1; END IF;
    RETURN h;
END $$"""

_COUNT = """
CREATE FUNCTION rampart_rollup_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.current THEN
        IF OLD.service IS NULL THEN
            UPDATE results_rollup SET n = n - 1
            WHERE policy = OLD.policy AND policy_version = OLD.policy_version
              AND hour = rampart_hour(OLD.run_at) AND check_id = OLD.check_id
              AND service IS NULL AND status = OLD.status;
        ELSE
            UPDATE results_rollup SET n = n - 1
            WHERE policy = OLD.policy AND policy_version = OLD.policy_version
              AND hour = rampart_hour(OLD.run_at) AND check_id = OLD.check_id
              AND service = OLD.service AND status = OLD.status;
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.current THEN
        INSERT INTO results_rollup VALUES (NEW.policy, NEW.policy_version,
            rampart_hour(NEW.run_at), NEW.check_id, NEW.service, NEW.status, 1)
        ON CONFLICT (policy, policy_version, hour, check_id, service, status)
        DO UPDATE SET n = results_rollup.n + 1;
    END IF;
    RETURN NULL;
END $$"""

_V2 = (
    """CREATE TABLE results_rollup (
        policy TEXT COLLATE "C" NOT NULL,
        policy_version TEXT COLLATE "C" NOT NULL,
        hour BIGINT NOT NULL,
        check_id TEXT COLLATE "C" NOT NULL,
        service TEXT COLLATE "C",
        status TEXT COLLATE "C" NOT NULL,
        n BIGINT NOT NULL
    )""",
    "CREATE UNIQUE INDEX results_rollup_key ON results_rollup"
    " (policy, policy_version, hour, check_id, service, status) NULLS NOT DISTINCT",
    _HOUR,
    _COUNT,
    "CREATE TRIGGER results_rollup_count AFTER INSERT OR UPDATE OR DELETE ON results"
    " FOR EACH ROW EXECUTE FUNCTION rampart_rollup_count()",
    "INSERT INTO results_rollup SELECT policy, policy_version, rampart_hour(run_at), check_id,"
    " service, status, count(*) FROM results WHERE current"
    " GROUP BY 1, 2, 3, 4, 5, 6",
)


def _pack_stored(db: Any) -> None:
    pack_stored(db, "%s")


# Version 3: ``result_documents``, a run revision's result documents under one policy
# version in one compressed value, what they share (the run's coverage) once
# (``documents``); ``results.result`` is then ''. Every stored document is moved there.
_V3: tuple[str | Callable[[Any], None], ...] = (
    """CREATE TABLE result_documents (
        run_id TEXT COLLATE "C" NOT NULL,
        revision INTEGER NOT NULL,
        policy TEXT COLLATE "C" NOT NULL,
        policy_version TEXT COLLATE "C" NOT NULL,
        document BYTEA NOT NULL,
        PRIMARY KEY (run_id, revision, policy, policy_version)
    )""",
    _pack_stored,
)

# version -> the statements (or steps) that bring the store from the version before to it.
MIGRATIONS: dict[int, tuple[str | Callable[[Any], None], ...]] = {1: _V1, 2: _V2, 3: _V3}


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
                if callable(statement):
                    statement(db)
                else:
                    db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (%s)", (step,))


def newer_message(label: str, version: int) -> str:
    return (
        f"{label} has schema version {version}; this rampart-otel reads up to "
        f"{SCHEMA_VERSION} (upgrade rampart-otel)"
    )
