"""``audit --html``: verdict rates per check and per service over time, as one page.

The data is what ``audit --json`` reports (aggregates over the current verdicts), plus a
trend per check and per service, and the most recent results that were not safe with
their stored documents. Rendered by the same path as the score report (``html_page``):
Jinja2 with autoescape, data as JSON in a script data block, text set with textContent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import IO, Any

from rampart_otel.audit.aggregate import Aggregates, Bucket, trend_by
from rampart_otel.audit.report import aggregates_to_dict
from rampart_otel.audit.timespec import iso
from rampart_otel.exporters.html_page import (
    error_items,
    page_assets,
    render_page,
    script_json,
    shown_data,
)
from rampart_otel.model import InputError
from rampart_otel.render import safe_text, shown
from rampart_otel.storage.audit_queries import PolicyVersion, StoredResult
from rampart_otel.storage.queries import Db

SERIES_LIMIT = 24  # checks or services charted one by one; the rest are in the tables


def _buckets(trend: list[Bucket]) -> list[dict[str, Any]]:
    return [
        {"start": iso(b.start), "end": iso(b.end), **dataclasses.asdict(b.summary)} for b in trend
    ]


def write_audit_html(
    out: IO[str],
    db: Db,
    data_dir: Any,
    stored: dict[str, list[PolicyVersion]],
    aggregates: Aggregates,
    recent: Iterable[StoredResult],
    *,
    errors: Iterable[InputError] = (),
) -> None:
    checks = list(dict.fromkeys(row.check for row in aggregates.by_check))[:SERIES_LIMIT]
    services = [s for s, _ in aggregates.by_service if s is not None][:SERIES_LIMIT]
    versions, filters, buckets = aggregates.versions, aggregates.filters, aggregates.buckets
    by_check = trend_by(db, versions, filters, buckets, "check", checks)
    by_service = trend_by(db, versions, filters, buckets, "service", services)
    recent_rows = list(recent)
    document: dict[str, Any] = {
        "aggregates": aggregates_to_dict(data_dir, stored, aggregates, len(recent_rows), None),
        "series": {
            "overall": _buckets(aggregates.trend),
            "check": {name: _buckets(trend) for name, trend in by_check.items()},
            "service": {shown(name): _buckets(trend) for name, trend in by_service.items()},
        },
        "recent": [
            {
                "run_id": r.run_id,
                "revision": r.revision,
                "policy": r.policy,
                "check": r.check_id,
                "status": r.status,
                "service": _shown(r.service),
                "run_at": iso(r.run_at),
                "result": shown_data(r.result),  # secrets masked unless --show-secrets
            }
            for r in recent_rows
        ],
        "input_errors": error_items(errors),
    }
    for row in document["aggregates"]["by_service"]:  # the JSON report's rows: raw there
        row["service"] = _shown(row["service"])
    render_page(
        "audit.html.j2",
        out,
        title=f"rampart-otel audit: {safe_text(str(data_dir), 200)}",
        assets=page_assets("audit.js"),
        data=script_json(document),
    )


def _shown(service: str | None) -> str | None:
    """A service name as the page shows it: a secret-looking value masked (``shown``)."""
    return None if service is None else shown(service)
