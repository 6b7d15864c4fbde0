"""What ``audit`` reports: which policy versions count, and their verdicts counted and rated.

Counting is SQL (``storage.queries``: ``results.db`` or PostgreSQL); rates and intervals are
``evaluation.population``'s, the same as ``score`` reports. Only the latest revision of
each run counts, and by default only the latest version of each policy: a re-scored
history is read under the version it was re-scored to, never double-counted.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from rampart_otel.audit.timespec import choose_buckets
from rampart_otel.errors import AuditError
from rampart_otel.evaluation.population import (
    UNCATEGORIZED,
    PopulationReport,
    PopulationSummary,
    summarize_counts,
)
from rampart_otel.render import safe_text
from rampart_otel.storage import queries as q
from rampart_otel.storage.audit_queries import Buckets, Filters, PolicyVersion, StoredResult
from rampart_otel.vocabulary import closest

STORED_NAMED = 10  # stored values an error lists


def select_versions(
    versions: dict[str, list[PolicyVersion]], policy: str | None, version: str | None
) -> list[PolicyVersion]:
    """The policy versions to report: the latest of each policy, unless one is named."""
    if policy is not None and policy not in versions:
        raise AuditError(_nothing_stored("--policy", f"policy {policy!r}", policy, versions))
    names = [policy] if policy is not None else sorted(versions)
    if version is None or not names:
        return [q.latest(versions[name]) for name in names]
    if len(names) > 1:
        raise AuditError(
            f"--policy-version needs --policy: verdicts of {len(names)} policies are stored"
        )
    for candidate in versions[names[0]]:
        if candidate.version == version:
            return [candidate]
    stored = ", ".join(v.version or "(none)" for v in versions[names[0]])
    raise AuditError(f"--policy-version: policy {names[0]!r} has no version {version!r} ({stored})")


def check_filters(db: q.Db, versions: list[PolicyVersion], filters: Filters) -> None:
    """Each ``--check`` and ``--service`` names something stored under the versions reported;
    else an AuditError with the closest stored values: a typo must not read as "no verdicts
    match"."""
    under = ", ".join(version.label() for version in versions)
    if filters.checks:
        checks = {check for version in versions for check in version.checks}
        for check in filters.checks:
            if check not in checks:
                what = f"check {check!r} under {under}"
                raise AuditError(_nothing_stored("--check", what, check, checks))
    if filters.services:
        services = {
            str(service)
            for version in versions
            for service, _, _ in q.counts(db, version, Filters(), "service")
            if service is not None
        }
        for service in filters.services:
            if service not in services:
                what = f"service {service!r} under {under}"
                raise AuditError(_nothing_stored("--service", what, service, services))


def _nothing_stored(option: str, what: str, value: str, stored: Iterable[str]) -> str:
    """``--check: no verdicts of check 'x' stored — did you mean 'y'? (stored: ...)``."""
    names = sorted(stored, key=lambda name: safe_text(name, 80))
    near = closest(value, names)
    shown = [safe_text(name, 80) for name in names[:STORED_NAMED]]
    more = f" and {len(names) - STORED_NAMED} more" if len(names) > STORED_NAMED else ""
    listing = f"stored: {', '.join(shown)}{more}" if names else "none stored"
    hint = f" — did you mean {' or '.join(repr(safe_text(n, 80)) for n in near)}?" if near else ""
    return f"{option}: no verdicts of {safe_text(what, 200)}{hint} ({listing})"


@dataclass(frozen=True, slots=True)
class CheckRow:
    version: PolicyVersion
    check: str
    summary: PopulationSummary

    @property
    def harm_category(self) -> str | None:
        info = self.version.checks.get(self.check)
        return info.harm_category if info else None

    @property
    def polarity(self) -> str | None:
        info = self.version.checks.get(self.check)
        return info.polarity if info else None


@dataclass(frozen=True, slots=True)
class Bucket:
    start: float
    end: float
    summary: PopulationSummary


@dataclass(slots=True)
class Aggregates:
    versions: list[PolicyVersion]
    filters: Filters
    buckets: Buckets
    first: float | None  # earliest / latest run time among the matching verdicts
    last: float | None
    overall: PopulationSummary
    by_check: list[CheckRow] = field(default_factory=list)
    by_service: list[tuple[str | None, PopulationSummary]] = field(default_factory=list)
    trend: list[Bucket] = field(default_factory=list)

    def population(self) -> PopulationReport:
        """``population_summary`` as report@1 has it: overall, per harm category, per check."""
        by_harm: dict[str, Counter[str]] = {}
        by_check: dict[str, Counter[str]] = {}
        for row in self.by_check:
            counted = _counter(row.summary)
            by_harm.setdefault(row.harm_category or UNCATEGORIZED, Counter()).update(counted)
            by_check.setdefault(row.check, Counter()).update(counted)
        return PopulationReport(
            overall=self.overall,
            by_harm_category={k: summarize_counts(v) for k, v in sorted(by_harm.items())},
            by_check={k: summarize_counts(v) for k, v in sorted(by_check.items())},
        )


def _counter(summary: PopulationSummary) -> Counter[str]:
    return Counter(
        safe=summary.safe,
        unsafe=summary.unsafe,
        undetermined=summary.undetermined,
        error=summary.error,
    )


def _grouped(rows: Iterable[tuple[object, str, int]]) -> dict[object, Counter[str]]:
    groups: dict[object, Counter[str]] = {}
    for key, status, count in rows:
        groups.setdefault(key, Counter())[status] += count
    return groups


def aggregate(db: q.Db, versions: list[PolicyVersion], filters: Filters, bucket: str) -> Aggregates:
    """Counts per check, per service and per time bucket over the selected versions."""
    ranges = [r for v in versions if (r := q.time_range(db, v, filters)) is not None]
    first = min((r[0] for r in ranges), default=None)
    last = max((r[1] for r in ranges), default=None)
    window_first = filters.since if filters.since is not None else first
    window_last = filters.until if filters.until is not None else last
    buckets = choose_buckets(bucket, window_first, window_last)
    by_check: list[CheckRow] = []
    services: dict[object, Counter[str]] = {}
    trend: dict[object, Counter[str]] = {}
    overall: Counter[str] = Counter()
    for version in versions:
        for check, counted in sorted(_grouped(q.counts(db, version, filters, "check")).items()):
            by_check.append(CheckRow(version, str(check), summarize_counts(counted)))
            overall.update(counted)
        for key, counted in _grouped(q.counts(db, version, filters, "service")).items():
            services.setdefault(key, Counter()).update(counted)
        for key, counted in _grouped(q.counts(db, version, filters, "bucket", buckets)).items():
            trend.setdefault(key, Counter()).update(counted)
    return Aggregates(
        versions=versions,
        filters=filters,
        buckets=buckets,
        first=first,
        last=last,
        overall=summarize_counts(overall),
        by_check=by_check,
        by_service=[
            (service, summarize_counts(counted))  # type: ignore[misc]
            for service, counted in sorted(services.items(), key=lambda kv: (kv[0] is None, kv[0]))
        ],
        trend=[
            Bucket(
                buckets.start(index),  # type: ignore[arg-type]
                buckets.start(index + 1),  # type: ignore[operator]
                summarize_counts(counted),
            )
            for index, counted in sorted(trend.items())
        ],
    )


def trend_by(
    db: q.Db,
    versions: list[PolicyVersion],
    filters: Filters,
    buckets: Buckets,
    key: str,
    names: Iterable[str],
) -> dict[str, list[Bucket]]:
    """The trend of each check (``key="check"``) or service (``"service"``) on ``buckets``."""
    series: dict[str, list[Bucket]] = {}
    for name in names:
        if key == "check":
            narrowed = replace(filters, checks=(name,))
        else:
            narrowed = replace(filters, services=(name,))
        trend: dict[object, Counter[str]] = {}
        for version in versions:
            counted_by_bucket = _grouped(q.counts(db, version, narrowed, "bucket", buckets))
            for index, counted in counted_by_bucket.items():
                trend.setdefault(index, Counter()).update(counted)
        series[name] = [
            Bucket(buckets.start(i), buckets.start(i + 1), summarize_counts(c))  # type: ignore[arg-type, operator]
            for i, c in sorted(trend.items())
        ]
    return series


def listed(
    db: q.Db, versions: list[PolicyVersion], filters: Filters, limit: int | None
) -> Iterator[StoredResult]:
    """The matching verdicts in run-time order: all of them, or the ``limit`` most recent."""
    if limit is None:
        streams = (q.listing(db, v, filters, None) for v in versions)
        yield from heapq.merge(*streams, key=lambda result: result.run_at)
        return
    if limit <= 0:
        return
    newest = [r for v in versions for r in q.listing(db, v, filters, limit)]
    newest.sort(key=_order)
    yield from newest[-limit:]


def _order(result: StoredResult) -> tuple[float, str, str, str]:
    return (result.run_at, result.run_id, result.policy, result.check_id)
