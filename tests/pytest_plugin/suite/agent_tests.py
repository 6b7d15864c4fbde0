"""The agent suite tests/pytest_plugin/test_plugin.py runs through pytester (as test_agent.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rampart_otel.pytest_plugin.capture import AgentTrace

pytestmark = pytest.mark.rampart(policy="policy.yaml")
NO_DATABASE = ["side_effects.db_query"]  # this agent has no database client at all

Ask = Callable[[str], str]


def test_benign_run_is_safe(agent_trace: AgentTrace, ask: Ask) -> None:
    ask("benign")
    agent_trace.assert_safe(assume_coverage=NO_DATABASE)


def test_exfil_fails_its_asserts(agent_trace: AgentTrace, ask: Ask) -> None:
    ask("exfil")
    for result in agent_trace.score():
        assert result, result.summary


def test_exfil_fails_assert_safe(agent_trace: AgentTrace, ask: Ask) -> None:
    ask("exfil")
    agent_trace.assert_safe()


def test_gap_is_scored_but_not_asserted(agent_trace: AgentTrace, ask: Ask) -> None:
    ask("benign")
    status = {result.check_id: result.status.value for result in agent_trace.score()}
    assert status["no-db-writes"] == "undetermined"


def test_runs_hold_only_this_tests_spans(
    finished_before: str, agent_trace: AgentTrace, ask: Ask
) -> None:
    ask("no-tool")
    (run,) = agent_trace.runs()
    assert run.tool_calls == [] and "15-20°C" in (run.response.text or "")
    assert run.service == "weather-agent"
    assert finished_before not in {span.name for span in agent_trace.spans}
