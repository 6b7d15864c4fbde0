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

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

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
from rampart_otel.storage.results import (
    ResultRow,
    shard_checkpoint,
    status_counts,
    stored_results,
    unpack_span_ids,
    version_text,
)

if TYPE_CHECKING:
    import psycopg

URL_SCHEMES = ("postgresql://", "postgres://")
DEFAULT_INSTANCE = "default"
CONNECT_TIMEOUT = 10  # seconds: a server that is down fails the start, it does not hang it


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


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


class PgResultsStore:
    """``ResultsStore`` on PostgreSQL; ``instance`` names this collector's resume point."""

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

    def close(self) -> None:
        self.db.close()

    # -- scorer side -------------------------------------------------------------------

    def checkpoint(self) -> tuple[int, int] | None:
        row = self.db.execute(
            "SELECT segment, byte_offset FROM checkpoint WHERE instance = %s", (self.instance,)
        ).fetchone()
        return (row[0], row[1]) if row else None

    def clear_shard_checkpoints(self) -> None:
        """Forget this instance's shards' resume points (``ResultsStore``'s, said there)."""
        prefix = shard_instance(self.instance, "", "").removesuffix("/]")
        self.db.execute(
            "DELETE FROM checkpoint WHERE left(instance, length(%s)) = %s", (prefix, prefix)
        )

    def scored_span_ids(self, run_id: str) -> tuple[int, set[bytes]]:
        """The run's last revision (-1 if never scored) and every span id scored so far."""
        latest = -1
        seen: set[bytes] = set()
        for revision, packed in self.db.execute(
            "SELECT revision, span_ids FROM runs WHERE run_id = %s", (stored_key(run_id),)
        ):
            latest = max(latest, revision)
            seen |= unpack_span_ids(bytes(packed))
        return latest, seen

    def transaction(self) -> _PgTransaction:
        return _PgTransaction(self.db, self.instance, self._registered)

    # -- audit side --------------------------------------------------------------------

    def results(self, limit: int | None = None) -> Iterator[ResultRow]:
        return stored_results(self.db, limit)

    def status_counts(self) -> dict[str, int]:
        return status_counts(self.db)


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


class _PgTransaction:
    """One write transaction: runs and results of a scoring round, plus the checkpoint."""

    def __init__(
        self,
        db: psycopg.Connection[Any],
        instance: str,
        registered: set[tuple[str, str, str]],
    ) -> None:
        self.db = db
        self.instance = instance
        self.registered = registered
        self.registering: set[tuple[str, str, str]] = set()
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
        if kind is None:  # known stored only once committed
            self.registered |= self.registering

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
            "INSERT INTO runs VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                stored_key(run_id),
                revision,
                digest,
                packed_span_ids,
                len(packed_span_ids) // 8,
                json.dumps(trace_ids),
                stored_key(service),
                started_at_ns,
                time.time(),
            ),
        )

    def add_result(self, row: ResultRow) -> None:
        """Store a verdict; it supersedes earlier revisions of its (run, policy, version, check).

        Verdicts are written together when the transaction ends (``_write_results``): one
        statement for a whole round instead of one or two per verdict. Nothing in a
        transaction reads ``results`` back, so holding them until then changes no answer.
        """
        version = version_text(row.policy_version)
        run_at = row.run_at
        if run_at is None:
            run_at = row.started_at_ns / 1e9 if row.started_at_ns is not None else row.scored_at
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
                run_at,
            )
        )
        key = (stored_key(row.run_id), row.revision, row.policy, version)
        self.documents.setdefault(key, {})[row.check_id] = row.result
        check = (row.policy, version, row.check_id)
        if check in self.registered or check in self.registering:
            return
        self.registering.add(check)
        self.db.execute(
            "INSERT INTO policy_checks VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (policy, policy_version, check_id) DO UPDATE"
            " SET harm_category = excluded.harm_category"
            " WHERE policy_checks.harm_category IS NULL AND excluded.harm_category IS NOT NULL",
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

    def set_checkpoint(self, segment: int, offset: int, instance: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO checkpoint VALUES (%s, %s, %s) ON CONFLICT (instance) DO UPDATE"
            " SET segment = excluded.segment, byte_offset = excluded.byte_offset",
            (instance or self.instance, segment, offset),
        )

    def set_shard_checkpoint(self, shard: int, shards: int, segment: int, offset: int) -> None:
        """One scorer shard's resume point (its own row, ``INSTANCE [shard I/N]``), and the
        instance's checkpoint moved to the least of them (``shard_checkpoint``). Writers
        take turns (the advisory lock), so the shards' rows read here are current."""
        self.set_checkpoint(segment, offset, instance=shard_instance(self.instance, shard, shards))
        prefix = shard_instance(self.instance, "", "").removesuffix("/]")
        rows = self.db.execute(
            "SELECT segment, byte_offset FROM checkpoint"
            " WHERE left(instance, length(%s)) = %s AND right(instance, length(%s)) = %s",
            (prefix, prefix, f"/{shards}]", f"/{shards}]"),
        ).fetchall()
        saved = self.db.execute(
            "SELECT segment, byte_offset FROM checkpoint WHERE instance = %s", (self.instance,)
        ).fetchone()
        positions = [(int(segment), int(offset)) for segment, offset in rows]
        least = shard_checkpoint(
            positions, shards, (int(saved[0]), int(saved[1])) if saved else None
        )
        if least is not None:
            self.set_checkpoint(*least)
