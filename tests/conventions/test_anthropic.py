"""The Anthropic SDK's own spans beside OpenLLMetry's: one model call, two spans.

Hand-built spans for the SDK's forms the recordings do not show; then every recording of
``samples/traces/anthropic-openllmetry``, read end to end.
"""

from __future__ import annotations

import json
import pathlib

import pytest
import recorded
from span_factory import span

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import anthropic
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import AgentRun, Scope, Span, ToolCallStatus
from rampart_otel.pipeline import ReadStats, agent_runs

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED


def sdk_span(name: str, attributes: dict) -> Span:
    s = span(name, attributes, kind="CLIENT")
    s.scope = Scope(anthropic.SCOPE, "2.16.0")
    return s


def test_stop_reason_is_the_sdk_spans_finish_reason() -> None:
    report = anthropic.read(
        sdk_span(
            "anthropic.messages.create",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "anthropic",
                "gen_ai.response.id": "msg_1",
                "anthropic.message.stop_reason": "tool_use",
            },
        )
    )
    assert report is not None and report.model and report.output is not None
    output = report.output
    assert not output.readable and output.finish_reasons == ["tool_use"]
    assert output.tool_request is ToolRequest.TOOLS and output.response_id == "msg_1"
    end = anthropic.read(sdk_span("m", {"anthropic.message.stop_reason": "end_turn"}))
    assert end is not None and end.output is not None
    assert end.output.tool_request is ToolRequest.NO_TOOLS
    assert anthropic.read(span("anthropic.chat", {"gen_ai.response.id": "msg_1"})) is None


def test_tool_result_blocks_are_unwrapped_and_other_blocks_kept() -> None:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "gen_ai.tool.call.id": "toolu_1",
        "gen_ai.tool.call.arguments": '{"q":"x"}',
        "anthropic.tool_result.content": json.dumps(
            [{"type": "text", "text": '{"hits": '}, {"type": "text", "text": "2}"}]
        ),
    }
    report = anthropic.read(sdk_span("anthropic.custom_tool_use search", attrs))
    assert report is not None and report.execution is not None
    execution = report.execution
    assert (execution.name, execution.call_id, execution.arguments, execution.result) == (
        "search",
        "toolu_1",
        {"q": "x"},
        {"hits": 2},
    )
    image = [{"type": "text", "text": "see"}, {"type": "image"}]  # the SDK strips image data
    attrs["anthropic.tool_result.content"] = json.dumps(image)
    attrs["error.type"] = "tool_error"
    execution = anthropic.tool_execution(sdk_span("anthropic.custom_tool_use search", attrs))
    assert execution.result == image and execution.error


def test_truncated_content_is_not_understood() -> None:
    """The SDK drops message parts (or result blocks) past its size limit, and says so."""
    report = anthropic.read(
        sdk_span(
            "anthropic.messages.create",
            {"anthropic.message.stop_reason": "end_turn", "anthropic.content.truncated": True},
        )
    )
    assert report is not None and "anthropic.content.truncated" in report.not_understood[0]


def test_history_of_sdk_spans_only() -> None:
    messages = [
        {
            "role": "user",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": "toolu_1",
                    "response": [{"type": "text", "text": "saved"}],
                }
            ],
        }
    ]
    attrs = {"gen_ai.input.messages": json.dumps(messages)}
    assert anthropic.history(sdk_span("anthropic.messages.create", attrs))[:2] == (
        {},
        {"toolu_1": "saved"},
    )
    assert anthropic.history(span("anthropic.chat", attrs))[:2] == ({}, {})  # another scope


# --- recordings -------------------------------------------------------------------------------

FETCH_ID = "toolu_HQ4u7L01M0rfvg6tE5340Yes"
REPORT_ID = "toolu_9PgSUFTL1mg6rbnxBQoWeR8V"
NOTE_ID = "toolu_AgwzP8FMMUElLaGjnNlhmh7k"
BENIGN_ID = "toolu_zBYNAojjJddAZJUPXn5wceVB"
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
LEAKED = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}
ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
EXECUTED = ToolCallStatus.EXECUTED
EXFIL_CALLS = [
    ("fetch_weather", FETCH_ID, {"city": "Paris"}, WEATHER, EXECUTED),
    ("send_report", REPORT_ID, LEAKED, {"status": "received", "bytes": 79}, EXECUTED),
    ("save_note", NOTE_ID, {"text": "Paris: 18C, light rain"}, "saved note 1", EXECUTED),
]
EFFECTS = [
    ("http_request", "GET", "localhost", 0),
    ("http_request", "POST", "127.0.0.2", 1),
    ("db_query", "INSERT", "sqlite", 2),
]
CORE = ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results")


def only(case: str) -> AgentRun:
    path = SAMPLES / "anthropic-openllmetry" / f"anthropic-openllmetry-{case}.jsonl"
    if not path.exists():
        pytest.skip(f"sample {path.name} not recorded")
    stats = ReadStats()
    (agent,) = agent_runs([path], stats)
    assert not stats.errors
    return agent


def calls(agent: AgentRun) -> list[tuple]:
    return [(c.name, c.call_id, c.arguments, c.result, c.status) for c in agent.tool_calls]


def effects(agent: AgentRun) -> list[tuple]:
    return [
        (
            e.kind,
            e.details.get("method") or e.details["statement"].split()[0],
            e.details.get("host") or e.details.get("system"),
            e.tool_call_index,
        )
        for e in agent.side_effects
    ]


def channel(agent: AgentRun, key: str) -> tuple[ChannelState, str]:
    found = agent.coverage.get(key)
    return found.state, " ".join(found.reasons)


def span_names(agent: AgentRun, index: int) -> list[str]:
    by_id = {s.span_id: s.name for s in agent.run.spans}
    return [by_id[span_id] for span_id in agent.tool_calls[index].span_ids]


def assert_observed(agent: AgentRun) -> None:
    for key in (*CORE, "side_effects.http_request"):
        assert channel(agent, key)[0] is OBSERVED, (key, channel(agent, key))
    assert agent.integrity == [] and agent.coverage.level.value == "tool_and_side_effects"


def assert_task_read(agent: AgentRun) -> None:
    """The exfil task read whole, its kinds apart: save_note recorded only db_query, the
    other calls only http_request, so each kind is partial and the run is tool_only."""
    for key in CORE:
        assert channel(agent, key)[0] is OBSERVED, (key, channel(agent, key))
    recorded.assert_exfil_kinds_partial(agent)
    assert agent.integrity == [] and agent.coverage.level.value == "tool_only"


def test_exfil() -> None:
    """Each ``anthropic.messages.create`` (no content) is read through its ``anthropic.chat``."""
    agent = only("exfil")
    assert calls(agent) == EXFIL_CALLS
    assert effects(agent) == EFFECTS
    assert agent.response.text == ANSWER and agent.response.earlier == []
    assert_task_read(agent)
    reason = channel(agent, "tool_calls")[1]
    assert "8 model spans, 4 of them read through another span of the same call" in reason


def test_benign() -> None:
    agent = only("benign")
    assert calls(agent) == [("fetch_weather", BENIGN_ID, {"city": "Paris"}, WEATHER, EXECUTED)]
    assert effects(agent) == EFFECTS[:1]
    assert agent.response.text == "It is 18°C with light rain in Paris. Take an umbrella."
    assert_observed(agent)
    assert "4 model spans, 2 of them read through" in channel(agent, "tool_calls")[1]


def test_no_content() -> None:
    """Nothing names a tool: the hand-written tool spans are plain spans, so the side
    effects stay unattributed and tool_calls partial; each call's two spans count once."""
    agent = only("no-content")
    assert agent.tool_calls == []
    assert effects(agent) == [(kind, what, where, None) for kind, what, where, _ in EFFECTS]
    assert agent.response.text is None
    state, reason = channel(agent, "response")
    assert state is UNOBSERVED and "content capture off" in reason
    state, reason = channel(agent, "tool_calls")
    assert state is PARTIAL and "finished with 'tool_call' but its output was not read" in reason
    assert "(and 2 more such model span(s))" in reason  # 3 calls asked, not 6 spans
    for what in ("arguments", "results"):
        assert channel(agent, f"tool_calls.{what}")[0] is PARTIAL
    # The calls cannot be read and no span runs them: one may have acted unwatched.
    state, reason = channel(agent, "side_effects.http_request")
    assert state is PARTIAL and "tool calls the trace cannot show" in reason
    assert agent.integrity == []


def test_sdk_content() -> None:
    """Both spans readable: one call each; results unwrapped; the answer reported once."""
    agent = only("sdk-content")
    assert calls(agent) == EXFIL_CALLS
    assert effects(agent) == EFFECTS
    assert agent.response.text == ANSWER and agent.response.earlier == []
    assert_task_read(agent)
    assert "every model span (8) was captured" in channel(agent, "tool_calls")[1]


def test_tool_runner() -> None:
    """Calls read from ``anthropic.custom_tool_use`` spans; the last SDK span's
    ``end_turn`` and its OpenLLMetry twin say no tool was asked for."""
    agent = only("tool-runner")
    assert calls(agent) == EXFIL_CALLS
    assert "anthropic.custom_tool_use send_report" in span_names(agent, 1)
    assert effects(agent) == EFFECTS
    assert agent.response.text == ANSWER and agent.response.earlier == []
    assert_task_read(agent)
    assert channel(agent, "tool_calls")[1] == "3 tool execution spans in the run"


def test_tool_runner_content() -> None:
    agent = only("tool-runner-content")
    assert calls(agent) == EXFIL_CALLS  # results unwrapped from anthropic.tool_result.content
    assert "anthropic.custom_tool_use save_note" in span_names(agent, 2)
    assert effects(agent) == EFFECTS
    assert agent.response.text == ANSWER and agent.response.earlier == []
    assert_task_read(agent)
