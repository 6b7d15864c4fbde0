"""The results-store protocol: what the collector's scorer, the results sink, ``audit``,
``rescore`` and checkpoint recovery ask of a results store, whichever it is.

Two stores implement it: ``results.ResultsStore`` (SQLite, a data directory's
``results.db``) and ``pg_results.PgResultsStore`` (a PostgreSQL database several collectors
share). The SQL where their dialects agree is written once (``sql_store``); one conformance
suite (tests/storage/test_store_conformance.py) runs against both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeAlias

if TYPE_CHECKING:
    import psycopg

    from rampart_otel.storage.sql_store import ResultRow

    Db: TypeAlias = sqlite3.Connection | psycopg.Connection[Any]
else:
    Db: TypeAlias = Any


class VerdictTransaction(Protocol):
    """One write transaction: a scoring round's runs and verdicts, and the resume point
    they bring the scorer to, committed together or not at all."""

    def __enter__(self) -> Self: ...

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None: ...

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

    def add_result(self, row: ResultRow) -> None:
        """A verdict; it supersedes earlier revisions of its (run, policy, version, check)."""

    def add_quarantine(self, segment: int, offset: int, spans: int, message: str) -> None:
        """A stored record the scorer could not read whole; replays record it once."""

    def set_checkpoint(self, segment: int, offset: int) -> None:
        """Where this collector's scorer resumes."""

    def set_shard_checkpoint(self, shard: int, shards: int, segment: int, offset: int) -> None:
        """One scorer shard's resume point; the checkpoint becomes the least of them."""


class VerdictStore(Protocol):
    """A results store: verdicts, scored span sets, the scorer's resume point."""

    @property
    def db(self) -> Db:
        """The connection the read queries (``queries``) take."""

    def schema_version(self) -> int | None: ...

    def close(self) -> None: ...

    def checkpoint(self) -> tuple[int, int] | None:
        """Where this collector's scorer resumes (None before its first round)."""

    def clear_shard_checkpoints(self) -> None:
        """Forget the scorer shards' resume points (the checkpoint, their least, stays)."""

    def scored_span_ids(self, run_id: str) -> tuple[int, set[bytes]]:
        """The run's last revision (-1 if never scored) and every span id scored so far."""

    def transaction(self) -> VerdictTransaction: ...

    def results(self, limit: int | None = None) -> Iterator[ResultRow]:
        """Every stored row, all revisions and policy versions, in scoring order."""

    def status_counts(self) -> dict[str, int]: ...
