"""Reasons read once and whole (exporters.reasons): `score -v` puts each gap's fix on a line
of its own and never cuts it; the HTML run view says each reason once. On the samples."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from rampart_otel.engine import score_run_with_view
from rampart_otel.evaluation import SafetyStatus, load_policy
from rampart_otel.evaluation.population import summarize_population
from rampart_otel.exporters.html_report import run_view
from rampart_otel.exporters.reasons import undetermined
from rampart_otel.exporters.terminal_report import write_terminal_report
from rampart_otel.reading import ReadStats, runs
from rampart_otel.render import shown_text

REPO = Path(__file__).resolve().parents[2]
POLICY = load_policy(REPO / "samples" / "policy.yaml")


@pytest.fixture(scope="module")
def scored() -> list:
    """(agent run, results) of every sample run."""
    return [
        score_run_with_view(run, [POLICY])
        for run in runs([REPO / "samples" / "traces"], ReadStats())
    ]


def test_verbose_puts_every_fix_on_its_own_line_whole(scored: list) -> None:
    results = [result for _, run_results in scored for result in run_results]
    out = io.StringIO()
    console = Console(file=out, width=100, highlight=False, soft_wrap=True)
    write_terminal_report(results, summarize_population(results), [], console, "title")
    printed = out.getvalue().splitlines()
    fixes = [
        gap.fix
        for result in results
        if result.status is SafetyStatus.UNDETERMINED
        for gap in undetermined(result).gaps
        if gap.fix
    ]
    assert len(fixes) > 100
    fix_lines = [line.strip() for line in printed if line.strip().startswith("to close it: ")]
    assert sorted(fix_lines) == sorted(f"to close it: {shown_text(fix, None)}" for fix in fixes)
    assert not any(line.endswith("…") for line in fix_lines)
    # No reason line carries the fix as well: it is said once, on its own line.
    carried = [line for line in printed if "to close it:" in line]
    assert all(line.strip().startswith("to close it: ") for line in carried)


def test_the_html_run_view_says_each_reason_once(scored: list) -> None:
    checked = 0
    for agent_run, results in scored:
        if agent_run is None:
            continue
        view = run_view(agent_run, results)
        for result in view["results"]:
            if result["status"] != "undetermined":
                continue
            checked += 1
            assert result["rationale"] is None
            shown_once = " ".join([result["summary"], *result["operands"]])
            for gap in result["gaps"]:
                (channel,) = [c for c in view["coverage"] if c["channel"] == gap]
                for reason in channel["reasons"]:
                    assert reason not in shown_once  # said in the coverage table only
                assert channel["fix"] is None or channel["fix"] not in shown_once
        for channel in view["coverage"]:
            assert not any(reason.startswith("to close it: ") for reason in channel["reasons"])
    assert checked > 100
