"""``audit`` and ``diff`` with ``--results postgresql://...``, as a user runs them: the same
documents as with ``--data-dir`` on the same verdicts (only the store's name differs, and
never with its password), and one-line errors with exit code 2 for a store that cannot be
used."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from ports import closed_port
from postgres import fresh_database

from audit.test_pg_equivalence import write_history
from rampart_otel.storage.pg_results import PgResultsStore
from rampart_otel.storage.results import ResultsStore

POLICY = Path(__file__).resolve().parents[2] / "samples" / "policy.yaml"


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory, pg_server: str) -> Iterator[tuple[Path, str]]:
    data_dir = tmp_path_factory.mktemp("pg-cli")
    with fresh_database(pg_server) as url:
        for store in (ResultsStore(data_dir / "results.db"), PgResultsStore(url)):
            write_history(store)
            store.close()
        yield data_dir, url


def run_json(*args: str | Path) -> dict[str, Any]:
    proc = run_cli(*args, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("options", [(), ("--policy", "other", "--since", "2024-05-02")], ids=str)
def test_audit_json_reads_the_same_from_postgresql(both, options) -> None:
    data_dir, url = both
    expected = run_json("audit", "--data-dir", data_dir, "--json", "--limit", "all", *options)
    got = run_json("audit", "--results", url, "--json", "--limit", "all", *options)
    assert expected["aggregates"].pop("data_dir") == str(data_dir)
    assert got["aggregates"].pop("data_dir") == url
    assert len(got["results"]) > 50
    assert got == expected


def test_audit_terminal_and_html_name_the_store_without_its_password(both) -> None:
    _, url = both
    with_password = url.replace("postgres@", "postgres:hunter2@")  # trust: any password
    for fmt in ((), ("--html",)):
        proc = run_cli("audit", "--results", with_password, *fmt, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "hunter2" not in proc.stdout
        assert "postgres:***@127.0.0.1" in proc.stdout


def test_diff_reads_the_same_from_postgresql(both) -> None:
    data_dir, url = both
    for policy in ("guard", "other"):
        args = ("diff", "--policy", policy, "--json")
        expected = run_json(*args, "--data-dir", data_dir)
        got = run_json(*args, "--results", url)
        assert expected["changed"]["runs"] and expected["runs_only_in_to"] is not None
        for side in ("from", "to"):
            assert expected[side].pop("source") == str(data_dir)
            assert got[side].pop("source") == url
        assert got == expected


def test_a_store_that_cannot_be_used_is_one_line_and_exit_code_2(both, tmp_path) -> None:
    data_dir, url = both
    with closed_port() as port:  # nothing listens on it: connection refused
        down = f"postgresql://postgres:hunter2@127.0.0.1:{port}/x"
        cases = [
            (("audit", "--results", down), "cannot connect"),
            (("diff", "--results", down), "cannot connect"),
            (("audit", "--results", "mysql://h/db"), "is postgresql://"),
            (("audit", "--results", data_dir), "not a path"),
            (
                ("rescore", "--data-dir", data_dir, "--policy", POLICY, "--results", "x"),
                "not a path",
            ),
            (("audit",), "give --data-dir"),
            (("audit", "--data-dir", data_dir, "--results", url), "not both"),
            (("diff", "--results", url, tmp_path / "a.json", tmp_path / "b.json"), "not both"),
        ]
        for args, message in cases:
            proc = run_cli(*args, timeout=60)
            assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
            assert message in proc.stderr, (args, proc.stderr)
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert "Traceback" not in proc.stderr
            assert "hunter2" not in proc.stderr
