"""Schema 3: a run revision's result documents stored once, what they share (the run's
coverage) written once, read back as the same documents, key order included; a real v2
``results.db`` (written by the collector and ``rescore`` before v3) migrated without loss,
on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rampart_otel.storage import pg_schema
from rampart_otel.storage import queries as q
from rampart_otel.storage.documents import PACKED, pack, unpack
from rampart_otel.storage.pg_results import PgResultsStore
from rampart_otel.storage.results import ResultRow, ResultsStore, open_reader, span_set

V2_FILE = Path(__file__).parent / "data" / "results-v2.db"
COVERAGE = {
    "tool_calls": {"status": "observed", "reasons": ["x" * 300]},
    "http_request": {"status": "unknown", "reasons": ["no HTTP instrumentation"] * 5},
}


def entry(check: str, status: str, coverage: dict[str, Any] = COVERAGE) -> dict[str, Any]:
    return {
        "run_id": "r1",
        "check": check,
        "status": status,
        "summary": f"{check} {status}",
        "coverage": coverage,
        "service": "svc",
        "policy": {"name": "p", "version": 1},
    }


def test_pack_writes_shared_values_once_and_unpack_gives_the_same_documents_in_key_order():
    documents = {
        "c1": entry("c1", "safe"),
        "c2": entry("c2", "unsafe"),
        "c3": entry("c3", "error", coverage={}),  # a result without the run's coverage
        "c4": {"status": "safe", "check": "c4", "extra": [1, None]},  # other keys, order
    }
    blob = pack(documents)
    back = unpack(blob)
    assert back == documents
    assert [list(doc) for doc in back.values()] == [list(doc) for doc in documents.values()]
    two = pack({"c1": entry("c1", "safe"), "c2": entry("c2", "unsafe")})
    one = pack({"c1": entry("c1", "safe")})
    assert len(two) < 1.2 * len(one)  # the coverage is not stored twice


def v2_documents(path: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT run_id, revision, policy, policy_version, check_id, result FROM results"
    ).fetchall()
    db.close()
    return {tuple(r[:5]): json.loads(r[5]) for r in rows}


def test_a_real_v2_results_db_is_migrated_to_one_document_per_run_revision(tmp_path):
    path = tmp_path / "results.db"
    shutil.copy(V2_FILE, path)
    before = v2_documents(path)
    assert len(before) == 36 and all(doc["coverage"] for doc in before.values())
    reader = open_reader(path)  # migrates in place, then reads
    assert reader.schema_version() == 3
    after = {
        (r.run_id, r.revision, r.policy, q_version(r), r.check_id): r.result
        for r in reader.results()
    }
    assert after == before
    for key, doc in after.items():
        assert list(doc) == list(before[key])  # same key order: the same JSON when written
    assert reader.db.execute("SELECT DISTINCT result FROM results").fetchall() == [(PACKED,)]
    # 3 runs under 2 policy versions: 6 stored values, each run's coverage in each once
    assert reader.db.execute("SELECT count(*) FROM result_documents").fetchone() == (6,)
    listed = audit_documents(reader.db)
    assert listed == {k: v for k, v in before.items() if k[3] == "2"}
    reader.close()


def q_version(row: ResultRow) -> str:
    return "" if row.policy_version is None else str(row.policy_version)


def audit_documents(db: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
    """What ``audit`` lists (and ``current_result`` finds) under policy version 2."""
    (versions,) = q.policy_versions(db).values()
    version = q.latest(versions)
    listed = {}
    for r in q.listing(db, version, q.Filters(), None):
        listed[(r.run_id, r.revision, r.policy, r.policy_version, r.check_id)] = r.result
        found = q.current_result(db, version, r.run_id, r.check_id)
        assert found is not None and found.result == r.result
    return listed


@pytest.mark.parametrize(
    "kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)]
)  # PostgreSQL is a server: its fixture is asked for by name, which markers.py cannot see
def test_new_verdicts_are_stored_once_per_run_revision_and_a_partial_rewrite_keeps_the_rest(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    store: ResultsStore | PgResultsStore
    if kind == "sqlite":
        store = ResultsStore(tmp_path / "results.db")
    else:
        store = PgResultsStore(request.getfixturevalue("pg_url"))
    packed, digest = span_set(["00000000000000a1"])
    rows = [
        ResultRow("r1", 0, "p", c, "safe", "svc", 1, 2.0, entry(c, "safe"), 1)
        for c in ("c1", "c2", "c3")
    ]
    with store.transaction() as txn:
        txn.add_run("r1", 0, packed, digest, ["r1"], "svc", 1)
        for row in rows:
            txn.add_result(row)
    assert store.db.execute("SELECT count(*) FROM result_documents").fetchone() == (1,)
    with store.transaction() as txn:  # one check written again, alone
        txn.add_result(
            ResultRow("r1", 0, "p", "c2", "unsafe", "svc", 1, 3.0, entry("c2", "unsafe"), 1)
        )
    stored = {r.check_id: r.result for r in store.results()}
    assert stored == {
        "c1": entry("c1", "safe"),
        "c2": entry("c2", "unsafe"),
        "c3": entry("c3", "safe"),
    }
    with pytest.raises(RuntimeError), store.transaction() as txn:  # rolled back: unchanged
        txn.add_result(
            ResultRow("r1", 0, "p", "c1", "error", "svc", 1, 4.0, entry("c1", "error"), 1)
        )
        raise RuntimeError
    assert {r.check_id: r.result for r in store.results()} == stored
    store.close()


def write_v2_postgres(url: str, documents_of: Path) -> None:
    """A PostgreSQL store at schema 2 (its own migrations up to 2), holding the v2 file's
    rows as the v2 store wrote them: every result document as its JSON text."""
    import psycopg

    source = sqlite3.connect(f"file:{documents_of}?mode=ro", uri=True)
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "CREATE TABLE schema_version ("
            " version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        for step in (1, 2):
            for statement in pg_schema.MIGRATIONS[step]:
                assert isinstance(statement, str)
                db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (%s)", (step,))
        for table, width in (("results", 12), ("runs", 9), ("policy_checks", 7)):
            rows = source.execute(f"SELECT * FROM {table}").fetchall()
            marks = ", ".join(["%s"] * width)
            with db.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {table} VALUES ({marks})",
                    [
                        tuple(
                            bool(v) if table == "results" and i == 11 else v
                            for i, v in enumerate(r)
                        )
                        for r in rows
                    ],
                )
    source.close()


def test_a_v2_postgresql_store_is_migrated_to_one_document_per_run_revision(pg_url: str):
    before = v2_documents(V2_FILE)
    write_v2_postgres(pg_url, V2_FILE)
    reader = PgResultsStore(pg_url, readonly=True)  # migrates first, as open_reader does
    assert reader.schema_version() == 3
    after = {
        (r.run_id, r.revision, r.policy, q_version(r), r.check_id): r.result
        for r in reader.results()
    }
    assert after == before
    assert all(list(doc) == list(before[key]) for key, doc in after.items())
    assert reader.db.execute("SELECT DISTINCT result FROM results").fetchall() == [(PACKED,)]
    assert reader.db.execute("SELECT count(*) FROM result_documents").fetchone() == (6,)
    assert audit_documents(reader.db) == {k: v for k, v in before.items() if k[3] == "2"}
    reader.close()
    PgResultsStore(pg_url).close()  # nothing applied twice


def test_a_document_is_compressed_with_the_shipped_dictionary_and_older_ones_still_read():
    """Deflate's preset dictionary: the zlib header names it (FDICT, Adler-32). A shipped
    dictionary never changes (documents written with it name it); a document written
    before there was one reads as before; one naming a dictionary this version lacks is
    an error, never a wrong document."""
    import zlib

    from rampart_otel.storage import documents

    assert documents.SHIPPED_DICTIONARIES == (1, 2)
    # document-dictionary-1.bin, -2.bin
    assert list(documents.dictionaries()) == [0x9D4C32DF, 0x9549045C]
    entries = {
        "c1": {"run_id": "r", "check": "c1", "coverage": {"input": {"state": "observed"}}},
        "c2": {"run_id": "r", "check": "c2", "coverage": {"input": {"state": "observed"}}},
    }
    blob = documents.pack(entries)
    assert blob[1] & 0x20 and int.from_bytes(blob[2:6], "big") == 0x9549045C
    assert documents.unpack(blob) == entries
    # As dictionary 1's versions wrote it: json.dumps's text, level 6.
    first = zlib.compressobj(6, zdict=documents.dictionaries()[0x9D4C32DF])
    text = json.dumps(json.loads(documents.packed_text(entries))).encode()
    older = first.compress(text) + first.flush()
    assert documents.unpack(older) == entries
    plain = zlib.compress(documents.packed_text(entries))  # schema 3 before it
    assert documents.unpack(plain) == entries
    foreign = zlib.compressobj(zdict=b"another dictionary")
    unknown = foreign.compress(documents.packed_text(entries)) + foreign.flush()
    with pytest.raises(zlib.error, match="dictionary this version does not have"):
        documents.unpack(unknown)


def test_documents_read_back_the_same_whichever_encoder_wrote_them():
    """orjson writes plain documents (compact, UTF-8); what it would write its own way (an
    int past 64 bits, a datetime) is written as the store always wrote
    it, by json.dumps with ``default=str``: either way the document read is json's."""
    import datetime

    plain = {"c1": {"summary": 'caf\u00e9 \u2026 "quoted"', "n": 2**63 - 1, "x": [1.5, None, True]}}
    assert unpack(pack(plain)) == plain
    odd = {"c1": {"big": 2**70, "when": datetime.datetime(2024, 1, 2, 3, 4, 5)}}
    assert unpack(pack(odd)) == json.loads(json.dumps(odd, default=str))
