"""``results_rollup``: the shared store's hourly counts stay exact through every write, and
the audit's aggregates read from it equal ``results.db``'s row-by-row counts for any window,
filter and bucket width, down to run times one ulp either side of an hour."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from postgres import fresh_database

from rampart_otel.storage import queries as q
from rampart_otel.storage.audit_queries import Buckets, Filters
from rampart_otel.storage.pg_results import PgResultsStore
from rampart_otel.storage.pg_schema import MIGRATIONS, ROLLUP_SECONDS
from rampart_otel.storage.results import ResultRow, ResultsStore

HOUR = float(ROLLUP_SECONDS)
BASE = 1_717_200_000.0 // HOUR * HOUR  # an hour's edge, early June 2024
STATUSES = ("safe", "unsafe", "undetermined", "error")
SERVICES = ("svc-a", "svc-b", None)
CHECKS = ("c1", "c2")


def edge_times(rng: random.Random, count: int) -> list[float]:
    """Run times on hour edges, one ulp either side of them, and anywhere."""
    times = []
    for _ in range(count):
        edge = BASE + rng.randrange(0, 72) * HOUR
        times.append(
            rng.choice(
                [
                    edge,
                    math.nextafter(edge, -math.inf),
                    math.nextafter(edge, math.inf),
                    edge + rng.uniform(0, HOUR),
                ]
            )
        )
    return times


def write(stores: list, rng: random.Random) -> None:
    """The same verdicts into every store: new runs, late revisions that supersede, and
    replays of a revision with a different verdict."""
    times = edge_times(rng, 150)
    for number, run_at in enumerate(times):
        service = rng.choice(SERVICES)
        revisions = [0, 1] if number % 4 == 0 else [0]
        if number % 6 == 0:
            revisions.append(0)  # a replay of revision 0, after revision 1 if there is one
        statuses = [(r, c, rng.choice(STATUSES)) for r in revisions for c in CHECKS]
        for store in stores:
            with store.transaction() as txn:
                for revision, check, status in statuses:
                    txn.add_result(
                        ResultRow(
                            f"run-{number:04d}", revision, "guard", check, status, service,
                            None, 0.0, {"status": status}, policy_version=1, run_at=run_at,
                        )
                    )  # fmt: skip


@pytest.fixture(scope="module")
def stores(
    tmp_path_factory: pytest.TempPathFactory, pg_server: str
) -> Iterator[tuple[ResultsStore, PgResultsStore]]:
    path = tmp_path_factory.mktemp("rollup") / "results.db"
    with fresh_database(pg_server) as url:
        sqlite, pg = ResultsStore(path), PgResultsStore(url)
        write([sqlite, pg], random.Random(5))
        yield sqlite, pg
        sqlite.close()
        pg.close()


def recount(db: psycopg.Connection) -> list[tuple]:
    return db.execute(
        "SELECT policy, policy_version, rampart_hour(run_at), check_id, service, status,"
        " count(*) FROM results WHERE current GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6"
    ).fetchall()


def rollup(db: psycopg.Connection) -> list[tuple]:
    return db.execute(
        "SELECT * FROM results_rollup WHERE n <> 0 ORDER BY 1, 2, 3, 4, 5, 6"
    ).fetchall()


def test_the_rollup_equals_a_recount_after_supersessions_replays_and_deletes(stores) -> None:
    _, pg = stores
    assert pg.db.execute("SELECT count(*) FROM results WHERE NOT current").fetchone()[0] > 0
    assert rollup(pg.db) == recount(pg.db)
    assert pg.db.execute("SELECT count(*) FROM results_rollup WHERE n < 0").fetchone() == (0,)
    with pg.db.transaction():  # retention or an operator removing rows: counts follow
        pg.db.execute("DELETE FROM results WHERE run_id LIKE 'run-00_1'")
        assert rollup(pg.db) == recount(pg.db)
        raise psycopg.Rollback()


def test_an_hour_is_exact_one_ulp_either_side_of_its_edge(stores) -> None:
    _, pg = stores
    edge = BASE + 5 * HOUR
    hour = int(edge // HOUR)
    below, above = math.nextafter(edge, -math.inf), math.nextafter(edge, math.inf)
    found = pg.db.execute(
        "SELECT rampart_hour(%s), rampart_hour(%s), rampart_hour(%s)", (below, edge, above)
    ).fetchone()
    assert found == (hour - 1, hour, hour)


def windows(rng: random.Random) -> list[Filters]:
    """Aligned and unaligned windows, open on either side, with and without filters."""
    found = [Filters(), Filters(services=("svc-a",)), Filters(statuses=("unsafe", "error"))]
    for _ in range(40):
        since, until = sorted(edge_times(rng, 2))
        if rng.random() < 0.3:
            since = None
        if rng.random() < 0.3:
            until = None
        found.append(
            Filters(
                since=since,
                until=until,
                services=tuple(s for s in ("svc-a", "svc-b") if rng.random() < 0.3),
                checks=("c2",) if rng.random() < 0.2 else (),
                statuses=tuple(s for s in STATUSES if rng.random() < 0.25),
            )
        )
    found.append(Filters(since=BASE + HOUR + 10, until=BASE + HOUR + 20))  # inside one hour
    return found


BUCKETS = [
    Buckets("hour", HOUR),
    Buckets("day", 86400.0),
    Buckets("odd", 5400.0, origin=1234.5),  # edges inside hours: partly counted row by row
    Buckets("tiny", 600.0, origin=7.0),
]


def counted(rows: list[tuple]) -> dict[tuple, int]:
    """Counts by (group, status): the order of the rows is the audit's to choose."""
    found = {(group, status): count for group, status, count in rows}
    assert len(found) == len(rows) and all(count > 0 for count in found.values())
    return found


def test_counts_match_results_db_for_any_window_filter_and_bucket(stores) -> None:
    sqlite, pg = stores
    (version,) = q.policy_versions(pg.db)["guard"]
    assert q.policy_versions(sqlite.db)["guard"] == [version]
    compared = 0
    for filters in windows(random.Random(9)):
        for by in ("check", "service"):
            expected = counted(q.counts(sqlite.db, version, filters, by))
            assert counted(q.counts(pg.db, version, filters, by)) == expected, (filters, by)
            compared += len(expected)
        for buckets in BUCKETS:
            expected = counted(q.counts(sqlite.db, version, filters, "bucket", buckets))
            assert counted(q.counts(pg.db, version, filters, "bucket", buckets)) == expected, (
                filters,
                buckets,
            )
            compared += len(expected)
    assert compared > 1000  # the windows are not all empty


def test_migrating_a_version_1_store_counts_what_it_holds(pg_server: str, tmp_path: Path) -> None:
    with fresh_database(pg_server) as url:
        with psycopg.connect(url, autocommit=True) as db:  # a store as version 1 left it
            db.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY,"
                       " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")  # fmt: skip
            for statement in MIGRATIONS[1]:
                db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (1)")
            db.execute(
                "INSERT INTO results VALUES ('r1', 0, 'guard', 'c1', 'safe', NULL, NULL, 0, '{}',"
                " '1', %s, true), ('r2', 0, 'guard', 'c1', 'unsafe', 'svc', NULL, 0, '{}', '1',"
                " %s, true), ('r2', 1, 'guard', 'c1', 'safe', 'svc', NULL, 0, '{}', '1', %s,"
                " false)",
                (BASE, BASE + 1, BASE + 2),
            )
        store = PgResultsStore(url)
        try:
            assert rollup(store.db) == recount(store.db)
            assert [row[-1] for row in rollup(store.db)] == [1, 1]
        finally:
            store.close()
