"""Tool results, arguments and answers unwrapped from the envelopes frameworks record them in.

Each convention calls the unwrapper of the envelope its producers are known to use, so a
check matches what the tool returned (or was given, or what the agent answered), not the
framework's wrapping. A value that is not in that envelope's exact shape is returned
unchanged: an unknown form stays raw.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import load_json


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


def mcp_call_result(value: Any) -> Any:
    """An MCP ``CallToolResult``: its structured content, else its text blocks' text."""
    value = load_json(value)
    if not isinstance(value, dict) or "content" not in value:
        return value
    if not set(value) <= {"content", "structuredContent", "isError", "meta", "_meta"}:
        return value
    if value.get("structuredContent") is not None:
        return single_key(value["structuredContent"])
    text = text_blocks(value["content"])
    return load_json(text) if text is not None else value


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
            block.get("content")
            for block in value
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        if len(texts) == len(value) and all(isinstance(text, str) for text in texts):
            return load_json("".join(texts)), False
    return value, False


def langchain_message(value: Any) -> Any:
    """A serialized LangChain ``ToolMessage`` (``{"lc": 1, "kwargs": {"content": ...}}``, or
    its ``dumpd`` form with ``type: "tool"``): the content it carries."""
    value = load_json(value)
    if not isinstance(value, dict):
        return value
    kwargs = value.get("kwargs")
    if value.get("lc") == 1 and isinstance(kwargs, dict) and "content" in kwargs:
        kind = value.get("id")
        if isinstance(kind, list) and kind and kind[-1] == "ToolMessage":
            return _content(kwargs["content"])
    if value.get("type") == "tool" and "content" in value and "tool_call_id" in value:
        return _content(value["content"])
    return value


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
