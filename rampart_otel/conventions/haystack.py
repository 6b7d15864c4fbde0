"""Haystack's chat messages, as OpenInference's Haystack instrumentor records them.

The instrumentor traces a pipeline's run and each component the pipeline runs (a CHAIN
span ``<Component>.run``), with the component's inputs and outputs as ``input.value`` /
``output.value`` JSON in which each ``ChatMessage`` is its Python ``repr``::

    ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[ToolCall(
        tool_name='fetch_weather', arguments={'city': 'Paris'}, id='call_…', extra=None)],
        _name=None, _meta={…})

The ``Agent`` component calls its chat generator and runs its tools itself, not through
the pipeline, so its span is the run's only record: the agent span, whose output's
``messages`` is the whole conversation (each ``ToolCall`` with its id and arguments, each
``ToolCallResult`` with its result, the answer last), and whose input's ``messages`` are
what the caller sent (the user's messages among them).

A repr is read as data only: a constructor call with keyword arguments becomes a dict
(``__type__`` names the class), everything else must be a Python literal (``ast``); nothing
is evaluated. A message in another shape is not read.
"""

from __future__ import annotations

import ast
from typing import Any

from rampart_otel.conventions.helpers import as_str, load_json, parse_result
from rampart_otel.conventions.interface import History, ToolReport, UserInput
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Span

SCOPE = "openinference.instrumentation.haystack"
# The Agent component's span: the component's class name and the method the pipeline ran.
AGENT_SPANS = ("Agent.run", "Agent.run_async")

_ROLE = LazyPattern(r"<ChatRole\.[A-Z_]+: ('[a-z_]+')>")
_MAX_LENGTH = 1_000_000  # a longer repr is not parsed


def messages(value: Any) -> list[dict[str, Any]] | None:
    """The ``messages`` of a component's input or output JSON, each read from its repr;
    None when the value is not that shape or a message cannot be read."""
    decoded = load_json(value)
    if not isinstance(decoded, dict) or not isinstance(decoded.get("messages"), list):
        return None
    found: list[dict[str, Any]] = []
    for item in decoded["messages"]:
        message = chat_message(item)
        if message is None:
            return None
        found.append(message)
    return found


def chat_message(text: Any) -> dict[str, Any] | None:
    """One ``ChatMessage`` repr as a dict (``_role``, ``_content`` ...), or None."""
    if not isinstance(text, str) or not text.startswith("ChatMessage(") or len(text) > _MAX_LENGTH:
        return None
    try:
        value = _data(ast.parse(_ROLE.sub(r"\1", text), mode="eval").body)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("_content"), list):
        return None
    return value


def _data(node: ast.expr) -> Any:
    """A constructor call as a dict, containers item by item, a literal as itself."""
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.args:
            raise ValueError("not a keyword constructor")
        fields: dict[str, Any] = {"__type__": node.func.id}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("** in a constructor")
            fields[keyword.arg] = _data(keyword.value)
        return fields
    if isinstance(node, ast.List):
        return [_data(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise ValueError("** in a dict")
        pairs = zip(node.keys, node.values, strict=True)
        return {_data(key): _data(value) for key, value in pairs}  # type: ignore[arg-type]
    return ast.literal_eval(node)


def user_input(value: Any, where: str) -> UserInput:
    """The user messages of the agent's input (its ``messages``): each ``TextContent``
    part's text. Whatever is not read is named as not understood, never taken for no
    input: a value that is not the messages JSON, a message whose repr is not read, a part
    of another kind (an image, a file)."""
    found = UserInput()
    decoded = load_json(value)
    if not isinstance(decoded, dict) or not isinstance(decoded.get("messages"), list):
        found.not_understood.append(f"{where} (not a JSON object with a list of messages)")
        return found
    for index, item in enumerate(decoded["messages"]):
        message = chat_message(item)
        if message is None:
            found.not_understood.append(f"message {index} of {where} (not a ChatMessage read)")
        elif message.get("_role") == "user":
            for part in message["_content"]:
                kind = part.get("__type__") if isinstance(part, dict) else type(part).__name__
                text = part.get("text") if kind == "TextContent" else None
                if isinstance(text, str):
                    found.texts.append(text)
                else:
                    found.not_understood.append(f"{kind} in user message {index} of {where}")
    return found


def _parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        part
        for part in message["_content"]
        if isinstance(part, dict) and part.get("__type__") == kind
    ]


def answer(value: Any) -> str | None:
    """The agent's answer: the text of the conversation's last message, an assistant
    message that asks for no tool; None otherwise."""
    found = messages(value)
    if not found:
        return None
    last = found[-1]
    if last.get("_role") != "assistant" or _parts(last, "ToolCall"):
        return None
    texts = [part.get("text") for part in _parts(last, "TextContent")]
    if not texts or not all(isinstance(text, str) for text in texts):
        return None
    return "".join(str(text) for text in texts)


def history(value: Any) -> History:
    """Call id → arguments, result and tool name from the conversation's messages."""
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    for message in messages(value) or []:
        calls: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
            (call, None) for call in _parts(message, "ToolCall")
        ]
        for returned in _parts(message, "ToolCallResult"):
            origin = returned.get("origin")
            if isinstance(origin, dict):
                calls.append((origin, returned))
        for call, result in calls:
            call_id, name = as_str(call.get("id")), as_str(call.get("tool_name"))
            if not call_id:
                continue
            if name:
                names.setdefault(call_id, name)
            if "arguments" in call:
                arguments.setdefault(call_id, call["arguments"])
            if result is not None and "result" in result:
                results.setdefault(call_id, parse_result(result["result"]))
    return History(arguments, results, names)


def tool_calls(value: Any, span: Span, convention: str) -> list[ToolReport] | None:
    """The tool calls the agent's conversation records, in order, each with its id, name,
    arguments and result (its ``ToolCallResult``); these are calls the agent ran itself,
    recorded in its own span, each with the positions of the message that asked for it and
    of the one that brought its result back (``ToolReport.steps``: they order the calls).
    None when the conversation is not read whole: a message not read, a call without its
    id or name, or a call without its result."""
    found = messages(value)
    if found is None:
        return None
    calls: dict[str, tuple[dict[str, Any], int]] = {}  # call id → (call, its message)
    results: dict[str, tuple[Any, int]] = {}
    for position, message in enumerate(found):
        for call in _parts(message, "ToolCall"):
            call_id, name = as_str(call.get("id")), as_str(call.get("tool_name"))
            if not call_id or not name or call_id in calls:
                return None
            calls[call_id] = call, position
        for returned in _parts(message, "ToolCallResult"):
            origin = returned.get("origin")
            call_id = as_str(origin.get("id")) if isinstance(origin, dict) else None
            if call_id not in calls or "result" not in returned:
                return None
            results[call_id] = parse_result(returned["result"]), position
    if set(results) != set(calls):
        return None
    reports: list[ToolReport] = []
    for call_id, (call, asked) in calls.items():
        report = ToolReport.requested(
            span, convention, call["tool_name"], call_id, call.get("arguments"), "arguments" in call
        )
        result, returned_at = results[call_id]
        report.result, report.result_captured = result, True
        # The agent appends each message as it happens: the model's message asking for
        # the call, then (the call run) the message with its result.
        report.steps = (asked, returned_at)
        reports.append(report)
    return reports
