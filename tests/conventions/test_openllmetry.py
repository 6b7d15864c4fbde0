"""OpenLLMetry: the older flattened gen_ai.completion.* form and Traceloop entity spans.

Current OpenLLMetry releases write GenAI ``gen_ai.output.messages`` (see the samples).
"""

from __future__ import annotations

from span_factory import span

from rampart_otel.conventions import openllmetry
from rampart_otel.conventions.finish_reasons import ToolRequest

C = "gen_ai.completion.0."


def test_flattened_completion_tool_calls() -> None:
    s = span(
        "openai.chat",
        {
            "llm.request.type": "chat",
            C + "role": "assistant",
            C + "finish_reason": "tool_calls",
            C + "tool_calls.0.id": "call_1",
            C + "tool_calls.0.name": "fetch_weather",
            C + "tool_calls.0.arguments": '{"city": "Paris"}',
            C + "tool_calls.1.id": "call_2",
            C + "tool_calls.1.name": "send_report",
            C + "tool_calls.1.arguments": '{"data": "x"}',
        },
        kind="CLIENT",
    )
    assert openllmetry.is_model_span(s)
    output = openllmetry.model_output(s)
    assert output.readable and output.tool_request is ToolRequest.TOOLS and output.text_captured
    assert [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("fetch_weather", "call_1", {"city": "Paris"}),
        ("send_report", "call_2", {"data": "x"}),
    ]


def test_flattened_text_and_legacy_function_call() -> None:
    s = span(
        "openai.chat",
        {
            "llm.request.type": "chat",
            C + "role": "assistant",
            C + "content": "It rains.",
            C + "function_call.name": "lookup",
            C + "function_call.arguments": '{"q": "rain"}',
        },
    )
    output = openllmetry.model_output(s)
    assert output.text == "It rains."
    assert [(r.name, r.arguments) for r in output.requests] == [("lookup", {"q": "rain"})]


def test_content_off_writes_no_completion() -> None:
    s = span(
        "openai.chat", {"llm.request.type": "chat", "llm.response.finish_reason": "tool_calls"}
    )
    output = openllmetry.model_output(s)
    assert not output.readable and output.tool_request is ToolRequest.TOOLS


def test_tool_entity_span() -> None:
    s = span(
        "send_report.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "send_report",
            "traceloop.entity.input": '{"args": [], "kwargs": {"data": "secret"}}',
            "traceloop.entity.output": '"received"',
        },
    )
    report = openllmetry.tool_execution(s)
    assert report is not None and report.executed
    assert report.arguments == {"data": "secret"} and report.result == "received"
    positional = span(
        "f.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.input": '{"args": ["Paris"], "kwargs": {}}',
        },
    )
    report = openllmetry.tool_execution(positional)
    assert report is not None and report.name == "f" and report.arguments == {"args": ["Paris"]}
    assert not report.result_captured


def test_agent_entity_output_and_input_history() -> None:
    agent = span("a.agent", {"traceloop.span.kind": "agent", "traceloop.entity.output": '"Done."'})
    assert openllmetry.is_agent_span(agent) and openllmetry.agent_output(agent) == "Done."
    s = span(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.prompt.1.role": "assistant",
            "gen_ai.prompt.1.tool_calls.0.id": "call_1",
            "gen_ai.prompt.1.tool_calls.0.name": "f",
            "gen_ai.prompt.1.tool_calls.0.arguments": '{"a": 1}',
            "gen_ai.prompt.2.role": "tool",
            "gen_ai.prompt.2.tool_call_id": "call_1",
            "gen_ai.prompt.2.content": "ok",
        },
    )
    assert openllmetry.input_history(s)[:2] == ({"call_1": {"a": 1}}, {"call_1": "ok"})
