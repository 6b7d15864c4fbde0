"""The ``rampart-otel/report@1`` JSON report (docs/report-json.md).

Results are written as they are scored, so a long input never holds the whole document;
the population summary and the input errors close it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import IO, Any

from rampart_otel.channels import Coverage
from rampart_otel.evaluation import CheckResult, PopulationReport, SafetyStatus
from rampart_otel.evaluation.population import population_json
from rampart_otel.exporters.serialize import (
    coverage_json,
    coverage_to_dict,
    dumps_jsonable,
    evidence_json,
    ns_to_iso,
    strings_json,
)
from rampart_otel.model import InputError

REPORT_SCHEMA = "rampart-otel/report@1"
_STATUS_JSON = {status: json.dumps(status.value) for status in SafetyStatus}


def check_result_to_dict(
    result: CheckResult, *, coverage: bool = True, coverage_dict: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The result's entry in ``results``; ``coverage=False`` leaves that one key out.

    ``coverage_dict``: ``coverage_to_dict(result.coverage)`` when the caller has it already.
    """
    if coverage_dict is None:
        coverage_dict = coverage_to_dict(result.coverage) if coverage and result.coverage else {}
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
        "coverage": coverage_dict,
        "assumed_channels": {key: src.value for key, src in result.assumed_channels.items()},
        "harm_category": result.harm_category,
        "service": result.service,
        "started_at": ns_to_iso(result.started_at_ns),
        "sources": list(result.sources),
        "rationale": result.rationale,
        "error": result.error,
    }
    if not coverage:
        del document["coverage"]
    return document


def stored_entries(results: list[CheckResult], *, revision: int) -> list[dict[str, Any]]:
    """:func:`stored_documents` without their JSON text (a store that encodes them itself):
    each run's coverage converted once, no text built."""
    snapshot: Coverage | None = None
    covered: dict[str, Any] = {}
    stored = []
    for result in results:
        if result.coverage is not snapshot:
            snapshot = result.coverage
            covered = coverage_to_dict(snapshot) if snapshot else {}
        document = check_result_to_dict(result, coverage_dict=covered)
        document["revision"] = revision
        document["policy"] = {"name": result.policy, "version": result.policy_version}
        stored.append(document)
    return stored


def stored_documents(
    results: list[CheckResult], *, revision: int
) -> list[tuple[dict[str, Any], str]]:
    """Each result of one run revision as the collector stores it (its report entry, the
    revision, its policy), and that document's JSON text, encoded as a report writes it."""
    entries = JsonReportWriter(io.StringIO())
    stored = []
    for result, document in zip(results, stored_entries(results, revision=revision), strict=True):
        text = (
            f'{entries.entry(result)[:-1]}, "revision": {dumps_jsonable(revision)}'
            f', "policy": {dumps_jsonable(document["policy"])}}}'
        )
        stored.append((document, text))
    return stored


def _status_json(status: SafetyStatus) -> str:
    return _STATUS_JSON[status] if type(status) is SafetyStatus else dumps_jsonable(status.value)


def input_error_to_dict(error: InputError) -> dict[str, str]:
    return {"location": error.location, "message": error.message}


class JsonReportWriter:
    """Streams one report: ``start``, ``add`` per result, ``finish``.

    Each entry is written as the text ``json.dumps`` gives for :func:`check_result_to_dict`
    (with :func:`jsonable` for anything not plain JSON), assembled from separately dumped
    values: dumping a dict with string keys is the dumps of its values joined with the same
    separators. The values the results of one run share (ids, coverage, service, start) and
    those of one check (id, polarity, harm category) are dumped once and reused while they
    stay equal; only the verdict's own values are dumped per result.
    """

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0
        self._run_key: tuple[Any, ...] | None = None
        self._run_coverage: Coverage | None = None  # the results of one run share one snapshot
        self._run_head = ""  # '{"run_id": ..., "trace_ids": ...'
        self._run_middle = ""  # ', "observability_level": ..., "coverage": ...'
        self._run_tail = ""  # ', "service": ..., "started_at": ...'
        self._checks: dict[tuple[Any, ...], tuple[str, str]] = {}

    def start(self, policies: list[dict[str, Any]]) -> None:
        header = json.dumps({"schema": REPORT_SCHEMA, "policies": policies})
        self.out.write(header[:-1] + ', "results": [')

    def add(self, result: CheckResult) -> None:
        self.out.write((",\n" if self.count else "\n") + self.entry(result))
        self.count += 1

    def entry(self, result: CheckResult) -> str:
        """The result's entry, as ``add`` writes it (without the separator before it)."""
        parts: list[str] = []
        self._entry_parts(result, parts)
        return "".join(parts)

    def entries(self, results: Sequence[CheckResult]) -> str:
        """The results' entries, each after ``",\n"`` as ``add`` writes it: joined once (a
        run's entries each repeat its coverage, the most of a report's bytes)."""
        parts: list[str] = []
        for result in results:
            parts.append(",\n")
            self._entry_parts(result, parts)
        return "".join(parts)

    def _entry_parts(self, result: CheckResult, parts: list[str]) -> None:
        level = result.observability_level
        coverage = result.coverage
        run_key = (
            result.run_id,
            result.trace_ids,
            level,
            result.service,
            result.started_at_ns,
            result.sources,
        )
        if run_key != self._run_key or coverage is not self._run_coverage:
            self._run_key = (*run_key[:1], list(result.trace_ids), *run_key[2:-1])
            self._run_key += (list(result.sources),)
            self._run_coverage = coverage
            self._run_head = (
                f'{{"run_id": {dumps_jsonable(result.run_id)}, '
                f'"trace_ids": {strings_json(result.trace_ids)}'
            )
            covered = coverage_json(coverage)
            self._run_middle = (
                f', "observability_level": {dumps_jsonable(level.value if level else None)}'
                f', "coverage": {covered}'
            )
            self._run_tail = (
                f', "service": {dumps_jsonable(result.service)}'
                f', "started_at": {dumps_jsonable(ns_to_iso(result.started_at_ns))}'
                f', "sources": {strings_json(result.sources)}'
            )
        check_key = (result.check_id, result.polarity, result.harm_category)
        check = self._checks.get(check_key)
        if check is None:
            check = self._checks[check_key] = (
                f', "check": {dumps_jsonable(result.check_id)}'
                f', "polarity": {dumps_jsonable(result.polarity)}',
                f', "harm_category": {dumps_jsonable(result.harm_category)}',
            )
        evidence = result.evidence
        operands = result.undetermined_operands
        assumed = result.assumed_channels
        error = result.error
        parts.extend(
            (
                self._run_head,
                check[0],
                ', "status": ',
                _status_json(result.status),
                ', "summary": ',
                dumps_jsonable(result.summary),
                ', "evidence": ',
                evidence_json(evidence) if evidence else "[]",
                ', "undetermined_operands": ',
                strings_json(operands) if operands else "[]",
                self._run_middle,
                ', "assumed_channels": ',
                dumps_jsonable({key: src.value for key, src in assumed.items()})
                if assumed
                else "{}",
                check[1],
                self._run_tail,
                ', "rationale": ',
                dumps_jsonable(result.rationale),
                ', "error": ',
                "null" if error is None else dumps_jsonable(error),
                "}",
            )
        )

    def add_rendered(self, text: str, count: int) -> None:
        """Entries another writer rendered, each starting with ``",\\n"``: a worker's output."""
        if not count:
            return
        self.out.write(text if self.count else text[1:])
        self.count += count

    def finish(
        self,
        population: PopulationReport,
        errors: list[InputError],
        judge: dict[str, int] | None = None,
    ) -> None:
        """``judge``: the judge's calls, tokens, cache hits and failures, when one was asked."""
        self.out.write('\n], "population_summary": ')
        self.out.write(population_json(population))
        self.out.write(', "input_errors": ')
        self.out.write(json.dumps([input_error_to_dict(error) for error in errors]))
        if judge is not None:
            self.out.write(', "judge": ')
            self.out.write(json.dumps(judge))
        self.out.write("}\n")


RUNS_SCHEMA = "rampart-otel/runs@1"


def runs_header(policies: list[dict[str, Any]]) -> str:
    """The first line of a runs@1 report (docs/report-json.md)."""
    return json.dumps({"schema": RUNS_SCHEMA, "policies": policies}) + "\n"


def run_line(results: list[CheckResult]) -> str:
    """One run's line of a runs@1 report: what its results share (ids, service, start,
    sources, level, coverage) once, then each result's own values, as report@1 words
    them. A result whose coverage differs from the run's first (another policy's
    assumptions) carries its own."""
    first = results[0]
    level = first.observability_level
    coverage = first.coverage
    head = (
        f'{{"run": {{"run_id": {dumps_jsonable(first.run_id)}'
        f', "trace_ids": {strings_json(first.trace_ids)}'
        f', "service": {dumps_jsonable(first.service)}'
        f', "started_at": {dumps_jsonable(ns_to_iso(first.started_at_ns))}'
        f', "sources": {strings_json(first.sources)}'
        f', "observability_level": {dumps_jsonable(level.value if level else None)}'
        f', "coverage": {coverage_json(coverage)}}}, "results": ['
    )
    entries = []
    for result in results:
        own = (
            "" if result.coverage is coverage else f', "coverage": {coverage_json(result.coverage)}'
        )
        assumed = result.assumed_channels
        entries.append(
            "".join(
                (
                    f'{{"check": {dumps_jsonable(result.check_id)}',
                    f', "polarity": {dumps_jsonable(result.polarity)}',
                    f', "harm_category": {dumps_jsonable(result.harm_category)}',
                    ', "status": ',
                    _status_json(result.status),
                    ', "summary": ',
                    dumps_jsonable(result.summary),
                    ', "evidence": ',
                    evidence_json(result.evidence) if result.evidence else "[]",
                    ', "undetermined_operands": ',
                    strings_json(result.undetermined_operands)
                    if result.undetermined_operands
                    else "[]",
                    ', "assumed_channels": ',
                    dumps_jsonable({key: src.value for key, src in assumed.items()})
                    if assumed
                    else "{}",
                    own,
                    ', "rationale": ',
                    dumps_jsonable(result.rationale),
                    ', "error": ',
                    "null" if result.error is None else dumps_jsonable(result.error),
                    "}",
                )
            )
        )
    return head + ", ".join(entries) + "]}\n"


def runs_footer(
    population: PopulationReport, errors: list[InputError], judge: dict[str, int] | None = None
) -> str:
    """The last line of a runs@1 report: the totals, the input errors (and the judge's
    cost, when one was asked)."""
    text = (
        f'{{"population_summary": {population_json(population)}'
        f', "input_errors": {json.dumps([input_error_to_dict(error) for error in errors])}'
    )
    if judge is not None:
        text += f', "judge": {json.dumps(judge)}'
    return text + "}\n"
