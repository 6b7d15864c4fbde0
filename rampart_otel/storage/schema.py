"""The layout of ``results.db`` and its migrations, so any opener finds the current schema.

The collector's scorer, ``rescore`` and ``audit`` all open the same file; whichever opens
it read-write first brings it to ``SCHEMA_VERSION`` in one transaction (a concurrent opener
waits on the lock, then finds the work done). An existing database is migrated in place:
no verdict is dropped.

Version 2 (audit, re-scoring history):

- ``results`` rows are keyed by policy version too, so re-scoring under a new version
  keeps the old verdicts next to the new ones; the key leads with (run, policy, version,
  check), which is what comparing two versions and superseding a revision look up;
- ``run_at`` is the time the audit filters and buckets by: when the run started (its root
  span), else when it was scored. Re-scoring does not move a run in time;
- ``current`` marks the latest revision of each (run, policy, version, check): the one
  ``audit`` counts, found through an index instead of a scan for the maximum;
- ``results_audit``, ``results_by_check`` and ``results_by_service`` cover every aggregate
  query (no table lookups, no sorting a million rows);
- ``policy_checks`` lists each (policy, version, check) ever scored, with the check's
  polarity and harm category: the versions to choose from without scanning ``results``.

Version 3 (size: a run's coverage once per run revision):

- ``result_documents`` holds the report@1 entries of one run revision's checks under one
  policy version as one compressed value, what they share (the run's coverage above all)
  written once (``documents``); a ``results`` row's ``result`` is then ``''``. Readers get
  the same documents as before. The migration moves every v2 document there.
"""

from __future__ import annotations

import sqlite3

from rampart_otel.errors import SchemaError
from rampart_otel.storage.documents import pack_stored

SCHEMA_VERSION = 3


_RESULTS_V2 = """
CREATE TABLE results (
    run_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    policy TEXT NOT NULL,
    check_id TEXT NOT NULL,
    status TEXT NOT NULL,
    service TEXT,
    started_at_ns INTEGER,
    scored_at REAL NOT NULL,
    result TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    run_at REAL NOT NULL,
    current INTEGER NOT NULL,
    PRIMARY KEY (run_id, policy, policy_version, check_id, revision)
)
"""

# Each audit index leads with (policy, version, current) and covers every column an
# aggregate reads; then by run time (time windows, trend, listing), by check, by service,
# so a GROUP BY over a whole history streams in index order instead of sorting. The check
# index holds the run id too: ``diff`` pairs two versions' verdicts through it alone.
# SQLite's name for the index of ``results``' PRIMARY KEY (run, policy, version, check,
# revision): the one index in run order, which ``diff`` reads to count runs per version.
PRIMARY_KEY_INDEX = "sqlite_autoindex_results_1"

_INDEXES_V2 = (
    "CREATE INDEX IF NOT EXISTS results_time ON results (scored_at)",
    "CREATE INDEX IF NOT EXISTS results_audit ON results"
    " (policy, policy_version, current, run_at, check_id, status, service)",
    "CREATE INDEX IF NOT EXISTS results_by_check ON results"
    " (policy, policy_version, current, check_id, run_id, status, run_at, service)",
    "CREATE INDEX IF NOT EXISTS results_by_service ON results"
    " (policy, policy_version, current, service, status, run_at, check_id)",
)

_POLICY_CHECKS = """
CREATE TABLE IF NOT EXISTS policy_checks (
    policy TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    check_id TEXT NOT NULL,
    version_json TEXT NOT NULL,
    polarity TEXT,
    harm_category TEXT,
    first_scored_at REAL NOT NULL,
    PRIMARY KEY (policy, policy_version, check_id)
)
"""

_DOCUMENTS = """
CREATE TABLE IF NOT EXISTS result_documents (
    run_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    policy TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    document BLOB NOT NULL,
    PRIMARY KEY (run_id, revision, policy, policy_version)
)
"""
# A rowid table: its 1-4 KB values fill pages; WITHOUT ROWID would spill each to overflow.

_COMMON = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        digest TEXT NOT NULL,
        span_ids BLOB NOT NULL,
        span_count INTEGER NOT NULL,
        trace_ids TEXT NOT NULL,
        service TEXT,
        started_at_ns INTEGER,
        scored_at REAL NOT NULL,
        PRIMARY KEY (run_id, revision)
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS runs_digest ON runs (run_id, digest)",
    """CREATE TABLE IF NOT EXISTS checkpoint (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        segment INTEGER NOT NULL,
        offset INTEGER NOT NULL
    )""",
)


# Stored records (or parts of them) the scorer could not read, for the audit's input errors.
_QUARANTINE = """CREATE TABLE IF NOT EXISTS quarantine (
    segment INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    spans INTEGER NOT NULL,
    message TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (segment, offset)
)"""


def stored_version(db: sqlite3.Connection) -> int | None:
    """The schema version recorded in the file; None for a new, empty database."""
    has_meta = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def prepare(db: sqlite3.Connection) -> None:
    """Create the current schema, or migrate an older one in place (autocommit connection)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = stored_version(db)
        if version is not None and version > SCHEMA_VERSION:
            raise SchemaError(
                f"results.db has schema version {version}; this rampart-otel reads up to "
                f"{SCHEMA_VERSION} (upgrade rampart-otel)"
            )
        if version is None:
            _create(db)
        else:
            for step in range(version, SCHEMA_VERSION):
                _MIGRATIONS[step](db)
        # Indexes and tables added within a version appear on the next read-write open.
        for statement in (*_INDEXES_V2, _QUARANTINE):
            db.execute(statement)
        db.execute(
            "INSERT INTO meta VALUES ('schema_version', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _create(db: sqlite3.Connection) -> None:
    for statement in _COMMON:
        db.execute(statement)
    if not _has_table(db, "results"):
        db.execute(_RESULTS_V2)
    for statement in (*_INDEXES_V2, _POLICY_CHECKS, _DOCUMENTS):
        db.execute(statement)


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return db.execute(query, (name,)).fetchone() is not None


def _migrate_1_to_2(db: sqlite3.Connection) -> None:
    """Rebuild ``results`` with the policy version in its key; fill the new columns."""
    for index in ("results_time", "results_service", "results_check", "results_status"):
        db.execute(f"DROP INDEX IF EXISTS {index}")
    db.execute("ALTER TABLE results RENAME TO results_v1")
    db.execute(_RESULTS_V2)
    # The version as text ('' when a result never recorded one); a revision is current when
    # no later revision of the same (run, policy, version, check) exists.
    db.execute(
        """
        INSERT INTO results
        SELECT run_id, revision, policy, check_id, status, service, started_at_ns, scored_at,
               result, policy_version, coalesce(started_at_ns / 1e9, scored_at),
               revision = max(revision) OVER (
                   PARTITION BY run_id, policy, policy_version, check_id)
        FROM (
            SELECT *, coalesce(CASE WHEN json_valid(result)
                THEN CAST(json_extract(result, '$.policy.version') AS TEXT) END, '')
                AS policy_version
            FROM results_v1
        )
        """
    )
    db.execute("DROP TABLE results_v1")
    for statement in (*_INDEXES_V2, _POLICY_CHECKS):
        db.execute(statement)
    db.execute(
        """
        INSERT OR IGNORE INTO policy_checks
        SELECT policy, policy_version, check_id,
               json_quote(CASE WHEN json_valid(result)
                   THEN json_extract(result, '$.policy.version') END),
               max(CASE WHEN json_valid(result) THEN json_extract(result, '$.polarity') END),
               max(CASE WHEN json_valid(result)
                   THEN json_extract(result, '$.harm_category') END),
               min(scored_at)
        FROM results GROUP BY policy, policy_version, check_id
        """
    )


def _migrate_2_to_3(db: sqlite3.Connection) -> None:
    """Move each run revision's documents into ``result_documents``, shared values once."""
    db.execute(_DOCUMENTS)
    pack_stored(db, "?")


_MIGRATIONS = {1: _migrate_1_to_2, 2: _migrate_2_to_3}
