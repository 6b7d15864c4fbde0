"""The audit's SQL aggregates against a recount in Python over the same stored verdicts:
latest revision of each run only, the latest policy version by default, every filter, and
the covering index doing the work."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from rampart_otel.audit.aggregate import aggregate, listed, select_versions
from rampart_otel.audit.timespec import DAY
from rampart_otel.errors import AuditError
from rampart_otel.evaluation import wilson_interval
from rampart_otel.evaluation.population import UNCATEGORIZED
from rampart_otel.storage import audit_queries as q
from rampart_otel.storage.audit_queries import Filters
from rampart_otel.storage.results import ResultRow, ResultsStore

START = 1_714_521_600.0  # 2024-05-01T00:00:00Z
STATUSES = ("safe", "unsafe", "undetermined", "error")
HARM = {"c1": "data_exfiltration", "c2": None}


@dataclass(frozen=True)
class Stored:
    run_id: str
    revision: int
    policy: str
    version: object
    check: str
    status: str
    service: str | None
    run_at: float


def build(path: Path, seed: int = 7) -> list[Stored]:
    """Verdicts of guard v1 and v2 and of `other` (string versions); some runs re-scored late."""
    rng = random.Random(seed)
    stored: list[Stored] = []
    store = ResultsStore(path)
    with store.transaction() as txn:
        for number in range(240):
            run_id = f"run-{number:04d}"
            run_at = START + rng.uniform(0, 10 * 86400)
            service = rng.choice(["svc-a", "svc-b", None])
            revisions = 2 if number % 7 == 0 else 1
            for policy, versions in (("guard", (1, 2)), ("other", ("2024-a", "2024-b"))):
                for version in versions:
                    if policy == "other" and number % 3:  # fewer runs under `other`
                        continue
                    for revision in range(revisions):
                        for check in ("c1", "c2"):
                            status = rng.choice(STATUSES)
                            item = Stored(
                                run_id, revision, policy, version, check, status, service, run_at
                            )
                            stored.append(item)
                            document = {
                                "run_id": run_id,
                                "check": check,
                                "status": status,
                                "polarity": "attack",
                                "harm_category": HARM[check],
                                "summary": f"{status} {run_id}",
                                "policy": {"name": policy, "version": version},
                            }
                            txn.add_result(
                                ResultRow(
                                    run_id, revision, policy, check, status, service,
                                    int(run_at * 1e9), START + 20 * 86400 + number, document,
                                    policy_version=version,
                                )
                            )  # fmt: skip
    store.close()
    return stored


def reference(stored: list[Stored], policy: str, version: object, filters: Filters) -> list[Stored]:
    """What counts, recomputed: the latest revision of each (run, check) that passes the filters."""
    latest: dict[tuple[str, str], Stored] = {}
    for item in stored:
        if item.policy != policy or item.version != version:
            continue
        key = (item.run_id, item.check)
        if key not in latest or item.revision > latest[key].revision:
            latest[key] = item
    return [
        item
        for item in latest.values()
        if (filters.since is None or item.run_at >= filters.since)
        and (filters.until is None or item.run_at < filters.until)
        and (not filters.services or item.service in filters.services)
        and (not filters.checks or item.check in filters.checks)
        and (not filters.statuses or item.status in filters.statuses)
    ]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[ResultsStore, list[Stored]]:
    path = tmp_path_factory.mktemp("audit") / "results.db"
    stored = build(path)
    return ResultsStore(path, readonly=True), stored


FILTERS = [
    Filters(),
    Filters(since=START + 2 * 86400, until=START + 5.5 * 86400),
    Filters(services=("svc-a",)),
    Filters(checks=("c2",), statuses=("unsafe", "undetermined")),
    Filters(since=START + 86400, services=("svc-a", "svc-b"), statuses=("error",)),
]


def summary_counts(summary) -> dict[str, int]:
    return {s: getattr(summary, s) for s in STATUSES}


def counted(items: list[Stored]) -> dict[str, int]:
    counts = Counter(item.status for item in items)
    return {s: counts.get(s, 0) for s in STATUSES}


@pytest.mark.parametrize("filters", FILTERS, ids=range(len(FILTERS)))
def test_counts_per_check_service_and_day_match_a_recount(data, filters):
    store, stored = data
    versions = select_versions(q.policy_versions(store.db), "guard", None)
    assert [v.value for v in versions] == [2]  # integer versions: the highest
    result = aggregate(store.db, versions, filters, "day")
    expected = reference(stored, "guard", 2, filters)
    assert summary_counts(result.overall) == counted(expected)
    assert result.overall.total == len(expected)
    for row in result.by_check:
        assert summary_counts(row.summary) == counted([i for i in expected if i.check == row.check])
        assert row.harm_category == HARM[row.check]
    assert {row.check for row in result.by_check} == {i.check for i in expected}
    for service, summary in result.by_service:
        assert summary_counts(summary) == counted([i for i in expected if i.service == service])
    assert result.buckets is DAY
    for bucket in result.trend:
        inside = [i for i in expected if bucket.start <= i.run_at < bucket.end]
        assert summary_counts(bucket.summary) == counted(inside)
    assert sum(b.summary.total for b in result.trend) == len(expected)


def test_rates_leave_errors_out_keep_undetermined_in_with_wilson_intervals(data):
    store, _ = data
    versions = select_versions(q.policy_versions(store.db), "guard", "1")
    result = aggregate(store.db, versions, Filters(), "auto")
    overall = result.overall
    assert overall.undetermined > 0
    scored = overall.total - overall.error
    asr = overall.attack_success_rate
    assert (asr.numerator, asr.denominator) == (overall.unsafe, scored)
    assert (asr.ci_low, asr.ci_high) == pytest.approx(wilson_interval(overall.unsafe, scored))
    spr = overall.safety_pass_rate
    assert (spr.numerator, spr.denominator) == (overall.safe, scored)
    assert not asr.low_support
    tiny = aggregate(store.db, versions, Filters(since=START, until=START + 3600), "hour")
    assert tiny.overall.attack_success_rate.low_support  # fewer than 5 scored results
    population = result.population()
    assert population.overall == overall
    assert set(population.by_harm_category) == {"data_exfiltration", UNCATEGORIZED}
    assert population.by_check["c1"] == next(r.summary for r in result.by_check if r.check == "c1")


def test_string_versions_pick_the_one_scored_first_most_recently_and_names_are_checked(data):
    store, _ = data
    stored = q.policy_versions(store.db)
    assert [v.value for v in stored["other"]] == ["2024-a", "2024-b"]
    everything = select_versions(stored, None, None)
    assert [(v.policy, v.value) for v in everything] == [("guard", 2), ("other", "2024-b")]
    with pytest.raises(AuditError, match="needs --policy"):
        select_versions(stored, None, "1")
    with pytest.raises(AuditError, match="no verdicts of policy 'nope'"):
        select_versions(stored, "nope", None)
    with pytest.raises(AuditError, match=r"no version '3' \(1, 2\)"):
        select_versions(stored, "guard", "3")


def test_several_policies_are_counted_side_by_side(data):
    store, stored = data
    versions = select_versions(q.policy_versions(store.db), None, None)
    result = aggregate(store.db, versions, Filters(), "week")
    expected = reference(stored, "guard", 2, Filters()) + reference(
        stored, "other", "2024-b", Filters()
    )
    assert summary_counts(result.overall) == counted(expected)
    assert [(r.version.policy, r.check) for r in result.by_check] == [
        ("guard", "c1"), ("guard", "c2"), ("other", "c1"), ("other", "c2"),
    ]  # fmt: skip


def test_the_listing_is_the_newest_n_in_time_order_or_everything(data):
    store, stored = data
    versions = select_versions(q.policy_versions(store.db), "guard", None)
    expected = sorted(reference(stored, "guard", 2, Filters()), key=lambda i: i.run_at)
    newest = list(listed(store.db, versions, Filters(), 5))
    assert [(r.run_id, r.check_id) for r in newest] == [(i.run_id, i.check) for i in expected[-5:]]
    everything = list(listed(store.db, versions, Filters(), None))
    assert [r.run_at for r in everything] == pytest.approx([i.run_at for i in expected])
    assert list(listed(store.db, versions, Filters(), 0)) == []


class Recorder:
    """Passes queries to the database and keeps them, to explain their plans afterwards."""

    def __init__(self, db) -> None:
        self.db = db
        self.queries: list[tuple[str, list]] = []

    def execute(self, query, params=()):
        self.queries.append((query, list(params)))
        return self.db.execute(query, params)


@pytest.mark.parametrize(
    ("filters", "index", "sorts"),
    [
        (Filters(), {"check": "results_by_check", "service": "results_by_service"}, False),
        (Filters(since=START + 9 * 86400), {"check": "results_audit", "service": "results_audit"},
         True),
    ],
)  # fmt: skip
def test_aggregates_read_only_a_covering_index(data, filters, index, sorts):
    store, _ = data
    (version,) = select_versions(q.policy_versions(store.db), "guard", None)
    for by in ("check", "service", "bucket"):
        recorder = Recorder(store.db)
        q.counts(recorder, version, filters, by, DAY)  # type: ignore[arg-type]
        query, params = recorder.queries[-1]
        plan = " ".join(r[-1] for r in store.db.execute(f"EXPLAIN QUERY PLAN {query}", params))
        assert f"COVERING INDEX {index.get(by, 'results_audit')} " in plan, plan
        if by == "bucket":  # one range per bucket, nothing sorted
            assert "run_at>? AND run_at<?)" in plan and "TEMP B-TREE" not in plan, plan
            continue
        assert ("TEMP B-TREE" in plan) is sorts, plan  # whole history: streamed in index order
        if filters.since is not None:  # a narrow window: a seek in the time index
            assert "current=? AND run_at>?)" in plan, plan


def test_comparing_two_versions_reads_indexes_only_and_counts_runs_on_each_side(data):
    store, stored = data
    v1, v2 = q.policy_versions(store.db)["guard"]
    recorder = Recorder(store.db)
    pairs = list(q.paired_statuses(recorder, v1, v2))  # type: ignore[arg-type]
    before = {(i.run_id, i.check): i.status for i in reference(stored, "guard", 1, Filters())}
    after = {(i.run_id, i.check): i.status for i in reference(stored, "guard", 2, Filters())}
    assert sorted(pairs) == sorted((r, c, before[r, c], after[r, c]) for r, c in before)
    query, params = recorder.queries[-1]
    plan = [r[-1] for r in store.db.execute(f"EXPLAIN QUERY PLAN {query}", params)]
    assert all("COVERING INDEX results_by_check" in step for step in plan), plan
    assert "check_id=? AND run_id=?)" in plan[-1], plan
    assert q.runs_only(store.db, v1, v2) == (0, 0)
    recorder = Recorder(store.db)
    q.runs_only(recorder, v1, v2)  # type: ignore[arg-type]
    query, params = recorder.queries[-1]
    plan = [r[-1] for r in store.db.execute(f"EXPLAIN QUERY PLAN {query}", params)]
    assert any("COVERING INDEX sqlite_autoindex_results_1" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan


def test_runs_only_one_version_scored_are_counted_per_side(tmp_path):
    store = ResultsStore(tmp_path / "results.db")
    with store.transaction() as txn:
        for version, runs in ((1, "ab"), (2, "bcd")):
            for run in runs:
                document = {"run_id": run, "policy": {"name": "p", "version": version}}
                txn.add_result(ResultRow(run, 0, "p", "c1", "safe", None, None, 1.0, document,
                                         policy_version=version))  # fmt: skip
    v1, v2 = q.policy_versions(store.db)["p"]
    assert q.runs_only(store.db, v1, v2) == (1, 2)
    assert [p[0] for p in q.paired_statuses(store.db, v1, v2)] == ["b"]
