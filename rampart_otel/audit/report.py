"""``audit --json``: the ``rampart-otel/report@1`` document with an ``aggregates`` section.

``results`` lists the stored result documents (report@1 entries plus ``revision`` and
``policy``), streamed one by one so ``--limit all`` over a large store holds none of them;
``population_summary`` covers every matching verdict, not only those listed
(docs/audit.md has the ``aggregates`` schema).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from rampart_otel.audit.aggregate import Aggregates
from rampart_otel.audit.timespec import iso
from rampart_otel.evaluation.population import PopulationSummary, population_json
from rampart_otel.exporters.report_json import REPORT_SCHEMA, input_error_to_dict
from rampart_otel.model import InputError
from rampart_otel.storage.audit_queries import PolicyVersion, StoredResult

TIME_BASIS = "run_start"


def write_audit_json(
    out: IO[str],
    data_dir: Path | str,
    stored: dict[str, list[PolicyVersion]],
    aggregates: Aggregates,
    results: Iterable[StoredResult],
    limit: int | None,
    *,
    errors: Iterable[InputError] = (),
) -> int:
    """Write the report; the number of results listed."""
    policies = [{"name": v.policy, "version": v.value} for v in aggregates.versions]
    header = json.dumps({"schema": REPORT_SCHEMA, "policies": policies})
    out.write(header[:-1] + ', "results": [')
    listed = 0
    for result in results:
        out.write(",\n" if listed else "\n")
        out.write(json.dumps(result.result))
        listed += 1
    out.write('\n], "population_summary": ')
    out.write(population_json(aggregates.population()))
    out.write(', "input_errors": ')
    out.write(json.dumps([input_error_to_dict(error) for error in errors]))
    out.write(', "aggregates": ')
    document = aggregates_to_dict(data_dir, stored, aggregates, listed, limit)
    out.write(json.dumps(document))
    out.write("}\n")
    return listed


def _summary(summary: PopulationSummary) -> dict[str, Any]:
    return dataclasses.asdict(summary)


def aggregates_to_dict(
    data_dir: Path | str,
    stored: dict[str, list[PolicyVersion]],
    aggregates: Aggregates,
    listed: int,
    limit: int | None,
) -> dict[str, Any]:
    filters = aggregates.filters
    selected = {(v.policy, v.version) for v in aggregates.versions}
    return {
        "data_dir": str(data_dir),
        "time_basis": TIME_BASIS,
        "filters": {
            "since": iso(filters.since),
            "until": iso(filters.until),
            "service": list(filters.services),
            "check": list(filters.checks),
            "status": list(filters.statuses),
        },
        "policies": [
            {
                "name": v.policy,
                "version": v.value,
                "selected": (v.policy, v.version) in selected,
                "first_scored_at": iso(v.first_scored_at),
            }
            for name in sorted(stored)
            for v in stored[name]
        ],
        "window": {"first": iso(aggregates.first), "last": iso(aggregates.last)},
        "results": {"matching": aggregates.overall.total, "listed": listed, "limit": limit},
        "overall": _summary(aggregates.overall),
        "by_check": [
            {
                "policy": {"name": row.version.policy, "version": row.version.value},
                "check": row.check,
                "polarity": row.polarity,
                "harm_category": row.harm_category,
                **_summary(row.summary),
            }
            for row in aggregates.by_check
        ],
        "by_service": [
            {"service": service, **_summary(summary)} for service, summary in aggregates.by_service
        ],
        "trend": {
            "bucket": aggregates.buckets.name,
            "buckets": [
                {"start": iso(b.start), "end": iso(b.end), **_summary(b.summary)}
                for b in aggregates.trend
            ],
        },
    }
