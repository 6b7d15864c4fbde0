"""Tool results, arguments and answers unwrapped from the envelopes frameworks record them in.

Each convention calls the unwrapper of the envelope its producers are known to use, so a
check matches what the tool returned (or was given, or what the agent answered), not the
framework's wrapping. A value that is not in that envelope's exact shape is returned
unchanged: an unknown form stays raw.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions.helpers import load_json


def single_key(value: Any, key: str = "result") -> Any:
    """``{"result": x}`` → ``x`` (Google ADK wraps a non-dict return value so)."""
    value = load_json(value)
    if isinstance(value, dict) and len(value) == 1 and key in value:
        return load_json(value[key])
    return value


def text_blocks(blocks: Any) -> str | None:
    """The text of a list of content blocks (``{"type": "text", "text": ...}`` or
    ``{"text": ...}``), joined; None when any block is not text."""
    if not isinstance(blocks, list) or not blocks:
        return None
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            return None
        if block.get("type", "text") != "text":
            return None
        texts.append(block["text"])
    return "".join(texts)


def traceloop_mcp_result(value: Any) -> tuple[Any, bool]:
    """OpenLLMetry's MCP tool output, and whether it says the tool failed.

    Client side ``{"result": <first content block's text, or the block>}`` (plus
    ``"is_error": true``); FastMCP server side a list of ``{"type": "text", "content": ...}``.
    """
    value = load_json(value)
    if isinstance(value, dict) and value and set(value) <= {"result", "is_error"}:
        return load_json(value.get("result")), value.get("is_error") is True
    if isinstance(value, list) and value:
        texts = [
            text
            for block in value
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(text := block.get("content"), str)
        ]
        if len(texts) == len(value):  # every block a text block
            return load_json("".join(texts)), False
    return value, False


def langchain_message(value: Any) -> Any:
    """A serialized LangChain ``ToolMessage``: the content it carries (any form of
    ``langchain_tool_message``)."""
    value = load_json(value)
    message = langchain_tool_message(value)
    return _content(message["content"]) if message is not None else value


def langchain_tool_message(value: Any) -> dict[str, Any] | None:
    """The fields of a serialized LangChain ``ToolMessage`` (``content``, ``tool_call_id``,
    ``status``...), None when ``value`` is not one. Its forms: ``dumpd``
    (``{"lc": 1, "id": [..., "ToolMessage"], "kwargs": {...}}``), ``message_to_dict``
    (``{"type": "tool", "data": {...}}``, OpenInference's LangChain tracer) and
    ``model_dump`` (flat, ``type: "tool"``); OpenInference JS wraps it as
    ``{"output": <dumpd>}``."""
    value = load_json(value)
    if isinstance(value, dict) and set(value) == {"output"}:
        value = load_json(value["output"])
    if not isinstance(value, dict):
        return None
    kwargs = value.get("kwargs")
    if value.get("lc") == 1 and isinstance(kwargs, dict) and "content" in kwargs:
        kind = value.get("id")
        if isinstance(kind, list) and kind and kind[-1] == "ToolMessage":
            return kwargs
        return None
    data = value.get("data")
    if set(value) == {"type", "data"} and value["type"] == "tool" and isinstance(data, dict):
        value = data
    if value.get("type") == "tool" and "content" in value and "tool_call_id" in value:
        return value
    return None


def langchain_callback_result(value: Any) -> Any:
    """OpenLLMetry's LangChain tool result, ``{"output": <what the tool run returned>,
    "kwargs": {...}}``: the output, itself unwrapped when it is a ``ToolMessage``."""
    value = load_json(value)
    if (
        isinstance(value, dict)
        and set(value) == {"output", "kwargs"}
        and isinstance(value["kwargs"], dict)
    ):
        return langchain_message(value["output"])
    return value


LANGCHAIN_CALLBACK_INPUT = frozenset({"input_str", "inputs", "tags", "metadata", "kwargs"})


def langchain_callback_arguments(value: Any) -> tuple[Any, str | None] | None:
    """OpenLLMetry's LangChain tool input, ``{"input_str", "inputs", "tags", "metadata",
    "kwargs"}``: (the arguments, the call id in ``kwargs.tool_call_id``), None when
    ``value`` is not one. The arguments are ``inputs`` (a dict); without it, the tool got
    ``input_str`` (a string, or a dict's Python ``repr``), kept as it is."""
    if isinstance(value, str) and '"input_str"' not in value:
        return None  # cheap: the usual arguments JSON
    value = load_json(value)
    if not isinstance(value, dict) or not {"input_str", "inputs"} <= set(value):
        return None
    if not set(value) <= LANGCHAIN_CALLBACK_INPUT:
        return None
    kwargs = value.get("kwargs")
    call_id = kwargs.get("tool_call_id") if isinstance(kwargs, dict) else None
    inputs = value["inputs"]
    arguments = inputs if isinstance(inputs, dict) else value["input_str"]
    return arguments, call_id if isinstance(call_id, str) and call_id else None


def langgraph_tool_calls(value: Any) -> list[tuple[str, str, Any]] | None:
    """The calls LangGraph's ``ToolNode`` was handed: a list of LangChain ``ToolCall``
    (``{"name", "args", "id", "type": "tool_call"}``), bare (OpenInference) or under
    ``inputs`` (OpenLLMetry's task input). (name, id, args) of each; None when ``value`` is
    not such a list. A call without an id or a name is not one we can pair."""
    value = load_json(value)
    if isinstance(value, dict) and isinstance(value.get("inputs"), list):
        if not set(value) <= LANGCHAIN_CALLBACK_INPUT:
            return None
        value = value["inputs"]
    if not isinstance(value, list) or not value:
        return None
    calls: list[tuple[str, str, Any]] = []
    for item in value:
        if not isinstance(item, dict) or item.get("type") != "tool_call":
            return None
        name, call_id = item.get("name"), item.get("id")
        if not (isinstance(name, str) and name and isinstance(call_id, str) and call_id):
            return None
        calls.append((name, call_id, item.get("args")))
    return calls


def langgraph_answer(value: Any) -> tuple[bool, str | None]:
    """A LangGraph agent's final state (``{"messages": [...], ...}``, or OpenLLMetry's
    ``{"outputs": {...}, ...}`` around it): (True, the text of its last message when that is
    the AI's answer), (True, None) when the last message is no answer (a tool's, or an AI
    message still asking for tools), (False, None) when ``value`` is no such state."""
    if isinstance(value, str) and '"messages"' not in value:
        return False, None  # cheap: an agent's plain answer
    value = load_json(value)
    if isinstance(value, dict) and isinstance(value.get("outputs"), dict):
        value = value["outputs"]
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False, None
    messages = value["messages"]
    kind, fields = _langchain_message_fields(messages[-1]) if messages else (None, {})
    if kind is None:
        return False, None
    if kind != "ai" or fields.get("tool_calls"):
        return True, None
    content = fields.get("content")
    return True, content if isinstance(content, str) else text_blocks(content)


_LANGCHAIN_CLASSES = {"AIMessage": "ai", "AIMessageChunk": "ai", "HumanMessage": "human"}
_LANGCHAIN_CLASSES |= {"SystemMessage": "system", "ToolMessage": "tool"}


def _langchain_message_fields(message: Any) -> tuple[str | None, dict[str, Any]]:
    """(type, fields) of a serialized LangChain message (``ai``, ``human``, ``tool``...) in
    its ``dumpd``, ``message_to_dict`` or ``model_dump`` form."""
    if not isinstance(message, dict):
        return None, {}
    kwargs, data = message.get("kwargs"), message.get("data")
    if message.get("lc") == 1 and isinstance(kwargs, dict):
        kind = message.get("id")
        name = kind[-1] if isinstance(kind, list) and kind else None
        if not isinstance(name, str):
            return None, {}
        return _LANGCHAIN_CLASSES.get(name, name), kwargs
    if set(message) == {"type", "data"} and isinstance(data, dict):
        return (message["type"] if isinstance(message["type"], str) else None), data
    if "content" in message and isinstance(message.get("type"), str):
        return message["type"], message
    return None, {}  # role/content dicts are every framework's: not a LangChain message


def llamaindex_tool_output(value: Any) -> Any:
    """A LlamaIndex ``ToolOutput``: its ``raw_output``, else its ``content``."""
    value = load_json(value)
    if not isinstance(value, dict) or not {"tool_name", "raw_output"} <= set(value):
        return value
    raw = value.get("raw_output")
    return load_json(raw) if raw is not None else load_json(value.get("content"))


def llamaindex_tool_error(value: Any) -> bool:
    """Whether a LlamaIndex ``ToolOutput`` says the tool failed (``is_error``)."""
    value = load_json(value)
    return (
        isinstance(value, dict)
        and {"tool_name", "raw_output"} <= set(value)
        and value.get("is_error") is True
    )


def bound_kwargs(arguments: Any) -> Any:
    """A tool method's bound arguments as an instrumentor serializes them
    (``{"kwargs": {...}}``, maybe with an empty ``args`` and smolagents'
    ``sanitize_inputs_outputs`` flag): the keyword arguments, which are the tool's own.
    Positional arguments cannot be named, so a call that has some stays as it is."""
    if not isinstance(arguments, dict) or not isinstance(arguments.get("kwargs"), dict):
        return arguments
    if not set(arguments) <= {"args", "kwargs", "sanitize_inputs_outputs"}:
        return arguments
    if arguments.get("args") not in (None, []):
        return arguments
    return arguments["kwargs"]


def crewai_output(value: Any) -> Any:
    """CrewAI's ``TaskOutput`` (an agent's task) or ``CrewOutput`` (the crew's) as JSON:
    its ``raw`` member, the answer's text; the rest repeats the task and the conversation."""
    decoded = load_json(value)
    if not isinstance(decoded, dict) or not isinstance(decoded.get("raw"), str):
        return value
    keys = set(decoded)
    if {"description", "expected_output", "agent"} <= keys or {"tasks_output"} <= keys:
        return decoded["raw"]
    return value


def bedrock_tool_result(value: Any) -> Any:
    """A Bedrock/Strands ``toolResult`` block (or a list of one): its content's text or JSON."""
    value = load_json(value)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, dict) and isinstance(value.get("toolResult"), dict):
        value = value["toolResult"]
    if not isinstance(value, dict) or "toolUseId" not in value or "content" not in value:
        return value
    content = value["content"]
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        block = content[0]
        if "json" in block:
            return block["json"]
        if isinstance(block.get("text"), str):
            return load_json(block["text"])
    text = text_blocks(content)
    return load_json(text) if text is not None else value


def _content(content: Any) -> Any:
    text = text_blocks(content)
    return load_json(text if text is not None else content)
