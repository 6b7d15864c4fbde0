"""Known result envelopes are unwrapped; anything else stays exactly as it was."""

from __future__ import annotations

import json

import pytest

from rampart_otel.conventions import envelopes


def test_single_key_result() -> None:
    assert envelopes.single_key('{"result": "{\\"temp\\": 18}"}') == {"temp": 18}
    assert envelopes.single_key({"result": 1, "other": 2}) == {"result": 1, "other": 2}


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
        envelopes.langchain_message,
        envelopes.llamaindex_tool_output,
        envelopes.bedrock_tool_result,
        envelopes.bound_kwargs,
        envelopes.crewai_output,
        envelopes.langchain_callback_result,
    ):
        assert unwrap(raw) == raw
    assert envelopes.langchain_callback_arguments(raw) is None
    assert envelopes.langgraph_tool_calls(raw) is None
    assert envelopes.langgraph_answer(raw) == (False, None)


# --- LangChain / LangGraph, as OpenInference and OpenLLMetry record them ------------------

TOOL_MESSAGE_DATA = {
    "content": '{"city": "Paris", "temp_c": 18}',
    "additional_kwargs": {},
    "type": "tool",
    "name": "fetch_weather",
    "id": None,
    "tool_call_id": "call_1",
    "status": "success",
}
TOOL_MESSAGE_LC = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "ToolMessage"],
    "kwargs": {"content": "saved note 1", "type": "tool", "tool_call_id": "call_2"},
}


def test_langchain_tool_message_to_dict_form() -> None:
    """OpenInference's LangChain tracer: ``{"type": "tool", "data": {...}}``."""
    wrapped = json.dumps({"type": "tool", "data": TOOL_MESSAGE_DATA})
    assert envelopes.langchain_message(wrapped) == {"city": "Paris", "temp_c": 18}
    message = envelopes.langchain_tool_message(wrapped)
    assert message is not None and message["tool_call_id"] == "call_1"
    assert message["status"] == "success"
    # Another message type in the same form is no ToolMessage.
    ai = {"type": "ai", "data": {"content": "hi", "type": "ai"}}
    assert envelopes.langchain_tool_message(ai) is None and envelopes.langchain_message(ai) == ai
    # An extra key: not the exact shape.
    odd = {"type": "tool", "data": TOOL_MESSAGE_DATA, "x": 1}
    assert envelopes.langchain_message(odd) == odd


def test_langchain_callback_result() -> None:
    """OpenLLMetry's ``{"output": <ToolMessage or return value>, "kwargs": {...}}``."""
    result = {"output": TOOL_MESSAGE_LC, "kwargs": {"tags": [], "name": "save_note"}}
    assert envelopes.langchain_callback_result(json.dumps(result)) == "saved note 1"
    plain = {"output": '{"ok": true}', "kwargs": {}}
    assert envelopes.langchain_callback_result(plain) == {"ok": True}
    assert envelopes.langchain_callback_result({"output": 1, "kwargs": 2}) == {
        "output": 1,
        "kwargs": 2,
    }
    assert envelopes.langchain_callback_result({"output": 1}) == {"output": 1}


def test_langchain_callback_arguments() -> None:
    """OpenLLMetry's tool input: ``inputs`` are the arguments, the id is in ``kwargs``."""
    raw = {
        "input_str": "{'city': 'Paris'}",
        "tags": ["seq:step:1"],
        "metadata": {"langgraph_node": "tools"},
        "inputs": {"city": "Paris"},
        "kwargs": {"color": "green", "name": None, "tool_call_id": "call_1"},
    }
    assert envelopes.langchain_callback_arguments(json.dumps(raw)) == (
        {"city": "Paris"},
        "call_1",
    )
    # A string input (no inputs dict): input_str, kept raw; no id.
    text = {"input_str": "Paris", "inputs": None, "kwargs": {}}
    assert envelopes.langchain_callback_arguments(text) == ("Paris", None)
    # Plain arguments, or an unknown key: not this envelope.
    assert envelopes.langchain_callback_arguments('{"city": "Paris"}') is None
    assert envelopes.langchain_callback_arguments({**raw, "other": 1}) is None


def test_langgraph_tool_calls() -> None:
    calls = [{"name": "fetch_weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}]
    expected = [("fetch_weather", "c1", {"city": "Paris"})]
    assert envelopes.langgraph_tool_calls(json.dumps(calls)) == expected
    task_input = {"inputs": calls, "tags": ["graph:step:2"], "metadata": {}, "kwargs": {}}
    assert envelopes.langgraph_tool_calls(json.dumps(task_input)) == expected
    no_id = [{"name": "fetch_weather", "args": {}, "id": None, "type": "tool_call"}]
    assert envelopes.langgraph_tool_calls(no_id) is None  # cannot be paired
    assert envelopes.langgraph_tool_calls([{"name": "x", "args": {}, "id": "c"}]) is None
    assert envelopes.langgraph_tool_calls({"messages": []}) is None


def test_langgraph_answer() -> None:
    human = {"type": "human", "data": {"content": "Weather?", "type": "human"}}
    ai_calls = {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "f"}]}}
    tool = {"type": "tool", "data": TOOL_MESSAGE_DATA}
    ai = {"type": "ai", "data": {"content": "It is 18C.", "tool_calls": []}}
    state = {"messages": [human, ai_calls, tool, ai]}
    assert envelopes.langgraph_answer(json.dumps(state)) == (True, "It is 18C.")
    # OpenLLMetry's workflow output, LangChain's dumpd messages.
    lc_ai = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": {"content": [{"type": "text", "text": "Done."}], "type": "ai"},
    }
    assert envelopes.langgraph_answer({"outputs": {"messages": [lc_ai]}, "kwargs": {}}) == (
        True,
        "Done.",
    )
    # A state whose last message is no answer: a tool's, or an AI message asking for tools.
    assert envelopes.langgraph_answer({"messages": [human, tool]}) == (True, None)
    assert envelopes.langgraph_answer({"messages": [human, ai_calls]}) == (True, None)
    # Not a state: a plain answer, or messages of no known form.
    assert envelopes.langgraph_answer("It is 18C.") == (False, None)
    assert envelopes.langgraph_answer({"messages": [1]}) == (False, None)
    assert envelopes.langgraph_answer('{"messages": []}') == (False, None)


def test_langgraph_answer_needs_langchain_messages() -> None:
    """Role/content dicts are any framework's (CrewAI's TaskOutput has such ``messages``)."""
    crewai = {"raw": "It is 18C.", "messages": [{"role": "assistant", "content": "It is 18C."}]}
    assert envelopes.langgraph_answer(crewai) == (False, None)
