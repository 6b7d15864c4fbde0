"""The same verdicts written to ``results.db`` and to PostgreSQL read back the same: every
``audit --json`` document (counts, trend, by check and by service, the listing), the terminal
report, the versions, what ``diff`` pairs and what ``rescore`` looks up. The SQLite side is
the reference: its aggregates are checked against a recount in ``test_aggregate``."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres import fresh_database

from audit.test_aggregate import START, STATUSES
from rampart_otel.audit.aggregate import aggregate, listed, select_versions
from rampart_otel.audit.report import write_audit_json
from rampart_otel.audit.terminal import write_audit_terminal
from rampart_otel.storage import queries as q
from rampart_otel.storage.audit_queries import Filters
from rampart_otel.storage.pg_results import PgResultsStore
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultRow, ResultsStore, span_set

HARM = {"c1": "data_exfiltration", "c2": None, "c3": "privacy"}


def write_history(store: VerdictStore, seed: int = 11) -> None:
    """Two policies (integer and string versions) and a versionless one, late revisions,
    runs sharing a run time, session runs, span sets and quarantined records."""
    rng = random.Random(seed)
    with store.transaction() as txn:
        for number in range(180):
            run_id = f"session:{number:04d}" if number % 5 == 0 else f"run-{number:04d}"
            # every 9th run shares its run time with the one before: ties in the listing
            run_at = START + (number - number % 9 // 8) * 3000 + rng.uniform(0, 2000)
            if number % 9 == 8:
                run_at = START + (number - 1) * 3000
            service = rng.choice(["svc-a", "svc-b", "svc-c", None])
            revisions = 2 if number % 7 == 0 else 1
            for revision in range(revisions):
                ids = [f"{number:08x}{span:08x}" for span in range(revision + 2)]
                packed, digest = span_set(ids)
                txn.add_run(run_id, revision, packed, digest, [run_id], service, None)
            for policy, versions in (
                ("guard", (1, 2)),
                ("other", ("2024-a", "2024-b")),
                ("plain", (None,)),
            ):
                for version in versions:
                    if policy != "guard" and number % 3:
                        continue
                    order = range(revisions) if number % 11 else reversed(range(revisions))
                    for revision in order:  # some revisions arrive late, out of order
                        for check in ("c1", "c2", "c3"):
                            if check == "c3" and version == 1:
                                continue  # a check only the later version has
                            status = rng.choice(STATUSES)
                            document = {
                                "run_id": run_id,
                                "check": check,
                                "status": status,
                                "polarity": "attack",
                                "harm_category": HARM[check],
                                "summary": f"{status} {run_id} r{revision}",
                                "policy": {"name": policy, "version": version},
                            }
                            started = None if number % 13 == 0 else int(run_at * 1e9)
                            txn.add_result(
                                ResultRow(
                                    run_id, revision, policy, check, status, service, started,
                                    START + 30 * 86400 + number, document, policy_version=version,
                                )
                            )  # fmt: skip
        txn.add_quarantine(2, 512, 4, "not OTLP")
        txn.add_quarantine(1, 64, 1, "truncated")
        txn.set_checkpoint(3, 100)


@pytest.fixture(scope="module")
def stores(
    tmp_path_factory: pytest.TempPathFactory, pg_server: str
) -> Iterator[tuple[ResultsStore, PgResultsStore]]:
    path = tmp_path_factory.mktemp("equivalence") / "results.db"
    with fresh_database(pg_server) as url:
        for store in (ResultsStore(path), PgResultsStore(url)):
            write_history(store)
            store.close()
        sqlite, pg = ResultsStore(path, readonly=True), PgResultsStore(url, readonly=True)
        yield sqlite, pg
        sqlite.close()
        pg.close()


DAY = 86400.0
FILTERS = [
    Filters(),
    Filters(since=START + 1 * DAY, until=START + 3.5 * DAY),  # narrow: another index
    Filters(since=START + 0.5 * DAY, until=START + 5 * DAY),
    Filters(services=("svc-a", "svc-c")),
    Filters(checks=("c2",), statuses=("unsafe", "undetermined")),
    Filters(since=START + DAY, services=("svc-b",), statuses=("error", "safe")),
    Filters(until=START),  # nothing matches
]
SELECTIONS = [(None, None), ("guard", "1"), ("other", "2024-a"), ("plain", None)]


def audit_json(store: VerdictStore, policy, version, filters, bucket, limit) -> str:
    stored = q.policy_versions(store.db)
    versions = select_versions(stored, policy, version)
    aggregates = aggregate(store.db, versions, filters, bucket)
    results = listed(store.db, versions, filters, limit)
    out = io.StringIO()
    errors = []  # as ``audit`` builds them, from the quarantine
    write_audit_json(out, Path("data"), stored, aggregates, results, limit, errors=errors)
    terminal = io.StringIO()
    aggregates = aggregate(store.db, versions, filters, bucket)
    results = listed(store.db, versions, filters, limit)
    write_audit_terminal(terminal, Path("data"), stored, aggregates, results)
    return out.getvalue() + terminal.getvalue()


@pytest.mark.parametrize("filters", FILTERS, ids=range(len(FILTERS)))
@pytest.mark.parametrize("selection", SELECTIONS, ids=str)
def test_audit_reports_are_identical(stores, filters, selection) -> None:
    sqlite, pg = stores
    policy, version = selection
    for bucket, limit in (("auto", 25), ("hour", None), ("day", 7), ("week", 0)):
        expected = audit_json(sqlite, policy, version, filters, bucket, limit)
        assert '"total": 0' in expected or '"matching"' in expected
        assert audit_json(pg, policy, version, filters, bucket, limit) == expected


def test_the_history_has_what_the_comparison_needs(stores) -> None:
    """Guards the test above: ties in run time, revisions, several versions are all there."""
    sqlite, _ = stores
    rows = list(sqlite.results())
    times = [r.run_at for r in rows if r.policy == "guard" and r.check_id == "c1"]
    assert len(times) > len(set(times))  # runs sharing a run time (revisions aside)
    assert {r.revision for r in rows} == {0, 1}
    assert set(q.policy_versions(sqlite.db)) == {"guard", "other", "plain"}


def test_versions_pairs_and_rescore_lookups_are_identical(stores) -> None:
    sqlite, pg = stores
    versions = q.policy_versions(sqlite.db)
    assert q.policy_versions(pg.db) == versions
    for name, (before, after) in (("guard", versions["guard"]), ("other", versions["other"])):
        pairs = sorted(q.paired_statuses(sqlite.db, before, after))
        assert pairs, name
        assert sorted(q.paired_statuses(pg.db, before, after)) == pairs
        assert q.runs_only(pg.db, before, after) == q.runs_only(sqlite.db, before, after)
        assert q.runs_only(pg.db, after, before) == q.runs_only(sqlite.db, after, before)
        for run_id, check, _, _ in pairs[:40]:
            for version in (before, after):
                expected = q.current_result(sqlite.db, version, run_id, check)
                assert q.current_result(pg.db, version, run_id, check) == expected
    assert q.current_result(pg.db, versions["guard"][0], "run-0001", "c3") is None
    for run_id in ("run-0001", "session:0000", "run-0007", "missing"):
        assert q.latest_run(pg.db, run_id) == q.latest_run(sqlite.db, run_id)
        for revision in (0, 1):
            assert q.run_time(pg.db, run_id, revision) == q.run_time(sqlite.db, run_id, revision)
            for policy, version in (("guard", "2"), ("plain", ""), ("other", "2024-b")):
                args = (run_id, revision, policy, version)
                assert q.has_results(pg.db, *args) == q.has_results(sqlite.db, *args)
    assert q.session_runs(pg.db) is q.session_runs(sqlite.db) is True
    assert q.stored_run_count(pg.db) == q.stored_run_count(sqlite.db) == 180
    assert (
        q.quarantined(pg.db)
        == q.quarantined(sqlite.db)
        == [
            (1, 64, 1, "truncated"),
            (2, 512, 4, "not OTLP"),
        ]
    )


def test_a_store_without_session_runs_says_so(pg_url: str, tmp_path: Path) -> None:
    for store in (ResultsStore(tmp_path / "results.db"), PgResultsStore(pg_url)):
        packed, digest = span_set(["00000000000000a1"])
        with store.transaction() as txn:
            txn.add_run("sessionless", 0, packed, digest, ["t"], None, None)
        assert q.session_runs(store.db) is False
