"""The ``rampart-otel/report@1`` JSON report (docs/report-json.md).

Results are written as they are scored, so a long input never holds the whole document;
the population summary and the input errors close it.
"""

from __future__ import annotations

import json
from typing import IO, Any

from rampart_otel.evaluation import CheckResult, PopulationReport
from rampart_otel.exporters.serialize import coverage_to_dict, dumps_jsonable, ns_to_iso
from rampart_otel.model import Coverage, InputError

REPORT_SCHEMA = "rampart-otel/report@1"


def check_result_to_dict(result: CheckResult, coverage: bool = True) -> dict[str, Any]:
    """The result's entry in ``results``; ``coverage=False`` leaves that one key out."""
    document = {
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
        "coverage": coverage_to_dict(result.coverage) if coverage and result.coverage else {},
        "assumed_channels": {key: src.value for key, src in result.assumed_channels.items()},
        "harm_category": result.harm_category,
        "service": result.service,
        "started_at": ns_to_iso(result.started_at_ns),
        "rationale": result.rationale,
        "error": result.error,
    }
    if not coverage:
        del document["coverage"]
    return document


# The keys check_result_to_dict puts after "coverage", in order.
_AFTER_COVERAGE = (
    "assumed_channels",
    "harm_category",
    "service",
    "started_at",
    "rationale",
    "error",
)


def input_error_to_dict(error: InputError) -> dict[str, str]:
    return {"location": error.location, "message": error.message}


class JsonReportWriter:
    """Streams one report: ``start``, ``add`` per result, ``finish``."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0
        # The results of one run share one coverage snapshot: it is serialized once.
        self._coverage: Coverage | None = None
        self._coverage_json = "{}"

    def start(self, policies: list[dict[str, Any]]) -> None:
        header = json.dumps({"schema": REPORT_SCHEMA, "policies": policies})
        self.out.write(header[:-1] + ', "results": [')

    def add(self, result: CheckResult) -> None:
        self.out.write(",\n" if self.count else "\n")
        document = check_result_to_dict(result, coverage=False)
        coverage = result.coverage
        if coverage is not self._coverage:
            self._coverage = coverage
            self._coverage_json = dumps_jsonable(coverage_to_dict(coverage) if coverage else {})
        # Spliced where check_result_to_dict puts it: the same text as dumping it whole.
        after = {key: document.pop(key) for key in _AFTER_COVERAGE}
        self.out.write(dumps_jsonable(document)[:-1])
        self.out.write(', "coverage": ')
        self.out.write(self._coverage_json)
        self.out.write(", ")
        self.out.write(dumps_jsonable(after)[1:])
        self.count += 1

    def finish(self, population: PopulationReport, errors: list[InputError]) -> None:
        self.out.write('\n], "population_summary": ')
        self.out.write(population.model_dump_json())
        self.out.write(', "input_errors": ')
        self.out.write(json.dumps([input_error_to_dict(error) for error in errors]))
        self.out.write("}\n")
