"""Known result envelopes are unwrapped; anything else stays exactly as it was."""

from __future__ import annotations

import json

import pytest

from rampart_otel.conventions import envelopes


def test_single_key_result() -> None:
    assert envelopes.single_key('{"result": "{\\"temp\\": 18}"}') == {"temp": 18}
    assert envelopes.single_key({"result": 1, "other": 2}) == {"result": 1, "other": 2}


def test_mcp_call_result() -> None:
    result = {"content": [{"type": "text", "text": '{"ok": true}'}], "isError": False}
    assert envelopes.mcp_call_result(json.dumps(result)) == {"ok": True}
    structured = {**result, "structuredContent": {"result": "saved"}}
    assert envelopes.mcp_call_result(structured) == "saved"
    image = {"content": [{"type": "image", "data": "..."}], "isError": False}
    assert envelopes.mcp_call_result(image) == image


def test_langchain_tool_message() -> None:
    serialized = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": {"content": "saved note 1", "tool_call_id": "c1", "type": "tool"},
    }
    assert envelopes.langchain_message(json.dumps(serialized)) == "saved note 1"
    dumped = {"type": "tool", "content": '{"a": 1}', "tool_call_id": "c1"}
    assert envelopes.langchain_message(dumped) == {"a": 1}
    assert envelopes.langchain_message({"type": "ai", "content": "x"}) == {
        "type": "ai",
        "content": "x",
    }


def test_llamaindex_tool_output() -> None:
    output = {"content": "18C", "tool_name": "fetch_weather", "raw_input": {}, "raw_output": "18C"}
    assert envelopes.llamaindex_tool_output(output) == "18C"


def test_llamaindex_tool_output_as_recorded() -> None:
    """The JSON the LlamaIndex instrumentor records: ``blocks`` instead of ``content``."""
    output = {
        "blocks": [{"text": '{"temp_c": 18}'}],
        "tool_name": "fetch_weather",
        "raw_input": {"args": [], "kwargs": {"city": "Paris"}},
        "raw_output": '{"temp_c": 18}',
        "is_error": False,
    }
    assert envelopes.llamaindex_tool_output(json.dumps(output)) == {"temp_c": 18}
    assert not envelopes.llamaindex_tool_error(json.dumps(output))
    failed = {**output, "raw_output": "Error: boom", "is_error": True}
    assert envelopes.llamaindex_tool_error(failed)
    assert envelopes.llamaindex_tool_output(failed) == "Error: boom"
    assert not envelopes.llamaindex_tool_error({"is_error": True})  # not a ToolOutput


def test_bound_kwargs() -> None:
    smolagents = {"args": [], "sanitize_inputs_outputs": True, "kwargs": {"city": "Paris"}}
    assert envelopes.bound_kwargs(smolagents) == {"city": "Paris"}
    assert envelopes.bound_kwargs({"kwargs": {"city": "Paris"}}) == {"city": "Paris"}
    positional = {"args": ["Paris"], "kwargs": {}}
    assert envelopes.bound_kwargs(positional) == positional  # cannot be named
    own = {"kwargs": {"a": 1}, "city": "Paris"}  # a tool's own argument named kwargs
    assert envelopes.bound_kwargs(own) == own


def test_crewai_output() -> None:
    task = {
        "description": "Weather in Paris?",
        "expected_output": "A short answer.",
        "raw": "It is 18°C.",
        "agent": "weather-agent",
        "messages": [{"role": "system", "content": "secret"}],
    }
    assert envelopes.crewai_output(json.dumps(task)) == "It is 18°C."
    crew = {"raw": "It is 18°C.", "tasks_output": [task], "token_usage": {}}
    assert envelopes.crewai_output(crew) == "It is 18°C."
    text = '{"raw": "x"}'  # an answer that happens to be JSON with a raw key
    assert envelopes.crewai_output(text) == text


def test_bedrock_tool_result() -> None:
    block = [{"toolResult": {"toolUseId": "c1", "status": "success", "content": [{"text": "ok"}]}}]
    assert envelopes.bedrock_tool_result(json.dumps(block)) == "ok"


@pytest.mark.parametrize("raw", ["plain text", 42, None, [1, 2], {"content": "x", "y": 1}])
def test_unknown_forms_are_left_raw(raw: object) -> None:
    for unwrap in (
        envelopes.single_key,
        envelopes.mcp_call_result,
        envelopes.langchain_message,
        envelopes.llamaindex_tool_output,
        envelopes.bedrock_tool_result,
        envelopes.bound_kwargs,
        envelopes.crewai_output,
    ):
        assert unwrap(raw) == raw
