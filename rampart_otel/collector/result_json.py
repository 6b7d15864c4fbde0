"""A check result as one entry of the ``rampart-otel/report@1`` ``results`` list.

Stored verbatim in ``results.db``, so ``audit --json`` prints what ``score --format json``
would have said about the same run. Kept here until the report exporter lands; then this
delegates to it.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.evaluation import CheckResult
from rampart_otel.exporters.serialize import coverage_to_dict, ns_to_iso

REPORT_SCHEMA = "rampart-otel/report@1"


def check_result_to_dict(result: CheckResult) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "trace_ids": list(result.trace_ids),
        "check": result.check_id,
        "polarity": result.polarity,
        "status": result.status.value,
        "summary": result.summary,
        "evidence": [
            {"trace_id": item.trace_id, "span_id": item.span_id, "text": item.text}
            for item in result.evidence
        ],
        "undetermined_operands": list(result.undetermined_operands),
        "observability_level": (
            result.observability_level.value if result.observability_level else None
        ),
        "coverage": coverage_to_dict(result.coverage) if result.coverage else {},
        "harm_category": result.harm_category,
        "service": result.service,
        "started_at": ns_to_iso(result.started_at_ns),
        "assumed_channels": {key: src.value for key, src in result.assumed_channels.items()},
        "rationale": result.rationale,
        "error": result.error,
    }
