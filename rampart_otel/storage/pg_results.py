"""Verdicts in a PostgreSQL database several collectors share: ``ResultsStore``'s semantics.

The same rows as ``results.db`` (``results``): one per (run, revision, policy, version,
check), ``current`` on the latest revision, each scored run revision's span set stored so a
run is never scored twice with the same spans, ``policy_checks`` for the versions to choose
from. Write transactions hold one advisory lock, so writers are serialized as SQLite's
``BEGIN IMMEDIATE`` serializes them: a scorer's "already scored?" read and its writes see
no other writer in between, whichever collector that writer is.

The checkpoint and the quarantine are per collector instance (``instance``): each collector
reads its own segments, so each resumes from its own point.

psycopg is imported here only: a store given a ``postgresql://`` URL needs the
``postgres`` extra, nothing else does.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

from rampart_otel.errors import SchemaError, StoreError
from rampart_otel.render import without_password
from rampart_otel.storage import pg_schema
from rampart_otel.storage.documents import PACKED, merged
from rampart_otel.storage.pg_schema import (
    LOCK_KEY,
    newer_message,
    prepare,
    stored_key,
    stored_version,
)
from rampart_otel.storage.sql_store import (
    Dialect,
    Position,
    ResultRow,
    SqlStore,
    SqlTransaction,
    version_text,
)

if TYPE_CHECKING:
    import psycopg

URL_SCHEMES = ("postgresql://", "postgres://")
DEFAULT_INSTANCE = "default"
CONNECT_TIMEOUT = 10  # seconds: a server that is down fails the start, it does not hang it


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


# Over-long key columns are kept as a digest (``stored_key``): every lookup goes through it.
POSTGRES = Dialect("%s", stored_key)


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return without_password(url)


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection; StoreError (one line) when the driver, URL or server fails."""
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            f"{redacted(url)}: PostgreSQL results need psycopg"
            " (pip install 'rampart-otel[postgres]')"
        ) from None
    try:
        db = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as error:
        detail = _one_line(error).replace(url, redacted(url))  # libpq may quote the URL
        raise StoreError(f"{redacted(url)}: cannot connect: {detail}") from None
    _store_nul_as_replacement(db)
    return db


NUL_REPLACEMENT = "\ufffd"


def _store_nul_as_replacement(db: psycopg.Connection[Any]) -> None:
    """PostgreSQL text cannot hold NUL, and OTLP strings can (a service name, a session id):
    one such value would fail its whole round, again at every restart. Every string this
    connection sends has NUL as U+FFFD, lookups included, so they still find what was
    stored. (A result document is JSON, where NUL is already written as \\u0000.)"""
    from psycopg.types.string import StrBinaryDumper, StrDumperUnknown

    class NulFreeBinary(StrBinaryDumper):
        def dump(self, obj: str) -> Any:
            return super().dump(obj.replace("\x00", NUL_REPLACEMENT) if "\x00" in obj else obj)

    class NulFreeText(StrDumperUnknown):
        def dump(self, obj: str) -> Any:
            return super().dump(obj.replace("\x00", NUL_REPLACEMENT) if "\x00" in obj else obj)

    # The last registered is the default for its format: text stays psycopg's default.
    db.adapters.register_dumper(str, NulFreeBinary)
    db.adapters.register_dumper(str, NulFreeText)


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return "; ".join(lines[:2]) or type(error).__name__


def shard_instance(instance: str, shard: int | str, shards: int | str) -> str:
    """The checkpoint row of one scorer shard of ``instance``."""
    return f"{instance} [shard {shard}/{shards}]"


def checkpoint_segment(url: str, instance: str) -> int | None:
    """The segment ``instance``'s scorer resumes from; None when it has none yet or the
    store cannot be read now (retention then deletes nothing: it never guesses)."""
    import psycopg

    try:
        db = connect(url)
    except StoreError:
        return None
    try:
        row = db.execute(
            "SELECT segment FROM checkpoint WHERE instance = %s", (instance,)
        ).fetchone()
    except psycopg.Error:  # not created yet
        return None
    finally:
        db.close()
    return int(row[0]) if row else None


class PgResultsStore(SqlStore):
    """The results store in PostgreSQL (``protocol.VerdictStore``); ``instance`` names this
    collector's resume point."""

    dialect: ClassVar[Dialect] = POSTGRES

    def __init__(
        self, url: str, *, instance: str = DEFAULT_INSTANCE, readonly: bool = False
    ) -> None:
        self.url = url
        self.label = redacted(url)
        self.instance = instance
        self.db = connect(url)
        try:
            if readonly:
                version = stored_version(self.db)
                current = pg_schema.SCHEMA_VERSION  # read when opened: a test raises it
                if version is not None and version > current:
                    raise SchemaError(newer_message(self.label, version))
                if version != current:
                    prepare(self.db, self.label)  # as open_reader: migrate, then only read
                self.db.execute("SET default_transaction_read_only = on")
            else:
                prepare(self.db, self.label)
        except BaseException:
            self.db.close()
            raise
        self._registered: set[tuple[str, str, str]] = set()  # (policy, version, check) stored

    def schema_version(self) -> int | None:
        return stored_version(self.db)

    def checkpoint(self) -> Position | None:
        return _checkpoint(self.db, self.instance)

    def clear_shard_checkpoints(self) -> None:
        """Forget this instance's shards' resume points (``ResultsStore``'s, said there)."""
        prefix = shard_instance(self.instance, "", "").removesuffix("/]")
        self.db.execute(
            "DELETE FROM checkpoint WHERE left(instance, length(%s)) = %s", (prefix, prefix)
        )

    def transaction(self) -> _PgTransaction:
        return _PgTransaction(self.db, self.instance, self._registered)


def _checkpoint(db: psycopg.Connection[Any], instance: str) -> Position | None:
    row = db.execute(
        "SELECT segment, byte_offset FROM checkpoint WHERE instance = %s", (instance,)
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else None


# The round's verdicts arrive as one array per column. Text is compared as "C", as the
# table's columns are, so the primary key's index serves every lookup.
_INCOMING = (
    'SELECT run_id COLLATE "C" AS run_id, revision, policy COLLATE "C" AS policy,'
    ' check_id COLLATE "C" AS check_id, status, service, started_at_ns, scored_at, result,'
    ' policy_version COLLATE "C" AS policy_version, run_at, round_latest'
    " FROM unnest(%b::text[], %b::int[], %b::text[], %b::text[], %b::text[], %b::text[],"
    " %b::bigint[], %b::float8[], %b::text[], %b::text[], %b::float8[], %b::bool[])"
    " AS u(run_id, revision, policy, check_id, status, service, started_at_ns, scored_at,"
    " result, policy_version, run_at, round_latest)"
)
# Stored verdicts older than a revision the round brings stop being current. "current IS
# TRUE", not "current": the partial audit indexes (WHERE current) cannot serve it, so its
# generic plan, kept for the connection's life, reads the primary key whatever the
# statistics say (through an audit index, each call read the whole policy version).
_SUPERSEDE = (
    "UPDATE results SET current = false WHERE run_id = %s AND policy = %s"
    " AND policy_version = %s AND check_id = %s AND revision < %s AND current IS TRUE"
)
# A verdict is current when it is the round's latest revision of it and the store has no
# later one. The round holds one row per primary key (``_write_results``).
_INSERT_RESULTS = (
    "INSERT INTO results (run_id, revision, policy, check_id, status, service,"
    " started_at_ns, scored_at, result, policy_version, run_at, current)"
    " SELECT i.run_id, i.revision, i.policy, i.check_id, i.status, i.service,"
    " i.started_at_ns, i.scored_at, i.result, i.policy_version, i.run_at,"
    " i.round_latest AND NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = i.run_id"
    " AND r.policy = i.policy AND r.policy_version = i.policy_version"
    " AND r.check_id = i.check_id AND r.revision > i.revision)"
    f" FROM ({_INCOMING}) i"
    " ON CONFLICT (run_id, policy, policy_version, check_id, revision) DO UPDATE SET"
    " status = excluded.status, service = excluded.service,"
    " started_at_ns = excluded.started_at_ns, scored_at = excluded.scored_at,"
    " result = excluded.result, run_at = excluded.run_at, current = excluded.current"
)


_DOCUMENT_KEYS = (
    " unnest(%b::text[], %b::int[], %b::text[], %b::text[]) AS k(run_id, revision, policy,"
    " policy_version)"
)
_STORED_DOCUMENTS = (
    "SELECT d.run_id, d.revision, d.policy, d.policy_version, d.document"
    f' FROM {_DOCUMENT_KEYS} JOIN result_documents d ON d.run_id = k.run_id COLLATE "C"'
    ' AND d.revision = k.revision AND d.policy = k.policy COLLATE "C"'
    ' AND d.policy_version = k.policy_version COLLATE "C"'
)
_WRITE_DOCUMENTS = (
    "INSERT INTO result_documents SELECT * FROM"
    " unnest(%b::text[], %b::int[], %b::text[], %b::text[], %b::bytea[])"
    " ON CONFLICT (run_id, revision, policy, policy_version)"
    " DO UPDATE SET document = excluded.document"
)


class _PgTransaction(SqlTransaction):
    """One write transaction: runs and results of a scoring round, plus the checkpoint."""

    dialect: ClassVar[Dialect] = POSTGRES

    def __init__(
        self,
        db: psycopg.Connection[Any],
        instance: str,
        registered: set[tuple[str, str, str]],
    ) -> None:
        super().__init__(registered)
        self.db = db
        self.instance = instance
        self.results: list[tuple[Any, ...]] = []  # add_result's rows, written at the end
        # (run, revision, policy, version) -> check -> document: written at the end, together
        self.documents: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
        self._pipeline: Any = None
        self._transaction: Any = None

    def __enter__(self) -> _PgTransaction:
        # Pipeline mode: a round's writes go out without waiting for each answer; a read in
        # the round (the scorer's re-check of a run) waits only for what was sent before it.
        self._pipeline = self.db.pipeline()
        self._pipeline.__enter__()
        try:
            self._transaction = self.db.transaction()
            self._transaction.__enter__()
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        except BaseException as error:
            self._pipeline.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        try:
            if kind is None:
                try:
                    self._write_results()
                except BaseException as failure:  # rolled back below, then raised
                    kind, error, trace = type(failure), failure, failure.__traceback__
                    raise
        finally:
            try:
                self._transaction.__exit__(kind, error, trace)
            finally:
                self._pipeline.__exit__(kind, error, trace)
        if kind is None:
            self.committed()

    def add_result(self, row: ResultRow) -> None:
        """Store a verdict; it supersedes earlier revisions of its (run, policy, version, check).

        Verdicts are written together when the transaction ends (``_write_results``): one
        statement for a whole round instead of one or two per verdict. Nothing in a
        transaction reads ``results`` back, so holding them until then changes no answer.
        """
        version = version_text(row.policy_version)
        self.results.append(
            (
                stored_key(row.run_id),
                row.revision,
                row.policy,
                row.check_id,
                row.status,
                stored_key(row.service),
                row.started_at_ns,
                row.scored_at,
                PACKED,
                version,
                row.audit_time(),
            )
        )
        key = (stored_key(row.run_id), row.revision, row.policy, version)
        self.documents.setdefault(key, {})[row.check_id] = row.result
        self.register_check(row)

    def _write_results(self) -> None:
        """The round's verdicts as ``add_result`` one at a time would leave them: earlier
        revisions superseded, the latest revision current, a verdict stored again replacing
        the stored one (the last of a round's repeats wins)."""
        rows: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # one per primary key: the last
        latest: dict[tuple[Any, ...], int] = {}  # the round's latest revision per verdict
        for row in self.results:
            run_id, revision, policy, check_id, version = row[0], row[1], row[2], row[3], row[9]
            rows[(run_id, policy, version, check_id, revision)] = row
            if revision > latest.get((run_id, policy, version, check_id), -1):
                latest[(run_id, policy, version, check_id)] = revision
        self.results = []
        if not rows:
            return
        # A later revision is rare: one statement each, on the primary key.
        superseding = [(*key, revision) for key, revision in latest.items() if revision > 0]
        if superseding:
            self.db.cursor().executemany(_SUPERSEDE, superseding)
        # psycopg sends a list as an array (a tuple would be a record); %b sends it in
        # binary form, where no character of a result document needs escaping.
        columns = [list(column) for column in zip(*rows.values(), strict=True)]
        columns[7] = [float(v) for v in columns[7]]  # scored_at, run_at: float8[] throughout
        columns[10] = [float(v) for v in columns[10]]
        columns.append([key[4] == latest[key[:4]] for key in rows])  # round_latest
        self.db.execute(_INSERT_RESULTS, columns)
        self._write_documents()

    def _write_documents(self) -> None:
        """Each run revision's documents in one value, with any stored ones not replaced:
        one statement reads those stored (none, for a new revision), one writes."""
        documents, self.documents = self.documents, {}
        keys = [list(column) for column in zip(*documents, strict=True)]
        stored = {
            (run_id, revision, policy, version): bytes(blob)
            for run_id, revision, policy, version, blob in self.db.execute(_STORED_DOCUMENTS, keys)
        }
        blobs = [merged(stored.get(key), docs) for key, docs in documents.items()]
        self.db.execute(_WRITE_DOCUMENTS, [*keys, blobs])

    def add_quarantine(self, segment: int, offset: int, spans: int, message: str) -> None:
        """A stored record the scorer could not read whole; replays record it once."""
        self.db.execute(
            "INSERT INTO quarantine VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (self.instance, segment, offset, spans, message, time.time()),
        )

    def set_checkpoint(self, segment: int, offset: int) -> None:
        self._save_position(self.instance, (segment, offset))

    def _save_position(self, instance: str, position: Position) -> None:
        self.db.execute(
            "INSERT INTO checkpoint VALUES (%s, %s, %s) ON CONFLICT (instance) DO UPDATE"
            " SET segment = excluded.segment, byte_offset = excluded.byte_offset",
            (instance, *position),
        )

    # A shard's resume point is its own row, ``INSTANCE [shard I/N]``.
    def _save_shard_position(self, shard: int, shards: int, position: Position) -> None:
        self._save_position(shard_instance(self.instance, shard, shards), position)

    def _shard_positions(self, shards: int) -> list[Position]:
        prefix = shard_instance(self.instance, "", "").removesuffix("/]")
        rows = self.db.execute(
            "SELECT segment, byte_offset FROM checkpoint"
            " WHERE left(instance, length(%s)) = %s AND right(instance, length(%s)) = %s",
            (prefix, prefix, f"/{shards}]", f"/{shards}]"),
        )
        return [(int(segment), int(offset)) for segment, offset in rows]

    def _saved_checkpoint(self) -> Position | None:
        return _checkpoint(self.db, self.instance)
