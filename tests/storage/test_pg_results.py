"""The PostgreSQL results store keeps ``results.db``'s semantics: the same rows, ``current``
on the latest revision, a span set stored once per run, policy_checks; plus what sharing
needs: a checkpoint per collector instance, versioned migrations, one-line errors."""

from __future__ import annotations

import random
import string
import threading
from pathlib import Path

import psycopg
import pytest
from ports import closed_port

from rampart_otel.errors import SchemaError, StoreError
from rampart_otel.storage import pg_queries, pg_schema
from rampart_otel.storage.pg_results import _SUPERSEDE, PgResultsStore, redacted
from rampart_otel.storage.pg_schema import KEY_CHARS, SCHEMA_VERSION, stored_key
from rampart_otel.storage.results import ResultsStore, span_set
from rampart_otel.storage.store import open_results_store

from .history import row, write_history


def dump(db: object, table: str, columns: str) -> list[tuple[object, ...]]:
    rows = db.execute(f"SELECT {columns} FROM {table}").fetchall()  # type: ignore[attr-defined]
    return sorted(
        tuple(bool(v) if k == "current" else v for k, v in zip(columns.split(", "), r, strict=True))
        for r in rows
    )


RESULT_COLUMNS = (
    "run_id, revision, policy, check_id, status, service, started_at_ns, scored_at,"
    " policy_version, run_at, current"
)
CHECK_COLUMNS = "policy, policy_version, check_id, version_json, polarity, harm_category"


def test_the_same_writes_leave_the_same_rows_as_results_db(tmp_path: Path, pg_url: str) -> None:
    sqlite = ResultsStore(tmp_path / "results.db")
    pg = PgResultsStore(pg_url)
    write_history(sqlite)
    write_history(pg)
    assert dump(pg.db, "results", RESULT_COLUMNS) == dump(sqlite.db, "results", RESULT_COLUMNS)
    assert dump(pg.db, "policy_checks", CHECK_COLUMNS) == dump(
        sqlite.db, "policy_checks", CHECK_COLUMNS
    )
    assert [(r.run_id, r.revision, r.check_id, r.status, r.result) for r in pg.results()] == [
        (r.run_id, r.revision, r.check_id, r.status, r.result) for r in sqlite.results()
    ]
    assert pg.status_counts() == sqlite.status_counts()
    assert pg.scored_span_ids("t1") == sqlite.scored_span_ids("t1")
    assert pg.checkpoint() == sqlite.checkpoint() == (2, 7)
    current = pg.db.execute(
        "SELECT run_id, revision, status FROM results WHERE current AND policy_version = '1'"
        " AND check_id = 'c1' ORDER BY run_id"
    ).fetchall()
    assert current == [("t1", 1, "undetermined"), ("t2", 0, "error")]
    out_of_order = pg.db.execute(
        "SELECT revision, current FROM results WHERE run_id = 't3' ORDER BY revision"
    ).fetchall()
    assert out_of_order == [(1, False), (2, True)]  # a late lower revision is not current
    harm = pg.db.execute("SELECT harm_category FROM policy_checks WHERE check_id = 'c3'")
    assert sorted(harm.fetchall(), key=str) == [("privacy",), (None,)]
    assert pg.db.execute("SELECT count(*) FROM quarantine").fetchone() == (1,)


@pytest.mark.parametrize("seed", range(6))
def test_random_rounds_leave_the_same_rows_as_results_db(
    seed: int, tmp_path: Path, pg_url: str
) -> None:
    """A round's verdicts are written together at its end; whatever a round holds (several
    revisions of one verdict, in any order, repeats, revisions older than the stored one),
    the rows come out as results.db's one-at-a-time writes leave them."""
    rng = random.Random(seed)
    sqlite = ResultsStore(tmp_path / "results.db")
    pg = PgResultsStore(pg_url)
    clock = 10.0
    for _ in range(25):
        picks = []
        for _ in range(rng.randint(1, 15)):
            clock += 1
            picks.append(
                row(
                    rng.choice(["t1", "t2", "t3"]),
                    rng.randint(0, 3),
                    rng.choice(["safe", "unsafe", "undetermined", "error"]),
                    check=rng.choice(["c1", "c2"]),
                    version=rng.choice([1, None]),
                    scored_at=clock,
                )
            )
        for transaction in (sqlite.transaction(), pg.transaction()):
            with transaction as txn:
                for pick in picks:
                    txn.add_result(pick)
        assert dump(pg.db, "results", RESULT_COLUMNS) == dump(sqlite.db, "results", RESULT_COLUMNS)
    assert pg.db.execute("SELECT count(*) FROM results").fetchone()[0] > 20


def test_superseding_a_verdict_reads_the_primary_key_on_a_store_never_analyzed(
    pg_url: str,
) -> None:
    """The statement that retires older revisions is prepared once per connection, so its
    generic plan must not depend on statistics: a plan through a partial audit index would
    read every current verdict of the policy version for each later revision."""
    store = PgResultsStore(pg_url)
    with store.transaction() as txn:
        for number in range(3000):
            txn.add_result(row(f"run{number:05d}", 0, check=f"c{number % 3}"))
    store.db.execute("SET plan_cache_mode = force_generic_plan")
    store.db.execute(
        f"PREPARE supersede AS {_SUPERSEDE.replace('%s', '${}').format(1, 2, 3, 4, 5)}"
    )
    plan = "\n".join(
        line
        for (line,) in store.db.execute(
            "EXPLAIN EXECUTE supersede('run00001', 'p', '1', 'c1', 2)"
        ).fetchall()
    )
    assert "results_pkey" in plan, plan


def test_a_run_id_too_long_for_an_index_row_is_kept_as_a_key_every_lookup_finds(
    pg_url: str,
) -> None:
    """A session id is attacker-influenced and a run id is an index key (an index row fits
    about 2.7 KB): a long one is stored as its start and a digest, and every lookup by the
    run id as read from the spans maps it the same way."""
    store = PgResultsStore(pg_url)
    rng = random.Random(3)
    session = "".join(rng.choice(string.ascii_letters) for _ in range(5000))  # incompressible
    packed, digest = span_set(["00000000000000a1"])
    with store.transaction() as txn:
        txn.add_run(session, 0, packed, digest, [], "svc", 1)
        txn.add_result(row(session, 0, "unsafe"))
    assert store.scored_span_ids(session)[0] == 0
    (stored,) = store.results()
    assert stored.run_id == stored_key(session) and len(stored.run_id) <= KEY_CHARS
    assert pg_queries.latest_run(store.db, session) is not None
    assert pg_queries.has_results(store.db, session, 0, "p", "1")
    assert pg_queries.run_time(store.db, session, 0) is not None
    other = session[:-1] + ("a" if session[-1] != "a" else "b")  # same start, other digest
    assert store.scored_span_ids(other)[0] == -1


def test_each_collector_instance_resumes_from_its_own_checkpoint(pg_url: str) -> None:
    east = PgResultsStore(pg_url, instance="east")
    west = PgResultsStore(pg_url, instance="west")
    with east.transaction() as txn:
        txn.set_checkpoint(3, 120)
    assert west.checkpoint() is None
    with west.transaction() as txn:
        txn.set_checkpoint(1, 8)
    with east.transaction() as txn:
        txn.add_quarantine(1, 8, 2, "east's record")
    with west.transaction() as txn:
        txn.add_quarantine(1, 8, 2, "west's record")  # same position, other segments
    assert (east.checkpoint(), west.checkpoint()) == ((3, 120), (1, 8))
    assert PgResultsStore(pg_url, instance="east").checkpoint() == (3, 120)
    assert east.db.execute("SELECT count(*) FROM quarantine").fetchone() == (2,)


def test_writers_are_serialized_like_sqlite(pg_url: str) -> None:
    """A second writer waits for the first's commit, then sees its span set."""
    first = PgResultsStore(pg_url, instance="a")
    second = PgResultsStore(pg_url, instance="b")
    packed, digest = span_set(["00000000000000a1"])
    seen: list[int] = []
    entered = threading.Event()

    def other_writer() -> None:
        entered.set()
        with second.transaction():
            seen.append(second.scored_span_ids("t1")[0])

    with first.transaction() as txn:
        worker = threading.Thread(target=other_writer)
        worker.start()
        entered.wait()
        worker.join(0.5)
        assert worker.is_alive()  # blocked on the lock
        txn.add_run("t1", 0, packed, digest, ["t1"], None, None)
    worker.join(10)
    assert seen == [0]


def test_schema_versions_are_recorded_and_a_newer_store_is_refused(pg_url: str) -> None:
    store = PgResultsStore(pg_url)
    assert store.schema_version() == SCHEMA_VERSION
    again = PgResultsStore(pg_url)  # opening again applies nothing twice
    versions = again.db.execute("SELECT version FROM schema_version").fetchall()
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    again.db.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    for readonly in (False, True):
        with pytest.raises(SchemaError, match="upgrade rampart-otel"):
            PgResultsStore(pg_url, readonly=readonly)


def test_concurrent_first_opens_create_the_schema_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            PgResultsStore(pg_url).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = PgResultsStore(pg_url, readonly=True)
    applied = store.db.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert applied == [(version,) for version in range(1, SCHEMA_VERSION + 1)]  # each once


def test_a_reader_creates_the_schema_of_an_empty_database_and_cannot_write(pg_url: str) -> None:
    reader = PgResultsStore(pg_url, readonly=True)
    assert reader.schema_version() == SCHEMA_VERSION
    assert list(reader.results()) == []
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), reader.transaction() as txn:
        txn.set_checkpoint(1, 0)


def test_open_results_store_picks_the_store_by_target(tmp_path: Path, pg_url: str) -> None:
    sqlite = open_results_store(tmp_path)
    assert isinstance(sqlite, ResultsStore)
    assert sqlite.path == tmp_path / "results.db"
    pg = open_results_store(pg_url, instance="east")
    assert isinstance(pg, PgResultsStore)
    assert pg.instance == "east"
    with pytest.raises(StoreError, match=r"^mysql://u:\*\*\*@h/db: a results URL is postgresql"):
        open_results_store("mysql://u:secret@h/db")
    with pytest.raises(StoreError, match="not a path"):
        open_results_store(str(tmp_path))  # a string is a URL; a data directory is a Path


def test_a_server_that_is_down_is_one_line_without_the_password(pg_server: str) -> None:
    with closed_port() as port, pytest.raises(StoreError) as caught:  # connection refused
        url = f"postgresql://postgres:hunter2@127.0.0.1:{port}/x"
        open_results_store(url)
    message = str(caught.value)
    assert "\n" not in message
    assert "hunter2" not in message
    assert message.startswith(f"postgresql://postgres:***@127.0.0.1:{port}/x: cannot connect")


def test_a_bad_url_and_a_missing_database_are_one_line(pg_server: str) -> None:
    for url in (
        "postgresql://127.0.0.1:notaport/x",
        "postgresql://u:hunter2@[bad",  # libpq quotes the whole URL in this one
        f"{pg_server}/no_such_database",
    ):
        with pytest.raises(StoreError, match="cannot connect") as caught:
            open_results_store(url)
        assert "\n" not in str(caught.value)
        assert "hunter2" not in str(caught.value)


def test_redacted_hides_only_the_password() -> None:
    assert redacted("postgresql://u:p@h:5/d") == "postgresql://u:***@h:5/d"
    assert redacted("postgres://u@h/d") == "postgres://u@h/d"


def test_an_older_store_is_migrated_in_place_keeping_its_verdicts(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mechanism a version 2 will use: pending steps applied in order, once, recorded."""
    store = PgResultsStore(pg_url)
    write_history(store)
    before = sorted((r.run_id, r.revision, r.check_id, r.status) for r in store.results())
    store.close()
    step = ("ALTER TABLE results ADD COLUMN tenant TEXT", "UPDATE results SET tenant = 'a'")
    monkeypatch.setattr(pg_schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(pg_schema.MIGRATIONS, SCHEMA_VERSION + 1, step)
    reader = PgResultsStore(pg_url, readonly=True)  # migrates first, as open_reader does
    assert reader.schema_version() == SCHEMA_VERSION + 1
    after = sorted((r.run_id, r.revision, r.check_id, r.status) for r in reader.results())
    assert after == before
    assert reader.db.execute("SELECT DISTINCT tenant FROM results").fetchall() == [("a",)]
    PgResultsStore(pg_url).close()  # nothing applied twice (the ALTER would fail)
