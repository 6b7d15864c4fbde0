"""Verdicts given by the collector, in SQLite (``results.db``, WAL) inside the data directory.

One row per (run, revision, policy, check) with the JSON result, indexed for the audit
queries to come (time, service, check, status). Each scored run revision also records
the span ids it covered: a run is scored again only when its span set grows, so replaying
segments after a crash never scores the same spans twice under one revision. The
scorer's resume point (``checkpoint``) is written in the same transaction as the results
it covers, so the two never disagree.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
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
);
CREATE UNIQUE INDEX IF NOT EXISTS runs_digest ON runs (run_id, digest);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    policy TEXT NOT NULL,
    check_id TEXT NOT NULL,
    status TEXT NOT NULL,
    service TEXT,
    started_at_ns INTEGER,
    scored_at REAL NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (run_id, revision, policy, check_id)
);
CREATE INDEX IF NOT EXISTS results_time ON results (scored_at);
CREATE INDEX IF NOT EXISTS results_service ON results (service, scored_at);
CREATE INDEX IF NOT EXISTS results_check ON results (check_id, scored_at);
CREATE INDEX IF NOT EXISTS results_status ON results (status, scored_at);
CREATE TABLE IF NOT EXISTS checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    segment INTEGER NOT NULL,
    offset INTEGER NOT NULL
);
"""


def span_set(span_ids: Iterable[str]) -> tuple[bytes, str]:
    """Sorted span ids packed as bytes, and their digest: what identifies a scored run."""
    packed = b"".join(sorted({bytes.fromhex(span_id) for span_id in span_ids}))
    return packed, hashlib.sha256(packed).hexdigest()


def unpack_span_ids(packed: bytes) -> set[bytes]:
    return {packed[i : i + 8] for i in range(0, len(packed), 8)}


@dataclass(slots=True)
class ResultRow:
    run_id: str
    revision: int
    policy: str
    check_id: str
    status: str
    service: str | None
    started_at_ns: int | None
    scored_at: float
    result: dict[str, Any]


class ResultsStore:
    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        if readonly:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        else:
            self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            self.db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        self.db.execute("PRAGMA busy_timeout=5000")

    def close(self) -> None:
        self.db.close()

    # -- scorer side -------------------------------------------------------------------

    def checkpoint(self) -> tuple[int, int] | None:
        row = self.db.execute("SELECT segment, offset FROM checkpoint WHERE id = 1").fetchone()
        return (row[0], row[1]) if row else None

    def scored_span_ids(self, run_id: str) -> tuple[int, set[bytes]]:
        """The run's last revision (-1 if never scored) and every span id scored so far."""
        latest = -1
        seen: set[bytes] = set()
        for revision, packed in self.db.execute(
            "SELECT revision, span_ids FROM runs WHERE run_id = ?", (run_id,)
        ):
            latest = max(latest, revision)
            seen |= unpack_span_ids(packed)
        return latest, seen

    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    # -- audit side --------------------------------------------------------------------

    def results(self, limit: int | None = None) -> Iterator[ResultRow]:
        query = (
            "SELECT run_id, revision, policy, check_id, status, service, started_at_ns,"
            " scored_at, result FROM results ORDER BY scored_at, run_id, revision, check_id"
        )
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        for row in self.db.execute(query):
            yield ResultRow(*row[:8], json.loads(row[8]))

    def status_counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT status, count(*) FROM results GROUP BY status"))


class _Transaction:
    """One write transaction: runs and results of a scoring round, plus the checkpoint."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> _Transaction:
        self.db.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def add_run(
        self,
        run_id: str,
        revision: int,
        packed_span_ids: bytes,
        digest: str,
        trace_ids: list[str],
        service: str | None,
        started_at_ns: int | None,
    ) -> None:
        self.db.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                revision,
                digest,
                packed_span_ids,
                len(packed_span_ids) // 8,
                json.dumps(trace_ids),
                service,
                started_at_ns,
                time.time(),
            ),
        )

    def add_result(self, row: ResultRow) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.run_id,
                row.revision,
                row.policy,
                row.check_id,
                row.status,
                row.service,
                row.started_at_ns,
                row.scored_at,
                json.dumps(row.result, default=str),
            ),
        )

    def set_checkpoint(self, segment: int, offset: int) -> None:
        self.db.execute(
            "INSERT INTO checkpoint VALUES (1, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET segment = excluded.segment, offset = excluded.offset",
            (segment, offset),
        )
