"""Verdicts given by the collector, in SQLite (``results.db``, WAL) inside the data directory.

One row per (run, revision, policy, policy version, check), indexed for the audit's
aggregate queries (``schema`` has the layout and its migrations); the result documents of a
run revision are stored together, what they share once (``documents``). Each
scored run revision also records the span ids it covered: a run is scored again only when
its span set grows, so replaying segments after a crash never scores the same spans twice
under one revision. The scorer's resume point (``checkpoint``) is written in the same
transaction as the results it covers, so the two never disagree.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any, ClassVar

from rampart_otel.errors import SchemaError, StoreError
from rampart_otel.storage.documents import PACKED, merged, store_documents
from rampart_otel.storage.schema import SCHEMA_VERSION, prepare, stored_version
from rampart_otel.storage.sql_store import (
    SQLITE,
    Dialect,
    Position,
    ResultRow,
    SqlStore,
    SqlTransaction,
    shard_checkpoint,
    span_set,
    unpack_span_ids,
    version_text,
)

# The layout and its migrations live in ``schema``, the rows and the SQL both stores share
# in ``sql_store``; re-exported for callers of the store.
__all__ = [
    "SCHEMA_VERSION",
    "ResultRow",
    "ResultsStore",
    "SchemaError",
    "open_reader",
    "shard_checkpoint",
    "span_set",
    "unpack_span_ids",
    "version_text",
]


# A collector with several scorer shards keeps each shard's resume point (in ``meta`` here,
# as ``checkpoint.shard.INDEX/COUNT``; as its own ``checkpoint`` row in PostgreSQL) and the
# least of them as the store's checkpoint, which every reader of the checkpoint uses.
SHARD_KEY = "checkpoint.shard."


def _checkpoint(db: sqlite3.Connection) -> Position | None:
    row = db.execute("SELECT segment, offset FROM checkpoint WHERE id = 1").fetchone()
    return (row[0], row[1]) if row else None


def _position(value: str) -> Position:
    segment, offset = value.split()
    return int(segment), int(offset)


PAGE_SIZE = 16384  # bytes per page of a new results.db (SQLite's default is 4096)


class ResultsStore(SqlStore):
    """The results store in a data directory's ``results.db`` (``protocol.VerdictStore``)."""

    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        if readonly:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        else:
            try:
                self.db = _open_writable(path)
            except (OSError, sqlite3.DatabaseError) as error:
                # A file that is no database, a full disk, a directory this user cannot
                # write: the operator's to fix, said in one line naming the file.
                reason = error.strerror if isinstance(error, OSError) else error
                raise StoreError(f"{path}: cannot open the results store: {reason}") from None
        self.db.execute("PRAGMA busy_timeout=5000")
        self._registered: set[tuple[str, str, str]] = set()  # (policy, version, check) stored

    def schema_version(self) -> int | None:
        return stored_version(self.db)

    def checkpoint(self) -> Position | None:
        return _checkpoint(self.db)

    def clear_shard_checkpoints(self) -> None:
        """Forget the shards' resume points (at start: every shard resumes from the store's
        checkpoint, the least of them, whatever the number of shards was)."""
        self.db.execute("DELETE FROM meta WHERE key LIKE ?", (f"{SHARD_KEY}%",))

    def transaction(self) -> _Transaction:
        return _Transaction(self.db, self._registered)


class _Transaction(SqlTransaction):
    """One write transaction: runs and results of a scoring round, plus the checkpoint."""

    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, db: sqlite3.Connection, registered: set[tuple[str, str, str]]) -> None:
        super().__init__(registered)
        self.db = db
        # (run, revision, policy, version) -> check -> document: stored at the end, together
        self.documents: dict[tuple[str, int, str, str], dict[str, dict[str, Any]]] = {}

    def __enter__(self) -> _Transaction:
        self.db.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            try:
                self._write_documents()
            except BaseException:
                self._rollback()
                raise
            self.db.execute("COMMIT")
            self.committed()
        else:
            self._rollback()

    def _rollback(self) -> None:
        # SQLite rolls back on its own after some errors (a full disk, an I/O error): a
        # ROLLBACK then fails and would hide the error that says what happened.
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def add_result(self, row: ResultRow) -> None:
        """Store a verdict; it supersedes earlier revisions of its (run, policy, version, check)."""
        version = version_text(row.policy_version)
        key = (row.run_id, row.policy, version, row.check_id, row.revision)
        if row.revision > 0:
            self.db.execute(
                "UPDATE results SET current = 0 WHERE run_id = ? AND policy = ?"
                " AND policy_version = ? AND check_id = ? AND revision < ? AND current",
                key,
            )
        self.db.execute(
            "INSERT OR REPLACE INTO results (run_id, revision, policy, check_id, status, service,"
            " started_at_ns, scored_at, result, policy_version, run_at, current)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NOT EXISTS (SELECT 1 FROM results"
            " WHERE run_id = ? AND policy = ? AND policy_version = ? AND check_id = ?"
            " AND revision > ?))",
            (
                row.run_id,
                row.revision,
                row.policy,
                row.check_id,
                row.status,
                row.service,
                row.started_at_ns,
                row.scored_at,
                PACKED,
                version,
                row.audit_time(),
                *key,
            ),
        )
        documents = self.documents.setdefault((row.run_id, row.revision, row.policy, version), {})
        documents[row.check_id] = row.result
        self.register_check(row)

    def _write_documents(self) -> None:
        """Each run revision's documents in one value, with any stored ones not replaced."""
        for key, documents in self.documents.items():
            stored = self.db.execute(
                "SELECT document FROM result_documents WHERE run_id = ? AND revision = ?"
                " AND policy = ? AND policy_version = ?",
                key,
            ).fetchone()
            store_documents(self.db, "?", key, merged(stored[0] if stored else None, documents))
        self.documents = {}

    def add_quarantine(self, segment: int, offset: int, spans: int, message: str) -> None:
        """A stored record the scorer could not read whole; replays record it once."""
        self.db.execute(
            "INSERT OR IGNORE INTO quarantine VALUES (?, ?, ?, ?, ?)",
            (segment, offset, spans, message, time.time()),
        )

    def set_checkpoint(self, segment: int, offset: int) -> None:
        self.db.execute(
            "INSERT INTO checkpoint VALUES (1, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET segment = excluded.segment, offset = excluded.offset",
            (segment, offset),
        )

    def _save_shard_position(self, shard: int, shards: int, position: Position) -> None:
        self.db.execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (f"{SHARD_KEY}{shard}/{shards}", "{} {}".format(*position)),
        )

    def _shard_positions(self, shards: int) -> list[Position]:
        rows = self.db.execute(
            "SELECT value FROM meta WHERE key LIKE ?", (f"{SHARD_KEY}%/{shards}",)
        )
        return [_position(value) for (value,) in rows]

    def _saved_checkpoint(self) -> Position | None:
        return _checkpoint(self.db)


def _open_writable(path: Path) -> sqlite3.Connection:
    # SQLite gives the -wal and -shm files the database's mode: 0600 for all three.
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        # A new file only (an existing one keeps its size): a run's compressed document
        # is ~2 KB, so 4 KiB pages held one each and left half of every page empty.
        db.execute(f"PRAGMA page_size={PAGE_SIZE}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=5000")
        prepare(db)
    except BaseException:
        db.close()
        raise
    return db


def open_reader(path: Path) -> ResultsStore:
    """A read-only store at the current schema: an older file is migrated first, in place.

    Raises SchemaError for a file from a newer rampart-otel, sqlite3.Error if unreadable
    (StoreError if it must be migrated and cannot be written).
    """
    reader = ResultsStore(path, readonly=True)
    version = reader.schema_version()
    if version == SCHEMA_VERSION:
        return reader
    reader.close()
    if version is not None and version > SCHEMA_VERSION:
        raise SchemaError(
            f"{path} has schema version {version}; this rampart-otel reads up to "
            f"{SCHEMA_VERSION} (upgrade rampart-otel)"
        )
    ResultsStore(path).close()  # migrates (or creates the tables of an empty file)
    return ResultsStore(path, readonly=True)
