"""GenAI semconv: hand-written quirks (legacy events, pydantic-ai v1/v2 names, content off).

The current attribute form as real libraries write it is covered from the recorded
samples in ``test_samples.py``.
"""

from __future__ import annotations

import json

from span_factory import event, span

from rampart_otel.conventions import genai
from rampart_otel.conventions.finish_reasons import ToolRequest

CALL_PART = {"type": "tool_call", "id": "call_1", "name": "fetch_weather"}


def chat(output: object, **attributes: object) -> object:
    attrs = {"gen_ai.operation.name": "chat", **attributes}
    if output is not None:
        attrs["gen_ai.output.messages"] = json.dumps(output)
    return span("chat gpt-4o", attrs, kind="CLIENT")


def test_output_messages_tool_call_and_text() -> None:
    output = genai.model_output(
        chat(
            [
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "text", "content": "Looking it up."},
                        {**CALL_PART, "arguments": {"city": "Paris"}},
                        {"type": "tool_call", "id": "call_2", "name": "x", "arguments": '{"a": 1}'},
                    ],
                    "finish_reason": "tool_call",
                }
            ]
        )
    )
    assert output.readable and output.text_captured and output.text == "Looking it up."
    assert [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("fetch_weather", "call_1", {"city": "Paris"}),
        ("x", "call_2", {"a": 1}),
    ]
    assert output.tool_request is ToolRequest.TOOLS


def test_content_off_parts_without_content_stay_readable() -> None:
    """pydantic-ai with include_content=False lists parts without content or arguments."""
    calls = genai.model_output(chat([{"role": "assistant", "parts": [CALL_PART]}]))
    assert calls.readable and not calls.text_captured
    assert calls.requests[0].name == "fetch_weather"
    assert calls.requests[0].arguments is None and not calls.requests[0].arguments_captured
    text = genai.model_output(chat([{"role": "assistant", "parts": [{"type": "text"}]}]))
    assert text.readable and not text.text_captured and text.text is None


def test_no_output_attribute_keeps_finish_reasons() -> None:
    output = genai.model_output(chat(None, **{"gen_ai.response.finish_reasons": ["tool_call"]}))
    assert not output.readable and output.tool_request is ToolRequest.TOOLS


def test_arguments_unparseable_kept_raw_and_double_encoded_parsed() -> None:
    output = genai.model_output(
        chat(
            [
                {
                    "role": "assistant",
                    "parts": [
                        {**CALL_PART, "arguments": "{not json"},
                        {**CALL_PART, "id": "c2", "arguments": json.dumps('{"city": "Rome"}')},
                    ],
                }
            ]
        )
    )
    assert output.requests[0].arguments == "{not json"
    assert output.requests[0].arguments_captured
    assert output.requests[1].arguments == {"city": "Rome"}


def test_legacy_choice_events_attribute_form() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {"name": "send_email", "arguments": '{"to": "a@b.c"}'},
            }
        ],
    }
    s = span(
        "chat",
        {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o"},
        events=[
            event(
                "gen_ai.choice",
                {"index": 0, "finish_reason": "tool_calls", "message": json.dumps(message)},
            )
        ],
    )
    assert genai.is_model_span(s)
    output = genai.model_output(s)
    assert output.readable and output.tool_request is ToolRequest.TOOLS
    assert [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("send_email", "call_9", {"to": "a@b.c"})
    ]


def test_legacy_choice_event_body_form_and_content_off() -> None:
    captured = span(
        "chat",
        {"gen_ai.operation.name": "chat"},
        events=[
            event(
                "gen_ai.choice",
                {"body": {"index": 0, "finish_reason": "stop", "message": {"content": "Hi"}}},
            )
        ],
    )
    assert genai.model_output(captured).text == "Hi"
    hidden = span(
        "chat",
        {"gen_ai.operation.name": "chat"},
        events=[event("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": "{}"})],
    )
    output = genai.model_output(hidden)
    assert output.readable and not output.text_captured


def test_pydantic_ai_v1_events_attribute() -> None:
    events = [
        {"event.name": "gen_ai.user.message", "content": "weather?"},
        {
            "event.name": "gen_ai.choice",
            "index": 0,
            "message": {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "fetch_weather", "arguments": {"city": "Oslo"}},
                    }
                ],
            },
        },
    ]
    s = span("chat gpt-4o", {"gen_ai.operation.name": "chat", "events": json.dumps(events)})
    output = genai.model_output(s)
    assert [(r.name, r.arguments) for r in output.requests] == [("fetch_weather", {"city": "Oslo"})]


def test_input_history_results_both_field_names_and_legacy_tool_event() -> None:
    history = [
        {"role": "assistant", "parts": [{**CALL_PART, "arguments": {"city": "Paris"}}]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": "18C"}],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_2", "result": '{"ok": true}'}],
        },
    ]
    s = span(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(history)},
        events=[event("gen_ai.tool.message", {"id": "call_3", "content": "done"})],
    )
    arguments, results, _ = genai.input_history(s)
    assert arguments == {"call_1": {"city": "Paris"}}
    assert results == {"call_1": "18C", "call_2": {"ok": True}, "call_3": "done"}


def test_input_history_reads_openai_shaped_calls_in_input_messages() -> None:
    """LiteLLM writes its history into ``gen_ai.input.messages`` in the Chat Completions
    shape: the calls under the message's ``tool_calls``, a result as a text part of a tool
    message with its ``tool_call_id``."""
    history = [
        {
            "role": "assistant",
            "parts": [],
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "send_report", "arguments": '{"data": "k=1"}'},
                }
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "text", "content": '{"status": "received"}'}],
            "tool_call_id": "call_1",
        },
    ]
    s = span(
        "chat", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(history)}
    )
    arguments, results, names = genai.input_history(s)
    assert arguments == {"call_1": {"data": "k=1"}}
    assert results == {"call_1": {"status": "received"}}
    assert names == {"call_1": "send_report"}


def test_execute_tool_span() -> None:
    s = span(
        "execute_tool send_email",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "send_email",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"to": "x@evil.test"}',
            "gen_ai.tool.call.result": "sent",
        },
    )
    report = genai.tool_execution(s)
    assert report is not None and report.executed and not report.error
    assert (report.name, report.call_id, report.arguments, report.result) == (
        "send_email",
        "call_1",
        {"to": "x@evil.test"},
        "sent",
    )


def test_execute_tool_error_and_not_captured() -> None:
    s = span(
        "execute_tool fetch",
        {"gen_ai.operation.name": "execute_tool", "error.type": "TimeoutError"},
    )
    report = genai.tool_execution(s)
    assert report is not None and report.error and report.name == "fetch"
    assert report.arguments is None and not report.arguments_captured
    assert report.result is None and not report.result_captured


def test_pydantic_ai_v2_names_and_deferred_call() -> None:
    v2 = span(
        "running tool",
        {"gen_ai.tool.name": "fetch", "tool_arguments": '{"q": 1}', "tool_response": "ok"},
    )
    report = genai.tool_execution(v2)
    assert report is not None and report.arguments == {"q": 1} and report.result == "ok"
    deferred = span(
        "execute_tool wire_money",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "wire_money",
            "pydantic_ai.tool.deferral.name": "ApprovalRequired",
        },
        status="ERROR",
    )
    report = genai.tool_execution(deferred)
    assert report is not None and not report.executed and not report.error


def test_agent_output_final_result_and_output_messages() -> None:
    agent = span(
        "invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "final_result": "Done."}
    )
    assert genai.is_agent_span(agent) and genai.agent_output(agent) == "Done."
    structured = span("agent run", {"agent_name": "a", "final_result": {"temp": 18}})
    assert genai.is_agent_span(structured) and genai.agent_output(structured) == '{"temp": 18}'
    messages = [{"role": "assistant", "parts": [{"type": "text", "content": "It rains."}]}]
    semconv = span(
        "invoke_agent",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.output.messages": json.dumps(messages)},
    )
    assert genai.agent_output(semconv) == "It rains."
    assert (
        genai.agent_output(span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"})) is None
    )


def test_span_roles() -> None:
    assert genai.is_model_span(span("x", {"gen_ai.operation.name": "generate_content"}))
    # An embeddings call asks for no tool and answers nothing: recognized, feeding no channel.
    embeddings = span("x", {"gen_ai.operation.name": "embeddings"})
    assert not genai.is_model_span(embeddings)
    report = genai.read(embeddings)
    assert report is not None and not (report.model or report.agent or report.execution)
    assert not report.not_understood
    unknown = genai.read(span("x", {"gen_ai.operation.name": "invoke_workflow2"}))
    assert unknown is not None and unknown.not_understood == [
        "gen_ai.operation.name 'invoke_workflow2'"
    ]
    assert not genai.is_model_span(span("x", {"gen_ai.operation.name": "execute_tool"}))
    assert not genai.is_model_span(span("x", {"gen_ai.agent.name": "a"}))
    assert genai.is_tool_span(span("x", {"gen_ai.operation.name": "execute_tool"}))
    assert genai.tool_execution(span("chat", {"gen_ai.operation.name": "chat"})) is None


def test_result_is_the_json_text_of_the_value() -> None:
    """``gen_ai.tool.call.result`` is the value's JSON text (Vercel AI SDK 7): a string the
    tool returned is a JSON string literal, whose text is then read like any raw result."""

    def result(raw: str) -> object:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": raw}
        report = genai.tool_execution(span("execute_tool f", attrs))
        assert report is not None and report.result_captured
        return report.result

    assert result(json.dumps(json.dumps({"status": "received"}))) == {"status": "received"}
    assert result(json.dumps("saved note 1")) == "saved note 1"
    assert result(json.dumps({"a": 1})) == {"a": 1}
    assert result("plain text") == "plain text"


def test_vercel_ai_step_and_rerank_are_neutral() -> None:
    for operation in ("agent_step", "rerank"):
        report = genai.read(span("step 1", {"gen_ai.operation.name": operation}))
        assert report is not None and not (report.model or report.agent or report.execution)
        assert report.not_understood == []


def test_merged_agent_output_answers_with_its_text_parts_only() -> None:
    """Vercel AI SDK 7's root: one assistant message merging the answer and every step's
    calls and results; only the text is the answer, the calls are not asked for again."""
    parts = [
        {"type": "text", "content": "Filed."},
        {"type": "tool_call", "id": "c1", "name": "send", "arguments": {"data": "x"}},
        {"type": "tool_call_response", "id": "c1", "response": "ok"},
    ]
    attrs = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
    }
    report = genai.read(span("invoke_agent gpt-4o-mini", attrs))
    assert report is not None and report.agent and report.answer == "Filed."
    assert report.output is None
