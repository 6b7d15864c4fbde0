"""The results-store protocol (``storage.protocol.VerdictStore``), one suite for both stores:
each test runs against ``results.db`` (SQLite) and a real PostgreSQL server (tests/postgres.py),
so what the scorer, the results sink, ``audit`` and ``rescore`` rely on holds whichever store
they are given. What only one store has (WAL, per-instance checkpoints, over-long keys, the
advisory lock) stays in test_results.py and test_pg_results.py."""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rampart_otel.storage import protocol, queries
from rampart_otel.storage.audit_queries import PolicyVersion
from rampart_otel.storage.pg_results import PgResultsStore
from rampart_otel.storage.pg_results import _PgTransaction as PgTransaction
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultsStore, span_set
from rampart_otel.storage.results import _Transaction as SqliteTransaction
from rampart_otel.storage.store import open_results_store

from .history import A1, A2, row, write_history


@dataclass
class Kind:
    """One store under test: how to open it, and the errors its driver raises."""

    open: Callable[[bool], VerdictStore]  # readonly -> a store
    duplicate_error: type[BaseException]  # a span set stored twice for one run
    readonly_error: type[BaseException]  # a write through a reader


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def kind(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Kind]:
    opened: list[VerdictStore] = []
    if request.param == "sqlite":
        target: Path | str = tmp_path
        duplicate: type[BaseException] = sqlite3.IntegrityError
        readonly: type[BaseException] = sqlite3.OperationalError
    else:
        import psycopg

        target = request.getfixturevalue("pg_url")
        duplicate, readonly = psycopg.errors.UniqueViolation, psycopg.errors.ReadOnlySqlTransaction

    def open_store(read_only: bool) -> VerdictStore:
        store = open_results_store(target, readonly=read_only)
        opened.append(store)
        return store

    yield Kind(open_store, duplicate, readonly)
    for store in opened:
        store.close()


def test_runs_results_and_checkpoint_commit_together(kind: Kind) -> None:
    store = kind.open(False)
    packed, digest = span_set([A1.hex(), A2.hex()])
    with store.transaction() as txn:
        txn.add_run("t1", 0, packed, digest, ["t1"], "svc", 1)
        txn.add_result(row("t1", 0))
        txn.set_checkpoint(3, 120)
    assert store.checkpoint() == (3, 120)
    assert store.scored_span_ids("t1") == (0, {A1, A2})
    assert store.scored_span_ids("other") == (-1, set())
    assert [(r.run_id, r.status, r.result["run_id"]) for r in store.results()] == [
        ("t1", "safe", "t1")
    ]
    assert store.status_counts() == {"safe": 1}


def test_a_failed_transaction_leaves_nothing(kind: Kind) -> None:
    store = kind.open(False)
    packed, digest = span_set([A1.hex()])
    with pytest.raises(RuntimeError), store.transaction() as txn:
        txn.add_run("t1", 0, packed, digest, ["t1"], None, None)
        txn.add_result(row("t1", 0))
        txn.add_quarantine(1, 4, 1, "bad record")
        txn.set_checkpoint(1, 10)
        raise RuntimeError("crash between scoring and commit")
    assert store.checkpoint() is None
    assert store.scored_span_ids("t1") == (-1, set())
    assert list(store.results()) == []
    assert queries.quarantined(store.db) == []
    # the check registered in the failed transaction is registered again next time
    with store.transaction() as txn:
        txn.add_result(row("t1", 0))
    assert [v.checks.keys() for v in queries.policy_versions(store.db)["p"]] == [{"c1"}]


def test_a_span_set_is_stored_once_per_run(kind: Kind) -> None:
    store = kind.open(False)
    packed, digest = span_set([A1.hex()])
    with store.transaction() as txn:
        txn.add_run("t1", 0, packed, digest, ["t1"], None, None)
    with pytest.raises(kind.duplicate_error), store.transaction() as txn:
        txn.add_run("t1", 1, packed, digest, ["t1"], None, None)
    assert store.scored_span_ids("t1") == (0, {A1})


def current(store: VerdictStore, version: str, run_id: str, check: str) -> tuple[int, str] | None:
    found = queries.current_result(store.db, PolicyVersion("p", version, None, 0.0), run_id, check)
    return None if found is None else (found.revision, found.status)


def test_the_latest_revision_is_current_and_a_replayed_one_replaces(kind: Kind) -> None:
    store = kind.open(False)
    write_history(store)
    assert current(store, "1", "t1", "c1") == (1, "undetermined")
    assert current(store, "1", "t2", "c1") == (0, "error")
    assert current(store, "", "t3", "c3") == (2, "safe")  # a late lower revision is not current
    assert current(store, "2", "t1", "c1") == (0, "safe")  # another version: its own current
    assert store.checkpoint() == (2, 7)
    assert store.scored_span_ids("t1") == (1, {A1, A2})
    assert store.status_counts() == {"error": 1, "safe": 4, "unsafe": 2, "undetermined": 1}
    assert [(r.run_id, r.revision, r.check_id, r.status) for r in store.results()] == [
        ("t1", 0, "c1", "safe"),
        ("t1", 0, "c2", "unsafe"),
        ("t2", 0, "c1", "error"),
        ("t1", 1, "c1", "undetermined"),
        ("t1", 0, "c3", "safe"),
        ("t1", 0, "c1", "safe"),
        ("t3", 2, "c3", "safe"),
        ("t3", 1, "c3", "unsafe"),
    ]
    assert [r.result["status"] for r in store.results(limit=2)] == ["safe", "unsafe"]


def test_checks_are_registered_once_and_a_late_harm_category_fills_in(kind: Kind) -> None:
    store = kind.open(False)
    write_history(store)
    versions = queries.policy_versions(store.db)["p"]
    assert [(v.version, v.value) for v in versions] == [("", None), ("1", 1), ("2", 2)]
    one = next(v for v in versions if v.version == "1")
    assert sorted(one.checks) == ["c1", "c2", "c3"]
    assert one.checks["c3"].harm_category == "privacy"
    assert one.checks["c1"].polarity == "must_not"
    assert queries.quarantined(store.db) == [(1, 40, 3, "bad record")]


def test_the_checkpoint_is_the_least_of_the_shards_and_clearing_them_keeps_it(
    kind: Kind,
) -> None:
    store = kind.open(False)
    with store.transaction() as txn:
        txn.set_shard_checkpoint(0, 2, 5, 50)
    assert store.checkpoint() is None  # shard 1 has not started: it starts at the start
    with store.transaction() as txn:
        txn.set_shard_checkpoint(1, 2, 3, 10)
    assert store.checkpoint() == (3, 10)
    with store.transaction() as txn:
        txn.set_shard_checkpoint(1, 2, 6, 0)
    assert store.checkpoint() == (5, 50)
    with store.transaction() as txn:
        txn.set_shard_checkpoint(0, 3, 9, 9)  # a 3-shard start: shards 1, 2 not started
    assert store.checkpoint() == (5, 50)
    store.clear_shard_checkpoints()
    assert store.checkpoint() == (5, 50)
    with store.transaction() as txn:
        txn.set_shard_checkpoint(0, 2, 7, 0)  # the 2-shard points before are gone
    assert store.checkpoint() == (5, 50)


def test_a_reader_reads_what_was_written_and_cannot_write(kind: Kind) -> None:
    write_history(kind.open(False))
    reader = kind.open(True)
    assert reader.checkpoint() == (2, 7)
    assert reader.status_counts()["undetermined"] == 1
    assert reader.scored_span_ids("t1") == (1, {A1, A2})
    with pytest.raises(kind.readonly_error), reader.transaction() as txn:
        txn.set_checkpoint(1, 0)
    assert reader.checkpoint() == (2, 7)


# -- the protocol itself (no store opened) -----------------------------------------------------


def _members(cls: type) -> dict[str, inspect.Signature | None]:
    """Public methods and properties of ``cls``: a method's signature, None for a property."""
    found: dict[str, inspect.Signature | None] = {}
    for name, value in inspect.getmembers(cls):
        if name.startswith("_") and name not in ("__enter__", "__exit__"):
            continue
        if isinstance(value, property):
            found[name] = None
        elif inspect.isfunction(value):
            found[name] = inspect.signature(value)
    return found


@pytest.mark.parametrize(
    ("interface", "implementations"),
    [
        (protocol.VerdictStore, (ResultsStore, PgResultsStore)),
        (protocol.VerdictTransaction, (SqliteTransaction, PgTransaction)),
    ],
    ids=["store", "transaction"],
)
def test_both_stores_take_the_protocols_arguments(
    interface: type, implementations: tuple[type, type]
) -> None:
    """Every method of the protocol has the protocol's parameters in both stores (names,
    kinds, defaults): ``set_checkpoint`` had grown an ``instance`` in one of them. (mypy
    checks the types: ``open_results_store`` returns either as a ``VerdictStore``.)"""
    wanted = _members(interface)
    for cls in implementations:
        members = _members(cls)
        for name, signature in wanted.items():
            if signature is None:  # a property: an attribute of each store
                continue
            got = members.get(name)
            assert got is not None, f"{cls.__name__} lacks {name}"
            assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == [
                (p.name, p.kind, p.default) for p in signature.parameters.values()
            ], f"{cls.__name__}.{name}{got} differs from the protocol's {name}{signature}"
