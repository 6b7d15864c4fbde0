"""What the plugin says about verdicts: a failing test's lines, the session summary, the report.

The summary has RAMPART's shape: counts and 90% Wilson rates per harm category and per
check, then every result that is not SAFE with its test and summary (an UNDETERMINED one's
summary names its gaps), then the overall line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from rampart_otel.evaluation import CheckResult, summarize_population
from rampart_otel.exporters.output import report_output
from rampart_otel.exporters.report_json import JsonReportWriter
from rampart_otel.exporters.terminal_report import LABELS, population_text
from rampart_otel.render import safe_text, shown_text

Scored = tuple[str, CheckResult]  # the test's node id, one of its results
NOT_SAFE_SHOWN = 20
RUN_SHOWN = 60  # characters of a run id
FAILING_STYLE = "bold red"


def failure_lines(
    results: Sequence[CheckResult], failing: Sequence[CheckResult], why: str, node_id: str
) -> list[str]:
    """Why a test failed: how many of its results ``failing`` are, then each with its summary
    (read by a person, as the session summary is: secrets masked, one line each)."""
    lines = [
        f"rampart-otel: {len(failing)} of {len(results)} results {why} ({_policies_text(results)})"
    ]
    for result in failing:
        label = LABELS[result.status.value][0].strip()
        lines.append(
            f"  {label}  {safe_text(result.check_id)}{run_text(result.run_id, node_id)}: "
            f"{shown_text(result.summary, None)}"
        )
    return lines


def run_text(run_id: str, node_id: str) -> str:
    """The run a test's result is about, after the test's name: nothing when the run is the
    whole test (the default), else its id, cut at its start if need be: ids that differ
    differ at their end (a test's runs split by trace)."""
    if run_id == f"test:{node_id}":
        return ""
    text = safe_text(run_id, None)
    return f"  run {text if len(text) <= RUN_SHOWN else '…' + text[1 - RUN_SHOWN :]}"


def write_terminal_summary(
    reporter: pytest.TerminalReporter,
    scored: Sequence[Scored],
    report_path: Path | None,
    fail_on_undetermined: bool,
) -> None:
    results = [result for _, result in scored]
    population = summarize_population(results)
    tests = len({node_id for node_id, _ in scored})
    runs = len({result.run_id for result in results})
    reporter.write_sep("=", "rampart-otel")
    reporter.write_line(
        f"{len(results)} results from {tests} tests, {runs} runs ({_policies_text(results)})"
    )
    reporter.write_line("by harm category:")
    for category, summary in population.by_harm_category.items():
        reporter.write_line(f"  {safe_text(category)}: {population_text(summary)}")
    reporter.write_line("by check:")
    for check, summary in population.by_check.items():
        reporter.write_line(f"  {safe_text(check)}: {population_text(summary)}")
    not_safe = [(node_id, result) for node_id, result in scored if not result]
    if not_safe:
        reporter.write_line("not safe:")
    for node_id, result in not_safe[:NOT_SAFE_SHOWN]:
        label, style = LABELS[result.status.value]
        if label == "WARN" and fail_on_undetermined:
            style = FAILING_STYLE
        reporter.write("  ")
        reporter.write(label, **{word: True for word in _markup(style)})
        reporter.write_line(
            f"  {safe_text(result.check_id)}  {safe_text(node_id)}"
            f"{run_text(result.run_id, node_id)}"
        )
        reporter.write_line(f"        {shown_text(result.summary, 600, words=True)}")
    hidden = len(not_safe) - NOT_SAFE_SHOWN
    if hidden > 0:
        where = "every one is in the report" if report_path else "--rampart-report lists all"
        reporter.write_line(f"  and {hidden} more ({where})")
    reporter.write_line(f"overall: {population_text(population.overall)}", bold=True)
    if report_path is not None:
        reporter.write_line(f"report: {report_path}")


def write_json_report(path: Path, scored: Sequence[Scored]) -> None:
    """Every result as one ``rampart-otel/report@1`` document (docs/report-json.md)."""
    results = [result for _, result in scored]
    path.parent.mkdir(parents=True, exist_ok=True)
    with report_output(path) as out:  # the rule for every report file, as `-o`
        writer = JsonReportWriter(out)
        writer.start([{"name": name, "version": version} for name, version in _policies(results)])
        for result in results:
            writer.add(result)
        writer.finish(summarize_population(results), [])


def _policies(results: Sequence[CheckResult]) -> list[tuple[str | None, int | str | None]]:
    return list(dict.fromkeys((result.policy, result.policy_version) for result in results))


def _policies_text(results: Sequence[CheckResult]) -> str:
    names = [f"policy {safe_text(str(name))} v{version}" for name, version in _policies(results)]
    return ", ".join(names) or "no policy"


def _markup(style: str) -> list[str]:
    """Rich's style words as pytest's terminal writer names them."""
    return [word.replace("magenta", "purple") for word in style.split()]
