"""The operation and table a SQL statement shows, and the statements it gives nothing for."""

from __future__ import annotations

import pytest

from rampart_otel.conventions.sql_statement import StatementSummary, summarize


@pytest.mark.parametrize(
    ("statement", "operation", "table"),
    [
        ("INSERT INTO reports VALUES (?)", "INSERT", "reports"),
        ('insert or replace into "main"."Reports" (a) values (1)', "INSERT", "main.Reports"),
        ("REPLACE INTO t VALUES (1)", "REPLACE", "t"),
        ("-- a note\n/* and another */ UPDATE t SET a = 1", "UPDATE", "t"),
        ("UPDATE t AS x SET a = 1 WHERE b = 2", "UPDATE", "t"),
        ("DELETE FROM t USING u WHERE t.id = u.id", "DELETE", "t"),
        ("SELECT * FROM t WHERE a = 'x;y'", "SELECT", "t"),  # the ; is inside a string
        ("select a, b from t x where y = 1", "SELECT", "t"),
        ("SELECT $$;DELETE$$ FROM t", "SELECT", "t"),  # a dollar-quoted string
        ("SELECT * FROM [dbo].[t]", "SELECT", "dbo.t"),
        ("CREATE TABLE IF NOT EXISTS reports (id INT)", "CREATE", "reports"),
        ("TRUNCATE t", "TRUNCATE", "t"),
        ("SELECT 1;", "SELECT", None),  # one statement, its semicolon
        ("SELECT * FROM a JOIN b ON a.id = b.id", "SELECT", None),
        ("SELECT * FROM a, b", "SELECT", None),
        ("SELECT * FROM f(1)", "SELECT", None),
        ("DROP TABLE a, b", "DROP", None),
        ("DELETE t1 FROM t1 JOIN t2", "DELETE", None),  # MySQL's multi-table form
        ("CREATE INDEX i ON t (a)", "CREATE", None),
        ("SELECT a FROM v$session", "SELECT", "v$session"),
        ("SELECT * FROM t WHERE a IN (" + "1, " * 3000 + "1)", "SELECT", None),  # too long
        ("INSERT INTO t VALUES " + ", ".join(["(1, 'a;b')"] * 3000), "INSERT", "t"),
    ],
)
def test_operation_and_table(statement: str, operation: str, table: str | None) -> None:
    assert summarize(statement) == StatementSummary(operation, table)


@pytest.mark.parametrize(
    "statement",
    [
        "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",  # WITH … INSERT
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",  # a CTE that writes
        "SELECT 1; DELETE FROM t",  # several statements
        "EXPLAIN ANALYZE INSERT INTO t VALUES (1)",  # runs the statement it explains
        "SELECT 'a\\'; DELETE' FROM t",  # \' ends the string for all but MySQL
        "SELECT 1--;\nDELETE FROM t",  # --; is no comment to MySQL
        "# note\nSELECT 1",  # a comment to MySQL only
        "/*!50000 DELETE FROM t */ SELECT 1",  # MySQL runs it
        "/* outer /* inner */ DELETE FROM t */ SELECT 1",  # nested for PostgreSQL only
        "SELECT 'unterminated",
        "/* unterminated",
        "(SELECT 1) UNION (SELECT 2)",
        "SELECT \x000\x00 FROM t",  # a NUL: never in SQL, the reader's own placeholder
        "DELETE FROM t --x",  # "--x": a comment, or minus minus x
        "SELECT 1 FROM t WHERE a = 1" + " " * 100_000,  # longer than any statement read
        "VACUUM",  # not one of the operations read
        "",
        "   ",
    ],
)
def test_a_statement_read_two_ways_gives_nothing(statement: str) -> None:
    assert summarize(statement) == StatementSummary(None, None)
