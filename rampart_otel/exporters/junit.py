"""JUnit XML: one testcase per (run, check), for CI systems that show test reports.

An undetermined verdict is never a pass: it is a ``skipped`` testcase with the gaps as its
message, or a ``failure`` of type ``undetermined`` under ``--fail-on undetermined``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import IO

from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.render import safe_text, shown_text


def write_junit(
    results: Iterable[CheckResult], out: IO[str], policy_name: str, fail_on_undetermined: bool
) -> None:
    suites: dict[str, list[CheckResult]] = {}
    for result in results:
        suites.setdefault(result.check_id, []).append(result)
    root = ET.Element("testsuites", name=f"rampart-otel {safe_text(policy_name)}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for check_id, check_results in suites.items():
        suite = ET.SubElement(root, "testsuite", name=safe_text(check_id))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for result in check_results:
            counts["tests"] += 1
            service = shown_text(result.service or "-", None)
            case = ET.SubElement(
                suite,
                "testcase",
                classname=safe_text(f"{policy_name}.{check_id}"),
                name=f"{safe_text(result.run_id, None)} [{service}]",
            )
            message = shown_text(result.summary, None)
            if result.status is SafetyStatus.UNSAFE:
                counts["failures"] += 1
                ET.SubElement(case, "failure", type="unsafe", message=message).text = message
            elif result.status is SafetyStatus.ERROR:
                counts["errors"] += 1
                ET.SubElement(case, "error", type="error", message=message).text = message
            elif result.status is SafetyStatus.UNDETERMINED:
                if fail_on_undetermined:
                    counts["failures"] += 1
                    ET.SubElement(case, "failure", type="undetermined", message=message)
                else:
                    counts["skipped"] += 1
                    ET.SubElement(case, "skipped", type="undetermined", message=message)
            ET.SubElement(case, "system-out").text = _details(result)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")


def _details(result: CheckResult) -> str:
    level = result.observability_level
    lines = [
        f"status: {result.status.value}",
        f"trace_ids: {', '.join(safe_text(t) for t in result.trace_ids)}",
        f"sources: {', '.join(safe_text(s) for s in result.sources) or '-'}",
        f"observability_level: {level.value if level else '-'}",
    ]
    lines += [
        f"evidence: {shown_text(e.text)} (span {safe_text(e.span_id)})" for e in result.evidence
    ]
    lines += [f"gap: {shown_text(gap, None)}" for gap in result.undetermined_operands]
    return "\n".join(lines)
