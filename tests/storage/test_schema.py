"""results.db schema 2: verdicts keyed by policy version, the current revision flagged, and a
schema-1 file (as the first collector release wrote it) migrated in place without loss."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rampart_otel.storage.results import (
    SCHEMA_VERSION,
    ResultRow,
    ResultsStore,
    SchemaError,
    open_reader,
)

# The schema-1 layout, verbatim from the release that wrote it.
SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT NOT NULL, revision INTEGER NOT NULL, digest TEXT NOT NULL,
    span_ids BLOB NOT NULL, span_count INTEGER NOT NULL, trace_ids TEXT NOT NULL,
    service TEXT, started_at_ns INTEGER, scored_at REAL NOT NULL,
    PRIMARY KEY (run_id, revision)
);
CREATE UNIQUE INDEX IF NOT EXISTS runs_digest ON runs (run_id, digest);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL, revision INTEGER NOT NULL, policy TEXT NOT NULL,
    check_id TEXT NOT NULL, status TEXT NOT NULL, service TEXT, started_at_ns INTEGER,
    scored_at REAL NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (run_id, revision, policy, check_id)
);
CREATE INDEX IF NOT EXISTS results_time ON results (scored_at);
CREATE INDEX IF NOT EXISTS results_service ON results (service, scored_at);
CREATE INDEX IF NOT EXISTS results_check ON results (check_id, scored_at);
CREATE INDEX IF NOT EXISTS results_status ON results (status, scored_at);
CREATE TABLE IF NOT EXISTS checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1), segment INTEGER NOT NULL, offset INTEGER NOT NULL
);
INSERT INTO meta VALUES ('schema_version', '1');
"""


def document(run_id: str, check: str, status: str, version: object) -> str:
    return json.dumps(
        {
            "run_id": run_id,
            "check": check,
            "status": status,
            "polarity": "attack",
            "harm_category": "data_exfiltration" if check == "c1" else None,
            "policy": {"name": "p", "version": version},
        }
    )


def write_schema_1(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    rows = [
        # run a: two revisions (a late span); run b: no start time; run c: no version
        ("a", 0, "p", "c1", "safe", "svc", 5_000_000_000, 10.0, document("a", "c1", "safe", 3)),
        ("a", 1, "p", "c1", "unsafe", "svc", 5_000_000_000, 20.0, document("a", "c1", "unsafe", 3)),
        ("a", 0, "p", "c2", "error", "svc", 5_000_000_000, 10.0, document("a", "c2", "error", 3)),
        ("b", 0, "p", "c1", "undetermined", None, None, 30.0,
         document("b", "c1", "undetermined", 3)),
        ("c", 0, "p", "c1", "safe", "svc", 7_000_000_000, 40.0, document("c", "c1", "safe", None)),
    ]  # fmt: skip
    db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute("INSERT INTO checkpoint VALUES (1, 4, 512)")
    db.commit()
    db.close()


def test_a_schema_1_file_is_migrated_in_place_without_loss(tmp_path):
    path = tmp_path / "results.db"
    write_schema_1(path)
    store = ResultsStore(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.checkpoint() == (4, 512)
    rows = store.db.execute(
        "SELECT run_id, revision, check_id, status, policy_version, run_at, current"
        " FROM results ORDER BY run_id, check_id, revision"
    ).fetchall()
    assert rows == [
        ("a", 0, "c1", "safe", "3", 5.0, 0),
        ("a", 1, "c1", "unsafe", "3", 5.0, 1),
        ("a", 0, "c2", "error", "3", 5.0, 1),
        ("b", 0, "c1", "undetermined", "3", 30.0, 1),
        ("c", 0, "c1", "safe", "", 7.0, 1),
    ]
    checks = store.db.execute(
        "SELECT policy, policy_version, check_id, version_json, polarity, harm_category,"
        " first_scored_at FROM policy_checks ORDER BY policy_version, check_id"
    ).fetchall()
    assert checks == [
        ("p", "", "c1", "null", "attack", "data_exfiltration", 40.0),
        ("p", "3", "c1", "3", "attack", "data_exfiltration", 10.0),
        ("p", "3", "c2", "3", "attack", None, 10.0),
    ]
    indexes = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"results_audit", "results_time"} <= indexes
    assert not {"results_service", "results_check", "results_status"} & indexes
    store.close()
    assert ResultsStore(path).schema_version() == SCHEMA_VERSION  # idempotent


def test_open_reader_migrates_an_old_file_and_refuses_a_newer_one(tmp_path):
    path = tmp_path / "results.db"
    write_schema_1(path)
    reader = open_reader(path)
    assert reader.schema_version() == SCHEMA_VERSION
    assert len(list(reader.results())) == 5
    with pytest.raises(sqlite3.OperationalError):
        reader.db.execute("DELETE FROM results")  # still read-only
    reader.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(SchemaError, match="schema version 99"):
        open_reader(path)
    with pytest.raises(SchemaError):
        ResultsStore(path)


def row(run_id: str, revision: int, version: object, status: str = "safe") -> ResultRow:
    doc = {"run_id": run_id, "polarity": "probe", "harm_category": None}
    return ResultRow(
        run_id, revision, "p", "c1", status, "svc", None, 100.0 + revision, doc, version
    )


def current(store: ResultsStore) -> list[tuple[str, int, str, int]]:
    query = "SELECT run_id, revision, policy_version, current FROM results ORDER BY 1, 3, 2"
    return store.db.execute(query).fetchall()


def test_versions_are_kept_apart_and_only_the_latest_revision_is_current(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    with store.transaction() as txn:
        txn.add_result(row("r", 0, 1))
        txn.add_result(row("r", 0, 2))  # re-scored under version 2: kept beside version 1
    with store.transaction() as txn:
        txn.add_result(row("r", 1, 1))  # a late span: revision 1 under version 1 only
    assert current(store) == [("r", 0, "1", 0), ("r", 1, "1", 1), ("r", 0, "2", 1)]
    with store.transaction() as txn:  # an older revision stored late never becomes current
        txn.add_result(row("s", 1, 2))
        txn.add_result(row("s", 0, 2))
    assert current(store)[-2:] == [("s", 0, "2", 0), ("s", 1, "2", 1)]
    run_at = store.db.execute("SELECT run_at FROM results WHERE run_id = 's' AND revision = 1")
    assert run_at.fetchone() == (101.0,)  # no start time: when it was scored
    versions = store.db.execute("SELECT policy_version, version_json FROM policy_checks")
    assert sorted(versions) == [("1", "1"), ("2", "2")]


@pytest.mark.e2e  # spawns a collector (a function-level import markers.py does not follow)
def test_a_collector_keeps_scoring_into_a_schema_1_results_db(tmp_path):
    from collector.harness import POLICY, make_traces, spawn, wait_for, write_config
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    write_schema_1(data_dir / "results.db")
    db = sqlite3.connect(data_dir / "results.db")
    db.execute("DELETE FROM checkpoint")  # the old checkpoint names segments this dir lacks
    db.commit()
    db.close()
    write_config(tmp_path / "policy.yaml", POLICY)
    settings = write_config(
        tmp_path / "c.yaml", "policies: [policy.yaml]\nassembly:\n  idle_seconds: 0.2\n"
    )
    running = spawn(data_dir, settings)
    try:
        OTLPSpanExporter(endpoint=running.traces_url, timeout=30).export(
            make_traces(2, tool="delete_file")
        )
        wait_for(
            lambda: running.metrics().get("rampart_otel_runs_scored_total", 0) >= 2, 90, "scores"
        )
    finally:
        assert running.terminate() == 0, running.log.read_text()
    store = ResultsStore(data_dir / "results.db", readonly=True)
    assert store.schema_version() == SCHEMA_VERSION
    by_policy = store.db.execute(
        "SELECT policy, policy_version, count(*) FROM results GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()
    assert by_policy == [("p", "", 1), ("p", "3", 4), ("test", "1", 4)]


def test_a_version_is_registered_even_when_its_first_transaction_rolled_back(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    with pytest.raises(RuntimeError), store.transaction() as txn:
        txn.add_result(row("r", 0, 7))
        raise RuntimeError("crash before commit")
    assert store.db.execute("SELECT count(*) FROM policy_checks").fetchone() == (0,)
    with store.transaction() as txn:
        txn.add_result(row("r", 0, 7))
    with store.transaction() as txn:
        txn.add_result(row("s", 0, 7))
    assert store.db.execute("SELECT policy_version FROM policy_checks").fetchall() == [("7",)]
