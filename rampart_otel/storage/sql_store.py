"""What the two results stores do the same way, written once: the rows they keep, and the
SQL where SQLite's and PostgreSQL's dialects agree (``results.ResultsStore`` and
``pg_results.PgResultsStore`` are the subclasses; ``protocol.VerdictStore`` is what callers
see). A statement is written with ``?`` and sent in the store's ``Dialect``; a key column
goes through the dialect's ``key`` (PostgreSQL keeps over-long keys as a digest).

Where the dialects or layouts differ (the checkpoint and quarantine tables, which are per
collector instance in PostgreSQL; how a round's verdicts are written), each store says it
in its own module.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rampart_otel.storage.documents import DocumentReader

Position = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one store's driver takes a statement: its placeholder and its key columns."""

    placeholder: str  # "?" (sqlite3) or "%s" (psycopg)
    key: Callable[[str | None], str | None]  # a run id or service as its key column holds it

    def sql(self, text: str) -> str:
        """``text`` (written with ``?``, which no shared statement uses otherwise)."""
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)


def _as_given(value: str | None) -> str | None:
    return value


SQLITE = Dialect("?", _as_given)


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
    policy_version: int | str | None = None  # None: a policy without a version
    run_at: float | None = None  # audit time; None: started_at_ns, else scored_at

    def audit_time(self) -> float:
        """``run_at`` as stored: given, else the run's start, else when it was scored."""
        if self.run_at is not None:
            return self.run_at
        return self.started_at_ns / 1e9 if self.started_at_ns is not None else self.scored_at


def span_set(span_ids: Iterable[str]) -> tuple[bytes, str]:
    """Sorted span ids packed as bytes, and their digest: what identifies a scored run."""
    packed = b"".join(sorted({bytes.fromhex(span_id) for span_id in span_ids}))
    return packed, hashlib.sha256(packed).hexdigest()


def unpack_span_ids(packed: bytes) -> set[bytes]:
    return {packed[i : i + 8] for i in range(0, len(packed), 8)}


def version_text(version: int | str | None) -> str:
    """A policy version as stored in ``results.policy_version`` ('' for none)."""
    return "" if version is None else str(version)


def shard_checkpoint(rows: list[Position], shards: int, saved: Position | None) -> Position | None:
    """The store's checkpoint once a shard stored its own: the least of the ``shards``
    shards' points. While some shard has stored none yet it may not have started: it will
    resume from the checkpoint ``saved``, so that stays its point and the checkpoint never
    moves past it; with none saved yet (it will start at the oldest segment) there is still
    none (None)."""
    if len(rows) < shards:
        if saved is None:
            return None
        rows = [*rows, saved]
    return min(rows)


_RESULTS = (
    "SELECT run_id, revision, policy, check_id, status, service, started_at_ns,"
    " scored_at, result, policy_version, run_at FROM results"
    " ORDER BY scored_at, run_id, revision, check_id"
)
_SPAN_SETS = "SELECT revision, span_ids FROM runs WHERE run_id = ?"
_ADD_RUN = "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
# A check's polarity and harm category as first scored; a harm category learnt later fills
# one that was missing, never replaces one.
_REGISTER_CHECK = (
    "INSERT INTO policy_checks VALUES (?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (policy, policy_version, check_id) DO UPDATE"
    " SET harm_category = excluded.harm_category"
    " WHERE policy_checks.harm_category IS NULL AND excluded.harm_category IS NOT NULL"
)


class SqlStore(ABC):
    """A results store's reads that are the same SQL in both dialects."""

    dialect: ClassVar[Dialect]
    db: Any  # the driver's connection (each subclass says which)

    @abstractmethod
    def schema_version(self) -> int | None: ...

    def close(self) -> None:
        self.db.close()

    def scored_span_ids(self, run_id: str) -> tuple[int, set[bytes]]:
        """The run's last revision (-1 if never scored) and every span id scored so far."""
        latest = -1
        seen: set[bytes] = set()
        rows = self.db.execute(self.dialect.sql(_SPAN_SETS), (self.dialect.key(run_id),))
        for revision, packed in rows:
            latest = max(latest, revision)
            seen |= unpack_span_ids(bytes(packed))
        return latest, seen

    def results(self, limit: int | None = None) -> Iterator[ResultRow]:
        """Every stored row, all revisions and policy versions, in scoring order."""
        query = _RESULTS if limit is None else f"{_RESULTS} LIMIT {int(limit)}"
        documents = DocumentReader(self.db, self.dialect.placeholder)
        for row in self.db.execute(query):
            run_id, revision, policy, check_id, status, service, started_at_ns, scored_at = row[:8]
            result = documents.document(row[8], run_id, revision, policy, row[9], check_id)
            yield ResultRow(
                run_id, revision, policy, check_id, status, service, started_at_ns, scored_at,
                result, row[9], row[10],
            )  # fmt: skip

    def status_counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT status, count(*) FROM results GROUP BY status"))


class SqlTransaction(ABC):
    """A write transaction's statements that are the same SQL in both dialects, and the
    shard checkpoint rule; each store keeps its resume points in its own layout."""

    dialect: ClassVar[Dialect]
    db: Any

    def __init__(self, registered: set[tuple[str, str, str]]) -> None:
        self.registered = registered  # (policy, version, check) known stored
        self.registering: set[tuple[str, str, str]] = set()

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
        """A scored run revision and its span set (a span set is stored once per run)."""
        key = self.dialect.key
        self.db.execute(
            self.dialect.sql(_ADD_RUN),
            (
                key(run_id),
                revision,
                digest,
                packed_span_ids,
                len(packed_span_ids) // 8,
                json.dumps(trace_ids),
                key(service),
                started_at_ns,
                time.time(),
            ),
        )

    def register_check(self, row: ResultRow) -> None:
        """The row's (policy, version, check) in ``policy_checks``, once per store."""
        version = version_text(row.policy_version)
        check = (row.policy, version, row.check_id)
        if check in self.registered or check in self.registering:
            return
        self.registering.add(check)
        self.db.execute(
            self.dialect.sql(_REGISTER_CHECK),
            (
                row.policy,
                version,
                row.check_id,
                json.dumps(row.policy_version),
                row.result.get("polarity"),
                row.result.get("harm_category"),
                row.scored_at,
            ),
        )

    def committed(self) -> None:
        """Checks registered in this transaction are known stored once it committed."""
        self.registered |= self.registering

    @abstractmethod
    def set_checkpoint(self, segment: int, offset: int) -> None: ...

    @abstractmethod
    def _save_shard_position(self, shard: int, shards: int, position: Position) -> None: ...

    @abstractmethod
    def _shard_positions(self, shards: int) -> list[Position]:
        """The resume points stored by shards of a ``shards``-shard scorer."""

    @abstractmethod
    def _saved_checkpoint(self) -> Position | None: ...

    def set_shard_checkpoint(self, shard: int, shards: int, segment: int, offset: int) -> None:
        """One scorer shard's resume point (``shard`` of ``shards``), and the checkpoint
        moved to the least of them (``shard_checkpoint``). Writers take turns (a write
        transaction is exclusive), so the shards' points read here are current."""
        self._save_shard_position(shard, shards, (segment, offset))
        least = shard_checkpoint(self._shard_positions(shards), shards, self._saved_checkpoint())
        if least is not None:
            self.set_checkpoint(*least)
