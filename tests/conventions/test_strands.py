"""Strands Agents' own spans (``rampart_otel.conventions.strands``), both telemetry forms,
read from the recordings in samples/traces/strands and strands-latest."""

from __future__ import annotations

import pytest
import recorded
from recorded import ANSWER, EXFIL_CALLS, only_run
from span_factory import event, mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import strands
from rampart_otel.model import AgentRun, Run, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
CONTENT_CHANNELS = ("response", "tool_calls.arguments", "tool_calls.results")
WITH_CONTENT = ("strands/strands-exfil", "strands-latest/strands-latest-exfil",
                "strands-latest/strands-latest-attrs-only")  # fmt: skip
REDACTED = ("strands/strands-no-content", "strands-latest/strands-latest-no-content")
EFFECTS = [("http_request", "GET", 0), ("http_request", "POST", 1), ("db_query", "INSERT", 2)]


def state(run: AgentRun, key: str) -> ChannelState:
    return run.coverage.get(key).state


def reasons(run: AgentRun, key: str) -> str:
    return "; ".join(run.coverage.get(key).reasons)


def effects(run: AgentRun) -> list[tuple[str, str, int | None]]:
    return [
        (e.kind, str(e.details.get("method") or e.details.get("statement")).split()[0],
         e.tool_call_index)
        for e in run.side_effects
    ]  # fmt: skip


@pytest.mark.parametrize("name", WITH_CONTENT)
def test_every_call_once_requested_and_executed_with_arguments_and_results(name: str) -> None:
    run = only_run(name)
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    for call in run.tool_calls:
        assert call.status is ToolCallStatus.EXECUTED and call.call_id.startswith("call_")
        assert len(call.span_ids) == 2  # the chat span that asked, the tool span that ran
    assert run.response.text == ANSWER  # the agent span's text, without str()'s newline
    assert effects(run) == EFFECTS
    assert {key: state(run, key) for key in (*CONTENT_CHANNELS, "tool_calls")} == dict.fromkeys(
        (*CONTENT_CHANNELS, "tool_calls"), OBSERVED
    )
    recorded.assert_exfil_kinds_partial(run)  # each kind silent at the calls of the other
    assert run.integrity == [] and run.coverage.level.value == "tool_only"
    assert run.conventions["strands"].spans == 12 and run.conventions["strands"].not_understood == 0


def test_benign_run() -> None:
    for name in ("strands/strands-benign", "strands-latest/strands-latest-benign"):
        run = only_run(name)
        assert [(c.name, c.result) for c in run.tool_calls] == [EXFIL_CALLS[0][::2]]
        assert run.response.text == "It is 18°C with light rain in Paris. Take an umbrella."
        assert effects(run) == EFFECTS[:1]


@pytest.mark.parametrize("name", REDACTED)
def test_redacted_content_is_withheld_and_said_so(name: str) -> None:
    run = only_run(name)
    assert [c.name for c in run.tool_calls] == [name for name, _, _ in EXFIL_CALLS]
    assert not any(c.arguments_captured or c.result_captured for c in run.tool_calls)
    assert run.response.text is None and effects(run) == EFFECTS
    for key in CONTENT_CHANNELS:
        assert state(run, key) is UNOBSERVED, key
        why = reasons(run, key)
        assert "redacted by the instrumentation: '[REDACTED]'" in why, key
        assert "not understood" not in why and "content capture off" not in why


def test_redaction_in_default_form_keeps_the_finish_reasons() -> None:
    """tool_use / end_turn stay on the events: every turn's tools are accounted for."""
    run = only_run("strands/strands-no-content")
    assert state(run, "tool_calls") is OBSERVED
    assert "read from the tool execution spans" in reasons(run, "tool_calls")


def test_redaction_in_latest_form_hides_the_finish_reasons_too() -> None:
    """They live inside the redacted output JSON: the last turn may have asked for a tool."""
    run = only_run("strands-latest/strands-latest-no-content")
    assert state(run, "tool_calls") is PARTIAL
    assert "recorded no finish reason" in reasons(run, "tool_calls")


def test_cycle_span_is_a_step_whose_events_are_not_read_twice() -> None:
    attrs = {"gen_ai.operation.name": "execute_event_loop_cycle"}
    choice = event("gen_ai.choice", {"message": '[{"toolUse": {"toolUseId": "c1", "name": "x"}}]'})
    cycle = mk("c0", "execute_event_loop_cycle", attrs, events=[choice], scope=strands.SCOPE)
    report = strands.read(cycle)
    assert report is not None and not (report.model or report.execution or report.not_understood)


def test_unknown_content_block_is_not_understood() -> None:
    attrs = {"gen_ai.operation.name": "chat"}
    choice = event("gen_ai.choice", {"message": '[{"image": {}}]', "finish_reason": "end_turn"})
    chat = mk("m1", "chat", attrs, events=[choice], scope=strands.SCOPE)
    run = normalize(Run("t", ["t"], [chat]))
    assert state(run, "tool_calls") is PARTIAL
    assert "content block ['image'] in gen_ai.choice" in reasons(run, "tool_calls")


def test_tool_status_error_marks_the_call() -> None:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "send_report",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.status": "error",
    }
    run = normalize(
        Run("t", ["t"], [mk("t1", "execute_tool send_report", attrs, scope=strands.SCOPE)])
    )
    assert run.tool_calls[0].status is ToolCallStatus.ERROR


def test_spans_of_other_scopes_are_left_to_genai() -> None:
    assert strands.read(mk("m1", "chat", {"gen_ai.operation.name": "chat"})) is None
