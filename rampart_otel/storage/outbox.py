"""The collector's outbox: verdicts waiting to be written back to a trace store or sent as
alerts, kept on disk (``outbox.db`` in the data directory, SQLite, each commit fsynced)
until delivered, so a store or a webhook receiver that is down loses nothing.

Scorer processes :meth:`Outbox.enqueue` (in their verdicts' own transaction's span: a
crash re-scores the run and queues the same keys again, which changes nothing); the
collector's delivery threads take what is :meth:`Outbox.due`, and mark each item
:meth:`Outbox.delivered`, :meth:`Outbox.retry` (later) or :meth:`Outbox.give_up`.

Each item has a target (``annotate``, ``alert``), a key and a revision:

- ``once`` targets (alerts): a key is delivered at most once, ever (the ``done`` table
  remembers it): a later revision with the same key, or the same one queued again after a
  crash, is not queued.
- the others (annotations): a key pending is replaced by a later revision of it (only the
  newest is written), and a revision no newer than one delivered is not queued again.

Bounded: at most ``max_pending`` items per target wait; past that an item is refused,
counted (``dropped``) and the caller told. ``done`` keeps keys for ``DONE_KEEP_SECONDS``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rampart_otel.errors import StoreError

FILE = "outbox.db"
BUSY_MS = 30_000  # several scorer shards and the delivery threads share the file
DONE_KEEP_SECONDS = 30 * 24 * 3600
_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    key TEXT NOT NULL,
    revision INTEGER NOT NULL,
    payload BLOB NOT NULL,
    enqueued_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL,
    last_error TEXT,
    UNIQUE (target, key)
);
CREATE INDEX IF NOT EXISTS pending_due ON pending (target, next_at, id);
CREATE TABLE IF NOT EXISTS done (
    target TEXT NOT NULL,
    key TEXT NOT NULL,
    revision INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (target, key)
);
CREATE INDEX IF NOT EXISTS done_at ON done (at);
CREATE TABLE IF NOT EXISTS counts (
    target TEXT NOT NULL,
    what TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (target, what)
);
"""


@dataclass(frozen=True, slots=True)
class Item:
    """One thing to deliver: ``payload`` is the target's JSON, as bytes."""

    target: str
    key: str
    revision: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class Due:
    """A pending item, as delivery sees it."""

    id: int
    key: str
    revision: int
    payload: bytes
    attempts: int
    enqueued_at: float


class Outbox:
    """One connection to ``data_dir/outbox.db`` (0600); safe for one thread at a time."""

    def __init__(self, data_dir: Path, *, max_pending: int = 100_000) -> None:
        self.path = data_dir / FILE
        self.max_pending = max_pending
        try:
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self.db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # an acknowledged verdict is on disk
            self.db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            reason = error.strerror if isinstance(error, OSError) else error
            raise StoreError(f"{self.path}: cannot open the outbox: {reason}") from None

    def close(self) -> None:
        self.db.close()

    # -- the scorers' side ---------------------------------------------------------------

    def enqueue(self, items: Iterable[Item], *, once: Sequence[str] = ()) -> int:
        """Queue ``items`` (targets named in ``once`` at most once per key); how many were
        refused because their target's queue was full."""
        dropped = 0
        now = time.time()
        with _Write(self.db):
            for item in items:
                single = item.target in once
                if self._known(item, single):
                    continue
                replaced = (
                    not single
                    and self.db.execute(
                        "UPDATE pending SET revision = ?, payload = ? "
                        "WHERE target = ? AND key = ? AND revision < ?",
                        (item.revision, item.payload, item.target, item.key, item.revision),
                    ).rowcount
                )
                if replaced:
                    continue
                if self._pending(item.target, item.key):
                    continue  # the same revision, or a newer one, waits already
                if self.pending_count(item.target) >= self.max_pending:
                    dropped += 1
                    self._count(item.target, "dropped")
                    continue
                self.db.execute(
                    "INSERT INTO pending (target, key, revision, payload, enqueued_at, next_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (item.target, item.key, item.revision, item.payload, now, now),
                )
                self._count(item.target, "queued")
        return dropped

    def _known(self, item: Item, once: bool) -> bool:
        row = self.db.execute(
            "SELECT revision FROM done WHERE target = ? AND key = ?", (item.target, item.key)
        ).fetchone()
        return row is not None and (once or row[0] >= item.revision)

    def _pending(self, target: str, key: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM pending WHERE target = ? AND key = ?", (target, key)
            ).fetchone()
            is not None
        )

    # -- the delivery side ---------------------------------------------------------------

    def due(self, target: str, now: float, limit: int = 100) -> list[Due]:
        """Items of ``target`` whose time has come, oldest first."""
        rows = self.db.execute(
            "SELECT id, key, revision, payload, attempts, enqueued_at FROM pending "
            "WHERE target = ? AND next_at <= ? ORDER BY id LIMIT ?",
            (target, now, limit),
        )
        return [Due(*row) for row in rows]

    def next_due(self, target: str) -> float | None:
        """When the soonest pending item of ``target`` is due (None: nothing waits)."""
        row = self.db.execute(
            "SELECT MIN(next_at) FROM pending WHERE target = ?", (target,)
        ).fetchone()
        return row[0] if row else None

    def delivered(self, target: str, item: Due) -> None:
        now = time.time()
        with _Write(self.db):
            # Only this revision: a newer one queued meanwhile replaced it, and still waits.
            gone = self.db.execute(
                "DELETE FROM pending WHERE id = ? AND revision = ?", (item.id, item.revision)
            ).rowcount
            if not gone:
                self.db.execute("UPDATE pending SET attempts = 0 WHERE id = ?", (item.id,))
            self.db.execute(
                "INSERT INTO done (target, key, revision, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (target, key) DO UPDATE SET "
                "revision = MAX(revision, excluded.revision), at = excluded.at",
                (target, item.key, item.revision, now),
            )
            self._count(target, "delivered")
            self.db.execute("DELETE FROM done WHERE at < ?", (now - DONE_KEEP_SECONDS,))

    def retry(self, target: str, item: Due, error: str, at: float) -> None:
        with _Write(self.db):
            self.db.execute(
                "UPDATE pending SET attempts = attempts + 1, next_at = ?, last_error = ? "
                "WHERE id = ?",
                (at, error[:1000], item.id),
            )
            self._count(target, "failures")

    def give_up(self, target: str, item: Due, error: str) -> None:
        with _Write(self.db):
            self.db.execute("DELETE FROM pending WHERE id = ?", (item.id,))
            self._count(target, "dropped")

    def postpone(self, target: str, at: float) -> None:
        """Nothing of ``target`` is tried before ``at`` (its receiver is down)."""
        with _Write(self.db):
            self.db.execute(
                "UPDATE pending SET next_at = MAX(next_at, ?) WHERE target = ?", (at, target)
            )

    # -- figures -------------------------------------------------------------------------

    def pending_count(self, target: str) -> int:
        row = self.db.execute("SELECT COUNT(*) FROM pending WHERE target = ?", (target,))
        return int(row.fetchone()[0])

    def oldest_seconds(self, target: str, now: float) -> float:
        row = self.db.execute(
            "SELECT MIN(enqueued_at) FROM pending WHERE target = ?", (target,)
        ).fetchone()
        return max(now - row[0], 0.0) if row and row[0] is not None else 0.0

    def counts(self, target: str) -> dict[str, int]:
        """Totals since the outbox was made: queued, delivered, failures, dropped."""
        rows = self.db.execute("SELECT what, n FROM counts WHERE target = ?", (target,))
        return dict.fromkeys(("queued", "delivered", "failures", "dropped"), 0) | dict(rows)

    def _count(self, target: str, what: str) -> None:
        self.db.execute(
            "INSERT INTO counts (target, what, n) VALUES (?, ?, 1) "
            "ON CONFLICT (target, what) DO UPDATE SET n = n + 1",
            (target, what),
        )


class _Write:
    """One write transaction, taken at once (``BEGIN IMMEDIATE``: writers queue on the
    busy timeout instead of failing midway)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
