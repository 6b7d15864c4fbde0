"""OpenInference: flattened messages, hide_* masking, TOOL and AGENT spans."""

from __future__ import annotations

from span_factory import span

from rampart_otel.conventions import openinference
from rampart_otel.conventions.finish_reasons import ToolRequest

OUT = "llm.output_messages.0.message."


def llm(**attributes: object) -> object:
    return span("ChatCompletion", {"openinference.span.kind": "LLM", **attributes})


def test_tool_calls_from_output_messages() -> None:
    s = llm(
        **{
            OUT + "role": "assistant",
            OUT + "tool_calls.0.tool_call.id": "call_a",
            OUT + "tool_calls.0.tool_call.function.name": "fetch_weather",
            OUT + "tool_calls.0.tool_call.function.arguments": '{"city": "Paris"}',
            OUT + "tool_calls.1.tool_call.function.name": "send_report",
            OUT + "tool_calls.1.tool_call.function.arguments": "not json",
            "llm.finish_reason": "tool_calls",
        }
    )
    assert openinference.is_model_span(s)
    output = openinference.model_output(s)
    assert output.readable and output.tool_request is ToolRequest.TOOLS
    assert output.text_captured and output.text == ""  # content on, the model wrote no text
    assert [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("fetch_weather", "call_a", {"city": "Paris"}),
        ("send_report", None, "not json"),
    ]


def test_hide_outputs_leaves_only_finish_reason() -> None:
    s = llm(**{"output.value": "__REDACTED__", "llm.finish_reason": "tool_calls"})
    output = openinference.model_output(s)
    assert not output.readable and output.tool_request is ToolRequest.TOOLS and not output.requests


def test_hide_output_text_keeps_tool_calls() -> None:
    s = llm(
        **{
            OUT + "role": "assistant",
            OUT + "content": "__REDACTED__",
            OUT + "tool_calls.0.tool_call.function.name": "fetch_weather",
        }
    )
    output = openinference.model_output(s)
    assert (
        output.readable and not output.text_captured and output.requests[0].name == "fetch_weather"
    )


def test_text_from_message_contents() -> None:
    s = llm(
        **{
            OUT + "role": "assistant",
            OUT + "contents.0.message_content.type": "text",
            OUT + "contents.0.message_content.text": "It rains",
            OUT + "contents.1.message_content.type": "image",
        }
    )
    assert openinference.model_output(s).text == "It rains"


def test_tool_span() -> None:
    s = span(
        "send_report",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "send_report",
            "input.value": '{"data": "secret"}',
            "output.value": '{"status": "received"}',
        },
        status="ERROR",
    )
    report = openinference.tool_execution(s)
    assert report is not None and report.executed and report.error
    assert report.arguments == {"data": "secret"} and report.result == {"status": "received"}
    hidden = span(
        "t", {"openinference.span.kind": "TOOL", "tool.name": "t", "input.value": "__REDACTED__"}
    )
    report = openinference.tool_execution(hidden)
    assert report is not None and not report.arguments_captured and not report.result_captured


def test_tool_span_call_id() -> None:
    s = span("t", {"openinference.span.kind": "TOOL", "tool.name": "t", "tool.id": "call_7"})
    report = openinference.tool_execution(s)
    assert report is not None and report.call_id == "call_7"


def test_agent_output() -> None:
    agent = span("agent", {"openinference.span.kind": "AGENT", "output.value": "Done."})
    assert openinference.is_agent_span(agent) and openinference.agent_output(agent) == "Done."
    hidden = span("agent", {"openinference.span.kind": "AGENT", "output.value": "__REDACTED__"})
    assert openinference.agent_output(hidden) is None


def test_input_history() -> None:
    s = llm(
        **{
            "llm.input_messages.1.message.role": "assistant",
            "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_a",
            "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": '{"x": 1}',
            "llm.input_messages.2.message.role": "tool",
            "llm.input_messages.2.message.tool_call_id": "call_a",
            "llm.input_messages.2.message.content": '{"temp": 18}',
        }
    )
    assert openinference.input_history(s)[:2] == ({"call_a": {"x": 1}}, {"call_a": {"temp": 18}})
