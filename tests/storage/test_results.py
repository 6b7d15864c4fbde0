"""results.db's own behaviour (WAL, page size, a full disk, a file that is no database); what
both results stores do is tests/storage/test_store_conformance.py's."""

from __future__ import annotations

import sqlite3

import pytest

from rampart_otel.errors import StoreError
from rampart_otel.storage.results import ResultRow, ResultsStore, span_set


def row(run_id: str, revision: int, status: str = "safe") -> ResultRow:
    return ResultRow(run_id, revision, "p", "c1", status, "svc", 1, 2.0, {"run_id": run_id})


def test_results_db_is_written_ahead(tmp_path):
    """What both stores do is tests/storage/test_store_conformance.py's; this is SQLite's own."""
    store = ResultsStore(tmp_path / "results.db")
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


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
