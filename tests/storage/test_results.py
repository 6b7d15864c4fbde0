"""results.db: one row per (run, revision, policy, check); span sets; checkpoint."""

from __future__ import annotations

import sqlite3

import pytest

from rampart_otel.errors import StoreError
from rampart_otel.storage.results import ResultRow, ResultsStore, span_set


def row(run_id: str, revision: int, status: str = "safe") -> ResultRow:
    return ResultRow(run_id, revision, "p", "c1", status, "svc", 1, 2.0, {"run_id": run_id})


def test_runs_results_and_checkpoint_commit_together(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    packed, digest = span_set(["00000000000000a1", "00000000000000a2"])
    with store.transaction() as txn:
        txn.add_run("t1", 0, packed, digest, ["t1"], "svc", 1)
        txn.add_result(row("t1", 0))
        txn.set_checkpoint(3, 120)
    assert store.checkpoint() == (3, 120)
    latest, seen = store.scored_span_ids("t1")
    assert latest == 0
    assert seen == {bytes.fromhex("00000000000000a1"), bytes.fromhex("00000000000000a2")}
    assert store.scored_span_ids("other") == (-1, set())
    assert [r.run_id for r in store.results()] == ["t1"]
    assert store.status_counts() == {"safe": 1}
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_failed_transaction_leaves_nothing(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    packed, digest = span_set(["00000000000000a1"])
    with pytest.raises(RuntimeError), store.transaction() as txn:
        txn.add_run("t1", 0, packed, digest, ["t1"], None, None)
        txn.set_checkpoint(1, 10)
        raise RuntimeError("crash between scoring and commit")
    assert store.checkpoint() is None
    assert store.scored_span_ids("t1") == (-1, set())


def test_the_same_span_set_cannot_be_stored_twice_for_a_run(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    packed, digest = span_set(["00000000000000a1"])
    with store.transaction() as txn:
        txn.add_run("t1", 0, packed, digest, ["t1"], None, None)
    with pytest.raises(sqlite3.IntegrityError), store.transaction() as txn:
        txn.add_run("t1", 1, packed, digest, ["t1"], None, None)


def test_readonly_store_reads_what_the_scorer_wrote(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    with store.transaction() as txn:
        txn.add_result(row("t1", 0, "unsafe"))
    reader = ResultsStore(tmp_path / "results.db", readonly=True)
    assert [r.status for r in reader.results()] == ["unsafe"]


def test_a_new_results_db_has_pages_that_fit_several_run_documents(tmp_path):
    """A run's compressed document is ~2 KB: SQLite's default 4 KiB page held one and left
    the rest of the page empty. An existing file keeps the page size it was made with."""
    ResultsStore(tmp_path / "results.db").close()
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA page_size").fetchone()[0] == 16384
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as db:
        db.execute("PRAGMA page_size=4096")
        db.execute("CREATE TABLE t (x)")
    ResultsStore(old).close()
    with sqlite3.connect(old) as db:
        assert db.execute("PRAGMA page_size").fetchone()[0] == 4096


def test_a_transaction_on_a_full_disk_raises_what_sqlite_said(tmp_path):
    # SQLite rolls a transaction back by itself on SQLITE_FULL; a ROLLBACK after it fails
    # with "no transaction is active", which hid the reason (a full disk) from the log.
    store = ResultsStore(tmp_path / "results.db")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count={pages}")  # the file cannot grow: full
    with pytest.raises(sqlite3.OperationalError, match="full"), store.transaction() as txn:
        for index in range(5000):
            packed, digest = span_set([f"{index:016x}"])
            txn.add_run(f"run-{index}", 0, packed, digest, [], None, None)
    assert not store.db.in_transaction


def test_a_results_db_that_is_no_database_is_one_line_naming_it(tmp_path):
    path = tmp_path / "results.db"
    path.write_bytes(b"\x93not sqlite" * 1000)
    with pytest.raises(StoreError) as raised:
        ResultsStore(path)
    assert str(raised.value) == f"{path}: cannot open the results store: file is not a database"
