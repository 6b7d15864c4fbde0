"""The PostgreSQL fixture: a real server, one database per test, nothing left between."""

from __future__ import annotations

import psycopg


def test_each_test_gets_an_empty_database_of_its_own(pg_url: str) -> None:
    with psycopg.connect(pg_url) as db:
        tables = db.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)
        db.execute("CREATE TABLE left_behind (x int)")
        assert db.execute("SELECT current_database()").fetchone()[0] == pg_url.rsplit("/", 1)[1]


def test_the_server_listens_on_loopback_only(pg_url: str) -> None:
    with psycopg.connect(pg_url) as db:
        assert db.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
